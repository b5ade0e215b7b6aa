"""Files out of /run through the real daemon: a request's return_files
(paths and globs inside the job directory) come back after its last test
as `files`, each with its path, size, mode and content in base64, within
the server's caps and the request's lower ones, and `files_left_out`
counts what a cap kept back. The directory is the program's, so it is
hostile: a link out of the box, a FIFO, a socket, a file past the cap,
many files, a tree too deep for any pattern are met and never followed,
opened, read whole or walked.
"""
import base64
import json

import pytest

from conftest import Daemon, dump, run_ok as run, small

NDJSON = "application/x-ndjson"

# The server's caps of the daemon below, small enough to reach.
MAX_FILES = 8
MAX_FILE = 4096
MAX_TOTAL = 10000


@pytest.fixture(scope="module")
def daemon():
    d = Daemon(languages=small(), workers=1,
               args=["--max-return-files", str(MAX_FILES),
                     "--max-return-file-size", str(MAX_FILE),
                     "--max-return-total-size", str(MAX_TOTAL)])
    yield d
    d.stop()


def program(body):
    """A py3 program that sets up its directory (its working directory),
    then prints ok."""
    return "import os, socket\n" + body + "\nprint('ok')\n"


def request(body, patterns, **extra):
    req = {"language": "py3", "source": program(body),
           "tests": [{"expected_stdout": "ok\n"}], "return_files": patterns}
    req.update(extra)
    return req


def files_of(answer):
    """The answer's files by path: (size, mode, content)."""
    out = {}
    for f in answer["files"]:
        assert set(f) == {"path", "size", "mode", "content_base64"}, f
        content = base64.b64decode(f["content_base64"], validate=True)
        assert f["size"] == len(content), f
        assert f["path"] not in out, "a file twice"
        out[f["path"]] = (f["size"], f["mode"], content)
    return out


WRITE = ("def put(path, data, mode=0o644):\n"
         "    d = os.path.dirname(path)\n"
         "    if d:\n"
         "        os.makedirs(d, exist_ok=True)\n"
         "    with open(path, 'wb') as f:\n"
         "        f.write(data)\n"
         "    os.chmod(path, mode)\n")


def test_files_come_back_with_content_size_and_mode(daemon):
    body = run(daemon, request(
        WRITE +
        "put('out.txt', b'hello\\n', 0o600)\n"
        "put('img.png', bytes(range(256)), 0o755)\n"
        "put('results/a.csv', b'1,2\\n')\n"
        "put('results/deeper/b.csv', b'no')\n"
        "put('results/notes.txt', b'no')\n"
        "put('keep/inside.txt', b'no: keep names the directory')\n",
        ["out.txt", "*.png", "results/*.csv", "keep"]))
    assert body["status"] == "accepted", dump(body)
    assert files_of(body) == {
        "out.txt": (6, "0600", b"hello\n"),
        "img.png": (256, "0755", bytes(range(256))),
        "results/a.csv": (4, "0644", b"1,2\n"),
    }
    assert body["files_left_out"] == 0
    # in path order, directory by directory
    assert [f["path"] for f in body["files"]] == ["img.png", "out.txt", "results/a.csv"]


@pytest.mark.parametrize("patterns,expected", [
    (["*.txt"], {"a.txt", "b.txt"}),
    (["*/*.txt"], {"d/c.txt"}),
    (["*", "*/*"], {"a.txt", "b.txt", "x.log", "d/c.txt", "d/e.log", "solution.py"}),
    (["?.txt"], {"a.txt", "b.txt"}),
    (["[a].*"], {"a.txt"}),
    (["d"], set()),
    (["d/*"], {"d/c.txt", "d/e.log"}),
    (["missing.txt", "nothing/*"], set()),
    ([], set()),
], ids=["star", "one level down", "everything two deep", "question mark", "bracket",
        "a directory's name takes none of its files", "a directory's files",
        "names that match nothing", "no pattern"])
def test_globs(daemon, patterns, expected):
    body = run(daemon, request(
        WRITE + "put('a.txt', b'a')\nput('b.txt', b'b')\nput('x.log', b'x')\n"
        "put('d/c.txt', b'c')\nput('d/e.log', b'e')\n", patterns))
    assert set(files_of(body)) == expected, dump(body)
    assert body["files_left_out"] == 0


def test_the_box_after_the_last_test(daemon):
    """Every test starts from the directory as the build left it; the
    files are read once, after the last test that ran."""
    req = {"language": "py3",
           "source": "s = input()\nopen('out.txt', 'w').write(s)\n"
                     "if s != 'second':\n    open('only-first.txt', 'w').write(s)\nprint(s)\n",
           "tests": [{"stdin": "first"}, {"stdin": "second"}],
           "return_files": ["*.txt"]}
    body = run(daemon, req)
    assert files_of(body) == {"out.txt": (6, "0644", b"second")}, dump(body)


def test_request_without_return_files_answers_as_before(daemon):
    body = run(daemon, {"language": "py3", "source": "print(1)", "tests": [{}]})
    assert "files" not in body and "files_left_out" not in body


def test_a_file_past_the_cap_is_left_out_not_cut(daemon):
    body = run(daemon, request(
        WRITE + "put('big.bin', b'x' * (%d + 1))\nput('fits.bin', b'y' * %d)\n"
        "f = open('sparse.bin', 'wb')\nf.truncate(1 << 20)\nf.close()\n" % (MAX_FILE, MAX_FILE),
        ["*.bin"]))
    assert set(files_of(body)) == {"fits.bin"}, dump(body)
    assert body["files_left_out"] == 2


def test_the_total_cap(daemon):
    """4 files of 3000 bytes: the total (10000) takes three, one is left out."""
    body = run(daemon, request(
        WRITE + "for i in range(4):\n    put('f%d' % i, b'z' * 3000)\n", ["f*"]))
    assert sorted(files_of(body)) == ["f0", "f1", "f2"], dump(body)
    assert body["files_left_out"] == 1


def test_many_files_stop_at_the_count(daemon):
    body = run(daemon, request(
        WRITE + "for i in range(500):\n    put('many/%03d.txt' % i, b'%d' % i)\n",
        ["many/*.txt"]))
    got = files_of(body)
    assert sorted(got) == ["many/%03d.txt" % i for i in range(MAX_FILES)], dump(body)
    assert body["files_left_out"] == 500 - MAX_FILES


@pytest.mark.parametrize("limits,files,left_out", [
    ({"max_files": 2}, ["a", "b"], 2),
    ({"max_file_bytes": 10}, ["a", "c"], 2),
    ({"max_total_bytes": 25}, ["a", "b", "c"], 1),
    # asking for more than the server's gives the server's
    ({"max_files": 1000, "max_file_bytes": 10 ** 12, "max_total_bytes": 10 ** 12},
     ["a", "b", "c", "d"], 0),
], ids=["count", "one file", "all together", "never above the server's"])
def test_a_request_asks_for_lower_caps(daemon, limits, files, left_out):
    # a: 5 bytes, b: 15, c: 5, d: 20
    body = run(daemon, request(
        WRITE + "put('a', b'1' * 5)\nput('b', b'2' * 15)\nput('c', b'3' * 5)\n"
        "put('d', b'4' * 20)\n", ["?"], return_files_limits=limits))
    assert sorted(files_of(body)) == files, dump(body)
    assert body["files_left_out"] == left_out


def test_hostile_directory(daemon):
    """A link out of the box (to a file and to a directory), a FIFO and a
    socket matched by the globs are never opened; a tree deeper than any
    pattern can reach is not walked, nor counted."""
    body = run(daemon, request(
        WRITE +
        "os.symlink('/etc/passwd', 'passwd.txt')\n"
        "os.symlink('/etc', 'etc')\n"
        "os.symlink('.', 'loop')\n"
        "os.mkfifo('pipe.txt')\n"
        "s = socket.socket(socket.AF_UNIX)\ns.bind('sock.txt')\n"
        "put('real.txt', b'mine')\n"
        "os.makedirs('/'.join(['d'] * 30))\n"
        "put('/'.join(['d'] * 7) + '/seven.txt', b'7')\n"
        "put('/'.join(['d'] * 12) + '/twelve.txt', b'12')\n",
        ["*.txt", "etc/*", "etc/passwd", "loop/*", "loop/loop/*.txt",
         "d/d/d/d/d/d/d/*", "*/*/*/*/*/*/*/*"]))
    assert body["status"] == "accepted", dump(body)
    got = files_of(body)
    assert got == {"real.txt": (4, "0644", b"mine"), "d/d/d/d/d/d/d/seven.txt": (1, "0644", b"7")}
    assert body["files_left_out"] == 0
    assert "root:" not in json.dumps(body)


def test_bad_patterns_are_refused(daemon):
    for patterns, code, path in [
        (["../etc/passwd"], "invalid_return_files", "return_files[0]"),
        (["ok.txt", "/etc/passwd"], "invalid_return_files", "return_files[1]"),
        (["a/../../x"], "invalid_return_files", "return_files[0]"),
        (["./x"], "invalid_return_files", "return_files[0]"),
        (["a//b"], "invalid_return_files", "return_files[0]"),
        (["dir/"], "invalid_return_files", "return_files[0]"),
        ([""], "invalid_return_files", "return_files[0]"),
        (["x" * 256], "invalid_return_files", "return_files[0]"),
        (["/".join(["*"] * 9)], "invalid_return_files", "return_files[0]"),
        (["a\u0000b"], "invalid_return_files", "return_files[0]"),
        (["f%d" % i for i in range(65)], "invalid_return_files", "return_files"),
        ("*.txt", "invalid_type", "return_files"),
        ([1], "invalid_type", "return_files[0]"),
    ]:
        code_got, body = daemon.post("/run", request("", patterns))
        assert code_got == 400, (patterns, dump(body))
        assert body["error"]["code"] == code, (patterns, body)
        assert body["error"]["path"] == path, (patterns, body)
        assert body["error"]["message"].startswith(path), body


def test_bad_limits_are_refused(daemon):
    for limits, path in [({"max_files": 0}, "return_files_limits.max_files"),
                         ({"max_file_bytes": -1}, "return_files_limits.max_file_bytes"),
                         ({"max_total_bytes": "1M"}, "return_files_limits.max_total_bytes"),
                         ({"max_files": 1.5}, "return_files_limits.max_files"),
                         ([], "return_files_limits")]:
        code, body = daemon.post("/run", request("", ["*"], return_files_limits=limits))
        assert code == 400, dump(body)
        assert body["error"]["code"] == "invalid_limits", body
        assert body["error"]["path"] == path, body
    code, body = daemon.post("/run", {"language": "py3", "source": "print(1)", "tests": [{}],
                                      "return_files_limits": {"max_files": 1}})
    assert code == 400 and body["error"]["code"] == "invalid_return_files", dump(body)


def test_a_failed_build_returns_none(daemon):
    body = run(daemon, {"language": "c", "source": "int main( {", "tests": [{}],
                        "return_files": ["*"]})
    assert body["status"] == "build_failed", dump(body)
    assert body["files"] == [] and body["files_left_out"] == 0


def test_the_streamed_answer_carries_them_in_its_last_line(daemon):
    req = request(WRITE + "put('out.txt', b'streamed')\nput('big', b'b' * %d)\n" % (MAX_FILE + 1),
                  ["out.txt", "big"])
    code, ordinary = daemon.post("/run", req)
    assert code == 200, dump(ordinary)
    status, raw, headers = daemon.request("POST", "/run", req, headers={"Accept": NDJSON})
    assert status == 200 and headers["Content-Type"] == NDJSON
    lines = [json.loads(l) for l in raw.splitlines()]
    last = lines[-1]
    assert last["type"] == "result", lines
    assert last["files"] == ordinary["files"]
    assert last["files_left_out"] == ordinary["files_left_out"] == 1
    assert files_of(last) == {"out.txt": (8, "0644", b"streamed")}
    assert all("files" not in l for l in lines[:-1])


def test_info_shows_the_caps(daemon):
    status, body = daemon.get("/info")
    assert status == 200
    lim = body["limits"]
    assert (lim["max_return_files"], lim["max_return_file_bytes"],
            lim["max_return_total_bytes"]) == (MAX_FILES, MAX_FILE, MAX_TOTAL)
