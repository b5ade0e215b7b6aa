"""End-to-end tests: the real goboxd binary, real sandboxes, 127.0.0.1 only.

GOBOXD_BIN names the binary, GOBOXD_TEST_JAIL the jail driver (bwrap or
nsjail). Each test module gets its own daemon on a free port with its own
jail directory, so tests cannot see each other's leftovers.

The files run in parallel under pytest-xdist (`-n N`, as tests/run-all
does): each worker process starts its own daemons, whose sandbox uids
are a range of that worker's own (sandbox_uid_base), so that two
daemons' jails never share a uid (RLIMIT_NPROC, kill and /proc count
per uid). A test that needs the machine to itself (it measures time
against a fixed budget, or fills a host-wide resource) is marked
`alone`: run-all runs those after the others, one at a time.
"""
import atexit
import glob
import http.server
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
import urllib.error
import urllib.request

import pytest

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# GOBOXD_TEST_LANGUAGES points the daemon at another languages directory
# (for trying a new language file before it joins languages/).
LANGUAGES = os.environ.get("GOBOXD_TEST_LANGUAGES", os.path.join(TOP, "languages"))
# How much slower than a real host this one runs: tests/v2/run-tests
# measures it in an emulated guest; 1 elsewhere. The harness's waits
# stretch by it (budget), never what a test checks.
TIME_SCALE = max(1, min(1000, int(os.environ.get("GOBOXD_TEST_TIME_SCALE", "1") or 1)))


def goboxd_bin():
    """The goboxd under test: GOBOXD_BIN, else the checkout's build."""
    return os.environ.get("GOBOXD_BIN", os.path.join(TOP, "build", "goboxd"))


def budget(seconds):
    """A wait of seconds on a real host, stretched on a slow one."""
    return seconds * TIME_SCALE


def poll(cond, timeout=20, step=0.05):
    """Call cond until it returns something true, for budget(timeout) at
    most; what it returned last."""
    deadline = time.time() + budget(timeout)
    while True:
        got = cond()
        if got or time.time() >= deadline:
            return got
        time.sleep(step)


def wait_until(cond, what, timeout=20):
    """poll, and fail the test, saying what did not happen, when cond
    never held; what cond returned. For what a test must see happen
    before its next step: a fixed sleep guesses how long that takes, and
    guesses short on a loaded machine."""
    got = poll(cond, timeout)
    if not got:
        raise AssertionError("not seen within %g s: %s" % (budget(timeout), what))
    return got


def time_caps():
    """goboxd's flags for the server's caps on a step's times (60 s) when
    the tests' budgets stretch, so that they are not cut back to a real
    host's (a language's stretched limits stay under them)."""
    if TIME_SCALE == 1:
        return []
    return ["--max-wall-time", "%ds" % budget(60), "--max-cpu-time", "%ds" % budget(60)]


def jails_serve_many():
    """Whether a jail serves more than one job on this host. On cgroup v2
    it takes a memory.peak that can be set back (Linux 6.12): before, a
    jail's first cgroup would tell a job the peak of the one before, and
    goboxd starts a jail for every job (docs/security.md)."""
    if not os.path.exists("/sys/fs/cgroup/cgroup.controllers"):
        return True
    release = tuple(int(p) for p in re.findall(r"\d+", os.uname().release)[:2])
    return release >= (6, 12)


# For a test that two jobs (or two tests of a job) sharing a jail prove.
needs_jail_reuse = pytest.mark.skipif(
    not jails_serve_many(), reason="no jail serves a second job on this host (cgroup v2 "
    "before Linux 6.12 cannot set memory.peak back)")


# AddressSanitizer and LeakSanitizer errors; UBSan's "file:line:col: runtime error:"
SANITIZER_REPORT = re.compile(r"ERROR: (Address|Leak)Sanitizer|:\d+:\d+: runtime error: ")


def sanitizer_reports(log):
    """The lines of a log that start a sanitizer's report."""
    return [line for line in log.splitlines() if SANITIZER_REPORT.search(line)]


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "alone: needs the machine to itself (run-all runs it after the "
        "others, one test at a time)")
    config.addinivalue_line(
        "markers", "slow: takes 2 s or more on a 2-CPU machine (-m 'not slow' for a "
        "quick run)")


def xdist_worker():
    """This process's index among pytest-xdist's workers; 0 without xdist."""
    name = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    return int(name[2:]) if name.startswith("gw") and name[2:].isdigit() else 0


# What one daemon's sandbox uids span at most: its workers', its judges'
# (goboxd --check prints the range: 1025 ids with the defaults).
UID_SPAN = 2000


def children(pid):
    """The pids of pid's children, from /proc."""
    kids = []
    for task in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/children" % (pid, task)) as f:
            kids += [int(k) for k in f.read().split()]
    return kids


def vm_kb(pid, key):
    """A figure of /proc/PID/status in KiB (VmRSS, VmHWM...)."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise KeyError(key)


def without_quarantine():
    """An ASan build keeps freed memory aside (its quarantine), which a
    measure of what a daemon's processes hold must not count."""
    opts = os.environ.get("ASAN_OPTIONS", "")
    return {"ASAN_OPTIONS": (opts + ":" if opts else "") + "quarantine_size_mb=0"}



class HttpReceiver:
    """An HTTP server on 127.0.0.1 serving handler (a
    BaseHTTPRequestHandler class) from threads of its own: a callback's
    receiver. url is its base; close() stops it."""

    def __init__(self, handler):
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def fd_links(pid):
    """What a process's fds point to ([] once it has gone)."""
    out = []
    try:
        fds = os.listdir("/proc/%d/fd" % pid)
    except FileNotFoundError:
        return out
    for fd in fds:
        try:
            out.append(os.readlink("/proc/%d/fd/%s" % (pid, fd)))
        except OSError:
            pass
    return out


def server_socket_inode(daemon_port, client):
    """The inode of the daemon's end of a client's TCP connection."""
    local = "0100007F:%04X" % daemon_port
    remote = "0100007F:%04X" % client.getsockname()[1]
    with open("/proc/net/tcp") as f:
        for line in f.readlines()[1:]:
            fields = line.split()
            if fields[1] == local and fields[2] == remote:
                return int(fields[9])
    return None


def sandbox_uid_base(args=()):
    """goboxd's flags for this xdist worker's own range of sandbox uids
    (none for the first, which keeps the default); none when the test
    names a base itself."""
    k = xdist_worker()
    if k == 0 or "--sandbox-uid-base" in args:
        return []
    return ["--sandbox-uid-base", str(60000 + UID_SPAN * k)]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def alive(pid):
    """Whether pid is a live process (not a zombie waiting for its reaping)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


class Daemon:
    """One goboxd master with its workers, started and stopped by a test."""

    def __init__(self, args=(), languages=LANGUAGES, env=None, workers=2, wrapper=(),
                 own_store=True, own_group=False):
        """own_group: the daemon leads a process group of its own, which a
        test may signal whole, as a terminal's ^C does."""
        self.bin = goboxd_bin()
        self.jail = os.environ.get("GOBOXD_TEST_JAIL", "bwrap")
        self.tmp = tempfile.mkdtemp(prefix="goboxd-e2e-")
        if not os.environ.get("GOBOXD_KEEP_TEST_DIRS"):
            atexit.register(shutil.rmtree, self.tmp, True)
        os.chmod(self.tmp, 0o711)  # the sandbox uids must traverse it
        self.jail_dir = os.path.join(self.tmp, "jails")
        self.languages = languages
        self.workers = workers
        # each worker's live jails (--jails-per-worker): warm ones are no leftovers
        self.jails = int(args[list(args).index("--jails-per-worker") + 1]) \
            if "--jails-per-worker" in args else 2
        self.port = free_port()
        self.log_path = os.path.join(self.tmp, "goboxd.log")
        cmd = [self.bin, "--listen", "127.0.0.1", "--port", str(self.port),
               "--workers", str(workers), "--languages-dir", languages,
               "--jail-dir", self.jail_dir, "--jail", self.jail,
               "--nsjail-path", os.environ.get("GOBOXD_NSJAIL", "/usr/local/bin/nsjail")]
        if "--store" not in args and own_store:
            # each daemon its own submission store (a SQLite file is one daemon's)
            cmd += ["--store", os.path.join(self.tmp, "submissions.db")]
        cmd = list(wrapper) + cmd + time_caps() + sandbox_uid_base(args) + list(args)
        full_env = {k: v for k, v in os.environ.items() if not k.startswith("GOBOXD_")}
        full_env.update(env or {})
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT,
                                     env=full_env, start_new_session=own_group)
        self.wait_healthy()

    @property
    def url(self):
        return "http://127.0.0.1:%d" % self.port

    def wait_healthy(self, timeout=20):
        deadline = time.time() + budget(timeout)
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("goboxd exited with %s:\n%s" % (self.proc.returncode,
                                                                   self.read_log()))
            try:
                status, _ = self.get("/healthz", timeout=1)
                if status in (200, 401):  # 401: up, its probes need a token
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError("goboxd did not become healthy:\n" + self.read_log())

    def wait_ready(self, timeout=120):
        deadline = time.time() + budget(timeout)
        body = None
        while time.time() < deadline:
            status, body = self.get("/readyz")
            if status == 200:
                return body
            time.sleep(0.2)
        raise RuntimeError("goboxd not ready: %s" % json.dumps(body))

    def wait_probed(self, timeout=300):
        """Until the readiness probes of the current table have finished."""
        deadline = time.time() + budget(timeout)
        while time.time() < deadline:
            status, body = self.get("/readyz")
            if status == 200 or (isinstance(body, dict) and not any(
                    v.get("error") == "probes are running"
                    for v in body.get("languages", {}).values())):
                return body
            time.sleep(0.2)
        raise RuntimeError("probes did not finish")

    def read_log(self):
        with open(self.log_path) as f:
            return f.read()

    def log_lines(self):
        out = []
        for line in self.read_log().splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
        return out

    def request(self, method, path, body=None, headers=None, timeout=120):
        data = None
        hdrs = dict(headers or {})
        if body is not None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            hdrs.setdefault("Content-Type", "application/json")
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=hdrs)
        try:
            with urllib.request.urlopen(req, timeout=budget(timeout)) as r:
                raw = r.read()
                return r.status, decode(raw), dict(r.headers)
        except urllib.error.HTTPError as e:
            raw = e.read()
            return e.code, decode(raw), dict(e.headers)

    def get(self, path, timeout=30):
        status, body, _ = self.request("GET", path, timeout=timeout)
        return status, body

    def post(self, path, body, timeout=120):
        status, body, _ = self.request("POST", path, body, timeout=timeout)
        return status, body

    def stats(self):
        """/info's counters (in_flight_jobs, queued_jobs, jobs_total...)."""
        status, info = self.get("/info")
        assert status == 200, info
        return info["stats"]

    def wait_jobs(self, running=None, queued=None, timeout=10):
        """Until as many jobs run (in_flight_jobs) and wait in the
        master's queue (queued_jobs) as given."""
        def there():
            s = self.stats()
            return ((running is None or s["in_flight_jobs"] == running) and
                    (queued is None or s["queued_jobs"] == queued))
        wait_until(there, "%s jobs running, %s queued" % (running, queued), timeout)

    def wait_log(self, pred, what, timeout=10):
        """Until a line of the log (parsed) satisfies pred; that line."""
        def found():
            return next((l for l in reversed(self.log_lines()) if pred(l)), None)
        return wait_until(found, what, timeout)

    def worker_pids(self):
        return [w["pid"] for w in self.stats()["workers"]]

    def stop(self, sig=signal.SIGTERM, timeout=30):
        """Stop the daemon; its exit status. A sanitizer's report in its
        log (an ASan build's run, `make integration` in that build) fails
        the test that stops it."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=budget(timeout))
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        reports = sanitizer_reports(self.read_log())
        assert not reports, "goboxd's sanitizer reports:\n" + "\n".join(reports[:20])
        return self.proc.returncode

    def cgroup_trees(self):
        """This daemon's worker subtrees (v1: one per controller; v2: one)."""
        return glob.glob(os.path.join("/sys/fs/cgroup", "**", "goboxd",
                                      "%d-w*" % self.proc.pid), recursive=True)

    def step_cgroups(self, timeout=5):
        """Cgroups in this daemon's worker subtrees beyond each idle worker's
        warm jails (--jails-per-worker: each its own cgroup, and the one its
        init waits in for the first program). Waits a little: a job's jail
        is torn down, and the next one started, just after its answer is
        sent."""
        trees = self.cgroup_trees()
        assert trees, "no worker cgroup subtree found: the check would see nothing"
        deadline = time.time() + budget(timeout)
        while True:
            extra = []
            for t in trees:
                subs = sorted(d for d in os.listdir(t) if os.path.isdir(os.path.join(t, d)))
                extra += [os.path.join(t, d) for d in subs[2 * self.jails:]]
            if not extra or time.time() >= deadline:
                return extra
            time.sleep(0.1)

    def leftovers(self, timeout=5):
        """Job directories left behind. An idle worker keeps its warm jails
        (--jails-per-worker), whose job directories are empty and have no
        snapshot; anything else, or more of those than the workers' jails,
        is a leftover. Waits a little: a
        job's jail is torn down just after its answer is sent."""
        if self.proc.poll() is None:
            self.wait_probed()
        deadline = time.time() + budget(timeout)
        while True:
            jobs = self.job_dirs()
            if self.proc.poll() is not None:
                left = jobs
            else:
                # a directory removed since the listing is no leftover
                listed = {j: self._entries(j) for j in jobs}
                jobs = [j for j in jobs if listed[j] is not None]
                warm = [j for j in jobs if not j.endswith(".base") and
                        self._empty(j, listed[j])]
                left = [j for j in jobs if j not in warm] + warm[self.workers * self.jails:]
            if not left or time.time() >= deadline:
                # what each one holds, where it was seen: for the message
                return ["%s: %s" % (self.job_dir_path(j), self._listing(j)) for j in left]
            time.sleep(0.1)

    def _empty(self, name, entries):
        """A warm jail's job directory: empty, or a disk of its own
        (worker/sandbox/disks.h) holding only its empty box."""
        if not entries:
            return True
        return entries == ["box"] and not self._entries(name + "/box")

    def _entries(self, name):
        """A job directory's names, None once it is gone."""
        try:
            return os.listdir(self.job_dir_path(name))
        except FileNotFoundError:
            return None

    def _listing(self, name):
        try:
            return sorted(os.listdir(self.job_dir_path(name)))[:10]
        except OSError as e:
            return str(e)

    def stopped_clean(self):
        """Stop the daemon; then no job directory and no cgroup of it may
        remain, warm jails included."""
        trees_before = self.cgroup_trees()
        assert trees_before, "no worker cgroup subtree found: the check would see nothing"
        self.stop()
        return self.job_dirs() + [t for t in trees_before if os.path.exists(t)]

    def job_dirs(self):
        """Job directories and their snapshots: the host's, where the
        prober makes its own,
        and each live worker's, which are on its private job disk (seen
        through /proc/PID/root)."""
        views = [self.jail_dir]
        if self.proc.poll() is None:
            try:
                views += ["/proc/%d/root%s" % (pid, self.jail_dir)
                          for pid in self.worker_pids() if pid]
            except OSError:
                pass
        found = set()
        for v in views:
            try:
                found.update(d for d in os.listdir(v) if d.startswith("job-"))
            except OSError:
                pass
        return sorted(found)

    def job_dir_path(self, name):
        """Where a job directory named by job_dirs() can be read."""
        for pid in (self.worker_pids() if self.proc.poll() is None else []):
            p = "/proc/%d/root%s/%s" % (pid, self.jail_dir, name)
            if os.path.lexists(p):
                return p
        return os.path.join(self.jail_dir, name)


def job_dir_holds(root, name, entry):
    """Whether the job directory name under root (a worker's view of the
    jail dir) holds entry, directly or in the box of a jail's own disk."""
    return any(os.path.exists(os.path.join(root, name, *sub, entry)) for sub in ((), ("box",)))


def decode(raw):
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode(errors="replace")


# What most tests' daemons need: a daemon probes every language it has at
# its start (java's or dotnet's probe alone takes a CPU-second), which a
# test that runs py3 or C need not pay for; tests/v2/run-tests gives its
# guests the same four.
SMALL = ("bash", "c", "cpp", "py3")
_language_dirs = {}


# A language whose build runs the submission itself (with "build"; its
# tests with "run"): a request can leave a tree of its choosing in the job
# directory before the snapshot, or have its build take its time.
# Python that defines leave_a_flow_label(): an IPv6 flow label that
# outlives its socket by a minute (any uid may make one to linger up to
# 150 s), which a network namespace that served the next job would show
# in its /proc/net/ip6_flowlabel.
LEAVE_A_FLOW_LABEL = r'''
import socket, struct
def leave_a_flow_label():
    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    # in6_flowlabel_req: the destination, the label, IPV6_FL_A_GET,
    # IPV6_FL_S_ANY, IPV6_FL_F_CREATE, no expiry, a 60 s linger
    s.setsockopt(socket.IPPROTO_IPV6, 32, socket.inet_pton(socket.AF_INET6, "2001:db8::1")
                 + struct.pack("!I", 0x12345) + struct.pack("=BBHHHI", 0, 255, 1, 0, 60, 0))
    s.close()
    assert "12345" in open("/proc/net/ip6_flowlabel").read()
'''


PYBUILD = """id: pybuild
name: Python with a build step
source_filename: solution.py
build:
  cmd: /usr/bin/python3
  args: ["{{source}}", "build"]
  env:
    PYTHONDONTWRITEBYTECODE: "1"
run:
  cmd: /usr/bin/python3
  args: ["{{source}}", "run"]
  env:
    PYTHONDONTWRITEBYTECODE: "1"
probe: [/usr/bin/python3, --version]
"""


def new_languages_dir(ids, extra=()):
    """A languages dir of its own that any user may read (a rootless
    daemon's too): the languages ids of LANGUAGES (one not there is left
    out, as the full table would lack it), then the (file name, text)
    files of extra. The caller removes it."""
    d = tempfile.mkdtemp(prefix="goboxd-langs-")
    os.chmod(d, 0o755)
    for i in ids:
        src = os.path.join(LANGUAGES, i + ".yaml")
        if os.path.exists(src):
            shutil.copy(src, d)
    for name, text in extra:
        with open(os.path.join(d, name), "w") as f:
            f.write(text)
    for name in os.listdir(d):
        os.chmod(os.path.join(d, name), 0o644)
    return d


def languages_of(*ids):
    """new_languages_dir of these languages, one per set and process,
    removed at exit."""
    key = tuple(sorted(set(ids)))
    if key not in _language_dirs:
        _language_dirs[key] = new_languages_dir(key)
        atexit.register(shutil.rmtree, _language_dirs[key], True)
    return _language_dirs[key]


def small(*more):
    """The languages of SMALL, and more."""
    return languages_of(*SMALL, *more)


@pytest.fixture(scope="module")
def daemon():
    d = Daemon()
    yield d
    d.stop()


def lang_dir(*extra):
    """py3 plus the given (file name, text) languages (new_languages_dir).
    The caller removes it."""
    return new_languages_dir(("py3",), extra)


@pytest.fixture(scope="module")
def py3_only():
    """A languages dir with py3 alone: each daemon of a test that starts
    many probes only it."""
    d = lang_dir()
    yield d
    shutil.rmtree(d)


def judged(kind, source, judge, tests, language="py3", judge_language="py3", **extra):
    """A /run request with a judge program: kind is "interactor" or "checker"."""
    req = {"language": language, "source": source,
           kind: {"language": judge_language, "source": judge}, "tests": tests}
    req.update(extra)
    return req


def dump(body):
    """A response, cut to fit an assertion message."""
    return json.dumps(body)[:4000]


def run_ok(daemon, req, status=200):
    """POST /run, check the HTTP status, return the body."""
    code, body = daemon.post("/run", req)
    assert code == status, dump(body)
    return body
