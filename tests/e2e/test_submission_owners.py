"""A submission belongs to the API token that made it. With --auth-tokens,
a client's token reads, deletes and lists its own submissions only (by
token, in a batch, in a page of GET /submissions); another's is a 404
as a token that never was, a null in a batch, and absent from a page.
A token marked "operator" in the file sees and removes every one. Both
stores keep the owner: SQLite, and PostgreSQL where its server is
installed. A token the store never gave (bytes that are no UTF-8
included) is a 404, never the store's failure.

Before, any token of the file read and deleted any submission, and the
page listed everyone's; on PostgreSQL a token of bad bytes was 503."""
import json

import pytest

import pgcluster
from conftest import Daemon, small, wait_until
from test_daemon import raw

PY = 71
ALICE = "alice-front-end-0123456789"
BOB = "bob-front-end-abcdefghijkl"
OPS = "the-operators-token-000000"


def as_(token):
    return {"X-Auth-Token": token}


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def daemon(request, tmp_path_factory):
    tokens = tmp_path_factory.mktemp("owners") / "tokens"
    tokens.write_text("%s\n%s\n%s operator\n" % (ALICE, BOB, OPS))
    args = ["--auth-tokens", str(tokens)]
    cluster = None
    if request.param == "postgresql":
        if not pgcluster.available():
            pytest.skip("PostgreSQL's server is not installed (Debian: postgresql)")
        cluster = pgcluster.PgCluster()
        cluster.start()
        args += ["--store", cluster.url()]
    d = Daemon(args=args, languages=small())
    d.kind = request.param
    yield d
    d.stop()
    if cluster:
        cluster.cleanup()


def submit(d, token, wait=False, stdout="mine"):
    """A finished py3 submission of token's: its token."""
    status, body, _ = d.request("POST", "/submissions?wait=%s" % str(wait).lower(),
                                {"language_id": PY, "source_code": "print(%r)" % stdout},
                                headers=as_(token))
    assert status == 201, body
    sub = body["token"]

    def done():
        status, got, _ = d.request("GET", "/submissions/%s?fields=status_id" % sub,
                                   headers=as_(token))
        assert status == 200, got
        return got["status_id"] > 2
    wait_until(done, "submission %s finished" % sub, timeout=60)
    return sub


def test_another_clients_submission_is_not_there(daemon):
    mine = submit(daemon, ALICE)
    waited = submit(daemon, ALICE, wait=True)
    for sub in (mine, waited):
        status, body, _ = daemon.request("GET", "/submissions/%s" % sub, headers=as_(BOB))
        assert (status, body) == (404, {"error": "record not found"}), (sub, body)
        status, body, _ = daemon.request("GET", "/submissions/%s?fields=stdout" % sub,
                                         headers=as_(ALICE))
        assert status == 200 and body["stdout"] == "mine\n", body


def test_a_batch_shows_another_clients_submission_as_none(daemon):
    alices = submit(daemon, ALICE)
    bobs = submit(daemon, BOB, stdout="bob's")
    path = "/submissions/batch?tokens=%s,%s&fields=stdout" % (alices, bobs)
    status, body, _ = daemon.request("GET", path, headers=as_(BOB))
    assert status == 200, body
    assert body["submissions"] == [None, {"stdout": "bob's\n"}], body
    status, body, _ = daemon.request("GET", path, headers=as_(OPS))
    assert body["submissions"] == [{"stdout": "mine\n"}, {"stdout": "bob's\n"}], body


def test_another_client_cannot_delete_it(daemon):
    sub = submit(daemon, ALICE)
    status, body, _ = daemon.request("DELETE", "/submissions/%s" % sub, headers=as_(BOB))
    assert (status, body) == (404, {"error": "record not found"}), body
    status, _, _ = daemon.request("GET", "/submissions/%s" % sub, headers=as_(ALICE))
    assert status == 200, "still there for its owner"
    status, body, _ = daemon.request("DELETE", "/submissions/%s" % sub, headers=as_(ALICE))
    assert status == 200, body
    status, _, _ = daemon.request("GET", "/submissions/%s" % sub, headers=as_(OPS))
    assert status == 404


def test_an_operator_reads_and_removes_anyones(daemon):
    sub = submit(daemon, BOB)
    status, body, _ = daemon.request("GET", "/submissions/%s?fields=stdout" % sub,
                                     headers=as_(OPS))
    assert status == 200 and body["stdout"] == "mine\n", body
    status, body, _ = daemon.request("DELETE", "/submissions/%s" % sub, headers=as_(OPS))
    assert status == 200, body
    status, _, _ = daemon.request("GET", "/submissions/%s" % sub, headers=as_(BOB))
    assert status == 404


def page(d, token):
    status, body, _ = d.request("GET", "/submissions?per_page=100&fields=token",
                                headers=as_(token))
    assert status == 200, body
    return {s["token"] for s in body["submissions"]}, body["meta"]["total_count"]


def test_a_page_lists_ones_own(daemon):
    alices = {submit(daemon, ALICE) for _ in range(2)}
    bobs = {submit(daemon, BOB)}
    seen, total = page(daemon, ALICE)
    assert alices <= seen and not bobs & seen, (seen, bobs)
    assert total == len(seen), "the count is of one's own too"
    seen_b, _ = page(daemon, BOB)
    assert bobs <= seen_b and not alices & seen_b
    everyone, total_ops = page(daemon, OPS)
    assert alices | bobs <= everyone
    assert total_ops >= total + 1


def raw_get(d, path, token):
    """A GET whose path holds bytes no client library would send."""
    got = raw(d.port, b"GET " + path + b" HTTP/1.1\r\nHost: x\r\nX-Auth-Token: " +
              token.encode() + b"\r\nConnection: close\r\n\r\n", timeout=30)
    head, _, body = got.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


@pytest.mark.parametrize("token", [b"\xff\xfe\x80", b"%FF%FE", b"00000000-0000-4000-8000-00000000000G",
                                   b"'OR'1'='1"])
def test_a_token_the_store_never_gave_is_not_found(daemon, token):
    status, body = raw_get(daemon, b"/submissions/" + token, ALICE)
    assert status == 404, body
    assert json.loads(body) == {"error": "record not found"}
    status, body = raw_get(daemon, b"/submissions/batch?tokens=" + token, ALICE)
    assert status == 200, body
    assert json.loads(body) == {"submissions": [None]}
