#!/usr/bin/env python3
"""A fleet on one PostgreSQL: async Judge0 throughput with 1, 2 and 3
nodes. Prints numbers, asserts nothing.

First the host: its CPU count and its cgroup state (tests/load/vs_isolate.py's:
how many v1 hierarchies, one v1 migration after 100 ms idle, whether
favordynmods is mounted). Then a fresh private PostgreSQL cluster
(tests/pg-cluster, under /var/tmp) with pg_stat_statements preloaded
(ALTER SYSTEM, then a restart), and for each configuration of --nodes:

  - a fresh database, and that many real goboxd on 127.0.0.1 sharing it
    (--store postgresql://..., --node-name n1.., --store-lease 30s, each
    with its own port, jail dir and --sandbox-uid-base 60000, 61000, ..),
    py3 only, --workers-per-node workers each;
  - a warm-up: two submissions per worker, waited for;
  - one second with the nodes idle, whose CPU busy share (/proc/stat)
    says whether other work shares the machine (a few % is the nodes'
    own polling of the store): repeated while it is 10 % or more, for
    --quiet-wait seconds at most (a shared machine; the script then says
    how long it waited); pg_stat_statements reset; then
    --submissions Judge0 submissions (POST /submissions, language 71,
    `print(input())` with a distinct stdin and it as the expected
    output) posted round-robin to the nodes directly by --clients
    threads, each with a keep-alive connection to every node, as fast as
    the 201s come; then the last token is polled every 20 ms until it is
    finished, and every token is checked in batches of 20 (each must be
    Accepted, status 3), both through the nodes in turn;
  - from the database, which the script reads only after the numbers
    below are taken: each submission's created_ms and finished_ms (the
    database's clock, the host's), and the node that finished it.

Per round and configuration: submissions/s over the wall time from the first POST
to the last finished_ms; p50 and p95 of finished - created (with every
submission posted at once these are mostly the wait behind the backlog);
the machine's CPU busy share over that time (/proc/stat); the database's
time per submission: the sum of pg_stat_statements' total_exec_time over
every statement run in the configuration's database (goboxd's only: the
script's own reads go to database postgres, or come after), divided by
the submissions, and its calls per submission; their planning time
the same way (pg_stat_statements.track_planning is on: goboxd's
statements are planned at every call); the CPU time of the server's
processes (the postmaster and its children, /proc/PID/schedstat) over
the same window a submission, which holds what neither counts (parsing,
the protocol, the commits); beside them the wall time per submission per
worker (wall x workers / submissions: what a submission cost a worker,
all of it); how many each node ran; and with --top the heaviest
statements. The script's own reads through the API (one GET of each
submission in the final check, the polls of the last token) are
goboxd's statements too, and counted: a Judge0 client reads each
submission at least once.

  tests/load/fleet.py [--bin build/goboxd] [--nodes 1,2,3]
                      [--workers-per-node 1] [--submissions 300]
                      [--rounds 3] [--clients 4] [--jail bwrap] [--top 4] [--durable]
                      [--quiet-wait 30] [--deadline 90]

Every configuration runs --rounds times, the configurations interleaved
round by round (a drift hits them all alike, as in apis.py); the table
shows the median round by submissions/s and the range over the rounds,
each round's line above it.

Workers per node default to 1: three nodes of one worker are three
workers, as close to the 2 CPUs of the project's small machine as a
three-node fleet gets; with 2 the single node already saturates them.
--nodes 1 --workers-per-node 2 against --nodes 2 --workers-per-node 1
compares one node and two at the same worker count.

Run as root (the jails, the cgroup probe; the server runs as nobody).
Bounded: a fixed count of requests, 127.0.0.1 only; for each round and
configuration 120 s at most for the nodes to be ready, --quiet-wait
seconds for a quiet second, --deadline seconds for the warm-up's and
again for the submissions to finish; the daemons and the cluster are
stopped and their files removed at the end, whatever happened.
"""
import argparse
import http.client
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from engine import free_port, pct, stop_process  # noqa: E402  (same directory)
from vs_isolate import phase_cgroups  # noqa: E402

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PG_CLUSTER = os.path.join(TOP, "tests", "pg-cluster")
SOURCE = "print(input())"


def psql(port, db, sql):
    """One psql -Atc as the cluster's superuser: rows of |-separated fields."""
    r = subprocess.run(["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1",
                        "-h", "127.0.0.1", "-p", str(port), "-U", "postgres",
                        "-d", db, "-c", sql],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    if r.returncode != 0:
        raise SystemExit("psql failed: %s\n%s" % (sql, r.stderr.decode()))
    return [line.split("|") for line in r.stdout.decode().splitlines() if line]


def pg_cluster(cmd, pgdir):
    r = subprocess.run([PG_CLUSTER, cmd, pgdir], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
    if r.returncode != 0:
        raise SystemExit("tests/pg-cluster %s failed (%d): %s"
                         % (cmd, r.returncode, r.stderr.decode()))
    return r.stdout.decode().strip()


class Node:
    """One goboxd of the fleet, py3 only, on its own port and jail dir."""

    def __init__(self, binary, jail, tmp, index, workers, store):
        self.name = "n%d" % (index + 1)
        self.dir = os.path.join(tmp, self.name)
        langs = os.path.join(self.dir, "languages")
        os.makedirs(langs)
        shutil.copy(os.path.join(TOP, "languages", "py3.yaml"), langs)
        self.port = free_port()
        self.log = open(os.path.join(self.dir, "goboxd.log"), "w")
        self.proc = subprocess.Popen(
            [binary, "--listen", "127.0.0.1", "--port", str(self.port),
             "--languages-dir", langs, "--jail-dir", os.path.join(self.dir, "jails"),
             "--jail", jail, "--workers", str(workers),
             "--sandbox-uid-base", str(60000 + 1000 * index),
             "--store", store, "--node-name", self.name, "--store-lease", "30s",
             "--max-queue-size", "1024", "--log-level", "warn"],
            stdout=self.log, stderr=subprocess.STDOUT)

    def wait_ready(self, deadline):
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit("goboxd %s exited (%d); its log ends:\n%s"
                                 % (self.name, self.proc.returncode, self.log_tail()))
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
                conn.request("GET", "/readyz")
                st = conn.getresponse().status
                conn.close()
                if st == 200:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise SystemExit("goboxd %s did not become ready; its log ends:\n%s"
                         % (self.name, self.log_tail()))

    def log_tail(self):
        """The log's last lines (its directory is removed at the end)."""
        self.log.flush()
        with open(self.log.name, errors="replace") as f:
            return "".join(f.readlines()[-10:])

    def stop(self):
        stop_process(self.proc, self.log)


def request(conn, method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    conn.request(method, path, body=data,
                 headers={"Content-Type": "application/json"} if data else {})
    r = conn.getresponse()
    return r.status, json.loads(r.read())


def submission(i):
    word = "s%06d" % i
    return {"language_id": 71, "source_code": SOURCE, "stdin": word,
            "expected_output": word}


def post_all(nodes, clients, count, first):
    """count submissions posted round-robin to the nodes by clients
    threads, each with a keep-alive connection to every node; the tokens
    in order and the time of the first POST."""
    tokens = [None] * count
    starts = [None] * count
    nxt, lock, errors = [0], threading.Lock(), []

    def client():
        conns = [http.client.HTTPConnection("127.0.0.1", n.port, timeout=60) for n in nodes]
        while True:
            with lock:
                i = nxt[0]
                if i == count or errors:
                    break
                nxt[0] += 1
            starts[i] = time.time()
            try:
                st, body = request(conns[i % len(nodes)], "POST", "/submissions",
                                   submission(first + i))
            except (OSError, http.client.HTTPException, ValueError) as e:
                errors.append("POST to %s: %r" % (nodes[i % len(nodes)].name, e))
                break
            if st != 201 or "token" not in body:
                errors.append("POST to %s: %d %s" % (nodes[i % len(nodes)].name, st,
                                                      json.dumps(body)[:300]))
                break
            tokens[i] = body["token"]
        for c in conns:
            c.close()

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise SystemExit("benchmark stopped: %s" % errors[0])
    return tokens, min(starts)


def wait_finished(nodes, tokens, deadline):
    """Poll the last token every 20 ms, then check every token, 20 a
    batch, each request to the next node; every one must be Accepted."""
    conns = [http.client.HTTPConnection("127.0.0.1", n.port, timeout=60) for n in nodes]
    k = [0]

    def get(path):
        k[0] += 1
        return request(conns[k[0] % len(conns)], "GET", path)[1]

    try:
        while get("/submissions/%s?fields=status_id" % tokens[-1])["status_id"] <= 2:
            if time.time() > deadline:
                raise SystemExit("the last submission did not finish in time (--deadline)")
            time.sleep(0.02)
        for b in range(0, len(tokens), 20):
            batch = tokens[b:b + 20]
            while True:
                subs = get("/submissions/batch?fields=status_id&tokens=" + ",".join(batch))
                ids = [s["status_id"] for s in subs["submissions"]]
                if all(i > 2 for i in ids):
                    break
                if time.time() > deadline:
                    raise SystemExit("submissions did not finish in time (--deadline)")
                time.sleep(0.02)
            if any(i != 3 for i in ids):
                raise SystemExit("a submission ended with status %s" % ids)
    finally:
        for c in conns:
            c.close()


def cpu_jiffies():
    """(busy, total) jiffies of the whole machine, from /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + v[4]  # idle, iowait
    total = sum(v[:8])  # guest time is already in user
    return total - idle, total


def pg_cpu(pgdir):
    """{pid: ns of CPU} of the PostgreSQL server's processes (the postmaster
    and its children) from /proc/PID/schedstat: nanoseconds, where
    /proc/PID/stat counts 10 ms ticks."""
    with open(os.path.join(pgdir, "data", "postmaster.pid")) as f:
        top = int(f.readline())
    out = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            if int(d) != top and ppid != top:
                continue
            with open("/proc/%s/schedstat" % d) as f:
                out[int(d)] = int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            continue
    return out


def run_config(a, tmp, pgdir, pgport, n, db):
    psql(pgport, "postgres", "CREATE DATABASE %s" % db)
    store = "postgresql://postgres@127.0.0.1:%d/%s" % (pgport, db)
    nodes = []
    try:
        for i in range(n):
            nodes.append(Node(a.bin, a.jail, tmp, i, a.workers_per_node, store))
        for node in nodes:
            node.wait_ready(time.time() + 120)
        workers = n * a.workers_per_node
        # warm-up: every worker's jail, every node's connections
        warm, _ = post_all(nodes, a.clients, 2 * workers, 0)
        wait_finished(nodes, warm, time.time() + a.deadline)
        # a second with every node idle: how busy the machine is without
        # this benchmark (another program's work shows here); on a busy
        # machine, wait for a quiet second, --quiet-wait seconds at most
        waited = time.time()
        while True:
            quiet0 = cpu_jiffies()
            time.sleep(1)
            quiet1 = cpu_jiffies()
            quiet = 100.0 * (quiet1[0] - quiet0[0]) / max(1, quiet1[1] - quiet0[1])
            if quiet < 10 or time.time() - waited >= a.quiet_wait:
                break
        waited = time.time() - waited - 1
        psql(pgport, "postgres", "SELECT pg_stat_statements_reset()")
        time.sleep(0.3)  # that psql's server process gone before pg_cpu
        busy0, total0 = cpu_jiffies()
        pg0 = pg_cpu(pgdir)
        tokens, t0 = post_all(nodes, a.clients, a.submissions, len(warm))
        posted = time.time()
        wait_finished(nodes, tokens, t0 + a.deadline)
        busy1, total1 = cpu_jiffies()
        pg1 = pg_cpu(pgdir)
        # the database's time, before the script reads that database
        stats = psql(pgport, "postgres",
                     "SELECT calls, total_exec_time, total_plan_time,"
                     " regexp_replace(query, '\\s+', ' ', 'g')"
                     " FROM pg_stat_statements WHERE dbid ="
                     " (SELECT oid FROM pg_database WHERE datname = '%s')"
                     " ORDER BY total_exec_time DESC" % db)
    finally:
        for node in nodes:
            node.stop()
    rows = psql(pgport, db, "SELECT token, created_ms, finished_ms, finished_by"
                " FROM goboxd_submissions WHERE state = 2")
    mine = set(tokens)
    rows = [r for r in rows if r[0] in mine]
    if len(rows) != len(tokens):
        raise SystemExit("%d of %d submissions found finished in the database"
                         % (len(rows), len(tokens)))
    lat = [int(r[2]) - int(r[1]) for r in rows]
    last = max(int(r[2]) for r in rows) / 1000.0
    wall = last - t0
    ran = {}
    for r in rows:
        ran[r[3]] = ran.get(r[3], 0) + 1
    db_ms = sum(float(s[1]) for s in stats)
    plan_ms = sum(float(s[2]) for s in stats)
    calls = sum(int(s[0]) for s in stats)
    return {
        "nodes": n, "workers": a.workers_per_node, "subs": len(tokens), "wall": wall,
        "rate": len(tokens) / wall, "p50": pct(lat, 50), "p95": pct(lat, 95),
        "post_s": posted - t0,
        "busy": 100.0 * (busy1 - busy0) / max(1, total1 - total0),
        "quiet": quiet, "waited": waited,
        "db_ms": db_ms / len(tokens), "plan_ms": plan_ms / len(tokens),
        "pg_cpu_ms": sum(ns - pg0.get(p, 0) for p, ns in pg1.items()) / 1e6 / len(tokens),
        "pg_gone": len(set(pg0) - set(pg1)), "calls": calls / len(tokens),
        "worker_ms": wall * 1000 * workers / len(tokens),
        "ran": " ".join("%s:%d" % (k, ran[k]) for k in sorted(ran)),
        "top": stats[:a.top],
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.path.join(TOP, "build", "goboxd"))
    ap.add_argument("--nodes", default="1,2,3")
    ap.add_argument("--workers-per-node", type=int, default=1)
    ap.add_argument("--submissions", type=int, default=300)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=3,
                    help="each configuration this many times, interleaved; medians")
    ap.add_argument("--jail", default="bwrap")
    ap.add_argument("--durable", action="store_true",
                    help="fsync and full page writes on (tests/pg-cluster's PG_CLUSTER_DURABLE)")
    ap.add_argument("--top", type=int, default=4, help="heaviest statements to show")
    ap.add_argument("--quiet-wait", type=float, default=30,
                    help="seconds at most to wait for a second the machine is under 10 %%"
                         " busy before a configuration's submissions")
    ap.add_argument("--deadline", type=float, default=90,
                    help="seconds for a configuration's submissions to finish")
    a = ap.parse_args()
    counts = [int(x) for x in a.nodes.split(",")]
    if not counts or min(counts) < 1 or max(counts) > 9 or a.submissions < 1 \
            or a.rounds < 1:
        ap.error("--nodes: 1 to 9 each; --submissions, --rounds: at least 1")

    print("CPUs: %d" % os.cpu_count())
    phase_cgroups()
    tmp = tempfile.mkdtemp(prefix="goboxd-fleet-", dir="/var/tmp")
    os.chmod(tmp, 0o711)  # the server runs as nobody and must reach its dir
    pgdir = os.path.join(tmp, "c")
    results, started = {}, False
    if a.durable:
        os.environ["PG_CLUSTER_DURABLE"] = "1"
    try:
        url = pg_cluster("start", pgdir)
        started = True
        pgport = int(url.rsplit(":", 1)[1].split("/")[0])
        psql(pgport, "postgres",
             "ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'")
        pg_cluster("restart", pgdir)
        psql(pgport, "postgres", "ALTER SYSTEM SET pg_stat_statements.track_planning = on")
        psql(pgport, "postgres", "SELECT pg_reload_conf()")
        psql(pgport, "postgres", "CREATE EXTENSION pg_stat_statements")
        version = psql(pgport, "postgres", "SHOW server_version")[0][0]
        if psql(pgport, "postgres", "SHOW pg_stat_statements.track_planning")[0][0] != "on":
            raise SystemExit("pg_stat_statements.track_planning did not take")
        fsync = psql(pgport, "postgres", "SHOW fsync")[0][0]
        print("PostgreSQL %s (fsync %s%s), goboxd %s, %s"
              % (version, fsync, "" if a.durable else ", as tests/pg-cluster runs it",
                 a.bin, a.jail))
        for rnd in range(a.rounds):  # interleaved: a drift hits every configuration alike
            for n in counts:
                name = "fleet%d_r%d" % (n, rnd + 1)
                r = run_config(a, os.path.join(tmp, name), pgdir, pgport, n, name)
                results.setdefault(n, []).append(r)
                print("  round %d, %d node(s): the machine %.0f %% busy the second before"
                      " (nodes idle; %.0f s waited for it), %.0f %% during; %d posted in"
                      " %.2f s, the last finished %.2f s after the first POST: %.1f/s%s"
                      % (rnd + 1, n, r["quiet"], r["waited"], r["busy"], r["subs"],
                         r["post_s"], r["wall"],
                         r["rate"], "; %d server processes ended meanwhile (their CPU is"
                         " not counted)" % r["pg_gone"] if r["pg_gone"] else ""))
    finally:
        if started:
            subprocess.run([PG_CLUSTER, "remove", pgdir], timeout=60)
        shutil.rmtree(tmp, ignore_errors=True)

    print()
    print("%d submissions a configuration, %d rounds; the median round by subs/s, its"
          " range over the rounds" % (a.submissions, a.rounds))
    print("%5s %7s %7s %13s %7s %7s %5s %9s %8s %8s %9s %9s  %s"
          % ("nodes", "workers", "wall s", "subs/s", "p50 ms", "p95 ms", "cpu%",
             "db ms/sub", "plan ms", "db calls", "pg cpu ms", "worker ms", "ran"))
    mids = []
    for n in counts:
        rs = sorted(results[n], key=lambda x: x["rate"])
        r = rs[len(rs) // 2]
        mids.append(r)
        print("%5d %7s %7.2f %5.1f %7s %7.0f %7.0f %5.0f %9.3f %8.3f %8.1f %9.3f %9.1f  %s"
              % (n, "%d x %d" % (n, r["workers"]), r["wall"], r["rate"],
                 "%.0f-%.0f" % (rs[0]["rate"], rs[-1]["rate"]), r["p50"], r["p95"], r["busy"],
                 r["db_ms"], r["plan_ms"], r["calls"], r["pg_cpu_ms"], r["worker_ms"],
                 r["ran"]))
    print("(workers: nodes x workers per node; p50/p95: finished - created; cpu%: the"
          " machine busy, first POST to the last check; db ms/sub, db calls:"
          " pg_stat_statements' total_exec_time and calls in the configuration's database"
          " over the submissions; plan ms: total_plan_time the same way; pg cpu ms: the"
          " server's processes' CPU a submission; worker ms: wall x workers / submissions)")
    if a.top:
        for r in mids:
            print()
            print("%d node(s), the median round's heaviest statements: calls, exec ms in all,"
                  " exec and plan ms a call" % r["nodes"])
            for calls, ms, plan, query in r["top"]:
                c = max(1, int(calls))
                print("  %6s %8.1f %7.3f %7.3f  %s" % (calls, float(ms), float(ms) / c,
                                                       float(plan) / c, query[:80]))


if __name__ == "__main__":
    main()
