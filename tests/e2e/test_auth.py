"""API tokens (--auth-tokens): every API needs one, each answers 401 in its
own words without it, the probes stay open unless --auth-probes, and a
reload (SIGHUP) reads the file again."""
import os
import signal
import subprocess

import pytest

from conftest import LANGUAGES, TOP, Daemon, small, wait_until

TOKEN = "front-end-token-0123456789"
OTHER = "second-token-abcdefghijk"
HELLO = {"language": "bash", "source": "echo hi", "tests": [{"stdin": ""}]}


def tokens_file(tmp_path, *tokens):
    path = tmp_path / "tokens"
    path.write_text("# the judge's front end\n" + "".join(t + "\n" for t in tokens))
    return str(path)


@pytest.fixture(scope="module")
def daemon(tmp_path_factory):
    path = tokens_file(tmp_path_factory.mktemp("auth"), TOKEN, OTHER)
    d = Daemon(args=["--auth-tokens", path, "--metrics"], languages=small())
    d.tokens_path = path
    yield d
    d.stop()


def bearer(token):
    return {"Authorization": "Bearer " + token}


def test_without_a_token_every_api_answers_401_in_its_own_words(daemon):
    status, body, headers = daemon.request("POST", "/run", HELLO)
    assert status == 401
    assert body["error"]["code"] == "unauthorized"
    assert headers["WWW-Authenticate"] == "Bearer"

    status, body, _ = daemon.request("POST", "/v1/run", {"runtime": "bash", "files": []})
    assert status == 401
    assert body["code"] == "UNAUTHORIZED"

    status, body, _ = daemon.request("POST", "/submissions", {"language_id": 46,
                                                               "source_code": "echo hi"})
    assert status == 401
    assert "token" in body["error"]

    status, body, _ = daemon.request("GET", "/api/v2/runtimes")
    assert status == 401
    assert "token" in body["message"]

    for path in ("/info", "/languages", "/statuses", "/submissions/x"):
        assert daemon.request("GET", path)[0] == 401, path


def test_a_wrong_token_is_refused_however_it_comes(daemon):
    for headers in (bearer(TOKEN[:-1]), bearer(TOKEN + "x"), {"X-Auth-Token": "nope"},
                    {"Authorization": "Basic " + TOKEN}, {"X-Auth-Token": ""}):
        assert daemon.request("POST", "/run", HELLO, headers=headers)[0] == 401, headers


def test_a_token_of_the_file_lets_in_by_either_header(daemon):
    status, body, _ = daemon.request("POST", "/run", HELLO, headers=bearer(TOKEN))
    assert status == 200, body
    assert body["status"] == "accepted"
    status, body, _ = daemon.request("GET", "/statuses", headers={"X-Auth-Token": OTHER})
    assert status == 200
    assert len(body) == 14
    status, body, _ = daemon.request("POST", "/submissions?wait=true",
                                     {"language_id": 46, "source_code": "echo hi"},
                                     headers={"X-Auth-User": TOKEN})
    assert status == 201, body
    assert body["stdout"] == "hi\n"


def test_judge0s_authenticate_says_whether_a_token_is_good(daemon):
    assert daemon.request("POST", "/authenticate", b"", headers={"X-Auth-Token": TOKEN})[0] == 200
    assert daemon.request("POST", "/authenticate", b"", headers={"X-Auth-Token": "bad"})[0] == 401
    assert daemon.request("POST", "/authorize", b"", headers={"X-Auth-User": OTHER})[0] == 200


def test_the_probes_stay_open(daemon):
    for path in ("/healthz", "/readyz", "/metrics"):
        status, _ = daemon.get(path)
        assert status in (200, 503), path  # /readyz may still be probing


def test_with_auth_probes_the_probes_need_a_token_too(tmp_path):
    path = tokens_file(tmp_path, TOKEN)
    d = Daemon(args=["--auth-tokens", path, "--auth-probes", "--metrics"],
               languages=small())
    try:
        for p in ("/readyz", "/metrics"):
            assert d.get(p)[0] == 401, p
            assert d.request("GET", p, headers=bearer(TOKEN))[0] in (200, 503), p
    finally:
        d.stop()


def test_a_reload_reads_the_file_again(tmp_path):
    path = tokens_file(tmp_path, TOKEN)
    d = Daemon(args=["--auth-tokens", path], languages=small())
    try:
        assert d.request("GET", "/statuses", headers=bearer(TOKEN))[0] == 200
        assert d.request("GET", "/statuses", headers=bearer(OTHER))[0] == 401
        with open(path, "w") as f:
            f.write(OTHER + "\n")
        d.proc.send_signal(signal.SIGHUP)
        wait_until(lambda: d.request("GET", "/statuses", headers=bearer(OTHER))[0] == 200,
                   "the new token to be taken")
        assert d.request("GET", "/statuses", headers=bearer(TOKEN))[0] == 401
        # a file that would let nobody in is refused, the tokens in force stay
        with open(path, "w") as f:
            f.write("# nobody\n")
        d.proc.send_signal(signal.SIGHUP)
        d.wait_log(lambda l: "reload refused" in l.get("msg", ""), "the refusal")
        assert d.request("GET", "/statuses", headers=bearer(OTHER))[0] == 200
    finally:
        d.stop()


def test_a_bad_tokens_file_stops_the_start_with_its_line(tmp_path):
    path = tmp_path / "tokens"
    path.write_text(TOKEN + "\nshort\n")
    binary = os.environ.get("GOBOXD_BIN", os.path.join(TOP, "build", "goboxd"))
    out = subprocess.run([binary, "--check", "--languages-dir", LANGUAGES,
                          "--auth-tokens", str(path)], capture_output=True, text=True)
    assert out.returncode == 2, out
    assert "--auth-tokens: %s:2: token too short" % path in out.stderr
