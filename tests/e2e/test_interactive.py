"""Interactive tests through the real daemon: an interactor beside the
solution, each in its own jail, and the process management protocol.

The problem is a guessing game: the test's input holds the hidden number
(1 to 100); the solution guesses, the interactor answers '<', '>' or '='
and gives the verdict with its exit code (testlib's convention).
"""
import json

import pytest

from conftest import Daemon, budget, dump, judged, run_ok as run, small

GUESS_INTERACTOR = r'''
import sys
n = int(open(sys.argv[1]).read())
for q in range(1, 11):
    line = sys.stdin.readline()
    if not line:
        print("the solution stopped after %d guesses" % (q - 1), file=sys.stderr)
        sys.exit(1)
    tok = line.split()
    if len(tok) != 1 or not tok[0].isdigit():
        print("expected a number, got %r" % line.strip(), file=sys.stderr)
        sys.exit(2)
    g = int(tok[0])
    if g == n:
        print("=", flush=True)
        print("found %d in %d guesses" % (n, q), file=sys.stderr)
        sys.exit(0)
    print("<" if n < g else ">", flush=True)
print("not found in 10 guesses", file=sys.stderr)
sys.exit(1)
'''

BINARY_SEARCH = r'''
lo, hi = 1, 100
while True:
    mid = (lo + hi) // 2
    print(mid, flush=True)
    r = input()
    if r == "=":
        break
    if r == "<":
        hi = mid - 1
    else:
        lo = mid + 1
'''

BINARY_SEARCH_CPP = r'''
#include <iostream>
#include <string>
int main() {
    int lo = 1, hi = 100;
    for (;;) {
        int mid = (lo + hi) / 2;
        std::cout << mid << std::endl;
        std::string r;
        if (!(std::cin >> r) || r == "=") return 0;
        if (r == "<") hi = mid - 1; else lo = mid + 1;
    }
}
'''


@pytest.fixture(scope="module")
def daemon():
    d = Daemon(languages=small(), workers=2)
    yield d
    d.stop()


def interactive(source, judge, tests, language="py3", interactor_language="py3", **extra):
    return judged("interactor", source, judge, tests, language, interactor_language, **extra)


def test_accepted(daemon):
    body = run(daemon, interactive(BINARY_SEARCH, GUESS_INTERACTOR,
                                   [{"stdin": "37"}, {"stdin": "100"}, {"stdin": "1"}]))
    assert body["status"] == "accepted", dump(body)
    assert [t["status"] for t in body["tests"]] == ["accepted"] * 3, dump(body)
    assert body["tests"][0]["checker_message"] == "found 37 in 3 guesses\n", dump(body)
    assert body["tests"][1]["checker_message"].startswith("found 100 in "), dump(body)
    # the dialogue is not captured: it went to the interactor
    assert body["tests"][0]["stdout"] == ""
    assert body["interactor_build"]["status"] == "ok", dump(body)


def test_accepted_cpp_solution_and_interactor(daemon):
    itr = r'''
#include <cstdio>
#include <cstring>
int main(int argc, char **argv) {
    FILE *f = fopen(argv[1], "r");
    int n, g;
    if (!f || fscanf(f, "%d", &n) != 1) return 3;
    for (int q = 1; q <= 10; q++) {
        if (scanf("%d", &g) != 1) { fprintf(stderr, "no guess\n"); return 2; }
        if (g == n) { printf("=\n"); fflush(stdout); fprintf(stderr, "ok %d\n", q); return 0; }
        printf("%s\n", n < g ? "<" : ">");
        fflush(stdout);
    }
    fprintf(stderr, "too many guesses\n");
    return 1;
}
'''
    body = run(daemon, interactive(BINARY_SEARCH_CPP, itr, [{"stdin": "64"}, {"stdin": "3"}],
                                   language="cpp", interactor_language="cpp"))
    assert body["status"] == "accepted", dump(body)
    assert body["tests"][0]["checker_message"].startswith("ok "), dump(body)


def test_wrong_answer(daemon):
    linear = "for g in range(1, 101):\n    print(g, flush=True)\n    if input() == '=':\n        break\n"
    body = run(daemon, interactive(linear, GUESS_INTERACTOR, [{"stdin": "5"}, {"stdin": "60"}]))
    assert [t["status"] for t in body["tests"]] == ["accepted", "wrong_output"], dump(body)
    assert body["status"] == "wrong_output"
    assert body["tests"][1]["checker_message"] == "not found in 10 guesses\n", dump(body)


def test_presentation_error(daemon):
    chatty = "print('my guess is 50', flush=True)\nprint(input())\n"
    body = run(daemon, interactive(chatty, GUESS_INTERACTOR, [{"stdin": "50"}]))
    t = body["tests"][0]
    assert t["status"] == "output_whitespace_mismatch", dump(body)
    assert "expected a number" in t["checker_message"], dump(body)


def test_partial_points(daemon):
    scored = GUESS_INTERACTOR.replace(
        '        print("found %d in %d guesses" % (n, q), file=sys.stderr)\n'
        '        sys.exit(0)\n',
        '        print("%.2f found in %d guesses" % (1.0 / q, q), file=sys.stderr)\n'
        '        sys.exit(7)\n')
    assert scored != GUESS_INTERACTOR
    body = run(daemon, interactive(BINARY_SEARCH, scored, [{"stdin": "50"}, {"stdin": "25"}]))
    t0, t1 = body["tests"]
    assert [t0["status"], t1["status"]] == ["partial", "partial"], dump(body)
    assert body["status"] == "partial", dump(body)
    assert t0["points"] == 1.0, dump(body)
    assert t1["points"] == 0.5, dump(body)
    assert "found in 2 guesses" in t1["checker_message"], dump(body)


def test_deadlock_is_time_exceeded_and_idle(daemon):
    # both sides wait for the other to speak first, once both have
    # started: on a slow host that alone can take the wall time of a
    # real one, and a program still starting is not idle
    wall_s = budget(1.5)
    body = run(daemon, interactive("input()\n", GUESS_INTERACTOR, [{"stdin": "5"}],
                                   run={"limits": {"wall_time_s": wall_s}}))
    t = body["tests"][0]
    assert t["status"] == "time_exceeded", dump(body)
    assert t["idle"] is True, dump(body)
    assert t["cpu_time_ms"] < budget(200), dump(body)
    assert wall_s * 1000 - 100 <= t["duration_ms"] < wall_s * 1000 + budget(2500), dump(body)


def test_busy_solution_is_time_exceeded_not_idle(daemon):
    body = run(daemon, interactive("while True:\n    pass\n", GUESS_INTERACTOR, [{"stdin": "5"}],
                                   run={"limits": {"wall_time_s": 1, "cpu_time_s": 5}}))
    t = body["tests"][0]
    assert t["status"] == "time_exceeded", dump(body)
    assert t["idle"] is False, dump(body)


def test_interactor_crash_is_internal_error(daemon):
    crash = "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n"
    body = run(daemon, interactive(BINARY_SEARCH, crash, [{"stdin": "5"}]))
    t = body["tests"][0]
    assert t["status"] == "internal_error", dump(body)
    assert body["status"] == "internal_error"
    assert t["judge_error"] == "the interactor was killed by SIGSEGV", dump(body)


def test_interactor_judge_failure_is_internal_error(daemon):
    body = run(daemon, interactive(BINARY_SEARCH, "import sys\nprint('bad input', file=sys.stderr)\nsys.exit(3)\n",
                                   [{"stdin": "5"}]))
    t = body["tests"][0]
    assert t["status"] == "internal_error", dump(body)
    assert "bad input" in t["checker_message"], dump(body)


def test_interactor_over_its_memory_limit_is_internal_error(daemon):
    hog = "x = bytearray(b'y' * (400 << 20))\n"
    req = interactive(BINARY_SEARCH, hog, [{"stdin": "5"}])
    req["interactor"]["run"] = {"limits": {"memory_kb": 65536}}
    body = run(daemon, req)
    t = body["tests"][0]
    assert t["status"] == "internal_error", dump(body)
    assert t["judge_error"] == "the interactor went over its memory limit", dump(body)


def test_interactor_build_failure_is_internal_error(daemon):
    body = run(daemon, interactive(BINARY_SEARCH, "int main( {", [{"stdin": "5"}],
                                   interactor_language="cpp"))
    assert body["status"] == "internal_error", dump(body)
    assert body["interactor_build"]["status"] == "failed", dump(body)
    assert body["tests"][0]["status"] == "not_executed", dump(body)


def test_solution_crash_mid_dialogue_is_runtime_error(daemon):
    crash = ("import os, signal\nprint(50, flush=True)\ninput()\nprint(25, flush=True)\n"
             "input()\nos.kill(os.getpid(), signal.SIGSEGV)\n")
    body = run(daemon, interactive(crash, GUESS_INTERACTOR, [{"stdin": "1"}]))
    t = body["tests"][0]
    assert t["status"] == "runtime_error", dump(body)
    assert t["signal"] == "SIGSEGV", dump(body)
    # the interactor saw the end of the dialogue and said so
    assert "stopped after 2 guesses" in t["checker_message"], dump(body)


def test_solution_after_a_wrong_answer_is_judged_wrong(daemon):
    # after the interactor's verdict the solution writes on: EPIPE, a
    # Python traceback and exit 1, which the wrong answer explains
    stubborn = "import sys\nfor g in [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]:\n    print(g, flush=True)\n    sys.stdin.readline()\n"
    body = run(daemon, interactive(stubborn, GUESS_INTERACTOR, [{"stdin": "90"}]))
    assert body["tests"][0]["status"] == "wrong_output", dump(body)


PROTOCOL_TERMINATE = r'''
import sys
n = int(open(sys.argv[1]).read())
print(n, flush=True)            # tell the solution the answer
sys.stdin.readline()            # it says it is done
open("/judge/wait", "w").write("0")
lines = open("/judge/status").read().splitlines()
print(lines[2], file=sys.stderr)
sys.exit(0 if lines[2] == "killed: terminated" else 1)
'''


def test_solution_terminated_mid_dialogue_through_the_protocol(daemon):
    # the solution never exits: the interactor ends it, and its kill is
    # not held against it
    sol = "import time\ninput()\nprint('done', flush=True)\nwhile True:\n    time.sleep(1)\n"
    body = run(daemon, interactive(sol, PROTOCOL_TERMINATE, [{"stdin": "7"}]))
    t = body["tests"][0]
    assert t["status"] == "accepted", dump(body)
    assert t["checker_message"] == "killed: terminated\n", dump(body)
    assert t["terminated"] is True, dump(body)


PROTOCOL_MISUSE = r'''
import sys
out = []
out.append(open("/judge/status").read().splitlines()[2])   # no wait first
with open("/judge/wait", "w") as w:
    w.write("?")
out.append(open("/judge/status").read().splitlines()[2])
with open("/judge/wait", "w") as w:
    w.write("0")
out.append(open("/judge/status").read().splitlines()[2])
with open("/judge/wait", "w") as w:
    w.write("0")
out.append(open("/judge/status").read().splitlines()[2])
print("\n".join(out), file=sys.stderr)
'''


def test_protocol_misuse_is_answered_and_the_job_ends(daemon):
    sol = "import time\nwhile True:\n    time.sleep(1)\n"
    body = run(daemon, interactive(sol, PROTOCOL_MISUSE, [{"stdin": "1"}]))
    t = body["tests"][0]
    assert t["checker_message"].splitlines() == [
        "error: status pipe opened without a wait",
        "error: unknown wait request 0x3f (write 0 or 1)",
        "killed: terminated",
        "error: wait after terminate",
    ], dump(body)
    assert t["status"] == "accepted", dump(body)
    assert t["protocol_errors"] == 3, dump(body)


PROTOCOL_TIME = r'''
import sys
def status():
    with open("/judge/wait", "w") as w:
        w.write("1")
    with open("/judge/status") as s:
        return s.read().splitlines()
a = status()
print("go", flush=True)
sys.stdin.readline()
b = status()
print("bye", flush=True)
print(a[0], b[0], a[2], b[2], file=sys.stderr)
sys.exit(0 if int(b[0]) - int(a[0]) >= 150000 and a[2] == "running" else 1)
'''


def test_protocol_time_grows_while_the_solution_computes(daemon):
    sol = ("import time\ninput()\nt = time.process_time()\n"
           "while time.process_time() - t < 0.3:\n    pass\nprint('done', flush=True)\ninput()\n")
    body = run(daemon, interactive(sol, PROTOCOL_TIME, [{"stdin": "1"}]))
    t = body["tests"][0]
    assert t["status"] == "accepted", dump(body)
    a, b = (int(x) for x in t["checker_message"].split()[:2])
    assert b - a >= 300000 * 0.9, dump(body)
    assert b // 1000 <= t["cpu_time_ms"], dump(body)


PROTOCOL_MEMORY = r'''
import sys
def memory():
    with open("/judge/wait", "w") as w:
        w.write("1")
    with open("/judge/status") as s:
        return int(s.read().splitlines()[1])
a = memory()
print("go", flush=True)
sys.stdin.readline()
b = memory()
print("bye", flush=True)
print(a, b, file=sys.stderr)
sys.exit(0 if b - a >= 64 << 20 else 1)
'''


def test_protocol_memory_reflects_an_allocation(daemon):
    # The last line keeps x alive through the second reading; on stderr,
    # since the interactor may be gone by then (a write to its pipe would
    # fail with EPIPE, and the solution's own end is judged after "bye").
    sol = ("input()\nx = b'z' * (80 << 20)\nprint('ready', flush=True)\ninput()\n"
           "print(len(x) > 0, file=__import__('sys').stderr)\n")
    body = run(daemon, interactive(sol, PROTOCOL_MEMORY, [{"stdin": "1"}]))
    t = body["tests"][0]
    assert t["status"] == "accepted", dump(body)
    a, b = (int(x) for x in t["checker_message"].split())
    # kernel readings, charged in per-CPU batches: 1 MiB of slack
    assert b - a >= (80 << 20) - (1 << 20), dump(body)


def test_solution_cannot_see_the_interactor(daemon):
    spy = ("import os\nprint(os.path.exists('/judge'), len([p for p in os.listdir('/proc') if p.isdigit()]),"
           " file=__import__('sys').stderr)\nprint(50, flush=True)\ninput()\n")
    body = run(daemon, interactive(spy, GUESS_INTERACTOR, [{"stdin": "50"}]))
    t = body["tests"][0]
    assert t["status"] == "accepted", dump(body)
    seen, procs = t["stderr"].split()
    assert seen == "False", dump(body)
    # its init and itself
    assert int(procs) <= 2, dump(body)


@pytest.mark.parametrize("req, code", [
    ({"interactor": {"language": "nosuch", "source": "x"}}, "unknown_language"),
    ({"interactor": {"language": "py3", "source": "x"}, "compare": "tokens"}, "invalid_interactor"),
    ({"interactor": {"language": "py3", "source": "x"},
      "tests": [{"stdin": "1", "output_file": "out.txt"}]}, "invalid_interactor"),
])
def test_bad_interactor_requests(daemon, req, code):
    full = {"language": "py3", "source": "print(1)", "tests": [{"stdin": "1"}]}
    full.update(req)
    status, body = daemon.post("/run", full)
    assert status == 400, dump(body)
    assert body["error"]["code"] == code, dump(body)


def test_the_worked_example_in_api_md(daemon):
    # the guessing game a reader pastes into curl answers as the page says
    import os
    import re
    page = open(os.path.join(os.path.dirname(__file__), "..", "..", "docs", "api.md")).read()
    m = re.search(r"<<'EOF'\n(.*?)\nEOF\n", page, re.S)
    assert m, "no curl example in docs/api.md"
    body = run(daemon, json.loads(m.group(1)))
    assert body["status"] == "accepted", dump(body)
    assert [t["checker_message"] for t in body["tests"]] == [
        "found 37 in 3 guesses\n", "found 100 in 7 guesses\n"], dump(body)


def test_nothing_left_behind(daemon):
    assert daemon.leftovers() == []
    assert daemon.step_cgroups() == []
    assert daemon.stopped_clean() == []

