"""Data-driven end-to-end cases: tests/e2e/cases/<language>/<case>.json.

A case is a request and what the answer must hold; adding a case is adding
a file. Format (docs/languages.md explains it for language authors):

  {"about": "why the case exists",            optional; not read
   "api": "run" | "v1",                       default "run"
   "request": {...},                          the JSON body as sent
   "source_file": "prog.c",                   optional: fills request.source
                                              (or files[0].content for v1)
   "expect": {
     "http_status": 200,                      default 200
     "status": "accepted",                    /run top-level status
     "build_status": "ok",
     "error_code": "invalid_filename",        /run 4xx error.code, v1 code
     "tests": [{"status": ..., "stdout": ..., "stdout_contains": ...,
                "stderr_contains": ..., "stdout_max_len": N}],
     "compile": null | {...step checks...},   v1: step checks as for run
     "run": null | {"status": "OK", "exit_code": 0, "signal": null,
                    "stdout": ..., "stderr": ..., "output": ... (exact),
                    "stdout_contains": ..., "output_contains": ...,
                    "stderr_contains": ...,
                    "stdout_matches": ..., "stderr_matches": ...,
                    "output_matches": ...}}}
  A *_contains is a string the stream holds; a *_matches is a Python regular
  expression searched for in it (re.search: anchor it with \\A and \\Z).
"""
import base64
import glob
import json
import os
import re

import pytest

from conftest import Daemon

CASES = sorted(glob.glob(os.path.join(os.path.dirname(__file__), "cases", "*", "*.json")))
# GOBOXD_TEST_CASE_DIRS=java,c runs only those case directories.
if os.environ.get("GOBOXD_TEST_CASE_DIRS"):
    _only = set(os.environ["GOBOXD_TEST_CASE_DIRS"].split(","))
    CASES = [c for c in CASES if os.path.basename(os.path.dirname(c)) in _only]


def case_id(path):
    return "%s/%s" % (os.path.basename(os.path.dirname(path)),
                      os.path.splitext(os.path.basename(path))[0])


@pytest.fixture(scope="module")
def daemon():
    # Codize's --run-timeout keeps the v1 timeout cases short.
    d = Daemon(workers=2, args=["--run-timeout", "3s"])
    yield d
    d.stop()


def load_case(path):
    with open(path) as f:
        case = json.load(f)
    req = case["request"]
    if "source_file" in case:
        with open(os.path.join(os.path.dirname(path), case["source_file"])) as f:
            src = f.read()
        if case.get("api", "run") == "v1":
            req["files"][0]["content"] = src
        else:
            req["source"] = src
    return case


def check_text(where, got, exp):
    for stream in ("stdout", "stderr", "output"):
        if stream in exp and stream in got:
            assert got[stream] == exp[stream], where
    for stream in ("stdout", "stderr", "output"):
        key = stream + "_contains"
        if key in exp:
            assert exp[key] in got[stream], "%s: %s lacks %r: %r" % (where, stream, exp[key],
                                                                  got[stream][:2000])
    for stream in ("stdout", "stderr", "output"):
        key = stream + "_matches"
        if key in exp:
            assert re.search(exp[key], got[stream]), "%s: %s does not match %r: %r" % (
                where, stream, exp[key], got[stream][:2000])
    if "stdout_max_len" in exp:
        assert len(got["stdout"]) <= exp["stdout_max_len"], where


def check_run(body, exp):
    if "status" in exp:
        assert body["status"] == exp["status"], json.dumps(body)[:3000]
    if "build_status" in exp:
        assert body["build"]["status"] == exp["build_status"], json.dumps(body["build"])[:3000]
    if "build_stderr_contains" in exp:
        assert exp["build_stderr_contains"] in body["build"]["stderr"]
    if "tests" in exp:
        assert len(body["tests"]) == len(exp["tests"])
        for i, (got, want) in enumerate(zip(body["tests"], exp["tests"])):
            where = "test %d: %s" % (i, json.dumps(got)[:2000])
            if "status" in want:
                assert got["status"] == want["status"], where
            for k in ("exit_code", "signal", "output_file"):
                if k in want:
                    assert got[k] == want[k], where
            check_text(where, got, want)


def b64(s):
    return base64.b64decode(s).decode(errors="replace")


def check_v1(body, exp):
    for step in ("compile", "run"):
        if step not in exp:
            continue
        want, got = exp[step], body[step]
        if want is None:
            assert got is None, json.dumps(body)[:3000]
            continue
        assert got is not None, json.dumps(body)[:3000]
        dec = {k: b64(got[k]) for k in ("stdout", "stderr", "output")}
        where = "%s: %s" % (step, json.dumps(dict(got, **dec))[:3000])
        for k in ("status", "exit_code", "signal"):
            if k in want:
                assert got[k] == want[k], where
        check_text(where, dec, want)


# Cases that take 2 s or more here: a time limit run out, or a compiler
# that starts a JVM or type-checks a project (`-m "not slow"` leaves them
# out of a quick run).
SLOW_DIRS = {"clojure", "kotlin", "nim", "scala", "ts"}


def case_param(path):
    slow = (os.path.basename(os.path.dirname(path)) in SLOW_DIRS or
            "timeout" in os.path.basename(path))
    return pytest.param(path, id=case_id(path), marks=[pytest.mark.slow] if slow else [])


@pytest.mark.parametrize("path", [case_param(p) for p in CASES])
def test_case(daemon, path):
    case = load_case(path)
    api = case.get("api", "run")
    exp = case["expect"]
    status, body = daemon.post("/run" if api == "run" else "/v1/run", case["request"])
    assert status == exp.get("http_status", 200), json.dumps(body)[:3000]
    if status != 200:
        if "error_code" in exp:
            code = body["error"]["code"] if api == "run" else body["code"]
            assert code == exp["error_code"], json.dumps(body)
        return
    if api == "run":
        check_run(body, exp)
    else:
        check_v1(body, exp)


def test_nothing_left_behind(daemon):
    # Runs after the cases of this module (pytest keeps file order).
    assert daemon.leftovers() == []
    assert daemon.step_cgroups() == []
    assert daemon.stopped_clean() == []
