"""What a request's fields may say, through the real daemon.

A limit a request names is used or refused, never replaced by the
language's default: 0, a negative number, null or a string is a 400
invalid_limits naming the field, for the solution's steps and the judge
programs' alike.
"""
import pytest

from conftest import Daemon, small

PY = {"language": "py3", "source": "print(input())\n"}
TESTS = [{"stdin": "x\n", "expected_stdout": "x\n"}]


@pytest.fixture(scope="module")
def daemon():
    d = Daemon(languages=small(), workers=1)
    yield d
    d.stop()


@pytest.mark.parametrize("where,value", [
    ("run.wall_time_s", 0),
    ("run.cpu_time_s", -1),
    ("run.memory_kb", "262144"),
    ("build.max_processes", None),
    ("run.output_kb", 0.5),
    ("checker.run.file_size_kb", 0),
])
def test_limit_not_positive_is_refused(daemon, where, value):
    parts = where.split(".")
    body = dict(PY, tests=TESTS)
    owner = body
    if parts[0] == "checker":
        owner = body["checker"] = dict(PY)
        parts = parts[1:]
    step, field = parts
    owner[step] = {"limits": {field: value}}
    status, answer = daemon.post("/run", body)
    assert status == 400, answer
    assert answer["error"]["code"] == "invalid_limits"
    assert answer["error"]["path"] == where.replace(step + ".", step + ".limits.")
    assert field in answer["error"]["message"]


def test_limit_left_out_takes_the_default(daemon):
    # The same request without the field runs; the refusals above are the
    # field's value, not the request's shape.
    body = dict(PY, tests=TESTS, run={"limits": {"memory_kb": 262144}})
    status, answer = daemon.post("/run", body)
    assert status == 200, answer
    assert answer["status"] == "accepted", answer


@pytest.mark.slow
def test_nothing_left_behind(daemon):
    assert daemon.leftovers() == []
