"""The shipped HAProxy front (deploy/haproxy/haproxy.cfg) before two real
goboxd instances: a request that a full instance refuses with 503
queue_full is retried on the other, and the client never sees the 503.
setup.sh installs haproxy (Debian's) for the tests; skipped where it is
not installed."""
import os
import re
import shutil
import socket
import subprocess
import threading
import time

import pytest

from conftest import Daemon, free_port, small

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CFG = os.path.join(TOP, "deploy", "haproxy", "haproxy.cfg")
HELLO = {"language": "py3", "source": "print(input())\n",
         "tests": [{"stdin": "hi\n", "expected_stdout": "hi\n"}]}
SLOW = {"language": "py3", "source": "import time\ntime.sleep(4)\n", "tests": [{}]}


def local_config(path, port, servers):
    """The shipped file with its listener and servers moved to 127.0.0.1."""
    with open(CFG) as f:
        text = f.read()
    text = re.sub(r"(?m)^(\s*)bind :80\s*$", r"\1bind 127.0.0.1:%d" % port, text)
    text = re.sub(r"(?m)^\s*server .*\n", "", text)
    text = re.sub(r"(?m)^(\s*)default-server (.*)inter 5s", r"\1default-server \2inter 500ms",
                  text)
    text = text.rstrip("\n") + "\n" + "".join(
        "    server %s 127.0.0.1:%d check\n" % (name, p) for name, p in servers)
    with open(path, "w") as f:
        f.write(text)


def wait_port(port, proc, timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline:
        assert proc.poll() is None, "haproxy exited"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    raise AssertionError("haproxy did not listen")


@pytest.mark.skipif(not shutil.which("haproxy"), reason="haproxy not installed")
def test_haproxy_retries_a_full_instance_on_another(tmp_path):
    full = Daemon(languages=small(), workers=1,
                  args=["--max-concurrency", "1", "--max-queue-size", "0"])
    spare = Daemon(languages=small(), workers=2)
    proxy = None
    try:
        full.wait_ready()
        spare.wait_ready()
        port = free_port()
        cfg = str(tmp_path / "haproxy.cfg")
        local_config(cfg, port, [("full", full.port), ("spare", spare.port)])
        log = open(str(tmp_path / "haproxy.log"), "w")
        proxy = subprocess.Popen(["haproxy", "-db", "-f", cfg], stdout=log,
                                 stderr=subprocess.STDOUT)
        wait_port(port, proxy)
        time.sleep(1.2)  # two health checks: both servers up

        # The full instance's one worker is busy and it queues nothing.
        busy = threading.Thread(target=full.post, args=("/run", SLOW))
        busy.start()
        deadline = time.time() + 10
        while time.time() < deadline:
            if full.get("/info")[1]["stats"]["in_flight_jobs"] >= 1:
                break
            time.sleep(0.05)
        else:
            raise AssertionError("the slow job never started")

        front = Daemon.__new__(Daemon)
        front.port = port
        statuses = []
        for _ in range(8):
            st, body = front.post("/run", HELLO, timeout=30)
            statuses.append((st, body.get("status") if isinstance(body, dict) else body))
        refused = full.get("/info")[1]["stats"]["queue_rejected_full"]
        busy.join()
        assert statuses == [(200, "accepted")] * 8, statuses
        # the full instance was asked, refused, and the retry hid it
        assert refused >= 1, "haproxy never sent a request to the full instance"
    finally:
        if proxy is not None:
            proxy.terminate()
            proxy.wait(timeout=10)
        full.stop()
        spare.stop()
