"""A fleet on one PostgreSQL submission store: several real goboxd
(--store postgresql://..., --node-name, --store-lease 3s) share a private
cluster (pgcluster.PgCluster), HAProxy (deploy/haproxy/haproxy.cfg, as
test_fleet.py runs it) in front. Any node takes a Judge0 submission in,
any node runs it (leases), any node answers its token; a node killed
mid-job has its submissions run again elsewhere once their leases end; a
database restart loses nothing; the database's rows say each submission
finished, once.

Skipped unless HAProxy and PostgreSQL's server are installed (setup.sh
installs both). Each node gets a range of sandbox uids of its own
(node_args), apart from the other nodes' and the other xdist workers'.
"""
import http.client
import itertools
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time

import pytest

import pgcluster
from conftest import (UID_SPAN, Daemon, alive, budget, free_port, languages_of, wait_until,
                      xdist_worker)
from test_fleet import local_config, wait_port

pytestmark = [
    pytest.mark.skipif(not shutil.which("haproxy"), reason="haproxy not installed"),
    pytest.mark.skipif(not pgcluster.available(),
                       reason="PostgreSQL's server is not installed (Debian: postgresql)"),
]

PY, BASH = 71, 46
LEASE = "3s"
WORKERS = 2  # per node: three or four nodes on the 2 CPUs of the small machine
ECHO = 'read x; %secho "got $x"'  # bash: the cheapest program that reads stdin


def echo_sub(i, tag="s", nap=""):
    """The i-th distinct submission and the stdout it must print; nap
    (sleep 0.2) makes a job last without costing a CPU."""
    stdin = "%s%04d-%s" % (tag, i, "x" * (i % 7))
    want = "got %s\n" % stdin
    return {"language_id": BASH, "source_code": ECHO % ("sleep %s; " % nap if nap else ""),
            "stdin": stdin, "expected_output": want}, want


_uid_slots = itertools.count()


def uid_base():
    """A range of sandbox uids that no other daemon of this run uses: the
    nodes of one fleet run jobs at once, and jails that shared a uid
    would share RLIMIT_NPROC and a kill of every process of the uid.
    Apart from conftest's ranges (60000 + UID_SPAN * xdist worker)."""
    slot = next(_uid_slots) % 16
    return 200000 + UID_SPAN * (16 * xdist_worker() + slot)


def node_args(url, name, lease=LEASE):
    return ["--store", url, "--node-name", name, "--store-lease", lease,
            "--sandbox-uid-base", str(uid_base()), "--metrics"]


def start_node(url, name, workers=WORKERS):
    d = Daemon(languages=languages_of("bash", "py3"), workers=workers,
               args=node_args(url, name))
    d.name = name
    d.wait_ready()
    return d


def kill_node(d):
    """As a machine dies: SIGKILL the master, then its workers (they
    would follow by PDEATHSIG; here they do not get the time to finish
    anything). Not the process group: the Daemon's is pytest's own."""
    try:
        workers = d.worker_pids()
    except (OSError, AssertionError, KeyError):
        workers = []
    d.proc.send_signal(signal.SIGKILL)
    for p in workers:
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass
    d.proc.wait(timeout=budget(10))
    wait_until(lambda: not any(alive(p) for p in workers), "%s's workers gone" % d.name)


class Fleet:
    """Nodes on one database of a PgCluster, and HAProxy before them."""

    def __init__(self, pg, db):
        self.pg = pg
        self.db = db
        self.url = pg.createdb(db)
        self.nodes = []
        self.proxy = None
        self.front = None
        self.tmp = tempfile.mkdtemp(prefix="goboxd-fleet-")

    def add(self, name):
        d = start_node(self.url, name)
        self.nodes.append(d)
        return d

    def node(self, name):
        return next(d for d in self.nodes if d.name == name)

    def live(self):
        return [d for d in self.nodes if d.proc.poll() is None]

    def start_proxy(self, servers):
        """HAProxy before servers (Daemons); self.front speaks to it."""
        port = free_port()
        cfg = os.path.join(self.tmp, "haproxy.cfg")
        local_config(cfg, port, [(d.name, d.port) for d in servers])
        self.proxy_log = open(os.path.join(self.tmp, "haproxy.log"), "w")
        self.proxy = subprocess.Popen(["haproxy", "-db", "-f", cfg], stdout=self.proxy_log,
                                      stderr=subprocess.STDOUT)
        wait_port(port, self.proxy)
        front = Daemon.__new__(Daemon)
        front.port = port
        self.front = front

        def all_up():  # HAProxy's checks (every 500 ms, rise 2) see every server ready
            try:
                return self.front.get("/readyz", timeout=5)[0] == 200
            except OSError:
                return False
        wait_until(all_up, "HAProxy's servers up", 20)
        time.sleep(1.5)  # rise 2 on every server, not only the first
        return front

    def sql(self, q):
        return self.pg.psql(q, db=self.db)

    def stop(self):
        if self.proxy is not None:
            self.proxy.terminate()
            try:
                self.proxy.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proxy.kill()
                self.proxy.wait()
            self.proxy_log.close()
        errors = []
        for d in self.nodes:
            try:
                d.stop()
            except AssertionError as e:  # a sanitizer's report: after every node stopped
                errors.append("%s: %s" % (d.name, e))
        shutil.rmtree(self.tmp, True)
        assert not errors, "\n".join(errors)


def submit(d, sub):
    status, body = d.post("/submissions", sub, timeout=30)
    assert status == 201, (status, body)
    return body["token"]


def states(d, tokens, timeout=30):
    """{token: (status_id, stdout)} by GET /submissions/batch (20 at a time)
    on d; a token the node does not know maps to None."""
    out = {}
    for k in range(0, len(tokens), 20):
        part = tokens[k:k + 20]
        status, body = d.get("/submissions/batch?fields=token,status_id,stdout&tokens=" +
                             ",".join(part), timeout=timeout)
        assert status == 200, (d.port, status, body)
        for t, s in zip(part, body["submissions"]):
            out[t] = None if s is None else (s["status_id"], s["stdout"])
    return out


def holder_of(fleet, token):
    """The node that leased token's submission (running, state 1), once one has."""
    def claimed():
        row = fleet.sql("SELECT state, node FROM goboxd_submissions WHERE token = '%s'" % token)
        state, node = row.split("|")
        return node if state == "1" and node else None
    return wait_until(claimed, "the submission claimed (state 1)", 20)


@pytest.fixture(scope="module")
def pg():
    with pgcluster.PgCluster() as cluster:
        yield cluster


@pytest.fixture(scope="module")
def fleet(pg):
    """Three nodes on database "fleet", HAProxy before them."""
    f = Fleet(pg, "fleet")
    try:
        for i in range(3):
            f.add("node%d" % (i + 1))
        f.start_proxy(f.nodes)
        yield f
    finally:
        f.stop()


# ---- smaller ones ----------------------------------------------------------


def test_a_token_made_on_one_node_is_answered_by_every_other(fleet):
    node1, node2, node3 = fleet.nodes
    sub, want = echo_sub(1, "cross")
    token = submit(node1, sub)

    def done():
        got = states(node2, [token])[token]
        return got if got and got[0] > 2 else None
    assert wait_until(done, "node2 answers node1's token, finished", 30) == (3, want)
    for d in (node1, node3, fleet.front):
        status, body = d.get("/submissions/%s?fields=status_id,stdout" % token)
        assert (status, body) == (200, {"status_id": 3, "stdout": want}), (d.port, body)
    row = fleet.sql("SELECT state, attempts, finished_count FROM goboxd_submissions"
                    " WHERE token = '%s'" % token)
    assert row == "2|1|1", row


def test_a_waited_for_submission_through_haproxy_is_stored_for_every_node(fleet):
    """wait=true runs where HAProxy sends it, as before a store was shared;
    its token then answers on every node."""
    sub, want = echo_sub(2, "waited")
    status, body = fleet.front.post("/submissions?wait=true&base64_encoded=false", sub,
                                    timeout=60)
    assert status == 201 and body["status"]["id"] == 3 and body["stdout"] == want, body
    for d in fleet.nodes:
        status, shown = d.get("/submissions/%s?fields=status_id,stdout" % body["token"])
        assert (status, shown) == (200, {"status_id": 3, "stdout": want}), (d.name, shown)
    row = fleet.sql("SELECT state, attempts, finished_count FROM goboxd_submissions"
                    " WHERE token = '%s'" % body["token"])
    assert row == "2|0|1", row


@pytest.mark.slow
def test_what_waits_in_the_database_shows_on_every_node(fleet):
    """More submissions than the fleet has workers: the rest wait in the
    database, and every node's /info, /metrics and Judge0's /workers count
    them (the fleet's queue, not a node's)."""
    workers = sum(d.workers for d in fleet.nodes)
    tokens = [submit(fleet.nodes[i % len(fleet.nodes)],
                     {"language_id": BASH, "source_code": "sleep 3"})
              for i in range(workers + 3)]

    def waiting_everywhere():
        for d in fleet.nodes:
            store = d.get("/info")[1]["store"]
            size = d.get("/workers")[1][0]["size"]
            metrics = d.get("/metrics")[1]
            if not (store["queued"] >= 1 and store["oldest_queued_age_ms"] > 0
                    and size >= 1 and "goboxd_store_queued 0\n" not in metrics):
                return None
        return True
    wait_until(waiting_everywhere, "every node counts what waits", 10)
    assert wait_until(lambda: all(states(fleet.nodes[0], tokens)[t][0] == 3 for t in tokens),
                      "all finished", 60)


def test_info_and_metrics_list_every_node_with_a_fresh_heartbeat(fleet):
    names = {d.name for d in fleet.nodes}
    for d in fleet.nodes:
        def seen():
            store = d.get("/info")[1].get("store") or {}
            listed = {n["name"]: n for n in store.get("nodes", [])}
            return store if names <= set(listed) and all(
                listed[n]["heartbeat_age_ms"] < 10000 for n in names) else None
        store = wait_until(seen, "%s's /info lists %s, each beating" % (d.name, sorted(names)),
                           20)
        assert (store["backend"], store["shared"], store["node"], store["up"]) == \
            ("postgresql", True, d.name, True), store
        for n in store["nodes"]:
            if n["name"] in names:
                assert n["workers"] == WORKERS and n["running"] >= 0, store
        for k in ("queued", "running", "oldest_queued_age_ms"):
            assert isinstance(store[k], int) and store[k] >= 0, store
        status, text = d.get("/metrics")
        assert status == 200
        lines = text.splitlines()
        assert "goboxd_store_up 1" in lines, text
        for m in ("goboxd_store_queued", "goboxd_store_running",
                  "goboxd_store_oldest_queued_seconds"):
            assert any(l.startswith(m + " ") for l in lines), m
        for n in names:
            assert any(l.startswith('goboxd_store_node_heartbeat_age_seconds{node="%s"} ' % n)
                       for l in lines), (n, [l for l in lines if "heartbeat" in l])


def test_the_database_down_is_503_never_a_lost_201(fleet, pg):
    """/readyz is 503 while the database is stopped and 200 once it is back;
    a POST meanwhile is refused (503), and nothing it sent turns up later."""
    node1, node2 = fleet.nodes[:2]
    rows_before = int(fleet.sql("SELECT count(*) FROM goboxd_submissions"))
    pg.stop()
    try:
        for d in fleet.nodes:
            wait_until(lambda: d.get("/readyz")[0] == 503, "%s's /readyz 503" % d.name, 20)
        status, body = node1.get("/readyz")
        assert body["store"]["ok"] is False, body
        store = wait_until(lambda: (lambda s: s if s and s["up"] is False else None)(
            node2.get("/info")[1].get("store")), "node2's /info: the store down", 10)
        assert store["up"] is False, store
        assert "goboxd_store_up 0" in node2.get("/metrics")[1].splitlines()
        refused = []
        for i, d in enumerate([node1, node2, node1]):
            status, body = d.post("/submissions", echo_sub(i, "down")[0], timeout=30)
            refused.append(status)
            assert status == 503, (d.name, status, body)
        # the rest of the API stays up
        assert node1.get("/healthz")[0] == 200
        # every idle worker looks at the store four times a second: each
        # process says the same failure once, not at every look
        time.sleep(2)
        down = [l for l in node1.log_lines() if l.get("level") == "warn"
                and l.get("msg", "").startswith("the submission store:")]
        per_pid = {}
        for l in down:
            per_pid[l.get("pid")] = per_pid.get(l.get("pid"), 0) + 1
        assert down and max(per_pid.values()) <= 3, per_pid
    finally:
        if not pg.running:
            pg.start()
    for d in fleet.nodes:
        wait_until(lambda: d.get("/readyz")[0] == 200, "%s's /readyz 200 again" % d.name, 30)
    assert any(l.get("msg") == "the submission store answers again"
               for l in node1.log_lines())
    assert int(fleet.sql("SELECT count(*) FROM goboxd_submissions")) == rows_before, \
        "a refused POST was stored after all"
    sub, want = echo_sub(7, "after")
    token = submit(node2, sub)

    def done():
        got = states(node1, [token])[token]
        return got if got and got[0] > 2 else None
    assert wait_until(done, "a submission after the database came back", 30) == (3, want)
    # HAProxy took every node back
    wait_until(lambda: fleet.front.get("/readyz", timeout=5)[0] == 200, "HAProxy ready", 20)


@pytest.mark.slow
def test_a_killed_nodes_submission_is_finished_by_another_after_its_lease(pg):
    f = Fleet(pg, "lease")
    try:
        a, b = f.add("leaseA"), f.add("leaseB")
        src = "import time\ntime.sleep(5)\nprint('slept ' + input())\n"
        token = submit(a, {"language_id": PY, "source_code": src, "stdin": "well",
                           "wall_time_limit": 15})
        holder = holder_of(f, token)
        victim = f.node(holder)
        survivor = b if victim is a else a
        # it runs there: killed now, its lease (3 s) is left to end
        time.sleep(0.5)
        assert f.sql("SELECT state FROM goboxd_submissions WHERE token = '%s'" % token) == "1"
        t_kill = time.time()
        kill_node(victim)

        def done():
            st, body = survivor.get("/submissions/%s?fields=status_id,stdout" % token)
            assert st == 200, body
            return body if body["status_id"] > 2 else None
        body = wait_until(done, "%s finishes what %s held" % (survivor.name, victim.name), 60)
        took = time.time() - t_kill
        assert body == {"status_id": 3, "stdout": "slept well\n"}, body
        # not before the lease ended (renewed every second, 3 s long: 2 s
        # after the kill at the soonest), plus the 5 s it sleeps again
        assert took >= 2 + 5 - 1, took
        row = f.sql("SELECT state, attempts, finished_by, node FROM goboxd_submissions"
                    " WHERE token = '%s'" % token)
        assert row == "2|2|%s|%s" % (survivor.name, survivor.name), row
        assert f.sql("SELECT finished_count FROM goboxd_submissions WHERE token = '%s'"
                     % token) == "1"
        print("%s killed; %s finished it %.1f s later" % (victim.name, survivor.name, took))
    finally:
        f.stop()


@pytest.mark.slow
def test_a_paused_node_that_lost_its_lease_does_not_overwrite_the_result(pg):
    """A node stopped (SIGSTOP: a long pause, not a death) past its lease
    loses the submission to another node, which finishes it; when the
    first node goes on, its result comes second and is dropped: written
    once, by whoever finished first, and no second callback."""
    f = Fleet(pg, "pause")
    stopped = []
    try:
        a, b = f.add("pauseA"), f.add("pauseB")
        src = "import time\ntime.sleep(2)\nprint('done ' + input())\n"
        token = submit(a, {"language_id": PY, "source_code": src, "stdin": "once",
                           "wall_time_limit": 15})
        paused = f.node(holder_of(f, token))
        other = b if paused is a else a
        stopped = [paused.proc.pid] + paused.worker_pids()
        for p in stopped:
            os.kill(p, signal.SIGSTOP)

        def finished_by():
            row = f.sql("SELECT state, finished_by FROM goboxd_submissions"
                        " WHERE token = '%s'" % token)
            return row.split("|")[1] if row.startswith("2|") else None
        assert wait_until(finished_by, "the other node finishes it", 60) == other.name
        for p in stopped:
            os.kill(p, signal.SIGCONT)
        stopped = []
        paused.wait_log(lambda l: "another node finished it first" in l.get("msg", ""),
                        "the paused node's result dropped", timeout=30)
        row = f.sql("SELECT state, attempts, finished_by, finished_count FROM"
                    " goboxd_submissions WHERE token = '%s'" % token)
        assert row == "2|2|%s|1" % other.name, row
        status, body = paused.get("/submissions/%s?fields=status_id,stdout" % token)
        assert body == {"status_id": 3, "stdout": "done once\n"}, body
    finally:
        for p in stopped:
            os.kill(p, signal.SIGCONT)
        f.stop()


def test_finished_submissions_go_after_the_ttl(pg):
    """--submission-ttl in a shared store: a finished submission is removed
    (every node's worker 0 removes them)."""
    url = pg.createdb("ttl")
    d = Daemon(languages=languages_of("bash"), workers=1,
               args=node_args(url, "ttl") + ["--submission-ttl", "1s"])
    try:
        d.wait_ready()
        sub, want = echo_sub(1, "ttl")
        token = submit(d, sub)
        assert wait_until(lambda: (lambda r: r if r and r[0] > 2 else None)(
            states(d, [token])[token]), "finished", 30) == (3, want)
        wait_until(lambda: d.get("/submissions/%s" % token)[0] == 404, "removed after 1 s", 15)
        assert pg.psql("SELECT count(*) FROM goboxd_submissions", db="ttl") == "0"
    finally:
        d.stop()


def test_a_newer_schema_is_refused_at_start(pg):
    """A database whose goboxd_meta says schema_version 999 (a newer goboxd
    wrote it): goboxd refuses to start, saying so, with a nonzero exit."""
    url = pg.createdb("future")
    pg.psql("CREATE TABLE goboxd_meta (key text PRIMARY KEY, value text NOT NULL);"
            " INSERT INTO goboxd_meta VALUES ('schema_version', '999')", db="future")
    tmp = tempfile.mkdtemp(prefix="goboxd-e2e-")
    try:
        os.chmod(tmp, 0o711)
        binary = os.environ.get("GOBOXD_BIN", os.path.join(
            os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
            "build", "goboxd"))
        cmd = [binary, "--listen", "127.0.0.1", "--port", str(free_port()), "--workers", "1",
               "--languages-dir", languages_of("bash"), "--jail-dir", os.path.join(tmp, "jails"),
               "--jail", os.environ.get("GOBOXD_TEST_JAIL", "bwrap"),
               "--nsjail-path", os.environ.get("GOBOXD_NSJAIL", "/usr/local/bin/nsjail")]
        cmd += node_args(url, "future")
        env = {k: v for k, v in os.environ.items() if not k.startswith("GOBOXD_")}
        try:
            r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                               timeout=budget(30))
        except subprocess.TimeoutExpired as e:
            raise AssertionError("goboxd started on a database of schema 999:\n%s"
                                 % (e.output or b"").decode(errors="replace")[-3000:])
        out = r.stdout.decode(errors="replace")
        assert r.returncode != 0, out[-3000:]
        assert "schema" in out and "999" in out, out[-3000:]
        # and it left the newer schema alone
        assert pg.psql("SELECT value FROM goboxd_meta WHERE key = 'schema_version'",
                       db="future") == "999"
    finally:
        shutil.rmtree(tmp, True)


# ---- the big one -----------------------------------------------------------

N = 500
CLIENTS = 4


@pytest.mark.slow
@pytest.mark.alone
def test_500_submissions_through_a_node_kill_a_new_node_and_a_database_restart(pg):
    """500 asynchronous submissions through HAProxy from 4 clients; while
    they run, one node is SIGKILLed, a fourth node joins the store and the
    database restarts. Every one finishes, Accepted with its own stdout;
    every surviving node answers every token; every row is done, once."""
    f = Fleet(pg, "big")
    t0 = time.time()
    try:
        for i in range(3):
            f.add("node%d" % (i + 1))
        f.start_proxy(f.nodes)
        t_fleet = time.time() - t0
        # each job sleeps 0.2 s: 6 workers run 30 a second at most, and the
        # clients post some 40 a second, so that a backlog waits in the store
        # (which the new node takes its share of) whatever the machine
        cases = [echo_sub(i, nap="0.2") for i in range(N)]
        tokens = [None] * N
        lock = threading.Lock()
        posted = [0]
        retried = {"503": 0, "ambiguous": 0}
        failures = []

        def client(k):
            for i in range(k, N, CLIENTS):
                deadline = time.time() + budget(60)
                while True:
                    try:
                        status, body = f.front.post("/submissions", cases[i][0], timeout=30)
                    except (OSError, http.client.HTTPException) as e:
                        status, body = None, repr(e)
                    if status == 201:
                        tokens[i] = body["token"]
                        with lock:
                            posted[0] += 1
                        break
                    with lock:
                        # 503: refused, stored nowhere; else (a 502, a reset) it may
                        # have been stored: a second row, which must finish too
                        retried["503" if status == 503 else "ambiguous"] += 1
                    if time.time() > deadline or (status is not None and status < 500):
                        with lock:
                            failures.append((i, status, body))
                        return
                    time.sleep(0.25)
                time.sleep(0.1)  # spread the posts over the node kill and the restart

        threads = [threading.Thread(target=client, args=(k,), daemon=True)
                   for k in range(CLIENTS)]
        t_post = time.time()
        for t in threads:
            t.start()

        # mid-load: kill a node that runs something
        def running_node():
            if posted[0] < N // 5:
                return None
            row = f.sql("SELECT node FROM goboxd_submissions WHERE state = 1 AND node IN"
                        " ('node1', 'node2', 'node3') ORDER BY id LIMIT 1")
            return row or None
        victim = f.node(wait_until(running_node, "a fifth posted, a node running one", 60))
        done_at_kill = int(f.sql("SELECT count(*) FROM goboxd_submissions WHERE state = 2"))
        t_kill = time.time()
        kill_node(victim)
        node4 = f.add("node4")
        t_node4 = time.time()
        queued_at_node4 = int(f.sql("SELECT count(*) FROM goboxd_submissions WHERE state = 0"))

        # and the database restarts while the posts still come
        wait_until(lambda: posted[0] >= (3 * N) // 5 or not any(t.is_alive() for t in threads),
                   "three fifths posted", 120)
        done_at_restart = int(f.sql("SELECT count(*) FROM goboxd_submissions WHERE state = 2"))
        t_restart = time.time()
        pg.restart()
        t_restarted = time.time()

        for t in threads:
            t.join(timeout=budget(120))
        assert not any(t.is_alive() for t in threads), "a client never finished posting"
        assert not failures, failures[:5]
        assert None not in tokens and len(set(tokens)) == N
        t_posted = time.time()

        # every one finishes (asked through HAProxy, the unfinished ones only)
        want = {tokens[i]: (3, cases[i][1]) for i in range(N)}
        left = list(tokens)
        deadline = t_post + budget(300)
        while left and time.time() < deadline:
            try:
                got = states(f.front, left)
                left = [t for t in left if not (got[t] and got[t][0] > 2)]
            except (OSError, http.client.HTTPException, AssertionError):
                pass  # HAProxy between checks; asked again
            if left:
                time.sleep(1)
        t_done = time.time()
        assert not left, "%d of %d not finished in %d s: %s" % (
            len(left), N, budget(300), left[:5])

        # every surviving node answers every token itself, each right
        survivors = f.live()
        assert victim not in survivors and node4 in survivors and len(survivors) == 3
        for d in survivors:
            got = states(d, tokens)
            wrong = [(t, got[t], want[t]) for t in tokens if got[t] != want[t]]
            assert not wrong, "%s: %d wrong, e.g. %s" % (d.name, len(wrong), wrong[:3])

        # the database: every row finished, each once
        count, unfinished = f.sql("SELECT count(*), count(*) FILTER (WHERE state <> 2)"
                                  " FROM goboxd_submissions").split("|")
        assert int(unfinished) == 0, f.sql("SELECT token, state, attempts, node FROM"
                                           " goboxd_submissions WHERE state <> 2 LIMIT 10")
        stored = set(f.sql("SELECT token FROM goboxd_submissions").split())
        assert set(tokens) <= stored
        # rows beyond the tokens: POSTs whose answer was lost (the killed
        # node's, those HAProxy retried on another), stored and finished too
        extra = int(count) - N
        assert 0 <= extra <= retried["ambiguous"] + CLIENTS, (extra, retried)
        twice = f.sql("SELECT token, finished_count, finished_by FROM goboxd_submissions"
                      " WHERE finished_count <> 1 LIMIT 10")
        assert not twice, "finished more than once (or never):\n" + twice
        by_node = dict(line.split("|") for line in f.sql(
            "SELECT finished_by, count(*) FROM goboxd_submissions GROUP BY 1 ORDER BY 1"
        ).splitlines())
        attempts = dict(line.split("|") for line in f.sql(
            "SELECT attempts, count(*) FROM goboxd_submissions GROUP BY 1 ORDER BY 1"
        ).splitlines())
        if queued_at_node4 >= 4 * WORKERS:
            assert int(by_node.get("node4", 0)) >= 1, \
                ("node4 joined before %d waiting and finished none" % queued_at_node4,
                 by_node)
        print("fleet up in %.1f s; %d posted in %.1f s (%d retried after a 503, %d "
              "ambiguous, %d extra rows); %s killed at %.1f s (%d done), node4 ready %.1f s "
              "later (%d waiting); database restarted at %.1f s (%d done) in %.1f s; all "
              "finished at %.1f s (%.1f/s); finished by %s; attempts %s"
              % (t_fleet, N, t_posted - t_post, retried["503"], retried["ambiguous"], extra,
                 victim.name, t_kill - t_post, done_at_kill, t_node4 - t_kill, queued_at_node4,
                 t_restart - t_post, done_at_restart, t_restarted - t_restart,
                 t_done - t_post, N / (t_done - t_post), json.dumps(by_node),
                 json.dumps(attempts)))
    finally:
        if not pg.running:
            pg.start()
        f.stop()
