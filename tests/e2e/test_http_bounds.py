"""Bounds that hold against any client: the size of an answer, the work
the loop does for it, and what one connection may make a worker keep."""
import http.client
import json
import os
import signal
import socket
import threading
import time

import pytest

from conftest import Daemon, dump, judged, small, vm_kb, without_quarantine

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
        """Bytes, or b"" at the end (a reset included: a silent close)."""
        if self.rest:
            out, self.rest = self.rest, b""
            return out
        try:
            return self.s.recv(n)
        except ConnectionResetError:
            return b""

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




def reset_peak(pid):
    """VmHWM starts again from the current RSS (proc(5), clear_refs 5)."""
    with open("/proc/%d/clear_refs" % pid, "w") as f:
        f.write("5")


@pytest.fixture(scope="module")
def daemon():
    # a read timeout far above what any refusal here may take, so that a
    # 408 can never pass for the answer a test waits for
    d = Daemon(languages=small(), args=["--read-timeout", "30s"])
    yield d
    d.stop()


def flood_until_answered(port, head, filler, limit):
    """Send head, then filler again and again, until the worker answers
    (or closes) or limit bytes went out; (status line, bytes sent)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.setblocking(False)
    pending, sent, answer = head, 0, b""
    deadline = time.time() + 20
    while sent < limit and time.time() < deadline:
        try:
            got = s.recv(65536)
            answer += got
            if not got or b"\r\n" in answer:
                break
        except BlockingIOError:
            pass
        except OSError:
            break
        try:
            n = s.send(pending)
            sent += n
            pending = pending[n:] or filler
        except BlockingIOError:
            time.sleep(0.001)
        except OSError:
            break
    s.setblocking(True)
    s.settimeout(30)
    try:
        while b"\r\n" not in answer:
            got = s.recv(65536)
            if not got:
                break
            answer += got
    except OSError:
        pass
    s.close()
    return answer.split(b"\r\n")[0], sent


# ---- section 4: the HTTP layer --------------------------------------------

def test_chunk_extensions_count_against_the_caps(daemon):
    # one chunk whose extension never ends: nothing of it is body, so
    # before the fix the worker kept it all (and answered 408 at the end)
    head = b"POST /run HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1;"
    line, sent = flood_until_answered(daemon.port, head, b"a" * 65536, 256 << 20)
    assert line.startswith(b"HTTP/1.1 413"), (line, sent)
    # the header cap (16 KiB) and what was in flight in the socket buffers
    assert sent < 16 << 20, sent


def test_chunk_size_padding_counts_against_the_caps(daemon):
    # "000...0001": a chunk size line llhttp reads without any callback
    head = b"POST /run HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
    line, sent = flood_until_answered(daemon.port, head, b"0" * 65536, 256 << 20)
    assert line.startswith(b"HTTP/1.1 413"), (line, sent)
    assert sent < 16 << 20, sent


def test_chunked_request_with_small_extensions_still_runs(daemon):
    body = json.dumps(HELLO).encode()
    chunks = b"".join(b"%x;ext=%d\r\n%s\r\n" % (len(body[i:i + 7]), i, body[i:i + 7])
                      for i in range(0, len(body), 7))
    c = Conn(daemon.port)
    c.send(b"POST /run HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
           + chunks + b"0\r\nX-Trailer: 1\r\n\r\n")
    status, _, got = c.response()
    c.close()
    assert status == 200 and json.loads(got)["status"] == "accepted", got


def test_expect_continue_is_answered_once(daemon):
    body = json.dumps(HELLO).encode()
    c = Conn(daemon.port)
    c.send(post_head("/run", len(body), b"Expect: 100-continue\r\nConnection: close\r\n"))
    first = c.response()
    assert first[0] == 100
    c.send(body)
    rest = b""
    while True:
        chunk = c.recv(65536)
        if not chunk:
            break
        rest += chunk
    c.close()
    # the job is handed to the master and parsed again by the worker that
    # runs it: that worker must not say "100 Continue" a second time
    assert rest.startswith(b"HTTP/1.1 200 "), rest[:200]
    assert b"100 Continue" not in rest


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


def test_pipelined_bytes_after_a_job_are_all_answered():
    # small body caps, so that what a client pipelines behind a job can be
    # more than a request: before the fix the worker that ran the job kept
    # at most one body and two headers' worth and closed without a word
    d = Daemon(languages=small(), workers=1,
               args=["--max-run-body-size", "64k", "--max-body-size", "64k"])
    try:
        job = json.dumps(HELLO).encode()
        probe = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
        n = (256 << 10) // len(probe)
        c = Conn(d.port)
        c.send(post_head("/run", len(job)) + job + probe * n)
        got = []
        while len(got) < n + 1:
            r = c.response()
            if r is None:
                break
            got.append(r[0])
        c.close()
        assert len(got) == n + 1, "%d answers of %d" % (len(got), n + 1)
        assert got == [200] * (n + 1)
    finally:
        d.stop()


@pytest.mark.slow
def test_handed_over_request_that_no_longer_fits_gets_413(tmp_path):
    # a job queued under the old caps reaches a worker of a generation
    # whose caps a reload lowered: before, that worker dropped the
    # connection without a word
    cfg = tmp_path / "goboxd.yaml"
    cfg.write_text("max_concurrency: 1\n")
    d = Daemon(languages=small(), args=["--config", str(cfg)], workers=1)
    try:
        slow = {"language": "py3", "source": "import time\ntime.sleep(3)\n",
                "tests": [{"stdin": ""}]}
        big = {"language": "py3", "source": "print(len(input()))\n",
               "tests": [{"stdin": "x" * (1 << 20) + "\n"}]}
        got = {}

        def send_big():
            try:
                got["big"] = d.request("POST", "/run", big, timeout=30)
            except OSError as e:  # a dropped connection, or none at all
                got["big"] = (None, repr(e), {})

        first = threading.Thread(target=lambda: got.update(slow=d.post("/run", slow)))
        first.start()
        d.wait_jobs(running=1)
        # the one job slot is taken: this one waits in the master's queue
        second = threading.Thread(target=send_big)
        second.start()
        d.wait_jobs(queued=1)
        cfg.write_text("max_concurrency: 1\nmax_run_body_size: 64k\nmax_body_size: 64k\n")
        d.proc.send_signal(signal.SIGHUP)
        first.join()
        second.join()
        assert got["slow"][0] == 200
        status, body, headers = got["big"]
        assert status == 413 and body["error"]["code"] == "body_too_large", (status, body)
        assert headers.get("Connection") == "close"
    finally:
        d.stop()




def test_client_that_never_reads_does_not_grow_the_worker():
    d = Daemon(languages=small(), workers=1, env=without_quarantine())
    try:
        pid = d.worker_pids()[0]
        reset_peak(pid)
        before = vm_kb(pid, "VmHWM")
        s = socket.create_connection(("127.0.0.1", d.port))
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.setblocking(False)
        reqs = b"GET /info HTTP/1.1\r\nHost: x\r\n\r\n" * 256
        sent, stalled = 0, None
        deadline = time.time() + 5
        while time.time() < deadline:
            try:
                sent += s.send(reqs)
                stalled = None
            except BlockingIOError:
                stalled = stalled or time.time()
                if time.time() - stalled > 1.5:
                    break  # the worker stopped reading: the point of the test
                time.sleep(0.01)
        grown = vm_kb(pid, "VmHWM") - before
        # the read-ahead, the unsent answers and the parser: under 2 MiB
        # (before the fix it grew by about 12 MB a second here)
        assert grown < 8 << 10, "worker grew by %d KiB after %d bytes" % (grown, sent)
        # the answers are still owed: the worker is alive and answers others
        assert d.get("/healthz", timeout=5)[0] == 200
        s.close()
    finally:
        d.stop()


def proc_cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.slow
def test_client_gone_with_answers_unsent_is_let_go():
    # its answers fill the socket, then it closes with them unread (a
    # reset): the worker's send fails, and the connection must be freed,
    # not reported by epoll again and again (it spun, and held up a stop
    # for the whole shutdown timeout)
    d = Daemon(languages=small(), workers=1)
    try:
        pid = d.worker_pids()[0]
        s = socket.create_connection(("127.0.0.1", d.port))
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.setblocking(False)
        reqs = b"GET /info HTTP/1.1\r\nHost: x\r\n\r\n" * 256
        deadline = time.time() + 2
        while time.time() < deadline:
            try:
                s.send(reqs)
            except BlockingIOError:
                time.sleep(0.01)
        s.close()
        time.sleep(0.5)
        before = proc_cpu_seconds(pid)
        time.sleep(2)
        used = proc_cpu_seconds(pid) - before
        assert used < 0.5, "the worker used %.2f s of CPU in 2 s of nothing" % used
        start = time.time()
        d.stop()
        assert time.time() - start < 10
    finally:
        d.stop()


# ---- section 3: the answer ------------------------------------------------

BIG = ("import sys\nif sys.stdin.read() != 'quiet':\n"
       "    sys.stdout.buffer.write(b'\\x01' * (%d << 10))\n")
MARKER = "\n[goboxd: output truncated]\n"


def big_output(kib, tests):
    """tests runs of a program that prints kib KiB of the byte 0x01."""
    return {"language": "py3", "source": BIG % kib,
            "run": {"limits": {"output_kb": kib + 1, "wall_time_s": 20, "cpu_time_s": 20}},
            "tests": [{"stdin": ""} for _ in range(tests)]}


@pytest.fixture(scope="module")
def capped():
    """A daemon whose jobs may answer with 1 MiB of output."""
    d = Daemon(languages=small(), args=["--max-job-output-size", "1M"])
    yield d
    d.stop()


def test_job_output_cap_counts_escaped_bytes_and_truncates_later_tests(capped):
    d = capped
    req = big_output(1024, 4)
    # a test that prints nothing is not touched by the cap
    req["tests"].append({"stdin": "quiet", "expected_stdout": ""})
    body = json.dumps(req).encode()
    c = Conn(d.port, timeout=120)
    c.send(post_head("/run", len(body)))
    c.send(body)
    status, _, raw = c.response()
    c.close()
    assert status == 200, raw[:2000]
    # each 0x01 costs 6 bytes in JSON (\u0001): 4 MiB of output would
    # be 24 MiB of answer; the cap is 1 MiB, plus the fixed fields
    assert len(raw) < (1 << 20) + (16 << 10), len(raw)
    out = json.loads(raw)
    tests = out["tests"]
    first = tests[0]["stdout"]
    assert tests[0]["stdout_truncated"] and first.endswith(MARKER)
    kept = first[:-len(MARKER)]
    assert set(kept) == {"\x01"} and 150000 < len(kept) <= (1 << 20) // 6, len(kept)
    for t in tests[:4]:
        assert t["status"] == "wrong_output" and t["stdout_truncated"], t["status"]
    for t in tests[1:4]:
        assert t["stdout"] == MARKER
    assert tests[4]["status"] == "accepted", tests[4]
    assert out["status"] == "wrong_output"


def test_job_output_cap_counts_base64_twice_on_codize(capped):
    def run(kib):
        src = "import sys\nsys.stdout.write('o' * (%d << 10))\n" % kib
        status, body = capped.post("/v1/run", {"runtime": "python",
                                               "files": [{"name": "m.py", "content": src}]})
        assert status == 200, body
        return body["run"]
    # 300 KiB is 800 KiB of answer (stdout and output, in base64): it fits
    assert run(300)["status"] == "OK"
    # 500 KiB is under --output-limit (1 MiB), but 1.3 MiB of answer
    got = run(500)
    assert got == dict(got, status="OUTPUT_LIMIT_EXCEEDED", exit_code=137, stdout="",
                       output=""), got


def test_job_output_cap_cuts_output_files(capped):
    src = "open('out.txt', 'w').write('x' * (700 << 10))\n"
    req = {"language": "py3", "source": src,
           "tests": [{"stdin": "", "output_file": "out.txt"},
                     {"stdin": "", "output_file": "out.txt", "expected_stdout": ""}]}
    status, body = capped.post("/run", req)
    assert status == 200, body
    first, second = (t["output_file"] for t in body["tests"])
    assert len(first["content"]) == 700 << 10 and not first["truncated"]
    # what was left of 1 MiB (the budget counts output, not the fields)
    assert second["truncated"] and len(second["content"]) == 324 << 10
    # cut at the job's cap as at its own: it cannot be the right answer
    assert body["tests"][1]["status"] == "wrong_output"


def test_job_output_cap_cuts_a_checkers_message_without_blaming_it(capped):
    checker = "import sys\nsys.stderr.write('m' * (700 << 10))\n"
    req = judged("checker", "print(1)\n", checker, [{"stdin": ""}, {"stdin": ""}])
    status, body = capped.post("/run", req)
    assert status == 200, body
    first, second = body["tests"]
    assert first["status"] == second["status"] == "accepted", dump(body)
    assert len(first["checker_message"]) == 700 << 10
    assert second["checker_message"].endswith(MARKER)
    # 1 MiB, less the first message and the solution's "1\n" twice (3
    # bytes each in JSON): the budget is the whole job's
    assert len(second["checker_message"]) - len(MARKER) == (324 << 10) - 2 * 3


@pytest.mark.slow
def test_health_answers_while_a_big_answer_is_built():
    # a budget that lets 2 x 16 MiB of 0x01 through: about 200 MB of JSON,
    # which kept the loop from answering for seconds while it built it.
    # The probes run until the answer's head arrives (the build is over
    # then); the answer is read and decoded after them, as decoding it
    # holds this process's interpreter lock for about a second.
    d = Daemon(languages=small(), args=["--max-job-output-size", "1G"], workers=1)
    try:
        req = json.dumps(big_output(16 << 10, 2)).encode()
        head, got = threading.Event(), []

        def client():
            conn = http.client.HTTPConnection("127.0.0.1", d.port, timeout=300)
            conn.request("POST", "/run", body=req, headers={"Content-Type": "application/json"})
            r = conn.getresponse()
            head.set()
            got.append((r.status, r.read()))
            conn.close()

        t = threading.Thread(target=client)
        t.start()
        slowest, probes = 0.0, 0
        while not head.is_set() and t.is_alive():
            start = time.time()
            status, _ = d.get("/healthz", timeout=60)
            assert status == 200
            slowest = max(slowest, time.time() - start)
            probes += 1
            time.sleep(0.05)
        t.join()
        status, raw = got[0]
        body = json.loads(raw)
        assert status == 200 and len(body["tests"][1]["stdout"]) == 16 << 20
        assert probes >= 3, "the answer came before the loop was probed"
        assert slowest < 1.0, slowest
    finally:
        d.stop()
