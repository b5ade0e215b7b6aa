"""Early stop and test groups through the real daemon: stop_on_failure,
IOI-style groups with points, skipped tests, with a plain comparison, a
checker and an interactor, and the 400s of a wrong request.

One program serves every case: a test's input says how it ends ("ok":
the right answer, "bad": a wrong one, "crash": exit code 3), so each
case is data: the inputs, the request's settings, and what must come
back.
"""
import pytest

from conftest import Daemon, dump, run_ok as run, small

PROGRAM = ("s = input().strip()\n"
           "if s == 'crash':\n"
           "    raise SystemExit(3)\n"
           "print('ok' if s == 'ok' else 'no')\n")

WORDS = {"A": "ok", "W": "bad", "R": "crash"}
STATUS = {"A": "accepted", "W": "wrong_output", "R": "runtime_error", "S": "skipped",
          "N": "not_executed"}


@pytest.fixture(scope="module")
def daemon():
    d = Daemon(languages=small(), workers=2)
    yield d
    d.stop()


def request(inputs, **extra):
    """Tests from a string of A/W/R (what each test's run gives)."""
    req = {"language": "py3", "source": PROGRAM,
           "tests": [{"stdin": WORDS[k] + "\n", "expected_stdout": "ok\n"} for k in inputs]}
    req.update(extra)
    return req


def group(tests, points=0, stop=None):
    g = {"tests": tests, "points": points}
    if stop is not None:
        g["stop_on_failure"] = stop
    return g


# name, inputs, the request's extra fields, test statuses, groups as
# (status, points), top-level status, points
CASES = [
    ("no stop: every test runs", "AWAR", {}, "AWAR", None, "W", None),
    ("stop_on_failure: the rest is skipped", "AWAR", {"stop_on_failure": True},
     "AWSS", None, "W", None),
    ("stop_on_failure false is the default", "AWAR", {"stop_on_failure": False},
     "AWAR", None, "W", None),
    ("stop_on_failure with no failure skips nothing", "AAA", {"stop_on_failure": True},
     "AAA", None, "A", None),
    ("IOI subtasks: a group scores only when all its tests pass", "AAWAA",
     {"groups": [group([0, 1], 30, True), group([2, 3], 30, True), group([4], 40)]},
     "AAWSA", [("A", 30), ("W", 0), ("A", 40)], "W", 70),
    ("a group without stop runs on after its failure", "WAA",
     {"groups": [group([0, 1, 2], 10)]}, "WAA", [("W", 0)], "W", 0),
    ("a test in two groups runs while one still needs it", "WAA",
     {"groups": [group([0, 2], 10, True), group([1, 2], 20)]},
     "WAA", [("W", 0), ("A", 20)], "W", 20),
    ("a test whose every group has failed is skipped", "WRA",
     {"groups": [group([0, 2], 10, True), group([1, 2], 20, True)]},
     "WRS", [("W", 0), ("R", 0)], "W", 0),
    ("tests outside every group run and decide the status", "WAW",
     {"groups": [group([1], 7, True)]}, "WAW", [("A", 7)], "W", 7),
    ("the request's stop wins over groups; an unreached group is skipped", "AWAA",
     {"stop_on_failure": True, "groups": [group([0, 1], 10), group([2, 3], 20)]},
     "AWSS", [("W", 0), ("S", 0)], "W", 0),
    ("all accepted: every group's points", "AAAA",
     {"groups": [group([3, 0], 25.5, True), group([1, 2], 74.5, True)]},
     "AAAA", [("A", 25.5), ("A", 74.5)], "A", 100),
    ("no groups listed: no points earned", "A", {"groups": []}, "A", [], "A", 0),
]


def check(body, tests, groups, top, points):
    assert body["status"] == STATUS[top], dump(body)
    assert [t["status"] for t in body["tests"]] == [STATUS[k] for k in tests], dump(body)
    for t, k in zip(body["tests"], tests):
        # a skipped test never ran: no exit code, no time
        assert ("exit_code" in t) == (k not in "SN"), dump(body)
    if groups is None:
        assert "groups" not in body and "points" not in body, dump(body)
        return
    assert [(g["status"], g["points"]) for g in body["groups"]] == \
        [(STATUS[s], p) for s, p in groups], dump(body)
    assert body["points"] == points, dump(body)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_cases(daemon, case):
    _, inputs, extra, tests, groups, top, points = case
    check(run(daemon, request(inputs, **extra)), tests, groups, top, points)


def test_max_points_is_the_sum_of_the_groups(daemon):
    body = run(daemon, request("AW", groups=[group([0], 3), group([1], 4)]))
    assert body["max_points"] == 7 and body["points"] == 3, dump(body)
    assert [g["max_points"] for g in body["groups"]] == [3, 4], dump(body)


def test_build_failure_leaves_every_group_not_executed(daemon):
    body = run(daemon, {"language": "c", "source": "int main( {",
                        "tests": [{"stdin": ""}, {"stdin": ""}],
                        "stop_on_failure": True,
                        "groups": [group([0], 5, True), group([1], 5)]})
    assert body["status"] == "build_failed", dump(body)
    assert [t["status"] for t in body["tests"]] == ["not_executed"] * 2, dump(body)
    assert [(g["status"], g["points"]) for g in body["groups"]] == \
        [("not_executed", 0)] * 2, dump(body)
    assert body["points"] == 0, dump(body)


CHECKER = r'''
import sys
out = open(sys.argv[2]).read().split()
if out == ["ok"]:
    sys.exit(0)
print("got %r" % out, file=sys.stderr)
sys.exit(1)
'''


def test_checker_with_groups_and_stop(daemon):
    req = request("AWAA", stop_on_failure=False,
                  groups=[group([0, 1, 2], 60, True), group([3], 40, True)],
                  checker={"language": "py3", "source": CHECKER})
    for t in req["tests"]:
        del t["expected_stdout"]
    body = run(daemon, req)
    assert [t["status"] for t in body["tests"]] == \
        ["accepted", "wrong_output", "skipped", "accepted"], dump(body)
    # the checker judged the tests that ran, and never the skipped one
    assert body["tests"][1]["checker_message"].startswith("got ['no']"), dump(body)
    assert body["tests"][2]["status"] == "skipped" and "checker_message" not in body["tests"][2]
    assert [(g["status"], g["points"]) for g in body["groups"]] == \
        [("wrong_output", 0), ("accepted", 40)], dump(body)
    assert body["points"] == 40, dump(body)


# The interactor hands the solution the test's word and judges its answer.
INTERACTOR = r'''
import sys
word = open(sys.argv[1]).read().strip()
print(word, flush=True)
answer = sys.stdin.readline().strip()
print("answered %r" % answer, file=sys.stderr)
sys.exit(0 if answer == "ok" else 1)
'''


def test_interactive_with_stop_on_failure(daemon):
    req = {"language": "py3", "source": PROGRAM,
           "interactor": {"language": "py3", "source": INTERACTOR},
           "tests": [{"stdin": w} for w in ("ok", "bad", "ok")],
           "stop_on_failure": True}
    body = run(daemon, req)
    assert body["status"] == "wrong_output", dump(body)
    assert [t["status"] for t in body["tests"]] == \
        ["accepted", "wrong_output", "skipped"], dump(body)
    assert body["tests"][1]["checker_message"] == "answered 'no'\n", dump(body)


def test_interactive_groups(daemon):
    req = {"language": "py3", "source": PROGRAM,
           "interactor": {"language": "py3", "source": INTERACTOR},
           "tests": [{"stdin": w} for w in ("bad", "ok", "ok")],
           "groups": [group([0, 1], 50, True), group([2], 50)]}
    body = run(daemon, req)
    assert [t["status"] for t in body["tests"]] == \
        ["wrong_output", "skipped", "accepted"], dump(body)
    assert body["points"] == 50, dump(body)


# A wrong request is a 400 naming the field, before anything runs.
BAD = [
    ({"stop_on_failure": "yes"}, "invalid_type", "stop_on_failure"),
    ({"groups": {"tests": [0]}}, "invalid_type", "groups"),
    ({"groups": [{"tests": [0, 2]}]}, "invalid_groups", "groups[0].tests[1]"),
    ({"groups": [{"tests": [-1]}]}, "invalid_groups", "groups[0].tests[0]"),
    ({"groups": [{"tests": [1, 1]}]}, "invalid_groups", "groups[0].tests[1]"),
    ({"groups": [{"tests": [0], "points": -5}]}, "invalid_groups", "groups[0].points"),
    ({"groups": [{"tests": [0], "points": "5"}]}, "invalid_type", "groups[0].points"),
    ({"groups": [{"tests": []}]}, "invalid_groups", "groups[0].tests"),
    ({"groups": [{}]}, "missing_field", "groups[0].tests"),
    ({"groups": [{"tests": [0], "weight": 1}]}, "unknown_field", "groups[0].weight"),
    ({"groups": [{"tests": [0]}] * 257}, "too_many_groups", "groups"),
]


@pytest.mark.parametrize("extra,code,path", BAD, ids=[b[2] + ":" + b[1] for b in BAD])
def test_bad_requests(daemon, extra, code, path):
    body = run(daemon, request("AA", **extra), status=400)
    assert body["error"]["code"] == code, dump(body)
    assert body["error"]["path"] == path, dump(body)
