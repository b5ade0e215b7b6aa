"""Judge0 CE 1.13.1 as its official Python SDK (judge0/judge0-python) and
other strict clients see it.

The SDK needs pydantic 2, which Debian 12 lacks, so this file makes the
requests the SDK makes and reads the answers as strictly as it does
(read from its source: clients.py, submission.py, base_types.py,
data.py): a client is made by reading /languages and /config_info into
models whose fields are required; a language name is turned into an id
through a table keyed by /about's version; every get asks fields=* and
sets each field of the answer on a model that has no room for a field it
does not know; dates are read with one format, the token as a UUID 4.
The facts about 1.13.1 (its ids, its fields) come from Judge0's own
repository at that tag (db/languages/active.rb, db/schema.rb).
"""
import base64
import datetime
import io
import subprocess
import uuid
import zipfile

import pytest

from conftest import Daemon, small

# Judge0 CE 1.13.1's active language ids (db/languages/active.rb).
ACTIVE_1_13_1 = set(range(43, 90))
# The ids the SDK's table for 1.13.1 gives to the languages the four
# SMALL languages serve (bash, c, cpp, py3): names clients write.
SDK_IDS = {"BASH": 46, "C": 50, "C_GCC": 50, "CPP": 52, "CPP_GCC": 52, "PYTHON": 71,
           "PYTHON3": 71}
# Judge0 1.13.1's versions of gcc and g++ beside the newest: listed as
# active, and picked from the list by clients.
GCC_LISTED = {48, 49, 50, 52, 53, 54}

# The SDK's Submission model: the attributes it may set, and those it skips.
SUBMISSION_MODEL = {
    "source_code", "language", "additional_files", "compiler_options",
    "command_line_arguments", "stdin", "expected_output", "cpu_time_limit",
    "cpu_extra_time", "wall_time_limit", "memory_limit", "stack_limit",
    "max_processes_and_or_threads", "enable_per_process_and_thread_time_limit",
    "enable_per_process_and_thread_memory_limit", "max_file_size",
    "redirect_stderr_to_stdout", "enable_network", "number_of_runs", "callback_url",
    "stdout", "stderr", "compile_output", "message", "exit_code", "exit_signal", "status",
    "created_at", "finished_at", "token", "time", "wall_time", "memory",
    "post_execution_filesystem"}
SKIPPED = {"language_id", "language", "status_id"}
ENCODED = {"source_code", "additional_files", "stdin", "expected_output", "stdout",
           "stderr", "compile_output"}
DATES = {"created_at", "finished_at"}
FLOATS = {"cpu_time_limit", "cpu_extra_time", "time", "wall_time", "wall_time_limit"}

# The SDK's Config model: every key required, of these types.
CONFIG_MODEL = {
    "allow_enable_network": bool, "allow_enable_per_process_and_thread_memory_limit": bool,
    "allow_enable_per_process_and_thread_time_limit": bool,
    "allowed_languages_for_compile_options": list, "callbacks_max_tries": int,
    "callbacks_timeout": float, "cpu_extra_time": float, "cpu_time_limit": float,
    "enable_additional_files": bool, "enable_batched_submissions": bool,
    "enable_callbacks": bool, "enable_command_line_arguments": bool,
    "enable_compiler_options": bool, "enable_network": bool,
    "enable_per_process_and_thread_memory_limit": bool,
    "enable_per_process_and_thread_time_limit": bool, "enable_submission_delete": bool,
    "enable_wait_result": bool, "maintenance_mode": bool, "max_cpu_extra_time": float,
    "max_cpu_time_limit": float, "max_extract_size": int, "max_file_size": int,
    "max_max_file_size": int, "max_max_processes_and_or_threads": int,
    "max_memory_limit": int, "max_number_of_runs": int, "max_processes_and_or_threads": int,
    "max_queue_size": int, "max_stack_limit": int, "max_submission_batch_size": int,
    "max_wall_time_limit": float, "memory_limit": int, "number_of_runs": int,
    "redirect_stderr_to_stdout": bool, "stack_limit": int,
    "submission_cache_duration": float, "use_docs_as_homepage": bool,
    "wall_time_limit": float}

TOKEN = "judge0-sdk-client-token-0123"


@pytest.fixture(scope="module")
def daemon():
    d = Daemon(languages=small())
    yield d
    d.stop()


def b64(text):
    return base64.b64encode(text.encode()).decode()


def model_value(kind, value):
    """A value as pydantic would take it for a field of that kind."""
    if kind is bool:
        assert isinstance(value, bool), value
    elif kind is int:
        assert isinstance(value, int) and not isinstance(value, bool), value
    elif kind is float:
        assert isinstance(value, (int, float)) and not isinstance(value, bool), value
    elif kind is list:
        assert isinstance(value, list) and all(isinstance(x, str) for x in value), value
    return value


class Client:
    """The SDK's Client, as far as the requests and the reading go."""

    def __init__(self, d, headers=None):
        self.d, self.headers = d, dict(headers or {})
        self.headers.update({"X-Judge0-App": "Judge0 Python SDK"})
        status, langs, _ = d.request("GET", "/languages", headers=self.headers)
        assert status == 200, langs
        self.languages = []
        for lang in langs:
            assert isinstance(lang["id"], int) and isinstance(lang["name"], str), lang
            self.languages.append(lang["id"])
        status, cfg, _ = d.request("GET", "/config_info", headers=self.headers)
        assert status == 200, cfg
        self.config = {k: model_value(t, cfg[k]) for k, t in CONFIG_MODEL.items()}
        status, about, _ = d.request("GET", "/about", headers=self.headers)
        assert status == 200, about
        self.version = about["version"]

    def language_id(self, alias):
        # LANGUAGE_TO_LANGUAGE_ID[version][alias]: a version it has no
        # table for is a KeyError, which every README example meets
        assert self.version == "1.13.1", self.version
        return SDK_IDS[alias]

    def supported(self, alias):
        return self.language_id(alias) in self.languages

    def create(self, sub):
        status, body, _ = self.d.request("POST", "/submissions?base64_encoded=true&wait=false",
                                         sub, headers=self.headers)
        assert status == 201, body
        return set_attributes({}, body)

    def get(self, token, fields="*"):
        status, body, _ = self.d.request(
            "GET", "/submissions/%s?base64_encoded=true&fields=%s" % (token, fields),
            headers=self.headers)
        assert status == 200, body
        return set_attributes({}, body)

    def create_batch(self, subs):
        status, body, _ = self.d.request("POST", "/submissions/batch?base64_encoded=true",
                                         {"submissions": subs}, headers=self.headers)
        assert status == 201, body
        return [set_attributes({}, a) for a in body]

    def get_batch(self, tokens):
        status, body, _ = self.d.request(
            "GET", "/submissions/batch?base64_encoded=true&fields=*&tokens=" + ",".join(tokens),
            headers=self.headers)
        assert status == 200, body
        return [set_attributes({}, a) for a in body["submissions"]]


def set_attributes(model, attributes):
    """Submission.set_attributes: setattr on a pydantic model raises for a
    field it has none for; values are read as the SDK reads them."""
    for attr, value in attributes.items():
        if attr in SKIPPED:
            continue
        assert attr in SUBMISSION_MODEL, "the SDK's model has no field %r" % attr
        if attr in ENCODED:
            # the SDK's decode: line breaks dropped, strict base64, bad
            # UTF-8 kept as backslash escapes
            value = base64.b64decode(value.replace("\n", ""), validate=True).decode(
                errors="backslashreplace") if value else None
        elif attr == "status":
            assert 1 <= value["id"] <= 14, value
            value = value["id"]
        elif attr in DATES and value is not None:
            value = datetime.datetime.strptime(value, "%Y-%m-%dT%H:%M:%S.%fZ")
        elif attr in FLOATS and value is not None:
            value = float(value)
        elif attr == "token":
            assert uuid.UUID(value).version == 4, value
        model[attr] = value
    return model


def run_until_done(client, sub, timeout=60):
    """judge0.run: create, then get with fields=* until not 1 or 2."""
    token = client.create(sub)["token"]
    deadline = datetime.datetime.now() + datetime.timedelta(seconds=timeout)
    while datetime.datetime.now() < deadline:
        got = client.get(token)
        if got["status"] not in (1, 2):
            return got
    raise AssertionError("submission %s did not finish" % token)


def test_a_client_is_made_and_every_readme_alias_resolves(daemon):
    client = Client(daemon)
    for alias in SDK_IDS:
        assert client.supported(alias), (alias, client.languages)
    assert GCC_LISTED <= set(client.languages), client.languages
    # each listed id answers /languages/{id} with the SDK's Language fields
    for lid in client.languages:
        status, lang = daemon.get("/languages/%d" % lid)
        assert status == 200 and lang["id"] == lid, lang
        assert isinstance(lang["is_archived"], bool) and isinstance(lang["source_file"], str)
        assert lang["compile_cmd"] is None or isinstance(lang["compile_cmd"], str)


def test_run_reads_every_field_of_fields_star(daemon):
    client = Client(daemon)
    got = run_until_done(client, {"source_code": b64("print(input() * 2)"),
                                  "language_id": client.language_id("PYTHON"),
                                  "stdin": b64("ab"), "expected_output": b64("abab")})
    assert (got["status"], got["stdout"], got["exit_code"]) == (3, "abab\n", 0), got
    assert got["finished_at"] >= got["created_at"], got
    assert got["time"] >= 0 and got["wall_time"] >= 0 and got["memory"] > 0, got


def test_cpp_by_its_sdk_id_runs_gcc(daemon):
    client = Client(daemon)
    src = "#include <cstdio>\nint main(){std::printf(\"%d\\n\", __GNUC__ > 0);}\n"
    got = run_until_done(client, {"source_code": b64(src),
                                  "language_id": client.language_id("CPP")})
    assert (got["status"], got["stdout"]) == (3, "1\n"), got


def test_batches_read_as_the_sdk_reads_them(daemon):
    client = Client(daemon)
    made = client.create_batch([{"source_code": b64("echo %d" % i),
                                 "language_id": client.language_id("BASH")} for i in range(3)])
    tokens = [m["token"] for m in made]
    for _ in range(600):
        got = client.get_batch(tokens)
        if all(g["status"] not in (1, 2) for g in got):
            break
    assert [(g["status"], g["stdout"]) for g in got] == [(3, "%d\n" % i) for i in range(3)]


def test_about_version_license_isolate(daemon):
    status, about = daemon.get("/about")
    assert status == 200 and about["version"] == "1.13.1", about
    assert {"homepage", "source_code", "maintainer"} <= set(about)
    # goboxd's own version is there too, beside Judge0's
    assert about["goboxd_version"] and about["goboxd_version"] != "1.13.1", about
    status, body, headers = daemon.request("GET", "/version")
    assert (status, body) == (200, "1.13.1") and headers["Content-Type"].startswith("text/plain")
    status, body, headers = daemon.request("GET", "/isolate")
    assert status == 200 and headers["Content-Type"].startswith("text/plain")
    assert body.split()[0] in ("bwrap", "nsjail"), body
    status, body, headers = daemon.request("GET", "/license")
    assert status == 200 and "goboxd" in body and headers["Content-Type"].startswith("text/plain")


# ---- GET /submissions: Judge0's pages -------------------------------------


def test_the_list_needs_a_token_as_judge0_needs_its_authorization(daemon):
    # Judge0 answers the list only to its AUTHZ token (403 while none is
    # set); goboxd only to a token of --auth-tokens
    status, body, _ = daemon.request("GET", "/submissions")
    assert (status, body) == (403, ""), body


@pytest.fixture(scope="module")
def with_tokens(tmp_path_factory):
    path = tmp_path_factory.mktemp("judge0-list") / "tokens"
    path.write_text(TOKEN + "\n")
    # one worker: each worker keeps its own count of /statistics
    d = Daemon(languages=small(), args=["--auth-tokens", str(path)], workers=1)
    yield d
    d.stop()


def pages(d, query):
    status, body, _ = d.request("GET", "/submissions" + query, headers={"X-Auth-Token": TOKEN})
    return status, body


def test_the_list_is_paged_newest_first_as_will_paginate_pages(with_tokens):
    client = Client(with_tokens, {"X-Auth-Token": TOKEN})
    tokens = [client.create({"source_code": b64("echo %d" % i),
                             "language_id": 46})["token"] for i in range(5)]
    status, body = pages(with_tokens, "?per_page=2")
    assert status == 200, body
    assert [s["token"] for s in body["submissions"]] == tokens[::-1][:2]
    assert body["meta"] == {"current_page": 1, "next_page": 2, "prev_page": None,
                            "total_pages": 3, "total_count": 5}
    # the default fields of each, as GET /submissions/{token}
    assert set(body["submissions"][0]) == {"token", "time", "memory", "stdout", "stderr",
                                           "compile_output", "message", "status"}
    status, body = pages(with_tokens, "?per_page=2&page=3&fields=token,language_id")
    assert status == 200
    assert body["submissions"] == [{"token": tokens[0], "language_id": 46}]
    assert body["meta"] == {"current_page": 3, "next_page": None, "prev_page": 2,
                            "total_pages": 3, "total_count": 5}
    status, body = pages(with_tokens, "?page=9")
    assert status == 200 and body["submissions"] == [] and body["meta"]["total_count"] == 5
    # 20 a page by default; Ruby's to_i reads the numbers
    status, body = pages(with_tokens, "?page=1x&per_page=%202")
    assert status == 200 and len(body["submissions"]) == 2, body
    status, body = pages(with_tokens, "")
    assert status == 200 and len(body["submissions"]) == 5
    assert body["meta"]["total_pages"] == 1


def test_the_list_refuses_what_judge0_refuses(with_tokens):
    for query, why in (("?page=0", "invalid page: 0"), ("?page=abc", "invalid page: 0"),
                       ("?page=-2", "invalid page: -2"),
                       ("?per_page=-1", "invalid per_page: -1"),
                       ("?per_page=0", "invalid per_page: 0")):
        status, body = pages(with_tokens, query)
        assert (status, body) == (400, {"error": why}), query
    status, body = pages(with_tokens, "?fields=nope")
    assert (status, body) == (400, {"error": "invalid fields: [nope]"})
    # without a token: 401, as every request with --auth-tokens
    status, body, _ = with_tokens.request("GET", "/submissions")
    assert status == 401, body


def test_a_huge_page_is_bounded(with_tokens):
    status, body = pages(with_tokens, "?per_page=100000000")
    assert status == 200 and len(body["submissions"]) <= 100, len(body["submissions"])
    assert body["meta"]["total_count"] >= len(body["submissions"])


# ---- GET /statistics ----------------------------------------------------


def test_statistics_count_as_judge0_counts(with_tokens):
    d, auth = with_tokens, {"X-Auth-Token": TOKEN}
    client = Client(d, auth)
    before = d.request("GET", "/statistics?invalidate_cache=true", headers=auth)[1]
    run_until_done(client, {"source_code": b64("print(1)"), "language_id": 71})
    run_until_done(client, {"source_code": b64("exit 3"), "language_id": 46})
    # kept 10 minutes, as Judge0 keeps it: the same answer again
    status, cached, _ = d.request("GET", "/statistics", headers=auth)
    assert status == 200 and cached == before, cached
    status, st, _ = d.request("GET", "/statistics?invalidate_cache=true", headers=auth)
    assert status == 200, st
    assert set(st) == {"created_at", "cached_until", "submissions", "languages", "statuses",
                       "database"}
    made = datetime.datetime.strptime(st["created_at"], "%Y-%m-%dT%H:%M:%S.%f+00:00")
    until = datetime.datetime.strptime(st["cached_until"], "%Y-%m-%dT%H:%M:%S.%f+00:00")
    assert until - made == datetime.timedelta(minutes=10)
    subs = st["submissions"]
    assert subs["total"] == before["submissions"]["total"] + 2
    assert subs["today"] == before["submissions"]["today"] + 2
    # the 30 days before today, newest first
    days = list(subs["last_30_days"])
    today = made.date()
    assert days == [str(today - datetime.timedelta(days=i)) for i in range(1, 31)], days
    assert sum(x["count"] for x in st["languages"]) == subs["total"]
    assert sum(x["count"] for x in st["statuses"]) == subs["total"]
    counts = [x["count"] for x in st["languages"]]
    assert counts == sorted(counts, reverse=True), "most first"
    names = {x["language"]["id"]: x["language"]["name"] for x in st["languages"]}
    assert names[71].startswith("Python (") and names[46].startswith("Bash ("), names
    by_status = {x["status"]["id"]: (x["status"]["name"], x["count"]) for x in st["statuses"]}
    old = {x["status"]["id"]: x["count"] for x in before["statuses"]}
    assert by_status[11] == ("Runtime Error (NZEC)", old.get(11, 0) + 1), by_status
    assert by_status[3][0] == "Accepted" and by_status[3][1] >= old.get(3, 0) + 1
    db = st["database"]
    assert db["size_in_bytes"] > 0 and db["size_pretty"].split()[1] in ("bytes", "kB", "MB")


def test_statistics_need_a_token_with_auth_tokens(with_tokens):
    status, body, _ = with_tokens.request("GET", "/statistics")
    assert status == 401, body


# ---- Executable (44) and Multi-file program (89) ----------------------------


@pytest.fixture(scope="module")
def programs():
    d = Daemon(languages=small("executable", "multifile"))
    yield d
    d.stop()


def zipped(entries):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name, data in entries:
            z.writestr(name, data)
    return base64.b64encode(out.getvalue()).decode()


def waited(d, sub):
    status, body = d.post("/submissions?wait=true&base64_encoded=true&fields=*", sub)
    assert status == 201, body
    return set_attributes({}, body)


def test_an_executable_runs_as_sent(programs, tmp_path):
    src = tmp_path / "hello.c"
    src.write_text('#include <stdio.h>\nint main(void){char w[16]; if (scanf("%15s", w) != 1)'
                   ' return 1; printf("hello, %s\\n", w); return 0;}\n')
    subprocess.run(["gcc", "-O2", "-o", str(tmp_path / "hello"), str(src)], check=True)
    binary = base64.b64encode((tmp_path / "hello").read_bytes()).decode()
    got = waited(programs, {"language_id": 44, "source_code": binary, "stdin": b64("world")})
    assert (got["status"], got["stdout"]) == (3, "hello, world\n"), got
    status, lang = programs.get("/languages/44")
    assert status == 200 and lang["name"] == "Executable", lang


def test_a_multi_file_program_compiles_and_runs_its_scripts(programs):
    files = zipped([("compile", "gcc -O2 -o main src/main.c\n"),
                    ("run", "./main \"$(cat data/word.txt)\"\n"),
                    ("src/main.c", "#include <stdio.h>\nint main(int c, char **v)"
                                   "{ printf(\"%s!\\n\", v[1]); return 0; }\n"),
                    ("data/word.txt", "hi")])
    got = waited(programs, {"language_id": 89, "additional_files": files})
    assert (got["status"], got["stdout"]) == (3, "hi!\n"), got
    # a compile script that fails is a compilation error, its output shown
    files = zipped([("compile", "echo broken >&2; exit 1\n"), ("run", "echo never\n")])
    got = waited(programs, {"language_id": 89, "additional_files": files})
    assert (got["status"], got["compile_output"]) == (6, "broken\n"), got
    # Judge0 shows no source file or commands for it: the archive has them
    status, lang = programs.get("/languages/89")
    assert status == 200 and (lang["source_file"], lang["compile_cmd"], lang["run_cmd"]) == \
        (None, None, None), lang


def test_a_multi_file_program_is_refused_as_judge0_refuses_it(programs):
    files = zipped([("run", "echo hi\n")])
    for sub, errors in (
            ({"language_id": 89, "source_code": b64("x"), "additional_files": files},
             {"source_code": ["must be blank"]}),
            ({"language_id": 89}, {"additional_files": ["can't be blank"]}),
            ({"language_id": 89, "additional_files": zipped([("compile", "true\n")])},
             {"additional_files": ["has no run script"]})):
        status, body = programs.post("/submissions?base64_encoded=true", sub)
        assert (status, body) == (422, errors), sub


def test_an_executable_that_is_no_program_is_exec_format_error(programs):
    got = waited(programs, {"language_id": 44, "source_code": b64("just words\n")})
    # message is base64 too with base64_encoded=true (the SDK leaves it so)
    assert (got["status"], base64.b64decode(got["message"])) == (14, b"Exec format error"), got
    # the worker serves on: the next one runs
    got = waited(programs, {"language_id": 44, "source_code": b64("#!/bin/sh\necho ok\n")})
    assert (got["status"], got["stdout"]) == (3, "ok\n"), got


# ---- post_execution_filesystem (Judge0 1.14) --------------------------------


def box_after(d, sub):
    """The files of post_execution_filesystem, by name, and the submission."""
    token = submit_and_wait(d, sub)
    status, body = d.get("/submissions/%s?fields=post_execution_filesystem,status_id" % token)
    assert status == 200, body
    if body["post_execution_filesystem"] is None:
        return None, body
    z = zipfile.ZipFile(io.BytesIO(base64.b64decode(body["post_execution_filesystem"])))
    return {i.filename: (z.read(i), (i.external_attr >> 16) & 0o777) for i in z.infolist()}, body


def submit_and_wait(d, sub):
    status, body = d.post("/submissions?wait=true&fields=token", sub)
    assert status == 201, body
    return body["token"]


def test_the_box_after_the_run_when_a_client_names_it(daemon):
    src = ("import os\nos.makedirs('out/deep', exist_ok=True)\n"
           "open('out/deep/answer.txt', 'w').write('42')\nos.chmod('out/deep/answer.txt', 0o640)\n"
           "print('done')\n")
    files, body = box_after(daemon, {"language_id": 71, "source_code": src})
    assert body["status_id"] == 3, body
    assert files["out/deep/answer.txt"] == (b"42", 0o640), files
    assert files["solution.py"][0] == src.encode()
    # 1.13.1's "*" has no such field: its clients would refuse it
    token = submit_and_wait(daemon, {"language_id": 71, "source_code": "print(1)"})
    status, body = daemon.get("/submissions/%s?fields=*" % token)
    assert status == 200 and "post_execution_filesystem" not in body


def test_the_box_after_the_run_holds_nothing_it_should_not(daemon):
    src = ("import os\nos.symlink('/etc/passwd', 'passwd')\nos.symlink('/etc', 'etc')\n"
           "os.mkfifo('fifo')\nopen('big', 'wb').write(b'x' * (300 << 10))\n"
           "for i in range(30):\n    open('f%02d' % i, 'w').write(str(i))\n")
    files, body = box_after(daemon, {"language_id": 71, "source_code": src})
    assert body["status_id"] == 3, body
    names = set(files)
    assert not names & {"passwd", "etc", "fifo"}, "links and FIFOs are never read"
    assert "big" not in names, "a file over --max-file-size is left out"
    assert len(names) <= 10, "at most --max-files files"
    # and the worker goes on
    files, body = box_after(daemon, {"language_id": 71, "source_code": "print(2)"})
    assert body["status_id"] == 3 and "solution.py" in files
