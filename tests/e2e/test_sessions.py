"""Live program sessions over WebSocket through the real daemon:
goboxd's own GET /sessions and Piston's GET /api/v2/connect. The client
here is a few lines of RFC 6455 framing over a plain socket (masked
frames out, unmasked in), so that a test can also be the hostile client:
one that never reads, sends a frame too big, or goes away mid-run.
"""
import base64
import ctypes
import json
import os
import shutil
import socket
import struct
import subprocess
import threading
import time

import pytest

from conftest import (PYBUILD, Daemon, budget, fd_links, lang_dir, poll, server_socket_inode,
                      small, vm_kb, without_quarantine)

ECHO_PY = "import sys\nfor line in sys.stdin:\n    print(line.strip().upper(), flush=True)\n"
ECHO_C = ("#include <stdio.h>\n#include <ctype.h>\nint main(void){int c;"
          "while((c=getchar())!=EOF){putchar(toupper(c));if(c=='\\n')fflush(stdout);}"
          "return 3;}\n")


class WS:
    """A WebSocket client, by hand."""

    def __init__(self, port, path="/sessions", headers="", timeout=30):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        self.s.sendall(("GET %s HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
                        "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
                        "Sec-WebSocket-Version: 13\r\n%s\r\n" % (path, key, headers)).encode())
        self.buf = b""
        while b"\r\n\r\n" not in self.buf:
            data = self.s.recv(65536)
            if not data:
                break
            self.buf += data
        head, _, self.buf = self.buf.partition(b"\r\n\r\n")
        self.head = head.decode()
        self.status = int(self.head.split()[1]) if self.head else 0
        self.close_code = None

    def frame(self, opcode, payload, fin=True, mask=True):
        n = len(payload)
        b0 = (0x80 if fin else 0) | opcode
        if n < 126:
            head = struct.pack("!BB", b0, (0x80 if mask else 0) | n)
        elif n < 65536:
            head = struct.pack("!BBH", b0, (0x80 if mask else 0) | 126, n)
        else:
            head = struct.pack("!BBQ", b0, (0x80 if mask else 0) | 127, n)
        if not mask:
            return head + payload
        key = os.urandom(4)
        return head + key + bytes(c ^ key[i % 4] for i, c in enumerate(payload))

    def send(self, msg):
        self.s.sendall(self.frame(1, json.dumps(msg).encode()))

    def _need(self, n):
        while len(self.buf) < n:
            data = self.s.recv(65536)
            if not data:
                raise EOFError("closed")
            self.buf += data
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def recv(self):
        """The next message: a dict, or ("close", code) for a close frame."""
        b0, b1 = self._need(2)
        n = b1 & 0x7F
        if n == 126:
            n = struct.unpack("!H", self._need(2))[0]
        elif n == 127:
            n = struct.unpack("!Q", self._need(8))[0]
        assert not b1 & 0x80, "a server's frames are not masked"
        payload = self._need(n)
        if b0 & 0x0F == 8:
            self.close_code = struct.unpack("!H", payload[:2])[0] if n >= 2 else 1005
            self.close_reason = payload[2:]
            return ("close", self.close_code)
        if b0 & 0x0F in (9, 10):
            return self.recv()
        return json.loads(payload)

    def until_close(self, limit=10000):
        """Every message up to the close frame."""
        out = []
        for _ in range(limit):
            m = self.recv()
            if isinstance(m, tuple):
                return out
            out.append(m)
        raise AssertionError("no close")

    def close(self):
        self.s.close()


def in_flight(d):
    return d.get("/info")[1]["stats"]["in_flight_jobs"]


def text(msgs, kind):
    return "".join(m["data"] for m in msgs if m.get("type") == kind)


@pytest.fixture(scope="module")
def d():
    dm = Daemon(args=["--max-concurrency", "1", "--session-idle-timeout", "2s",
                      "--max-session-output", "64k", "--max-session-frame", "4k"],
                languages=small())
    yield dm
    dm.stop()


def start(ws, language, source, **more):
    ws.send(dict({"type": "start", "language": language, "source": source}, **more))


def test_echo_through_python(d):
    ws = WS(d.port)
    assert ws.status == 101, ws.head
    start(ws, "py3", ECHO_PY)
    ws.send({"type": "stdin", "data": "hello\n"})
    got = []
    while "HELLO" not in text(got, "stdout"):
        got.append(ws.recv())
    assert {"type": "stage", "stage": "run"} in got
    ws.send({"type": "close_stdin"})
    rest = ws.until_close()
    ex = [m for m in rest if m["type"] == "exit"][0]
    assert ex["status"] == "accepted" and ex["exit_code"] == 0 and ex["signal"] is None
    assert ex["time_ms"] > 0 and ex["memory_kb"] > 0
    assert ws.close_code == 1000


def test_echo_through_c_with_its_build(d):
    ws = WS(d.port)
    start(ws, "c", ECHO_C)
    ws.send({"type": "stdin", "data": "abc\n"})
    got = []
    while "ABC" not in text(got, "stdout"):
        got.append(ws.recv())
    stages = [m["stage"] for m in got if m["type"] == "stage"]
    assert stages == ["build", "run"]
    ws.send({"type": "close_stdin"})
    ex = [m for m in ws.until_close() if m["type"] == "exit"][0]
    assert ex["status"] == "runtime_error" and ex["exit_code"] == 3


def test_stdout_and_stderr_apart_and_a_failed_build(d):
    ws = WS(d.port)
    start(ws, "py3", "import sys\nprint('out')\nprint('err', file=sys.stderr)\n")
    msgs = ws.until_close()
    assert text(msgs, "stdout") == "out\n" and text(msgs, "stderr") == "err\n"
    ws = WS(d.port)
    start(ws, "c", "int main( {")
    msgs = ws.until_close()
    ex = [m for m in msgs if m["type"] == "exit"][0]
    assert ex["status"] == "build_failed" and "error" in text(msgs, "stderr")
    assert not [m for m in msgs if m.get("stage") == "run"]


def test_program_that_exits_while_the_client_sends(d):
    ws = WS(d.port)
    start(ws, "py3", "print('bye')\n")
    for _ in range(50):
        ws.send({"type": "stdin", "data": "x" * 100 + "\n"})
    msgs = ws.until_close()
    assert [m for m in msgs if m["type"] == "exit"][0]["status"] == "accepted"


def test_idle_timeout(d):
    ws = WS(d.port)
    start(ws, "py3", "input()\n")
    t0 = time.time()
    msgs = ws.until_close()
    assert [m for m in msgs if m["type"] == "error"][0]["code"] == "idle_timeout"
    assert [m for m in msgs if m["type"] == "exit"][0]["status"] == "idle_timeout"
    assert 1.5 < time.time() - t0 < 15
    assert ws.close_code == 1008


def test_output_cap(d):
    ws = WS(d.port)
    start(ws, "py3", "while True:\n    print('y' * 1000)\n")
    msgs = ws.until_close()
    assert len(text(msgs, "stdout")) <= 64 * 1024
    assert [m for m in msgs if m["type"] == "exit"][0]["status"] == "output_limit"


def test_client_that_closes_mid_run_leaves_nothing(d):
    ws = WS(d.port)
    start(ws, "py3", "import time\nprint('up', flush=True)\ntime.sleep(600)\n")
    while "up" not in text([ws.recv()], "stdout"):
        pass
    ws.close()
    assert poll(lambda: in_flight(d) == 0, timeout=10)
    assert d.step_cgroups() == []


def test_client_that_never_reads_keeps_the_worker_small():
    dm = Daemon(args=["--max-session-output", "1G", "--workers", "1"], languages=small(),
                env=without_quarantine())
    try:
        ws = WS(dm.port)
        ws.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        start(ws, "py3", "import sys\nwhile True:\n    sys.stdout.write('z' * 4096)\n")
        time.sleep(1.5)
        pid = dm.get("/info")[1]["stats"]["workers"][0]["pid"]
        before = vm_kb(pid, "VmRSS")
        time.sleep(2)
        after = vm_kb(pid, "VmRSS")
        assert after - before < 4 * 1024, (before, after)
        assert in_flight(dm) == 1
        ws.close()
        assert poll(lambda: in_flight(dm) == 0, timeout=10)
    finally:
        dm.stop()


def test_oversized_frame_closes_with_1009(d):
    ws = WS(d.port)
    ws.s.sendall(ws.frame(1, b"{" + b" " * 8000 + b"}"))
    assert ws.until_close() == [] and ws.close_code == 1009


def test_unmasked_frame_closes_with_1002(d):
    ws = WS(d.port)
    ws.s.sendall(ws.frame(1, b'{"type":"close_stdin"}', mask=False))
    ws.until_close()
    assert ws.close_code == 1002


def test_a_session_is_a_job_and_waits_for_a_slot(d):
    ws = WS(d.port)
    start(ws, "py3", "input()\nprint('done')\n")
    assert poll(lambda: in_flight(d) == 1, timeout=10)
    # the one slot is taken: a second session waits in the master's queue
    box = {}
    t = threading.Thread(target=lambda: box.update(ws=WS(d.port)))
    t.start()
    time.sleep(1)
    assert "ws" not in box, "the second session got its 101 before a slot"
    ws.send({"type": "stdin", "data": "go\n"})
    assert text(ws.until_close(), "stdout") == "done\n"
    t.join(20)
    assert box["ws"].status == 101
    start(box["ws"], "py3", "print(1)\n")
    assert text(box["ws"].until_close(), "stdout") == "1\n"


def test_signal(d):
    ws = WS(d.port)
    start(ws, "py3", "import time\nprint('up', flush=True)\ntime.sleep(60)\n")
    while "up" not in text([ws.recv()], "stdout"):
        pass
    ws.send({"type": "signal", "name": "SIGTERM"})
    ex = [m for m in ws.until_close() if m["type"] == "exit"][0]
    assert ex["signal"] == 15 and ex["exit_code"] is None


# Signals a program blocked in a read gets at once, or (Python's race:
# one that lands just before the read) when the read returns: the test
# waits for neither, and looks for what their handlers print by the end.
TTY_PY = r"""
import errno, fcntl, os, signal, termios, time
def size(*_):
    print("size", os.get_terminal_size(), flush=True)
got = []
signal.signal(signal.SIGWINCH, size)
signal.signal(signal.SIGINT, lambda *_: got.append(1))
print("tty", os.isatty(0), os.isatty(1), os.isatty(2), flush=True)
size()
print("pgrp", os.tcgetpgrp(0) == os.getpgrp(), flush=True)
try:
    fcntl.ioctl(0, termios.TIOCSTI, b"x")
    print("typed into its own input", flush=True)
except OSError as e:
    print("TIOCSTI", errno.errorcode[e.errno], flush=True)
name = input("name? ")
print("hello " + name, flush=True)
print("ctrl-c?", flush=True)
while not got:
    time.sleep(0.05)
print("interrupted", flush=True)
try:
    input("last? ")
except EOFError:
    print("eof", flush=True)
"""


def read_until(ws, want, kind="stdout"):
    got = []
    while want not in text(got, kind):
        m = ws.recv()
        assert not isinstance(m, tuple), (m, got)
        got.append(m)
    return text(got, kind)


def test_a_terminal_for_prompts_with_its_size_its_ctrl_c_and_its_end_of_file(d):
    """tty: the program's stdin, stdout and stderr are one terminal, its
    controlling one; what the client types is echoed by it, Ctrl-C is a
    SIGINT, a resize a SIGWINCH, close_stdin the end-of-file key."""
    ws = WS(d.port)
    start(ws, "py3", TTY_PY, tty={"rows": 30, "cols": 100})
    out = read_until(ws, "name? ")
    assert "tty True True True\r\n" in out, out
    assert "size os.terminal_size(columns=100, lines=30)\r\n" in out, out
    assert "pgrp True\r\n" in out, out
    assert "TIOCSTI EPERM\r\n" in out, "the policy refuses it (docs/security.md)"
    ws.send({"type": "resize", "rows": 40, "cols": 120})
    ws.send({"type": "stdin", "data": "ada\r"})
    out = read_until(ws, "ctrl-c?")
    # the terminal echoes the line, then the program answers (the size
    # its SIGWINCH handler prints may come anywhere)
    resized = "size os.terminal_size(columns=120, lines=40)\r\n"
    assert out.replace(resized, "").startswith("ada\r\nhello ada\r\n"), out
    ws.send({"type": "stdin", "data": "\x03"})
    out += read_until(ws, "last? ")
    assert resized in out, out
    assert "interrupted" in out, out
    ws.send({"type": "close_stdin"})
    rest = ws.until_close()
    assert "eof" in text(rest, "stdout"), rest
    assert text(rest, "stderr") == "", "stderr goes to the terminal too"
    ex = [m for m in rest if m["type"] == "exit"][0]
    assert ex["status"] == "accepted", ex


def test_a_terminal_goes_with_its_program(d):
    """A program that leaves its terminal to a child it started: the
    session still ends with the program, the child killed with it."""
    ws = WS(d.port)
    start(ws, "py3", "import os, time\nif os.fork() == 0:\n    time.sleep(60)\nprint('parent')\n",
          tty=True)
    msgs = ws.until_close()
    assert "parent" in text(msgs, "stdout")
    assert [m for m in msgs if m["type"] == "exit"][0]["status"] == "accepted"


@pytest.mark.parametrize("bad", [
    {"type": "start", "language": "py3", "source": "", "tty": "yes"},
    {"type": "start", "language": "py3", "source": "", "tty": {"rows": 0}},
    {"type": "start", "language": "py3", "source": "", "tty": {"rows": 24, "cols": 1001}},
    {"type": "start", "language": "py3", "source": "", "tty": {"rows": 2.5}},
    {"type": "start", "language": "py3", "source": "", "tty": {"lines": 24}},
])
def test_a_bad_tty_is_refused(d, bad):
    ws = WS(d.port)
    ws.send(bad)
    msgs = ws.until_close()
    assert [m["code"] for m in msgs if m["type"] == "error"] == ["invalid_message"], msgs
    assert ws.close_code == 1008


def test_a_resize_without_a_terminal_is_refused(d):
    ws = WS(d.port)
    start(ws, "py3", "input()\n")
    ws.send({"type": "resize", "rows": 10, "cols": 10})
    msgs = ws.until_close()
    errors = [m for m in msgs if m["type"] == "error"]
    assert [e["code"] for e in errors] == ["invalid_message"], msgs
    assert "tty" in errors[0]["message"]


# For PYBUILD: a build that says something, then takes its time.
SLOWBUILD_SRC = """import sys, time
if sys.argv[1] == "build":
    print("building", flush=True)
    print("\u00e9t\u00e9 " * 2000, file=sys.stderr, flush=True)
    time.sleep(%s)
    print("built", flush=True)
else:
    print("ran")
"""


def test_a_build_is_shown_as_it_goes_and_a_cached_one_at_once():
    langs = lang_dir(("pybuild.yaml", PYBUILD))
    dm = Daemon(languages=langs)
    try:
        src = SLOWBUILD_SRC % budget(2)
        for cached in (False, True):
            ws = WS(dm.port)
            start(ws, "pybuild", src)
            seen, at = [], {}
            while True:
                m = ws.recv()
                if isinstance(m, tuple):
                    break
                seen.append(m)
                out = text(seen, "stdout")
                for word in ("building", "built", "ran"):
                    if word in out and word not in at:
                        at[word] = time.time()
                if m.get("type") == "stage":
                    at.setdefault(m["stage"], time.time())
            assert text(seen, "stdout") == "building\nbuilt\nran\n", seen
            # two-byte characters, whatever pieces the build's output came in
            assert text(seen, "stderr") == "\u00e9t\u00e9 " * 2000 + "\n"
            assert [m["status"] for m in seen if m["type"] == "exit"] == ["accepted"]
            if cached:
                assert at["run"] - at["building"] < budget(1), at
            else:
                assert at["built"] - at["building"] > budget(2) * 0.8, \
                    "the build's first line came when the build was over: %r" % at
    finally:
        dm.stop()
        shutil.rmtree(langs, True)


def test_refusals(d):
    ws = WS(d.port)
    start(ws, "nope", "x")
    msgs = ws.until_close()
    assert msgs[0]["type"] == "error" and ws.close_code == 1008
    plain = socket.create_connection(("127.0.0.1", d.port))
    plain.sendall(b"GET /sessions HTTP/1.1\r\nHost: x\r\n\r\n")
    assert b" 426 " in plain.recv(4096).split(b"\r\n")[0] + b" "


def test_piston_protocol(d):
    ws = WS(d.port, path="/api/v2/connect")
    assert ws.status == 101
    ws.send({"type": "init", "language": "c", "version": "*",
             "files": [{"name": "m.c", "content": ECHO_C}]})
    ws.send({"type": "data", "stream": "stdin", "data": "hey\n"})
    got = []
    while "HEY" not in "".join(m.get("data", "") for m in got if m["type"] == "data"):
        got.append(ws.recv())
    assert got[0]["type"] == "runtime" and got[0]["language"]
    assert [m["stage"] for m in got if m["type"] == "stage"] == ["compile", "run"]
    assert {"type": "exit", "stage": "compile", "code": 0, "signal": None} in got
    ws.send({"type": "signal", "signal": "SIGKILL"})
    rest = ws.until_close()
    assert {"type": "exit", "stage": "run", "code": None, "signal": "SIGKILL"} in rest
    assert ws.close_code == 4999
    ws = WS(d.port, path="/api/v2/connect")
    ws.send({"type": "data", "stream": "stdin", "data": "x"})
    ws.until_close()
    assert ws.close_code == 4003
    ws = WS(d.port, path="/api/v2/connect")
    ws.until_close()
    assert ws.close_code == 4001


PISTON_CLI = "/srv/piston-cli/cli/index.js"


@pytest.mark.skipif(not (os.path.exists(PISTON_CLI) and shutil.which("node")),
                    reason="Piston's CLI (node, /srv/piston-cli) is not here")
def test_pistons_cli_runs_interactively(d, tmp_path):
    """Piston's own CLI, `run -t`: its WebSocket client against the daemon."""
    src = tmp_path / "rev.py"
    src.write_text("a = input()\nb = input()\nprint(b[::-1], a[::-1], flush=True)\n")
    p = subprocess.run(["node", PISTON_CLI, "-u", d.url, "run", "python", str(src), "-t"],
                       input="hello\nworld\n", capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout == "dlrow olleh\n"


def test_tokens():
    dm = None
    tokens = os.path.join(os.path.dirname(__file__), "tokens-session.txt")
    with open(tokens, "w") as f:
        f.write("secret-token-1234567890\n")
    try:
        dm = Daemon(args=["--auth-tokens", tokens], languages=small())
        assert WS(dm.port).status == 401
        ws = WS(dm.port, headers="Authorization: Bearer secret-token-1234567890\r\n")
        assert ws.status == 101
        start(ws, "py3", "print(2)\n")
        assert text(ws.until_close(), "stdout") == "2\n"
    finally:
        os.unlink(tokens)
        if dm:
            dm.stop()


def socket_option(pid, inode, level, name):
    """getsockopt on a process's socket (found by its inode), through a
    copy of its fd (pidfd_getfd, Linux 5.6)."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = next(int(n) for n, link in fd_items(pid) if link == "socket:[%d]" % inode)
    pidfd = os.pidfd_open(pid)
    try:
        mine = libc.syscall(438, pidfd, fd, 0)  # SYS_pidfd_getfd
        assert mine >= 0, os.strerror(ctypes.get_errno())
        try:
            with socket.socket(fileno=os.dup(mine)) as s:
                return s.getsockopt(level, name)
        finally:
            os.close(mine)
    finally:
        os.close(pidfd)


def fd_items(pid):
    for n in os.listdir("/proc/%d/fd" % pid):
        try:
            yield n, os.readlink("/proc/%d/fd/%s" % (pid, n))
        except OSError:
            pass


def test_a_sessions_socket_sends_each_message_at_once(d):
    """Each message goes out at once (TCP_NODELAY): under Nagle's
    algorithm one sent before the last was acknowledged waited for the
    client's delayed ACK, 40 ms for every echo of a line."""
    ws = WS(d.port)
    start(ws, "py3", ECHO_PY)
    ws.send({"type": "stdin", "data": "x\n"})
    got = []
    while "X" not in text(got, "stdout"):
        got.append(ws.recv())
    inode = server_socket_inode(d.port, ws.s)
    owner = [p for p in d.worker_pids() if "socket:[%d]" % inode in fd_links(p)]
    assert len(owner) == 1, "the session's socket is in no worker"
    assert socket_option(owner[0], inode, socket.IPPROTO_TCP, socket.TCP_NODELAY)
    ws.send({"type": "close_stdin"})
    ws.until_close()


def test_a_message_in_fragments_that_never_ends_closes_with_1009(d):
    """A text message whose fragments keep coming, each small, none the
    last: their sum passes --max-session-frame (4k here) and it ends."""
    ws = WS(d.port)
    ws.s.sendall(ws.frame(1, b"{" + b" " * 500, fin=False))
    sent = 0
    try:
        for _ in range(100):  # 50 KB in all, far past the cap
            ws.s.sendall(ws.frame(0, b" " * 500, fin=False))
            sent += 1
    except OSError:
        pass  # closed under it: what the test wants
    assert ws.until_close() == [] and ws.close_code == 1009, sent


def test_a_frame_whose_payload_never_comes_ends_at_the_idle_timeout(d):
    """A header that announces 1000 bytes, then 10 of them and silence:
    the idle timeout (2 s here) ends the session; nothing waits for ever."""
    ws = WS(d.port)
    start(ws, "py3", "input()\n")
    frame = ws.frame(1, b'{"type":"stdin","data":"' + b"x" * 970 + b'"}')
    ws.s.sendall(frame[:18])
    t0 = time.time()
    ws.s.settimeout(30)
    msgs = []
    try:
        msgs = ws.until_close()
    except (EOFError, OSError):
        pass  # closed without a close frame: also an end
    assert time.time() - t0 < 20
    assert not msgs or [m for m in msgs if m.get("type") == "exit"][0]["status"] == "idle_timeout"


def flood(sock, frame, seconds, limit):
    """Send frame after frame without reading, until the server stops
    taking them (the socket's buffers full), for at most seconds; how
    many went."""
    sock.setblocking(False)
    sent, deadline, data, off = 0, time.time() + seconds, frame * 1000, 0
    while time.time() < deadline and sent < limit:
        try:
            off += sock.send(data[off:])
        except BlockingIOError:
            time.sleep(0.01)
            continue
        except OSError:
            break
        if off >= len(data):
            sent += 1000
            off = 0
    sock.setblocking(True)
    return sent


def test_a_ping_flood_keeps_the_worker_small():
    """Pings, never reading a pong: the worker answers only while fewer
    than 256 KiB of answers wait, then stops reading the socket, so the
    flood fills the client's own buffers, not the worker's memory."""
    dm = Daemon(args=["--workers", "1", "--session-idle-timeout", "5s"], languages=small(),
                env=without_quarantine())
    try:
        ws = WS(dm.port)
        ws.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        start(ws, "py3", "input()\n")
        assert poll(lambda: in_flight(dm) == 1, timeout=20)
        pid = dm.worker_pids()[0]
        before = vm_kb(pid, "VmRSS")
        sent = flood(ws.s, ws.frame(9, b"p" * 100), 4, 2000000)
        after = vm_kb(pid, "VmRSS")
        assert sent > 0
        assert after - before < 4 * 1024, (before, after, sent)
        assert dm.get("/healthz")[0] == 200
        ws.close()
        assert poll(lambda: in_flight(dm) == 0, timeout=20)
    finally:
        dm.stop()


def test_a_million_tiny_frames_reach_the_program_in_bounded_memory():
    """A million one-byte stdin messages: each reaches the program, in
    order of arrival, while the worker's memory stays flat."""
    dm = Daemon(args=["--workers", "1"], languages=small(), env=without_quarantine())
    try:
        ws = WS(dm.port, timeout=120)
        start(ws, "py3", "import sys\nn = len(sys.stdin.read())\nprint(n, flush=True)\n")
        assert poll(lambda: in_flight(dm) == 1, timeout=20)
        pid = dm.worker_pids()[0]
        before = vm_kb(pid, "VmRSS")
        one = ws.frame(1, json.dumps({"type": "stdin", "data": "x"}).encode())
        for _ in range(100):
            ws.s.sendall(one * 10000)
        after = vm_kb(pid, "VmRSS")
        ws.send({"type": "close_stdin"})
        msgs = ws.until_close()
        assert text(msgs, "stdout") == "1000000\n", msgs[-3:]
        assert [m for m in msgs if m["type"] == "exit"][0]["status"] == "accepted"
        assert after - before < 8 * 1024, (before, after)
    finally:
        dm.stop()
