"""Checkers through the real daemon: a judge program run after each test
in a jail of its own, with testlib's arguments (the input, the program's
output, the expected answer) and testlib's exit codes.

The problem: print any proper divisor of n (several answers are right,
so no fixed expected string can judge it).
"""
import pytest

from conftest import Daemon, dump, judged, run_ok as run, small

DIVISOR_CHECKER = r'''
import sys
n = int(open(sys.argv[1]).read())
out = open(sys.argv[2]).read()
answer = open(sys.argv[3]).read()
tok = out.split()
if len(tok) != 1:
    print("expected one number, got %d tokens" % len(tok), file=sys.stderr)
    sys.exit(2)
d = int(tok[0])
if 1 < d < n and n % d == 0:
    print("ok, %d divides %d (the jury had %s)" % (d, n, answer.strip()), file=sys.stderr)
    sys.exit(0)
print("%d does not divide %d" % (d, n), file=sys.stderr)
sys.exit(1)
'''

SMALLEST = "n = int(input())\nprint(next(d for d in range(2, n) if n % d == 0))\n"
LARGEST = "n = int(input())\nprint(next(d for d in range(n - 1, 1, -1) if n % d == 0))\n"


@pytest.fixture(scope="module")
def daemon():
    d = Daemon(languages=small(), workers=2)
    yield d
    d.stop()


def checked(source, judge, tests, language="py3", checker_language="py3", **extra):
    return judged("checker", source, judge, tests, language, checker_language, **extra)


TESTS = [{"stdin": "12\n", "expected_stdout": "2\n"}, {"stdin": "35\n", "expected_stdout": "5\n"}]


@pytest.mark.parametrize("source", [SMALLEST, LARGEST])
def test_any_right_answer_is_accepted(daemon, source):
    body = run(daemon, checked(source, DIVISOR_CHECKER, TESTS))
    assert body["status"] == "accepted", dump(body)
    assert body["checker_build"]["status"] == "ok", dump(body)
    # the checker saw the input, the output and the answer
    assert body["tests"][0]["checker_message"].startswith("ok, "), dump(body)
    assert "(the jury had 2)" in body["tests"][0]["checker_message"], dump(body)
    # the program's output is still returned
    assert body["tests"][1]["stdout"] in ("5\n", "7\n"), dump(body)


def test_wrong_answer(daemon):
    body = run(daemon, checked("input()\nprint(1)\n", DIVISOR_CHECKER, TESTS))
    assert [t["status"] for t in body["tests"]] == ["wrong_output"] * 2, dump(body)
    assert body["tests"][0]["checker_message"] == "1 does not divide 12\n", dump(body)


def test_presentation_error(daemon):
    body = run(daemon, checked("input()\nprint(2, 3)\n", DIVISOR_CHECKER, TESTS[:1]))
    t = body["tests"][0]
    assert t["status"] == "output_whitespace_mismatch", dump(body)
    assert t["checker_message"] == "expected one number, got 2 tokens\n", dump(body)


def test_partial_points(daemon):
    scorer = ("import sys\nprint('points 0.25 a quarter', file=sys.stderr)\nsys.exit(7)\n")
    body = run(daemon, checked(SMALLEST, scorer, TESTS[:1]))
    t = body["tests"][0]
    assert t["status"] == "partial", dump(body)
    assert t["points"] == 0.25, dump(body)
    assert body["status"] == "partial", dump(body)


def test_checker_crash_is_internal_error(daemon):
    crash = "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n"
    body = run(daemon, checked(SMALLEST, crash, TESTS[:1]))
    t = body["tests"][0]
    assert t["status"] == "internal_error", dump(body)
    assert t["judge_error"] == "the checker was killed by SIGSEGV", dump(body)
    # a verdict, not a server fault
    assert body["status"] == "internal_error"
    assert "internal_error" not in body, dump(body)


def test_checker_judge_failure_and_no_verdict_are_internal_error(daemon):
    fail = "import sys\nprint('FAIL no such test', file=sys.stderr)\nsys.exit(3)\n"
    body = run(daemon, checked(SMALLEST, fail, TESTS[:1]))
    t = body["tests"][0]
    assert t["status"] == "internal_error", dump(body)
    assert t["checker_message"] == "FAIL no such test\n", dump(body)
    assert t["judge_error"] == "the checker: judge failure (exit code 3)", dump(body)
    body = run(daemon, checked(SMALLEST, "import sys\nsys.exit(5)\n", TESTS[:1]))
    assert body["tests"][0]["status"] == "internal_error", dump(body)
    assert "exit code 5" in body["tests"][0]["judge_error"], dump(body)


def test_checker_over_its_time_limit_is_internal_error(daemon):
    req = checked(SMALLEST, "while True:\n    pass\n", TESTS[:1])
    req["checker"]["run"] = {"limits": {"cpu_time_s": 0.5, "wall_time_s": 1}}
    body = run(daemon, req)
    t = body["tests"][0]
    assert t["status"] == "internal_error", dump(body)
    assert t["judge_error"] == "the checker went over its time limit", dump(body)


def test_a_failed_run_is_not_checked(daemon):
    body = run(daemon, checked("import sys\nsys.exit(4)\n", DIVISOR_CHECKER, TESTS[:1]))
    t = body["tests"][0]
    assert t["status"] == "runtime_error", dump(body)
    assert t["checker_message"] is None, dump(body)


def test_cpp_checker_with_its_own_header(daemon):
    # a checker includes a header the client sends, as testlib.h would be
    header = "#include <cstdio>\nstatic int quit(int code, const char *m) {" \
             " std::fprintf(stderr, \"%s\\n\", m); return code; }\n"
    chk = r'''
#include "judge.h"
int main(int argc, char **argv) {
    if (argc != 4) return quit(3, "want three files");
    long n, d;
    FILE *in = std::fopen(argv[1], "r"), *out = std::fopen(argv[2], "r");
    if (!in || !out || std::fscanf(in, "%ld", &n) != 1) return quit(3, "bad input");
    if (std::fscanf(out, "%ld", &d) != 1) return quit(2, "no number");
    return (d > 1 && d < n && n % d == 0) ? quit(0, "ok") : quit(1, "not a divisor");
}
'''
    req = checked(LARGEST, chk, TESTS, checker_language="cpp")
    req["checker"]["files"] = [{"name": "judge.h", "content": header}]
    body = run(daemon, req)
    assert body["status"] == "accepted", dump(body)
    assert body["checker_build"]["status"] == "ok", dump(body)
    assert body["checker_build"].get("skipped") is not True, dump(body)
    assert body["tests"][0]["checker_message"] == "ok\n", dump(body)


def test_checker_build_failure_is_internal_error(daemon):
    body = run(daemon, checked(SMALLEST, "int main( {", TESTS, checker_language="cpp"))
    assert body["status"] == "internal_error", dump(body)
    assert body["checker_build"]["status"] == "failed", dump(body)
    assert [t["status"] for t in body["tests"]] == ["not_executed"] * 2, dump(body)


def test_a_solution_that_does_not_build_is_not_judged(daemon):
    # the checker's jail starts beside the solution's build; a build that
    # fails leaves the checker unbuilt, and the jail goes with the job
    body = run(daemon, checked("int main( {", "import sys\nsys.exit(0)\n", TESTS, language="cpp"))
    assert body["status"] == "build_failed", dump(body)
    assert "checker_build" not in body, dump(body)
    assert [t["status"] for t in body["tests"]] == ["not_executed"] * 2, dump(body)
    assert daemon.leftovers() == [], dump(body)


def test_checker_judges_the_output_file(daemon):
    src = "n = int(open('in.txt').read())\nopen('out.txt', 'w').write('%d\\n' % " \
          "next(d for d in range(2, n) if n % d == 0))\n"
    tests = [{"stdin": "21\n", "input_file": "in.txt", "output_file": "out.txt"}]
    body = run(daemon, checked(src, DIVISOR_CHECKER, tests))
    t = body["tests"][0]
    assert t["status"] == "accepted", dump(body)
    assert t["checker_message"].startswith("ok, 3 divides 21"), dump(body)
    # no output file at all is no answer, and the checker is not asked
    body = run(daemon, checked("pass\n", DIVISOR_CHECKER, tests))
    assert body["tests"][0]["status"] == "wrong_output", dump(body)
    assert body["tests"][0]["checker_message"] is None, dump(body)


def test_solution_cannot_reach_the_checker(daemon):
    # the checker's files live in another jail: nothing to read or replace
    spy = ("import os, sys\nprint(os.path.exists('/judge'), sorted(os.listdir('.')),"
           " file=sys.stderr)\nn = int(input())\nprint(next(d for d in range(2, n) if n % d == 0))\n")
    req = checked(spy, DIVISOR_CHECKER, TESTS[:1])
    req["checker"]["files"] = [{"name": "secret.txt", "content": "42"}]
    body = run(daemon, req)
    t = body["tests"][0]
    assert t["status"] == "accepted", dump(body)
    assert t["stderr"] == "False ['solution.py']\n", dump(body)


def test_every_test_finds_the_checker_as_built(daemon):
    # a checker that leaves a file behind finds it gone in the next test
    marker = ("import os, sys\nseen = os.path.exists('mark')\nopen('mark', 'w').write('x')\n"
              "print('seen' if seen else 'fresh', file=sys.stderr)\n")
    body = run(daemon, checked(SMALLEST, marker, TESTS))
    assert [t["checker_message"] for t in body["tests"]] == ["fresh\n", "fresh\n"], dump(body)


def test_nothing_left_behind(daemon):
    assert daemon.leftovers() == []
    assert daemon.step_cgroups() == []
    assert daemon.stopped_clean() == []
