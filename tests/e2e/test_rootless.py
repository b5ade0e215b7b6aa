"""goboxd started by an unprivileged user (master/rootless.c).

Given a delegated cgroup v2 subtree (what systemd's Delegate=yes gives a
user's service), unprivileged user namespaces and a subordinate id range
in /etc/subuid and /etc/subgid, goboxd runs jobs with every limit
enforced, its programs under ids of that range (never the user's own),
and shows them the same jail as goboxd run by root. Without a range it
refuses to start and names the remedy. It adds a user and a cgroup to the
machine, so it runs in a throwaway tests/v2/vm guest only.
"""

import os
import shutil
import tempfile

import pytest
import yaml

from conftest import TOP, Daemon, budget, dump, goboxd_bin
from test_cgroup_hosts import (CG, SHAPER, assert_jobs_are_bounded, cgroups_line,
                               check_line, make_cgroup, refused, remove_cgroup,
                               _root_controllers)

UID, NAME = 4321, "goboxd-rootless"
UID_NO_RANGE, NAME_NO_RANGE = 4322, "goboxd-norange"
SUBIDS = (200000, 65536)
ROOT_SUBIDS = (300000, 65536)
SERVICE = "goboxd-rootless.slice/goboxd.service"

pytestmark = pytest.mark.skipif(
    not os.environ.get("GOBOXD_TEST_V2_VM") or os.geteuid() != 0
    or _root_controllers("cgroup.controllers") is None
    or not os.access("/usr/bin/newuidmap", os.X_OK),
    reason="adds a user and a delegated cgroup: runs in a tests/v2/vm guest only, with uidmap")

# What a program sees of its jail: who it is, its files, its namespaces'
# maps, its mounts (without the kernel's ids, and without a tmpfs's uid=
# and gid=, which /proc names in the host's ids: the sandbox uid 60000
# under root, its subordinate id rootless), its capabilities.
VIEW = r'''
import os
def mounts():
    out = []
    for line in open("/proc/self/mountinfo"):
        f = line.split()
        sep = f.index("-")
        # the kernel names a tmpfs's owner in the host's ids, whoever asks
        opts = [o for o in f[sep + 3].split(",") if not o.startswith(("uid=", "gid="))]
        out.append((f[4], f[5], f[sep + 1], opts))
    return out
st = {p: (os.stat(p).st_uid, os.stat(p).st_gid, oct(os.stat(p).st_mode))
      for p in ("/", "/usr", "/tmp", "/sandbox", "/sandbox/solution.py", "/proc/self")}
caps = [l for l in open("/proc/self/status") if l.startswith(("Cap", "NoNewPrivs", "Seccomp"))]
print(repr((os.getuid(), os.getgid(), os.getgroups(), sorted(os.listdir("/")), st,
            open("/proc/self/uid_map").read(), open("/proc/self/gid_map").read(),
            os.uname().nodename, os.getcwd(), mounts(), caps, sorted(os.environ))))
'''


def add_user(uid, name, subids):
    with open("/etc/passwd", "a") as f:
        f.write("%s:x:%d:%d::/nonexistent:/usr/sbin/nologin\n" % (name, uid, uid))
    with open("/etc/group", "a") as f:
        f.write("%s:x:%d:\n" % (name, uid))
    if subids:
        for path in ("/etc/subuid", "/etc/subgid"):
            with open(path, "a") as f:
                f.write("%s:%d:%d\n" % (name, subids[0], subids[1]))


@pytest.fixture(scope="module")
def users():
    add_user(UID, NAME, SUBIDS)
    add_user(UID_NO_RANGE, NAME_NO_RANGE, None)
    # root's, for an unprivileged container's root
    for path in ("/etc/subuid", "/etc/subgid"):
        with open(path, "a") as f:
            f.write("root:%d:%d\n" % ROOT_SUBIDS)


@pytest.fixture
def delegated(users):
    """A user service's cgroup with Delegate=yes: the user owns it, and its
    parent hands it memory, pids and cpu."""
    make_cgroup(os.path.dirname(SERVICE), enable=["memory", "pids", "cpu"])
    path = make_cgroup(SERVICE)
    for f in ("", "cgroup.procs", "cgroup.subtree_control", "cgroup.threads"):
        os.chown(os.path.join(path, f), UID, UID)
    yield "/" + SERVICE
    remove_cgroup(os.path.join(CG, os.path.dirname(SERVICE)))


def user_dir(uid):
    d = tempfile.mkdtemp(prefix="goboxd-rootless-")
    os.chown(d, uid, uid)
    os.chmod(d, 0o711)
    return d


def as_user(uid, rel):
    return (SHAPER, "plain", rel, "setpriv", "--reuid=%d" % uid, "--regid=%d" % uid,
            "--clear-groups")


def run(daemon, req):
    status, body = daemon.post("/run", req, timeout=budget(120))
    assert status == 200, dump(body)
    return body


def test_rootless_runs_jobs_under_every_limit_and_ids_of_its_range(delegated, py3_only):
    # first: once the daemon has handed controllers down, no process may
    # join the service's cgroup any more
    rc, checked = check_line(as_user(UID, delegated), py3_only)
    assert rc == 0, checked
    home = user_dir(UID)
    daemon = Daemon(languages=py3_only, workers=1, wrapper=as_user(UID, delegated),
                    args=["--jail-dir", os.path.join(home, "jails")])
    try:
        said = [l["msg"] for l in daemon.log_lines() if l.get("msg", "").startswith("rootless: ")]
        assert said == [
            "rootless: uid %d and gid %d are root of goboxd's own user namespace; its uids "
            "1-65536 are 200000-265535 (/etc/subuid), its gids 1-65536 are 200000-265535 "
            "(/etc/subgid)" % (UID, UID)], daemon.read_log()
        line = cgroups_line(daemon)
        assert line == checked
        assert ("; goboxd's cgroup %s offers memory, pids and cpu, writable; the cgroup2 root "
                "offers memory, pids and cpu, not writable (Permission denied); " % delegated
                ) in line, line
        assert line.endswith("; takes %s%s/goboxd (own cgroup (delegated))" % (CG, delegated))
        with open("/proc/%d/status" % daemon.proc.pid) as f:
            uids = [l.split()[1:] for l in f if l.startswith("Uid:")][0]
        assert uids == [str(UID)] * 4, uids

        def under_a_subordinate_uid(pid):
            with open("/proc/%d/status" % pid) as f:
                ids = [l.split()[1:] for l in f if l.startswith(("Uid:", "Gid:"))]
            for real, eff, saved, fs in ids:
                assert SUBIDS[0] < int(real) < SUBIDS[0] + SUBIDS[1], ids
                assert real == eff == saved == fs, ids

        assert_jobs_are_bounded(daemon, CG + delegated, under_a_subordinate_uid)
        body = run(daemon, {"language": "py3", "source": "while True: pass",
                            "run": {"limits": {"cpu_time_s": 1}}, "tests": [{"stdin": ""}]})
        assert body["tests"][0]["status"] == "time_exceeded", dump(body)
        body = run(daemon, {"language": "py3", "source": "print('x' * 100000)",
                            "run": {"limits": {"output_kb": 16}}, "tests": [{"stdin": ""}]})
        t = body["tests"][0]
        assert t["status"] == "wrong_output" and t["stdout_truncated"], dump(body)
        body = run(daemon, {"language": "py3", "source": "print(int(input()) * 2)",
                            "tests": [{"stdin": "21\n", "expected_stdout": "42\n"}]})
        assert body["tests"][0]["status"] == "accepted", dump(body)
    finally:
        daemon.stop()
        shutil.rmtree(home)


def test_rootless_shows_the_same_jail_as_root(delegated, py3_only):
    views = []
    home = user_dir(UID)
    for wrapper, args in (((), []), (as_user(UID, delegated),
                                     ["--jail-dir", os.path.join(home, "jails")])):
        daemon = Daemon(languages=py3_only, workers=1, wrapper=wrapper, args=args)
        try:
            body = run(daemon, {"language": "py3", "source": VIEW, "tests": [{"stdin": ""}]})
            assert body["tests"][0]["status"] == "accepted", dump(body)
            views.append(body["tests"][0]["stdout"])
        finally:
            daemon.stop()
    shutil.rmtree(home)
    assert views[0] == views[1], "root:\n%s\nrootless:\n%s" % tuple(views)


def test_rootless_without_a_range_refuses_and_names_the_remedy(delegated, py3_only):
    said = refused(as_user(UID_NO_RANGE, delegated), py3_only)
    assert said == (
        "start-up failed: rootless: /etc/subuid gives %s (uid %d) no range of 61025 ids or "
        "more, which the sandbox uids (--sandbox-uid-base 60000 and up) need; remedy: usermod "
        "--add-subuids 100000-165535 --add-subgids 100000-165535 %s"
        % (NAME_NO_RANGE, UID_NO_RANGE, NAME_NO_RANGE))


def pod_capabilities():
    """setpriv's arguments for the container deploy/kubernetes-unprivileged
    asks for: its capabilities, and no_new_privs where it forbids
    privilege escalation."""
    with open(os.path.join(TOP, "deploy", "kubernetes-unprivileged",
                           "goboxd-unprivileged.yaml")) as f:
        patch = yaml.safe_load(f)
    (container,) = patch["spec"]["template"]["spec"]["containers"]
    sc = container["securityContext"]
    assert sc["capabilities"]["drop"] == ["ALL"], sc
    keep = ",".join("+" + c.lower() for c in sc["capabilities"]["add"])
    args = ["--bounding-set=-all," + keep, "--inh-caps=-all"]
    if sc.get("allowPrivilegeEscalation") is False:
        args.append("--no-new-privs")
    return args


def test_a_containers_root_without_setfcap_refuses_and_names_it(users, py3_only):
    """Mapping uid 0 onto itself takes CAP_SETFCAP (Linux 5.12): a
    container given CAP_SETUID and CAP_SETGID alone is refused at start
    with what it lacks, not with newuidmap's bare EPERM."""
    path = make_cgroup("goboxd-rootless-container")
    try:
        said = refused((SHAPER, "ns-ro", path[len(CG):], "setpriv",
                        "--bounding-set=-all,+setuid,+setgid", "--inh-caps=-all"), py3_only)
    finally:
        remove_cgroup(path)
    assert said == (
        "start-up failed: rootless: root without CAP_SYS_ADMIN maps uid 0 onto itself in "
        "goboxd's user namespace with newuidmap, which needs CAP_SETUID, CAP_SETGID and "
        "CAP_SETFCAP; it lacks CAP_SETFCAP; remedy: give the container it "
        "(deploy/kubernetes-unprivileged)")


@pytest.mark.parametrize("caps", [
    ["--bounding-set=-sys_admin", "--inh-caps=-sys_admin"],
    pod_capabilities(),
], ids=["without_sys_admin", "kubernetes_unprivileged_pod"])
def test_an_unprivileged_containers_root_runs_jobs_under_every_limit(users, py3_only, caps):
    """Root without CAP_SYS_ADMIN, in a cgroup namespace of its own whose
    cgroupfs is read-only: a container that is not privileged, first with
    every other capability, then with only those the Kubernetes example
    gives its pods (and no_new_privs). goboxd enters its own user namespace
    and mounts cgroup2 anew there."""
    path = make_cgroup("goboxd-rootless-container")
    rel = path[len(CG):]
    wrapper = (SHAPER, "ns-ro", rel, "setpriv", *caps)
    try:
        daemon = Daemon(languages=py3_only, workers=1, wrapper=wrapper)
        try:
            said = [l["msg"] for l in daemon.log_lines()
                    if l.get("msg", "").startswith("rootless: ")]
            assert said == [
                "rootless: uid 0 (without CAP_SYS_ADMIN) and gid 0 are root of goboxd's own "
                "user namespace; its uids 1-65536 are 300000-365535 (/etc/subuid), its gids "
                "1-65536 are 300000-365535 (/etc/subgid); cgroup2 mounted anew in its own "
                "cgroup namespace, the one found being read-only"], daemon.read_log()
            line = cgroups_line(daemon)
            assert line.startswith("cgroups: v2, found cgroup2 at /sys/fs/cgroup (read-write); "
                                   "goboxd's cgroup / offers memory, pids and cpu, writable"), line
            assert line.endswith("; takes /sys/fs/cgroup/goboxd (own cgroup (delegated))"), line

            def under_root_s_subordinate_ids(pid):
                with open("/proc/%d/status" % pid) as f:
                    ids = [l.split()[1:] for l in f if l.startswith(("Uid:", "Gid:"))]
                for real, eff, saved, fs in ids:
                    assert ROOT_SUBIDS[0] < int(real) < sum(ROOT_SUBIDS), ids

            assert_jobs_are_bounded(daemon, path, under_root_s_subordinate_ids)
        finally:
            daemon.stop()
    finally:
        remove_cgroup(path)


# In the container's own mount namespace: goboxd's build directory bound
# at another place, goboxd started from there without CAP_SYS_ADMIN.
BOUND = """
build=$1 where=$2
shift 3
mount --bind "$build" "$where" &&
	exec setpriv --bounding-set=-sys_admin --inh-caps=-sys_admin "$where/goboxd" "$@"
"""


def test_a_goboxd_on_a_mount_of_its_own_finds_its_init_once_rootless(users, py3_only):
    """goboxd on a mount of its own (a checkout under a container's fresh
    /tmp, a bind), started in a mount namespace that ends when it enters
    its own: the kernel then names goboxd's program from that mount's root
    ("/goboxd"), so goboxd reads its path before (common/util.c, self_exe)
    to find goboxd-init beside it. It found none, and answered every job
    with a 503."""
    path = make_cgroup("goboxd-rootless-bound")
    where = tempfile.mkdtemp(prefix="goboxd bound ", dir="/tmp")
    wrapper = (SHAPER, "ns-ro", path[len(CG):], "sh", "-c", BOUND, "sh",
               os.path.dirname(os.path.abspath(goboxd_bin())), where)
    try:
        daemon = Daemon(languages=py3_only, workers=1, wrapper=wrapper)
        try:
            assert [l for l in daemon.log_lines() if "not found" in l.get("msg", "")] == [], \
                daemon.read_log()
            status, body = daemon.post("/run", {"language": "py3", "source": "print(6 * 7)",
                                                "tests": [{"stdin": ""}]})
            assert status == 200, body
            assert body["tests"][0]["stdout"] == "42\n", body
        finally:
            daemon.stop()
    finally:
        remove_cgroup(path)
        os.rmdir(where)
