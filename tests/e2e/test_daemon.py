"""The daemon's life: endpoints, HTTP handling, workers, reload, queue, stop."""
import fcntl
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time

import pytest

from conftest import (LANGUAGES, TOP, Daemon, budget, children, free_port, lang_dir,
                      sandbox_uid_base, small, wait_until)

HELLO = {"language": "py3", "source": "print(input())\n",
         "tests": [{"stdin": "hi\n", "expected_stdout": "hi\n"}]}


def slow(seconds):
    return {"language": "py3", "source": "import time\ntime.sleep(%s)\nprint('done')\n" % seconds,
            "tests": [{"stdin": "", "expected_stdout": "done\n"}]}


def raw(port, data, timeout=10, until_closed=True):
    """Send bytes on one connection and read what comes back."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.sendall(data)
    out = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            out += chunk
            if not until_closed and out.count(b"HTTP/1.1") >= until_closed:
                break
    except socket.timeout:
        pass
    s.close()
    return out


def responses(blob):
    """Split a byte stream of HTTP responses into (status, headers, body)."""
    out = []
    while blob:
        head, _, rest = blob.partition(b"\r\n\r\n")
        lines = head.decode().split("\r\n")
        status = int(lines[0].split()[1])
        headers = {l.split(":", 1)[0].lower(): l.split(":", 1)[1].strip() for l in lines[1:]}
        n = int(headers.get("content-length", "0"))
        out.append((status, headers, rest[:n]))
        blob = rest[n:]
    return out


@pytest.fixture(scope="module")
def daemon():
    d = Daemon(args=["--metrics", "--read-timeout", "1s"])
    yield d
    d.stop()


def test_healthz(daemon):
    assert daemon.get("/healthz") == (200, {"status": "ok"})


@pytest.mark.slow
def test_readyz_lists_every_language(daemon):
    body = daemon.wait_ready()
    assert body["status"] == "ok"
    assert body["nsjail"]["ok"] is True
    names = sorted(f[:-5] for f in os.listdir(LANGUAGES) if f.endswith(".yaml"))
    assert sorted(body["languages"]) == names
    assert all(v["ok"] and v["version"] for v in body["languages"].values())


def test_info_shape(daemon):
    status, info = daemon.get("/info")
    assert status == 200
    assert info["build_info"]["version"] and info["build_info"]["commit"]
    assert "gcc" in info["build_info"]["compiler"]
    assert info["nsjail"]["driver"] == daemon.jail and info["nsjail"]["path"]
    ids = [l["id"] for l in info["languages"]]
    assert "py3" in ids and "cpp" in ids
    py3 = [l for l in info["languages"] if l["id"] == "py3"][0]
    assert py3["run_limits"]["wall_time_s"] > 0 and py3["run_limits"]["memory_kb"] > 0
    for key in ("max_source_bytes", "max_tests", "max_concurrent_jobs", "max_queue"):
        assert key in info["limits"]
    for key in ("in_flight_jobs", "jobs_total", "jobs_failed_internal",
                "last_internal_error_at", "disk_free_bytes_jail_dir", "queued_jobs",
                "latency_ms"):
        assert key in info["stats"]
    assert len(info["stats"]["workers"]) == 2


def test_run_is_counted_and_logged(daemon):
    before = daemon.get("/info")[1]["stats"]["jobs_total"]
    status, body, headers = daemon.request("POST", "/run", HELLO,
                                           headers={"X-Request-Id": "abc-123"})
    assert status == 200 and body["status"] == "accepted"
    assert headers["X-Request-Id"] == "abc-123"
    after = daemon.get("/info")[1]["stats"]
    assert after["jobs_total"] == before + 1
    assert after["latency_ms"]["samples"] >= 1
    line = daemon.wait_log(lambda l: l.get("request_id") == "abc-123",
                           "the access-log line of request abc-123")
    for key in ("method", "path", "status", "duration_ms", "language", "queue_ms",
                "build_ms", "run_ms", "cpu_ms", "job_status"):
        assert key in line, line
    assert line["language"] == "py3" and line["status"] == 200


def test_metrics(daemon):
    daemon.post("/run", HELLO)
    status, text = daemon.get("/metrics")
    assert status == 200
    for name in ("goboxd_active_jobs", "goboxd_max_active_jobs", "goboxd_queue_length",
                 "goboxd_max_queue_length", "goboxd_jobs_total{language=\"py3\"",
                 "goboxd_job_duration_seconds_bucket"):
        assert name in text


def test_not_found_and_method_not_allowed(daemon):
    status, body = daemon.get("/nope")
    assert status == 404 and body["error"]["code"] == "not_found"
    status, body, headers = daemon.request("GET", "/run")
    assert status == 405 and body["error"]["code"] == "method_not_allowed"
    assert headers["Allow"] == "POST"
    status, body, _ = daemon.request("POST", "/healthz", {})
    assert status == 405


def test_bad_json_and_unknown_language(daemon):
    status, body = daemon.post("/run", b"{not json")
    assert status == 400 and body["error"]["code"] == "invalid_json"
    status, body = daemon.post("/run", dict(HELLO, language="cobol-85"))
    assert status == 400 and body["error"]["code"] == "unknown_language"
    status, body = daemon.post("/run", dict(HELLO, source_filename="../../etc/passwd"))
    assert status == 400 and body["error"]["code"] == "invalid_filename"
    status, body = daemon.post("/run", dict(HELLO, tests=[]))
    assert status == 400


def test_oversize_body_is_413(daemon):
    head = (b"POST /run HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: 999999999\r\n\r\n")
    (status, _, body), = responses(raw(daemon.port, head))
    assert status == 413
    assert json.loads(body)["error"]["code"] == "body_too_large"


def test_malformed_request_is_400(daemon):
    (status, _, body), = responses(raw(daemon.port, b"GARBAGE\x01 / HTTP/1.1\r\n\r\n"))
    assert status == 400
    assert "error" in json.loads(body)


def test_huge_headers_are_431(daemon):
    req = b"GET /healthz HTTP/1.1\r\nX-Big: " + b"a" * 100000 + b"\r\n\r\n"
    (status, _, _), = responses(raw(daemon.port, req))
    assert status == 431


def test_pipelined_requests_answered_in_order(daemon):
    job = json.dumps(HELLO).encode()
    req = (b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
           b"POST /run HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s"
           b"GET /nope HTTP/1.1\r\nHost: x\r\n\r\n"
           b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n") % (len(job), job)
    got = responses(raw(daemon.port, req, timeout=60))
    assert [r[0] for r in got] == [200, 200, 404, 200]
    assert json.loads(got[1][2])["status"] == "accepted"


def test_keep_alive_reuses_connection(daemon):
    s = socket.create_connection(("127.0.0.1", daemon.port), timeout=30)
    job = json.dumps(HELLO).encode()
    for _ in range(3):
        s.sendall(b"POST /run HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s"
                  % (len(job), job))
        buf = b""
        while b"\r\n\r\n" not in buf:
            buf += s.recv(65536)
        head, _, body = buf.partition(b"\r\n\r\n")
        n = int([l for l in head.split(b"\r\n") if l.lower().startswith(b"content-length")][0]
                .split(b":")[1])
        while len(body) < n:
            body += s.recv(65536)
        assert head.startswith(b"HTTP/1.1 200") and json.loads(body)["status"] == "accepted"
    s.close()


def test_slow_client_gets_408(daemon):
    s = socket.create_connection(("127.0.0.1", daemon.port), timeout=10)
    s.sendall(b"POST /run HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
    start = time.time()
    data = b""
    while True:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    s.close()
    assert data.startswith(b"HTTP/1.1 408")
    assert time.time() - start < 5


def test_health_answers_while_jobs_run(daemon):
    results = []
    threads = [threading.Thread(target=lambda: results.append(daemon.post("/run", slow(2))))
               for _ in range(2)]
    for t in threads:
        t.start()
    daemon.wait_jobs(running=2)
    start = time.time()
    assert daemon.get("/healthz")[0] == 200
    assert daemon.get("/info")[0] == 200
    # both jobs hold their workers for 2 s: an answer that waited for them
    # would come 1.5 s later
    assert time.time() - start < 1.4
    for t in threads:
        t.join()
    assert len(results) == 2
    assert all(r[0] == 200 and r[1]["status"] == "accepted" for r in results)


def test_killed_worker_is_replaced(daemon):
    pids = daemon.worker_pids()
    os.kill(pids[0], signal.SIGKILL)
    deadline = time.time() + 10
    while time.time() < deadline:
        now = daemon.worker_pids()
        if len(now) == 2 and pids[0] not in now:
            break
        time.sleep(0.1)
    assert pids[0] not in daemon.worker_pids() and len(daemon.worker_pids()) == 2
    for _ in range(4):
        status, body = daemon.post("/run", HELLO)
        assert status == 200 and body["status"] == "accepted"


@pytest.mark.slow
def test_sighup_reload_drops_no_request(daemon):
    failures = []
    done = threading.Event()

    def client():
        while not done.is_set():
            try:
                status, body = daemon.post("/run", HELLO)
                if status != 200 or body.get("status") != "accepted":
                    failures.append((status, body))
                status, _ = daemon.get("/healthz")
                if status != 200:
                    failures.append((status, "healthz"))
            except OSError as e:  # a dropped connection is a failure too
                failures.append(repr(e))

    threads = [threading.Thread(target=client) for _ in range(3)]
    for t in threads:
        t.start()
    before = set(daemon.worker_pids())
    # many reloads close together: an old worker often exits right after
    # handing a connection to the master
    for _ in range(10):
        time.sleep(0.3)
        daemon.proc.send_signal(signal.SIGHUP)
    time.sleep(1.0)
    done.set()
    for t in threads:
        t.join()
    assert failures == []
    after = set(daemon.worker_pids())
    assert not (before & after), "the old generation should be gone"
    assert daemon.proc.poll() is None


@pytest.mark.slow
def test_nothing_left_behind(daemon):
    assert daemon.leftovers() == []
    assert daemon.step_cgroups() == []


def test_readyz_is_503_with_the_failing_language():
    d = lang_dir()
    with open(os.path.join(d, "ghost.yaml"), "w") as f:
        f.write("id: ghost\nname: Ghost\nsource_filename: a.gh\n"
                "probe: [/usr/bin/ghost-lang, --version]\n"
                "run:\n  cmd: /usr/bin/ghost-lang\n  args: [\"{{source}}\"]\n")
    daemon = Daemon(languages=d)
    try:
        deadline = time.time() + 60
        while time.time() < deadline:
            status, body = daemon.get("/readyz")
            if body["languages"]["ghost"].get("error") != "probes are running":
                break
            time.sleep(0.1)
        assert status == 503 and body["status"] == "degraded"
        assert body["languages"]["py3"]["ok"] is True
        assert body["languages"]["ghost"]["ok"] is False
        assert "/usr/bin/ghost-lang" in body["languages"]["ghost"]["error"]
        assert body["nsjail"]["ok"] is True
    finally:
        daemon.stop()
        shutil.rmtree(d)


# ---- daemons of their own ---------------------------------------------


def test_sighup_adds_language_and_refuses_broken_table():
    d = lang_dir()
    daemon = Daemon(languages=d)
    try:
        status, body = daemon.post("/run", dict(HELLO, language="py3b"))
        assert status == 400 and body["error"]["code"] == "unknown_language"
        with open(os.path.join(d, "py3.yaml")) as f:
            text = f.read()
        # a copy takes neither the names, nor the Codize runtime, nor the
        # Judge0 id and Piston names of the original
        text = text.replace("id: py3", "id: py3b").replace("aliases:", "# aliases:")
        text = text.replace("codize:\n  runtime: python\n", "")
        text = re.sub(r"^(judge0|piston):\n(  .*\n)+", "", text, flags=re.M)
        assert "codize" not in text and "judge0" not in text and "piston" not in text
        with open(os.path.join(d, "py3b.yaml"), "w") as f:
            f.write(text)
        daemon.proc.send_signal(signal.SIGHUP)
        deadline = time.time() + 10
        while time.time() < deadline:
            ids = [l["id"] for l in daemon.get("/info")[1]["languages"]]
            if "py3b" in ids:
                break
            time.sleep(0.1)
        assert "py3b" in ids
        status, body = daemon.post("/run", dict(HELLO, language="py3b"))
        assert status == 200 and body["status"] == "accepted"
        assert "py3b" in daemon.wait_ready()["languages"]

        with open(os.path.join(d, "zz.yaml"), "w") as f:
            f.write("id: zz\nname: Broken\nsource_filename: a.txt\nprobe: [/usr/bin/true]\n"
                    "run:\n  cmd: /usr/bin/true\n  bogus: 1\n")
        daemon.proc.send_signal(signal.SIGHUP)
        refused = daemon.wait_log(lambda l: "reload refused" in l.get("msg", ""),
                                  "the reload refused")
        assert "zz.yaml:7" in refused["msg"], refused
        status, body = daemon.post("/run", dict(HELLO, language="py3b"))
        assert status == 200 and body["status"] == "accepted"
        assert "zz" not in [l["id"] for l in daemon.get("/info")[1]["languages"]]
    finally:
        daemon.stop()
        shutil.rmtree(d)


def test_broken_table_at_startup_fails_loudly():
    d = lang_dir()
    with open(os.path.join(d, "bad.yaml"), "w") as f:
        f.write("id: bad\nname: Bad\nsource_filename: a.txt\nprobe: [/usr/bin/true]\n"
                "run:\n  cmd: /usr/bin/true\n  limits: { memory_kb: -5 }\n")
    bin_ = os.environ.get("GOBOXD_BIN")
    p = subprocess.run([bin_, "--languages-dir", d, "--check"], capture_output=True, text=True)
    shutil.rmtree(d)
    assert p.returncode != 0
    assert "bad.yaml:7" in p.stderr, p.stderr


def test_graceful_stop_finishes_running_job():
    daemon = Daemon(languages=small(), workers=1)
    result = []
    t = threading.Thread(target=lambda: result.append(daemon.post("/run", slow(1.5))))
    t.start()
    daemon.wait_jobs(running=1)
    rc = daemon.stop(signal.SIGTERM)
    t.join()
    assert rc == 0
    assert result and result[0][0] == 200 and result[0][1]["status"] == "accepted"
    assert daemon.leftovers() == []


def test_an_interrupt_to_the_whole_process_group_stops_cleanly():
    """^C in a terminal signals every process of goboxd's group at once,
    the workers' disk keepers too, which the workers still need to remove
    their jails' disks as they stop."""
    daemon = Daemon(languages=small(), workers=2, own_group=True)
    try:
        for _ in range(4):
            status, body = daemon.post("/run", HELLO)
            assert status == 200 and body["status"] == "accepted", body
        os.killpg(daemon.proc.pid, signal.SIGINT)
        daemon.proc.wait(timeout=budget(30))
    finally:
        rc = daemon.stop()
    assert rc == 0
    said = [l for l in daemon.log_lines() if l.get("level") in ("warn", "error")]
    assert said == [], said
    assert daemon.job_dirs() == []


def test_what_is_sent_to_the_whole_group_never_kills_a_starting_jail():
    """Every process of goboxd's group gets what is sent to the group (a ^C
    in a terminal, logrotate's SIGUSR1 to all of goboxd), a jail's launcher
    too in the instant between its fork and its setsid: it takes none of
    it. Here a SIGUSR1, which goboxd's own processes ignore and whose
    default ends a process, every 0.2 ms while jails start one after the
    other (one job each)."""
    daemon = Daemon(languages=small(), workers=1, own_group=True,
                    args=["--jobs-per-jail", "1"])
    stop = threading.Event()

    def hammer():
        while not stop.is_set():
            os.killpg(daemon.proc.pid, signal.SIGUSR1)
            time.sleep(0.0002)
    sender = threading.Thread(target=hammer)
    try:
        sender.start()
        for _ in range(40):
            status, body = daemon.post("/run", HELLO)
            assert status == 200 and body["status"] == "accepted", body
    finally:
        stop.set()
        sender.join()
        rc = daemon.stop()
    assert rc == 0
    said = [l for l in daemon.log_lines() if l.get("level") in ("warn", "error")]
    assert said == [], said


def test_graceful_stop_runs_queued_jobs_and_refuses_new_ones():
    daemon = Daemon(languages=small(), workers=1, args=["--max-concurrency", "1"])
    results = []
    lock = threading.Lock()

    def go():
        r = daemon.post("/run", slow(1))
        with lock:
            results.append(r)

    threads = [threading.Thread(target=go) for _ in range(2)]
    threads[0].start()
    daemon.wait_jobs(running=1)
    threads[1].start()
    daemon.wait_jobs(queued=1)
    daemon.proc.send_signal(signal.SIGTERM)
    daemon.wait_log(lambda l: l.get("msg") == "graceful stop requested", "the stop begun")
    late = daemon.request("POST", "/run", slow(0))
    for t in threads:
        t.join()
    assert daemon.stop() == 0
    assert [r[0] for r in results] == [200, 200], results
    assert all(r[1]["status"] == "accepted" for r in results)
    assert late[0] == 503 and late[1]["error"]["code"] == "shutting_down"
    assert "Retry-After" in late[2]


@pytest.mark.slow
def test_queue_full_and_queue_timeout_are_503():
    daemon = Daemon(languages=small(), workers=1,
                    args=["--max-concurrency", "1", "--max-queue-size", "1",
                          "--queue-timeout", "30s"])
    try:
        results = []
        lock = threading.Lock()

        def go():
            r = daemon.request("POST", "/run", slow(1.5))
            with lock:
                results.append(r)

        threads = [threading.Thread(target=go) for _ in range(4)]
        for t in threads:
            t.start()
            time.sleep(0.15)
        for t in threads:
            t.join()
        codes = sorted(r[0] for r in results)
        assert codes.count(200) == 2, codes
        assert codes.count(503) == 2, codes
        full = [r for r in results if r[0] == 503][0]
        assert full[1]["error"]["code"] == "queue_full"
        assert int(full[2]["Retry-After"]) >= 1
        assert daemon.get("/info")[1]["stats"]["queue_rejected_full"] == 2
    finally:
        daemon.stop()

    daemon = Daemon(languages=small(), workers=1,
                    args=["--max-concurrency", "1", "--queue-timeout", "500ms"])
    try:
        results = []
        threads = [threading.Thread(target=lambda: results.append(
            daemon.request("POST", "/run", slow(2)))) for _ in range(2)]
        for t in threads:
            t.start()
            time.sleep(0.2)
        for t in threads:
            t.join()
        codes = sorted(r[0] for r in results)
        assert codes == [200, 503], codes
        late = [r for r in results if r[0] == 503][0]
        assert late[1]["error"]["code"] == "queue_timeout"
    finally:
        daemon.stop()


def test_max_concurrency_one_never_overlaps_jobs():
    daemon = Daemon(languages=small(), workers=2, args=["--max-concurrency", "1"])
    src = "import time\nprint(time.time())\ntime.sleep(0.3)\nprint(time.time())\n"
    try:
        results = []
        threads = [threading.Thread(target=lambda: results.append(
            daemon.post("/run", {"language": "py3", "source": src, "tests": [{}]})))
            for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(results) == 4
        assert all(r[0] == 200 and r[1]["status"] == "accepted" for r in results)
        spans = sorted(tuple(map(float, r[1]["tests"][0]["stdout"].split())) for r in results)
        for (_, end), (start, _) in zip(spans, spans[1:]):
            assert start >= end, spans
    finally:
        daemon.stop()


@pytest.mark.skipif(not shutil.which("systemd-socket-activate"),
                    reason="systemd-socket-activate not installed")
def test_systemd_socket_activation():
    port = free_port()
    tmp = tempfile.mkdtemp(prefix="goboxd-sd-")
    os.chmod(tmp, 0o711)
    p = subprocess.Popen(["systemd-socket-activate", "-l", "127.0.0.1:%d" % port,
                          os.environ["GOBOXD_BIN"], "--languages-dir", LANGUAGES,
                          "--jail-dir", os.path.join(tmp, "jails"), "--workers", "1",
                          "--store", os.path.join(tmp, "submissions.db"),
                          "--jail", os.environ.get("GOBOXD_TEST_JAIL", "bwrap")] +
                         sandbox_uid_base(),
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.time() + 10
        got = b""
        while time.time() < deadline:
            try:
                got = raw(port, b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                          timeout=2)
                if got:
                    break
            except OSError:
                time.sleep(0.1)
        assert got.startswith(b"HTTP/1.1 200")
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=30)
        shutil.rmtree(tmp, ignore_errors=True)
    assert b"systemd" in p.stderr.read()


def test_concurrent_jobs_never_share_a_directory(daemon):
    """Hole 5: each job has its own directory and sees only its own files."""
    src = ("import os, sys, time\ntok = sys.stdin.read().strip()\n"
           "open('/sandbox/token', 'w').write(tok)\ntime.sleep(0.3)\n"
           "print(open('/sandbox/token').read(), sorted(os.listdir('/sandbox')))\n")
    results = []
    lock = threading.Lock()

    def go(tok):
        r = daemon.post("/run", {"language": "py3", "source": src,
                                 "tests": [{"stdin": tok}]})
        with lock:
            results.append((tok, r))

    threads = [threading.Thread(target=go, args=("tok%d" % i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 6
    for tok, (status, body) in results:
        assert status == 200, body
        assert body["tests"][0]["stdout"] == "%s ['solution.py', 'token']\n" % tok


@pytest.mark.slow
def test_stale_job_dirs_are_swept():
    """Hole 7: what a crash left behind goes at start-up and periodically."""
    tmp = tempfile.mkdtemp(prefix="goboxd-sweep-")
    os.chmod(tmp, 0o711)
    jails = os.path.join(tmp, "jails")
    os.makedirs(os.path.join(jails, "job-stale1", "sub"))
    with open(os.path.join(jails, "job-stale1", "sub", "f"), "w") as f:
        f.write("x")
    old = time.time() - 3600
    os.utime(os.path.join(jails, "job-stale1"), (old, old))
    os.makedirs(os.path.join(jails, "not-a-job"))
    # Without a job disk, job directories are on the jail directory's own
    # disk, where a crash leaves them for the sweeper (with one, they
    # vanish with the worker: test_isolation.py).
    daemon = Daemon(languages=small(), workers=1, args=["--jail-dir", jails, "--sweep-age", "2s",
                                     "--sweep-interval", "1s", "--job-disk-size", "0"])
    try:
        # the start-up sweep runs beside the first requests, not before them
        deadline = time.time() + 10
        while time.time() < deadline and os.path.exists(os.path.join(jails, "job-stale1")):
            time.sleep(0.05)
        assert not os.path.exists(os.path.join(jails, "job-stale1"))
        assert os.path.exists(os.path.join(jails, "not-a-job"))
        # The readiness probes make (and remove) job directories of their own
        # for as long as they run: wait for them, or the check below races them.
        daemon.wait_probed()
        # a worker killed in the middle of a job leaves its directory behind
        def doomed():
            try:
                daemon.post("/run", slow(5))
            except OSError:
                pass  # its worker is killed: the connection dies with it

        def busy_dirs():
            # the running job's directory holds its source; warm ones are empty
            return [d for d in os.listdir(jails) if d.startswith("job-")
                    and os.path.isdir(os.path.join(jails, d))
                    and os.listdir(os.path.join(jails, d))]

        t = threading.Thread(target=doomed)
        t.start()
        deadline = time.time() + 10
        while time.time() < deadline and not busy_dirs():
            time.sleep(0.05)
        doomed_dirs = busy_dirs()
        assert doomed_dirs, "the job never got a directory"
        os.kill(daemon.worker_pids()[0], signal.SIGKILL)
        t.join()
        gone = lambda: not [d for d in doomed_dirs
                            if os.path.exists(os.path.join(jails, d))
                            or os.path.exists(os.path.join(jails, d + ".base"))]
        deadline = time.time() + 15
        while time.time() < deadline and not gone():
            time.sleep(0.2)
        assert gone(), os.listdir(jails)
    finally:
        daemon.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def proc_cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_half_closed_client_does_not_spin_the_worker():
    daemon = Daemon(languages=small(), workers=1)
    try:
        pid = daemon.worker_pids()[0]
        job = json.dumps(slow(1.5)).encode()
        s = socket.create_connection(("127.0.0.1", daemon.port), timeout=30)
        s.sendall(b"POST /run HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s"
                  b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n" % (len(job), job))
        s.shutdown(socket.SHUT_WR)
        before = proc_cpu_seconds(pid)
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        s.close()
        used = proc_cpu_seconds(pid) - before
        assert [r[0] for r in responses(data)] == [200, 200]
        # the job thread's own work is a few ms; a spinning loop burns ~1.5 s
        assert used < 0.5, used
    finally:
        daemon.stop()


def test_no_usable_cgroups_refuses_to_start_and_names_the_remedies():
    empty = tempfile.mkdtemp(prefix="goboxd-nocg-")
    os.chmod(empty, 0o711)  # so that only the cgroups can fail
    try:
        p = subprocess.run([os.environ.get("GOBOXD_BIN"), "--listen", "127.0.0.1", "--port", "0",
                            "--languages-dir", LANGUAGES, "--jail-dir",
                            os.path.join(empty, "jails"), "--cgroup-root", empty],
                           capture_output=True, text=True, timeout=30)
    finally:
        shutil.rmtree(empty)
    assert p.returncode != 0
    errors = [json.loads(l) for l in p.stderr.splitlines() if '"error"' in l]
    assert len(errors) == 1, p.stderr
    for remedy in ("Delegate=yes", "--cgroupns=private", "--cgroup-root"):
        assert remedy in errors[0]["msg"], errors[0]


def test_a_jail_dir_another_user_owns_is_refused():
    """Jobs' files go there: a directory someone else made first (in a
    shared place like /var/tmp) would hand them the jobs."""
    top = tempfile.mkdtemp(prefix="goboxd-jaildir-")
    os.chmod(top, 0o711)
    theirs = os.path.join(top, "jails")
    os.mkdir(theirs, 0o777)
    os.chown(theirs, 65534, 65534)
    try:
        p = subprocess.run([os.environ.get("GOBOXD_BIN"), "--listen", "127.0.0.1", "--port", "0",
                            "--languages-dir", LANGUAGES, "--jail-dir", theirs],
                           capture_output=True, text=True, timeout=30)
    finally:
        shutil.rmtree(top)
    assert p.returncode != 0
    errors = [json.loads(l)["msg"] for l in p.stderr.splitlines() if '"error"' in l]
    assert errors == ["start-up failed: jail dir %s is not goboxd's own (owner uid 65534, mode "
                      "711): another user could reach the jobs in it; remove it, or give "
                      "another --jail-dir" % theirs], p.stderr


def test_degraded_cgroups_serve_health_and_refuse_jobs():
    empty = tempfile.mkdtemp(prefix="goboxd-nocg-")
    daemon = Daemon(languages=small(), workers=1,
                    args=["--cgroup-root", empty, "--allow-degraded-cgroups"])
    try:
        assert daemon.get("/healthz") == (200, {"status": "ok"})
        status, body = daemon.post("/run", HELLO)
        assert status == 503 and body["error"]["code"] == "sandbox_unavailable", body
        assert any("degraded" in l.get("msg", "") for l in daemon.log_lines())
        daemon.wait_probed()
        status, body = daemon.get("/readyz")
        assert status == 503 and not any(v["ok"] for v in body["languages"].values()), body
    finally:
        daemon.stop()
        shutil.rmtree(empty)


def cmdline(pid):
    with open("/proc/%d/cmdline" % pid, "rb") as f:
        return f.read().rstrip(b"\0").decode()


def test_process_titles_say_who_is_who(daemon):
    daemon.wait_ready()  # both workers are up
    assert cmdline(daemon.proc.pid) == "goboxd: master"
    titles = sorted(cmdline(pid) for pid in daemon.worker_pids())
    # one title each, numbered by slot (a respawned worker may take another)
    assert len(titles) == 2 and len(set(titles)) == 2, titles
    assert all(re.fullmatch(r"goboxd: worker \d+", t) for t in titles), titles
    with open("/proc/%d/task/%d/children" % (daemon.proc.pid, daemon.proc.pid)) as f:
        children = [int(p) for p in f.read().split()]
    for pid in children:
        try:
            title = cmdline(pid)
        except FileNotFoundError:
            continue  # a prober that has just finished
        assert title in titles or title == "goboxd: prober", title
    out = subprocess.run(["ps", "-o", "args=", "-p", str(daemon.proc.pid)],
                         capture_output=True, text=True).stdout.strip()
    assert out == "goboxd: master"


def json_lines(path):
    out = []
    with open(path) as f:
        for line in f:
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
    return out


def wait_for_line(path, pred, timeout=10):
    wait_until(lambda: os.path.exists(path) and any(pred(l) for l in json_lines(path)),
               "such a line in %s" % path, timeout)


def test_sigusr1_reopens_the_log_file():
    tmp = tempfile.mkdtemp(prefix="goboxd-log-")
    path = os.path.join(tmp, "goboxd.log")
    daemon = Daemon(languages=small(), args=["--log-file", path], workers=1)
    try:
        workers = daemon.worker_pids()
        status, _, _ = daemon.request("POST", "/run", HELLO, headers={"X-Request-Id": "before"})
        assert status == 200
        wait_for_line(path, lambda l: l.get("request_id") == "before")
        os.rename(path, path + ".1")
        # a worker signalled directly must survive it too
        os.kill(workers[0], signal.SIGUSR1)
        daemon.proc.send_signal(signal.SIGUSR1)
        wait_for_line(path, lambda l: l.get("msg") == "log file reopened"
                      and l.get("role") == "master")
        status, _, _ = daemon.request("POST", "/run", HELLO, headers={"X-Request-Id": "after"})
        assert status == 200
        wait_for_line(path, lambda l: l.get("request_id") == "after")
        assert not any(l.get("request_id") == "after" for l in json_lines(path + ".1"))
        assert daemon.worker_pids() == workers
        assert daemon.read_log() == ""  # nothing went to stderr
    finally:
        daemon.stop()
        shutil.rmtree(tmp)


# The default store (/var/lib/goboxd/submissions.db) and the default jail
# dir (/var/lib/goboxd/jails) share a directory: whichever made it first,
# under whatever umask, the other must still work. The same layout, in a
# directory of the test's own.
STRICT_UMASK = ("/bin/sh", "-c", 'umask 077 && exec "$@"', "sh")


def start_in(state, wrapper=(), jails=True, store=True):
    """A daemon whose jail dir and store are state's, as the defaults are
    /var/lib/goboxd's (or elsewhere when not asked for)."""
    other = tempfile.mkdtemp(prefix="goboxd-other-")
    os.chmod(other, 0o711)
    args = ["--jail-dir", os.path.join(state if jails else other, "jails"),
            "--store", os.path.join(state if store else other, "submissions.db")]
    try:
        d = Daemon(languages=small(), workers=1, args=args, own_store=False, wrapper=wrapper)
        try:
            status, body = d.post("/run", HELLO)
            assert status == 200 and body["status"] == "accepted", body
        finally:
            d.stop()
    finally:
        shutil.rmtree(other)


@pytest.mark.parametrize("first", ["an older store", "the store", "the jail dir", "both"])
def test_the_default_store_and_jail_dir_never_hide_each_other(first):
    top = tempfile.mkdtemp(prefix="goboxd-state-")
    os.chmod(top, 0o711)
    state = os.path.join(top, "goboxd")
    try:
        if first == "an older store":
            # an older goboxd made the store's directory 0700
            os.mkdir(state, 0o700)
            os.chmod(state, 0o700)
        elif first == "the store":
            start_in(state, STRICT_UMASK, jails=False)
        elif first == "the jail dir":
            start_in(state, STRICT_UMASK, store=False)
        start_in(state, STRICT_UMASK)
        assert os.stat(state).st_mode & 0o7777 == 0o711
        assert os.stat(os.path.join(state, "submissions.db")).st_mode & 0o7777 == 0o600
    finally:
        shutil.rmtree(top)


def run_check(*args):
    return subprocess.run([os.environ.get("GOBOXD_BIN"), "--languages-dir", LANGUAGES,
                           "--check"] + list(args), capture_output=True, text=True, timeout=60)


def test_check_prints_what_it_validated():
    p = run_check("--jail", "bwrap")
    assert p.returncode == 0, p.stdout + p.stderr
    # in the order of their files' names, as goboxd loads them ("c-clang.yaml"
    # before "c.yaml")
    names = [f[:-5] for f in sorted(os.listdir(LANGUAGES)) if f.endswith(".yaml")]
    lines = p.stdout.splitlines()
    langs = [l for l in lines if l.startswith("languages: ")][0]
    assert langs.startswith("languages: %d from %s" % (len(names), LANGUAGES)), langs
    assert lines[lines.index(langs) + 1].split() == names
    assert "jail: bwrap /usr/bin/bwrap (jail: bwrap)" in lines
    assert any(l.startswith("cgroups: v") for l in lines), p.stdout
    assert "  sandbox uids and gids 60000-61024" in lines, p.stdout
    assert lines[-1] == "OK"
    p = run_check("--jail", "bwrap", "--sandbox-uid-base", "70000")
    assert "  sandbox uids and gids 70000-71024" in p.stdout.splitlines(), p.stdout


def test_a_first_run_from_the_checkout_just_works():
    """After `./setup.sh test`, `./build/goboxd --check` and a relative
    --languages-dir work from the repository; a missing directory names
    the remedy."""
    bin_ = os.path.realpath(os.environ.get("GOBOXD_BIN"))
    names = sorted(f[:-5] for f in os.listdir(LANGUAGES) if f.endswith(".yaml"))
    if os.path.exists("/etc/goboxd/languages") or not bin_.startswith(TOP + os.sep) \
            or os.path.realpath(LANGUAGES) != os.path.join(TOP, "languages"):
        pytest.skip("an installed goboxd or languages: the build-tree fallback does not apply")
    p = subprocess.run([bin_, "--check", "--jail", "bwrap"], cwd=TOP, capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "languages: %d from %s/languages" % (len(names), TOP) in p.stdout, p.stdout
    assert "the source tree's" in p.stdout, p.stdout
    p = subprocess.run([bin_, "--check", "--jail", "bwrap", "--languages-dir", "languages"],
                       cwd=TOP, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "languages: %d from %s/languages " % (len(names), TOP) in p.stdout, p.stdout
    p = subprocess.run([bin_, "--check", "--languages-dir", "/nonexistent/goboxd-languages"],
                       cwd=TOP, capture_output=True, text=True, timeout=60)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "give --languages-dir" in p.stderr, p.stderr


def test_check_fails_without_a_jail_binary_or_cgroups():
    empty = tempfile.mkdtemp(prefix="goboxd-check-")
    try:
        p = run_check("--jail", "bwrap", "--bwrap-path", os.path.join(empty, "bwrap"),
                      "--cgroup-root", empty)
        assert p.returncode == 1, p.stdout + p.stderr
        failed = [l for l in p.stdout.splitlines() if l.startswith("FAILED")]
        assert len(failed) == 3, p.stdout
        assert failed[0].startswith("FAILED: jail bwrap") and empty in failed[0]
        assert failed[1].startswith("FAILED: cgroups: ") and empty in failed[1]
        p = run_check("--jail", "bwrap", "--cgroup-root", empty, "--allow-degraded-cgroups")
        assert p.returncode == 0, p.stdout
        assert "would run degraded" in p.stdout
    finally:
        shutil.rmtree(empty)


def test_log_file_change_waits_for_a_restart():
    tmp = tempfile.mkdtemp(prefix="goboxd-log-")
    path, other = os.path.join(tmp, "a.log"), os.path.join(tmp, "b.log")
    conf = os.path.join(tmp, "goboxd.yaml")
    with open(conf, "w") as f:
        f.write("log_file: %s\n" % path)
    daemon = Daemon(languages=small(), args=["--config", conf], workers=1)
    try:
        with open(conf, "w") as f:
            f.write("log_file: %s\n" % other)
        for n in (1, 2):  # still not in effect after the second reload
            daemon.proc.send_signal(signal.SIGHUP)
            wait_for_line(path, lambda l: l.get("msg", "").startswith(
                "reloaded: generation %d" % (n + 1)))
            warnings = [l for l in json_lines(path)
                        if l.get("msg") == "log-file changes take effect on restart only"]
            assert len(warnings) == n
        assert not os.path.exists(other)
    finally:
        daemon.stop()
        shutil.rmtree(tmp)


def test_pin_cpus_puts_each_worker_on_a_cpu_of_its_own(daemon):
    """--pin-cpus: every program of a worker sees one CPU, the two workers
    two different ones; without it a program sees every CPU."""
    src = ("import os, time\nprint(sorted(os.sched_getaffinity(0)))\n"
           "time.sleep(0.5)\n")
    body = {"language": "py3", "source": src, "tests": [{}]}
    usable = sorted(os.sched_getaffinity(0))
    st, res = daemon.post("/run", body)
    assert st == 200 and res["status"] == "accepted", res
    assert json.loads(res["tests"][0]["stdout"]) == usable

    pinned = Daemon(languages=small(), workers=2, args=["--pin-cpus"])
    try:
        results = []
        threads = [threading.Thread(target=lambda: results.append(pinned.post("/run", body)))
                   for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert all(r[0] == 200 and r[1]["status"] == "accepted" for r in results), results
        cpus = [json.loads(r[1]["tests"][0]["stdout"]) for r in results]
        assert all(len(c) == 1 and c[0] in usable for c in cpus), cpus
        if len(usable) >= 2:
            assert cpus[0] != cpus[1], cpus
    finally:
        pinned.stop()


def tasks_under(pid):
    """Each thread of pid and of every process under it: (its name, the
    CPUs it may run on)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            for t in os.listdir("/proc/%d/task" % p):
                with open("/proc/%d/task/%s/comm" % (p, t)) as f:
                    out.append((f.read().strip(), frozenset(os.sched_getaffinity(int(t)))))
            todo += children(p)
        except (FileNotFoundError, ProcessLookupError):
            pass  # it ended meanwhile
    return out


def test_each_worker_and_its_jails_keep_to_a_cpu_of_their_own():
    """--pin-workers (the default): a worker's threads, its disk keeper
    and its jails' drivers and inits stay on its CPU, the two workers on
    two, while their programs keep every CPU; --pin-workers=false leaves
    them every CPU too."""
    usable = sorted(os.sched_getaffinity(0))
    if len(usable) < 2:
        pytest.skip("one CPU: nothing to keep a worker to")
    src = "import os\nprint(sorted(os.sched_getaffinity(0)))\n"
    for args, kept in (([], True), (["--pin-workers=false"], False)):
        d = Daemon(languages=small(), workers=2, args=args)
        try:
            for _ in range(2):
                st, res = d.post("/run", {"language": "py3", "source": src, "tests": [{}]})
                assert st == 200 and json.loads(res["tests"][0]["stdout"]) == usable, res

            def both_with_an_init():
                trees = [tasks_under(w) for w in d.worker_pids()]
                return trees if len(trees) == 2 and all(
                    any(n.endswith("goboxd-init") for n, _ in t) for t in trees) else None
            trees = wait_until(both_with_an_init, "both workers, each with a jail's init")
            cpus = [set().union(*(c for _, c in t)) for t in trees]
            if kept:
                assert all(len(c) == 1 for c in cpus), trees
                assert cpus[0] != cpus[1], cpus
            else:
                assert all(c == set(usable) for _, c in trees[0] + trees[1]), trees
        finally:
            d.stop()


def pid_1_daemon():
    """A goboxd that is pid 1 of a pid namespace of its own, as in a
    container (--mount-proc: a /proc of that namespace, as a container
    has)."""
    return Daemon(languages=small(), wrapper=["unshare", "--pid", "--fork", "--mount-proc",
                                              "--kill-child=SIGTERM"])


def stop_pid_1_daemon(d):
    """SIGTERM to goboxd itself (unshare's child), so that it stops
    gracefully and cleans up; unshare exits with it."""
    with open("/proc/%d/task/%d/children" % (d.proc.pid, d.proc.pid)) as f:
        kids = [int(p) for p in f.read().split()]
    for pid in kids:
        os.kill(pid, signal.SIGTERM)
    d.proc.wait(timeout=40)
    d.log.close()


def test_master_as_pid_1_keeps_its_workers():
    """In a container goboxd is pid 1 of its pid namespace: its workers must
    not take their parent's pid 1 for a dead master and exit."""
    if not shutil.which("unshare"):
        pytest.skip("unshare (util-linux) not installed")
    d = pid_1_daemon()
    try:
        st, body = d.post("/run", HELLO)
        assert st == 200 and body["status"] == "accepted", body
        # the second may still be starting on a busy machine
        pids = wait_until(lambda: len(d.worker_pids()) == 2 and d.worker_pids(),
                          "both workers up")
        st, body = d.post("/run", HELLO)
        assert st == 200 and body["status"] == "accepted", body
        assert d.worker_pids() == pids and d.stats()["workers_respawned"] == 0, d.stats()
    finally:
        stop_pid_1_daemon(d)


def test_a_master_in_its_own_pid_namespace_leaves_cgroups_in_use_alone(daemon):
    """Its start-up sweep sees no pid of a goboxd outside its namespace
    that shares its cgroups (here the module's daemon): a subtree that goboxd
    holds (open, with a shared flock, as cgroup_tree_open leaves it) must
    stay, or that goboxd's next step cgroup has nowhere to go. One named
    for the module's daemon, held by the test, with nothing in it (as a
    prober's tree is between two probes)."""
    if not shutil.which("unshare"):
        pytest.skip("unshare (util-linux) not installed")
    tops = sorted({os.path.dirname(t) for t in daemon.cgroup_trees()})
    assert tops, "the module's daemon has no cgroup tree: the check would see nothing"
    held = [os.path.join(t, "%d-held" % daemon.proc.pid) for t in tops]
    fds = []
    try:
        for h in held:
            os.mkdir(h)
            fds.append(os.open(h, os.O_RDONLY | os.O_DIRECTORY))
            fcntl.flock(fds[-1], fcntl.LOCK_SH)
        d = pid_1_daemon()
        try:
            assert d.get("/healthz")[0] == 200
            swept = [l["msg"] for l in d.log_lines() if "-held" in l.get("msg", "")]
            assert [h for h in held if not os.path.isdir(h)] == [], swept
        finally:
            stop_pid_1_daemon(d)
    finally:
        for fd in fds:
            os.close(fd)
        for h in held:
            if os.path.isdir(h):
                os.rmdir(h)
