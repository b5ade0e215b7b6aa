"""Judge0's submissions: what one request for them can make a worker
hold. An answer of many submissions (GET /submissions/batch, a page of
GET /submissions) is held to --max-batch-answer-size and renders each
submission once however often it is asked for; an additional_files
archive is measured by its end records before libzip reads it.

What a worker holds is its peak RSS (VmHWM, set back to the current RSS
before each request: proc(5), clear_refs 5), over every worker, since
any may answer. Each test here failed before its bound was there."""
import base64
import io
import json
import os
import struct
import tempfile
import urllib.parse
import zipfile

import pytest

from conftest import Daemon, small, vm_kb, wait_until, without_quarantine

PY = 71
MiB = 1 << 20
CAP = 32 * MiB   # --max-batch-answer-size's default
TOO_BIG = "the answer would be larger than %d bytes (--max-batch-answer-size)"




def reset_peaks(pids):
    """VmHWM starts again from each one's RSS; the RSS of each, in KiB."""
    rss = {}
    for pid in pids:
        try:
            with open("/proc/%d/clear_refs" % pid, "w") as f:
                f.write("5")
        except PermissionError:
            pytest.skip("needs root: clear_refs of the workers")
        rss[pid] = vm_kb(pid, "VmRSS")
    return rss


def grown_kb(before):
    """The most any of the workers grew over its RSS of before, in KiB."""
    return max(vm_kb(pid, "VmHWM") - rss for pid, rss in before.items())




@pytest.fixture(scope="module")
def daemon():
    d = Daemon(languages=small(), args=["--metrics"], env=without_quarantine())
    yield d
    d.stop()


def finished(d, source):
    """A py3 submission run to its end: its token."""
    status, body = d.post("/submissions", {"language_id": PY, "source_code": source})
    assert status == 201, body
    token = body["token"]

    def done():
        status, body = d.get("/submissions/%s?fields=status_id" % token)
        assert status == 200, body
        return body["status_id"] > 2 and body
    got = wait_until(done, "submission %s finished" % token, timeout=60)
    assert got["status_id"] == 3, got
    return token


def printing(what, count):
    return "import sys\nsys.stdout.write(%r * %d)\n" % (what, count)


def metric(d, name):
    """A counter of /metrics; None where it has none of that name."""
    status, text = d.get("/metrics")
    assert status == 200
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return None


def test_the_same_big_submission_20_times_is_refused_before_it_is_built(daemon):
    """Before: 20 renderings of 6 MiB each (1 MiB of 0x01 is \\u0001 six
    times over), a 126 MB answer, 6 s of the loop, and the worker's peak
    grew by 235 to 240 MiB. Now the answer is measured as it is made: one rendering,
    and a refusal once the count passes the cap."""
    token = finished(daemon, printing("\x01", MiB))
    refused = metric(daemon, "goboxd_batch_answers_refused_total") or 0
    pids = daemon.worker_pids()
    before = reset_peaks(pids)
    status, body = daemon.get("/submissions/batch?tokens=" + ",".join([token] * 20),
                              timeout=60)
    grown = grown_kb(before)
    assert status == 400, str(body)[:300]
    assert body == {"error": (TOO_BIG % CAP) + "; ask for fewer tokens or fewer fields"}
    assert metric(daemon, "goboxd_batch_answers_refused_total") == refused + 1
    # one rendering (6 MiB and its tree): 16 MiB
    assert grown < 16 << 10, "a worker grew by %d KiB" % grown


def test_the_same_submission_20_times_within_the_cap_is_rendered_once(daemon):
    """20 entries of 1 MiB: the answer (20 MiB) is built, once, around
    one rendering. Before: 20 trees, their text and its copy, a peak of
    40 to 50 MiB."""
    token = finished(daemon, printing("x", MiB))
    pids = daemon.worker_pids()
    before = reset_peaks(pids)
    status, body, _ = daemon.request(
        "GET", "/submissions/batch?fields=token,stdout", headers={"tokens": ",".join([token] * 20)},
        timeout=60)
    grown = grown_kb(before)
    assert status == 200, str(body)[:300]
    assert body == {"submissions": [{"token": token, "stdout": "x" * MiB}] * 20}
    # the answer, its rendering, and 8 MiB for the rest
    assert grown < (20 + 1 + 8) << 10, "a worker grew by %d KiB" % grown


def test_the_cap_counts_every_entry_with_its_commas():
    """With a cap of 64 KiB: an answer of exactly 65,536 bytes (3 entries
    of a submission, an unknown token's null, the frame and the commas)
    passes; one more null, or one more entry, does not."""
    d = Daemon(languages=small(), args=["--max-batch-answer-size", "64K", "--metrics"])
    try:
        token = finished(d, printing("y", 21824))
        unknown = "00000000-0000-0000-0000-000000000000"
        one = len(json.dumps({"stdout": "y" * 21824}, separators=(",", ":")))
        assert len('{"submissions":[]}') + 3 * one + len("null") + 3 == 65536
        path = "/submissions/batch?fields=stdout&tokens="
        status, body, headers = d.request("GET", path + ",".join([token] * 3 + [unknown]))
        assert status == 200, str(body)[:300]
        assert body == {"submissions": [{"stdout": "y" * 21824}] * 3 + [None]}
        assert headers["Content-Length"] == "65536"
        refused = {"error": (TOO_BIG % 65536) + "; ask for fewer tokens or fewer fields"}
        for more in ([token] * 3 + [unknown] * 2, [token] * 4):
            status, body = d.get(path + ",".join(more))
            assert (status, body) == (400, refused), more
        assert metric(d, "goboxd_batch_answers_refused_total") == 2
    finally:
        d.stop()


def test_a_blank_token_between_commas_is_a_null_as_in_judge0(daemon):
    """Judge0 splits tokens.strip.split(","): " " between two commas is a
    token (of nothing), only empty ones at the end go. Before, trailing
    blanks and commas were all taken off."""
    token = finished(daemon, printing("z", 1))
    for given, want in (("%s, ," % token, [{"stdout": "z"}, None]),
                        (" %s,,%s,, " % (token, token), [{"stdout": "z"}, None, {"stdout": "z"}]),
                        (",%s" % token, [None, {"stdout": "z"}])):
        status, body = daemon.get("/submissions/batch?fields=stdout&tokens=" +
                                  urllib.parse.quote(given))
        assert (status, body) == (200, {"submissions": want}), given


def test_a_page_of_submissions_is_held_to_the_cap():
    with tempfile.NamedTemporaryFile("w", suffix=".tokens", delete=False) as f:
        f.write("a-token-of-sixteen-chars\n")
    os.chmod(f.name, 0o600)
    d = Daemon(languages=small(), args=["--max-batch-answer-size", "64K",
                                        "--auth-tokens", f.name])
    auth = {"X-Auth-Token": "a-token-of-sixteen-chars"}
    try:
        for _ in range(4):
            status, body, _ = d.request("POST", "/submissions", {
                "language_id": PY, "source_code": printing("p", 20000)}, headers=auth)
            assert status == 201, body

        def all_done():
            status, body, _ = d.request("GET", "/submissions?fields=status_id&per_page=10",
                                        headers=auth)
            assert status == 200, body
            return all(s["status_id"] > 2 for s in body["submissions"])
        wait_until(all_done, "4 submissions finished", timeout=60)
        status, body, _ = d.request("GET", "/submissions?fields=stdout&per_page=3", headers=auth)
        assert status == 200, str(body)[:300]
        assert body["submissions"] == [{"stdout": "p" * 20000}] * 3
        assert body["meta"]["total_count"] == 4
        status, body, _ = d.request("GET", "/submissions?fields=stdout&per_page=4", headers=auth)
        assert (status, body) == (400, {"error": (TOO_BIG % 65536) +
                                        "; ask for a smaller per_page or fewer fields"})
    finally:
        d.stop()
        os.unlink(f.name)


# ---- archives ------------------------------------------------------------


def central_only(n, zip64, broken=None):
    """An archive of n central records alone, as the issue's 219k-record
    one was made: no local header, no data (opening an archive, libzip
    reads only its directory), so that 200,000 fit a request. Its end
    record lists them in a zip64 end record, or modulo 65536 as Info-ZIP
    writes past 65535 (libzip then reads every record the directory's
    size holds). The record numbered broken has a wrong magic: libzip,
    should it read that far, refuses the archive in words of its own."""
    records = []
    for i in range(n):
        name = b"%x" % i
        records.append(struct.pack("<IHHHHHHIIIHHHHHII", 0x02014b51 if i == broken else 0x02014b50,
                                   0x031e, 20, 0, 0, 0, 0, 0, 0, 0, len(name), 0, 0, 0, 0,
                                   0o100644 << 16, 0) + name)
    cd = b"".join(records)
    if zip64:
        end64 = struct.pack("<IQHHIIQQQQ", 0x06064b50, 44, 45, 45, 0, 0, n, n, len(cd), 0)
        locator = struct.pack("<IIQI", 0x07064b50, 0, len(cd), 1)
        end = struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, 0xffff, 0xffff, 0xffffffff,
                          0xffffffff, 0)
        return cd + end64 + locator + end
    return cd + struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, n & 0xffff, n & 0xffff, len(cd), 0, 0)


def zipfile_of_empty_entries(n):
    """What Python's zipfile writes for n empty entries (zip64 past 65535)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        for i in range(n):
            z.writestr("%x" % i, b"")
    return out.getvalue()


def one_file_of(size):
    """An archive of about size bytes that any reader opens at no cost:
    one stored file, refused for its size (past --max-file-size) before
    its data is read."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        z.writestr("big.bin", os.urandom(size - 100))
    return out.getvalue()


def refused_archive(archive, args=()):
    """POST the archive as additional_files to a daemon of one worker of
    its own: the 422's message, and how much the worker's peak grew, in
    KiB. Its own daemon: what a worker's heap kept from an earlier
    request would hide part of what this one takes."""
    sub = {"language_id": PY, "source_code": "print(1)",
           "additional_files": base64.b64encode(archive).decode()}
    d = Daemon(languages=small(), workers=1, args=list(args), env=without_quarantine())
    try:
        status, body = d.post("/submissions", {"language_id": PY, "source_code": "print(1)"})
        assert status == 201, body
        before = reset_peaks(d.worker_pids())
        status, body = d.post("/submissions", sub, timeout=60)
        grown = grown_kb(before)
        assert status == 422, str(body)[:300]
        return body["additional_files"], grown
    finally:
        d.stop()


def costs_no_more_than_its_bytes(archive, args=()):
    """What the archive made its worker hold, against what an archive of
    the same size that costs nothing to open did: the body, its JSON
    tree and the archive decoded cost 7 times the archive in both. The
    difference is what reading the archive cost: under 200 KiB here,
    23 to 37 MiB before."""
    errors, grown = refused_archive(archive, args)
    base_errors, base = refused_archive(one_file_of(len(archive)), args)
    assert base_errors == ['entry "big.bin": larger than 262144 bytes'], base_errors
    assert grown < base + (4 << 10), \
        "a worker grew by %d KiB, by %d KiB for as many bytes of one file" % (grown, base)
    return errors


@pytest.mark.parametrize("zip64", [True, False], ids=["zip64", "info-zip-count"])
def test_a_zip_of_200000_entries_is_refused_from_its_end_record(zip64):
    """Before: libzip parsed every record (a second of the loop and
    40 MiB more than the archive's bytes) before the count was compared
    with --max-files, and a record broken at 150,000 made it say "not a
    zip archive". Now the end record says it, or, where it lists 5
    (196,613 modulo 65536), the 11th record."""
    n = 200000 if zip64 else 3 * 65536 + 5
    archive = central_only(n, zip64, broken=150000)
    assert len(archive) * 4 // 3 < 15 * MiB  # within the body's cap
    errors = costs_no_more_than_its_bytes(archive)
    want = "more than 10 files (its end record lists 200000)" if zip64 else \
        "more than 10 files"
    assert errors == [want], errors


def test_a_zipfile_of_200000_empty_entries_is_refused_from_its_end_record():
    """The same from Python's zipfile (local headers, data, a zip64 end
    record): 17 MB, so the body's cap is raised for it."""
    errors = costs_no_more_than_its_bytes(zipfile_of_empty_entries(200000),
                                          ["--max-run-body-size", "32M"])
    assert errors == ["more than 10 files (its end record lists 200000)"], errors


def test_extra_fields_are_bounded(daemon):
    """An entry with 1,025 bytes of extra fields (an empty field of 1,021
    bytes and its header) is refused; 1,024 pass."""
    def with_extra(n):
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as z:
            info = zipfile.ZipInfo("data.txt")
            info.extra = struct.pack("<HH", 0x6666, n - 4) + b"\0" * (n - 4)
            z.writestr(info, b"1 2\n")
        return base64.b64encode(out.getvalue()).decode()
    sub = {"language_id": PY, "source_code": "print(open('data.txt').read().split())",
           "additional_files": with_extra(1024)}
    status, body = daemon.post("/submissions?wait=true", sub)
    assert status == 201 and body["stdout"] == "['1', '2']\n", body
    sub["additional_files"] = with_extra(1025)
    status, body = daemon.post("/submissions", sub)
    assert (status, body) == (422, {"additional_files": [
        'entry "data.txt": 1025 bytes of extra fields, more than 1024']}), body
