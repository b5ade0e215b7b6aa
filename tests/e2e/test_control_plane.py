"""The control plane drops nothing and leaks nothing: job directories of
any depth, fds and capabilities of the master's children, dispatches that
fail, and removals that never hold up a request."""
import json
import os
import re
import shutil
import signal
import socket
import threading
import time

import pytest

from conftest import (PYBUILD, Daemon, children, fd_links, lang_dir, server_socket_inode,
                      small, wait_until)

HELLO = {"language": "py3", "source": "print(input())\n",
         "tests": [{"stdin": "hi\n", "expected_stdout": "hi\n"}]}


def slow(seconds):
    return {"language": "py3", "source": "import time\ntime.sleep(%s)\nprint('done')\n" % seconds,
            "tests": [{"stdin": "", "expected_stdout": "done\n"}]}


# A probe that takes a while, so that a test finds the prober at work.
SLOW_PROBE = """id: zzslow
name: A language whose probe takes four seconds
source_filename: a.py
run:
  cmd: /usr/bin/python3
  args: ["{{source}}"]
probe: [/usr/bin/python3, -c, "import time; time.sleep(4); print('slow 1')"]
"""

# The submission for it: its build leaves a tree 200 directories deep, each
# test checks that the tree is back whole and leaves another one.
DEEP = """import os, sys
def nest(top, n):
    os.mkdir(top)
    os.chdir(top)
    for i in range(n):
        open("f%d" % i, "w").write(str(i))
        os.mkdir("d")
        os.chdir("d")
    os.chdir("/sandbox")
if sys.argv[1] == "build":
    nest("tree", 200)
else:
    p = "tree/" + "d/" * 199
    assert open(p + "f199").read() == "199", "lost the deepest file"
    nest("scratch", 200)
    print("ok")
"""




def title(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read().rstrip(b"\0").decode()
    except OSError:
        return ""


def in_a_probe_step(pid):
    """Whether pid is in one of the prober's step cgroups: a probe's jail,
    not the jail binary's `--version` that the prober runs, before it
    drops its capabilities, to report which jail it has."""
    try:
        with open("/proc/%d/cgroup" % pid) as f:
            return re.search(r"-probe/s\d+", f.read()) is not None
    except OSError:
        return False


def prober_at_work(daemon, not_pid=None):
    """The prober's pid once it runs a probe (its jail is its child)."""
    def find():
        for pid in children(daemon.proc.pid):
            if pid != not_pid and title(pid) == "goboxd: prober":
                try:
                    if any(in_a_probe_step(k) for k in children(pid)):
                        return pid
                except OSError:
                    pass
        return None
    return wait_until(find, what="a prober running a probe")


def status_fields(pid):
    out = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            k, _, v = line.partition(":")
            out[k] = v.strip()
    return out


def test_a_build_200_directories_deep_is_kept_restored_and_removed():
    """The snapshot of a built tree stopped at 64 levels: the job got 500."""
    d = lang_dir(("pybuild.yaml", PYBUILD))
    daemon = Daemon(languages=d, workers=1)
    try:
        req = {"language": "pybuild", "source": DEEP,
               "tests": [{"stdin": "", "expected_stdout": "ok\n"}] * 3}
        status, body = daemon.post("/run", req)
        assert status == 200, body
        assert body["status"] == "accepted", body
        assert daemon.leftovers() == []
    finally:
        daemon.stop()
        shutil.rmtree(d)


# Capability numbers (linux/capability.h) of what launching a jail takes
# (docs/architecture.md): CHOWN, DAC_OVERRIDE, FOWNER, KILL, SETGID, SETUID.
JAIL_CAPS = (1 << 0) | (1 << 1) | (1 << 3) | (1 << 5) | (1 << 6) | (1 << 7)


@pytest.mark.slow
def test_the_prober_keeps_only_what_launching_a_jail_takes():
    """The prober ran with every capability (CapEff 1fffeffffff)."""
    d = lang_dir(("zzslow.yaml", SLOW_PROBE))
    daemon = Daemon(languages=d, workers=1)
    try:
        prober = prober_at_work(daemon)
        st = status_fields(prober)
        assert int(st["CapEff"], 16) == JAIL_CAPS, st["CapEff"]
        assert int(st["CapPrm"], 16) == JAIL_CAPS, st["CapPrm"]
        assert int(st["CapBnd"], 16) == JAIL_CAPS, st["CapBnd"]
        assert int(st["CapInh"], 16) == 0 and int(st["CapAmb"], 16) == 0, st
        assert st["NoNewPrivs"] == "1", st["NoNewPrivs"]
        # the workers hold the same, no more
        worker = status_fields(daemon.worker_pids()[0])
        assert worker["CapEff"] == st["CapEff"] and worker["CapBnd"] == st["CapBnd"]
        # and the probes still pass with it
        body = daemon.wait_ready(timeout=60)
        assert body["languages"]["zzslow"]["ok"] is True, body
    finally:
        daemon.stop()
        shutil.rmtree(d)


def comm(pid):
    with open("/proc/%d/comm" % pid) as f:
        return f.read().strip()


@pytest.mark.slow
def test_a_workers_disk_keeper_keeps_only_the_capability_to_mount():
    """Each worker's disk keeper (worker/sandbox/disks.c) mounts the jails'
    own disks: CAP_SYS_ADMIN, in the worker's mount namespace, and nothing
    else; it goes with its worker."""
    daemon = Daemon(languages=small(), workers=1)
    try:
        daemon.wait_probed()
        worker = daemon.worker_pids()[0]
        keepers = [k for k in children(worker) if comm(k) == "goboxd-disks"]
        assert len(keepers) == 1, [(k, comm(k)) for k in children(worker)]
        keeper = keepers[0]
        st = status_fields(keeper)
        assert int(st["CapEff"], 16) == 1 << 21, st["CapEff"]
        assert int(st["CapPrm"], 16) == 1 << 21, st["CapPrm"]
        assert int(st["CapBnd"], 16) == 1 << 21, st["CapBnd"]
        assert int(st["CapInh"], 16) == 0 and int(st["CapAmb"], 16) == 0, st
        assert st["NoNewPrivs"] == "1", st["NoNewPrivs"]
        assert os.readlink("/proc/%d/ns/mnt" % keeper) == os.readlink("/proc/%d/ns/mnt" % worker)
        # it holds nothing but its socket and the jail dir
        fds = {int(fd): os.readlink("/proc/%d/fd/%s" % (keeper, fd))
               for fd in os.listdir("/proc/%d/fd" % keeper)}
        beyond = sorted(v for fd, v in fds.items() if fd > 2)
        assert len(beyond) == 2 and beyond[0] == daemon.jail_dir, fds
        assert beyond[1].startswith("socket:"), fds
        os.kill(worker, signal.SIGKILL)
        wait_until(lambda: not os.path.exists("/proc/%d" % keeper) or
                 status_fields(keeper)["State"].startswith("Z"), what="the keeper's end")
    finally:
        daemon.stop()


@pytest.mark.slow
def test_queued_clients_never_reach_a_new_generation_or_the_prober():
    """A reload forked its workers and the prober with the queued clients'
    sockets and memfds still open in them."""
    d = lang_dir(("zzslow.yaml", SLOW_PROBE))
    daemon = Daemon(languages=d, workers=1, args=["--max-concurrency", "1"])
    results = []
    try:
        daemon.wait_probed()
        busy = threading.Thread(target=lambda: results.append(daemon.post("/run", slow(4))))
        busy.start()
        wait_until(lambda: daemon.get("/info")[1]["stats"]["in_flight_jobs"] >= 1, what="the slow job")
        # one job waits in the master's queue behind it
        job = json.dumps(HELLO).encode()
        client = socket.create_connection(("127.0.0.1", daemon.port), timeout=30)
        client.sendall(b"POST /run HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s"
                       % (len(job), job))
        wait_until(lambda: daemon.get("/info")[1]["stats"]["queued_jobs"] == 1, what="a queued job")
        inode = server_socket_inode(daemon.port, client)
        conn = "socket:[%d]" % inode
        master = fd_links(daemon.proc.pid)
        # the check below can see what it looks for: the master holds both
        assert conn in master, master
        assert any("goboxd-conn" in l for l in master), master
        old = set(daemon.worker_pids())
        old_prober = [p for p in children(daemon.proc.pid) if title(p) == "goboxd: prober"]
        daemon.proc.send_signal(signal.SIGHUP)
        new = wait_until(lambda: set(daemon.worker_pids()) - old, what="a new worker")
        prober = prober_at_work(daemon, not_pid=old_prober[0] if old_prober else None)
        assert daemon.get("/info")[1]["stats"]["queued_jobs"] == 1, "the job left the queue early"
        for pid in children(daemon.proc.pid):
            links = fd_links(pid)
            assert conn not in links, (title(pid), links)
            assert not [l for l in links if "goboxd-conn" in l], (title(pid), links)
        assert prober in children(daemon.proc.pid) and new
        # the queued job still runs, on the new generation
        reply = b""
        while b"accepted" not in reply:
            chunk = client.recv(65536)
            if not chunk:
                break
            reply += chunk
        client.close()
        assert reply.startswith(b"HTTP/1.1 200"), reply[:200]
        busy.join()
        assert results and results[0][0] == 200, results
    finally:
        daemon.stop()
        shutil.rmtree(d)


def proc_state(pid):
    with open("/proc/%d/stat" % pid) as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def read_reply(sock):
    """Everything the daemon sends until it closes or a whole answer came."""
    reply = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except OSError:
            break
        if not chunk:
            break
        reply += chunk
        head, sep, body = reply.partition(b"\r\n\r\n")
        if sep and b"content-length:" in head.lower():
            n = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
            if len(body) >= n:
                break
    return reply


@pytest.mark.slow
def test_a_dispatch_to_a_dead_worker_is_not_a_dropped_client():
    """A worker that died after saying it was idle, not reaped yet: the
    master closed the client it could not hand over, without a word."""
    d = lang_dir()
    daemon = Daemon(languages=d, workers=2)
    results = []
    stopped = False
    try:
        daemon.wait_probed()

        def states():
            return {w["pid"]: w["state"] for w in daemon.get("/info")[1]["stats"]["workers"]}
        # The probes end before a worker that is still starting says it is
        # idle: both must, or the one not yet there is not "the other".
        wait_until(lambda: sorted(states().values()) == ["idle", "idle"], what="both workers idle")
        busy = threading.Thread(target=lambda: results.append(daemon.post("/run", slow(3))))
        busy.start()
        wait_until(lambda: "busy" in states().values(), what="the slow job")
        idle = [pid for pid, st in states().items() if st == "idle"]
        busy_pid = [pid for pid, st in states().items() if st == "busy"][0]
        assert len(idle) == 1, states()
        # A connection the busy worker holds: a job read there goes to the
        # master (an idle worker would run it itself).
        client = None
        for _ in range(50):
            client = socket.create_connection(("127.0.0.1", daemon.port), timeout=30)
            client.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            assert read_reply(client).startswith(b"HTTP/1.1 200")
            if "socket:[%d]" % server_socket_inode(daemon.port, client) in fd_links(busy_pid):
                break
            client.close()
            client = None
        assert client, "no connection landed on the busy worker"
        # The master sleeps while the job reaches its channel and the only
        # idle worker dies: when it wakes, it reads the job before the
        # SIGCHLD, and sends it to a worker that is no more.
        os.kill(daemon.proc.pid, signal.SIGSTOP)
        stopped = True
        wait_until(lambda: proc_state(daemon.proc.pid) == "T", what="the master to stop")
        job = json.dumps(HELLO).encode()
        client.sendall(b"POST /run HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s"
                       % (len(job), job))

        def handed_over():
            inode = server_socket_inode(daemon.port, client)
            if not inode:
                return False  # not accepted yet
            conn = "socket:[%d]" % inode
            return all(conn not in fd_links(pid) for pid in children(daemon.proc.pid))
        wait_until(handed_over, what="the worker to hand the job to the master")
        os.kill(idle[0], signal.SIGKILL)
        # all of it: its job thread holds the channel until it has exited too
        wait_until(lambda: proc_state(idle[0]) == "Z"
                 and os.listdir("/proc/%d/task" % idle[0]) == [str(idle[0])],
                 what="the idle worker to die")
        os.kill(daemon.proc.pid, signal.SIGCONT)
        stopped = False
        reply = read_reply(client)
        client.close()
        assert reply.startswith(b"HTTP/1.1 200"), reply[:300]
        assert any("replacing it" in l.get("msg", "") for l in daemon.log_lines()), \
            "the dispatch never met the dead worker: the test proved nothing"
        busy.join()
        assert results and results[0][0] == 200, results
        # nothing is counted as running any more, and jobs still go through
        wait_until(lambda: daemon.get("/info")[1]["stats"]["in_flight_jobs"] == 0,
                 what="no job in flight")
        for _ in range(3):
            status, body = daemon.post("/run", HELLO)
            assert status == 200 and body["status"] == "accepted", body
    finally:
        if stopped:
            os.kill(daemon.proc.pid, signal.SIGCONT)
        daemon.stop()
        shutil.rmtree(d)


def fill(path, n):
    """A directory of n names, hard links to a few empty files: ten times
    quicker to make than files, and each is still one unlink to remove
    (ext4 takes at most 65,000 links to a file)."""
    os.mkdir(path)
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for i in range(n):
            if i % 50000 == 0:
                first = "f%d" % i
                os.close(os.open(first, os.O_CREAT | os.O_WRONLY, 0o600, dir_fd=fd))
            else:
                os.link(first, "f%d" % i, src_dir_fd=fd, dst_dir_fd=fd)
    finally:
        os.close(fd)


def timed(fn):
    start = time.monotonic()
    out = fn()
    return out, time.monotonic() - start


# CAP_DAC_OVERRIDE and CAP_FOWNER: removing what other uids wrote.
SWEEPER_CAPS = (1 << 1) | (1 << 3)


@pytest.mark.slow
def test_a_big_removal_never_holds_up_a_request():
    """The master removed swept directories in its own loop: a hello-world
    /run waited for the whole removal (8.3 s for 500,000 files)."""
    d = lang_dir()
    daemon = Daemon(languages=d, workers=1, args=["--sweep-interval", "1s",
                                                  "--sweep-age", "1s"])
    try:
        daemon.wait_probed()
        # a dead worker's job directory, as a crash leaves it; made under
        # another name so that no sweep sees it half made
        stale = os.path.join(daemon.jail_dir, "job-4194305-Crash1")
        making = os.path.join(daemon.jail_dir, "making-Crash1")
        fill(making, 300000)
        os.rename(making, stale)
        old = time.time() - 3600
        os.utime(stale, (old, old))
        # removing starts (each unlink moves the directory's mtime)
        wait_until(lambda: os.stat(stale).st_mtime > old + 60, timeout=30,
                 what="the sweep to start")
        sweepers = [p for p in children(daemon.proc.pid) if title(p) == "goboxd: sweeper"]
        (health, _), health_s = timed(lambda: daemon.get("/healthz"))
        (status, body), run_s = timed(lambda: daemon.post("/run", HELLO))
        still_there = os.path.exists(stale)
        assert health == 200 and status == 200 and body["status"] == "accepted", body
        # answered while the removal went on, not after it
        assert still_there, "answered only once the removal had ended"
        assert health_s < 2 and run_s < 2, (health_s, run_s)
        # by a process of its own, with only what removing takes
        assert len(sweepers) == 1, [title(p) for p in children(daemon.proc.pid)]
        st = status_fields(sweepers[0])
        assert int(st["CapEff"], 16) == SWEEPER_CAPS, st["CapEff"]
        assert int(st["CapBnd"], 16) == SWEEPER_CAPS, st["CapBnd"]
        assert st["NoNewPrivs"] == "1"
        assert not [l for l in fd_links(sweepers[0]) if l.startswith("socket:")], \
            fd_links(sweepers[0])
        wait_until(lambda: not os.path.exists(stale), timeout=120, what="the removal")
        wait_until(lambda: not [p for p in children(daemon.proc.pid)
                              if title(p) == "goboxd: sweeper"], what="the sweeper to exit")
        assert any(l.get("role") == "sweeper" and "removed 1 job directory" in l.get("msg", "")
                   for l in daemon.log_lines())
    finally:
        daemon.stop()
        shutil.rmtree(d)
