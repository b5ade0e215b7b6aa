"""The build cache: a successful build kept under the jail dir, keyed by
everything that decides it, taken instead of running the same build again.

Every test starts a daemon of its own (or two: a restart) so that the
cache's counters and contents are the test's alone. Sources carry a token
of their own, so that no two tests share a build.
"""
import base64
import hashlib
import os
import pathlib
import re
import shutil
import signal
import tempfile
import threading
import time
import uuid

import pytest

from conftest import Daemon, dump, small

HELLO_C = """#include <stdio.h>
/* %(token)s */
int main(void) { puts("%(say)s"); return 0; }
"""


def c_source(say="hi", token=None):
    return HELLO_C % {"token": token or uuid.uuid4().hex, "say": say}


def c_request(source, language="c", **extra):
    req = {"language": language, "source": source, "tests": [{}]}
    req.update(extra)
    return req


def run(daemon, req):
    status, body = daemon.post("/run", req)
    assert status == 200, dump(body)
    assert body["build"]["status"] == "ok", dump(body)
    return body


def metrics(daemon):
    status, text = daemon.get("/metrics")
    assert status == 200
    out = {}
    for line in text.splitlines():
        m = re.match(r"^(goboxd_build_cache_\w+) (\d+)$", line)
        if m:
            out[m.group(1)[len("goboxd_build_cache_"):]] = int(m.group(2))
    return out


def cache_dir(daemon):
    return os.path.join(daemon.jail_dir, "build-cache")


def entries(daemon):
    try:
        names = os.listdir(cache_dir(daemon))
    except FileNotFoundError:
        return []
    return sorted(n for n in names if re.fullmatch(r"[0-9a-f]{64}", n))


def leftovers(daemon):
    return sorted(n for n in os.listdir(cache_dir(daemon)) if n.startswith("."))


@pytest.fixture
def daemon():
    d = Daemon(languages=small("rust"), args=["--metrics"])
    yield d
    d.stop()


def test_miss_then_hit_with_the_builds_own_output(daemon):
    # a warning on stderr: the hit must show it as the build printed it
    src = c_source("hello") + "int unused(int x) { int y; return x; }\n"
    first = run(daemon, c_request(src, build={"flags": ["-Wall", "-O2"]}))
    assert first["build"]["cached"] is False
    assert first["tests"][0]["stdout"] == "hello\n"
    assert "unused variable" in first["build"]["stderr"], dump(first)
    second = run(daemon, c_request(src, build={"flags": ["-Wall", "-O2"]}))
    assert second["build"]["cached"] is True, dump(second)
    assert second["tests"][0]["stdout"] == "hello\n"
    assert second["status"] == "accepted"
    # the build's own record, as it was
    for field in ("stdout", "stderr", "duration_ms", "cpu_time_ms", "memory_peak_kb",
                  "exit_code", "signal", "timed_out"):
        assert second["build"][field] == first["build"][field], field
    m = metrics(daemon)
    assert m["hits_total"] == 1 and m["misses_total"] == 1, m
    assert m["bytes"] > 0 and m["evictions_total"] == 0, m
    assert len(entries(daemon)) == 1 and leftovers(daemon) == []


def test_a_failed_build_is_not_kept(daemon):
    src = c_source() + "this is not C\n"
    for _ in range(2):
        status, body = daemon.post("/run", c_request(src))
        assert status == 200
        assert body["build"]["status"] == "failed" and body["build"]["cached"] is False
    assert entries(daemon) == []


HEADER_C = """#include <stdio.h>
#include "lib.h"
/* %s */
int main(void) {
#ifdef __cplusplus
    puts("cpp " VALUE);
#else
    puts("c " VALUE);
#endif
    return 0;
}
"""


def header_request(token, language="c", value="1", flags=None, name="lib.h"):
    req = {"language": language, "source": HEADER_C % token, "tests": [{}],
           "files": [{"name": name, "content": '#define VALUE "%s"\n' % value}]}
    if flags is not None:
        req["build"] = {"flags": flags}
    return req


# Each differs from the first request in one thing that decides the build;
# none may get the first one's artifact.
@pytest.mark.parametrize("change,expect", [
    ({"value": "2"}, "c 2"),                                  # an extra file's contents
    ({"flags": ["-O2", "-DVALUE_UNUSED=1"]}, "c 1"),          # the flags
    ({"language": "cpp"}, "cpp 1"),                           # the language entry
])
def test_a_different_build_never_gets_the_cached_artifact(daemon, change, expect):
    token = uuid.uuid4().hex
    first = run(daemon, header_request(token, flags=["-O2"]))
    assert first["tests"][0]["stdout"] == "c 1\n"
    again = run(daemon, header_request(token, flags=["-O2"]))
    assert again["build"]["cached"] is True
    args = dict({"flags": ["-O2"]}, **change)
    other = run(daemon, header_request(token, **args))
    assert other["build"]["cached"] is False, dump(other)
    assert other["tests"][0]["stdout"] == expect + "\n", dump(other)
    assert len(entries(daemon)) == 2


def test_a_different_source_never_gets_the_cached_artifact(daemon):
    token = uuid.uuid4().hex
    run(daemon, c_request(c_source("one", token)))
    assert run(daemon, c_request(c_source("one", token)))["build"]["cached"] is True
    # the same length, one byte apart
    other = run(daemon, c_request(c_source("two", token)))
    assert other["build"]["cached"] is False
    assert other["tests"][0]["stdout"] == "two\n"


def test_an_extra_files_name_is_part_of_the_key(daemon):
    token = uuid.uuid4().hex
    req = header_request(token)
    req["files"].append({"name": "a.txt", "content": "x"})
    run(daemon, req)
    req["files"][1]["name"] = "b.txt"
    body = run(daemon, req)
    assert body["build"]["cached"] is False
    assert run(daemon, req)["build"]["cached"] is True


def test_cache_off_with_zero():
    d = Daemon(languages=small("rust"), args=["--metrics", "--build-cache-mb", "0"])
    try:
        src = c_source()
        for _ in range(2):
            assert run(d, c_request(src))["build"]["cached"] is False
        assert not os.path.exists(cache_dir(d))
        assert metrics(d) == {"hits_total": 0, "misses_total": 0, "evictions_total": 0,
                              "bytes": 0}
    finally:
        d.stop()


BIG_C = """#include <stdio.h>
/* %s */
static const char big[400000] = { 1 };
int main(int argc, char **argv) {
    const char *volatile p = big;  /* kept whole in the binary */
    (void)argv;
    printf("%%d\\n", p[argc - 1] + p[399999]);
    return 0;
}
"""


def test_least_recently_used_is_evicted():
    # each entry is about 420 kB: two fit in 1 MiB, three do not
    d = Daemon(languages=small("rust"), args=["--metrics", "--build-cache-mb", "1"])
    try:
        a, b, c = (c_request(BIG_C % uuid.uuid4().hex) for _ in range(3))
        run(d, a)
        run(d, b)
        assert len(entries(d)) == 2
        time.sleep(0.05)
        assert run(d, a)["build"]["cached"] is True  # a is now the most recent
        time.sleep(0.05)
        run(d, c)
        m = metrics(d)
        assert m["evictions_total"] == 1, m
        assert 0 < m["bytes"] <= 1 << 20, m
        assert len(entries(d)) == 2
        assert run(d, a)["build"]["cached"] is True
        assert run(d, c)["build"]["cached"] is True
        assert run(d, b)["build"]["cached"] is False  # b was the one to go
    finally:
        d.stop()


def test_an_entry_bigger_than_the_cache_is_not_kept():
    d = Daemon(languages=small("rust"), args=["--metrics", "--build-cache-mb", "1"])
    try:
        src = BIG_C.replace("400000", "1100000").replace("399999", "1099999") % uuid.uuid4().hex
        for _ in range(2):
            assert run(d, c_request(src))["build"]["cached"] is False
        assert entries(d) == [] and leftovers(d) == []
    finally:
        d.stop()


def test_corrupt_entries_and_crash_leftovers_are_ignored_and_swept():
    d = Daemon(languages=small("rust"), args=["--metrics"])
    try:
        src = c_source("fine")
        run(d, c_request(src))
        [entry] = entries(d)
        path = os.path.join(cache_dir(d), entry)
        # a partial entry: its meta lost
        os.unlink(os.path.join(path, "meta"))
        body = run(d, c_request(src))
        assert body["build"]["cached"] is False, dump(body)
        assert body["tests"][0]["stdout"] == "fine\n"
        # rebuilt and kept again
        assert entries(d) == [entry]
        assert run(d, c_request(src))["build"]["cached"] is True
        # an entry whose meta lies about its outputs
        meta = os.path.join(path, "meta")
        with open(meta) as f:
            text = f.read()
        with open(meta, "w") as f:
            f.write(re.sub(r"\nstderr \d+\n", "\nstderr 999\n", text))
        assert run(d, c_request(src))["build"]["cached"] is False
        # what a crash leaves: a half-written entry and one half removed
        for name in (".tmp-999999-0123456789abcdef", ".old-999999-0123456789abcdef"):
            os.makedirs(os.path.join(cache_dir(d), name, "tree"))
            with open(os.path.join(cache_dir(d), name, "tree", "solution"), "w") as f:
                f.write("junk")
        # swept by the next worker that starts (a respawn after a crash, a reload)
        old = d.worker_pids()
        d.proc.send_signal(signal.SIGHUP)
        deadline = time.time() + 30
        while time.time() < deadline and (leftovers(d) or set(d.worker_pids()) & set(old)):
            time.sleep(0.1)
        assert leftovers(d) == []
        assert run(d, c_request(src))["build"]["cached"] is True
    finally:
        d.stop()


def test_concurrent_identical_submissions():
    d = Daemon(languages=small("rust"), args=["--metrics"], workers=2)
    try:
        src = c_source("same")
        results = []

        def client():
            results.append(d.post("/run", c_request(src)))

        threads = [threading.Thread(target=client) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(results) == 4
        for status, body in results:
            assert status == 200 and body["status"] == "accepted", dump(body)
            assert body["tests"][0]["stdout"] == "same\n"
        assert len(entries(d)) == 1 and leftovers(d) == []
        assert run(d, c_request(src))["build"]["cached"] is True
        m = metrics(d)
        assert m["hits_total"] + m["misses_total"] == 5, m
    finally:
        d.stop()


def test_survives_reload_and_restart():
    d = Daemon(languages=small("rust"), args=["--metrics"], workers=1)
    src = c_source("kept")
    try:
        run(d, c_request(src))
        old = d.worker_pids()
        d.proc.send_signal(signal.SIGHUP)
        deadline = time.time() + 30
        while time.time() < deadline and set(d.worker_pids()) & set(old):
            time.sleep(0.1)
        assert not set(d.worker_pids()) & set(old), "no new generation"
        assert run(d, c_request(src))["build"]["cached"] is True
    finally:
        d.stop()
    e = Daemon(languages=small("rust"), args=["--metrics", "--jail-dir", d.jail_dir], workers=1)
    try:
        assert metrics(e)["bytes"] > 0  # counted at start
        body = run(e, c_request(src))
        assert body["build"]["cached"] is True
        assert body["tests"][0]["stdout"] == "kept\n"
    finally:
        e.stop()


# The program tries to change the file it was handed from the cache: by
# its name, through a hard link of its own, by its modes. With
# --job-disk-size 0 the job directory and the cache share a filesystem, so
# the worker hard-links; with the job disk it copies.
TAMPER_C = """#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
/* %s */
static int try_write(const char *name)
{
    int fd = open(name, O_WRONLY);
    if (fd < 0)
        return errno;
    return write(fd, "EVIL", 4) == 4 ? 0 : errno;
}
int main(void)
{
    printf("original\\n");
    printf("write %%s\\n", strerror(try_write("solution")));
    printf("chmod %%s\\n", chmod("solution", 0777) ? strerror(errno) : "ok");
    printf("chown %%s\\n", chown("solution", getuid(), getgid()) ? strerror(errno) : "ok");
    if (link("solution", "mine") == 0)
        printf("link write %%s\\n", strerror(try_write("mine")));
    printf("truncate %%s\\n", truncate("solution", 0) ? strerror(errno) : "ok");
    return 0;
}
"""


@pytest.mark.parametrize("disk", ["0", "64M"])
def test_a_program_cannot_change_a_cached_file(disk):
    d = Daemon(languages=small("rust"), args=["--metrics", "--job-disk-size", disk])
    try:
        req = c_request(TAMPER_C % uuid.uuid4().hex)
        first = run(d, req)
        [entry] = entries(d)
        cached = os.path.join(cache_dir(d), entry, "tree", "solution")
        with open(cached, "rb") as f:
            before = hashlib.sha256(f.read()).hexdigest()
        st = os.stat(cached)
        assert st.st_uid == 0 and st.st_mode & 0o222 == 0, oct(st.st_mode)
        for _ in range(2):
            body = run(d, req)
            assert body["build"]["cached"] is True
            out = body["tests"][0]["stdout"]
            assert out.startswith("original\n"), out
            for verb in ("write", "chmod", "chown", "truncate"):
                assert re.search(r"^%s (Permission denied|Operation not permitted)$" % verb,
                                 out, re.M), out
            assert "link write Permission denied" in out or "link write" not in out, out
        with open(cached, "rb") as f:
            assert hashlib.sha256(f.read()).hexdigest() == before
        st = os.stat(cached)
        assert st.st_uid == 0 and st.st_mode & 0o222 == 0, oct(st.st_mode)
        assert first["tests"][0]["stdout"].startswith("original\n")
    finally:
        d.stop()


def test_codize_compile_step_is_cached():
    d = Daemon(languages=small("rust"), args=["--metrics"])
    try:
        src = 'fn main() { println!("rs %s"); }\n' % uuid.uuid4().hex[:8]
        req = {"runtime": "rust", "files": [{"name": "main.rs", "content": src}]}
        outs = []
        for _ in range(2):
            status, body = d.post("/v1/run", req)
            assert status == 200, dump(body)
            outs.append(base64.b64decode(body["run"]["stdout"]))
            assert "cached" not in body["compile"]  # Codize's schema, unchanged
        assert outs[0] == outs[1] and outs[0].startswith(b"rs ")
        m = metrics(d)
        assert m["hits_total"] == 1 and m["misses_total"] == 1, m
    finally:
        d.stop()


TOOL_LANGUAGE = """id: tooled
name: A toolchain run from a shell script
version: "the same version string, whatever the tool is"
source_filename: input.txt
artifact: out
mounts: [%(dir)s]
build:
  cmd: /bin/sh
  args: ["-c", "%(dir)s/gen < {{source}} > out"]
  limits: {wall_time_s: 10, cpu_time_s: 5, memory_kb: 262144, max_processes: 16,
           file_size_kb: 1024, output_kb: 64}
run:
  cmd: /bin/cat
  args: [out]
  limits: {wall_time_s: 3, memory_kb: 262144, max_processes: 4, output_kb: 64}
probe: [/bin/sh, -c, "true"]
"""


def put_tool(path, version):
    """Replaces the tool as a package upgrade does: a new file renamed
    over the old one (a new inode)."""
    with open(path + ".new", "w") as f:
        f.write("#!/bin/sh\necho %s\n" % version)
    os.chmod(path + ".new", 0o755)
    os.rename(path + ".new", path)


def test_a_toolchain_upgraded_in_place_is_part_of_the_key():
    """A compiler that the build command names only inside a shell script
    (as go, asm and erlang's are) still identifies the build: after the
    tool is replaced, the same request builds again with the new one."""
    # not under /tmp: each program has a fresh /tmp over it
    top = pathlib.Path(tempfile.mkdtemp(prefix="goboxd-e2e-tool-", dir="/var/tmp"))
    tool_dir = top / "tool"
    langs = top / "languages"
    tool_dir.mkdir()
    langs.mkdir()
    for p in (top, tool_dir):
        os.chmod(p, 0o755)  # the sandbox uids must reach the tool
    put_tool(str(tool_dir / "gen"), "v1")
    (langs / "tooled.yaml").write_text(TOOL_LANGUAGE % {"dir": tool_dir})
    d = Daemon(args=["--metrics"], languages=str(langs))
    try:
        req = {"language": "tooled", "source": uuid.uuid4().hex, "tests": [{}]}
        first = run(d, req)
        assert (first["build"]["cached"], first["tests"][0]["stdout"]) == (False, "v1\n")
        assert run(d, req)["build"]["cached"] is True
        put_tool(str(tool_dir / "gen"), "v2")
        after = run(d, req)
        assert after["build"]["cached"] is False, dump(after)
        assert after["tests"][0]["stdout"] == "v2\n", dump(after)
    finally:
        d.stop()
        shutil.rmtree(top, ignore_errors=True)


# A build that runs code of its own (a macro, staticExec, a build script)
# may leave files that take little on the job disk but much more once
# copied: here holes (sparse files). The cache copies every file whole.
SPARSE_LANG = """id: sparse
name: A build that leaves holes
source_filename: build.sh
artifact: solution
build:
  cmd: /bin/sh
  args: ["{{source}}"]
  limits:
    wall_time_s: 20
    memory_kb: 262144
    max_processes: 16
    file_size_kb: 262144
run:
  cmd: /bin/sh
  args: ["{{artifact}}"]
probe: [/bin/sh, -c, "exit 0"]
"""

# 3 holes of 16 MiB: 48 MiB once copied, nothing on a tmpfs
SPARSE_BUILD = """# %s
printf 'echo built\\n' > solution
/usr/bin/truncate -s 16M hole1 hole2 hole3
"""


@pytest.fixture
def sparse_languages(tmp_path):
    with open(os.path.join(tmp_path, "sparse.yaml"), "w") as f:
        f.write(SPARSE_LANG)
    os.chmod(tmp_path, 0o755)
    return str(tmp_path)


def sparse_request():
    return {"language": "sparse", "source": SPARSE_BUILD % uuid.uuid4().hex,
            "tests": [{"expected_stdout": "built\n"}]}


def run_built(daemon, req):
    body = run(daemon, req)
    assert body["status"] == "accepted", dump(body)
    return body


def test_an_entry_that_does_not_fit_the_job_disk_is_built_again(sparse_languages):
    # kept by a daemon whose job disk holds its copy...
    d = Daemon(args=["--metrics", "--job-disk-size", "256M"], languages=sparse_languages)
    req = sparse_request()
    try:
        run_built(d, req)
        assert len(entries(d)) == 1
        assert run_built(d, req)["build"]["cached"] is True
    finally:
        d.stop()
    # ...and taken by one whose job disk does not: the copy fails half-way,
    # the entry goes, the build runs (and is not kept again)
    e = Daemon(args=["--metrics", "--jail-dir", d.jail_dir, "--job-disk-size", "32M"],
               languages=sparse_languages)
    try:
        for _ in range(2):
            status, body = e.post("/run", req)
            assert status == 200, dump(body)
            assert body["status"] == "accepted", dump(body)
            assert body["build"]["cached"] is False
        assert entries(d) == [] and leftovers(d) == []  # e shares d's jail dir
        m = metrics(e)
        assert m["hits_total"] == 0 and m["misses_total"] == 2, m
        assert "could not be taken" in e.read_log()
    finally:
        e.stop()


def test_an_entry_whose_copy_would_not_fit_the_job_disk_is_not_kept(sparse_languages):
    d = Daemon(args=["--metrics", "--job-disk-size", "32M"], languages=sparse_languages)
    try:
        req = sparse_request()
        run_built(d, req)
        assert entries(d) == [] and leftovers(d) == []
        assert run_built(d, req)["build"]["cached"] is False
        assert "not kept in the build cache" in d.read_log()
        assert "could not be taken" not in d.read_log()
    finally:
        d.stop()
