#!/usr/bin/env python3
"""What a hostile job makes the next job on the same jail wait: prints
numbers, asserts nothing.

One worker, so that every job lands in the same jail. A round is a
one-line job after a quiet one, then a job that looks up 500,000 new
names under /usr (negative dentries, about 100 MiB of kernel objects
charged to the jail's cgroup), then the one-line job again; each time the
request's wall time as the client sees it, and how much the next job
may allocate in 1 MiB steps under a 64 MiB limit (it must not grow).

    tests/load/job_to_job.py build/goboxd [--jail nsjail] [--rounds 3]
"""
import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))

ONE_LINE = ('import os, json\nprint(json.dumps({"jail": "%s %d" % ('
            'os.readlink("/proc/self/ns/mnt"), os.stat("/sandbox").st_ino)}))\n')


def timed(daemon, job, source, **limits):
    t0 = time.monotonic()
    t = job(daemon, source, **limits)[0]
    return time.monotonic() - t0, t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("goboxd")
    ap.add_argument("--jail", default="bwrap", choices=["bwrap", "nsjail"])
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    os.environ["GOBOXD_BIN"] = os.path.abspath(a.goboxd)
    os.environ["GOBOXD_TEST_JAIL"] = a.jail
    from conftest import Daemon
    import test_job_to_job as t

    d = Daemon(workers=1)
    try:
        timed(d, t.job, ONE_LINE)
        print("| round | one-line job after a quiet one, s | after the dentries, s |"
              " same jail | allowance after, MiB |")
        print("|---|---|---|---|---|")
        for r in range(a.rounds):
            quiet, before = timed(d, t.job, ONE_LINE)
            t.job(d, t.NEGATIVE_DENTRIES, memory_kb=262144)
            after, then = timed(d, t.job, ONE_LINE)
            same = before["stdout"] == then["stdout"]
            print("| %d | %.3f | %.3f | %s | %d |" % (r + 1, quiet, after,
                                                     "yes" if same else "no", t.allowance(d)))
    finally:
        d.stop()


if __name__ == "__main__":
    main()
