"""One user's job leaves nothing for the next user's, in a jail that serves
both (--jobs-per-jail): nothing a program does reaches the jail's init
(its limits, its priority, its CPUs, its scheduling class), nothing the
kernel frees after a program's end passes for the init's memory and
raises the next program's limit, and nothing the next job can read counts
what ran before it (the init's accounting, the job disk's inode numbers
and free space).

Each test is the attack of a hostile job followed by a victim's job. Every
daemon here has one worker with one jail (--jails-per-worker 1), so that
the two land in the same jail (with two, the default, each serves every
other job: test_jail_reuse.py checks that they take turns and that the
one a jail serves next finds it as new); each
test checks that they did (JAIL: the same mount namespace and job
directory), so none can pass for want of a reuse. docs/security.md lists
every kernel object and counter a job could carry to the next, what ends
it, and its test here.
"""
import json
import os
import time

import pytest

from conftest import Daemon, budget, dump, needs_jail_reuse, run_ok as run, small


@pytest.fixture(scope="module")
def daemon():
    d = Daemon(languages=small(), workers=1, args=["--jails-per-worker", "1"])
    yield d
    d.stop()


def job(daemon, source, stdins=("",), **limits):
    req = {"language": "python3", "source": source,
           "tests": [{"stdin": s} for s in stdins]}
    if limits:
        req["run"] = {"limits": limits}
    return run(daemon, req)["tests"]


def around(daemon, probe, attack):
    """What probe sees, an attack job's own first line, then what probe sees
    again: three jobs, checked to have run in the same jail."""
    before = seen(job(daemon, probe)[0])
    during = seen(job(daemon, attack)[0])
    after = seen(job(daemon, probe)[0])
    assert before["jail"] == during["jail"] == after["jail"], "the jobs ran in other jails"
    return before, during, after


def seen(t):
    """A test's first line of output, JSON."""
    assert t["status"] == "accepted", dump(t)
    return json.loads(t["stdout"].splitlines()[0])


# Which jail a program runs in: its mount namespace, whose number the
# kernel gives again once it is freed, and when its root was made (the
# driver's last mkdir there, to the nanosecond; read-only since).
JAIL = ('import os\nJAIL = "%s %d" % (os.readlink("/proc/self/ns/mnt"), '
        'os.stat("/").st_ctime_ns)\n')

# What a program inherits from the init that starts it: its limits, nice
# value, I/O priority, CPUs and scheduling class.
INHERITED = JAIL + r'''
import ctypes, json, resource
libc = ctypes.CDLL(None, use_errno=True)
limits = {name: resource.getrlimit(getattr(resource, name))
          for name in ("RLIMIT_AS", "RLIMIT_DATA", "RLIMIT_STACK", "RLIMIT_RSS",
                       "RLIMIT_NOFILE", "RLIMIT_NPROC", "RLIMIT_MSGQUEUE",
                       "RLIMIT_SIGPENDING", "RLIMIT_NICE", "RLIMIT_RTPRIO",
                       "RLIMIT_RTTIME")}
print(json.dumps({"jail": JAIL, "limits": limits, "nice": os.getpriority(os.PRIO_PROCESS, 0),
                  "ioprio": libc.syscall(252, 1, 0),  # ioprio_get(IOPRIO_WHO_PROCESS, 0)
                  "cpus": sorted(os.sched_getaffinity(0)),
                  "policy": os.sched_getscheduler(0)}), flush=True)
'''

# Everything a program might try on pid 1, the jail's init, and on every
# process of its uid; what succeeded, on its stdout.
ON_THE_INIT = JAIL + r'''
import ctypes, json, resource
libc = ctypes.CDLL(None, use_errno=True)
done = []
def attempt(what, f):
    try:
        if f() in (None, 0):
            done.append(what)
    except OSError:
        pass
attempt("prlimit AS", lambda: resource.prlimit(1, resource.RLIMIT_AS, (64 << 20, 64 << 20)))
attempt("prlimit NOFILE", lambda: resource.prlimit(1, resource.RLIMIT_NOFILE, (8, 8)))
attempt("prlimit STACK", lambda: resource.prlimit(1, resource.RLIMIT_STACK, (1 << 16, 1 << 16)))
attempt("prlimit NPROC", lambda: resource.prlimit(1, resource.RLIMIT_NPROC, (1, 1)))
attempt("nice of pid 1", lambda: os.setpriority(os.PRIO_PROCESS, 1, 19))
attempt("nice of the uid", lambda: os.setpriority(os.PRIO_USER, 0, 19))
attempt("nice of group 1", lambda: os.setpriority(os.PRIO_PGRP, 1, 19))
# ioprio_set(IOPRIO_WHO_PROCESS / _PGRP / _USER, who, idle class)
attempt("ioprio of pid 1", lambda: libc.syscall(251, 1, 1, 3 << 13))
attempt("ioprio of group 1", lambda: libc.syscall(251, 2, 1, 3 << 13))
attempt("ioprio of the uid", lambda: libc.syscall(251, 3, 0, 3 << 13))
attempt("CPUs of pid 1", lambda: os.sched_setaffinity(1, {min(os.sched_getaffinity(0))}))
attempt("SCHED_IDLE for pid 1",
        lambda: os.sched_setscheduler(1, os.SCHED_IDLE, os.sched_param(0)))
attempt("SCHED_BATCH for pid 1",
        lambda: os.sched_setscheduler(1, os.SCHED_BATCH, os.sched_param(0)))
print(json.dumps({"jail": JAIL, "done": done}), flush=True)
'''


@needs_jail_reuse
def test_no_program_changes_what_the_next_job_inherits(daemon):
    before, attack, after = around(daemon, INHERITED, ON_THE_INIT)
    assert after == before, (attack["done"], before, after)
    # the init's limits untouched, a program's own set by the RUN
    assert attack["done"] == [], attack


@needs_jail_reuse
def test_a_lowered_limit_of_the_init_fails_no_later_job(daemon):
    # what the init's limits would break: an allocation of 100 MiB under
    # 256 MiB, and receiving a program's pipes (a 500 for every later job)
    attack = seen(job(daemon, ON_THE_INIT)[0])
    tests = job(daemon, JAIL + "x = bytearray(100 << 20)\n"
                "for i in range(0, len(x), 4096): x[i] = 1\n"
                "import json\nprint(json.dumps({'jail': JAIL}))\n", memory_kb=262144)
    assert seen(tests[0])["jail"] == attack["jail"], "the jobs ran in other jails"


# 150 MiB of SysV shared memory, touched and left for the kernel to free
# with the program's IPC namespace, after its end.
LEAVE_SHM = JAIL + r'''
import ctypes, json
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
size = 150 << 20
shm = libc.shmget(0, size, 0o1600)  # IPC_PRIVATE, IPC_CREAT | 0600
assert shm >= 0, ctypes.get_errno()
p = libc.shmat(shm, None, 0)
assert p not in (None, ctypes.c_void_p(-1).value), ctypes.get_errno()
ctypes.memset(p, 1, size)
print(json.dumps({"jail": JAIL}), flush=True)
'''

# 200 MiB touched: over a 128 MiB limit, whatever ran before.
ALLOC_200 = JAIL + r'''
import json, sys
print(json.dumps({"jail": JAIL}), flush=True)
x = bytearray(200 << 20)
for i in range(0, len(x), 4096): x[i] = 1
'''


@needs_jail_reuse
def test_shared_memory_left_raises_no_later_jobs_limit(daemon):
    first = seen(job(daemon, LEAVE_SHM, memory_kb=262144)[0])
    t = job(daemon, ALLOC_200, memory_kb=131072)[0]
    assert json.loads(t["stdout"].splitlines()[0])["jail"] == first["jail"], \
        "the jobs ran in other jails"
    assert t["status"] == "memory_exceeded", dump(t)


@needs_jail_reuse
def test_shared_memory_left_raises_not_the_next_tests_limit(daemon):
    # within one job: test after test, a submission cannot raise its own
    # limit with what the kernel frees late; and the init removes it
    # itself, so that every test is still born in the jail's one cgroup
    source = "import sys\nif sys.stdin.read().strip() == 'leave':\n" + "".join(
        "    " + line + "\n" for line in LEAVE_SHM.splitlines()) + \
        "else:\n" + "".join("    " + line + "\n" for line in ALLOC_200.splitlines()) + \
        "print(open('/proc/self/cgroup').read(), end='', flush=True)\n"
    tests = job(daemon, source, ("leave\n", "alloc\n", "leave\n", "alloc\n"),
                memory_kb=196608)
    assert [t["status"] for t in tests] == ["accepted", "memory_exceeded"] * 2, dump(tests)
    cgroups = [t["stdout"].split("\n", 1)[1] for t in tests[::2]]
    assert cgroups[0] and cgroups[0] == cgroups[1], cgroups


# How much a program may touch before it is killed for its memory, in
# MiB: the last line of its output.
ALLOWANCE = JAIL + r'''
import json
print(json.dumps({"jail": JAIL}), flush=True)
x = []
while True:
    b = bytearray(1 << 20)
    for i in range(0, len(b), 4096): b[i] = 1
    x.append(b)
    print(len(x), flush=True)
'''


def allowance(daemon):
    t = job(daemon, ALLOWANCE, memory_kb=65536)[0]
    assert t["status"] == "memory_exceeded", dump(t)
    return int(t["stdout"].splitlines()[-1])


# 500,000 names looked up and not found, each new to the host: dentries
# the kernel keeps after the program's end, charged to its cgroup (about
# 100 MiB), which only a reclaim frees, one by one.
NEGATIVE_DENTRIES = JAIL + r'''
import json
token = os.urandom(8).hex()
for i in range(500000):
    try:
        os.stat("/usr/goboxd-none-%s-%d" % (token, i))
    except FileNotFoundError:
        pass
print(json.dumps({"jail": JAIL}), flush=True)
'''


@needs_jail_reuse
@pytest.mark.slow
def test_dentries_left_raise_no_later_jobs_limit(daemon):
    before = allowance(daemon)
    seen(job(daemon, NEGATIVE_DENTRIES, memory_kb=262144, cpu_time_s=budget(5),
             wall_time_s=budget(9))[0])
    after = allowance(daemon)
    # a MiB either way: what the interpreter itself takes varies
    assert after <= before + 1, (before, after)
    assert allowance(daemon) <= before + 1


# What a program can read of the init: every /proc/1 file that counts
# what the init did (the programs it reaped, the time it ran, the messages
# it served), or the error that keeps it from them.
THE_INITS_ACCOUNTS = JAIL + r'''
import json
seen = {}
for name in ("stat", "status", "sched", "schedstat", "io", "statm"):
    try:
        with open("/proc/1/" + name) as f:
            seen[name] = f.read()
    except OSError as e:
        seen[name] = type(e).__name__
print(json.dumps({"jail": JAIL, "seen": seen,
                  "processes": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
                  "pid": os.getpid()}), flush=True)
'''

BURN = JAIL + r'''
import json, time
t = time.process_time()
while time.process_time() - t < 0.5: pass
for _ in range(20): os.waitpid(os.spawnv(os.P_NOWAIT, "/bin/true", ["true"]), 0)
print(json.dumps({"jail": JAIL}), flush=True)
'''


@needs_jail_reuse
def test_the_next_job_reads_nothing_of_the_inits_accounts(daemon):
    burnt = seen(job(daemon, BURN)[0])
    after = seen(job(daemon, THE_INITS_ACCOUNTS)[0])
    assert after["jail"] == burnt["jail"], "the jobs ran in other jails"
    # the init is not there for a program to look at
    assert 1 not in after["processes"], after
    assert after["processes"] == [after["pid"]], after
    assert set(after["seen"].values()) <= {"FileNotFoundError", "PermissionError"}, after


def test_the_init_is_out_of_every_programs_sight_from_the_start():
    d = Daemon(languages=small(), workers=1, args=["--jobs-per-jail", "1"])
    try:
        fresh = seen(job(d, THE_INITS_ACCOUNTS)[0])
    finally:
        d.stop()
    assert 1 not in fresh["processes"], fresh
    assert set(fresh["seen"].values()) <= {"FileNotFoundError", "PermissionError"}, fresh


# What the job disk tells of the jobs before: the numbers of the inodes
# it gives (its source's and a new file's), and its free space and files.
DISK = JAIL + r'''
import json, sys
open("/sandbox/new", "w").close()
sv = os.statvfs("/sandbox")
print(json.dumps({"jail": JAIL, "source": os.stat(sys.argv[0]).st_ino,
                  "new": os.stat("/sandbox/new").st_ino,
                  "free": [sv.f_bfree, sv.f_ffree]}), flush=True)
'''

# 5,000 files made and removed, and one 8 MiB file left behind.
COUNT_ON_THE_DISK = JAIL + r'''
import json
for i in range(5000):
    open("/sandbox/f", "w").close()
    os.unlink("/sandbox/f")
with open("/sandbox/left", "wb") as f:
    f.write(b"x" * (8 << 20))
print(json.dumps({"jail": JAIL}), flush=True)
'''


@needs_jail_reuse
def test_the_next_job_counts_nothing_on_the_job_disk(daemon):
    before, _, after = around(daemon, DISK, COUNT_ON_THE_DISK)
    # the same numbers, the same room: nothing of the 5,001 files shows
    assert after == before, (before, after)
    # and the old disks are gone, not kept mounted out of sight: the
    # worker holds its one jail's, and its job directories are that one
    worker = daemon.worker_pids()[0]

    def disks():
        """The disks mounted in the jail dir, and the jail dir's names."""
        with open("/proc/%d/mountinfo" % worker) as f:
            mounted = [os.path.basename(l.split()[4]) for l in f
                       if l.split()[4].startswith(daemon.jail_dir + "/job-")]
        return mounted, os.listdir("/proc/%d/root%s" % (worker, daemon.jail_dir))
    # the last job's goes just after its answer (the keeper's unmount
    # waits for an RCU grace period, then it removes the directory)
    deadline = time.time() + 5
    while disks()[1] != disks()[0] and time.time() < deadline:
        time.sleep(0.05)
    mounted, names = disks()
    assert len(mounted) == 1 and names == mounted, (mounted, names)


# The number the next name made in /tmp gets: how many inodes that tmpfs
# has made. With "unnamed", first 100 unnamed files (O_TMPFILE), made and
# let go, which move that count and leave /tmp's root as it was: the
# init keeps such a /tmp for the job's next test (clear_tmp).
TMP_COUNT = JAIL + r'''
import json, sys
if sys.stdin.read().strip() == "unnamed":
    for _ in range(100):
        os.close(os.open("/tmp", os.O_TMPFILE | os.O_WRONLY, 0o600))
    print(json.dumps({"jail": JAIL}), flush=True)
else:
    fd = os.open("/tmp/probe", os.O_CREAT | os.O_WRONLY, 0o600)
    print(json.dumps({"jail": JAIL, "ino": os.fstat(fd).st_ino}), flush=True)
'''


@needs_jail_reuse
def test_the_next_job_counts_nothing_in_tmp(daemon):
    """A /tmp kept from one test to the next of a job carries the count of
    its unnamed files; it never reaches the next job."""
    before = seen(job(daemon, TMP_COUNT)[0])
    # the second test finds the first one's /tmp, and leaves it as it was
    during = job(daemon, TMP_COUNT, ("unnamed", "unnamed"))
    after = seen(job(daemon, TMP_COUNT)[0])
    assert [seen(t)["jail"] for t in during] == [before["jail"]] * 2, dump(during)
    assert after == before, (before, after)


# A job that leaves its /tmp full, and first, when its input says so,
# takes the name in its box that the init moves the last /tmp to
# (LAST_TMP in worker/sandbox/init.c), so that the init must unmount it
# on its own instead.
FILL_TMP = JAIL + r'''
import json, sys
if sys.stdin.read().strip() == "take":
    os.mkdir("/sandbox/.goboxd-last-tmp")
with open("/tmp/fill", "wb") as f:
    for _ in range(48):
        f.write(b"x" * (1 << 20))
print(json.dumps({"jail": JAIL}), flush=True)
'''

# What the next job finds of /tmp: its names, and every mount point.
TMP_SEEN = JAIL + r'''
import json
with open("/proc/self/mountinfo") as f:
    mounts = sorted(line.split()[4] for line in f)
print(json.dumps({"jail": JAIL, "tmp": os.listdir("/tmp"), "mounts": mounts}), flush=True)
'''


@needs_jail_reuse
@pytest.mark.parametrize("take", ["", "take\n"], ids=["moved", "name-taken"])
def test_a_full_tmp_goes_whole_with_its_job(daemon, take):
    before = seen(job(daemon, TMP_SEEN)[0])
    room = allowance(daemon)
    filled = seen(job(daemon, FILL_TMP, (take,), memory_kb=262144)[0])
    after = seen(job(daemon, TMP_SEEN)[0])
    assert filled["jail"] == after["jail"] == before["jail"], "the jobs ran in other jails"
    # an empty /tmp, and the last one not kept mounted out of sight
    assert after == before, (before, after)
    # its 48 MiB freed before the cgroup was set back: they would pass
    # for the init's memory and raise the next job's limit by as much
    assert allowance(daemon) <= room + 1, room
