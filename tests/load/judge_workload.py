#!/usr/bin/env python3
"""Judge workload benchmark: prints numbers, asserts nothing.

Replays what a contest judge sends, the same list of submissions against
a fresh goboxd per mode, and prints the time with and without the build
cache (and, with --stop-on-failure, with early stop as well):

  submissions  --submissions (200) over five languages (C++ 35 %, Python
               25 %, C 15 %, Rust 15 %, Java 10 %), each an A+B solution
               with a comment of its own (contestants do not share
               sources; the C++ one includes <bits/stdc++.h>, as most
               do), --tests (50) tests each;
  resubmits    --resubmit (30 %) of them are an earlier submission sent
               again unchanged (the same source, language and tests: a
               resubmission, a rejudge);
  failing      --failing (a third) of the new ones are wrong from their
               second test on (every later test fails too): wrong_output;
               the rest are accepted.

Modes, each a daemon of its own with a cold cache, --workers workers and
as many closed-loop clients sending the list in order (--rounds times,
the modes taking turns, so that a machine shared with other work loads
each about alike):

  no-cache     --build-cache-mb 0: every submission builds;
  cache        the default cache: a resubmission's build is a hit;
  cache+stop   (--stop-on-failure) the cache and "stop_on_failure": true,
               so a failing submission's tests after its first failure
               are not run. A daemon that refuses the field (400) gets
               the mode reported as refused.

  tests/load/judge_workload.py path/to/goboxd [--jail bwrap|nsjail]
      [--submissions 200] [--tests 50] [--resubmit 0.3] [--failing 0.333]
      [--workers 2] [--seed 1] [--rounds 1] [--stop-on-failure] [--max-seconds 900]
      [--daemon-arg=--pin-cpus ...]

Every answer is checked against the submission's expected status (and a
cache hit against the build cache's own counters); anything else counts
as an error. Bounded: a fixed list, and a mode stops sending after
--max-seconds. 127.0.0.1 only.
"""
import argparse
import http.client
import json
import os
import random
import re
import shutil
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from engine import Daemon, pct  # noqa: E402

# The solutions: A+B, plus one from the K-th test on (K huge: never).
SOURCES = {
    # as contestants write C++: the whole library in one include
    "cpp": ("// %(token)s\n#include <bits/stdc++.h>\nint main(){long a,b;"
            "if(scanf(\"%%ld %%ld\",&a,&b)!=2)return 1;"
            "printf(\"%%ld\\n\",a+b+(a>=%(k)d));}\n"),
    "c": ("/* %(token)s */\n#include <stdio.h>\nint main(void){long a,b;"
          "if(scanf(\"%%ld %%ld\",&a,&b)!=2)return 1;"
          "printf(\"%%ld\\n\",a+b+(a>=%(k)d));return 0;}\n"),
    "py3": "# %(token)s\na, b = map(int, input().split())\nprint(a + b + (a >= %(k)d))\n",
    "rust": ("// %(token)s\nuse std::io::Read;\nfn main(){let mut s=String::new();"
             "std::io::stdin().read_to_string(&mut s).unwrap();"
             "let v:Vec<i64>=s.split_whitespace().map(|x|x.parse().unwrap()).collect();"
             "println!(\"{}\",v[0]+v[1]+if v[0]>=%(k)d {1} else {0});}\n"),
    "java": ("// %(token)s\nimport java.io.*;\npublic class Main{public static void "
             "main(String[] x)throws IOException{String[] t=new BufferedReader("
             "new InputStreamReader(System.in)).readLine().trim().split(\" +\");"
             "long a=Long.parseLong(t[0]),b=Long.parseLong(t[1]);"
             "System.out.println(a+b+(a>=%(k)d?1:0));}}\n"),
}
MIX = [("cpp", 35), ("py3", 25), ("c", 15), ("rust", 15), ("java", 10)]
NEVER = 1 << 30


def tests(n):
    # test i has a = i + 1: a solution wrong from a >= 2 fails test 2 on
    return [{"stdin": "%d %d\n" % (i + 1, 7 * i), "expected_stdout": "%d\n" % (8 * i + 1)}
            for i in range(n)]


def workload(a):
    """The list of submissions: (request, expected status, kind)."""
    rnd = random.Random(a.seed)
    langs = [l for l, w in MIX for _ in range(w)]
    t = tests(a.tests)
    subs, fresh = [], []
    for i in range(a.submissions):
        if fresh and rnd.random() < a.resubmit:
            req, want, _ = rnd.choice(fresh)
            subs.append((req, want, "resubmit"))
            continue
        lang = rnd.choice(langs)
        failing = rnd.random() < a.failing
        src = SOURCES[lang] % {"token": "submission %d seed %d" % (i, a.seed),
                               "k": 2 if failing else NEVER}
        sub = ({"language": lang, "source": src, "tests": t},
               "wrong_output" if failing else "accepted", "new")
        fresh.append(sub)
        subs.append(sub)
    return subs


def metrics(d):
    conn = http.client.HTTPConnection("127.0.0.1", d.port, timeout=30)
    conn.request("GET", "/metrics")
    text = conn.getresponse().read().decode()
    conn.close()
    return {m.group(1): int(m.group(2)) for m in
            re.finditer(r"^goboxd_build_cache_(\w+) (\d+)$", text, re.M)}


def replay(d, subs, clients, stop_on_failure, max_seconds):
    """Send subs in order from clients closed-loop clients; per submission
    (kind, language, ms, build cached, tests run), errors, wall seconds."""
    results, errors, refused = [], [], []
    lock = threading.Lock()
    nxt = [0]
    deadline = time.time() + max_seconds

    def client():
        conn = http.client.HTTPConnection("127.0.0.1", d.port, timeout=300)
        while time.time() < deadline and not refused:
            with lock:
                i = nxt[0]
                nxt[0] += 1
            if i >= len(subs):
                break
            req, want, kind = subs[i]
            if stop_on_failure:
                req = dict(req, stop_on_failure=True)
            t = time.perf_counter()
            try:
                st, res = d.request("POST", "/run", req, conn)
            except (OSError, http.client.HTTPException, ValueError) as e:
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", d.port, timeout=300)
                with lock:
                    errors.append("submission %d: %r" % (i, e))
                continue
            ms = (time.perf_counter() - t) * 1000
            with lock:
                if st == 400 and stop_on_failure:
                    refused.append(json.dumps(res)[:300])
                elif st != 200 or res.get("status") != want:
                    errors.append("submission %d: %d %s" % (i, st, json.dumps(res)[:300]))
                else:
                    ran = sum(1 for x in res["tests"] if x.get("status") not in
                              ("skipped", "not_executed"))
                    b = res["build"]
                    results.append((kind, req["language"], ms, bool(b.get("cached")), ran,
                                    b.get("duration_ms", 0), not b.get("skipped")))
        conn.close()

    threads = [threading.Thread(target=client) for _ in range(clients)]
    t0 = time.time()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results, errors, refused, time.time() - t0


def report(name, results, errors, wall, m):
    lat = [r[2] for r in results]
    hits = sum(1 for r in results if r[3])
    print("\n%s: %d submissions in %.1f s (%.2f a second), %d errors" % (
        name, len(results), wall, len(results) / wall if wall else 0, len(errors)))
    for e in errors[:5]:
        print("  error: " + e)
    print("  per submission: mean %.0f ms, p50 %.0f, p95 %.0f, max %.0f" % (
        sum(lat) / max(1, len(lat)), pct(lat, 50), pct(lat, 95), max(lat or [0])))
    for kind in ("new", "resubmit"):
        k = [r[2] for r in results if r[0] == kind]
        if k:
            print("  %-9s %3d: mean %.0f ms, p50 %.0f, p95 %.0f" % (
                kind, len(k), sum(k) / len(k), pct(k, 50), pct(k, 95)))
    for lang, _ in MIX:
        k = [r for r in results if r[1] == lang]
        if k:
            print("  %-5s %3d: mean %5.0f ms, builds run %3d, taken from the cache %3d, "
                  "tests run %d" % (lang, len(k), sum(r[2] for r in k) / len(k),
                                    sum(1 for r in k if r[6] and not r[3]),
                                    sum(1 for r in k if r[3]),
                                    sum(r[4] for r in k)))
    print("  builds: %.1f s spent building, %.1f s not spent (the hits' recorded builds); "
          "tests run %d" % (sum(r[5] for r in results if r[6] and not r[3]) / 1000.0,
                            sum(r[5] for r in results if r[3]) / 1000.0,
                            sum(r[4] for r in results)))
    print("  build cache: hits %d (answers say %d), misses %d, evictions %d, bytes %d" % (
        m.get("hits_total", 0), hits, m.get("misses_total", 0), m.get("evictions_total", 0),
        m.get("bytes", 0)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("goboxd")
    ap.add_argument("--jail", default="bwrap", choices=["bwrap", "nsjail"])
    ap.add_argument("--submissions", type=int, default=200)
    ap.add_argument("--tests", type=int, default=50)
    ap.add_argument("--resubmit", type=float, default=0.3)
    ap.add_argument("--failing", type=float, default=1 / 3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=1, help="each mode this many times")
    ap.add_argument("--stop-on-failure", action="store_true",
                    help='also a mode that sends "stop_on_failure": true')
    ap.add_argument("--max-seconds", type=int, default=900, help="per mode")
    ap.add_argument("--daemon-arg", action="append", default=[],
                    help="one more goboxd option (repeatable)")
    a = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("needs root (the daemon makes cgroups and drops to sandbox uids)")
    subs = workload(a)
    print("%d submissions (%d resubmitted, %d expected to fail), %d tests each, "
          "%d workers and clients, %s CPUs" % (
              len(subs), sum(1 for s in subs if s[2] == "resubmit"),
              sum(1 for s in subs if s[1] != "accepted"), a.tests, a.workers, os.cpu_count()))
    modes = [("no-cache", ["--build-cache-mb", "0"], False), ("cache", [], False)]
    if a.stop_on_failure:
        modes.append(("cache+stop", [], True))
    walls = {}
    for rnd, (name, extra, stop) in [(r, m) for r in range(a.rounds) for m in modes]:
        if a.rounds > 1:
            name = "%s #%d" % (name, rnd + 1)
        tmp = tempfile.mkdtemp(prefix="goboxd-judge-")
        os.chmod(tmp, 0o711)
        d = Daemon(os.path.abspath(a.goboxd), a.jail, tmp,
                   ["--workers", str(a.workers), "--metrics"] + extra + a.daemon_arg,
                   languages=[l for l, _ in MIX])
        try:
            results, errors, refused, wall = replay(d, subs, a.workers, stop, a.max_seconds)
            if refused:
                print("\n%s: the daemon refused stop_on_failure: %s" % (name, refused[0]))
                continue
            report(name, results, errors, wall, metrics(d))
            if len(results) == len(subs):
                walls[name] = wall
        finally:
            d.stop()
            shutil.rmtree(tmp, ignore_errors=True)
    print()
    for name, wall in walls.items():
        base = walls.get("no-cache" if name.startswith("cache") else name)
        print("%-15s total %6.1f s%s" % (
            name, wall, ", %.2fx the time without the cache" % (wall / base) if base else ""))


if __name__ == "__main__":
    main()
