"""Judge0 CE's API, as a Judge0 client sees it.

The reference is Judge0 CE v1.13.1 itself (judge0/judge0): its docs
(docs/api/), submissions_controller.rb, submission.rb (the validations
and their words), isolate_job.rb (statuses, the comparison, callbacks)
and status.rb. Where goboxd chooses to differ (a zip's entries, a
base64 text that does not decode), the test says so.
"""
import base64
import http.server
import io
import json
import os
import re
import signal
import shutil
import socket
import tempfile
import threading
import time
import zipfile

import pytest

from conftest import Daemon, HttpReceiver, alive, languages_of, poll, small, wait_until

# Judge0 CE 1.13.1's serializer: every column but id (db/schema.rb), then
# status and language (submission_serializer.rb).
ALL_FIELDS = {
    "source_code", "language_id", "stdin", "expected_output", "stdout", "status_id",
    "created_at", "finished_at", "time", "memory", "stderr", "token", "number_of_runs",
    "cpu_time_limit", "cpu_extra_time", "wall_time_limit", "memory_limit", "stack_limit",
    "max_processes_and_or_threads", "enable_per_process_and_thread_time_limit",
    "enable_per_process_and_thread_memory_limit", "max_file_size", "compile_output",
    "exit_code", "exit_signal", "message", "wall_time", "compiler_options",
    "command_line_arguments", "redirect_stderr_to_stdout", "callback_url",
    "additional_files", "enable_network", "status", "language"}
# SubmissionSerializer.default_fields
DEFAULT_FIELDS = {"token", "time", "memory", "stdout", "stderr", "compile_output", "message",
                  "status"}
# status.rb
STATUSES = [(1, "In Queue"), (2, "Processing"), (3, "Accepted"), (4, "Wrong Answer"),
            (5, "Time Limit Exceeded"), (6, "Compilation Error"),
            (7, "Runtime Error (SIGSEGV)"), (8, "Runtime Error (SIGXFSZ)"),
            (9, "Runtime Error (SIGFPE)"), (10, "Runtime Error (SIGABRT)"),
            (11, "Runtime Error (NZEC)"), (12, "Runtime Error (Other)"),
            (13, "Internal Error"), (14, "Exec Format Error")]
NOT_UTF8 = ("some attributes for this submission cannot be converted to UTF-8, use "
            "base64_encoded=true query parameter")
NOT_UTF8_BATCH = ("some attributes for one or more submissions cannot be converted to "
                  "UTF-8, use base64_encoded=true query parameter")
AT_LEAST_ONE = "there should be at least one submission in a batch"
AT_MOST_20 = "number of submissions in a batch should be less than or equal to 20"
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")

PY, C, CPP, BASH = 71, 50, 54, 46
C_HEAD = "#include <stdio.h>\n#include <stdlib.h>\n#include <signal.h>\n#include <unistd.h>\n"


@pytest.fixture(scope="module")
def daemon():
    d = Daemon(languages=small(), args=["--callback-allow-local"])
    yield d
    d.stop()


def b64(data):
    return base64.b64encode(data if isinstance(data, bytes) else data.encode()).decode()


def unb64(text):
    """Judge0 answers base64 with line breaks (Ruby's encode64): both read."""
    return None if text is None else base64.b64decode(text.replace("\n", ""))


def waited(d, sub, query=""):
    """POST ?wait=true: the 201 answer."""
    status, body = d.post("/submissions?wait=true" + ("&" + query if query else ""), sub)
    assert status == 201, body
    return body


def submit(d, sub, query=""):
    """POST without wait: the token (the 201's only field)."""
    status, body = d.post("/submissions" + ("?" + query if query else ""), sub)
    assert status == 201, body
    assert list(body) == ["token"] and UUID.match(body["token"]), body
    return body["token"]


def finished(d, token, query="", timeout=30):
    """GET until the submission's status is past 1 and 2: its last answer."""
    def done():
        status, body = d.get("/submissions/%s?%s" % (token, query))
        assert status == 200, body
        sid = body["status"]["id"] if "status" in body else body["status_id"]
        return body if sid > 2 else None
    return wait_until(done, "submission %s finished" % token, timeout)


def status_of(body):
    return body["status"]["id"], body["status"]["description"]


def errors_422(d, sub, query=""):
    status, body = d.post("/submissions" + ("?" + query if query else ""), sub)
    assert status == 422, body
    return body


def zipped(entries):
    """A zip (base64) of (name or ZipInfo, bytes) entries, made with zipfile."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in entries:
            z.writestr(name, data)
    return b64(out.getvalue())


# ---- endpoints ----------------------------------------------------------


def test_create_then_poll_until_done(daemon):
    token = submit(daemon, {"language_id": PY, "source_code": "print(input() * 2)",
                            "stdin": "ab"})
    body = finished(daemon, token)
    assert set(body) == DEFAULT_FIELDS
    assert body["token"] == token
    assert status_of(body) == (3, "Accepted")
    assert (body["stdout"], body["stderr"], body["compile_output"], body["message"]) == \
        ("abab\n", None, None, None)
    # Judge0's decimals are strings ("0.001"), memory a number of KB
    assert isinstance(body["time"], str) and float(body["time"]) >= 0
    assert isinstance(body["memory"], int) and body["memory"] > 0


def test_wait_answers_the_whole_submission_and_its_token_stays(daemon):
    body = waited(daemon, {"language_id": PY, "source_code": "print(input()[::-1])",
                           "stdin": "abc", "expected_output": "cba"})
    assert set(body) == DEFAULT_FIELDS and UUID.match(body["token"])
    assert (status_of(body), body["stdout"]) == ((3, "Accepted"), "cba\n")
    status, again = daemon.get("/submissions/" + body["token"])
    assert status == 200 and again == body
    every = waited(daemon, {"language_id": PY, "source_code": "print(1)", "stdin": "x"},
                   "fields=*")
    assert set(every) == ALL_FIELDS
    assert (every["source_code"], every["language_id"], every["stdin"],
            every["expected_output"], every["stdout"], every["status_id"]) == \
        ("print(1)", PY, "x", None, "1\n", 3)
    assert every["language"]["id"] == PY and every["language"]["name"].startswith("Python (")
    # what was not given shows Judge0's defaults (config_info's)
    assert (every["number_of_runs"], every["cpu_time_limit"], every["cpu_extra_time"],
            every["wall_time_limit"], every["memory_limit"], every["stack_limit"],
            every["max_processes_and_or_threads"], every["max_file_size"]) == \
        (1, "5.0", "1.0", "10.0", 128000, 64000, 60, 1024)
    assert (every["redirect_stderr_to_stdout"], every["enable_network"],
            every["enable_per_process_and_thread_time_limit"],
            every["enable_per_process_and_thread_memory_limit"]) == (False, False, False, False)
    assert every["exit_code"] == 0 and every["exit_signal"] is None
    for t in ("created_at", "finished_at"):
        assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", every[t]), every[t]


def test_delete_a_finished_one_answers_it_in_base64_then_it_is_gone(daemon):
    token = submit(daemon, {"language_id": BASH, "source_code": "echo gone"})
    finished(daemon, token)
    # base64_encoded is forced true on DELETE, whatever was asked
    status, body, _ = daemon.request("DELETE", "/submissions/%s?base64_encoded=false" % token)
    assert status == 200, body
    assert set(body) == DEFAULT_FIELDS and body["token"] == token
    assert unb64(body["stdout"]) == b"gone\n" and status_of(body) == (3, "Accepted")
    status, body = daemon.get("/submissions/" + token)
    assert status == 404 and "error" in body, body
    status, body, _ = daemon.request("DELETE", "/submissions/" + token)
    assert status == 404 and "error" in body, body
    # fields apply to what DELETE answers
    token = submit(daemon, {"language_id": BASH, "source_code": "echo x"})
    finished(daemon, token)
    status, body, _ = daemon.request("DELETE", "/submissions/%s?fields=stdout,status_id" % token)
    assert status == 200 and body == {"stdout": b64("x\n"), "status_id": 3}, body


def test_unknown_token_is_404(daemon):
    status, body = daemon.get("/submissions/00000000-0000-0000-0000-000000000000")
    assert status == 404 and "error" in body, body


def test_the_store_is_the_queue_and_a_full_store_is_503():
    """Judge0 refuses past MAX_QUEUE_SIZE (503 "queue is full"); goboxd's
    async submissions wait in the store, beyond --max-queue-size, and only
    a full store refuses one (docs/api.md, deliberate differences). What
    it took runs."""
    d = Daemon(languages=small(), workers=1,
               args=["--max-queue-size", "2", "--store-max-size", "320k"])
    try:
        first = submit(d, {"language_id": BASH, "source_code": "sleep 1; echo first"})
        wait_until(lambda: d.get("/submissions/%s?fields=status_id" % first)[1] ==
                   {"status_id": 2}, "the first running")
        pad = "#" + "x" * 16000 + "\n"
        taken = []
        for i in range(100):
            status, body = d.post("/submissions", {"language_id": BASH,
                                                   "source_code": pad + "echo %d" % i})
            if status != 201:
                break
            taken.append(body["token"])
        assert len(taken) > 2, "more than --max-queue-size wait in the store"
        assert (status, body) == (503, {"error": "the submission store is full"})
        status, body = d.post("/submissions/batch", {"submissions": [
            {"language_id": BASH, "source_code": pad + "echo x"}]})
        assert (status, body) == (503, {"error": "the submission store is full"})
        assert finished(d, first)["stdout"] == "first\n"
        for i, t in enumerate(taken):
            assert finished(d, t)["stdout"] == "%d\n" % i, "nothing it took is lost"
    finally:
        d.stop()


def test_queued_and_running_show_1_and_2_and_cannot_be_deleted():
    d = Daemon(languages=small(), workers=1)
    try:
        first = submit(d, {"language_id": BASH, "source_code": "sleep 1; echo first"})
        second = submit(d, {"language_id": PY, "source_code": "print('second')"})

        def states():
            got = [d.get("/submissions/%s?fields=status,finished_at" % t)[1]
                   for t in (first, second)]
            return got if [g["status"]["id"] for g in got] == [2, 1] else None
        running, queued = wait_until(states, "the first running, the second queued", 10)
        assert running["status"] == {"id": 2, "description": "Processing"}
        assert queued["status"] == {"id": 1, "description": "In Queue"}
        assert running["finished_at"] is None and queued["finished_at"] is None
        for token, sid, name in ((first, 2, "Processing"), (second, 1, "In Queue")):
            status, body, _ = d.request("DELETE", "/submissions/" + token)
            assert status == 400 and body == {"error": "submission cannot be deleted because "
                                              "its status is %d (%s)" % (sid, name)}, body
        assert finished(d, first)["stdout"] == "first\n"
        assert finished(d, second)["stdout"] == "second\n"
        status, _, _ = d.request("DELETE", "/submissions/" + first)
        assert status == 200
    finally:
        d.stop()


def test_batch_create_keeps_order_of_tokens_and_errors(daemon):
    # Judge0's own example (create_a_submission_batch.md), with py3 for ruby
    status, body = daemon.post("/submissions/batch", {"submissions": [
        {"language_id": BASH, "source_code": "echo hello from Bash"},
        {"language_id": 123456789, "source_code": "print(\"hello from Python\")"},
        {"language_id": PY, "source_code": ""}]})
    assert status == 201, body
    assert len(body) == 3 and list(body[0]) == ["token"] and UUID.match(body[0]["token"])
    assert body[1:] == [{"language_id": ["language with id 123456789 doesn't exist"]},
                        {"source_code": ["can't be blank"]}]
    assert finished(daemon, body[0]["token"])["stdout"] == "hello from Bash\n"


def test_batch_create_all_invalid_is_422(daemon):
    status, body = daemon.post("/submissions/batch", {"submissions": [
        {"language_id": 999999, "source_code": "x"}, {"language_id": PY}]})
    assert status == 422, body
    assert body == [{"language_id": ["language with id 999999 doesn't exist"]},
                    {"source_code": ["can't be blank"]}]


def test_batch_create_sizes(daemon):
    for req in ({"submissions": []}, {}, {"submissions": "x"}):
        status, body = daemon.post("/submissions/batch", req)
        assert (status, body) == (400, {"error": AT_LEAST_ONE}), req
    one = {"language_id": BASH, "source_code": "echo $((6*7))"}
    status, body = daemon.post("/submissions/batch", {"submissions": [one] * 21})
    assert (status, body) == (400, {"error": AT_MOST_20})
    # 20 is the most; fields and wait are ignored on batch create (Judge0)
    status, body = daemon.post("/submissions/batch?fields=nonsense&wait=true",
                               {"submissions": [one] * 20})
    assert status == 201 and len({b["token"] for b in body}) == 20, body
    for b in body:
        assert finished(daemon, b["token"])["stdout"] == "42\n"


def test_batch_get(daemon):
    status, made = daemon.post("/submissions/batch", {"submissions": [
        {"language_id": BASH, "source_code": "echo one"},
        {"language_id": BASH, "source_code": "echo two"}]})
    assert status == 201
    one, two = made[0]["token"], made[1]["token"]
    finished(daemon, one)
    finished(daemon, two)
    unknown = "00000000-0000-0000-0000-000000000000"
    status, body = daemon.get("/submissions/batch?tokens=%s,%s,%s,%s" % (two, unknown, one, two))
    assert status == 200 and list(body) == ["submissions"], body
    got = body["submissions"]
    assert [g and (g["token"], g["stdout"]) for g in got] == \
        [(two, "two\n"), None, (one, "one\n"), (two, "two\n")]
    assert set(got[0]) == DEFAULT_FIELDS
    status, body = daemon.get("/submissions/batch?fields=token,status_id&tokens=" + one)
    assert (status, body) == (200, {"submissions": [{"token": one, "status_id": 3}]})
    # Judge0 reads a tokens header first
    status, body, _ = daemon.request("GET", "/submissions/batch?fields=stdout",
                                     headers={"tokens": "%s,%s" % (one, two)})
    assert (status, body) == (200, {"submissions": [{"stdout": "one\n"}, {"stdout": "two\n"}]})
    status, body = daemon.get("/submissions/batch?tokens=" + ",".join([unknown] * 20))
    assert (status, body) == (200, {"submissions": [None] * 20})
    status, body = daemon.get("/submissions/batch?tokens=" + ",".join([unknown] * 21))
    assert (status, body) == (400, {"error": AT_MOST_20})
    for q in ("", "?tokens="):
        status, body = daemon.get("/submissions/batch" + q)
        assert (status, body) == (400, {"error": AT_LEAST_ONE}), q
    status, body = daemon.get("/submissions/batch?fields=stdout,bogus&tokens=" + one)
    assert (status, body) == (400, {"error": "invalid fields: [bogus]"})


def test_batch_get_splits_tokens_as_ruby_does(daemon):
    """submissions_controller.rb: tokens.to_s.strip.split(","): empty
    tokens between commas stay (each a null), trailing ones go."""
    token = submit(daemon, {"language_id": BASH, "source_code": "echo s"})
    finished(daemon, token)
    status, body = daemon.get("/submissions/batch?fields=stdout&tokens=%s,,%s,," % (token, token))
    assert (status, body) == (200, {"submissions": [{"stdout": "s\n"}, None, {"stdout": "s\n"}]})
    for q in (",", ",,,", "%20"):
        status, body = daemon.get("/submissions/batch?tokens=" + q)
        assert (status, body) == (400, {"error": AT_LEAST_ONE}), q


def test_batch_get_of_10000_tokens_is_refused_not_hung(daemon):
    # within the HTTP layer's bounds: Judge0's own answer
    some = ",".join(["0123abcd-0000-4000-8000-%012d" % i for i in range(300)])
    status, body = daemon.get("/submissions/batch?tokens=" + some)
    assert (status, body) == (400, {"error": AT_MOST_20})
    tokens = ",".join(["0123abcd-0000-4000-8000-%012d" % i for i in range(10000)])
    for how in ({"path": "/submissions/batch?tokens=" + tokens},
                {"path": "/submissions/batch", "headers": {"tokens": tokens}}):
        status, body, _ = daemon.request("GET", how["path"], headers=how.get("headers"),
                                         timeout=20)
        assert 400 <= status < 500, (status, str(body)[:300])
        # the HTTP layer's own refusal (URI or headers too long), or Judge0's
        assert isinstance(body, dict) and "error" in body, (status, str(body)[:300])
        if status not in (414, 431):
            assert body == {"error": AT_MOST_20}
    status, _ = daemon.get("/statuses")
    assert status == 200


def test_languages(daemon):
    status, body = daemon.get("/languages")
    assert status == 200
    # Judge0 1.13.1 lists gcc 7.4 and 8.3 (48, 49; g++: 52, 53) beside the
    # newest: goboxd lists them too, run by its one gcc and named for it
    assert [l["id"] for l in body] == [BASH, 48, 49, C, 52, 53, CPP, PY]
    assert all(set(l) == {"id", "name"} for l in body), body
    names = {l["id"]: l["name"] for l in body}
    for lid, prefix in ((BASH, "Bash ("), (C, "C ("), (CPP, "C++ ("), (PY, "Python (")):
        assert names[lid].startswith(prefix), names
    assert names[48] == names[49] == names[C] and names[52] == names[53] == names[CPP]
    # /languages/all adds whether each is archived (languages_controller.rb)
    status, body = daemon.get("/languages/all")
    assert status == 200
    assert {l["id"]: (l["name"], l["is_archived"]) for l in body} == \
        {k: (v, False) for k, v in names.items()}
    status, one = daemon.get("/languages/%d" % C)
    assert status == 200
    assert set(one) == {"id", "name", "is_archived", "source_file", "compile_cmd", "run_cmd"}
    assert (one["id"], one["name"], one["is_archived"]) == (C, names[C], False)
    assert one["source_file"].endswith(".c") and one["compile_cmd"] and one["run_cmd"]
    status, py = daemon.get("/languages/%d" % PY)
    assert status == 200 and py["source_file"].endswith(".py") and py["run_cmd"]
    # an interpreted language has no compile command: null, as Judge0's column
    assert py["compile_cmd"] is None, py
    status, one = daemon.get("/languages/52")
    assert status == 200 and (one["id"], one["name"]) == (52, names[CPP]), one
    # an older id is taken, but not listed (Judge0 1.13.1 archived it)
    for bad in ("999999", "0", "abc", "71x", "34", "10"):
        status, body = daemon.get("/languages/" + bad)
        assert status == 404 and "error" in body, (bad, body)


def test_statuses(daemon):
    status, body = daemon.get("/statuses")
    assert status == 200
    assert body == [{"id": i, "description": name} for i, name in STATUSES]


def test_about_config_system_workers(daemon):
    status, about = daemon.get("/about")
    assert status == 200 and {"version", "homepage", "source_code", "maintainer"} <= set(about)
    status, cfg = daemon.get("/config_info")
    assert status == 200
    # every key of Judge0's Config.config_info, with Judge0's defaults
    # where goboxd takes them as they are
    assert cfg == dict(cfg, **{
        "maintenance_mode": False, "enable_wait_result": True,
        "enable_compiler_options": True, "enable_command_line_arguments": True,
        "enable_submission_delete": True, "enable_callbacks": True,
        "callbacks_max_tries": 3, "callbacks_timeout": 5,
        "enable_additional_files": True,
        "cpu_time_limit": 5, "max_cpu_time_limit": 15, "cpu_extra_time": 1,
        "max_cpu_extra_time": 5, "wall_time_limit": 10, "max_wall_time_limit": 20,
        "memory_limit": 128000, "max_memory_limit": 512000, "stack_limit": 64000,
        "max_stack_limit": 128000, "max_processes_and_or_threads": 60,
        "max_max_processes_and_or_threads": 120,
        "enable_per_process_and_thread_time_limit": False,
        "allow_enable_per_process_and_thread_time_limit": True,
        "enable_per_process_and_thread_memory_limit": False,
        "allow_enable_per_process_and_thread_memory_limit": True,
        "max_file_size": 1024, "max_max_file_size": 4096, "number_of_runs": 1,
        "max_number_of_runs": 20, "redirect_stderr_to_stdout": False,
        "enable_batched_submissions": True, "max_submission_batch_size": 20,
        "use_docs_as_homepage": False, "allow_enable_network": False,
        "enable_network": False})
    assert isinstance(cfg["allowed_languages_for_compile_options"], list)
    for k in ("max_queue_size", "max_extract_size", "submission_cache_duration"):
        # numbers in Judge0 (SUBMISSION_CACHE_DURATION is seconds, 0: none)
        assert type(cfg[k]) in (int, float), (k, cfg[k])
    status, info = daemon.get("/system_info")
    assert status == 200 and isinstance(info, dict) and info, info
    status, workers = daemon.get("/workers")
    assert status == 200 and len(workers) == 1, workers
    w = workers[0]
    assert set(w) == {"queue", "size", "available", "idle", "working", "paused", "failed"}
    assert w["available"] == 2 and w["idle"] + w["working"] <= 2 and w["size"] >= 0, w


def test_wrong_methods_are_405(daemon):
    for method, path, allow in (("PUT", "/submissions", "GET, POST"),
                                ("PUT", "/submissions/x", "GET, DELETE"),
                                ("DELETE", "/submissions/batch", "GET, POST")):
        status, body, headers = daemon.request(method, path)
        assert status == 405 and headers.get("Allow") == allow and "error" in body


# ---- base64_encoded and fields -----------------------------------------


def test_base64_in_and_out(daemon):
    sub = {"language_id": PY, "source_code": b64("print(input()[::-1])"), "stdin": b64("\u00e9tat"),
           "expected_output": b64("tat\u00e9")}
    body = waited(daemon, sub, "base64_encoded=true&fields=*")
    assert status_of(body) == (3, "Accepted")
    assert [unb64(body[k]) for k in ("source_code", "stdin", "expected_output", "stdout")] == \
        [b"print(input()[::-1])", "\u00e9tat".encode(), "tat\u00e9".encode(),
         "tat\u00e9\n".encode()]
    # the same one, plain
    status, plain = daemon.get("/submissions/%s?fields=source_code,stdin,stdout" % body["token"])
    assert (status, plain) == (200, {"source_code": "print(input()[::-1])",
                                     "stdin": "\u00e9tat", "stdout": "tat\u00e9\n"})
    # the message is encoded too (submission_serializer.rb)
    body = waited(daemon, {"language_id": BASH, "source_code": b64("echo -n e >&2; exit 3")},
                  "base64_encoded=true")
    assert status_of(body)[0] == 11
    assert unb64(body["message"]) == b"Exited with error status 3"
    assert unb64(body["stderr"]) == b"e"
    status, got = daemon.get("/submissions/batch?base64_encoded=true&fields=stderr,message"
                             "&tokens=" + body["token"])
    assert status == 200
    assert [unb64(got["submissions"][0][k]) for k in ("stderr", "message")] == \
        [b"e", b"Exited with error status 3"]
    # batch create reads base64 too
    status, made = daemon.post("/submissions/batch?base64_encoded=true", {"submissions": [
        {"language_id": BASH, "source_code": b64("cat"), "stdin": b64("b\u00e4tch")}]})
    assert status == 201, made
    assert finished(daemon, made[0]["token"])["stdout"] == "b\u00e4tch"


def test_bad_base64_is_422_on_its_field(daemon):
    # Judge0's decode64 would read anything; goboxd refuses what is not base64
    good = {"language_id": PY, "source_code": b64("print(1)")}
    for field in ("source_code", "stdin", "expected_output"):
        body = errors_422(daemon, dict(good, **{field: "%%% not base64 %%%"}),
                          "base64_encoded=true")
        assert list(body) == [field] and body[field], body
    status, made = daemon.post("/submissions/batch?base64_encoded=true", {"submissions": [
        good, dict(good, stdin="!!")]})
    assert status == 201 and "token" in made[0] and list(made[1]) == ["stdin"], made


def test_fields(daemon):
    token = submit(daemon, {"language_id": PY, "source_code": "print(5)"})
    finished(daemon, token)
    status, body = daemon.get("/submissions/%s?fields=stdout,status_id,language_id" % token)
    assert (status, body) == (200, {"stdout": "5\n", "status_id": 3, "language_id": PY})
    status, body = daemon.get("/submissions/%s?fields=*" % token)
    assert status == 200 and set(body) == ALL_FIELDS
    status, body = daemon.get("/submissions/%s?fields=" % token)
    assert status == 200 and set(body) == DEFAULT_FIELDS
    status, body = daemon.get("/submissions/%s?fields=stdout,x" % token)
    assert (status, body) == (400, {"error": "invalid fields: [x]"})
    status, body = daemon.get("/submissions/%s?fields=a,token,b" % token)
    assert (status, body) == (400, {"error": "invalid fields: [a, b]"})
    # create checks them too, before anything is taken
    status, body = daemon.post("/submissions?fields=x", {"language_id": PY,
                                                         "source_code": "print(1)"})
    assert (status, body) == (400, {"error": "invalid fields: [x]"})
    body = waited(daemon, {"language_id": PY, "source_code": "print(6)"},
                  "fields=stdout,exit_code")
    assert body == {"stdout": "6\n", "exit_code": 0}


def test_output_that_is_not_utf8(daemon):
    src = "import sys\nsys.stdout.buffer.write(b'\\xfe\\xff\\n')\n"
    token = submit(daemon, {"language_id": PY, "source_code": src})
    body = finished(daemon, token, "base64_encoded=true")
    assert unb64(body["stdout"]) == b"\xfe\xff\n" and status_of(body) == (3, "Accepted")
    status, body = daemon.get("/submissions/" + token)
    assert (status, body) == (400, {"error": NOT_UTF8})
    status, body = daemon.get("/submissions/batch?tokens=" + token)
    assert (status, body) == (400, {"error": NOT_UTF8_BATCH})
    status, body = daemon.get("/submissions/batch?base64_encoded=true&fields=stdout&tokens="
                              + token)
    assert status == 200 and unb64(body["submissions"][0]["stdout"]) == b"\xfe\xff\n"
    # waited for: 201, the error, and the token that answers with base64
    # (create_a_submission.md)
    status, body = daemon.post("/submissions?wait=true", {"language_id": PY, "source_code": src})
    assert status == 201 and set(body) == {"error", "token"} and body["error"] == NOT_UTF8
    status, again = daemon.get("/submissions/%s?base64_encoded=true" % body["token"])
    assert status == 200 and unb64(again["stdout"]) == b"\xfe\xff\n"


# ---- bad input ------------------------------------------------------------


def test_bad_bodies(daemon):
    for raw in (b"not json", b"[1, 2]", b'"text"', b"{\"language_id\": 71,"):
        for path in ("/submissions", "/submissions?wait=true"):
            status, body = daemon.post(path, raw)
            assert status == 400 and "error" in body, (path, raw, body)
    assert errors_422(daemon, {"language_id": PY}) == {"source_code": ["can't be blank"]}
    assert errors_422(daemon, {"language_id": PY, "source_code": ""}) == \
        {"source_code": ["can't be blank"]}
    assert errors_422(daemon, {"source_code": "print(1)"}) == {"language_id": ["can't be blank"]}
    assert errors_422(daemon, {}) == {"source_code": ["can't be blank"],
                                      "language_id": ["can't be blank"]}


def test_what_the_fuzzer_found_is_refused_and_the_worker_lives(daemon):
    """tests/fuzz/fuzz_judge0 found these: a refused number of runs was
    still allocated (1e12 killed the worker), a base64 source of nothing
    was taken (and failed when run), stdin over its cap was copied from
    the wrong buffer."""
    before = set(daemon.worker_pids())
    for big in (1e12, 3e6, 1e40):
        assert errors_422(daemon, {"language_id": PY, "source_code": "print(1)",
                                   "number_of_runs": big}) == \
            {"number_of_runs": ["must be less than or equal to 20"]}
    assert errors_422(daemon, {"language_id": PY, "source_code": "\n"},
                      "base64_encoded=true") == {"source_code": ["can't be blank"]}
    assert errors_422(daemon, {"language_id": PY, "source_code": "print(1)",
                               "cpu_time_limit": 1e40, "memory_limit": -1e40}) == {
        "cpu_time_limit": ["must be less than or equal to 15.0"],
        "memory_limit": ["must be greater than or equal to 2048"]}
    assert set(daemon.worker_pids()) == before, "no worker died"


def test_numbers_out_of_judge0s_bounds(daemon):
    # submission.rb's numericality rules and Rails' words for them
    cases = [("number_of_runs", 0, "must be greater than 0"),
             ("number_of_runs", 21, "must be less than or equal to 20"),
             ("cpu_time_limit", -1, "must be greater than or equal to 0"),
             ("cpu_time_limit", 15.5, "must be less than or equal to 15.0"),
             ("cpu_extra_time", 6, "must be less than or equal to 5.0"),
             ("wall_time_limit", 0.5, "must be greater than or equal to 1"),
             ("wall_time_limit", 21, "must be less than or equal to 20.0"),
             ("memory_limit", 2047, "must be greater than or equal to 2048"),
             ("memory_limit", 512001, "must be less than or equal to 512000"),
             ("stack_limit", 128001, "must be less than or equal to 128000"),
             ("max_processes_and_or_threads", 0, "must be greater than 0"),
             ("max_processes_and_or_threads", 121, "must be less than or equal to 120"),
             ("max_file_size", 4097, "must be less than or equal to 4096"),
             ("cpu_time_limit", "abc", "is not a number")]
    for field, value, words in cases:
        body = errors_422(daemon, {"language_id": PY, "source_code": "print(1)", field: value})
        assert body == {field: [words]}, (field, value, body)
    # numbers as strings are numbers (Rails casts them), at the bounds too
    body = waited(daemon, {"language_id": str(PY), "source_code": "print(1)",
                           "cpu_time_limit": "15", "wall_time_limit": "1",
                           "memory_limit": 512000, "max_file_size": 0, "stack_limit": 0},
                  "fields=status_id,cpu_time_limit,wall_time_limit,max_file_size")
    assert body == {"status_id": 3, "cpu_time_limit": "15.0", "wall_time_limit": "1.0",
                    "max_file_size": 0}


# ---- each field -----------------------------------------------------------


def test_language_ids(daemon):
    assert errors_422(daemon, {"language_id": 150000, "source_code": "x"}) == \
        {"language_id": ["language with id 150000 doesn't exist"]}
    # an older Python 3 id still runs (goboxd maps it; Judge0 would say archived)
    body = waited(daemon, {"language_id": 34,
                           "source_code": "import sys; print(sys.version_info[0])"})
    assert (status_of(body), body["stdout"]) == ((3, "Accepted"), "3\n")
    body = waited(daemon, {"language_id": "46", "source_code": "echo $BASH_VERSION | cut -c1"})
    assert (status_of(body)[0], body["stdout"].strip().isdigit()) == (3, True), body


IFDEF = C_HEAD + ("int main(void) {\n#ifdef X\n puts(\"X\");\n#else\n puts(\"no X\");\n#endif\n"
                  " return 0;\n}\n")


def test_compiler_options(daemon):
    body = waited(daemon, {"language_id": C, "source_code": IFDEF})
    assert body["stdout"] == "no X\n"
    body = waited(daemon, {"language_id": C, "source_code": IFDEF, "compiler_options": "-DX -O2"},
                  "fields=stdout,status_id,compiler_options")
    assert body == {"stdout": "X\n", "status_id": 3, "compiler_options": "-DX -O2"}
    # a flag that would name a file, load a plugin or read specs: refused
    for bad in ("-o /tmp/x", "-fplugin=/tmp/x.so", "-specs=/tmp/s", "-DX @/etc/passwd"):
        body = errors_422(daemon, {"language_id": C, "source_code": IFDEF,
                                   "compiler_options": bad})
        assert list(body) == ["compiler_options"], (bad, body)
    # submission.rb's words for an interpreted language
    assert errors_422(daemon, {"language_id": PY, "source_code": "print(1)",
                               "compiler_options": "-O2"}) == \
        {"compiler_options": ["setting compiler options is only allowed for compiled languages"]}
    assert list(errors_422(daemon, {"language_id": C, "source_code": IFDEF,
                                    "compiler_options": "-O2 " * 200})) == ["compiler_options"]


def test_command_line_arguments(daemon):
    src = "import sys\nprint(sys.argv[1:])\n"
    body = waited(daemon, {"language_id": PY, "source_code": src,
                           "command_line_arguments": "a b  c"},
                  "fields=stdout,command_line_arguments")
    assert body == {"stdout": "['a', 'b', 'c']\n", "command_line_arguments": "a b  c"}
    # Judge0 runs "run_cmd ARGS" with bash: quotes group words
    body = waited(daemon, {"language_id": PY, "source_code": src,
                           "command_line_arguments": "x 'b c' \"d e\" f\\ g"})
    assert body["stdout"] == "['x', 'b c', 'd e', 'f g']\n", body
    body = waited(daemon, {"language_id": C, "source_code": C_HEAD +
                           "int main(int c, char **v) { printf(\"%d %s\\n\", c, v[c-1]); }",
                           "command_line_arguments": "1 2 3"})
    assert body["stdout"] == "4 3\n"


# (program's stdout, expected_output, status): isolate_job.rb's strip,
# each line's trailing blanks and then the text's, on both sides
COMPARED = [
    ("a\nb\n", "a\nb\n", 3),
    ("a  \nb\t\n\n\n", "a\nb", 3),
    ("a\nb", "a  \nb  \n\n", 3),
    ("a\r\nb\r\n", "a\nb", 3),
    ("", "", 3),
    ("\n\n", "", 3),
    # "" is an expected output (nil is none): nothing, or blanks, to print
    ("x\n", "", 4),
    (" a\n", "a\n", 4),
    ("a\n\nb\n", "a\nb\n", 4),
    ("a\n", "A\n", 4),
    ("ab\n", "a b\n", 4),
]


def test_expected_output_compared_as_judge0(daemon):
    status, made = daemon.post("/submissions/batch", {"submissions": [
        {"language_id": PY, "source_code": "import sys\nsys.stdout.write(sys.stdin.read())",
         "stdin": out, "expected_output": want} for out, want, _ in COMPARED]})
    assert status == 201
    got = [status_of(finished(daemon, m["token"]))[0] for m in made]
    assert got == [c[2] for c in COMPARED]
    wa = finished(daemon, made[-1]["token"])
    assert status_of(wa) == (4, "Wrong Answer") and wa["stdout"] == "ab\n"


def test_cpu_time_limit(daemon):
    body = waited(daemon, {"language_id": PY, "source_code": "while True: pass",
                           "cpu_time_limit": 1},
                  "fields=status,message,exit_code,exit_signal,time,cpu_time_limit")
    assert body["status"] == {"id": 5, "description": "Time Limit Exceeded"}
    assert (body["message"], body["cpu_time_limit"]) == ("Time limit exceeded", "1.0")
    # killed: isolate's exitsig, and exit_code 0 (isolate_job.rb: exitcode || 0)
    assert (body["exit_code"], body["exit_signal"]) == (0, 9)
    assert float(body["time"]) >= 0.9
    # a fraction is kept as given (a decimal column)
    body = waited(daemon, {"language_id": PY, "source_code": "print(1)",
                           "cpu_time_limit": 0.25, "wall_time_limit": 1.75},
                  "fields=status_id,cpu_time_limit,wall_time_limit")
    assert body == {"status_id": 3, "cpu_time_limit": "0.25", "wall_time_limit": "1.75"}


def test_wall_time_limit(daemon):
    body = waited(daemon, {"language_id": BASH, "source_code": "sleep 5; echo late",
                           "wall_time_limit": 1}, "fields=status,stdout,time,wall_time")
    assert body["status"]["id"] == 5 and body["stdout"] is None
    # the wall clock cut it: it hardly used the CPU
    assert float(body["time"]) < 0.5 <= float(body["wall_time"]), body


def test_memory_limit(daemon):
    src = "x = bytearray(300 * 1024 * 1024)\nprint(len(x))\n"
    body = waited(daemon, {"language_id": PY, "source_code": src, "memory_limit": 64000},
                  "fields=status,stdout,memory_limit")
    # goboxd: 12, Runtime Error (Other), as isolate's cgroup OOM kill gives Judge0
    assert body["status"] == {"id": 12, "description": "Runtime Error (Other)"}, body
    assert body["stdout"] is None and body["memory_limit"] == 64000
    body = waited(daemon, {"language_id": PY, "source_code": src, "memory_limit": 512000},
                  "fields=status_id,stdout")
    assert body == {"status_id": 3, "stdout": "314572800\n"}


def test_stack_limit_and_per_process_flags_are_kept(daemon):
    body = waited(daemon, {"language_id": PY, "source_code": "print(7)", "stack_limit": 32000,
                           "enable_per_process_and_thread_time_limit": True,
                           "enable_per_process_and_thread_memory_limit": "true"}, "fields=*")
    assert (status_of(body)[0], body["stdout"], body["stack_limit"],
            body["enable_per_process_and_thread_time_limit"],
            body["enable_per_process_and_thread_memory_limit"]) == (3, "7\n", 32000, True, True)


def test_max_processes_and_or_threads(daemon):
    src = ("import threading, time\n"
           "ts = [threading.Thread(target=time.sleep, args=(0.2,)) for _ in range(8)]\n"
           "for t in ts: t.start()\n"
           "for t in ts: t.join()\n"
           "print('ok')\n")
    body = waited(daemon, {"language_id": PY, "source_code": src,
                           "max_processes_and_or_threads": 2},
                  "fields=status_id,stdout,stderr,max_processes_and_or_threads")
    assert (body["status_id"], body["stdout"], body["max_processes_and_or_threads"]) == \
        (11, None, 2), body
    assert "can't start new thread" in body["stderr"]
    body = waited(daemon, {"language_id": PY, "source_code": src}, "fields=status_id,stdout")
    assert body == {"status_id": 3, "stdout": "ok\n"}


BIG_FILE = C_HEAD + """int main(void) {
    static char b[1 << 16];
    FILE *f = fopen("big", "w");
    for (int i = 0; i < %d; i++)
        fwrite(b, 1, sizeof b, f);
    fclose(f);
    puts("written");
    return 0;
}
"""


def test_max_file_size(daemon):
    body = waited(daemon, {"language_id": C, "source_code": BIG_FILE % 100,
                           "max_file_size": 64},
                  "fields=status,exit_signal,stdout,max_file_size")
    assert body == {"status": {"id": 8, "description": "Runtime Error (SIGXFSZ)"},
                    "exit_signal": 25, "stdout": None, "max_file_size": 64}
    body = waited(daemon, {"language_id": C, "source_code": BIG_FILE % 16,
                           "max_file_size": 4096}, "fields=status_id,stdout")
    assert body == {"status_id": 3, "stdout": "written\n"}


def test_redirect_stderr_to_stdout(daemon):
    # a pause between the writes: their order is then the order in time
    # whichever way the two streams become one
    src = ("import sys, time\nprint('out', flush=True)\ntime.sleep(0.1)\n"
           "print('err', file=sys.stderr, flush=True)\ntime.sleep(0.1)\nprint('out2')\n")
    body = waited(daemon, {"language_id": PY, "source_code": src,
                           "redirect_stderr_to_stdout": True},
                  "fields=stdout,stderr,redirect_stderr_to_stdout")
    assert body == {"stdout": "out\nerr\nout2\n", "stderr": None,
                    "redirect_stderr_to_stdout": True}
    body = waited(daemon, {"language_id": PY, "source_code": src}, "fields=stdout,stderr")
    assert body == {"stdout": "out\nout2\n", "stderr": "err\n"}


def test_number_of_runs(daemon):
    body = waited(daemon, {"language_id": PY, "source_code": "print(input())", "stdin": "r",
                           "number_of_runs": 3, "expected_output": "r"},
                  "fields=status_id,stdout,number_of_runs,time,memory")
    assert (body["status_id"], body["stdout"], body["number_of_runs"]) == (3, "r\n", 3)
    assert float(body["time"]) >= 0 and body["memory"] > 0
    body = waited(daemon, {"language_id": PY, "source_code": "print(input())", "stdin": "r",
                           "number_of_runs": 3, "expected_output": "s"},
                  "fields=status_id,number_of_runs")
    assert body == {"status_id": 4, "number_of_runs": 3}


def test_enable_network_is_refused(daemon):
    assert errors_422(daemon, {"language_id": PY, "source_code": "print(1)",
                               "enable_network": True}) == \
        {"enable_network": ["enabling network is not allowed"]}
    body = waited(daemon, {"language_id": PY, "source_code": "print(1)",
                           "enable_network": False}, "fields=status_id,enable_network")
    assert body == {"status_id": 3, "enable_network": False}


# ---- additional_files --------------------------------------------------------


def test_additional_files_are_beside_the_source(daemon):
    files = zipped([("data.txt", b"from the zip\n"), ("helper.py", b"X = 42\n")])
    src = "import helper\nprint(open('data.txt').read().strip(), helper.X)\n"
    body = waited(daemon, {"language_id": PY, "source_code": src, "additional_files": files},
                  "fields=status_id,stdout,stderr,additional_files")
    assert (body["status_id"], body["stdout"], body["stderr"]) == (3, "from the zip 42\n", None)
    # shown as it was sent: the zip, base64-encoded
    assert unb64(body["additional_files"]) == unb64(files)
    # a header for C
    body = waited(daemon, {"language_id": C, "source_code": "#include \"answer.h\"\n" + C_HEAD +
                           "int main(void) { printf(\"%d\\n\", ANSWER); return 0; }\n",
                           "additional_files": zipped([("answer.h", b"#define ANSWER 7\n")])},
                  "fields=status_id,stdout,compile_output")
    assert (body["status_id"], body["stdout"]) == (3, "7\n"), body


def test_additional_files_in_directories_as_unzip_makes_them(daemon):
    # the SDK's filesystem example: a file at the top, one three levels down
    # named with "./" before it, and a directory entry of its own
    files = zipped([("my_file.txt", b"hello, world"), ("./dir1/dir2/dir3/my_file2.txt", b"two"),
                    ("dir1/", b"")])
    body = waited(daemon, {"language_id": BASH, "source_code": "find . -type f | sort; "
                           "cat dir1/dir2/dir3/my_file2.txt; stat -c %a dir1/dir2",
                           "additional_files": files}, "fields=status_id,stdout,stderr")
    assert body["status_id"] == 3, body
    lines = body["stdout"].split("\n")
    assert "./dir1/dir2/dir3/my_file2.txt" in lines and "./my_file.txt" in lines, body
    assert "two750" in body["stdout"], body
    # python imports a package from a directory
    files = zipped([("pkg/__init__.py", b""), ("pkg/mod.py", b"X = 5\n")])
    body = waited(daemon, {"language_id": PY, "source_code": "from pkg.mod import X\nprint(X)",
                           "additional_files": files}, "fields=status_id,stdout")
    assert (body["status_id"], body["stdout"]) == (3, "5\n"), body


def test_additional_files_refused(daemon):
    link = zipfile.ZipInfo("link")
    link.create_system = 3
    link.external_attr = 0o120777 << 16
    bad = {
        # 64 MiB of zeros in about 64 KiB
        "bomb": zipped([("bomb", b"\0" * (64 << 20))]),
        "up": zipped([("../x", b"evil")]),
        "absolute": zipped([("/etc/x", b"evil")]),
        "symlink": zipped([(link, b"/etc/passwd")]),
        "up inside": zipped([("a/../../x", b"evil")]),
        "a file where a directory is": zipped([("lib", b"x"), ("lib/y", b"y")]),
        "under the source": zipped([("solution.py/x", b"x")]),
        "too deep": zipped([("/".join("d" * 9), b"x")]),
        "not base64": "%%% not base64 %%%",
        "not a zip": b64(b"PK but not a zip at all"),
    }
    for why, files in bad.items():
        body = errors_422(daemon, {"language_id": PY, "source_code": "print(1)",
                                   "additional_files": files})
        assert list(body) == ["additional_files"] and body["additional_files"], (why, body)
    # the same in a batch: refused there, the rest taken
    status, made = daemon.post("/submissions/batch", {"submissions": [
        {"language_id": PY, "source_code": "print(1)", "additional_files": bad["up"]},
        {"language_id": PY, "source_code": "print(1)"}]})
    assert status == 201 and list(made[0]) == ["additional_files"] and "token" in made[1]


# ---- statuses programs reach -------------------------------------------------

# (language, source, status, exit_code, exit_signal, message)
RUNTIME = [
    (C, C_HEAD + "int main(void) { volatile int *p = 0; *p = 1; return 0; }", 7, 0, 11,
     "Caught fatal signal 11"),
    (C, C_HEAD + "int main(void) { volatile int a = 1, b = 0; return a / b; }", 9, 0, 8,
     "Caught fatal signal 8"),
    (C, C_HEAD + "int main(void) { abort(); }", 10, 0, 6, "Caught fatal signal 6"),
    (BASH, "echo partial; exit 3", 11, 3, None, "Exited with error status 3"),
    (BASH, "kill -9 $$", 12, 0, 9, "Caught fatal signal 9"),
    (C, C_HEAD + "int main(void) { raise(SIGUSR1); return 0; }", 12, 0, 10,
     "Caught fatal signal 10"),
]


@pytest.mark.parametrize("lang,src,sid,code,sig,message", RUNTIME,
                         ids=["sigsegv", "sigfpe", "sigabrt", "nzec", "sigkill", "sigusr1"])
def test_runtime_error_statuses(daemon, lang, src, sid, code, sig, message):
    body = waited(daemon, {"language_id": lang, "source_code": src},
                  "fields=status,exit_code,exit_signal,message,stdout")
    assert body["status"] == {"id": sid, "description": dict(STATUSES)[sid]}, body
    assert (body["exit_code"], body["exit_signal"], body["message"]) == (code, sig, message)
    if sid == 11:
        assert body["stdout"] == "partial\n"


def test_compilation_error(daemon):
    body = waited(daemon, {"language_id": CPP, "source_code": "int main() { return x; }"},
                  "fields=*")
    assert status_of(body) == (6, "Compilation Error")
    assert "error" in body["compile_output"] and "'x'" in body["compile_output"].replace(
        "\u2018", "'").replace("\u2019", "'"), body["compile_output"]
    # nothing ran (isolate_job.rb's compile failure)
    assert (body["stdout"], body["stderr"], body["time"], body["memory"], body["exit_code"],
            body["exit_signal"], body["message"]) == (None,) * 7
    ok = waited(daemon, {"language_id": CPP, "source_code":
                         "#include <iostream>\nint main() { std::cout << 6 * 7 << std::endl; }"})
    assert (status_of(ok)[0], ok["stdout"], ok["compile_output"]) == (3, "42\n", None)


def test_internal_error_when_the_server_can_no_longer_run_it(tmp_path):
    """13. A client alone cannot make the sandbox fail (that is the
    sandbox's whole job); what a client can meet is a submission that
    waited while the server changed under it: here its language is gone
    at the next start."""
    store = str(tmp_path / "store" / "subs.db")
    d = Daemon(languages=small(), workers=1, args=["--store", store])
    try:
        first = submit(d, {"language_id": BASH, "source_code": "sleep 1; echo first"})
        second = submit(d, {"language_id": PY, "source_code": "print('never')"})
        wait_until(lambda: d.get("/submissions/%s?fields=status_id" % second)[1] ==
                   {"status_id": 1} and d.get("/submissions/%s?fields=status_id" % first)[1] ==
                   {"status_id": 2}, "one running, one queued")
    finally:
        d.stop()
    d = Daemon(languages=languages_of("bash"), args=["--store", store])
    try:
        assert finished(d, first)["stdout"] == "first\n"
        body = finished(d, second, "fields=status,message,stdout")
        assert body["status"] == {"id": 13, "description": "Internal Error"}, body
        assert body["message"].startswith("no longer valid on this server"), body
        assert body["stdout"] is None
    finally:
        d.stop()


# ---- callbacks ---------------------------------------------------------------


class Receiver:
    """An HTTP server on 127.0.0.1 that records each request. mode: "ok"
    (204), "hang" (holds each request until released, then 204),
    "redirect" (307 to another URL)."""

    def __init__(self, mode="ok", location=None):
        self.requests = []
        self.release = threading.Event()
        rec = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_any(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else b""
                rec.requests.append((self.command, self.path, dict(self.headers), body))
                if mode == "hang":
                    rec.release.wait(60)
                if mode == "redirect":
                    self.send_response(307)
                    self.send_header("Location", location)
                else:
                    self.send_response(204)
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_PUT = do_POST = do_GET = do_any

            def log_message(self, *args):
                pass

        self.http = HttpReceiver(Handler)
        self.url = self.http.url

    def close(self):
        self.release.set()
        self.http.close()


def test_callback_gets_the_submission(daemon):
    r = Receiver()
    try:
        token = submit(daemon, {"language_id": PY, "source_code": "print('called')",
                                "callback_url": r.url + "/done?job=1"})
        wait_until(lambda: r.requests, "the callback")
        method, path, headers, raw = r.requests[0]
        assert (method, path) == ("PUT", "/done?job=1")
        assert headers.get("Content-Type", "").startswith("application/json")
        # the same on every try and from every node: a repeat can be told
        assert headers.get("Idempotency-Key") == token
        body = json.loads(raw)
        # isolate_job.rb: the default fields, base64_encoded: true
        assert set(body) == DEFAULT_FIELDS and body["token"] == token
        assert unb64(body["stdout"]) == b"called\n" and body["status"]["id"] == 3
        status, shown = daemon.get("/submissions/%s?fields=callback_url" % token)
        assert shown == {"callback_url": r.url + "/done?job=1"}
        assert len(r.requests) == 1
    finally:
        r.close()


def test_callback_for_a_waited_submission(daemon):
    """isolate_job.rb calls back after every run, wait=true's too."""
    r = Receiver()
    try:
        body = waited(daemon, {"language_id": BASH, "source_code": "echo waited",
                               "callback_url": r.url + "/w"})
        assert body["stdout"] == "waited\n"
        got = poll(lambda: r.requests, timeout=5)
        assert got, "no callback for a wait=true submission"
        assert json.loads(got[0][3])["token"] == body["token"]
        assert got[0][2].get("Idempotency-Key") == body["token"]
    finally:
        r.close()


def test_a_hanging_receiver_does_not_hold_up_submissions(daemon):
    hang = Receiver("hang")
    ok = Receiver()
    try:
        first = submit(daemon, {"language_id": BASH, "source_code": "echo 0",
                                "callback_url": hang.url + "/hang"})
        wait_until(lambda: hang.requests, "the hanging callback")
        tokens = [submit(daemon, {"language_id": BASH, "source_code": "echo %d" % i,
                                  "callback_url": ok.url + "/%d" % i}) for i in range(1, 7)]
        for i, t in enumerate(tokens, 1):
            assert finished(daemon, t)["stdout"] == "%d\n" % i
        # all done while the first callback's first try still hangs
        assert len(hang.requests) == 1
        assert finished(daemon, first)["stdout"] == "0\n"
        # answered, it lets those queued behind it go
        hang.release.set()
        wait_until(lambda: len(ok.requests) == 6, "the six callbacks", 30)
        assert sorted(json.loads(r[3])["token"] for r in ok.requests) == sorted(tokens)
        assert len(hang.requests) == 1
    finally:
        hang.close()
        ok.close()


def test_a_redirect_is_not_followed(daemon):
    target = Receiver()
    redirect = Receiver("redirect", location=target.url + "/elsewhere")
    try:
        token = submit(daemon, {"language_id": BASH, "source_code": "echo r",
                                "callback_url": redirect.url + "/r"})
        daemon.wait_log(lambda l: redirect.url in l.get("msg", "") and
                        "redirect" in l.get("msg", ""), "the redirect refused")
        assert redirect.requests and redirect.requests[0][:2] == ("PUT", "/r")
        assert target.requests == []
        assert finished(daemon, token)["stdout"] == "r\n"
    finally:
        redirect.close()
        target.close()


def test_local_callbacks_need_the_flag():
    r = Receiver()
    port = r.http.server.server_address[1]
    d = Daemon(languages=small())
    try:
        # the receiver's address, however it is spelled
        urls = ["http://%s:%d/x" % (host, port) for host in (
            "127.0.0.1", "localhost", "127.1", "0x7f000001", "0.0.0.0", "[::ffff:127.0.0.1]")]
        tokens = [submit(d, {"language_id": BASH, "source_code": "echo local",
                             "callback_url": url}) for url in urls]
        for t in tokens:
            assert finished(d, t)["stdout"] == "local\n"
        for url in urls:
            d.wait_log(lambda l: url in l.get("msg", "") and "refused: " in l.get("msg", ""),
                       "the callback to %s refused" % url)
        assert r.requests == []
    finally:
        d.stop()
        r.close()


def test_callback_url_must_be_http(daemon):
    for url in ("ftp://127.0.0.1/x", "file:///etc/passwd", "not a url", "http://"):
        body = errors_422(daemon, {"language_id": PY, "source_code": "print(1)",
                                   "callback_url": url})
        assert list(body) == ["callback_url"], (url, body)


# ---- a restart loses nothing ------------------------------------------------


def restart_case(i):
    """Submission i: its own stdin and its own line in the source; every
    seventh sleeps, so that a restart finds some running, some queued."""
    nap = "sleep 0.4; " if i % 7 == 0 else ""
    if i % 2:
        sub = {"language_id": BASH, "source_code": "%sread x; echo \"$x-%d\"" % (nap, i)}
    else:
        sub = {"language_id": PY, "source_code": "%sprint(input() + '-%d')" % (
            "import time; time.sleep(0.4); " if nap else "", i)}
    sub.update(stdin="in%d" % i, expected_output="in%d-%d" % (i, i))
    return sub, "in%d-%d\n" % (i, i)


def batch_states(d, tokens):
    out = []
    for k in range(0, len(tokens), 20):
        status, body = d.get("/submissions/batch?fields=token,status_id,stdout&tokens=" +
                             ",".join(tokens[k:k + 20]))
        assert status == 200, body
        out += body["submissions"]
    return out


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["kill", "term"])
def test_a_restart_loses_no_submission(tmp_path, sig):
    store = str(tmp_path / "store" / "subs.db")
    cases = [restart_case(i) for i in range(100)]
    d = Daemon(languages=small(), args=["--store", store])
    try:
        tokens = [submit(d, sub) for sub, _ in cases]
        assert len(set(tokens)) == 100

        def midway():
            ids = [s["status_id"] for s in batch_states(d, tokens)]
            return ids if ids.count(3) >= 10 and 1 in ids and 2 in ids else None
        before = wait_until(midway, "some done, some waiting", 30)
        workers = d.worker_pids()
        if sig == signal.SIGKILL:
            # the master alone: its workers die with it (PDEATHSIG)
            d.proc.send_signal(sig)
            d.proc.wait()
            wait_until(lambda: not any(alive(p) for p in workers), "the workers gone")
    finally:
        d.stop()
    d = Daemon(languages=small(), args=["--store", store])
    try:
        again = d.wait_log(lambda l: "queued again" in l.get("msg", ""),
                           "the store's submissions queued again")
        assert 1 <= int(again["msg"].split()[0]) <= 100 - before.count(3), again

        def all_done():
            got = batch_states(d, tokens)
            return got if all(s and s["status_id"] > 2 for s in got) else None
        got = wait_until(all_done, "all 100 finished", 90)
        assert [(s["token"], s["status_id"], s["stdout"]) for s in got] == \
            [(t, 3, want) for t, (_, want) in zip(tokens, cases)]
    finally:
        d.stop()


def test_finished_submissions_go_after_the_ttl():
    """--submission-ttl: a finished submission answers for its token until
    then, and 404 after; worker 0 looks as often as the TTL lasts."""
    d = Daemon(languages=small(), args=["--submission-ttl", "1s"])
    try:
        status, body = d.post("/submissions?wait=true", {"language_id": BASH,
                                                          "source_code": "echo kept"})
        assert status == 201 and body["stdout"] == "kept\n"
        token = body["token"]
        assert d.get("/submissions/" + token)[0] == 200
        wait_until(lambda: d.get("/submissions/" + token)[0] == 404, "the expiry", 10)
        d.wait_log(lambda l: "expired submissions removed" in l.get("msg", ""), "its log line")
    finally:
        d.stop()


def test_pipelined_posts_and_a_burst_are_all_taken_in_order(daemon):
    """Pipelined POSTs get their tokens in order, each submission its own
    result, and a burst from many clients is taken whole."""
    bodies = [json.dumps({"language_id": BASH, "source_code": "echo %d" % i}).encode()
              for i in range(3)]
    raw = b"".join(b"POST /submissions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                   b"Content-Length: %d\r\n\r\n%s" % (len(b), b) for b in bodies)
    with socket.create_connection(("127.0.0.1", daemon.port), timeout=30) as s:
        s.sendall(raw)
        f = s.makefile("rb")
        tokens = []
        for _ in bodies:
            status = f.readline()
            assert status.startswith(b"HTTP/1.1 201"), status
            length = 0
            for line in iter(f.readline, b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            tokens.append(json.loads(f.read(length))["token"])
    assert len(set(tokens)) == 3
    for i, t in enumerate(tokens):
        assert finished(daemon, t)["stdout"] == "%d\n" % i

    got, lock = [], threading.Lock()

    def client(k):
        for i in range(10):
            status, body = daemon.post("/submissions", {"language_id": BASH,
                                                         "source_code": "echo %d-%d" % (k, i)})
            with lock:
                got.append((status, body.get("token"), "%d-%d\n" % (k, i)))
    threads = [threading.Thread(target=client, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [g[0] for g in got] == [201] * 60
    assert len({g[1] for g in got}) == 60
    for _, token, out in got:
        assert finished(daemon, token, timeout=60)["stdout"] == out


def test_a_store_change_waits_for_a_restart():
    """The master claimed its store (and a fleet's node leases from its
    own): a reload that names another keeps the first, and says so."""
    tmp = tempfile.mkdtemp(prefix="goboxd-store-")
    first, other = os.path.join(tmp, "a.db"), os.path.join(tmp, "b.db")
    conf = os.path.join(tmp, "goboxd.yaml")
    with open(conf, "w") as f:
        f.write("store: %s\n" % first)
    d = Daemon(languages=small(), args=["--config", conf], workers=1, own_store=False)
    try:
        token = submit(d, {"language_id": PY, "source_code": "print(1)"})
        assert finished(d, token)["status"]["id"] == 3
        with open(conf, "w") as f:
            f.write("store: %s\n" % other)
        d.proc.send_signal(signal.SIGHUP)
        d.wait_log(lambda l: l.get("msg") == "store changes take effect on restart only",
                   "the store change refused")
        d.wait_log(lambda l: l.get("msg", "").startswith("reloaded: generation 2"),
                   "the reload")
        # the new generation's workers answer from the first store
        for _ in range(4):
            status, body = d.get("/submissions/%s" % token)
            assert status == 200 and body["status"]["id"] == 3
        token = submit(d, {"language_id": PY, "source_code": "print(2)"})
        assert finished(d, token)["status"]["id"] == 3
        assert not os.path.exists(other)
    finally:
        d.stop()
        shutil.rmtree(tmp)


# ---- one daemon per store ------------------------------------------------------


def test_a_second_daemon_on_the_same_store_refuses_to_start(tmp_path):
    """A SQLite store is one daemon's: a second goboxd started on it by
    mistake would run, and expire, the first one's submissions. It says
    so and stops; the first goes on with everything it had."""
    store = str(tmp_path / "shared.db")
    first = Daemon(languages=small(), workers=1, args=["--store", store], own_store=False)
    try:
        token = submit(first, {"language_id": PY, "source_code": "print(7)"})
        with pytest.raises(RuntimeError) as failed:
            Daemon(languages=small(), workers=1,
                   args=["--store", store, "--submission-ttl", "1s"], own_store=False)
        assert "another goboxd serves this store" in str(failed.value), failed.value
        assert store in str(failed.value), failed.value
        assert finished(first, token)["stdout"] == "7\n"
        time.sleep(2)
        status, body = first.get("/submissions/%s" % token)
        assert status == 200 and body["stdout"] == "7\n", "the second one expired nothing"
    finally:
        first.stop()


def test_without_its_store_judge0_is_refused_and_the_rest_serves(tmp_path):
    """A store that does not open (here: under a file) leaves goboxd
    without one: every API whose client waits is served, Judge0's
    submissions get 503 with the reason, and a waited-for one is not run
    (it could never answer for a token)."""
    blocker = tmp_path / "file"
    blocker.write_text("")
    d = Daemon(languages=small(), workers=1, args=["--store", str(blocker / "s.db")],
               own_store=False)
    try:
        for query in ("", "?wait=true"):
            status, body = d.post("/submissions" + query,
                                  {"language_id": PY, "source_code": "print(1)"})
            assert status == 503, (query, body)
            assert body["error"].startswith("the submission store is unavailable: "), body
            assert "token" not in body
        status, body = d.post("/run", {"language": "py3", "source": "print(1)",
                                       "tests": [{"stdin": ""}]})
        assert status == 200 and body["status"] == "accepted", body
        assert d.stats()["jobs_total"] == 1, "the waited-for submission never ran"
    finally:
        d.stop()
