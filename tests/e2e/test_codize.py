"""The Codize wire format: validation errors, sizes, flags, metrics."""
import base64

import pytest

from conftest import Daemon


@pytest.fixture(scope="module")
def daemon():
    d = Daemon(args=["--max-files", "3", "--max-file-size", "1k", "--max-stdin-size", "2k",
                     "--max-body-size", "64k", "--output-limit", "4k", "--metrics",
                     "--run-timeout", "2s", "--max-concurrency", "1",
                     "--max-queue-size", "5"])
    yield d
    d.stop()


def paths(body):
    return [e["path"] for e in body["errors"]]


def test_every_failing_field_is_listed(daemon):
    status, body = daemon.post("/v1/run", {
        "runtime": "python",
        "files": [{"name": "../evil.py", "content": "x"},
                  {"name": "ok.py", "content": "!!!", "base64_encoded": True},
                  {"name": "ok.py", "content": "dup"}],
        "stdin": {"content": "x" * 3000}})
    assert status == 400
    assert body["code"] == "invalid_request"
    got = paths(body)
    assert ["files", 0, "name"] in got
    assert ["files", 1, "content"] in got
    assert ["files", 2, "name"] in got
    assert any(p[0] == "stdin" for p in got)
    assert all(e["message"] for e in body["errors"])


def test_unknown_runtime(daemon):
    status, body = daemon.post("/v1/run", {"runtime": "cobol-60",
                                           "files": [{"name": "a", "content": ""}]})
    assert status == 400 and body["code"] == "unknown_runtime"
    assert body["errors"][0]["path"] == ["runtime"]


def test_missing_and_wrong_types(daemon):
    status, body = daemon.post("/v1/run", {"files": "main.py"})
    assert status == 400
    got = paths(body)
    assert ["runtime"] in got and ["files"] in got


def test_too_many_and_too_big_files(daemon):
    files = [{"name": "f%d.py" % i, "content": "pass"} for i in range(4)]
    status, body = daemon.post("/v1/run", {"runtime": "python", "files": files})
    assert status == 400 and ["files"] in paths(body)
    status, body = daemon.post("/v1/run", {"runtime": "python",
                                           "files": [{"name": "m.py", "content": "#" * 2000}]})
    assert status == 400 and ["files", 0, "content"] in paths(body)


def test_oversize_body_is_413(daemon):
    status, body = daemon.post("/v1/run", {"runtime": "python",
                                           "files": [{"name": "m.py", "content": "#" * 70000}]})
    assert status == 413


def test_bad_json(daemon):
    status, body = daemon.post("/v1/run", b"[1,2")
    assert status == 400 and body["code"] == "invalid_json"


def test_output_limit_flag_applies_to_both_streams(daemon):
    src = "import sys\nfor i in range(100):\n    sys.stdout.write('o' * 50)\n    sys.stderr.write('e' * 50)\n"
    status, body = daemon.post("/v1/run", {"runtime": "python",
                                           "files": [{"name": "m.py", "content": src}]})
    assert status == 200
    run = body["run"]
    assert run["status"] == "OUTPUT_LIMIT_EXCEEDED" and run["signal"] == "SIGKILL"
    assert len(base64.b64decode(run["stdout"])) + len(base64.b64decode(run["stderr"])) <= 4096 + 200


def test_run_timeout_flag(daemon):
    status, body = daemon.post("/v1/run", {"runtime": "python",
                                           "files": [{"name": "m.py", "content": "import time\ntime.sleep(10)\n"}]})
    assert status == 200
    assert body["run"]["status"] == "TIMEOUT"
    # the flag's 2 s, not python's own 9 s default
    assert 1800 <= body["run"]["duration_ms"] < 8000


def test_metrics_gauges_and_maxima(daemon):
    daemon.post("/v1/run", {"runtime": "python", "files": [{"name": "m.py", "content": "print(1)"}]})
    status, text = daemon.get("/metrics")
    assert status == 200
    assert "goboxd_max_active_jobs 1\n" in text
    assert "goboxd_max_queue_length 5\n" in text
    assert "goboxd_queue_length 0\n" in text
    assert 'goboxd_jobs_total{language="py3",status="accepted"}' in text
