"""`./setup.sh run` after `./setup.sh test`, and the other way round, on a
fresh machine.

The suite's daemons keep their stores and jail dirs in directories of
their own; the daemon `./setup.sh run` starts takes the defaults, under
/var/lib/goboxd. Here `./setup.sh start` (what run does once installed)
starts the built goboxd with the default store and jail dir before and
after the suite's daemons, and each must serve: neither leaves the other
a state it cannot start on. It makes /var/lib/goboxd and takes port 8080,
so it runs in a throwaway tests/v2/vm guest only (tests/v2/run-tests).
"""

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

import pytest

from conftest import (TOP, Daemon, budget, languages_of, sandbox_uid_base, time_caps,
                      wait_until)

STATE = "/var/lib/goboxd"
PORT = 8080
HELLO = {"language": "py3", "source": "print(input())\n",
         "tests": [{"stdin": "hi\n", "expected_stdout": "hi\n"}]}

pytestmark = pytest.mark.skipif(
    not os.environ.get("GOBOXD_TEST_V2_VM") or os.geteuid() != 0
    or os.path.realpath(os.environ.get("GOBOXD_BIN", "")) !=
    os.path.realpath(os.path.join(TOP, "build", "goboxd")),
    reason="makes /var/lib/goboxd and takes port 8080: runs in a tests/v2/vm guest only, "
           "on the checkout's own build/")


def listing():
    """What /var/lib/goboxd holds, with each entry's mode."""
    out = {}
    for root, dirs, files in os.walk(STATE):
        for name in dirs + files:
            path = os.path.join(root, name)
            out[path] = os.lstat(path).st_mode
    return out


def call(method, path, body=None, timeout=30):
    """One request to the daemon on port 8080: its status and JSON body."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request("http://127.0.0.1:%d%s" % (PORT, path), data=data,
                                 method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=budget(timeout)) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(errors="replace")


def setup_sh_start(languages, what):
    """./setup.sh start as `./setup.sh run` would start goboxd (the defaults,
    port 8080), with only py3 for a quick start; one job; then stopped."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GOBOXD_")}
    with tempfile.TemporaryFile() as log:
        p = subprocess.Popen([os.path.join(TOP, "setup.sh"), "start", "--languages-dir",
                              languages, "--workers", "1"] + time_caps() + sandbox_uid_base(),
                             stdout=log, stderr=subprocess.STDOUT, env=env)

        def said():
            log.seek(0)
            return log.read().decode(errors="replace")

        def healthy():
            if p.poll() is not None:
                raise AssertionError("%s: goboxd exited with %s:\n%s" % (
                    what, p.returncode, said()))
            try:
                return call("GET", "/healthz", timeout=1)[0] == 200
            except OSError:
                return False
        try:
            wait_until(healthy, what + ": goboxd healthy", timeout=60)
            status, body = call("POST", "/run", HELLO, timeout=60)
            assert status == 200 and body["status"] == "accepted", (what, body, said())
        finally:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(timeout=budget(30))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        assert p.returncode == 0, (what, p.returncode, said())


def suite_daemon(languages, what):
    """A daemon as the suite starts them: its own store and jail dir."""
    before = listing()
    d = Daemon(languages=languages, workers=1)
    try:
        status, body = d.post("/run", HELLO)
        assert status == 200 and body["status"] == "accepted", (what, body)
    finally:
        d.stop()
    assert listing() == before, what + ": the suite's daemon touched " + STATE


def test_setup_sh_run_and_the_suite_in_either_order():
    shutil.rmtree(STATE, ignore_errors=True)  # a fresh machine (the guest's root)
    languages = languages_of("py3")
    t = time.time()
    suite_daemon(languages, "the suite first")
    setup_sh_start(languages, "setup.sh run after the suite")
    mode = os.stat(STATE).st_mode
    assert mode & 0o001 and not mode & 0o022, "%s: mode %o" % (STATE, mode & 0o7777)
    assert os.path.exists(os.path.join(STATE, "submissions.db"))
    suite_daemon(languages, "the suite after setup.sh run")
    setup_sh_start(languages, "setup.sh run again, on what both left")
    print("four starts: %.1f s" % (time.time() - t))
