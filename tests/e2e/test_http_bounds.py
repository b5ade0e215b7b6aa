"""Bounds that hold against any client: the size of an answer, the work
the loop does for it, and what one connection may make a worker keep."""
import json
import socket

import pytest

from conftest import Daemon

HELLO = {"language": "py3", "source": "print(input())\n",
         "tests": [{"stdin": "hi\n", "expected_stdout": "hi\n"}]}


class Conn:
    """A client connection that keeps what it read past one response."""

    def __init__(self, port, timeout=60):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.rest = b""

    def send(self, data):
        self.s.sendall(data)

    def recv(self, n):
        if self.rest:
            out, self.rest = self.rest, b""
            return out
        return self.s.recv(n)

    def response(self):
        buf = b""
        while b"\r\n\r\n" not in buf:
            chunk = self.recv(65536)
            if not chunk:
                return None
            buf += chunk
        head, _, body = buf.partition(b"\r\n\r\n")
        lines = head.decode().split("\r\n")
        headers = {l.split(":", 1)[0].lower(): l.split(":", 1)[1].strip() for l in lines[1:]}
        n = int(headers.get("content-length", "0"))
        while len(body) < n:
            chunk = self.recv(1 << 20)
            if not chunk:
                break
            body += chunk
        self.rest = body[n:] + self.rest
        return int(lines[0].split()[1]), headers, body[:n]

    def close(self):
        self.s.close()


def post_head(path, length, extra=b""):
    return (b"POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n%s\r\n" % (path.encode(), length, extra))


def vm_kb(pid, key):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise KeyError(key)


def reset_peak(pid):
    """VmHWM starts again from the current RSS (proc(5), clear_refs 5)."""
    with open("/proc/%d/clear_refs" % pid, "w") as f:
        f.write("5")


@pytest.fixture(scope="module")
def daemon():
    # a read timeout far above what any refusal here may take, so that a
    # 408 can never pass for the answer a test waits for
    d = Daemon(args=["--read-timeout", "30s"])
    yield d
    d.stop()


# ---- section 4: the HTTP layer --------------------------------------------

def test_long_build_command_reaches_the_init(daemon):
    # 30 macros of 200 bytes: the RUN message to the jail's init is over
    # 4 KiB (and the flags pass validation: 64 flags, 256 bytes each)
    flags = ["-O2"] + ["-DM%02d=%s" % (i, "1" * 200) for i in range(30)]
    src = ('#include <stdio.h>\n#define S(x) #x\n#define X(x) S(x)\n'
           'int main(void){printf("%d\\n", (int)(sizeof(X(M00)) + sizeof(X(M29)) - 2));}\n')
    req = {"language": "c", "source": src, "build": {"flags": flags},
           "tests": [{"stdin": "", "expected_stdout": "400\n"}]}
    assert sum(len(f) + 1 for f in flags) > 4096
    status, body = daemon.post("/run", req)
    assert status == 200, body
    assert body["status"] == "accepted", json.dumps(body)[:2000]
