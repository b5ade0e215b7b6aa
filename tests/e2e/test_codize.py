"""The Codize wire format: validation errors, sizes, runtimes, flags, metrics.

Codize's own handler (codize-dev/sandbox) is the reference for the words
and the numbers; the cases here are written from its behaviour.
"""
import base64
import json

import pytest

from conftest import Daemon

SEVEN = '"bash", "go", "node", "node-typescript", "python", "ruby", "rust"'


@pytest.fixture(scope="module")
def daemon():
    d = Daemon(args=["--max-files", "3", "--max-file-size", "1k", "--max-stdin-size", "2k",
                     "--max-body-size", "64k", "--output-limit", "4k", "--metrics",
                     "--run-timeout", "2s", "--max-concurrency", "1",
                     "--max-queue-size", "5"])
    yield d
    d.stop()


@pytest.fixture(scope="module")
def default_daemon():
    """Codize's defaults: 10 files, 256 KiB a file, 1 MiB stdin, 5 MiB body."""
    d = Daemon(args=["--run-timeout", "5s"])
    yield d
    d.stop()


def validation_errors(status, body):
    """The field list of a VALIDATION_ERROR, checked at both levels."""
    assert status == 400, body
    assert body["code"] == "VALIDATION_ERROR", body
    assert body["message"] == "request validation failed"
    assert body["error"] == {k: body[k] for k in ("code", "message", "errors")}
    return [(e["path"], e["message"]) for e in body["errors"]]


def one_error(status, body, path, message):
    assert validation_errors(status, body) == [(path, message)]


def py(src="print(1)", name="main.py"):
    return {"name": name, "content": src}


def test_every_failing_field_is_listed(daemon):
    status, body = daemon.post("/v1/run", {
        "runtime": "python",
        "files": [{"name": "../evil.py", "content": "x"},
                  {"name": "ok.py", "content": "!!!", "base64_encoded": True},
                  {"name": "ok.py", "content": "dup"}],
        "stdin": {"content": "x" * 3000}})
    assert validation_errors(status, body) == [
        (["stdin", "content"], "stdin too large (max: 2048 bytes)"),
        (["files", 0, "name"], "contains invalid characters"),
        (["files", 1, "content"], "invalid base64"),
        (["files", 2, "name"], "duplicate file name"),
    ]


def test_runtime_rules(daemon):
    status, body = daemon.post("/v1/run", {"files": [py()]})
    one_error(status, body, ["runtime"], "required")
    status, body = daemon.post("/v1/run", {"runtime": "", "files": [py()]})
    one_error(status, body, ["runtime"], "must not be empty")
    # goboxd languages that declare no Codize runtime are not served here,
    # whatever their id or alias
    for rt in ("java", "py3", "cobol-60"):
        status, body = daemon.post("/v1/run", {"runtime": rt, "files": [py()]})
        one_error(status, body, ["runtime"], "must be one of " + SEVEN)


def test_wrong_types_are_an_invalid_body(daemon):
    for req in ({"runtime": "python", "files": "main.py"},
                {"runtime": 3, "files": [py()]},
                {"runtime": "python", "files": [py()], "stdin": "abc"},
                {"runtime": "python", "files": [{"name": "a.py", "content": "",
                                                 "base64_encoded": "yes"}]}):
        status, body = daemon.post("/v1/run", req)
        assert status == 400, req
        assert body["code"] == "INVALID_REQUEST_BODY" and body["message"] == "invalid request body"
        assert "errors" not in body
        assert body["error"] == {"code": "INVALID_REQUEST_BODY",
                                 "message": "invalid request body"}
    status, body = daemon.post("/v1/run", b"[1,2")
    assert status == 400 and body["code"] == "INVALID_REQUEST_BODY"


def test_unknown_fields_and_nulls_as_codize(daemon):
    status, body = daemon.post("/v1/run", {"runtime": "python", "files": [
        {"name": "main.py", "content": "print(input())", "mode": "0644",
         "base64_encoded": None}], "stdin": {"content": "hi\n", "type": "plain"},
        "options": {"x": 1}})
    assert status == 200, body
    assert base64.b64decode(body["run"]["stdout"]) == b"hi\n"
    status, body = daemon.post("/v1/run", {"runtime": "python", "files": [py()],
                                           "stdin": {}})
    one_error(status, body, ["stdin", "content"], "required")


def test_too_many_and_too_big_files(daemon):
    files = [py(name="f%d.py" % i) for i in range(4)]
    status, body = daemon.post("/v1/run", {"runtime": "python", "files": files})
    one_error(status, body, ["files"], "too many files (max: 3)")
    status, body = daemon.post("/v1/run", {"runtime": "python", "files": []})
    one_error(status, body, ["files"], "must not be empty")
    status, body = daemon.post("/v1/run", {"runtime": "python",
                                           "files": [py(), py("#" * 1025, "big.py")]})
    one_error(status, body, ["files", 1, "content"], "file too large (max: 1024 bytes)")


def test_stdin_cap_is_exact(daemon):
    wc = {"name": "m.sh", "content": "wc -c\n"}
    status, body = daemon.post("/v1/run", {"runtime": "bash", "files": [wc],
                                           "stdin": {"content": "A" * 2048}})
    assert status == 200 and base64.b64decode(body["run"]["stdout"]) == b"2048\n", body
    status, body = daemon.post("/v1/run", {"runtime": "bash", "files": [wc],
                                           "stdin": {"content": "A" * 2049}})
    one_error(status, body, ["stdin", "content"], "stdin too large (max: 2048 bytes)")


def test_oversize_body_is_413(daemon):
    status, body = daemon.post("/v1/run", {"runtime": "python",
                                           "files": [py("#" * 70000)]})
    assert status == 413
    assert body["code"] == "REQUEST_BODY_TOO_LARGE"
    assert body["message"] == "request body too large"
    assert body["error"]["code"] == "REQUEST_BODY_TOO_LARGE"
    # /run keeps its own cap and its own error format
    status, body = daemon.post("/run", {"language": "py3", "source": "#" * 70000,
                                        "tests": [{}]})
    assert status == 200, body


@pytest.mark.parametrize("runtime,entry,refused", [
    ("go", "main.go", ["go.mod", "go.sum", "main"]),
    ("rust", "main.rs", ["main"]),
    ("node", "index.js", ["package.json", "package-lock.json"]),
    ("node-typescript", "index.ts", ["package.json", "package-lock.json"]),
    ("ruby", "main.rb", ["Gemfile", "Gemfile.lock"]),
])
def test_files_refused_per_runtime(daemon, runtime, entry, refused):
    for name in refused:
        status, body = daemon.post("/v1/run", {"runtime": runtime, "files": [
            {"name": entry, "content": ""}, {"name": name, "content": ""}]})
        one_error(status, body, ["files", 1, "name"], "not allowed for this runtime")
        status, body = daemon.post("/v1/run", {"runtime": runtime, "files": [
            {"name": name, "content": ""}]})
        one_error(status, body, ["files", 0, "name"], "not allowed for this runtime")


def test_refused_names_are_fine_elsewhere(daemon):
    status, body = daemon.post("/v1/run", {"runtime": "python", "files": [
        py("print(open('go.mod').read())"), {"name": "go.mod", "content": "x"},
        {"name": "package.json", "content": "{}"}]})
    assert status == 200, body
    assert base64.b64decode(body["run"]["stdout"]) == b"x\n"


def test_output_limit_leaves_no_output(daemon):
    src = "import sys\nfor i in range(100):\n    sys.stdout.write('o' * 50)\n    sys.stderr.write('e' * 50)\n"
    status, body = daemon.post("/v1/run", {"runtime": "python",
                                           "files": [{"name": "m.py", "content": src}]})
    assert status == 200
    assert body["run"] == dict(body["run"], status="OUTPUT_LIMIT_EXCEEDED", exit_code=137,
                               signal=None, stdout="", stderr="", output="")
    # under the cap nothing is taken away
    src = "import sys\nsys.stdout.write('o' * 2000)\nsys.stderr.write('e' * 2000)\n"
    status, body = daemon.post("/v1/run", {"runtime": "python",
                                           "files": [{"name": "m.py", "content": src}]})
    assert body["run"]["status"] == "OK"
    assert len(base64.b64decode(body["run"]["output"])) == 4000


def test_wrong_method_in_codize_words(daemon):
    status, body, headers = daemon.request("GET", "/v1/run")
    assert status == 405 and headers.get("Allow") == "POST"
    assert body["code"] == "METHOD_NOT_ALLOWED"
    assert body["message"] == "the request method is not allowed for this resource"
    status, body, _ = daemon.request("GET", "/run")
    assert status == 405 and body == {"error": {"code": "method_not_allowed",
                                                "message": "use POST"}}


def test_run_timeout_flag(daemon):
    status, body = daemon.post("/v1/run", {"runtime": "python",
                                           "files": [{"name": "m.py", "content": "import time\ntime.sleep(10)\n"}]})
    assert status == 200
    assert body["run"]["status"] == "TIMEOUT"
    assert body["run"]["exit_code"] == 137 and body["run"]["signal"] == "SIGKILL"
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


def test_codize_default_limits(default_daemon):
    d = default_daemon
    status, info = d.get("/info")
    lim = info["limits"]
    assert (lim["max_files"], lim["max_file_bytes"], lim["max_stdin_bytes"],
            lim["codize_max_body_bytes"]) == (10, 262144, 1048576, 5242880)
    ten = [{"name": "f%02d.js" % i, "content": ""} for i in range(1, 11)]
    ten[0]["content"] = "console.log('ok')"
    status, body = d.post("/v1/run", {"runtime": "node", "files": ten})
    assert status == 200 and base64.b64decode(body["run"]["stdout"]) == b"ok\n", body
    status, body = d.post("/v1/run", {"runtime": "node", "files": ten + [
        {"name": "f11.js", "content": ""}]})
    one_error(status, body, ["files"], "too many files (max: 10)")
    exact = [{"name": "index.js", "content": ""}, {"name": "p.bin", "content": "A" * 262144}]
    status, body = d.post("/v1/run", {"runtime": "node", "files": exact})
    assert status == 200 and body["run"]["status"] == "OK", body
    exact[1]["content"] += "A"
    status, body = d.post("/v1/run", {"runtime": "node", "files": exact})
    one_error(status, body, ["files", 1, "content"], "file too large (max: 262144 bytes)")


def test_codize_default_stdin_and_names(default_daemon):
    d = default_daemon
    wc = [{"name": "main.sh", "content": "wc -c\n"}]
    status, body = d.post("/v1/run", {"runtime": "bash", "files": wc,
                                      "stdin": {"content": "A" * 1048576}})
    assert status == 200 and base64.b64decode(body["run"]["stdout"]) == b"1048576\n", body
    status, body = d.post("/v1/run", {"runtime": "node", "files": [
        {"name": "index.js", "content": ""}], "stdin": {"content": "A" * 1048577}})
    one_error(status, body, ["stdin", "content"], "stdin too large (max: 1048576 bytes)")
    name = "a" * 252 + ".js"
    status, body = d.post("/v1/run", {"runtime": "node", "files": [
        {"name": name, "content": "console.log(require('path').basename(__filename).length)"}]})
    assert status == 200 and base64.b64decode(body["run"]["stdout"]) == b"255\n", body
    status, body = d.post("/v1/run", {"runtime": "node", "files": [
        {"name": "a" + name, "content": ""}]})
    one_error(status, body, ["files", 0, "name"], "file name too long (max: 255 bytes)")
    for bad, why in ((".", "not allowed"), ("..", "not allowed"), ("", "must not be empty"),
                     ("-x.js", "must not start with '-'")):
        status, body = d.post("/v1/run", {"runtime": "node", "files": [
            {"name": bad, "content": ""}]})
        one_error(status, body, ["files", 0, "name"], why)


def test_codize_default_body_cap(default_daemon):
    status, body = default_daemon.post("/v1/run", {"runtime": "node", "files": [
        {"name": "index.js", "content": ""}, {"name": "p.bin", "content": "A" * 5242880}]})
    assert status == 413, json.dumps(body)[:300]
    assert body["code"] == "REQUEST_BODY_TOO_LARGE"


def test_exit_137_is_an_exit_code(daemon):
    status, body = daemon.post("/v1/run", {"runtime": "bash", "files": [
        {"name": "main.sh", "content": "exit 137\n"}]})
    assert status == 200
    assert (body["run"]["status"], body["run"]["exit_code"], body["run"]["signal"]) == \
        ("OK", 137, None), body


def test_traces_name_the_sandbox_path(daemon):
    status, body = daemon.post("/v1/run", {"runtime": "ruby", "files": [
        {"name": "main.rb", "content": "raise 'boom'\n"}]})
    assert status == 200
    assert base64.b64decode(body["run"]["stderr"]).startswith(b"/sandbox/main.rb:1:"), body
