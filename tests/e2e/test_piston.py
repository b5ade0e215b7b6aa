"""Piston's API v2: POST /api/v2/execute and GET /api/v2/runtimes.

Piston's own server (engineer-man/piston, api/src/api/v2.js and job.js)
is the reference for the words, the fields and the statuses; the cases
here are written from its source. The last test drives the daemon with
the npm package piston-client, a client nobody here wrote.

piston-client comes from npm into tests/e2e/.npm (ignored by git):
    npm install --prefix tests/e2e/.npm --no-save --no-fund --no-audit piston-client@1.0.2
"""
import base64
import json
import os
import subprocess

import pytest
import yaml

from conftest import Daemon, LANGUAGES, budget, dump, small

HERE = os.path.dirname(os.path.abspath(__file__))
NODE = "/usr/bin/node"
PISTON_CLIENT = os.path.join(HERE, ".npm", "node_modules", "piston-client")

# The caps the daemon below runs with, in Piston's units (ms, bytes).
MAX_WALL_MS = 20000
MAX_CPU_MS = 15000
MAX_MEMORY = 2 * 1024 ** 3


@pytest.fixture(scope="module")
def daemon():
    d = Daemon(languages=small(), args=[
        "--max-files", "3", "--max-file-size", "2k", "--max-source-size", "4k",
        "--max-test-stdin-size", "2k", "--max-run-body-size", "64k",
        "--max-wall-time", "%dms" % MAX_WALL_MS, "--max-cpu-time", "%dms" % MAX_CPU_MS,
        "--max-memory", "2G"])
    yield d
    d.stop()


def piston_names(lang_id):
    """The Piston block of languages/<id>.yaml: what the daemon must serve."""
    with open(os.path.join(LANGUAGES, lang_id + ".yaml")) as f:
        return yaml.safe_load(f)["piston"]


def execute(daemon, body):
    return daemon.post("/api/v2/execute", body)


def run_ok(daemon, body):
    status, answer = execute(daemon, body)
    assert status == 200, dump(answer)
    return answer


def py(src, **extra):
    body = {"language": "python", "version": "3.11.2", "files": [{"content": src}]}
    body.update(extra)
    return body


def c(src, **extra):
    body = {"language": "c", "version": "*", "files": [{"name": "main.c", "content": src}]}
    body.update(extra)
    return body


def refused(daemon, body, message, status=400):
    code, answer = execute(daemon, body)
    assert (code, answer) == (status, {"message": message}), dump(answer)


# ---- GET /api/v2/runtimes ----

def test_runtimes_list_every_piston_language(daemon):
    status, body = daemon.get("/api/v2/runtimes")
    assert status == 200, body
    want = []
    for lang_id in ("bash", "c", "cpp", "py3"):
        p = piston_names(lang_id)
        want.append({"language": p["runtime"], "version": p["version"],
                      "aliases": p.get("aliases", [])})
    key = lambda r: r["language"]
    assert sorted(body, key=key) == sorted(want, key=key)


def test_execute_takes_post_only(daemon):
    status, body, headers = daemon.request("GET", "/api/v2/execute")
    assert status == 405 and headers.get("Allow") == "POST"
    assert body == {"message": "Method not allowed"}


# ---- the answer ----

def test_interpreted_runtime_has_no_compile_stage(daemon):
    body = run_ok(daemon, py("print('hello')"))
    assert "compile" not in body
    assert (body["language"], body["version"]) == ("python", "3.11.2")
    run = body["run"]
    assert {k: run[k] for k in ("stdout", "stderr", "output", "code", "signal", "status",
                                "message")} == {
        "stdout": "hello\n", "stderr": "", "output": "hello\n", "code": 0, "signal": None,
        "status": None, "message": None}
    assert run["memory"] > 0 and run["wall_time"] > 0 and run["cpu_time"] >= 0


def test_compiled_runtime_answers_both_stages(daemon):
    body = run_ok(daemon, c('#include <stdio.h>\nint main(void){puts("built");return 0;}\n'))
    assert (body["language"], body["version"]) == ("c", piston_names("c")["version"])
    assert body["compile"]["code"] == 0 and body["compile"]["status"] is None
    assert body["run"]["stdout"] == "built\n" and body["run"]["code"] == 0


def test_compile_error_is_answered_as_run_too(daemon):
    body = run_ok(daemon, c("int main(void) { return nope; }\n"))
    comp = body["compile"]
    assert comp["code"] == 1 and comp["signal"] is None
    assert (comp["status"], comp["message"]) == ("RE", "Exited with error status 1")
    assert "nope" in comp["stderr"] and "nope" in comp["output"]
    # v2.js: "Backward compatibility when the run stage is not started"
    assert body["run"] == comp


def test_stdout_and_stderr_interleave_in_output(daemon):
    # two pipes: what is written at once may be read in either order
    src = ("import sys, time\nprint('a', flush=True)\ntime.sleep(0.2)\n"
           "print('b', file=sys.stderr, flush=True)\ntime.sleep(0.2)\nprint('c', flush=True)\n")
    run = run_ok(daemon, py(src))["run"]
    assert (run["stdout"], run["stderr"], run["output"]) == ("a\nc\n", "b\n", "a\nb\nc\n")


def test_exit_code(daemon):
    run = run_ok(daemon, py("import sys\nsys.exit(3)"))["run"]
    assert (run["code"], run["signal"], run["status"], run["message"]) == (
        3, None, "RE", "Exited with error status 3")


def test_death_by_signal(daemon):
    body = run_ok(daemon, c("int main(void) { *(volatile int *)0 = 1; return 0; }\n"))
    run = body["run"]
    assert (run["code"], run["signal"], run["status"], run["message"]) == (
        None, "SIGSEGV", "SG", "Caught fatal signal 11")
    assert body["compile"]["code"] == 0


def test_wall_timeout(daemon):
    run = run_ok(daemon, py("import time\ntime.sleep(30)", run_timeout=1000))["run"]
    assert (run["code"], run["signal"], run["status"], run["message"]) == (
        None, "SIGKILL", "TO", "Time limit exceeded (wall clock)")
    # the request's second, not python's own 9 s
    assert run["wall_time"] < 8000


def test_cpu_timeout(daemon):
    run = run_ok(daemon, py("while True: pass", run_cpu_time=500))["run"]
    assert (run["code"], run["signal"], run["status"], run["message"]) == (
        None, "SIGKILL", "TO", "Time limit exceeded")


def test_compile_timeout_stops_the_build(daemon):
    body = run_ok(daemon, c("int main(void) { return 0; }\n", compile_timeout=1))
    assert body["compile"]["status"] == "TO" and body["compile"]["signal"] == "SIGKILL"
    assert body["run"] == body["compile"]


def test_memory_limit_kills(daemon):
    src = "b = b'x' * (300 * 1024 * 1024)\nprint(len(b))"
    run = run_ok(daemon, py(src, run_memory_limit=64 * 1000 * 1000))["run"]
    assert (run["code"], run["signal"], run["status"]) == (None, "SIGKILL", "SG"), dump(run)
    # -1, what Piston's clients send for "no limit": the server's maximum
    run = run_ok(daemon, py(src, run_memory_limit=-1, compile_memory_limit=-1))["run"]
    assert run["stdout"] == "%d\n" % (300 * 1024 * 1024) and run["code"] == 0


@pytest.mark.parametrize("stream,status", [("stdout", "OL"), ("stderr", "EL")])
def test_output_caps(daemon, stream, status):
    src = "import sys\nfor i in range(4096):\n    sys.%s.write('x' * 1024)\n" % stream
    run = run_ok(daemon, py(src))["run"]
    assert (run["code"], run["signal"], run["status"], run["message"]) == (
        None, "SIGKILL", status, "%s length exceeded" % stream)
    # what fit under py3's 1 MiB cap, as Piston keeps it: no marker of goboxd's
    kept = run[stream]
    assert set(kept) == {"x"} and 0 < len(kept) <= 1024 * 1024
    assert run["output"] == kept


# ---- the request's fields ----

@pytest.mark.parametrize("stdin,seen", [
    ("abc", "abc\n"),          # Piston adds the newline a stdin lacks
    ("abc\n", "abc\n"),
    ("two\nlines", "two\nlines\n"),
    (None, "\n"),              # even to an empty one
])
def test_stdin(daemon, stdin, seen):
    body = py("import sys\nsys.stdout.write(repr(sys.stdin.read()))")
    if stdin is not None:
        body["stdin"] = stdin
    assert run_ok(daemon, body)["run"]["stdout"] == repr(seen)


def test_args_are_the_programs_own(daemon):
    args = ["a b", "", "--flag", "-fplugin=evil.so", "\u00fc"]
    run = run_ok(daemon, py("import sys\nprint(repr(sys.argv[1:]))", args=args))["run"]
    assert run["stdout"] == repr(args) + "\n"
    # to a compiled program too: arguments, not compiler flags (no allow-list)
    src = ('#include <stdio.h>\nint main(int c, char **v)'
           '{for(int i=1;i<c;i++)printf("[%s]",v[i]);return 0;}\n')
    run = run_ok(daemon, c(src, args=["-O3", "--specs=x", "@file"]))["run"]
    assert run["stdout"] == "[-O3][--specs=x][@file]"


def show_files(*names):
    """A python program that prints each file's bytes."""
    return "for n in %r:\n    print(n, open(n, 'rb').read())\n" % (names,)


def test_files_encodings_and_names(daemon):
    files = [
        {"name": "data.bin", "content": base64.b64encode(b"\x00\x01b64").decode(),
         "encoding": "base64"},
        # the first utf8 file is the entry, wherever it is
        {"name": "main.py", "content": show_files("data.bin", "raw.hex", "file3.code")},
        {"name": "raw.hex", "content": b"\xffhex".hex(), "encoding": "hex"},
        # no name: Piston's file<index>.code
        {"content": "no name", "encoding": "utf8"}]
    body = {"language": "py", "version": "3", "files": files}
    refused(daemon, body, "files cannot exceed the configured limit of 3 files")
    body = {"language": "py", "version": "3", "files": files[:3]}
    files[1]["content"] = show_files("data.bin", "raw.hex")
    assert run_ok(daemon, body)["run"]["stdout"] == (
        "data.bin b'\\x00\\x01b64'\nraw.hex b'\\xffhex'\n")
    body["files"] = [files[1], files[3]]
    files[1]["content"] = show_files("file1.code")
    assert run_ok(daemon, body)["run"]["stdout"] == "file1.code b'no name'\n"


@pytest.mark.parametrize("encoding,content,data", [
    # Node's decoders, which never refuse: hex up to the first bad pair,
    # base64 from either alphabet, without padding, skipping other bytes
    ("hex", "ffzz41", b"\xff"),
    ("hex", "4142434", b"ABC"),
    ("base64", "-_-_", b"\xfb\xff\xbf"),
    ("base64", "aGV sbG8", b"hello"),
    ("base64", "aGk=aGk=", b"hi"),
    # an encoding Piston does not know is utf8
    ("latin1", "plain", b"plain"),
])
def test_lenient_decoding(daemon, encoding, content, data):
    body = py(show_files("f"))
    body["files"].append({"name": "f", "content": content, "encoding": encoding})
    assert run_ok(daemon, body)["run"]["stdout"] == "f %r\n" % data


def test_files_keep_their_names(daemon):
    """job.js writes each file under its own name, an unnamed one as
    file<index>.code, and runs the entry by its name."""
    show = "import os\nprint(os.path.basename(__file__), sorted(os.listdir('.')))"
    run = run_ok(daemon, {"language": "python", "version": "*", "files": [
        {"name": "main.py", "content": show}, {"name": "solution.py", "content": ""}]})["run"]
    assert run["stdout"] == "main.py ['main.py', 'solution.py']\n", dump(run)
    run = run_ok(daemon, py(show))["run"]
    assert run["stdout"] == "file0.code ['file0.code']\n", dump(run)
    # the program the build writes keeps its name: a file may not take it
    # (a utf8 one would be built, as solution.c, as Piston's gcc renames it)
    refused(daemon, c("", files=[{"content": "int main(void){return 0;}"},
                                 {"name": "solution", "content": "", "encoding": "hex"}]),
            "files[1].name 'solution' is the name of the program this runtime builds")


@pytest.mark.parametrize("files,stdout", [
    # a generated name that a given one took: the later file is written over
    # the earlier, as job.js writes them in order
    ([{"name": "main.py", "content": "print(open('file2.code').read())"},
      {"name": "file2.code", "content": "given"}, {"content": "generated"}], "generated\n"),
    # the entry's own name: it runs what was written last under it
    ([{"name": "file1.code", "content": "print('first')"}, {"content": "print('second')"}],
     "second\n"),
    ([{"name": "a.py", "content": "print(open('d').read())"},
      {"name": "d", "content": "one"}, {"name": "d", "content": "two"}], "two\n"),
])
def test_a_name_given_twice_is_written_twice(daemon, files, stdout):
    body = {"language": "python", "version": "*", "files": files}
    assert run_ok(daemon, body)["run"]["stdout"] == stdout


def test_files_in_directories(daemon):
    src = ("import os, sys\nprint(os.path.relpath(__file__, '/sandbox'),"
           " open('data/in/x.txt').read(), open('up.txt').read())")
    body = {"language": "python", "version": "*", "files": [
        {"name": "src/main.py", "content": src},
        {"name": "data/in/x.txt", "content": "deep"},
        # path.join's view: "." and empty parts are nothing, ".." goes up
        {"name": "data/./../up.txt", "content": "up"}]}
    assert run_ok(daemon, body)["run"]["stdout"] == "src/main.py deep up\n"


@pytest.mark.parametrize("name,message", [
    ("../x.py", 'File path "../x.py" tries to escape parent directory: ..'),
    ("a/../../x", 'File path "a/../../x" tries to escape parent directory: ..'),
    ("a/..", "files[1].name 'a/..' names no file"),
    ("d/-x", "files[1].name must not hold a directory or file name that starts with '-'"),
    ("a/b/c/d/e/f/g/h/i", "files[1].name is more than 8 names deep"),
])
def test_file_paths_refused(daemon, name, message):
    refused(daemon, py("print(1)", files=[{"content": ""}, {"name": name, "content": ""}]),
            message)


def test_a_file_where_a_directory_must_be(daemon):
    refused(daemon, py("", files=[{"content": ""}, {"name": "a", "content": ""},
                                  {"name": "a/b", "content": ""}]),
            "files[1].name 'a' and files[2].name 'a/b' cannot both be written: one is the "
            "other's directory")


# ---- /api/v2/packages, /api/v2/connect ----

def test_packages_list_what_is_installed(daemon):
    status, body = daemon.get("/api/v2/packages")
    assert status == 200
    want = []
    for lang_id in ("bash", "c", "cpp", "py3"):
        p = piston_names(lang_id)
        want.append({"language": p["runtime"], "language_version": p["version"],
                     "installed": True})
    assert sorted(body, key=lambda p: p["language"]) == sorted(want, key=lambda p: p["language"])


@pytest.mark.parametrize("method,body,status,message", [
    ("POST", {"language": "python", "version": "3.11.2"}, 500, "Already installed"),
    ("POST", {"language": "python", "version": "3.x"}, 500, "Already installed"),
    ("POST", {"language": "python", "version": "3.10.0"}, 404,
     "Requested package python-3.10.0 does not exist"),
    # a package's name, not an alias
    ("POST", {"language": "py", "version": "*"}, 404, "Requested package py-* does not exist"),
    ("POST", {}, 404, "Requested package undefined-undefined does not exist"),
    ("POST", {"language": None, "version": 3}, 404, "Requested package null-3 does not exist"),
    ("DELETE", {"language": "gcc", "version": "10.2.0"}, 404,
     "Requested package gcc-10.2.0 does not exist"),
    ("DELETE", {"language": "c", "version": "*"}, 500,
     "c-12.2.0 cannot be uninstalled: its toolchain comes with the host"),
])
def test_packages_cannot_be_installed_or_removed(daemon, method, body, status, message):
    got, answer, _ = daemon.request(method, "/api/v2/packages", body)
    assert (got, answer) == (status, {"message": message})


def test_no_route(daemon):
    got, answer, _ = daemon.request("PUT", "/api/v2/packages")
    assert (got, answer) == (404, {"message": "Not Found"})


@pytest.mark.parametrize("method,status", [("GET", 426), ("POST", 400)])
def test_connect_without_a_websocket_is_refused_in_pistons_words(daemon, method, status):
    """/api/v2/connect is a WebSocket (tests/e2e/test_sessions.py): a plain
    request gets its status and a message, in Piston's error shape."""
    got, answer, _ = daemon.request(method, "/api/v2/connect")
    assert got == status and set(answer) == {"message"}, answer


def test_any_version_serves_a_pinned_version():
    """--piston-any-version: what the public Piston's clients pin runs here."""
    body = {"language": "python", "version": "3.10.0", "files": [{"content": "print('hi')"}]}
    d = Daemon(languages=small(), args=["--piston-any-version"])
    try:
        status, answer = execute(d, body)
        assert status == 200, dump(answer)
        assert (answer["language"], answer["version"], answer["run"]["stdout"]) == (
            "python", piston_names("py3")["version"], "hi\n")
        status, answer = execute(d, dict(body, language="cobol"))
        assert (status, answer) == (400, {"message": "cobol-3.10.0 runtime is unknown"})
    finally:
        d.stop()


@pytest.mark.parametrize("language,version", [
    ("python", "3.11.2"), ("py", "*"), ("python3", "3"), ("py3", "3.11"), ("python", "3.x"),
    ("python", "3.11.x"), ("python", "x"), ("python", "^3.10"), ("python", "~3.11.1"),
    ("python", ">=3.11 <4"), ("python", "3.10 - 3.12"), ("python", "2 || 3"),
    ("python", "=v3.11.2"), ("python3.11", ">3.11.1"),
])
def test_aliases_and_version_ranges(daemon, language, version):
    body = run_ok(daemon, {"language": language, "version": version,
                           "files": [{"content": "print(6 * 7)"}]})
    assert (body["language"], body["version"], body["run"]["stdout"]) == (
        "python", "3.11.2", "42\n")


@pytest.mark.parametrize("language,version", [
    ("python", "4"), ("python", "3.12"), ("py", "^3.12"), ("python", "<3.11.2"),
    ("python", "latest"), ("python", "3.11.2.1"), ("python", "3.11.2-rc.1"),
    ("cobol-60", "*"), ("Python", "*"), ("c++", "13"),
])
def test_unknown_runtimes(daemon, language, version):
    refused(daemon, {"language": language, "version": version,
                     "files": [{"content": ""}]},
            "%s-%s runtime is unknown" % (language, version))


def test_cpp_by_alias(daemon):
    body = run_ok(daemon, {"language": "g++", "version": "12", "files": [
        {"content": "#include <iostream>\nint main(){std::cout<<\"cpp\";}"}]})
    assert (body["language"], body["run"]["stdout"]) == ("c++", "cpp")
    assert body["compile"]["code"] == 0


# ---- refusals, in Piston's order and words ----

@pytest.mark.parametrize("body,message", [
    ({}, "language is required as a string"),
    ({"language": "", "version": "*", "files": []}, "language is required as a string"),
    ({"language": 5, "version": "*", "files": []}, "language is required as a string"),
    ({"language": "python", "files": "x"}, "version is required as a string"),
    ({"language": "python", "version": 3, "files": []}, "version is required as a string"),
    ({"language": "python", "version": "*"}, "files is required as an array"),
    ({"language": "python", "version": "*", "files": {"content": ""}},
     "files is required as an array"),
    ({"language": "python", "version": "*", "files": [{}]},
     "files[0].content is required as a string"),
    ({"language": "python", "version": "*", "files": [{"content": "x"}, None]},
     "files[1].content is required as a string"),
    ({"language": "python", "version": "*", "files": [{"content": 1}]},
     "files[0].content is required as a string"),
    # the runtime before everything else about the job
    ({"language": "nope", "version": "*", "files": [], "run_timeout": "x"},
     "nope-* runtime is unknown"),
    ({"language": "python", "version": "*", "files": []},
     "files must include at least one utf8 encoded file"),
    ({"language": "python", "version": "*",
      "files": [{"content": "", "encoding": "base64"}, {"content": "", "encoding": "hex"}]},
     "files must include at least one utf8 encoded file"),
    ({"language": "python", "version": "*", "files": [{"content": ""}], "run_timeout": "5"},
     "If specified, run_timeout must be a number"),
    ({"language": "python", "version": "*", "files": [{"content": ""}],
      "compile_cpu_time": True}, "If specified, compile_cpu_time must be a number"),
    ({"language": "python", "version": "*", "files": [{"content": ""}],
      "run_timeout": MAX_WALL_MS + 1},
     "run_timeout cannot exceed the configured limit of %d" % MAX_WALL_MS),
    ({"language": "python", "version": "*", "files": [{"content": ""}],
      "compile_cpu_time": MAX_CPU_MS + 0.5},
     "compile_cpu_time cannot exceed the configured limit of %d" % MAX_CPU_MS),
    ({"language": "python", "version": "*", "files": [{"content": ""}],
      "run_memory_limit": MAX_MEMORY + 1},
     "run_memory_limit cannot exceed the configured limit of %d" % MAX_MEMORY),
    # memory before time, compile before run
    ({"language": "python", "version": "*", "files": [{"content": ""}],
      "run_timeout": -1, "compile_memory_limit": -2},
     "compile_memory_limit must be non-negative"),
    ({"language": "python", "version": "*", "files": [{"content": ""}], "run_timeout": -1},
     "run_timeout must be non-negative"),
])
def test_piston_refusals(daemon, body, message):
    refused(daemon, body, message)


@pytest.mark.parametrize("extra,message", [
    ({"stdin": 5}, "stdin must be a string"),
    ({"stdin": "x" * 2049}, "stdin cannot exceed the configured limit of 2048 bytes"),
    ({"args": "abc"}, "args must be an array of strings"),
    ({"args": ["ok", 1]}, "args[1] must be a string"),
    ({"args": ["a\u0000b"]}, "args[0] must not contain a NUL byte"),
    ({"args": ["x"] * 1025}, "args cannot exceed the configured limit of 1024 arguments"),
    ({"files": [{"content": ""}, {"name": "-rf", "content": ""}]},
     "files[1].name must not start with '-'"),
    ({"files": [{"content": ""}, {"name": 7, "content": ""}]},
     "files[1].name must be a string"),
    ({"files": [{"content": "#" * 4097}]},
     "files[0].content cannot exceed the configured limit of 4096 bytes"),
    ({"files": [{"content": ""}, {"content": "x" * 2049}]},
     "files[1].content cannot exceed the configured limit of 2048 bytes"),
    ({"files": [{"content": ""},
                {"content": base64.b64encode(b"x" * 2049).decode(), "encoding": "base64"}]},
     "files[1].content cannot exceed the configured limit of 2048 bytes"),
])
def test_goboxd_caps(daemon, extra, message):
    body = py("print(1)")
    body.update(extra)
    refused(daemon, body, message)


def test_bodies(daemon):
    refused(daemon, b'{"language": ', "request body is not valid JSON")
    refused(daemon, b'"python"', "request body is not valid JSON")
    # what body-parser hands on: [] has no language, nor has an empty body
    refused(daemon, b"[]", "language is required as a string")
    refused(daemon, b"", "language is required as a string")
    # JSON.parse: the last of a key given twice
    status, body = execute(daemon, b'{"language": "nope", "language": "python", '
                                   b'"version": "*", "files": [{"content": "print(1)"}]}')
    assert status == 200 and body["run"]["stdout"] == "1\n", dump(body)
    # nulls are absent: defaults
    status, body = execute(daemon, {"language": "python", "version": "*", "stdin": None,
                                    "args": None, "run_timeout": None,
                                    "files": [{"content": "print(2)", "name": None,
                                               "encoding": None}]})
    assert status == 200 and body["run"]["stdout"] == "2\n", dump(body)
    refused(daemon, py("#" * 70000), "request entity too large", status=413)


# ---- a client nobody here wrote ----

CLIENT_SCRIPT = r"""
import piston from "%(client)s/index.js";

const client = piston({ server: process.argv[2] });
const runtimes = await client.runtimes();
const hello = await client.execute("python", "import sys\nprint('hi', sys.argv[1:])");
const cpp = await client.execute({
  language: "cpp",
  version: "12",
  files: [{ name: "main.cpp", content:
    "#include <iostream>\n#include <string>\nint main(int c, char **v) {\n" +
    "  std::string s; std::getline(std::cin, s); std::cout << s << v[1]; }\n" }],
  stdin: "from stdin ",
  args: ["and args"],
  runTimeout: 2000,
  compileTimeout: 15000,
});
const bad = await client.execute("python", "print(1)", { version: "9.9.9" });
console.log(JSON.stringify({ runtimes, hello, cpp, bad }));
"""


@pytest.mark.skipif(not os.path.exists(NODE), reason="no %s to run piston-client" % NODE)
@pytest.mark.skipif(not os.path.exists(os.path.join(PISTON_CLIENT, "index.js")),
                    reason="piston-client is not installed in tests/e2e/.npm (npm install "
                    "--prefix tests/e2e/.npm --no-save piston-client@1.0.2)")
def test_piston_client(daemon, tmp_path):
    script = tmp_path / "client.mjs"
    script.write_text(CLIENT_SCRIPT % {"client": PISTON_CLIENT})
    out = subprocess.run([NODE, str(script), daemon.url], capture_output=True, text=True,
                         timeout=budget(120))
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert {r["language"] for r in got["runtimes"]} == {"bash", "c", "c++", "python"}
    # its defaults: the newest version it listed, args 1 2 3, memory -1
    assert got["hello"]["language"] == "python", got["hello"]
    assert got["hello"]["run"]["stdout"] == "hi ['1', '2', '3']\n"
    assert got["hello"]["run"]["code"] == 0
    assert got["cpp"]["language"] == "c++", got["cpp"]
    assert got["cpp"]["compile"]["code"] == 0
    assert got["cpp"]["run"]["stdout"] == "from stdin and args"
    assert got["bad"] == {"message": "python-9.9.9 runtime is unknown"}
