"""Codize's runtimes as its clients see them: one CPU per /v1/run program,
and how that pin is chosen.

The per-runtime properties that make Codize's byte-for-byte comparisons
equal (the Go module name, the pinned Node and TypeScript releases, one CPU
per program) are case files, one per property, with the other cases of
their language: tests/e2e/cases/<language>/v1_*.json, run by test_cases.py.
What stays here needs a second daemon.
"""
import base64
import os

import pytest

from conftest import Daemon


@pytest.fixture(scope="module")
def daemon():
    d = Daemon(args=["--run-timeout", "10s"])
    yield d
    d.stop()


def decode(step, key):
    return base64.b64decode(step[key]).decode()


def v1(daemon, runtime, name, src):
    status, body = daemon.post("/v1/run", {"runtime": runtime,
                                           "files": [{"name": name, "content": src}]})
    assert status == 200, body
    return body


def test_run_api_is_not_pinned_and_codize_pin_can_be_lifted(daemon):
    """/run keeps every CPU without --pin-cpus; --codize-pin-cpus=false
    gives /v1/run programs every CPU too."""
    usable = len(os.sched_getaffinity(0))
    src = "import os\nprint(len(os.sched_getaffinity(0)))\n"
    st, res = daemon.post("/run", {"language": "py3", "source": src, "tests": [{}]})
    assert st == 200 and res["tests"][0]["stdout"] == f"{usable}\n", res

    free = Daemon(args=["--codize-pin-cpus=false"])
    try:
        body = v1(free, "python", "main.py", src)
        assert decode(body["run"], "stdout") == f"{usable}\n", body
    finally:
        free.stop()
