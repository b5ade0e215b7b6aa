"""API tokens (--auth-tokens): every API needs one, each answers 401 in its
own words without it, before a body is read, the probes stay open unless
--auth-probes, and a reload (SIGHUP) reads the file again, in force at
once on every connection."""
import json
import os
import re
import signal
import socket
import subprocess
import time

import pytest

from conftest import LANGUAGES, TOP, Daemon, children, small, wait_until, without_quarantine

TOKEN = "front-end-token-0123456789"
OTHER = "second-token-abcdefghijk"
HELLO = {"language": "bash", "source": "echo hi", "tests": [{"stdin": ""}]}


def tokens_file(tmp_path, *tokens):
    path = tmp_path / "tokens"
    path.write_text("# the judge's front end\n" + "".join(t + "\n" for t in tokens))
    return str(path)


@pytest.fixture(scope="module")
def daemon(tmp_path_factory):
    path = tokens_file(tmp_path_factory.mktemp("auth"), TOKEN, OTHER)
    d = Daemon(args=["--auth-tokens", path, "--metrics"], languages=small())
    d.tokens_path = path
    yield d
    d.stop()


def bearer(token):
    return {"Authorization": "Bearer " + token}


def test_without_a_token_every_api_answers_401_in_its_own_words(daemon):
    status, body, headers = daemon.request("POST", "/run", HELLO)
    assert status == 401
    assert body["error"]["code"] == "unauthorized"
    assert headers["WWW-Authenticate"] == "Bearer"

    status, body, _ = daemon.request("POST", "/v1/run", {"runtime": "bash", "files": []})
    assert status == 401
    assert body["code"] == "UNAUTHORIZED"

    status, body, _ = daemon.request("POST", "/submissions", {"language_id": 46,
                                                               "source_code": "echo hi"})
    assert status == 401
    assert "token" in body["error"]

    status, body, _ = daemon.request("GET", "/api/v2/runtimes")
    assert status == 401
    assert "token" in body["message"]

    for path in ("/info", "/languages", "/statuses", "/submissions/x"):
        assert daemon.request("GET", path)[0] == 401, path


def test_a_wrong_token_is_refused_however_it_comes(daemon):
    for headers in (bearer(TOKEN[:-1]), bearer(TOKEN + "x"), {"X-Auth-Token": "nope"},
                    {"Authorization": "Basic " + TOKEN}, {"X-Auth-Token": ""}):
        assert daemon.request("POST", "/run", HELLO, headers=headers)[0] == 401, headers


def test_a_token_of_the_file_lets_in_by_either_header(daemon):
    status, body, _ = daemon.request("POST", "/run", HELLO, headers=bearer(TOKEN))
    assert status == 200, body
    assert body["status"] == "accepted"
    status, body, _ = daemon.request("GET", "/statuses", headers={"X-Auth-Token": OTHER})
    assert status == 200
    assert len(body) == 14
    status, body, _ = daemon.request("POST", "/submissions?wait=true",
                                     {"language_id": 46, "source_code": "echo hi"},
                                     headers={"X-Auth-User": TOKEN})
    assert status == 201, body
    assert body["stdout"] == "hi\n"


def test_judge0s_authenticate_says_whether_a_token_is_good(daemon):
    assert daemon.request("POST", "/authenticate", b"", headers={"X-Auth-Token": TOKEN})[0] == 200
    assert daemon.request("POST", "/authenticate", b"", headers={"X-Auth-Token": "bad"})[0] == 401
    assert daemon.request("POST", "/authorize", b"", headers={"X-Auth-User": OTHER})[0] == 200


def test_the_probes_stay_open(daemon):
    for path in ("/healthz", "/readyz", "/metrics"):
        status, _ = daemon.get(path)
        assert status in (200, 503), path  # /readyz may still be probing


def test_with_auth_probes_the_probes_need_a_token_too(tmp_path):
    path = tokens_file(tmp_path, TOKEN)
    d = Daemon(args=["--auth-tokens", path, "--auth-probes", "--metrics"],
               languages=small())
    try:
        for p in ("/readyz", "/metrics"):
            assert d.get(p)[0] == 401, p
            assert d.request("GET", p, headers=bearer(TOKEN))[0] in (200, 503), p
    finally:
        d.stop()


def test_a_reload_reads_the_file_again(tmp_path):
    path = tokens_file(tmp_path, TOKEN)
    d = Daemon(args=["--auth-tokens", path], languages=small())
    try:
        assert d.request("GET", "/statuses", headers=bearer(TOKEN))[0] == 200
        assert d.request("GET", "/statuses", headers=bearer(OTHER))[0] == 401
        with open(path, "w") as f:
            f.write(OTHER + "\n")
        d.proc.send_signal(signal.SIGHUP)
        wait_until(lambda: d.request("GET", "/statuses", headers=bearer(OTHER))[0] == 200,
                   "the new token to be taken")
        assert d.request("GET", "/statuses", headers=bearer(TOKEN))[0] == 401
        # a file that would let nobody in is refused, the tokens in force stay
        with open(path, "w") as f:
            f.write("# nobody\n")
        d.proc.send_signal(signal.SIGHUP)
        d.wait_log(lambda l: "reload refused" in l.get("msg", ""), "the refusal")
        assert d.request("GET", "/statuses", headers=bearer(OTHER))[0] == 200
    finally:
        d.stop()


def test_a_bad_tokens_file_stops_the_start_with_its_line(tmp_path):
    path = tmp_path / "tokens"
    path.write_text(TOKEN + "\nshort\n")
    binary = os.environ.get("GOBOXD_BIN", os.path.join(TOP, "build", "goboxd"))
    out = subprocess.run([binary, "--check", "--languages-dir", LANGUAGES,
                          "--auth-tokens", str(path)], capture_output=True, text=True)
    assert out.returncode == 2, out
    assert "--auth-tokens: %s:2: token too short" % path in out.stderr


# ---- a request without a token is refused at its headers ------------------



def worker_pids(master):
    """The master's workers (kernel name worker-<i>), found as its children."""
    pids = []
    for pid in children(master):
        try:
            with open("/proc/%d/comm" % pid) as f:
                if f.read().startswith("worker-"):
                    pids.append(pid)
        except OSError:
            pass  # gone meanwhile
    return pids


def started_workers(d):
    """The daemon's workers, once each has started (its pid in /info's
    table is written at the end of its set-up); None before."""
    status, info, _ = d.request("GET", "/info", headers={"X-Auth-Token": TOKEN})
    ready = {w["pid"] for w in info["stats"]["workers"]} if status == 200 else set()
    pids = worker_pids(d.proc.pid)
    return pids if len(pids) == d.workers and set(pids) <= ready else None


def rss_kb(pids):
    """VmRSS of these processes, together."""
    total = 0
    for pid in pids:
        with open("/proc/%d/status" % pid) as f:
            total += next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))
    return total


def head(path, length, *extra):
    return ("POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            "Content-Length: %d\r\n%s\r\n" % (path, length, "".join(e + "\r\n" for e in extra))
            ).encode()


def read_all(s, timeout=10):
    """What the daemon sends until it closes (a reset read as the end), or
    until it says nothing for timeout seconds."""
    s.settimeout(timeout)
    got = b""
    while True:
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            return got
        except ConnectionResetError:
            return got
        if not chunk:
            return got
        got += chunk


def push(s, n, stall=1.0):
    """Send up to n bytes of body, as a client that does not wait for an
    answer; stops early when the daemon closes, or takes nothing for stall
    seconds. The bytes sent."""
    s.setblocking(False)
    chunk, sent, stalled = b"x" * 65536, 0, None
    try:
        while sent < n:
            try:
                sent += s.send(chunk[:n - sent])
                stalled = None
            except BlockingIOError:
                stalled = stalled or time.time()
                if time.time() - stalled > stall:
                    break
                time.sleep(0.005)
    except OSError:
        pass  # closed by the daemon: what a refused body may get
    s.setblocking(True)
    return sent


BODY = 15 << 20




def test_a_body_without_a_token_is_refused_before_it_is_read(tmp_path):
    """Six tokenless 15 MB bodies, sent as a client that does not wait
    sends them, never finished: before, each was read whole into the
    worker (twice: the body and the bytes kept for a handoff) before its
    401, and held as long as its client kept the connection."""
    d = Daemon(args=["--auth-tokens", tokens_file(tmp_path, TOKEN)], languages=small(),
               env=without_quarantine())
    try:
        workers = wait_until(lambda: started_workers(d), "the workers started")
        before = rss_kb(workers)
        conns = [socket.create_connection(("127.0.0.1", d.port)) for _ in range(6)]
        for s in conns:
            s.sendall(head("/run", BODY))
            push(s, BODY - 1)
        grown = rss_kb(workers) - before
        # one body is 15 MiB; each refused one may leave a read-ahead behind
        assert grown < 8 << 10, "the workers grew by %d KiB" % grown
        answers = [read_all(s) for s in conns]
        for s in conns:
            s.close()
        for got in answers:
            assert got.startswith(b"HTTP/1.1 401 Unauthorized\r\n"), got[:200]
            assert b"Connection: close\r\n" in got and b'"unauthorized"' in got, got[:400]
    finally:
        d.stop()


def test_expect_100_continue_without_a_token_gets_401_and_never_100(daemon):
    for path, words in (("/run", b'"unauthorized"'), ("/v1/run", b'"UNAUTHORIZED"'),
                        ("/submissions", b'"error"'), ("/api/v2/execute", b'"message"')):
        s = socket.create_connection(("127.0.0.1", daemon.port))
        s.sendall(head(path, BODY, "Expect: 100-continue"))
        got = read_all(s)  # the daemon closes after its answer
        s.close()
        assert got.startswith(b"HTTP/1.1 401 "), (path, got[:200])
        assert b"100 Continue" not in got, (path, got[:200])
        assert words in got, (path, got)


def test_expect_100_continue_with_a_token_still_gets_100(daemon):
    body = json.dumps(HELLO).encode()
    s = socket.create_connection(("127.0.0.1", daemon.port), timeout=120)
    s.sendall(head("/run", len(body), "Expect: 100-continue", "Connection: close",
                   "X-Auth-Token: " + TOKEN))
    assert s.recv(65536).startswith(b"HTTP/1.1 100 Continue\r\n")
    s.sendall(body)
    got = read_all(s, timeout=120)
    s.close()
    assert got.startswith(b"HTTP/1.1 200 "), got[:200]
    assert b'"accepted"' in got, got[:400]


def test_pipelined_requests_each_need_a_token(daemon):
    good = head("/authenticate", 2, "X-Auth-Token: " + TOKEN) + b"{}"
    bare = head("/authenticate", 2) + b"{}"
    get = b"GET /statuses HTTP/1.1\r\nHost: x\r\n\r\n"
    s = socket.create_connection(("127.0.0.1", daemon.port))
    # a bodiless request without a token is refused and the connection stays
    s.sendall(good + get + good + bare + good)
    got = whole = read_all(s)
    s.close()
    statuses = []
    while got.startswith(b"HTTP/1.1 "):
        head_, _, got = got.partition(b"\r\n\r\n")
        statuses.append(int(head_.split()[1]))
        length = re.search(rb"\r\nContent-Length: (\d+)", head_)
        got = got[int(length.group(1)):]
    # a refused body is never read: its connection closes after the 401,
    # and what was pipelined after it is not answered
    assert statuses == [200, 401, 200, 401], whole


def test_a_probe_with_a_body_needs_no_token(daemon):
    s = socket.create_connection(("127.0.0.1", daemon.port))
    s.sendall(head("/healthz", 2, "Connection: close") + b"{}")
    got = read_all(s)
    s.close()
    assert not got.startswith(b"HTTP/1.1 401 "), got[:200]
    assert got.startswith(b"HTTP/1.1 "), got[:200]


# ---- a reload takes a token away from every connection -----------------

def accepted(port, s):
    """Whether a worker has accepted the client socket s's connection: the
    daemon's end has an inode only once it is accepted (/proc/net/tcp)."""
    local = "0100007F:%04X" % port
    remote = "0100007F:%04X" % s.getsockname()[1]
    with open("/proc/net/tcp") as f:
        for line in f.readlines()[1:]:
            fields = line.split()
            if fields[1] == local and fields[2] == remote:
                return int(fields[9]) != 0
    return False


def status_of(got):
    """The status of the first answer in got; None for no answer."""
    return int(got.split()[1]) if got.startswith(b"HTTP/1.1 ") else None


def get_statuses(token, more=""):
    return ("GET /statuses HTTP/1.1\r\nHost: x\r\n%sAuthorization: Bearer %s\r\n"
            "Connection: close\r\n\r\n" % (more, token)).encode()


def test_a_token_a_reload_removes_stops_working_on_open_connections(tmp_path):
    """The workers of the generation a reload retires still serve the
    connections they accepted (a fresh one, a request half sent) until
    --read-timeout: they let a removed token in, with their old tokens."""
    path = tokens_file(tmp_path, TOKEN, OTHER)
    d = Daemon(args=["--auth-tokens", path, "--read-timeout", "30s"], languages=small())
    try:
        used = socket.create_connection(("127.0.0.1", d.port), timeout=10)
        used.sendall(b"GET /statuses HTTP/1.1\r\nHost: x\r\nX-Auth-Token: %s\r\n\r\n"
                     % TOKEN.encode())
        assert used.recv(65536).startswith(b"HTTP/1.1 200 ")
        fresh = socket.create_connection(("127.0.0.1", d.port), timeout=10)
        half = socket.create_connection(("127.0.0.1", d.port), timeout=10)
        half.sendall(b"GET /statuses HTTP/1.1\r\nHost: x\r\n")
        wait_until(lambda: accepted(d.port, fresh) and accepted(d.port, half),
                   "the connections accepted by the first generation")
        with open(path, "w") as f:
            f.write(OTHER + "\n")
        d.proc.send_signal(signal.SIGHUP)
        d.wait_log(lambda l: l.get("msg", "").startswith("reloaded: generation 2"),
                   "the reload")
        fresh.sendall(get_statuses(TOKEN))
        half.sendall(b"Authorization: Bearer %s\r\nConnection: close\r\n\r\n"
                     % TOKEN.encode())
        try:
            used.sendall(get_statuses(TOKEN))
        except OSError:
            pass  # closed already: what the client reconnects after
        assert status_of(read_all(fresh)) == 401
        assert status_of(read_all(half)) == 401
        # a kept-alive connection is closed by its retiring worker, or refused
        assert status_of(read_all(used)) in (None, 401)
        for s in (used, fresh, half):
            s.close()
        assert d.request("GET", "/statuses", headers=bearer(TOKEN))[0] == 401
        assert d.request("GET", "/statuses", headers=bearer(OTHER))[0] == 200
    finally:
        d.stop()
