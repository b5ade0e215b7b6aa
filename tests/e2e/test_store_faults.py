"""The SQLite store when its disk fills, and what a worker inherits of it.

A submission a client was told is taken is never lost or stuck: when the
disk under the store fills while submissions wait and run, a result the
store refuses is kept by its worker and offered again, a submission
that could not start is started again later (the master defers it), and
once there is room every one of them finishes with its real result. A
POST the store cannot take is a 503 that says why. Before, the first
result was lost (Processing until a restart) and the others stayed In
Queue; the 503 said "not an error".

The master claims the store and reads what was left unfinished, then
keeps only its claim: no worker holds a descriptor of the store's files
(or its lock) that it did not open itself, as SQLite asks of a process
that forks. Before, every worker inherited the master's connection and
its claim.

Needs root (a tmpfs of its own for the store)."""
import os
import subprocess
import tempfile

import pytest

from conftest import Daemon, small, wait_until

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root: mounts a tmpfs")

PY = 71
PAD = "#" + "p" * 150000 + "\n"   # a request of 150 KB: each write of it needs new pages
OUT = 200000                      # and a result of 200 KB


@pytest.fixture
def small_disk():
    where = tempfile.mkdtemp(prefix="goboxd-store-disk-")
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m,mode=0711", "tmpfs", where],
                   check=True)
    yield where
    subprocess.run(["umount", "-l", where], check=False)
    os.rmdir(where)


def fill(path):
    """Write to path until the disk refuses: how many bytes went."""
    done = 0
    with open(path, "wb", buffering=0) as f:
        try:
            while True:
                done += f.write(b"\0" * 65536)
        except OSError:
            pass
    return done


def status_of(d, token):
    status, body = d.get("/submissions/%s?fields=status_id,stdout&base64_encoded=false" % token)
    assert status == 200, body
    return body


def test_a_full_disk_loses_and_sticks_nothing(small_disk):
    d = Daemon(languages=small(), workers=1, args=["--store", os.path.join(small_disk, "s.db")])
    try:
        source = PAD + "import time\ntime.sleep(1.5)\nprint('r' * %d)\n" % OUT
        tokens = []
        for _ in range(3):
            status, body = d.post("/submissions", {"language_id": PY, "source_code": source})
            assert status == 201, body
            tokens.append(body["token"])
        wait_until(lambda: status_of(d, tokens[0])["status_id"] == 2, "the first one runs",
                   timeout=60)
        filler = os.path.join(small_disk, "filler")
        fill(filler)
        status, body = d.post("/submissions", {"language_id": PY, "source_code": source})
        assert status == 503, body
        assert "not an error" not in body["error"], body
        assert "full" in body["error"], body
        # the first one's result is refused, the others cannot start
        wait_until(lambda: any("could not be stored" in l.get("msg", "")
                               for l in d.log_lines()), "a refused result", timeout=40)
        wait_until(lambda: any("could not start" in l.get("msg", "") for l in d.log_lines()),
                   "a start the store refused", timeout=40)
        os.unlink(filler)

        def all_done():
            return all(status_of(d, t)["status_id"] > 2 for t in tokens)
        wait_until(all_done, "every submission finished once there was room", timeout=90)
        for t in tokens:
            got = status_of(d, t)
            assert got["status_id"] == 3, (t, got["status_id"])
            assert got["stdout"] == "r" * OUT + "\n", (t, len(got["stdout"] or ""))
    finally:
        d.stop()


def store_fds(pid, store):
    """The files of the store that pid's descriptors name, one entry a
    descriptor (the database, its -wal, its -shm)."""
    fd_dir = "/proc/%d/fd" % pid
    held = []
    for fd in os.listdir(fd_dir):
        try:
            target = os.readlink(os.path.join(fd_dir, fd))
        except OSError:
            continue
        if target.startswith(store):
            held.append(target)
    return sorted(held)


def test_no_worker_inherits_the_masters_store(tmp_path):
    store = str(tmp_path / "s.db")
    d = Daemon(languages=small(), args=["--store", store])
    try:
        workers = wait_until(lambda: len(d.worker_pids()) == 2 and d.worker_pids(),
                             "the workers started")
        # the master keeps its claim (one descriptor of the file), and no
        # connection past its start
        assert store_fds(d.proc.pid, store) == [store], store_fds(d.proc.pid, store)
        # each worker holds its own connection (opened at its start), and
        # nothing of the master's: neither its connection nor its claim
        own = sorted([store, store + "-shm", store + "-wal"])
        for pid in workers:
            assert store_fds(pid, store) == own, (pid, store_fds(pid, store))
    finally:
        d.stop()
