#!/usr/bin/env python3
"""Sandbox engine benchmark: prints numbers, asserts nothing.

Starts a real goboxd on 127.0.0.1 (py3 and cpp only, so that start-up is
quick) and measures, in one run:

  overhead   a C++ A+B submission with 50 tests in one request: service
             time per test (request time minus the build, over 50) minus
             the same binary run bare from this script, per run;
  hello      hello-world py3 at one client: p50 of the request against p50
             of bare python3 started the same way (a subprocess with pipes);
  load       at 10, 50 and 100 clients: goboxd's throughput and latency
             against a raw loop of jail launches (the same jail binary
             running the same program, no goboxd) at the same concurrency;
  judge      the same A+B with a checker and as an interactive problem
             (C++ judges): service time per test (50 tests a request)
             and of a one-test request, builds left out, against the
             plain comparison;
  spin       a CPU-bound C++ test (a fixed count of dependent multiplies)
             sent by twice as many clients as there are workers: the spread
             of the CPU time goboxd reports for the same work, which is
             what a time limit is judged on, and the throughput.

  tests/load/engine.py path/to/goboxd [--jail bwrap|nsjail] [--seconds 15]
      [--requests 10] [--levels 10,50,100] [--skip overhead,hello,judge,load,spin]
      [--daemon-arg=--pin-cpus ...]

Every request is checked (200 and accepted); anything else counts as an
error. Bounded: each phase runs a fixed count or a fixed time.
"""
import argparse
import http.client
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
APLUSB = "#include <cstdio>\nint main(){long a,b;if(scanf(\"%ld %ld\",&a,&b)!=2)return 1;printf(\"%ld\\n\",a+b);}\n"
HELLO = 'print("hello")\n'
NSJAIL = "/usr/local/bin/nsjail"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Daemon:
    def __init__(self, binary, jail, tmp, extra, languages=("py3", "cpp")):
        """languages: the files of languages/ to serve; None serves all."""
        langs = os.path.join(TOP, "languages")
        if languages is not None:
            langs = os.path.join(tmp, "languages")
            os.makedirs(langs)
            for lang in languages:
                shutil.copy(os.path.join(TOP, "languages", lang + ".yaml"), langs)
        self.port = free_port()
        self.log = open(os.path.join(tmp, "goboxd.log"), "w")
        self.proc = subprocess.Popen(
            [binary, "--listen", "127.0.0.1", "--port", str(self.port),
             "--languages-dir", langs, "--jail-dir", os.path.join(tmp, "jails"),
             "--jail", jail, "--nsjail-path", NSJAIL, "--max-queue-size", "1024",
             "--store", os.path.join(tmp, "submissions.db"),
             "--log-level", "warn"] + extra,
            stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 120
        while time.time() < deadline:
            try:
                st, body = self.request("GET", "/readyz")
                if st == 200:
                    self.info = self.request("GET", "/info")[1]
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise SystemExit("goboxd did not become ready; see its log")

    def request(self, method, path, body=None, conn=None):
        own = conn is None
        conn = conn or http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        data = json.dumps(body).encode() if body is not None else None
        conn.request(method, path, body=data,
                     headers={"Content-Type": "application/json"} if data else {})
        resp = conn.getresponse()
        raw = resp.read()
        if own:
            conn.close()
        return resp.status, json.loads(raw)

    def stop(self):
        stop_process(self.proc, self.log)


def stop_process(proc, log=None):
    """SIGTERM (a graceful stop), SIGKILL after 30 s; then close its log."""
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    if log:
        log.close()


def keepalive_poster(d, body):
    """A closed-loop client's step: POST body on its own keep-alive
    connection (made again after an error); True when 200 and accepted."""
    def one(state):
        if "conn" not in state:
            state["conn"] = http.client.HTTPConnection("127.0.0.1", d.port, timeout=120)
        try:
            st, res = d.request("POST", "/run", body, state["conn"])
            return st == 200 and res.get("status") == "accepted"
        except (OSError, http.client.HTTPException, ValueError):
            state["conn"].close()
            del state["conn"]
            return False
    return one


def pct(values, p):
    v = sorted(values)
    if not v:
        return float("nan")
    k = min(len(v) - 1, max(0, int(round(p / 100.0 * (len(v) - 1)))))
    return v[k]


def timed_accepted(d, body, conn, what):
    """POST /run on conn: the request's time in ms and its answer, which
    must be 200 and accepted (anything else ends the benchmark)."""
    t = time.perf_counter()
    st, res = d.request("POST", "/run", body, conn)
    ms = (time.perf_counter() - t) * 1000
    if st != 200 or res.get("status") != "accepted":
        raise SystemExit("%s request failed: %s" % (what, json.dumps(res)[:500]))
    return ms, res


def build_ms(res, key="build"):
    """The time a request spent on its build: the build's duration_ms, or
    0 when it came from the build cache (the answer then repeats the
    duration of the run that made the entry, which this request did not
    spend)."""
    b = res[key]
    return 0 if b.get("cached") else b["duration_ms"]


def bare_runs(argv, stdin, count, cwd):
    times = []
    for _ in range(count):
        t = time.perf_counter()
        subprocess.run(argv, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       cwd=cwd, check=True)
        times.append((time.perf_counter() - t) * 1000)
    return times


def phase_overhead(d, tmp, requests):
    tests = [{"stdin": "%d %d\n" % (i, i + 1), "expected_stdout": "%d\n" % (2 * i + 1)}
             for i in range(50)]
    body = {"language": "cpp", "source": APLUSB, "tests": tests}
    conn = http.client.HTTPConnection("127.0.0.1", d.port, timeout=120)
    per_test, in_jail = [], []
    for i in range(requests + 1):
        wall, res = timed_accepted(d, body, conn, "A+B")
        if i == 0:
            continue  # warm-up
        per_test.append((wall - build_ms(res)) / 50)
        in_jail.append(sum(x["duration_ms"] for x in res["tests"]) / 50)
    conn.close()
    src = os.path.join(tmp, "aplusb.cpp")
    with open(src, "w") as f:
        f.write(APLUSB)
    subprocess.run(["g++", "-O2", "-o", os.path.join(tmp, "aplusb"), src], check=True)
    bare = bare_runs([os.path.join(tmp, "aplusb")], b"1 2\n", 50 * requests, tmp)
    svc, b = statistics.median(per_test), statistics.median(bare)
    print("overhead: C++ A+B, 50 tests a request, %d requests" % requests)
    print("  goboxd service time per test  median %.2f ms (min %.2f, max %.2f)"
          % (svc, min(per_test), max(per_test)))
    print("  of which the test's own wall  median %.2f ms" % statistics.median(in_jail))
    print("  bare run from this script     median %.2f ms" % b)
    print("  sandbox overhead per test     %.2f ms" % (svc - b))
    return svc - b


def phase_hello(d, tmp, count=200):
    body = {"language": "py3", "source": HELLO,
            "tests": [{"stdin": "", "expected_stdout": "hello\n"}]}
    conn = http.client.HTTPConnection("127.0.0.1", d.port, timeout=120)
    lat = []
    for i in range(count + 10):
        ms, _ = timed_accepted(d, body, conn, "hello")
        if i >= 10:
            lat.append(ms)
    conn.close()
    src = os.path.join(tmp, "solution.py")
    with open(src, "w") as f:
        f.write(HELLO)
    bare = bare_runs(["/usr/bin/python3", src], b"", count, tmp)
    p50, b50 = pct(lat, 50), pct(bare, 50)
    print("hello: py3 at 1 client, %d requests" % count)
    print("  goboxd p50 %.1f ms p99 %.1f ms; bare python3 p50 %.1f ms; difference %.1f ms"
          % (p50, pct(lat, 99), b50, p50 - b50))
    return p50 - b50


CHECKER = r"""#include <cstdio>
int main(int argc, char **argv) {
    if (argc < 4) return 3;
    FILE *o = fopen(argv[2], "r"), *a = fopen(argv[3], "r");
    long x, y;
    if (!o || !a || fscanf(a, "%ld", &y) != 1) return 3;
    if (fscanf(o, "%ld", &x) != 1) { fputs("no number\n", stderr); return 2; }
    if (x != y) { fprintf(stderr, "%ld, not %ld\n", x, y); return 1; }
    return 0;
}
"""

INTERACTOR = r"""#include <cstdio>
int main(int argc, char **argv) {
    FILE *in = fopen(argc > 1 ? argv[1] : "", "r");
    long a, b, x;
    if (!in || fscanf(in, "%ld %ld", &a, &b) != 2) return 3;
    printf("%ld %ld\n", a, b);
    fflush(stdout);
    if (scanf("%ld", &x) != 1) { fputs("no answer\n", stderr); return 2; }
    if (x != a + b) { fprintf(stderr, "%ld, not %ld\n", x, a + b); return 1; }
    return 0;
}
"""


def judge_request(kind, count):
    tests = [{"stdin": "%d %d\n" % (i, i + 1), "expected_stdout": "%d\n" % (2 * i + 1)}
             for i in range(count)]
    body = {"language": "cpp", "source": APLUSB, "tests": tests}
    if kind != "plain":
        body[kind] = {"language": "cpp", "source": CHECKER if kind == "checker" else INTERACTOR}
    return body


def phase_judge(d, requests):
    """Per-test and per-request cost of a checker and of an interactor:
    the request's time less its builds (the solution's and the judge's),
    which leaves the jails, the runs and the verdicts."""
    conn = http.client.HTTPConnection("127.0.0.1", d.port, timeout=120)
    rows = {}
    for kind in ("plain", "checker", "interactor"):
        row = []
        for count in (50, 1):
            body = judge_request(kind, count)
            times = []
            for i in range(requests + 1):
                ms, res = timed_accepted(d, body, conn, kind)
                ms -= build_ms(res)
                if kind != "plain":
                    ms -= build_ms(res, kind + "_build")
                if i > 0:  # warm-up
                    times.append(ms)
            row.append(statistics.median(times))
        rows[kind] = row
    conn.close()
    print("judge: C++ A+B, C++ judges, %d requests each, builds left out" % requests)
    print("| | per test (50 tests) | more than plain | one-test request | more than plain |")
    print("|---|---|---|---|---|")
    for kind, (many, one) in rows.items():
        print("| %s | %.2f ms | %+.2f ms | %.1f ms | %+.1f ms |"
              % (kind, many / 50, (many - rows["plain"][0]) / 50, one, one - rows["plain"][1]))


def closed_loop(clients, seconds, one):
    """clients threads call one() back to back for seconds; latencies, errors."""
    lat, errors = [], [0]
    lock = threading.Lock()
    stop = time.time() + seconds

    def worker():
        state = {}
        while time.time() < stop:
            t = time.perf_counter()
            ok = one(state)
            ms = (time.perf_counter() - t) * 1000
            with lock:
                if ok:
                    lat.append(ms)
                else:
                    errors[0] += 1
        if "conn" in state:
            state["conn"].close()

    threads = [threading.Thread(target=worker) for _ in range(clients)]
    t0 = time.time()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return lat, errors[0], time.time() - t0


def jail_argv(jail, box):
    prog = ["/usr/bin/python3", "/sandbox/solution.py"]
    if jail == "nsjail":
        argv = [NSJAIL, "-Mo", "--quiet", "-u", "65534:61000:1", "-g", "65534:61000:1",
                "--time_limit", "0", "--iface_no_lo", "--rlimit_as", "inf"]
        for p in ("/usr", "/lib", "/lib64", "/bin"):
            if os.path.exists(p):
                argv += ["-R", p]
        return argv + ["-m", "none:/tmp:tmpfs:size=67108864", "-R", box + ":/sandbox",
                       "--cwd", "/sandbox", "--"] + prog
    argv = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session",
            "--uid", "65534", "--gid", "65534"]
    for p in ("/usr", "/lib", "/lib64", "/bin"):
        if os.path.islink(p):
            argv += ["--symlink", os.readlink(p), p]
        elif os.path.exists(p):
            argv += ["--ro-bind", p, p]
    return argv + ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
                   "--ro-bind", box, "/sandbox", "--chdir", "/sandbox", "--"] + prog


def phase_load(d, tmp, jail, levels, seconds):
    box = os.path.join(tmp, "rawbox")
    os.makedirs(box)
    os.chmod(tmp, 0o755)
    with open(os.path.join(box, "solution.py"), "w") as f:
        f.write(HELLO)
    argv = jail_argv(jail, box)
    # unprivileged, as goboxd runs its jails
    pre = ["setpriv", "--reuid", "61000", "--regid", "61000", "--clear-groups"]
    body = {"language": "py3", "source": HELLO,
            "tests": [{"stdin": "", "expected_stdout": "hello\n"}]}

    def raw(state):
        r = subprocess.run(pre + argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        return r.returncode == 0 and r.stdout == b"hello\n"

    req = keepalive_poster(d, body)

    print("load: hello-world py3, %d s a level" % seconds)
    print("| clients | raw %s launches/s | goboxd req/s | p50 ms | p99 ms | p99/p50 | errors |"
          % jail)
    print("|---|---|---|---|---|---|---|")
    for c in levels:
        rlat, rerr, rsec = closed_loop(c, seconds, raw)
        glat, gerr, gsec = closed_loop(c, seconds, req)
        p50, p99 = pct(glat, 50), pct(glat, 99)
        print("| %d | %.1f | %.1f | %.1f | %.1f | %.2f | %d |"
              % (c, len(rlat) / rsec, len(glat) / gsec, p50, p99, p99 / p50, gerr + rerr))
        sys.stdout.flush()


SPIN = ("#include <cstdio>\nint main(){unsigned long x=1;"
        "for(long i=0;i<200000000;i++)x=x*6364136223846793005UL+1442695040888963407UL;"
        "printf(\"%lu\\n\",x>>60);}\n")


def phase_spin(d, seconds):
    workers = d.info["limits"]["workers"]
    clients = 2 * workers
    body = {"language": "cpp", "source": SPIN, "tests": [{"stdin": ""}],
            "run": {"limits": {"cpu_time_s": 10, "wall_time_s": 20}}}
    cpu = []

    def req(state):
        if "conn" not in state:
            state["conn"] = http.client.HTTPConnection("127.0.0.1", d.port, timeout=120)
        try:
            st, res = d.request("POST", "/run", body, state["conn"])
        except (OSError, http.client.HTTPException, ValueError):
            state["conn"].close()
            del state["conn"]
            return False
        if st != 200 or res.get("status") != "accepted":
            return False
        cpu.append(res["tests"][0]["cpu_time_ms"])
        return True

    lat, err, sec = closed_loop(clients, seconds, req)
    print("spin: CPU-bound C++ test, %d clients, %d workers, %d s" % (clients, workers, seconds))
    if not cpu:
        print("  no request succeeded (%d errors)" % err)
        return
    print("  %.1f req/s; reported CPU time p50 %d ms, p99 %d ms, min %d, max %d, "
          "max/min %.2f, stdev %.1f ms; errors %d"
          % (len(lat) / sec, pct(cpu, 50), pct(cpu, 99), min(cpu), max(cpu),
             max(cpu) / max(1, min(cpu)), statistics.pstdev(cpu), err))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("goboxd")
    ap.add_argument("--jail", default="bwrap", choices=["bwrap", "nsjail"])
    ap.add_argument("--seconds", type=int, default=15)
    ap.add_argument("--requests", type=int, default=10)
    ap.add_argument("--levels", default="10,50,100")
    ap.add_argument("--skip", default="")
    ap.add_argument("--daemon-arg", action="append", default=[],
                    help="one more goboxd option (repeatable), e.g. --daemon-arg=--pin-cpus")
    a = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("needs root (the daemon makes cgroups and drops to sandbox uids)")
    skip = set(a.skip.split(",")) if a.skip else set()
    tmp = tempfile.mkdtemp(prefix="goboxd-engine-")
    os.chmod(tmp, 0o711)
    d = Daemon(os.path.abspath(a.goboxd), a.jail, tmp, a.daemon_arg)
    try:
        print("goboxd %s, jail %s, %s CPUs, workers %s, max concurrency %s%s" % (
            d.info["build_info"]["version"], d.info["nsjail"].get("driver", a.jail),
            os.cpu_count(), d.info["limits"]["workers"], d.info["limits"]["max_concurrent_jobs"],
            (", options " + " ".join(a.daemon_arg)) if a.daemon_arg else ""))
        if "overhead" not in skip:
            phase_overhead(d, tmp, a.requests)
        if "hello" not in skip:
            phase_hello(d, tmp)
        if "judge" not in skip:
            phase_judge(d, a.requests)
        if "load" not in skip:
            phase_load(d, tmp, a.jail, [int(x) for x in a.levels.split(",")], a.seconds)
        if "spin" not in skip:
            phase_spin(d, a.seconds)
        st, info = d.request("GET", "/info")
        s = info["stats"]
        print("jobs_total=%d jobs_failed_internal=%d" % (s["jobs_total"], s["jobs_failed_internal"]))
    finally:
        d.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
