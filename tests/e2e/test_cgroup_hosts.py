"""Hosts that give less than a delegated cgroup v2 subtree.

goboxd says at start, in one line, what it found of cgroups, what it
needs and what it takes; `goboxd --check` says the same line. Where the
host gives too little it refuses to start, and it never runs a job
without its memory and pids limits. Each host shape is made by
tests/e2e/cgroup-host in a throwaway cgroup v2 guest (tests/v2/run-tests
sets GOBOXD_TEST_V2_VM); the host that delegates nothing at all is the
guest booted with --no-controllers.
"""

import json
import os
import shutil
import subprocess
import tempfile
import threading
import time

import pytest

from conftest import TOP, Daemon, budget, dump, time_caps

CG = "/sys/fs/cgroup"
SHAPER = os.path.join(TOP, "tests", "e2e", "cgroup-host")
NEEDS = ("needs memory and pids in a writable cgroup2 cgroup, or v1's memory, pids and "
         "cpuacct")


def _root_controllers(name):
    try:
        with open(os.path.join(CG, name)) as f:
            return f.read().split()
    except OSError:
        return None


pytestmark = pytest.mark.skipif(
    not os.environ.get("GOBOXD_TEST_V2_VM") or os.geteuid() != 0
    or _root_controllers("cgroup.controllers") is None,
    reason="reshapes the cgroup v2 tree: runs in a tests/v2/vm guest only")

HOG = "x = b'x' * (256 << 20)\nprint('all of it')\n"
# Execs a sleep the test can find in /proc by its argument.
SLEEPER = "import os\nos.execvp('sleep', ['sleep', '%s'])\n"


def make_cgroup(rel, enable=None):
    """A cgroup below the root; enable: what it hands to its children."""
    path = os.path.join(CG, rel)
    os.makedirs(path, exist_ok=True)
    if enable is not None:
        with open(os.path.join(path, "cgroup.subtree_control"), "w") as f:
            f.write(" ".join("+" + c for c in enable))
    return path


def remove_cgroup(path):
    """Depth first; what still runs there was killed with its daemon."""
    for top, dirs, _ in os.walk(path, topdown=False):
        for d in dirs:
            try:
                os.rmdir(os.path.join(top, d))
            except OSError:
                pass
    try:
        os.rmdir(path)
    except OSError:
        pass


def cgroups_line(daemon):
    lines = [l["msg"] for l in daemon.log_lines() if l.get("msg", "").startswith("cgroups: ")]
    assert len(lines) == 1, daemon.read_log()
    return lines[0]


def check_line(wrapper, languages, *args):
    cmd = list(wrapper) + [os.environ.get("GOBOXD_BIN"), "--check", "--jail", "bwrap",
                           "--languages-dir", languages] + time_caps() + list(args)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=budget(60))
    lines = [l for l in p.stdout.splitlines() if "cgroups: " in l]
    assert len(lines) == 1, p.stdout + p.stderr
    return p.returncode, lines[0]


def refused(wrapper, languages):
    """goboxd started on a host that gives too little: exit status 1 (start-up
    failed, goboxd(8)) and its one error line."""
    tmp = tempfile.mkdtemp(prefix="goboxd-hosts-")
    os.chmod(tmp, 0o711)
    try:
        cmd = list(wrapper) + [os.environ.get("GOBOXD_BIN"), "--listen", "127.0.0.1",
                               "--port", "0", "--jail", "bwrap", "--languages-dir", languages,
                               "--jail-dir", os.path.join(tmp, "jails")] + time_caps()
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=budget(60))
    finally:
        shutil.rmtree(tmp)
    assert p.returncode == 1, p.stderr
    errors = [json.loads(l)["msg"] for l in p.stderr.splitlines() if '"error"' in l]
    assert len(errors) == 1, p.stderr
    return errors[0]


def assert_refused(wrapper, languages, found):
    """goboxd refuses to start there with the line that says what it found,
    and the remedies; --check fails with the same line."""
    line = "cgroups: %s; %s; none usable" % (found, NEEDS)
    said = refused(wrapper, languages)
    assert said.startswith("start-up failed: " + line + "; remedies: "), said
    rc, checked = check_line(wrapper, languages)
    assert rc == 1 and checked == "FAILED: " + line, checked
    return line


def proc_cgroup(pid):
    with open("/proc/%d/cgroup" % pid) as f:
        return f.read().strip().split("::", 1)[1]


def limit(path, name):
    with open(os.path.join(path, name)) as f:
        v = f.read().strip()
    return None if v == "max" else int(v)


def effective(path, name, stop):
    """The tightest of a cgroup's and its ancestors' limits, up to stop."""
    best = None
    while True:
        v = limit(path, name)
        if v is not None and (best is None or v < best):
            best = v
        if path == stop or len(path) <= len(CG):
            return best
        path = os.path.dirname(path)


def find_pid(marker, deadline):
    while time.time() < deadline:
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                with open("/proc/%s/cmdline" % d, "rb") as f:
                    if f.read().split(b"\0")[:2] == [b"sleep", marker.encode()]:
                        return int(d)
            except OSError:
                pass
        time.sleep(0.05)
    raise AssertionError("the job's program never showed up")


def assert_jobs_are_bounded(daemon, base, on_program=None):
    """A job's program runs under its memory and pids limits, in base/goboxd;
    a program over its memory gets memory_exceeded. on_program(pid) may
    look at the program while it runs."""
    marker = "%d.4242" % budget(20)
    result = {}

    def run():
        result["r"] = daemon.post("/run", {
            "language": "py3", "source": SLEEPER % marker,
            "run": {"limits": {"memory_kb": 65536, "max_processes": 4,
                               "wall_time_s": budget(30)}},
            "tests": [{"stdin": ""}]}, timeout=budget(120))

    t = threading.Thread(target=run)
    t.start()
    try:
        pid = find_pid(marker, time.time() + budget(60))
        where = CG + proc_cgroup(pid)
        top = os.path.join(base, "goboxd")
        assert where.startswith(top + "/"), (where, top)
        memory = effective(where, "memory.max", top)
        pids = effective(where, "pids.max", top)
        assert memory is not None and memory <= 2 * 65536 * 1024, (where, memory)
        assert pids is not None and pids <= 4 + 2, (where, pids)
        if on_program:
            on_program(pid)
        os.kill(pid, 9)
    finally:
        t.join(budget(120))
    status, body = result["r"]
    assert status == 200 and body["tests"][0]["status"] == "runtime_error", dump(body)
    status, body = daemon.post("/run", {"language": "py3", "source": HOG,
                                        "run": {"limits": {"memory_kb": 65536}},
                                        "tests": [{"stdin": ""}]}, timeout=budget(120))
    assert status == 200 and body["tests"][0]["status"] == "memory_exceeded", dump(body)


def test_a_host_that_delegates_nothing_is_taken_at_its_root_by_root(py3_only):
    """Booted with --no-controllers: nothing enabled below the root. As root
    goboxd enables memory and pids there itself."""
    if _root_controllers("cgroup.subtree_control") != []:
        pytest.skip("the root delegates: boot the guest with --no-controllers")
    own = proc_cgroup(os.getpid())
    line = ("cgroups: v2, found cgroup2 at /sys/fs/cgroup (read-write); goboxd's cgroup %s "
            "offers neither memory nor pids, writable; the cgroup2 root offers memory, pids "
            "and cpu, writable; no v1 memory, pids or cpuacct; %s; takes /sys/fs/cgroup/"
            "goboxd (cgroup2 root)" % (own, NEEDS))
    # first, while the root still delegates nothing: the daemon changes that
    rc, said = check_line((), py3_only)
    assert rc == 0 and said == line, said
    # an unprivileged user without a subordinate range never gets as far
    p = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                        os.environ.get("GOBOXD_BIN"), "--check", "--jail", "bwrap",
                        "--languages-dir", py3_only] + time_caps(),
                       capture_output=True, text=True, timeout=budget(60))
    assert p.returncode == 1, p.stdout + p.stderr
    assert p.stdout.startswith("FAILED: rootless: /etc/subuid gives nobody (uid 65534) no "
                               "range"), p.stdout
    daemon = Daemon(languages=py3_only, workers=1)
    try:
        assert cgroups_line(daemon) == line
        assert_jobs_are_bounded(daemon, CG)
    finally:
        daemon.stop()


def test_memory_alone_is_refused_in_a_namespace_and_passed_over_by_root(py3_only):
    """A cgroup offered memory but not pids: a container with its own cgroup
    namespace there cannot run jobs; root on the host takes the root."""
    parent = make_cgroup("goboxd-hosts-memory", enable=["memory"])
    child = make_cgroup("goboxd-hosts-memory/c")
    rel = child[len(CG):]
    try:
        assert_refused((SHAPER, "ns", rel), py3_only,
                       "found cgroup2 at /sys/fs/cgroup (read-write); goboxd's cgroup / offers "
                       "memory but not pids, writable; no v1 memory, pids or cpuacct")

        daemon = Daemon(languages=py3_only, workers=1, wrapper=(SHAPER, "plain", rel))
        try:
            line = cgroups_line(daemon)
            assert ("; goboxd's cgroup %s offers memory but not pids, writable; the cgroup2 "
                    "root offers memory, pids and cpu, writable; " % rel) in line, line
            assert line.endswith("; takes /sys/fs/cgroup/goboxd (cgroup2 root)"), line
            assert_jobs_are_bounded(daemon, CG)
        finally:
            daemon.stop()
    finally:
        remove_cgroup(os.path.join(CG, "goboxd"))
        remove_cgroup(parent)


def test_a_read_only_cgroupfs_without_a_namespace_is_refused(py3_only):
    """A container sharing the host's cgroups, mounted read-only: nothing
    goboxd may write; degraded on request, it refuses every job."""
    path = make_cgroup("goboxd-hosts-shared")
    rel = path[len(CG):]
    wrapper = (SHAPER, "host-ro", rel)
    try:
        line = assert_refused(
            wrapper, py3_only,
            "found cgroup2 at /sys/fs/cgroup (read-only); goboxd's cgroup %s offers memory, "
            "pids and cpu, read-only; the cgroup2 root offers memory, pids and cpu, read-only; "
            "no v1 memory, pids or cpuacct" % rel)

        daemon = Daemon(languages=py3_only, workers=1, wrapper=wrapper,
                        args=["--allow-degraded-cgroups"])
        try:
            assert any(l.get("msg", "").startswith(line + "; running degraded")
                       for l in daemon.log_lines()), daemon.read_log()
            status, body = daemon.post("/run", {"language": "py3", "source": "print(1)",
                                                "tests": [{"stdin": ""}]})
            assert status == 503 and body["error"]["code"] == "sandbox_unavailable", body
        finally:
            daemon.stop()
    finally:
        remove_cgroup(path)


def test_a_namespace_mounted_read_only_is_refused(py3_only):
    path = make_cgroup("goboxd-hosts-ns-ro")
    wrapper = (SHAPER, "ns-ro", path[len(CG):])
    try:
        assert_refused(wrapper, py3_only,
                       "found cgroup2 at /sys/fs/cgroup (read-only); goboxd's cgroup / offers "
                       "memory, pids and cpu, read-only; no v1 memory, pids or cpuacct")
    finally:
        remove_cgroup(path)


def test_a_namespace_of_its_own_is_taken_and_bounded(py3_only):
    """A container with --cgroupns=private on a delegated cgroup: goboxd
    builds in the namespace's root, every job under its limits."""
    path = make_cgroup("goboxd-hosts-ns")
    wrapper = (SHAPER, "ns", path[len(CG):])
    line = ("cgroups: v2, found cgroup2 at /sys/fs/cgroup (read-write); goboxd's cgroup / "
            "offers memory, pids and cpu, writable; no v1 memory, pids or cpuacct; %s; "
            "takes /sys/fs/cgroup/goboxd (own cgroup (delegated))" % NEEDS)
    try:
        # first: once the daemon has handed controllers down, no process
        # may join that cgroup any more
        rc, said = check_line(wrapper, py3_only)
        assert rc == 0 and said == line, said
        daemon = Daemon(languages=py3_only, workers=1, wrapper=wrapper)
        try:
            assert cgroups_line(daemon) == line
            assert_jobs_are_bounded(daemon, path)
        finally:
            daemon.stop()
    finally:
        remove_cgroup(path)
