#!/usr/bin/env python3
"""goboxd's own CPU a request at saturation, by process: prints numbers, asserts nothing.

Starts each build (LABEL=PATH) on 127.0.0.1, side by side, and keeps one
at a time saturated with N clients (py3 hello world, one keep-alive
connection each, requests back to back), in slices that rotate between
the builds. Around each slice it reads the CPU time the kernel has
given every task (/proc/PID/task/TID/schedstat, in ns) and puts what a
task used in one part:

  worker loops     each worker's main thread: HTTP, parsing, answers
  worker threads   each worker's other threads: the job thread (the
                   jail's messages, the pipes, the cgroup's figures) and
                   the reset thread (the last job's jail made ready)
  jail inits       goboxd-init's own processes (their children before
                   the exec are the programs': not counted)
  disk keepers     the job disks made and removed
  master           the master
  kernel threads   kworkers, RCU's threads, softirqs: shared with
                   whatever else runs on the machine
  client           this script (the HTTP clients), from getrusage

Each is CPU milliseconds a request over the requests the build answered
in its slices. A task born during a slice counts whole, one that ended
during it not at all (a jail replaced after --jobs-per-jail: the new
one's init counts, the old one's does not). "machine busy" is every
CPU's busy time (/proc/stat) a request, the programs included, which no
part counts. Nothing else may run.

  tests/load/cpu_split.py LABEL=GOBOXD [LABEL=GOBOXD...] [--jail bwrap|nsjail]
      [--clients 8] [--seconds 15] [--rounds 2] [--daemon-arg=--workers=2 ...]
"""
import argparse
import os
import resource
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import before_after  # noqa: E402  (the daemons side by side)
import engine  # noqa: E402  (the closed loop)
import vs_isolate  # noqa: E402  (the hello body, the rotation)

PARTS = ["worker loops", "worker threads", "jail inits", "disk keepers", "master",
         "kernel threads", "client"]
KERNEL_PREFIX = ("kworker", "rcu", "ksoftirqd")
USER_HZ = os.sysconf("SC_CLK_TCK")


def tasks():
    """{(pid, tid): (comm, ppid, cpu ns)} for every task there is now."""
    out = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/%s/stat" % pid) as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            for tid in os.listdir("/proc/%s/task" % pid):
                base = "/proc/%s/task/%s/" % (pid, tid)
                with open(base + "comm") as f:
                    comm = f.read().strip()
                with open(base + "schedstat") as f:
                    ns = int(f.read().split()[0])
                out[(int(pid), int(tid))] = (comm, ppid, ns)
        except (OSError, ValueError, IndexError):
            pass  # gone while we looked
    return out


def descendants(snap, root):
    """The pids under root (root included), by the parent each names."""
    children = {}
    for (pid, tid), (_, ppid, _) in snap.items():
        if pid == tid:
            children.setdefault(ppid, []).append(pid)
    found, todo = set(), [root]
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.add(pid)
            todo.extend(children.get(pid, []))
    return found


def part_of(key, comm, ppid, daemon_pids):
    pid, tid = key
    if pid == os.getpid():
        return "client"
    if ppid == 2 and comm.startswith(KERNEL_PREFIX):
        return "kernel threads"
    if pid not in daemon_pids:
        return None
    if comm.startswith("worker-"):
        return "worker loops" if pid == tid else "worker threads"
    if comm.endswith("goboxd-init"):
        return "jail inits"
    return {"goboxd-disks": "disk keepers", "goboxd-master": "master"}.get(comm)


def busy_ticks():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return sum(v) - v[3] - v[4]  # less idle and iowait


def own_cpu_ns():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return (r.ru_utime + r.ru_stime) * 1e9


def one_slice(d, clients, seconds, parts):
    before, ticks, own = tasks(), busy_ticks(), own_cpu_ns()
    lat, _, _ = engine.closed_loop(clients, seconds,
                                   engine.keepalive_poster(d, vs_isolate.HELLO_BODY))
    after = tasks()
    parts["client"] += own_cpu_ns() - own
    parts["machine busy"] += (busy_ticks() - ticks) * 1e9 / USER_HZ
    daemon_pids = descendants(after, d.proc.pid) | descendants(before, d.proc.pid)
    for key, (comm, ppid, ns) in after.items():
        part = part_of(key, comm, ppid, daemon_pids)
        if part and part != "client":
            parts[part] += ns - before[key][2] if key in before else ns
    return len(lat)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("builds", nargs="+", metavar="LABEL=GOBOXD")
    ap.add_argument("--jail", default="bwrap", choices=["bwrap", "nsjail"])
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=15)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--daemon-arg", action="append", default=[])
    args = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("needs root (the daemon makes cgroups and drops to sandbox uids)")
    extra = args.daemon_arg or ["--workers=2"]
    tmp = tempfile.mkdtemp(prefix="goboxd-cpu-split-")
    os.chmod(tmp, 0o711)
    daemons = []
    try:
        for i, spec in enumerate(args.builds):
            name, _, path = spec.partition("=")
            if not name or not path:
                raise SystemExit("a build is LABEL=GOBOXD: %r" % spec)
            # each its own sandbox uids, as before_after.py's
            daemons.append(before_after.start(path, args.jail, tmp, name, extra + [
                "--sandbox-uid-base", str(60000 + 1000 * i)]))
            print(before_after.describe(daemons[-1], []))
        print("jail %s, %d clients, %d rounds of %g s a build" % (
            args.jail, args.clients, args.rounds, args.seconds))
        parts = {d.name: dict.fromkeys(PARTS + ["machine busy"], 0) for d in daemons}
        served = dict.fromkeys(parts, 0)
        for r in range(args.rounds):
            for d in vs_isolate.rotated(daemons, r):
                served[d.name] += one_slice(d, args.clients, args.seconds, parts[d.name])
        print("| CPU ms a request | " + " | ".join(d.name for d in daemons) + " |")
        print("|---|" + "---|" * len(daemons))
        for part in PARTS + ["machine busy"]:
            print("| %s | %s |" % (part, " | ".join(
                "%.3f" % (parts[d.name][part] / 1e6 / max(served[d.name], 1)) for d in daemons)))
        print("| goboxd's own (the first five) | %s |" % " | ".join(
            "%.3f" % (sum(parts[d.name][p] for p in PARTS[:5]) / 1e6 / max(served[d.name], 1))
            for d in daemons))
        print("| requests/s | %s |" % " | ".join(
            "%.1f" % (served[d.name] / (args.rounds * args.seconds)) for d in daemons))
    finally:
        before_after.stop_all(daemons, tmp)


if __name__ == "__main__":
    main()
