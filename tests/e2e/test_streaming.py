"""Streamed verdicts through the real daemon: POST /run with
`Accept: application/x-ndjson` answers one JSON line per judged step
(the build, each test, each group when decided) and a summary line, in
a chunked body; the lines hold what the ordinary answer holds. A client
that goes away stops its job at once; keep-alive goes on after the
stream.
"""
import itertools
import json
import os
import socket
import time

import pytest

from conftest import Daemon, dump, poll, small

NDJSON = "application/x-ndjson"
# the fields that differ from one run to the next
TIMING = {"duration_ms", "cpu_time_ms", "memory_peak_kb", "memory_rss_peak_kb"}


class Client:
    """One keep-alive connection, read by hand to see each chunk come."""

    def __init__(self, port, timeout=60):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.buf = b""

    def close(self):
        self.s.close()

    def send(self, body, accept=NDJSON, path="/run", version="1.1"):
        data = json.dumps(body).encode() if not isinstance(body, bytes) else body
        head = "POST %s HTTP/%s\r\nHost: x\r\nContent-Type: application/json\r\n" \
               "Content-Length: %d\r\n" % (path, version, len(data))
        if accept:
            head += "Accept: %s\r\n" % accept
        self.s.sendall(head.encode() + b"\r\n" + data)

    def _fill(self):
        data = self.s.recv(65536)
        if not data:
            raise EOFError("connection closed")
        self.buf += data

    def _take_until(self, sep):
        while sep not in self.buf:
            self._fill()
        i = self.buf.index(sep)
        out, self.buf = self.buf[:i], self.buf[i + len(sep):]
        return out

    def _take(self, n):
        while len(self.buf) < n:
            self._fill()
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def head(self):
        lines = self._take_until(b"\r\n\r\n").decode().split("\r\n")
        status = int(lines[0].split()[1])
        headers = {k.lower(): v.strip() for k, v in (l.split(":", 1) for l in lines[1:])}
        return status, headers

    def chunk(self):
        """The next chunk's bytes, b"" for the last one."""
        size = int(self._take_until(b"\r\n").split(b";")[0], 16)
        if size == 0:
            assert self._take_until(b"\r\n") == b"", "trailers"
            return b""
        data = self._take(size)
        assert self._take(2) == b"\r\n"
        return data

    def lines(self):
        """Each line of a chunked body as it comes, parsed."""
        pending = b""
        while True:
            data = self.chunk()
            if not data:
                assert pending == b"", "a line without its end"
                return
            pending += data
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                yield json.loads(line)

    def response(self):
        """A whole answer: status, headers, and the body (lines or JSON)."""
        status, headers = self.head()
        if headers.get("transfer-encoding") == "chunked":
            return status, headers, list(self.lines())
        return status, headers, json.loads(self._take(int(headers["content-length"])))


def assemble(lines):
    """The ordinary answer the lines stand for."""
    assert lines[-1]["type"] == "result", lines
    body = {k: v for k, v in lines[-1].items() if k != "type"}
    tests, groups = {}, {}
    for line in lines[:-1]:
        kind = line["type"]
        if kind == "test":
            assert line["index"] not in tests, "a test reported twice"
            tests[line["index"]] = line["test"]
        elif kind == "group":
            assert line["index"] not in groups, "a group reported twice"
            groups[line["index"]] = line["group"]
        else:
            assert kind in ("build", "checker_build", "interactor_build"), line
            body[kind] = line[kind]
    body["tests"] = [tests[i] for i in range(len(tests))]
    if groups or "points" in body:
        body["groups"] = [groups[i] for i in range(len(groups))]
    return body


def untimed(o):
    if isinstance(o, dict):
        return {k: untimed(v) for k, v in o.items() if k not in TIMING}
    if isinstance(o, list):
        return [untimed(v) for v in o]
    return o


@pytest.fixture(scope="module")
def daemon():
    d = Daemon(languages=small(), workers=1, args=["--max-job-output-size", "65536", "--metrics"])
    yield d
    d.stop()


PROGRAM = ("s = input().strip()\n"
           "if s == 'crash':\n"
           "    raise SystemExit(3)\n"
           "print('ok' if s == 'ok' else 'no')\n")


def expecting_ok(*words):
    return [{"stdin": w + "\n", "expected_stdout": "ok\n"} for w in words]


CHECKER = ("import sys\n"
           "ok = open(sys.argv[2]).read().split() == ['ok']\n"
           "print('fine' if ok else 'wrong', file=sys.stderr)\n"
           "sys.exit(0 if ok else 1)\n")

# The interactor hands the solution the test's word and judges its answer
# once the solution has ended: a wrong answer stops a solution that still
# runs, and the solution's own exit or that kill would make two answers.
INTERACTOR = ("import sys\n"
              "print(open(sys.argv[1]).read().strip(), flush=True)\n"
              "ok = sys.stdin.readline().strip() == 'ok'\n"
              "sys.stdin.read()\n"
              "sys.exit(0 if ok else 1)\n")

# Requests whose streamed lines must make their ordinary answer.
SAME = [
    ("plain", {"language": "py3", "source": PROGRAM, "tests": expecting_ok("ok", "bad", "crash")}),
    ("groups and stop", {"language": "py3", "source": PROGRAM,
                         "tests": expecting_ok("ok", "bad", "ok", "ok"),
                         "groups": [{"tests": [0, 1, 2], "points": 40, "stop_on_failure": True},
                                    {"tests": [3], "points": 60}]}),
    ("checker", {"language": "py3", "source": PROGRAM,
                 "checker": {"language": "py3", "source": CHECKER},
                 "tests": [{"stdin": "ok\n"}, {"stdin": "bad\n"}], "stop_on_failure": True}),
    ("a build", {"language": "c", "source": "#include <stdio.h>\nint main(void){puts(\"ok\");}",
                 "tests": expecting_ok("", "")}),
    ("interactor", {"language": "py3", "source": PROGRAM,
                    "interactor": {"language": "py3", "source": INTERACTOR},
                    "tests": [{"stdin": "ok"}, {"stdin": "bad"}, {"stdin": "ok"}],
                    "groups": [{"tests": [0, 1], "stop_on_failure": True, "points": 1},
                               {"tests": [2], "points": 2}]}),
    ("a failed build", {"language": "c", "source": "int main( {", "tests": expecting_ok(""),
                        "groups": [{"tests": [0], "points": 1}]}),
]


@pytest.mark.parametrize("req", [s[1] for s in SAME], ids=[s[0] for s in SAME])
def test_lines_hold_the_ordinary_answer(daemon, req):
    c = Client(daemon.port)
    try:
        c.send(req, accept=None)
        status, headers, ordinary = c.response()
        assert status == 200 and "content-length" in headers, dump(ordinary)
        c.send(req)
        status, headers, lines = c.response()
    finally:
        c.close()
    assert status == 200
    assert headers["content-type"] == NDJSON
    assert headers["transfer-encoding"] == "chunked" and "content-length" not in headers
    assert headers["x-request-id"]
    # the build first, each test in order, each group after the test that decides it
    kinds = [l["type"] for l in lines]
    assert kinds[0] == "build", kinds
    assert [l["index"] for l in lines if l["type"] == "test"] == list(range(len(req["tests"])))
    for l in lines:
        if l["type"] == "group":
            members = req["groups"][l["index"]]["tests"]
            reported = [x["index"] for x in lines[:lines.index(l)] if x["type"] == "test"]
            assert any(m in reported for m in members), lines
    streamed = assemble(lines)
    # the same build a second time comes from the build cache: the answer
    # says so, and is otherwise the first build's
    if req["language"] == "c" and ordinary["build"]["status"] == "ok":
        assert streamed["build"].pop("cached") is True and ordinary["build"].pop("cached") is False
    assert untimed(streamed) == untimed(ordinary), (lines, ordinary)


def test_a_group_is_reported_when_decided(daemon):
    req = {"language": "py3", "source": PROGRAM, "tests": expecting_ok("bad", "ok", "ok"),
           "groups": [{"tests": [0, 2], "points": 5}]}
    c = Client(daemon.port)
    try:
        c.send(req)
        assert c.head()[0] == 200
        kinds = [(l["type"], l.get("index")) for l in c.lines()]
    finally:
        c.close()
    # its first test failed: decided then, before the later tests
    assert kinds == [("build", None), ("test", 0), ("group", 0), ("test", 1), ("test", 2),
                     ("result", None)], kinds


# A test that prints this, then sleeps, stays visible by its command line.
SLEEPER = ("import os, sys\n"
           "s = input().strip()\n"
           "if s != 'sleep':\n"
           "    print('ok'); sys.exit(0)\n"
           "os.execv('/bin/sleep', ['sleep', '%s'])\n")


def processes(match):
    """Processes on this host whose argument list (bytes) match accepts."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                args = f.read().split(b"\0")
        except OSError:
            continue
        if match(args):
            found.append(int(pid))
    return found


def sleeping(marker):
    """Processes on this host running `sleep <marker>`."""
    return processes(lambda args: args[:2] == [b"sleep", marker.encode()])


def assert_next_job_served(daemon):
    """A plain job on a new connection is answered, within 30 s."""
    c = Client(daemon.port, timeout=30)
    try:
        c.send({"language": "py3", "source": "print('ok')", "tests": expecting_ok("")},
               accept=None)
        status, _, body = c.response()
    finally:
        c.close()
    assert status == 200 and body["status"] == "accepted", dump(body)


def test_each_line_comes_while_later_tests_run(daemon):
    marker = "61.%d" % os.getpid()
    req = {"language": "py3", "source": SLEEPER % marker, "tests": expecting_ok("ok", "sleep"),
           "run": {"limits": {"wall_time_s": 90}}}
    c = Client(daemon.port, timeout=30)
    try:
        c.send(req)
        assert c.head()[0] == 200
        lines = c.lines()
        assert next(lines)["type"] == "build"
        first = next(lines)
        # the first test's verdict is here, and the second still runs
        assert first["type"] == "test" and first["index"] == 0, first
        assert first["test"]["status"] == "accepted", first
        assert poll(lambda: sleeping(marker), 20), "the second test never ran"
    finally:
        c.close()
    assert poll(lambda: not sleeping(marker), 20), "the job outlived its client"


def metrics(daemon):
    """/metrics once no job runs: the job of a client that went away is
    counted when it has ended, a moment after the client saw it stop
    (the one worker's loop answers this and counts each job's end)."""
    deadline = time.time() + 20
    while True:
        status, text, _ = daemon.request("GET", "/metrics")
        assert status == 200
        if "\ngoboxd_active_jobs 0\n" in text or time.time() >= deadline:
            return text
        time.sleep(0.05)


def jobs(daemon, language="py3"):
    """Finished jobs of a language by status, from /metrics, and the
    jobs the sandbox failed (its faults) under "faults"."""
    text = metrics(daemon)
    prefix = 'goboxd_jobs_total{language="%s",status="' % language
    found = {line[len(prefix):].split('"')[0]: int(line.split()[-1])
             for line in text.splitlines() if line.startswith(prefix)}
    found["faults"] = sum(int(line.split()[-1]) for line in text.splitlines()
                          if line.startswith("goboxd_jobs_failed_internal_total"))
    return found


@pytest.mark.parametrize("when", ["before reading anything", "after the first line"])
def test_a_client_that_goes_away_frees_the_worker(daemon, when):
    marker = "62.%d%d" % (os.getpid(), len(when))
    req = {"language": "py3", "source": SLEEPER % marker, "tests": expecting_ok("sleep", "ok"),
           "run": {"limits": {"wall_time_s": 90}}}
    before = jobs(daemon)
    c = Client(daemon.port, timeout=30)
    c.send(req)
    if when == "after the first line":
        assert c.head()[0] == 200
        assert next(c.lines())["type"] == "build"
    assert poll(lambda: sleeping(marker), 20), "the test never ran"
    c.close()
    # the one worker takes the next job while the first would still sleep
    assert_next_job_served(daemon)
    assert not sleeping(marker), "the gone client's program still runs"
    assert not daemon.step_cgroups(), "a step cgroup was left"
    assert any("went away" in l.get("msg", "") for l in daemon.log_lines())
    # counted as a job without a verdict, never as the kill's runtime_error
    after = jobs(daemon)
    assert after.get("not_executed", 0) == before.get("not_executed", 0) + 1, (before, after)
    assert after.get("runtime_error", 0) == before.get("runtime_error", 0), (before, after)


def test_a_client_that_goes_away_stops_both_sides_of_an_interactive_test(daemon):
    sol, itr = "64.%d" % os.getpid(), "65.%d" % os.getpid()
    sleep = "import os\nos.execv('/bin/sleep', ['sleep', '%s'])\n"
    req = {"language": "py3", "source": sleep % sol, "tests": [{"stdin": ""}],
           "interactor": {"language": "py3", "source": sleep % itr},
           "run": {"limits": {"wall_time_s": 90}}}
    c = Client(daemon.port, timeout=30)
    try:
        c.send(req)
        assert c.head()[0] == 200
        lines = c.lines()
        assert [next(lines)["type"], next(lines)["type"]] == ["build", "interactor_build"]
        assert poll(lambda: sleeping(sol) and sleeping(itr), 20), "the test never ran"
    finally:
        c.close()
    assert poll(lambda: not sleeping(sol) and not sleeping(itr), 10), \
        "a side of the test outlived its client"


# A build that surely still runs when its client leaves: g++ evaluates
# each spin<K>() for about 0.6 s (its constexpr evaluator is slow), in
# little memory (x takes few values, each a tree node g++ keeps), all of
# them for longer than the build may run (60 s, the server's cap) and
# than the next job may take to be answered.
SLOW_BUILD = ("template <long K> constexpr long spin()\n"
              "{\n"
              "    long x = K;\n"
              "    for (long i = 0; i < 1000; i++)\n"
              "        for (long j = 0; j < 1000; j++)\n"
              "            x = (x + (i ^ j)) & 255;\n"
              "    return x;\n"
              "}\n"
              + "".join("constexpr long v%d = spin<%d>();\n" % (k, k) for k in range(200))
              + "int main() { return (int)(v0 & 1); }\n")


def slow_build(marker):
    """The C++ program of SLOW_BUILD; its compiler's command lines name
    the marker (a macro of its own)."""
    return {"language": "cpp", "source": SLOW_BUILD,
            "build": {"flags": ["-D" + marker],
                      "limits": {"wall_time_s": 60, "cpu_time_s": 60}}}


def compiling(marker):
    """Processes on this host with the marker's -D among their arguments
    (the build's g++ and cc1plus)."""
    return processes(lambda args: ("-D" + marker).encode() in args or marker.encode() in args)


# Whose build the client leaves during: the request around the slow
# build, and the lines that come before that build starts.
LEFT_BUILDS = [
    ("the solution's", lambda m: dict(slow_build(m), tests=expecting_ok("")), []),
    ("a checker's", lambda m: {"language": "py3", "source": PROGRAM, "checker": slow_build(m),
                               "tests": [{"stdin": "ok\n"}]}, ["build"]),
    ("an interactor's", lambda m: {"language": "py3", "source": PROGRAM,
                                   "interactor": slow_build(m), "tests": [{"stdin": "ok"}]},
     ["build"]),
]


LEFT_MARKS = itertools.count()


@pytest.mark.parametrize("make,first", [b[1:] for b in LEFT_BUILDS],
                         ids=[b[0] for b in LEFT_BUILDS])
def test_a_build_whose_client_goes_away_has_no_verdict(daemon, make, first):
    marker = "LEFT_%d_%d" % (os.getpid(), next(LEFT_MARKS))
    req = make(marker)
    before = jobs(daemon, req["language"])
    logged = len(daemon.log_lines())
    c = Client(daemon.port, timeout=30)
    c.send(req)
    if first:
        assert c.head()[0] == 200
        lines = c.lines()
        assert [next(lines)["type"] for _ in first] == first
    assert poll(lambda: compiling(marker), 20), "the build never ran"
    c.close()
    # the one worker takes the next job while the build would still run
    # (its socket's timeout is half the build's limit)
    assert_next_job_served(daemon)
    assert not compiling(marker), "the gone client's build still runs"
    assert not daemon.step_cgroups(), "a step cgroup was left"
    # a build killed mid-way did not fail: the job has no verdict, and
    # the sandbox did not fail either
    errors = [l for l in daemon.log_lines()[logged:] if l.get("level") == "error"]
    assert not errors, errors
    after = jobs(daemon, req["language"])
    assert after.get("not_executed", 0) == before.get("not_executed", 0) + 1, (before, after)
    for other in ("build_failed", "internal_error", "faults"):
        assert after.get(other, 0) == before.get(other, 0), (other, before, after)


def test_keep_alive_after_a_streamed_answer(daemon):
    req = {"language": "py3", "source": PROGRAM, "tests": expecting_ok("ok", "bad")}
    c = Client(daemon.port)
    try:
        for accept in (NDJSON, None, NDJSON):
            c.send(req, accept=accept)
            status, headers, body = c.response()
            assert status == 200 and headers["connection"] == "keep-alive"
            streamed = accept is not None
            assert (headers.get("transfer-encoding") == "chunked") == streamed
            status_of = body[-1]["status"] if streamed else body["status"]
            assert status_of == "wrong_output", dump(body)
        # pipelined: both answers, in order, on the same connection
        c.send(req)
        c.send(req, accept=None)
        first = c.response()
        second = c.response()
        assert first[1].get("transfer-encoding") == "chunked" and first[2][-1]["type"] == "result"
        assert second[2]["status"] == "wrong_output"
    finally:
        c.close()


# Accept headers: streamed or not.
ACCEPT = [
    ("application/x-ndjson", True),
    ("Application/X-NDJSON", True),
    ("application/json, application/x-ndjson;q=0.5", True),
    ("application/x-ndjson ; q=1", True),
    ("application/x-ndjson;q=0", False),
    ("application/json", False),
    ("application/x-ndjsonx", False),
    ("*/*", False),
]


@pytest.mark.parametrize("accept,streamed", ACCEPT, ids=[a[0] for a in ACCEPT])
def test_accept(daemon, accept, streamed):
    c = Client(daemon.port)
    try:
        c.send({"language": "py3", "source": PROGRAM, "tests": expecting_ok("ok")}, accept=accept)
        status, headers, body = c.response()
    finally:
        c.close()
    assert status == 200
    assert (headers.get("transfer-encoding") == "chunked") == streamed, headers
    assert headers["content-type"] == (NDJSON if streamed else "application/json")


def test_http_1_0_gets_the_ordinary_answer(daemon):
    c = Client(daemon.port)
    try:
        c.send({"language": "py3", "source": PROGRAM, "tests": expecting_ok("ok")}, version="1.0")
        status, headers, body = c.response()
    finally:
        c.close()
    assert status == 200 and "content-length" in headers and body["status"] == "accepted"


def test_errors_before_the_job_stay_ordinary(daemon):
    c = Client(daemon.port)
    try:
        c.send({"language": "py3", "source": PROGRAM, "tests": expecting_ok("ok"),
                "groups": [{"tests": [3]}]})
        status, headers, body = c.response()
        assert status == 400 and "content-length" in headers, headers
        assert body["error"]["path"] == "groups[0].tests[0]", dump(body)
        # the connection goes on
        c.send({"language": "py3", "source": PROGRAM, "tests": expecting_ok("ok")})
        status, headers, lines = c.response()
        assert status == 200 and lines[-1]["status"] == "accepted"
    finally:
        c.close()


def test_codize_is_never_streamed(daemon):
    c = Client(daemon.port)
    try:
        c.send({"runtime": "python", "files": [{"name": "a.py", "content": "print(1)"}]},
               path="/v1/run")
        status, headers, body = c.response()
    finally:
        c.close()
    assert status == 200 and "content-length" in headers and body["run"]["stdout"] == "MQo="


def test_the_output_budget_bounds_the_stream(daemon):
    # 8 tests of 20 KB each against a 64 KiB budget for the whole answer
    req = {"language": "py3", "source": "print('x' * 20000)",
           "tests": [{"stdin": ""} for _ in range(8)]}
    c = Client(daemon.port)
    try:
        c.send(req)
        status, headers = c.head()
        size = 0
        lines = []
        for line in c.lines():
            size += len(json.dumps(line))
            lines.append(line)
    finally:
        c.close()
    outs = [l["test"]["stdout"] for l in lines if l["type"] == "test"]
    assert len(outs) == 8
    marker = "\n[goboxd: output truncated]\n"
    kept = [len(o) - (len(marker) if o.endswith(marker) else 0) for o in outs]
    assert sum(kept) <= 65536, kept
    # the budget ran out on the way: later tests show only the marker
    assert outs[0] == "x" * 20000 + "\n"
    assert outs[-1] == "\n[goboxd: output truncated]\n", outs[-1][:100]
    assert size < 65536 + 8 * 1024, size
