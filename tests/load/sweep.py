#!/usr/bin/env python3
"""Requests while a big tree is removed: prints numbers, asserts nothing.

Starts a real goboxd on 127.0.0.1 (py3 only, one worker, a sweep every
second) and, for each size, leaves a job directory of that many empty
files in its jail directory as a crashed worker would (an old mtime, no
lock), then sends hello-world /run requests one after another, from the
moment the removal starts until the directory is gone. It prints how long
the removal took, how many requests were answered meanwhile and their
latency, against the same requests with nothing to remove.

  tests/load/sweep.py path/to/goboxd [--jail bwrap|nsjail] [--files 50000,200000]

Every request is checked (200 and accepted). Bounded: one directory per
size, and each phase ends when its directory is gone (or after 300 s).
"""
import argparse
import http.client
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from engine import NSJAIL, free_port, stop_process  # noqa: E402  (same directory)

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HELLO = {"language": "py3", "source": 'print("hello")\n',
         "tests": [{"stdin": "", "expected_stdout": "hello\n"}]}



def start(binary, jail, tmp):
    langs = os.path.join(tmp, "languages")
    os.makedirs(langs)
    shutil.copy(os.path.join(TOP, "languages", "py3.yaml"), langs)
    port = free_port()
    log = open(os.path.join(tmp, "goboxd.log"), "w")
    proc = subprocess.Popen(
        [binary, "--listen", "127.0.0.1", "--port", str(port), "--workers", "1",
         "--languages-dir", langs, "--jail-dir", os.path.join(tmp, "jails"),
         "--jail", jail, "--nsjail-path", NSJAIL, "--sweep-interval", "1s",
         "--sweep-age", "1s", "--log-level", "warn"],
        stdout=log, stderr=subprocess.STDOUT)
    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            if hello(port) is not None:
                return proc, port, log
        except OSError:
            pass
        time.sleep(0.2)
    raise SystemExit("goboxd did not answer; see %s/goboxd.log" % tmp)


def hello(port):
    """One hello-world /run: its time in ms (None until goboxd is ready)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    t = time.perf_counter()
    conn.request("POST", "/run", body=json.dumps(HELLO).encode(),
                 headers={"Content-Type": "application/json"})
    resp = conn.getresponse()
    body = json.loads(resp.read())
    conn.close()
    if resp.status == 503:
        return None
    if resp.status != 200 or body.get("status") != "accepted":
        raise SystemExit("request failed: %d %s" % (resp.status, json.dumps(body)[:300]))
    return (time.perf_counter() - t) * 1000


def plant(jails, n):
    """A crashed worker's job directory of n files; made under another name
    so that no sweep takes it half made. Returns its path and mtime."""
    making = os.path.join(jails, "making-%d" % n)
    os.mkdir(making)
    fd = os.open(making, os.O_RDONLY | os.O_DIRECTORY)
    for i in range(n):
        os.close(os.open("f%d" % i, os.O_CREAT | os.O_WRONLY, 0o600, dir_fd=fd))
    os.close(fd)
    path = os.path.join(jails, "job-4194305-Bench%d" % n)
    os.rename(making, path)
    old = time.time() - 3600
    os.utime(path, (old, old))
    return path, old


def pct(values, p):
    v = sorted(values)
    return v[min(len(v) - 1, int(round(p / 100.0 * (len(v) - 1))))] if v else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--jail", default="bwrap")
    ap.add_argument("--files", default="50000,200000")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="goboxd-sweep-bench-")
    os.chmod(tmp, 0o711)
    proc, port, log = start(os.path.abspath(args.binary), args.jail, tmp)
    try:
        base = [hello(port) for _ in range(30)]
        print("nothing to remove: %d requests, p50 %.0f ms, max %.0f ms"
              % (len(base), pct(base, 50), max(base)))
        for n in [int(x) for x in args.files.split(",")]:
            path, old = plant(os.path.join(tmp, "jails"), n)
            deadline = time.time() + 300
            # each unlink moves the directory's mtime: the removal has begun
            while os.stat(path).st_mtime <= old + 60 and time.time() < deadline:
                time.sleep(0.01)
            t0 = time.perf_counter()
            during = []
            while os.path.exists(path) and time.time() < deadline:
                during.append(hello(port))
            while os.path.exists(path) and time.time() < deadline:
                time.sleep(0.01)
            removal = time.perf_counter() - t0
            print("%d files: removed in %.1f s; %d requests meanwhile, p50 %.0f ms, "
                  "max %.0f ms" % (n, removal, len(during), pct(during, 50),
                                   max(during) if during else float("nan")))
    finally:
        stop_process(proc, log)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
