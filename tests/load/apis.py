#!/usr/bin/env python3
"""What each API costs over /run: prints numbers, asserts nothing.

First the host's cgroup state (tests/load/vs_isolate.py's: one v1
migration after 100 ms idle, and whether favordynmods is mounted). Then
it starts a real goboxd on 127.0.0.1 (py3 only) and sends the same job, a
hello-world Python program with one test, through every API:

  /run          goboxd's own, the client waiting;
  wait=true     Judge0's POST /submissions?wait=true (the job, then the
                submission written to the store);
  piston        Piston's POST /api/v2/execute;
  async         Judge0's POST /submissions (201 and a token; the job runs
                from the store), then GET /submissions/{token} until it is
                done: throughput is submissions finished per second, from
                the first POST to the moment the last one (the queue is
                FIFO) is seen done, polled every 10 ms; then every result
                is checked, 20 tokens a batch.

Each shape: --clients closed-loop clients on keep-alive connections,
--jobs jobs in all, after a warm-up. Latency p50 / p99 in ms for the
waiting shapes; throughput in jobs/s for all.

  tests/load/apis.py path/to/goboxd [--jail bwrap|nsjail] [--workers 2]
                     [--clients 4] [--jobs 400] [--rounds 3]

GOBOXD_BENCH_STORE_DIR=/dev/shm puts the submission store on a tmpfs:
the same work without the disk's syncs.

Bounded: a fixed count of requests, 127.0.0.1 only; the daemon is
stopped at the end.
"""
import argparse
import http.client
import json
import os
import shutil
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from engine import Daemon, pct  # noqa: E402  (same directory)
from vs_isolate import phase_cgroups  # noqa: E402

SOURCE = "print(input()[::-1])"

SHAPES = {
    "/run": ("/run", {"language": "py3", "source": SOURCE,
                      "tests": [{"stdin": "olleh\n", "expected_stdout": "hello\n"}]}),
    "wait=true": ("/submissions?wait=true", {"language_id": 71, "source_code": SOURCE,
                                             "stdin": "olleh", "expected_output": "hello"}),
    "piston": ("/api/v2/execute", {"language": "python", "version": "*",
                                   "files": [{"content": SOURCE}], "stdin": "olleh\n"}),
}


def ok(shape, status, body):
    if shape == "/run":
        return status == 200 and body.get("status") == "accepted"
    if shape == "wait=true":
        return status == 201 and body["status"]["id"] == 3
    return status == 200 and body["run"]["stdout"] == "hello\n"


def post(conn, path, body):
    conn.request("POST", path, body=json.dumps(body).encode(),
                 headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    return r.status, json.loads(r.read())


def closed_loop(port, clients, jobs, step):
    """clients threads, each on its own keep-alive connection, running
    step(conn) until jobs are done; the latencies in ms and the wall time."""
    lat, lock = [], threading.Lock()
    left = [jobs]
    errors = []

    def client():
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        while True:
            with lock:
                if left[0] == 0 or errors:
                    break
                left[0] -= 1
            t = time.time()
            try:
                good = step(conn)
            except OSError as e:
                good = False
                errors.append(repr(e))
            with lock:
                lat.append((time.time() - t) * 1000)
                if not good:
                    errors.append("a job was not accepted")
        conn.close()

    threads = [threading.Thread(target=client) for _ in range(clients)]
    t0 = time.time()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise SystemExit("benchmark stopped: %s" % errors[0])
    return lat, time.time() - t0


def waiting(d, shape, clients, jobs):
    path, body = SHAPES[shape]
    lat, wall = closed_loop(d.port, clients, jobs,
                            lambda conn: ok(shape, *post(conn, path, body)))
    return {"p50": pct(lat, 50), "p99": pct(lat, 99), "rate": jobs / wall}


def asynchronous(d, clients, jobs):
    """Submit them all (closed loop), then wait for the last one (the
    queue is FIFO) and check every result, 20 tokens a batch."""
    _, body = SHAPES["wait=true"]
    tokens, lock = [], threading.Lock()

    def submit(conn):
        status, answer = post(conn, "/submissions", body)
        with lock:
            tokens.append(answer.get("token"))
        return status == 201

    def get(conn, path):
        conn.request("GET", path)
        r = conn.getresponse()
        return json.loads(r.read())

    t0 = time.time()
    closed_loop(d.port, clients, jobs, submit)
    conn = http.client.HTTPConnection("127.0.0.1", d.port, timeout=120)
    deadline = time.time() + 600
    while get(conn, "/submissions/%s?fields=status_id" % tokens[-1])["status_id"] <= 2:
        if time.time() > deadline:
            raise SystemExit("the last submission did not finish in 10 minutes")
        time.sleep(0.01)
    done = time.time()
    for k in range(0, len(tokens), 20):
        batch = tokens[k:k + 20]
        while True:
            subs = get(conn, "/submissions/batch?fields=status_id&tokens=" + ",".join(batch))
            ids = [s["status_id"] for s in subs["submissions"]]
            if all(i > 2 for i in ids):
                break
            time.sleep(0.01)
        if any(i != 3 for i in ids):
            raise SystemExit("a submission ended with status %s" % ids)
    conn.close()
    return {"rate": jobs / (done - t0)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--jail", default="bwrap")
    ap.add_argument("--workers", type=int, default=os.cpu_count())
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--jobs", type=int, default=400)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()

    phase_cgroups()  # what a v1 migration costs on this host now
    tmp = tempfile.mkdtemp(prefix="goboxd-apis-")
    os.chmod(tmp, 0o711)
    # GOBOXD_BENCH_STORE_DIR=/dev/shm: a store without the disk's syncs
    store_dir = os.environ.get("GOBOXD_BENCH_STORE_DIR", tmp)
    store = os.path.join(store_dir, "goboxd-apis-%d.db" % os.getpid())
    d = Daemon(a.binary, a.jail, tmp, ["--workers", str(a.workers), "--store", store],
               languages=("py3",))
    try:
        for shape in SHAPES:  # warm-up: jails, the store, the page cache
            waiting(d, shape, a.clients, 20)
        asynchronous(d, a.clients, 20)
        results = {s: [] for s in list(SHAPES) + ["async"]}
        for _ in range(a.rounds):  # interleaved, so that drift hits every shape alike
            for shape in SHAPES:
                results[shape].append(waiting(d, shape, a.clients, a.jobs))
            results["async"].append(asynchronous(d, a.clients, a.jobs))
    finally:
        d.stop()
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(store + suffix):
                os.unlink(store + suffix)
        shutil.rmtree(tmp, ignore_errors=True)

    base = sorted(r["rate"] for r in results["/run"])[len(results["/run"]) // 2]
    print("%d workers, %d clients, %d jobs a round, %d rounds; medians of the rounds"
          % (a.workers, a.clients, a.jobs, a.rounds))
    print("%-10s %10s %10s %12s %10s" % ("api", "p50 ms", "p99 ms", "jobs/s", "vs /run"))
    for shape, rs in results.items():
        mid = sorted(rs, key=lambda r: r["rate"])[len(rs) // 2]
        print("%-10s %10s %10s %12.1f %+9.1f%%" % (
            shape, "%.1f" % mid["p50"] if "p50" in mid else "-",
            "%.1f" % mid["p99"] if "p99" in mid else "-", mid["rate"],
            (mid["rate"] / base - 1) * 100))


if __name__ == "__main__":
    main()
