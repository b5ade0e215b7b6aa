#!/usr/bin/env python3
"""goboxd builds side by side in one run: prints numbers, asserts nothing.

A change that should make goboxd cheaper is measured against the build
before it on the same machine, in the same minutes: the daemons run at
once (each with sandbox uids 1000 above the one before, its own jail dir
and store), and their phases alternate with a bare python3 loop in a
rotating order, so that a drift in the machine hits all alike. Only the
one being measured has clients at any moment. Each system is
LABEL=PATH, with options for that daemon alone after commas (e.g.
after-1jail=build/goboxd,--jails-per-worker=1), so that the parts of a
change can be told apart in the same run.

  hello   hello-world py3 one at a time on a keep-alive connection:
          p50 and p99 of each build and of bare python3;
  aplusb  C++ A+B, 50 tests, each build's service time per extra test
          ((median of a 50-test request minus median of a 1-test one,
          builds left out) / 49), and a bare exec of the same binary from
          this script, interleaved as hello is;
  load    hello world back to back for --seconds a level at N = workers
          and 4 x workers clients (one keep-alive connection each), in
          slices of a third of --seconds: runs a second of each build and
          of the bare loop, and each build's ratio to bare.

At the top, as vs_isolate.py prints it: the kernel, the CPUs, and
whether a v1 cgroup migration after 100 ms idle waits for an RCU grace
period on this boot.

  tests/load/before_after.py LABEL=GOBOXD[,OPTION...] LABEL=GOBOXD... [--jail bwrap|nsjail]
      [--seconds 15] [--count 200] [--rounds 12] [--skip hello,aplusb,load]
      [--daemon-arg=--workers=2 ...]
"""
import argparse
import http.client
import os
import shutil
import statistics
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import engine  # noqa: E402  (the daemon, percentiles, the closed loop)
import vs_isolate  # noqa: E402  (the bare loop, the cgroup phase)
from engine import pct  # noqa: E402


def start(binary, jail, tmp, name, extra):
    d_tmp = os.path.join(tmp, name)
    os.makedirs(d_tmp)
    os.chmod(d_tmp, 0o711)
    d = engine.Daemon(os.path.abspath(binary), jail, d_tmp, extra)
    d.name = name
    return d


def stop_all(daemons, tmp):
    for d in daemons:
        d.stop()
    shutil.rmtree(tmp, ignore_errors=True)


def describe(d, own):
    b = d.info["build_info"]
    return "%s: goboxd %s (%s), workers %s, max concurrency %s%s" % (
        d.name, b["version"], b.get("commit", "?"), d.info["limits"]["workers"],
        d.info["limits"]["max_concurrent_jobs"], (", " + " ".join(own)) if own else "")


def hello_once(d, conn):
    return engine.timed_accepted(d, vs_isolate.HELLO_BODY, conn, "hello")[0]


def bare_once(src, cwd):
    t = time.perf_counter()
    vs_isolate.run_ok([vs_isolate.PY3, src], b"", b"hello\n", cwd)
    return (time.perf_counter() - t) * 1000


def phase_hello(daemons, src, tmp, count, rounds=10):
    print("hello: py3 one at a time, %d runs each in %d interleaved rounds" % (count, rounds))
    lat = {"bare": []}
    conns = {d.name: http.client.HTTPConnection("127.0.0.1", d.port, timeout=120)
             for d in daemons}
    for d in daemons:
        lat[d.name] = []
        for _ in range(5):
            hello_once(d, conns[d.name])
    systems = ["bare"] + [d.name for d in daemons]
    by_name = {d.name: d for d in daemons}
    for r in range(rounds):
        for name in vs_isolate.rotated(systems, r):
            for _ in range(count // rounds):
                if name == "bare":
                    lat[name].append(bare_once(src, tmp))
                else:
                    lat[name].append(hello_once(by_name[name], conns[name]))
    for c in conns.values():
        c.close()
    print("| | p50 ms | p99 ms | p50 / bare | p99 / bare |")
    print("|---|---|---|---|---|")
    for name in systems:
        print("| %s | %.1f | %.1f | %.2f | %.2f |" % (
            name, pct(lat[name], 50), pct(lat[name], 99),
            pct(lat[name], 50) / pct(lat["bare"], 50), pct(lat[name], 99) / pct(lat["bare"], 99)))
    sys.stdout.flush()


def phase_aplusb(daemons, tmp, rounds):
    binary = vs_isolate.aplusb_binary(tmp)
    body50, body1 = vs_isolate.aplusb_bodies()
    conns = {d.name: http.client.HTTPConnection("127.0.0.1", d.port, timeout=120)
             for d in daemons}
    served = {d.name: ([], []) for d in daemons}
    bare = []

    def goboxd(d, keep):
        for body, out in zip((body50, body1), served[d.name]):
            ms, res = engine.timed_accepted(d, body, conns[d.name], "A+B")
            if keep:
                out.append(ms - engine.build_ms(res))

    steps = [lambda keep: vs_isolate.aplusb_tests([binary], bare, keep, "bare", tmp)]
    steps += [lambda keep, d=d: goboxd(d, keep) for d in daemons]
    for r in range(rounds + 1):
        for step in vs_isolate.rotated(steps, r):
            step(r > 0)  # the first round warms up (and builds)
    for c in conns.values():
        c.close()
    b = statistics.median(bare)
    print("aplusb: C++ A+B, 50 tests, %d interleaved rounds (a 50-test and a 1-test request"
          " a round, builds left out); a bare exec from this script: %.2f ms" % (rounds, b))
    print("| | per extra test ms | minus a bare exec |")
    print("|---|---|---|")
    for d in daemons:
        s50, s1 = served[d.name]
        extra = (statistics.median(s50) - statistics.median(s1)) / 49
        print("| %s | %.3f | %.3f |" % (d.name, extra, extra - b))
    sys.stdout.flush()


def phase_load(daemons, src, tmp, seconds, slices=3):
    workers = daemons[0].info["limits"]["workers"]
    print("load: hello-world py3 back to back, %d s a system and level in %d interleaved slices"
          % (seconds, slices))
    names = [d.name for d in daemons]
    print("| clients | bare runs/s | %s | %s |" % (
        " | ".join("%s req/s" % n for n in names), " | ".join("%s / bare" % n for n in names)))
    print("|---|---|%s%s" % ("---|" * len(names), "---|" * len(names)))
    for c in (workers, 4 * workers):
        done = {k: [0, 0.0] for k in ["bare"] + names}
        loops = [("bare", lambda st: vs_isolate.run_ok([vs_isolate.PY3, src], b"", b"hello\n",
                                                       tmp))]
        loops += [(d.name, engine.keepalive_poster(d, vs_isolate.HELLO_BODY)) for d in daemons]
        for s in range(slices):
            for name, one in vs_isolate.rotated(loops, s):
                lat, _err, sec = engine.closed_loop(c, seconds / slices, vs_isolate.counted(one))
                done[name][0] += len(lat)
                done[name][1] += sec
        rate = {k: v[0] / v[1] for k, v in done.items()}
        print("| %d | %.1f | %s | %s |" % (
            c, rate["bare"], " | ".join("%.1f" % rate[n] for n in names),
            " | ".join("%.2f" % (rate[n] / rate["bare"]) for n in names)))
        sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("systems", nargs="+", metavar="LABEL=GOBOXD[,OPTION...]")
    ap.add_argument("--jail", default="bwrap", choices=["bwrap", "nsjail"])
    ap.add_argument("--seconds", type=int, default=15)
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=12, help="aplusb's interleaved rounds")
    ap.add_argument("--skip", default="", help="phases to leave out: hello,aplusb,load")
    ap.add_argument("--daemon-arg", action="append", default=[],
                    help="one more option for both daemons (repeatable)")
    a = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("needs root (the daemon makes cgroups and drops to sandbox uids)")
    print("kernel %s, %s CPUs, load average %s" % (os.uname().release, os.cpu_count(),
                                                     vs_isolate.loadavg()))
    vs_isolate.phase_cgroups()
    tmp = tempfile.mkdtemp(prefix="goboxd-before-after-")
    os.chmod(tmp, 0o711)
    src = os.path.join(tmp, "solution.py")
    with open(src, "w") as f:
        f.write(engine.HELLO)
    daemons = []
    try:
        for i, system in enumerate(a.systems):
            label, _, rest = system.partition("=")
            binary, *own = rest.split(",")
            if not label or not binary:
                raise SystemExit("a system is LABEL=GOBOXD[,OPTION...]: %r" % system)
            daemons.append(start(binary, a.jail, tmp, label, a.daemon_arg + own +
                                 ["--sandbox-uid-base", str(60000 + 1000 * i)]))
        for d, system in zip(daemons, a.systems):
            print(describe(d, system.split(",")[1:]))
        print("jail %s" % a.jail)
        sys.stdout.flush()
        skip = set(filter(None, a.skip.split(",")))
        if "hello" not in skip:
            phase_hello(daemons, src, tmp, a.count)
        if "aplusb" not in skip:
            phase_aplusb(daemons, tmp, a.rounds)
        if "load" not in skip:
            phase_load(daemons, src, tmp, a.seconds)
        print("load average %s" % vs_isolate.loadavg())
    finally:
        stop_all(daemons, tmp)


if __name__ == "__main__":
    main()
