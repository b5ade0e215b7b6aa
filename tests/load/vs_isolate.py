#!/usr/bin/env python3
"""goboxd against isolate on the same host: prints numbers, asserts nothing.

Starts a real goboxd on 127.0.0.1 (py3 and cpp only, as engine.py does)
and, when `isolate` is on PATH, runs the same programs under isolate
(https://github.com/ioi/isolate, installed and configured beforehand: this
script builds nothing). isolate runs without --cg: its control-group mode
needs cgroup v2, and without it isolate sets rlimits only (-m is then an
address-space limit), where goboxd puts every program in cgroups (memory,
pids, cpuacct on v1). Its options are a judge's: -s, -M (a meta file),
time, wall-time, memory and process limits like goboxd's defaults for the
language. Without isolate, goboxd's numbers and the bare ones are printed
alone.

Every phase is interleaved: rounds alternate bare runs, isolate and goboxd
(in a rotating order) so that a drift in the machine, which other work may
share, hits them all alike. In order:

  cgroups    the host's state, which decides what goboxd's jails cost on
             cgroup v1: the time of one migration after 100 ms idle (a
             freshly forked sleeping child's pid written into the
             cgroup.procs of a scratch cgroup under the v1 memory
             hierarchy, goboxd-bench-<pid>/a, removed after; median of a
             few), the same move again at once (b), and whether any cgroup
             hierarchy is mounted with favordynmods (from mountinfo; this
             script never mounts anything);
  hello      hello-world Python 3 one at a time: p50 and p99 of bare
             python3, isolate --run in a box set up once, isolate --init,
             a source write, --run and --cleanup (a whole submission), and
             goboxd POST /run on a keep-alive connection, each as a ratio
             to bare; and per run its CPU time and off-CPU time (below);
  aplusb     C++ A+B, 50 tests: goboxd's service time per extra test,
             (median of a 50-test request less its build, minus median of
             a 1-test request less its build) / 49, and isolate's --run of
             one test in a box set up once, each minus a bare exec of the
             same binary from this script;
  load       saturation for --seconds a system at N = workers and 4 x
             workers clients, hello world back to back: bare python3,
             isolate's --run loop with one box per client, its
             whole-submission loop (one box per client), goboxd (one
             keep-alive connection per client), in slices of a third of
             --seconds that alternate; meanwhile one more client asks
             goboxd's /healthz on a new connection every 50 ms, and the
             p99 of its TCP connect alone is printed too: the kernel
             completes that before goboxd's loop sees the connection.

Off-CPU time of a one-test request is its wall time minus the CPU time of
every process it used, summed over all runs of a system in the hello phase
and divided by their count:
  - bare and isolate: this script's reaped children (getrusage
    RUSAGE_CHILDREN before and after a batch): python3, or every isolate
    process and the program, which isolate reaps itself, so their CPU adds
    up into what this script reaps;
  - goboxd: the master's and the workers' own CPU, in nanoseconds: the
    sum of /proc/PID/task/*/schedstat's run time over their threads
    (/proc/PID/stat has it for exited threads too, but in 10 ms clock
    ticks, up to 0.3 ms a request over a 200-request phase; a thread that
    ends within a batch would be missed, so the script says so when a
    thread it saw is gone, and hello starts no short-lived thread), plus
    the cpuacct usage of each worker's cgroup subtree (goboxd/<master
    pid>-w<i>: cpuacct.usage on v1, cpu.stat usage_usec on v2). The kernel
    charges that usage to every ancestor as it is used, so the subtree
    keeps the CPU of step and jail cgroups already removed: the jail
    binary, goboxd-init, the program. Children's cutime is not used: it
    would count the jail binaries twice (once in the cgroup, once when
    reaped) and miss a jail still alive at the end of a batch. Each
    snapshot is taken after a 0.3 s pause, so that the spent jail's
    teardown and the next warm jail's start-up (one of each per request)
    fall inside the batch that caused them.
  Not counted on either side: this script (the client), the short moment
  of the worker's forked child before it joins the jail's cgroup, and
  kernel threads working on the request's behalf (RCU callbacks, cgroup
  destruction in kworkers). goboxd starts the next job's jail while a job
  runs, so its CPU can overlap the request's wall on another CPU: off-CPU
  time is then understated, never overstated. On a machine shared with
  other work, off-CPU time includes waiting for a CPU.

  tests/load/vs_isolate.py path/to/goboxd [--jail bwrap|nsjail] [--seconds 15]
      [--count 200] [--requests 10] [--box-base 0]
      [--skip cgroups,hello,aplusb,load] [--daemon-arg=--pin-cpus ...]

Bounded: each phase runs a fixed count or a fixed time (a few minutes in
all with the defaults); goboxd listens on 127.0.0.1 only; isolate boxes
--box-base .. --box-base + 1 + 8 x workers are used and cleaned up.
"""
import argparse
import http.client
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import engine  # noqa: E402  (the daemon, percentiles, the closed loop)
from engine import APLUSB, HELLO, pct  # noqa: E402

ISO_PY = ["--time=9", "--wall-time=9", "--mem=262144", "--processes=64"]
ISO_CPP = ["--time=3", "--wall-time=3", "--mem=262144", "--processes=16"]
PY3 = "/usr/bin/python3"
HELLO_BODY = {"language": "py3", "source": HELLO,
              "tests": [{"stdin": "", "expected_stdout": "hello\n"}]}


def mountinfo():
    """(mount point, fs type, super options) of every mount."""
    out = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            pre, post = line.rstrip("\n").split(" - ", 1)
            fstype, _, sopts = post.split(" ", 2)
            out.append((pre.split(" ")[4], fstype, sopts.split(",")))
    return out


def move_pid(pid, cgroup):
    """ms to write pid into cgroup/cgroup.procs (the open left out)."""
    fd = os.open(os.path.join(cgroup, "cgroup.procs"), os.O_WRONLY)
    try:
        t = time.perf_counter()
        os.write(fd, b"%d" % pid)
        return (time.perf_counter() - t) * 1000
    finally:
        os.close(fd)


def rmdir_soon(path):
    for _ in range(50):  # a cgroup is busy until its last process is gone
        try:
            os.rmdir(path)
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.02)
    print("  could not remove %s" % path)


def phase_cgroups(samples=7):
    mounts = mountinfo()
    fav = [mp for mp, fs, so in mounts if fs in ("cgroup", "cgroup2") and "favordynmods" in so]
    v1 = [mp for mp, fs, _ in mounts if fs == "cgroup"]
    print("cgroups: %d v1 hierarchies%s; mounted with favordynmods: %s"
          % (len(v1), ", cgroup2 too" if any(fs == "cgroup2" for _, fs, _ in mounts) else "",
             ", ".join(fav) if fav else "none"))
    mem = next((mp for mp, fs, so in mounts if fs == "cgroup" and "memory" in so), None)
    if mem is None:
        print("  no v1 memory hierarchy: migration not measured")
        return
    top = os.path.join(mem, "goboxd-bench-%d" % os.getpid())
    a, b = os.path.join(top, "a"), os.path.join(top, "b")
    idle, hot = [], []
    os.mkdir(top)
    try:
        os.mkdir(a)
        os.mkdir(b)
        for _ in range(samples):
            child = subprocess.Popen(["sleep", "60"])
            try:
                time.sleep(0.1)
                idle.append(move_pid(child.pid, a))
                hot.append(move_pid(child.pid, b))
            finally:
                child.kill()
                child.wait()
    finally:
        for p in (a, b, top):
            rmdir_soon(p)
    print("  one v1 migration after 100 ms idle: median %.2f ms (min %.2f, max %.2f, %d moves);"
          " at once after it: median %.2f ms"
          % (statistics.median(idle), min(idle), max(idle), samples, statistics.median(hot)))


class Isolate:
    """isolate boxes: one set up once per use, or a whole submission."""

    def __init__(self, binary, tmp):
        self.bin = binary
        self.tmp = tmp
        self.used = set()

    def init(self, box):
        self.used.add(box)
        subprocess.run([self.bin, "-b", str(box), "--cleanup"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        r = subprocess.run([self.bin, "-b", str(box), "--init"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, check=True)
        return os.path.join(r.stdout.decode().strip(), "box")

    def argv(self, box, limits, prog):
        return [self.bin, "-b", str(box), "-s", "-M", os.path.join(self.tmp, "meta-%d" % box)] \
            + limits + ["--run", "--"] + prog

    def cleanup(self, box):
        return run_ok([self.bin, "-b", str(box), "--cleanup"], None, b"")

    def cleanup_all(self):
        for box in sorted(self.used):
            subprocess.run([self.bin, "-b", str(box), "--cleanup"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def put_file(box_dir, name, data, mode=0o644):
    path = os.path.join(box_dir, name)
    with open(path, "wb") as f:
        f.write(data)
    os.chmod(path, mode)


class RunFailed(Exception):
    pass


def run_ok(argv, stdin, want, cwd=None):
    """Runs argv; True when it exited 0 with want on stdout, else raises
    RunFailed saying what came back."""
    r = subprocess.run(argv, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd)
    if r.returncode != 0 or r.stdout != want:
        raise RunFailed("%s: exit %d, stdout %r, stderr %r"
                        % (" ".join(argv), r.returncode, r.stdout[:200], r.stderr[:500]))
    return True


def counted(one):
    """one() for a closed loop, where a failure is counted, not fatal."""
    def run(state):
        try:
            return one(state)
        except RunFailed:
            return False
    return run


def whole_submission(iso, box):
    """What a judge does with isolate for one submission: a fresh box, the
    source written into it, the run, the box removed."""
    box_dir = iso.init(box)
    put_file(box_dir, "solution.py", HELLO.encode())
    try:
        run_ok(iso.argv(box, ISO_PY, [PY3, "solution.py"]), b"", b"hello\n")
    finally:
        iso.cleanup(box)
    return True


def cgroup_usage_ns(path):
    try:
        with open(os.path.join(path, "cpuacct.usage")) as f:
            return int(f.read())
    except FileNotFoundError:
        with open(os.path.join(path, "cpu.stat")) as f:
            for line in f:
                k, v = line.split()
                if k == "usage_usec":
                    return int(v) * 1000
    raise RuntimeError("no CPU usage in %s" % path)


def threads_cpu_ns(pid):
    """{thread id: nanoseconds it has run} for each live thread of pid."""
    out = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
                out[int(tid)] = int(f.read().split()[0])
        except FileNotFoundError:
            pass
    return out


def proc_cgroup(pid, controller):
    """The pid's cgroup path in controller's v1 hierarchy, or its v2 path."""
    with open("/proc/%d/cgroup" % pid) as f:
        for line in f:
            _, ctrls, path = line.rstrip("\n").split(":", 2)
            if controller in ctrls.split(",") or (ctrls == "" and controller is None):
                return path
    return None


class DaemonCpu:
    """The CPU goboxd has used so far, in seconds, in three parts: the
    master's and the workers' own, and their cgroup subtrees' (jails,
    inits, programs). See the module's docstring for why this way."""

    def __init__(self, d):
        self.master = d.proc.pid
        self.workers = [w["pid"] for w in d.info["stats"]["workers"]]
        names = ["%d-w%d" % (self.master, i) for i in range(len(self.workers))]
        mounts = mountinfo()
        v1 = next((mp for mp, fs, so in mounts if fs == "cgroup" and "cpuacct" in so), None)
        v2 = next((mp for mp, fs, _ in mounts if fs == "cgroup2"), None)
        self.subtrees = []
        if v1 and os.path.isdir(os.path.join(v1, "goboxd", names[0])):
            self.mount, self.ctrl = v1, "cpuacct"
            self.subtrees = [os.path.join(v1, "goboxd", n) for n in names]
        elif v2:
            self.mount, self.ctrl = v2, None
            for root, dirs, _ in os.walk(v2):
                if names[0] in dirs:
                    self.subtrees = [os.path.join(root, n) for n in names]
                    break
                if root.count("/") - v2.count("/") >= 3:
                    dirs[:] = []
        if not self.subtrees:
            raise SystemExit("goboxd's worker cgroups (%s) not found" % names[0])
        # a process inside a subtree is counted by it already
        rel = ["/" + os.path.relpath(p, self.mount) for p in self.subtrees]
        self.own = [p for p in [self.master] + self.workers
                    if not any((proc_cgroup(p, self.ctrl) or "").startswith(r) for r in rel)]

    def snapshot(self):
        """({part: seconds}, {thread id: ns}) of goboxd so far."""
        time.sleep(0.3)  # the spent jail's teardown, the next one's start
        threads = {}
        parts = {"master": 0.0, "workers": 0.0}
        for pid in self.own:
            t = threads_cpu_ns(pid)
            threads.update(t)
            parts["master" if pid == self.master else "workers"] += sum(t.values()) / 1e9
        parts["cgroups"] = sum(cgroup_usage_ns(p) for p in self.subtrees) / 1e9
        return parts, threads


def children_cpu_s():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


class Tally:
    """One system's runs in a sequential phase: latencies, wall, CPU."""

    def __init__(self, label):
        self.label = label
        self.lat = []
        self.cpu = 0.0
        self.parts = {}
        self.reported_ms = 0.0
        self.lost_threads = 0


def batch_local(t, count, one):
    c0 = children_cpu_s()
    for _ in range(count):
        s = time.perf_counter()
        try:
            one()
        except RunFailed as e:
            raise SystemExit("%s failed: %s" % (t.label, e))
        t.lat.append((time.perf_counter() - s) * 1000)
    t.cpu += children_cpu_s() - c0


def batch_goboxd(t, count, d, dcpu, conn):
    s0, th0 = dcpu.snapshot()
    for _ in range(count):
        ms, res = engine.timed_accepted(d, HELLO_BODY, conn, "hello")
        t.lat.append(ms)
        t.reported_ms += res["tests"][0]["cpu_time_ms"]
    s1, th1 = dcpu.snapshot()
    t.lost_threads += len(set(th0) - set(th1))
    for k in s0:
        t.parts[k] = t.parts.get(k, 0.0) + s1[k] - s0[k]
        t.cpu += s1[k] - s0[k]


def rotated(items, r):
    r %= len(items)
    return items[r:] + items[:r]


def phase_hello(d, dcpu, iso, tmp, count, rounds, base):
    src = os.path.join(tmp, "solution.py")
    with open(src, "w") as f:
        f.write(HELLO)
    conn = http.client.HTTPConnection("127.0.0.1", d.port, timeout=120)
    runs = [("bare python3", lambda: run_ok([PY3, src], b"", b"hello\n", tmp))]
    if iso:
        once = base
        put_file(iso.init(once), "solution.py", HELLO.encode())
        runs.append(("isolate --run (box set up once)",
                     lambda: run_ok(iso.argv(once, ISO_PY, [PY3, "solution.py"]), b"", b"hello\n")))
        runs.append(("isolate --init, --run, --cleanup",
                     lambda: whole_submission(iso, base + 1)))
    systems = [(Tally(label), one) for label, one in runs] + [(Tally("goboxd POST /run, keep-alive"), None)]
    for _, one in runs:  # warm-up
        for _ in range(5):
            one()
    for _ in range(5):
        engine.timed_accepted(d, HELLO_BODY, conn, "hello")
    per = max(1, count // rounds)
    for r in range(rounds):
        for t, one in rotated(systems, r):
            if one is None:
                batch_goboxd(t, per, d, dcpu, conn)
            else:
                batch_local(t, per, one)
    conn.close()
    bare = systems[0][0]
    b50, b99 = pct(bare.lat, 50), pct(bare.lat, 99)
    print("hello: py3 one at a time, %d runs each in %d interleaved rounds" % (per * rounds, rounds))
    print("| | p50 ms | p99 ms | p50 / bare | p99 / bare | CPU ms a run | off-CPU ms a run |")
    print("|---|---|---|---|---|---|---|")
    for t, _ in systems:
        n = len(t.lat)
        p50, p99 = pct(t.lat, 50), pct(t.lat, 99)
        cpu = t.cpu * 1000 / n
        print("| %s | %.1f | %.1f | %.2f | %.2f | %.1f | %.1f |"
              % (t.label, p50, p99, p50 / b50, p99 / b99, cpu, sum(t.lat) / n - cpu))
    g = systems[-1][0]
    n = len(g.lat)
    print("  goboxd's CPU a request: master %.2f ms, workers %.2f ms, jails and programs"
          " (cgroups) %.2f ms, of which the test's reported cpu_time_ms %.2f ms"
          % (g.parts["master"] * 1000 / n, g.parts["workers"] * 1000 / n,
             g.parts["cgroups"] * 1000 / n, g.reported_ms / n))
    if g.lost_threads:
        print("  %d goboxd threads ended within a batch: their CPU in it is not counted"
              % g.lost_threads)
    sys.stdout.flush()


def aplusb_bodies():
    tests = [{"stdin": "%d %d\n" % (i, i + 1), "expected_stdout": "%d\n" % (2 * i + 1)}
             for i in range(50)]
    return ({"language": "cpp", "source": APLUSB, "tests": tests},
            {"language": "cpp", "source": APLUSB, "tests": tests[:1]})


def aplusb_binary(tmp):
    """A+B built with g++ -O2 in tmp: its path."""
    src = os.path.join(tmp, "aplusb.cpp")
    with open(src, "w") as f:
        f.write(APLUSB)
    binary = os.path.join(tmp, "aplusb")
    subprocess.run(["g++", "-O2", "-o", binary, src], check=True)
    return binary


def aplusb_tests(argv, out, keep, label, cwd):
    """The 50 tests of aplusb_bodies run by argv, each one's ms into out
    when keep."""
    for i in range(50):
        want = b"%d\n" % (2 * i + 1)
        t = time.perf_counter()
        try:
            run_ok(argv, b"%d %d\n" % (i, i + 1), want, cwd)
        except RunFailed as e:
            raise SystemExit("%s A+B failed: %s" % (label, e))
        if keep:
            out.append((time.perf_counter() - t) * 1000)


def phase_aplusb(d, iso, tmp, requests, base):
    binary = aplusb_binary(tmp)
    body50, body1 = aplusb_bodies()
    conn = http.client.HTTPConnection("127.0.0.1", d.port, timeout=120)
    s50, s1, iso_t, bare_t = [], [], [], []
    if iso:
        with open(binary, "rb") as f:
            put_file(iso.init(base), "aplusb", f.read(), 0o755)

    def goboxd(keep):
        for body, out in ((body50, s50), (body1, s1)):
            ms, res = engine.timed_accepted(d, body, conn, "A+B")
            if keep:
                out.append(ms - engine.build_ms(res))

    steps = [lambda keep: goboxd(keep),
             lambda keep: aplusb_tests([binary], bare_t, keep, "bare", tmp)]
    if iso:
        steps.append(lambda keep: aplusb_tests(iso.argv(base, ISO_CPP, ["./aplusb"]), iso_t,
                                               keep, "isolate", tmp))
    for r in range(requests + 1):
        for step in rotated(steps, r):
            step(r > 0)  # the first round warms up
    conn.close()
    b = statistics.median(bare_t)
    extra = (statistics.median(s50) - statistics.median(s1)) / 49
    print("aplusb: C++ A+B, 50 tests, %d interleaved rounds (goboxd: a 50-test and a 1-test"
          " request a round, builds left out)" % requests)
    print("| | per test ms | minus a bare exec |")
    print("|---|---|---|")
    print("| bare exec from this script | %.2f | |" % b)
    if iso:
        i = statistics.median(iso_t)
        print("| isolate --run, box set up once | %.2f | %.2f |" % (i, i - b))
    print("| goboxd, per extra test | %.2f | %.2f |" % (extra, extra - b))
    print("| goboxd, 50-test request / 50 | %.2f | %.2f |"
          % (statistics.median(s50) / 50, statistics.median(s50) / 50 - b))
    print("  goboxd 1-test request, build left out: median %.1f ms" % statistics.median(s1))
    sys.stdout.flush()


def healthz_probe(d, stop, lat, conn_lat):
    """lat: each probe's whole time; conn_lat: its TCP connect alone,
    which the kernel completes before goboxd's loop sees the connection
    (what it takes is the kernel's and this client's scheduling)."""
    while not stop.is_set():
        t = time.perf_counter()
        try:
            conn = http.client.HTTPConnection("127.0.0.1", d.port, timeout=30)
            conn.connect()
            c = time.perf_counter()
            conn.request("GET", "/healthz")
            ok = conn.getresponse().status == 200
            conn.close()
        except (OSError, http.client.HTTPException):
            ok = False
        lat.append((time.perf_counter() - t) * 1000 if ok else float("inf"))
        if ok:
            conn_lat.append((c - t) * 1000)
        stop.wait(0.05)


class Boxes:
    """Gives each client thread of a closed loop a box of its own."""

    def __init__(self, first):
        self.next = first
        self.lock = threading.Lock()

    def take(self, state):
        if "box" not in state:
            with self.lock:
                state["box"] = self.next
                self.next += 1
        return state["box"]


def goboxd_one(d):
    return engine.keepalive_poster(d, HELLO_BODY)


def phase_load(d, iso, tmp, seconds, base):
    workers = d.info["limits"]["workers"]
    levels = [workers, 4 * workers]
    src = os.path.join(tmp, "solution.py")
    with open(src, "w") as f:
        f.write(HELLO)
    run_base, whole_base = base + 2, base + 2 + 4 * workers
    if iso:
        for box in range(run_base, run_base + 4 * workers):
            put_file(iso.init(box), "solution.py", HELLO.encode())
    slices = 3
    print("load: hello-world py3 back to back, %d s a system and level in %d interleaved slices;"
          " goboxd /healthz on a new connection every 50 ms meanwhile" % (seconds, slices))
    print("| clients | bare python3 runs/s | isolate --run/s | isolate whole submissions/s |"
          " goboxd req/s | goboxd p50 / p99 ms | /healthz p50 / p99 / max ms |"
          " /healthz connect p99 ms | errors |")
    print("|---|---|---|---|---|---|---|---|---|")
    for c in levels:
        done = {k: [0, 0.0, 0] for k in ("bare", "run", "whole", "goboxd")}
        glat, hlat, clat = [], [], []
        for s in range(slices):
            loops = [("bare", lambda st: run_ok([PY3, src], b"", b"hello\n", tmp))]
            if iso:
                rb, wb = Boxes(run_base), Boxes(whole_base)
                loops.append(("run", lambda st, rb=rb: run_ok(
                    iso.argv(rb.take(st), ISO_PY, [PY3, "solution.py"]), b"", b"hello\n")))
                loops.append(("whole", lambda st, wb=wb: whole_submission(iso, wb.take(st))))
            loops.append(("goboxd", goboxd_one(d)))
            for name, one in rotated(loops, s):
                stop, probe = threading.Event(), None
                if name == "goboxd":
                    probe = threading.Thread(target=healthz_probe, args=(d, stop, hlat, clat))
                    probe.start()
                lat, err, sec = engine.closed_loop(c, seconds / slices, counted(one))
                if probe:
                    stop.set()
                    probe.join()
                    glat += lat
                done[name][0] += len(lat)
                done[name][1] += sec
                done[name][2] += err
        rate = {k: ("%.1f" % (v[0] / v[1]) if v[1] else "-") for k, v in done.items()}
        print("| %d | %s | %s | %s | %s | %.0f / %.0f | %.1f / %.1f / %.1f | %.1f | %d |"
              % (c, rate["bare"], rate["run"], rate["whole"], rate["goboxd"],
                 pct(glat, 50), pct(glat, 99), pct(hlat, 50), pct(hlat, 99), max(hlat),
                 pct(clat, 99), sum(v[2] for v in done.values())))
        sys.stdout.flush()


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("goboxd")
    ap.add_argument("--jail", default="bwrap", choices=["bwrap", "nsjail"])
    ap.add_argument("--seconds", type=int, default=15)
    ap.add_argument("--count", type=int, default=200, help="hello runs a system")
    ap.add_argument("--requests", type=int, default=10, help="A+B rounds")
    ap.add_argument("--box-base", type=int, default=0, help="first isolate box id to use")
    ap.add_argument("--skip", default="")
    ap.add_argument("--daemon-arg", action="append", default=[],
                    help="one more goboxd option (repeatable), e.g. --daemon-arg=--pin-cpus")
    a = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("needs root (the daemon makes cgroups and drops to sandbox uids)")
    skip = set(a.skip.split(",")) if a.skip else set()
    print("kernel %s, %s CPUs, load average %s" % (os.uname().release, os.cpu_count(), loadavg()))
    if "cgroups" not in skip:
        phase_cgroups()
    tmp = tempfile.mkdtemp(prefix="goboxd-vs-isolate-")
    os.chmod(tmp, 0o711)
    iso = None
    binary = shutil.which("isolate")
    if binary:
        iso = Isolate(binary, tmp)
        ver = subprocess.run([binary, "--version"], stdout=subprocess.PIPE, text=True).stdout
        print("%s (%s), without --cg" % (ver.split("\n")[0], binary))
    else:
        print("isolate is not on PATH: goboxd's numbers and the bare ones alone")
    d = engine.Daemon(os.path.abspath(a.goboxd), a.jail, tmp, a.daemon_arg)
    try:
        print("goboxd %s (%s), jail %s, workers %s, max concurrency %s%s" % (
            d.info["build_info"]["version"], d.info["build_info"].get("commit", "?"),
            d.info["nsjail"].get("version") or d.info["nsjail"].get("driver", a.jail),
            d.info["limits"]["workers"],
            d.info["limits"]["max_concurrent_jobs"],
            (", options " + " ".join(a.daemon_arg)) if a.daemon_arg else ""))
        sys.stdout.flush()
        if "hello" not in skip:
            phase_hello(d, DaemonCpu(d), iso, tmp, a.count, 10, a.box_base)
        if "aplusb" not in skip:
            phase_aplusb(d, iso, tmp, a.requests, a.box_base)
        if "load" not in skip:
            phase_load(d, iso, tmp, a.seconds, a.box_base)
        st, info = d.request("GET", "/info")
        s = info["stats"]
        print("jobs_total=%d jobs_failed_internal=%d workers_respawned=%d; load average %s"
              % (s["jobs_total"], s["jobs_failed_internal"], s["workers_respawned"], loadavg()))
    finally:
        d.stop()
        if iso:
            iso.cleanup_all()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
