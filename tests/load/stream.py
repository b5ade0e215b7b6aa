#!/usr/bin/env python3
"""Streamed answers: prints numbers, asserts nothing.

Starts a real goboxd on 127.0.0.1 (py3 only, one worker) and measures:

  first line  a job of N tests of about 50 ms each, streamed: when the
              first test's line arrives and when the last line does,
              against the ordinary answer's arrival;
  gone        a streamed job whose second test would sleep 60 s: its
              client reads the first test's line and closes; the time
              from the close to the answer of the next (hello-world)
              job on the one worker, against the same job on an idle
              worker (what the kill, the reap and the teardown add).

  tests/load/stream.py path/to/goboxd [--jail bwrap|nsjail] [--runs 10] [--tests 20]

Bounded: a fixed count of requests; the sleeping tests are killed by the
daemon when their client goes (and by the wall limit, 90 s, at worst).
"""
import argparse
import json
import os
import shutil
import socket
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from engine import Daemon, pct  # noqa: E402  (same directory)

SLEEPER = ("import os, sys, time\n"
           "s = input().strip()\n"
           "if s == 'sleep':\n"
           "    os.execv('/bin/sleep', ['sleep', '60'])\n"
           "time.sleep(0.05)\n"
           "print('ok')\n")


def job(words):
    return {"language": "py3", "source": SLEEPER, "run": {"limits": {"wall_time_s": 90}},
            "tests": [{"stdin": w + "\n", "expected_stdout": "ok\n"} for w in words]}


class Conn:
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=120)
        self.f = self.s.makefile("rb")

    def post(self, body, stream):
        data = json.dumps(body).encode()
        self.s.sendall(("POST /run HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n%s\r\n" % (
            len(data), "Accept: application/x-ndjson\r\n" if stream else "")).encode() + data)
        headers = {}
        self.f.readline()
        for line in iter(self.f.readline, b"\r\n"):
            k, v = line.decode().split(":", 1)
            headers[k.lower()] = v.strip()
        return headers

    def lines(self):
        """Each streamed line as it comes (one line per chunk)."""
        while True:
            size = int(self.f.readline(), 16)
            if size == 0:
                self.f.readline()
                return
            line = self.f.read(size)
            self.f.read(2)
            yield json.loads(line)

    def close(self):
        self.f.close()
        self.s.close()


def hello(d):
    c = Conn(d.port)
    t = time.time()
    h = c.post({"language": "py3", "source": "print(1)", "tests": [{"stdin": ""}]}, False)
    c.f.read(int(h["content-length"]))
    c.close()
    return time.time() - t


def phase_first_line(d, runs, ntests):
    first, last, whole = [], [], []
    for _ in range(runs):
        c = Conn(d.port)
        t = time.time()
        c.post(job(["ok"] * ntests), True)
        for line in c.lines():
            if line["type"] == "test" and line["index"] == 0:
                first.append(time.time() - t)
        last.append(time.time() - t)
        t = time.time()
        h = c.post(job(["ok"] * ntests), False)
        c.f.read(int(h["content-length"]))
        whole.append(time.time() - t)
        c.close()
    print("%d tests of ~50 ms, %d runs (p50 / max, ms):" % (ntests, runs))
    print("  streamed, first test's line  %6.0f / %6.0f" % (pct(first, 50) * 1e3, max(first) * 1e3))
    print("  streamed, last line          %6.0f / %6.0f" % (pct(last, 50) * 1e3, max(last) * 1e3))
    print("  ordinary answer              %6.0f / %6.0f" % (pct(whole, 50) * 1e3, max(whole) * 1e3))


def phase_gone(d, runs):
    idle = [hello(d) for _ in range(runs)]
    gone = []
    for _ in range(runs):
        c = Conn(d.port)
        c.post(job(["ok", "sleep"]), True)
        it = c.lines()
        next(it)  # the build
        next(it)  # the first test: the second starts now
        time.sleep(0.3)
        t = time.time()
        c.close()
        hello(d)
        gone.append(time.time() - t)
    print("next job on the one worker, %d runs (p50 / max, ms):" % runs)
    print("  on an idle worker                      %6.0f / %6.0f" % (
        pct(idle, 50) * 1e3, max(idle) * 1e3))
    print("  after a streamed client left mid-test  %6.0f / %6.0f" % (
        pct(gone, 50) * 1e3, max(gone) * 1e3))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("goboxd")
    ap.add_argument("--jail", default="bwrap")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--tests", type=int, default=20)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="goboxd-stream-")
    os.chmod(tmp, 0o711)
    d = Daemon(os.path.abspath(a.goboxd), a.jail, tmp, ["--workers", "1"], languages=("py3",))
    try:
        print("jail %s, %d CPUs" % (a.jail, os.cpu_count()))
        phase_first_line(d, a.runs, a.tests)
        phase_gone(d, a.runs)
    finally:
        d.stop()
        shutil.rmtree(tmp, True)


if __name__ == "__main__":
    main()
