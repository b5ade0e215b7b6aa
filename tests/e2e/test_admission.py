"""Where a job starts: a worker that reads a request while it is idle,
with nothing waiting and a slot free, runs it itself (no hop through the
master); otherwise the master's queue decides. Either way the limits and
the queue's order hold, and a worker that dies gives its slot back."""

import os
import signal
import threading
import time

from conftest import Daemon, budget, small, wait_until

HELLO = {"language": "py3", "source": "print(input())\n",
         "tests": [{"stdin": "hi\n", "expected_stdout": "hi\n"}]}


def sleeper(seconds, marker="done"):
    return {"language": "py3",
            "source": "import time\ntime.sleep(%s)\nprint(%r)\n" % (seconds, marker),
            "tests": [{"expected_stdout": marker + "\n"}]}


def direct(d):
    return d.stats()["jobs_taken_directly"]


def test_an_idle_worker_runs_the_request_it_read_itself():
    d = Daemon(languages=small(), workers=1)
    try:
        before = direct(d)
        for _ in range(3):
            st, body = d.post("/run", HELLO)
            assert st == 200 and body["status"] == "accepted", body
        assert direct(d) == before + 3
        line = d.wait_log(lambda l: l.get("path") == "/run" and "queue_ms" in l, "a job's line")
        assert line["queue_ms"] == 0, line
    finally:
        d.stop()


def test_a_worker_runs_its_next_request_itself_before_the_master_hears_of_its_last():
    # the worker ends its holding itself when its job ends: the master,
    # stopped here, reads that job's DONE only later
    d = Daemon(languages=small(), workers=1)
    try:
        st, body = d.post("/run", HELLO)
        assert st == 200 and body["status"] == "accepted", body
        before = direct(d)
        d.proc.send_signal(signal.SIGSTOP)
        try:
            for _ in range(3):
                st, body = d.post("/run", HELLO, timeout=budget(20))
                assert st == 200 and body["status"] == "accepted", body
        finally:
            d.proc.send_signal(signal.SIGCONT)
        assert direct(d) == before + 3
        st, body = d.post("/run", HELLO)
        assert st == 200 and body["status"] == "accepted", body
    finally:
        d.stop()


def test_a_request_that_finds_its_worker_busy_goes_through_the_master():
    d = Daemon(languages=small(), workers=1)
    try:
        first = []
        t = threading.Thread(target=lambda: first.append(d.post("/run", sleeper(1.5))))
        t.start()
        d.wait_jobs(running=1)
        before = direct(d)
        st, body = d.post("/run", HELLO)  # queued until the first has ended
        t.join()
        assert st == 200 and body["status"] == "accepted", body
        assert first[0][0] == 200 and first[0][1]["status"] == "accepted", first
        assert direct(d) == before, "the queued one came from the master"
    finally:
        d.stop()


def stamp(seconds):
    """A program that prints when it began."""
    return {"language": "py3",
            "source": "import time\nprint(time.time())\ntime.sleep(%s)\n" % seconds,
            "tests": [{}]}


def test_the_queue_keeps_its_order_when_workers_are_idle():
    # one slot, two workers: b and c wait at the master while a runs,
    # though a worker is idle; they start in the order they came
    d = Daemon(languages=small(), workers=2, args=["--max-concurrency", "1"])
    try:
        out = {}

        def post(name, seconds):
            out[name] = d.post("/run", stamp(seconds))

        threads = []
        for name, seconds, queued in (("a", 1.5, 0), ("b", 0, 1), ("c", 0, 2)):
            t = threading.Thread(target=post, args=(name, seconds))
            t.start()
            threads.append(t)
            d.wait_jobs(running=1, queued=queued)
        for t in threads:
            t.join()
        for k in "abc":
            assert out[k][0] == 200 and out[k][1]["status"] == "accepted", out[k]
        began = {k: float(v[1]["tests"][0]["stdout"]) for k, v in out.items()}
        assert began["a"] < began["b"] < began["c"], began
    finally:
        d.stop()


def test_a_worker_killed_in_its_own_job_gives_its_slot_back():
    d = Daemon(languages=small(), workers=1,
               args=["--max-concurrency", "1", "--queue-timeout", "20s"])
    try:
        got = []

        def doomed():
            try:
                got.append(d.request("POST", "/run", sleeper(30)))
            except OSError as e:  # its worker is killed under it
                got.append(e)

        t = threading.Thread(target=doomed)
        t.start()
        d.wait_jobs(running=1)
        assert direct(d) == 1, "the job was the worker's own"
        victim = d.worker_pids()[0]
        os.kill(victim, signal.SIGKILL)
        t.join(timeout=60)
        wait_until(lambda: d.worker_pids() and d.worker_pids()[0] not in (0, victim),
                   "a new worker")
        start = time.time()
        st, body = d.post("/run", HELLO, timeout=60)
        assert st == 200 and body["status"] == "accepted", body
        assert time.time() - start < 15, "the next job waited for a slot the dead one kept"
    finally:
        d.stop()
