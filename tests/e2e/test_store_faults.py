"""The SQLite store, and what a worker inherits of it.

The master claims the store and reads what was left unfinished, then
keeps only its claim: no worker holds a descriptor of the store's files
(or its lock) that it did not open itself, as SQLite asks of a process
that forks. Before, every worker inherited the master's connection and
its claim."""
import os

from conftest import Daemon, small, wait_until


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
