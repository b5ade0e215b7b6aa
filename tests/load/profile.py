#!/usr/bin/env python3
"""Where the CPU of a request goes at saturation: prints numbers, asserts nothing.

Starts a real goboxd on 127.0.0.1 (py3 and cpp only), keeps it saturated
with N clients (one keep-alive connection each, requests back to back)
for --seconds, and meanwhile samples every CPU of the machine with
`perf record -a -g` (perf must be installed; nothing else may run). Each
sample is then put in one part, by the task it hit:

  program   the programs the jails run (every task not named below)
  jail      the jail's own processes: goboxd-init (and its child before
            the exec), bwrap or nsjail
  goboxd    the master, the workers (loop, job thread, reset thread), the
            disk keeper, the sweeper
  kernel    kernel threads working for all of it: kworkers (a network
            namespace's teardown, freeing after a grace period), RCU,
            softirqs
  client    this script (the HTTP clients)
  idle      no task: a CPU had nothing to run

and, across parts, the kernel work a request causes, by call chain
(perf's children: a sample counts for every function on its stack):
a network namespace made (copy_net_ns) and torn down (cleanup_net), a
cgroup's memory reclaimed (try_to_free_mem_cgroup_pages), exec, exit.

Each figure is CPU milliseconds a request: the part's share of all
samples, times the CPUs and the seconds, over the requests answered.

  tests/load/profile.py path/to/goboxd [--jail bwrap|nsjail] [--clients 2,8]
      [--work hello,aplusb] [--seconds 10] [--daemon-arg=--workers=2 ...]

hello is py3 hello world; aplusb is C++ A+B with 50 tests (its build is
cached after the first request: the tests are what runs).
"""
import argparse
import collections
import os
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import engine  # noqa: E402  (the daemon, the closed loop)
import vs_isolate  # noqa: E402  (the bodies, the cgroup phase)

JAIL = {".goboxd-init", "goboxd-init", "bwrap", "nsjail"}
GOBOXD_PREFIX = ("goboxd", "worker-")
KERNEL_PREFIX = ("kworker", "rcu", "ksoftirqd", "kdamond", "migration", "kcompactd",
                 "khugepaged", "kswapd", "cpuhp", "idle_inject", "watchdog")
CALLS = [("network namespace made", "copy_net_ns"),
         ("network namespace torn down", "cleanup_net"),
         ("cgroup memory reclaimed", "try_to_free_mem_cgroup_pages"),
         ("exec", "do_execveat_common"),
         ("exit", "do_exit")]


def part_of(comm, pid, client):
    if pid == client:
        return "client"
    if comm == "swapper" or pid == 0:
        return "idle"
    if comm in JAIL:
        return "jail"
    if comm.startswith(GOBOXD_PREFIX):
        return "goboxd"
    if comm.startswith(KERNEL_PREFIX):
        return "kernel"
    return "program"


def parts(data, client):
    out = subprocess.run(["perf", "script", "-i", data, "-F", "comm,pid"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout
    count = collections.Counter()
    for line in out.splitlines():
        f = line.rsplit(None, 1)
        if len(f) != 2 or not f[1].isdigit():
            continue
        count[part_of(f[0].strip(), int(f[1]), client)] += 1
    return count


def calls(data):
    out = subprocess.run(["perf", "report", "-i", data, "--children", "--sort", "sym",
                          "-g", "none", "-q", "--stdio"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout
    share = collections.Counter()
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 4 and f[0].endswith("%"):
            # a compiler's clone of a function (do_execveat_common.isra.0) is the function
            share[f[-1].split(".")[0]] += float(f[0].rstrip("%"))
    return {label: share[sym] for label, sym in CALLS}


def bodies():
    b50, _ = vs_isolate.aplusb_bodies()
    return {"hello": vs_isolate.HELLO_BODY, "aplusb": b50}


def measure(d, tmp, work, clients, seconds):
    body = bodies()[work]
    one = engine.keepalive_poster(d, body)
    engine.closed_loop(clients, 2, vs_isolate.counted(one))  # warm: builds cached
    data = os.path.join(tmp, "perf-%s-%d.data" % (work, clients))
    perf = subprocess.Popen(["perf", "record", "-a", "-g", "-o", data, "--", "sleep",
                             str(seconds)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    lat, err, sec = engine.closed_loop(clients, seconds, vs_isolate.counted(one))
    if perf.wait() != 0:
        raise SystemExit("perf record failed")
    count = parts(data, os.getpid())
    total = sum(count.values())
    cpu_ms = os.cpu_count() * seconds * 1000.0
    per = {k: count[k] / total * cpu_ms / max(len(lat), 1) for k in
           ("program", "jail", "goboxd", "kernel", "client", "idle")}
    kcalls = {k: v / 100.0 * cpu_ms / max(len(lat), 1) for k, v in calls(data).items()}
    os.unlink(data)
    return len(lat) / sec, err, per, kcalls


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("goboxd")
    ap.add_argument("--jail", default="bwrap", choices=["bwrap", "nsjail"])
    ap.add_argument("--clients", default="2,8")
    ap.add_argument("--work", default="hello,aplusb")
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--daemon-arg", action="append", default=[])
    a = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("needs root (the daemon makes cgroups; perf samples every CPU)")
    if not shutil.which("perf"):
        raise SystemExit("perf is not installed")
    print("kernel %s, %s CPUs, load average %s" % (os.uname().release, os.cpu_count(),
                                                     vs_isolate.loadavg()))
    vs_isolate.phase_cgroups()
    tmp = tempfile.mkdtemp(prefix="goboxd-profile-")
    os.chmod(tmp, 0o711)
    d = engine.Daemon(os.path.abspath(a.goboxd), a.jail, tmp, a.daemon_arg)
    try:
        b = d.info["build_info"]
        print("goboxd %s (%s), jail %s, workers %s%s" % (
            b["version"], b.get("commit", "?"), a.jail, d.info["limits"]["workers"],
            (", options " + " ".join(a.daemon_arg)) if a.daemon_arg else ""))
        print("CPU ms a request, by part (perf record -a -g over %d s):" % a.seconds)
        print("| work | clients | req/s | program | jail | goboxd | kernel threads | client |"
              " idle | %s |" % " | ".join(label for label, _ in CALLS))
        print("|---|---|---|---|---|---|---|---|---|%s" % ("---|" * len(CALLS)))
        sys.stdout.flush()
        for work in a.work.split(","):
            for clients in (int(c) for c in a.clients.split(",")):
                rate, err, per, kc = measure(d, tmp, work, clients, a.seconds)
                print("| %s | %d | %.1f | %s | %s |%s" % (
                    work, clients, rate,
                    " | ".join("%.2f" % per[k] for k in
                               ("program", "jail", "goboxd", "kernel", "client", "idle")),
                    " | ".join("%.2f" % kc[label] for label, _ in CALLS),
                    " (%d errors)" % err if err else ""))
                sys.stdout.flush()
        print("load average %s" % vs_isolate.loadavg())
    finally:
        d.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
