"""Nothing carries from test to test, and a job's disk is bounded like its
memory: IPC objects, files and file counts, through the real daemon.

The daemon of this module runs with a small job disk (32 MiB, 400 files)
so that the limits are reached in a fraction of a second.
"""
import os
import shutil
import subprocess
import tempfile
import threading
import time

import pytest

from conftest import Daemon, budget, dump, job_dir_holds, run_ok as run, small

DISK_MB = 32
DISK_FILES = 400


@pytest.fixture(scope="module")
def daemon():
    d = Daemon(languages=small(), args=["--job-disk-size", "%dM" % DISK_MB,
                     "--job-disk-files", str(DISK_FILES)])
    yield d
    d.stop()


# Test 0 ("make") leaves one object of each System V and POSIX IPC kind
# with a secret in it; every later test ("look") reports what it finds.
IPC = r'''
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <stdio.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>

#define KEY 0x60b0
struct msg { long type; char text[32]; };

int main(void)
{
	char cmd[16] = "";
	int found = 0;

	if (scanf("%15s", cmd) != 1)
		return 2;
	if (strcmp(cmd, "make") == 0) {
		int shm = shmget(KEY, 4096, IPC_CREAT | 0666);
		char *p = shm < 0 ? NULL : shmat(shm, NULL, 0);
		int sem = semget(KEY, 1, IPC_CREAT | 0666);
		int q = msgget(KEY, IPC_CREAT | 0666);
		struct msg m = { 1, "secret from test 0" };
		struct mq_attr a = { .mq_maxmsg = 4, .mq_msgsize = 32 };
		mqd_t mq = mq_open("/goboxd-secret", O_CREAT | O_WRONLY, 0666, &a);

		if (!p || p == (void *)-1 || sem < 0 || q < 0 || mq == (mqd_t)-1) {
			printf("make failed: %s\n", strerror(errno));
			return 1;
		}
		strcpy(p, "secret from test 0");
		if (msgsnd(q, &m, sizeof(m.text), 0) < 0 ||
		    mq_send(mq, "secret from test 0", 19, 0) < 0) {
			printf("send failed: %s\n", strerror(errno));
			return 1;
		}
		puts("made");
		return 0;
	}
	if (shmget(KEY, 0, 0) >= 0) { puts("shm"); found = 1; }
	if (semget(KEY, 0, 0) >= 0) { puts("sem"); found = 1; }
	if (msgget(KEY, 0) >= 0) { puts("msg"); found = 1; }
	if (mq_open("/goboxd-secret", O_RDONLY) != (mqd_t)-1) { puts("mqueue"); found = 1; }
	if (!found)
		puts("nothing");
	return 0;
}
'''


def test_ipc_objects_do_not_reach_the_next_test(daemon):
    body = run(daemon, {"language": "c", "source": IPC, "tests": [
        {"stdin": "make\n", "expected_stdout": "made\n"},
        {"stdin": "look\n", "expected_stdout": "nothing\n"},
        {"stdin": "look\n", "expected_stdout": "nothing\n"}]})
    assert [t["status"] for t in body["tests"]] == ["accepted"] * 3, dump(body)


# 200 MiB of System V shared memory, touched page by page, under a 64 MiB
# memory limit: the segment's pages are charged to the program.
SHM_HOG = r'''
#include <stdio.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/shm.h>

int main(void)
{
	size_t n = 200u << 20;
	int id = shmget(IPC_PRIVATE, n, IPC_CREAT | 0600);
	char *p = id < 0 ? NULL : shmat(id, NULL, 0);

	if (!p || p == (void *)-1) {
		puts("no segment");
		return 1;
	}
	for (size_t i = 0; i < n; i += 4096)
		p[i] = 1;
	puts("all of it");
	return 0;
}
'''


def test_shared_memory_counts_against_the_memory_limit(daemon):
    body = run(daemon, {"language": "c", "source": SHM_HOG,
                        "run": {"limits": {"memory_kb": 65536}},
                        "tests": [{"stdin": ""}]})
    assert body["tests"][0]["status"] == "memory_exceeded", dump(body)


# Writes 1 MiB blocks into numbered files until a write fails, then says
# why and exits 1 (as most programs do when they cannot write).
FILL_BYTES = r'''
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static char block[1 << 20];
	const char *dir = argc > 1 ? argv[1] : ".";
	long total = 0;
	char name[256];

	memset(block, 'x', sizeof(block));
	for (int f = 0; f < 1000; f++) {
		snprintf(name, sizeof(name), "%s/big%d", dir, f);
		int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0) {
			printf("open: %s after %ld MiB\n", strerror(errno), total);
			return 1;
		}
		for (int i = 0; i < 8; i++) {
			ssize_t n = write(fd, block, sizeof(block));
			if (n >= 0 && n < (ssize_t)sizeof(block))
				n = write(fd, block, sizeof(block) - n);   /* the error */
			if (n < (ssize_t)sizeof(block)) {
				printf("write: %s after %ld MiB\n", n < 0 ? strerror(errno) : "short",
				       total);
				return 1;
			}
			total++;
		}
		close(fd);
	}
	printf("wrote %ld MiB\n", total);
	return 0;
}
'''

FILL_FILES = r'''
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : ".";
	char name[256];

	for (long i = 0; i < 500000; i++) {
		snprintf(name, sizeof(name), "%s/f%ld", dir, i);
		int fd = open(name, O_WRONLY | O_CREAT, 0644);
		if (fd < 0) {
			printf("open: %s after %ld files\n", strerror(errno), i);
			return 1;
		}
		close(fd);
	}
	puts("made 500000 files");
	return 0;
}
'''


def fill(daemon, source, where="."):
    """One of the programs above, filling `where`, run as one test."""
    return run(daemon, {"language": "c",
                        "source": source.replace('argc > 1 ? argv[1] : "."', '"%s"' % where),
                        "run": {"limits": {"memory_kb": 262144}},
                        "tests": [{"stdin": ""}]})


def test_job_disk_caps_bytes(daemon):
    body = fill(daemon, FILL_BYTES)
    t = body["tests"][0]
    assert t["status"] == "disk_exceeded", dump(body)
    assert "No space left on device" in t["stdout"], dump(body)
    mib = int(t["stdout"].split("after ")[1].split()[0])
    assert mib < DISK_MB, dump(body)


def test_job_disk_caps_files(daemon):
    body = fill(daemon, FILL_FILES)
    t = body["tests"][0]
    assert t["status"] == "disk_exceeded", dump(body)
    assert "No space left on device" in t["stdout"], dump(body)
    assert int(t["stdout"].split("after ")[1].split()[0]) < DISK_FILES, dump(body)


def test_tmp_caps_files(daemon):
    """/tmp holds a quarter of the memory limit (64 MiB here) and at most
    twice as many files as pages, or the job disk's cap if larger."""
    body = fill(daemon, FILL_FILES, "/tmp")
    t = body["tests"][0]
    assert t["status"] == "disk_exceeded", dump(body)
    assert "No space left on device" in t["stdout"], dump(body)
    assert int(t["stdout"].split("after ")[1].split()[0]) < 2 * (64 << 20) // 4096, dump(body)


def test_a_full_disk_does_not_reach_the_next_test(daemon):
    """Each test starts from the build's files: the first fills the disk,
    the second writes a little and is accepted."""
    src = FILL_BYTES.replace("for (int f = 0; f < 1000; f++)",
                             "int first = getchar() == '1';\n\tfor (int f = 0; f < (first ? 1000 : 1); f++)")
    body = run(daemon, {"language": "c", "source": src, "tests": [
        {"stdin": "1"}, {"stdin": "2", "expected_stdout": "wrote 8 MiB\n"}]})
    assert [t["status"] for t in body["tests"]] == ["disk_exceeded", "accepted"], dump(body)


def test_a_successful_program_on_a_full_disk_is_judged_by_its_output(daemon):
    """The limit names a failure, it does not make one."""
    src = FILL_BYTES.replace('printf("write: %s after %ld MiB\\n", n < 0 ? strerror(errno) : "short",\n\t\t\t\t       total);\n\t\t\t\treturn 1;',
                             'puts("full, and fine");\n\t\t\t\treturn 0;')
    assert "full, and fine" in src
    body = run(daemon, {"language": "c", "source": src,
                        "tests": [{"stdin": "", "expected_stdout": "full, and fine\n"}]})
    assert body["tests"][0]["status"] == "accepted", dump(body)


# A build whose linker must write a binary larger than the job disk.
HUGE_BINARY = r'''
__asm__(".section .data\n.globl blob\nblob:\n.skip 48000000, 1\n.previous\n");
int main(void) { return 0; }
'''


def test_the_build_is_bounded_by_the_job_disk(daemon):
    """The linker meets a full disk, says so, and removes what it wrote."""
    body = run(daemon, {"language": "c", "source": HUGE_BINARY, "tests": [{"stdin": ""}]})
    assert body["status"] == "build_failed", dump(body)
    assert body["build"]["memory_exceeded"] is False, dump(body)
    assert "No space left on device" in body["build"]["stderr"], dump(body)


def test_a_build_past_its_file_size_limit_stops(daemon):
    """A file larger than the build's file_size_kb kills the assembler
    (SIGXFSZ), and the compiler driver says so."""
    body = run(daemon, {"language": "c", "source": HUGE_BINARY.replace("48000000", "24000000"),
                        "build": {"limits": {"file_size_kb": 16384}},
                        "tests": [{"stdin": ""}]})
    assert body["status"] == "build_failed", dump(body)
    assert "File size limit exceeded" in body["build"]["stderr"], dump(body)


def test_a_program_past_its_file_size_limit_is_told_so(daemon):
    """SIGXFSZ names the disk limit, though the job disk has room."""
    body = run(daemon, {"language": "c", "source": FILL_BYTES,
                        "run": {"limits": {"file_size_kb": 4096}},
                        "tests": [{"stdin": ""}]})
    t = body["tests"][0]
    assert t["status"] == "disk_exceeded", dump(body)
    assert t["signal"] == "SIGXFSZ", dump(body)


SLOW_WRITER = r'''
#include <stdio.h>
#include <unistd.h>
int main(void)
{
	FILE *f = fopen("marker", "w");
	fputs("x", f);
	fclose(f);
	sleep(2);
	return 0;
}
'''


def test_job_directories_are_not_on_the_host_disk(daemon):
    """While a job runs, its directory is in the worker's own job disk:
    the jail directory on the host holds none of it."""
    result = {}

    def job():
        result["body"] = run(daemon, {"language": "c", "source": SLOW_WRITER,
                                      "tests": [{"stdin": ""}]})

    t = threading.Thread(target=job)
    t.start()
    try:
        deadline = time.time() + 20
        seen = []
        while time.time() < deadline and not seen:
            for pid in daemon.worker_pids():
                root = "/proc/%d/root%s" % (pid, daemon.jail_dir)
                try:
                    for d in os.listdir(root):
                        if job_dir_holds(root, d, "marker"):
                            seen.append((pid, d))
                except OSError:
                    pass
            time.sleep(0.05)
        assert seen, "no worker showed the running job's directory"
        host = [d for d in os.listdir(daemon.jail_dir) if d.startswith("job-")]
        assert not any(d == s[1] for s in seen for d in host), host
        assert not any(job_dir_holds(daemon.jail_dir, d, "marker") for d in host), host
    finally:
        t.join()
    assert result["body"]["status"] == "accepted", dump(result["body"])


def test_the_job_disk_stays_out_of_the_host_mount_table():
    """The workers' mounts are made in namespaces that are slaves of the
    host's: none may show on the host, where it would cover the jail
    directory for everyone. The jail directory sits on a shared mount here
    (as on a systemd host, where / is shared), so that a mount made in a
    plain copy of the host's namespace would propagate back."""
    top = tempfile.mkdtemp(prefix="goboxd-shared-")
    os.chmod(top, 0o711)
    subprocess.run(["mount", "--bind", top, top], check=True)
    try:
        subprocess.run(["mount", "--make-shared", top], check=True)
        jails = os.path.join(top, "jails")
        d = Daemon(languages=small(), workers=1, args=["--jail-dir", jails])
        try:
            pid = d.worker_pids()[0]
            with open("/proc/%d/mountinfo" % pid) as f:
                assert any(" %s " % jails in line for line in f), \
                    "the worker has no job disk: the check below would see nothing"
            with open("/proc/self/mountinfo") as f:
                ours = [line for line in f if " %s " % jails in line]
            assert ours == [], ours
        finally:
            d.stop()
    finally:
        subprocess.run(["umount", "-l", top], check=False)
        shutil.rmtree(top, ignore_errors=True)


def test_a_killed_worker_leaves_nothing(daemon):
    """A worker killed in the middle of a job: its job disk goes with it."""
    result = {}

    def doomed():
        try:
            result["body"] = daemon.post("/run", {"language": "c", "source": SLOW_WRITER,
                                                  "tests": [{"stdin": ""}]})
        except OSError:
            pass

    before = set(daemon.worker_pids())
    t = threading.Thread(target=doomed)
    t.start()
    deadline = time.time() + 20
    victim = None
    while time.time() < deadline and victim is None:
        for pid in before:
            root = "/proc/%d/root%s" % (pid, daemon.jail_dir)
            try:
                if any(job_dir_holds(root, d, "marker") for d in os.listdir(root)):
                    victim = pid
            except OSError:
                pass
        time.sleep(0.05)
    assert victim, "no worker showed the running job's directory"
    os.kill(victim, 9)
    t.join()
    deadline = time.time() + 15
    while time.time() < deadline and (victim in daemon.worker_pids()
                                      or len(daemon.worker_pids()) < daemon.workers):
        time.sleep(0.1)
    assert not [d for d in os.listdir(daemon.jail_dir) if d.startswith("job-")
                and os.listdir(os.path.join(daemon.jail_dir, d))]
    assert daemon.leftovers() == []


def test_nothing_is_left_behind(daemon):
    assert daemon.leftovers() == []


# Reads 300 MiB of the system's libraries (their page cache is charged to
# the reader, and reclaimed at the memory limit), then sleeps past its wall
# time. It never holds more than one 1 MiB buffer of its own.
CACHE_READER = r'''
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int main(void)
{
	static char buf[1 << 20];
	const char *dir = "/usr/lib/x86_64-linux-gnu";
	long total = 0;
	DIR *d = opendir(dir);
	struct dirent *e;

	while (d && (e = readdir(d)) && total < (300L << 20)) {
		char path[512];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		int fd = open(path, O_RDONLY);
		if (fd < 0)
			continue;
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		ssize_t n;
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			total += n;
		close(fd);
	}
	printf("read %ld MiB\n", total >> 20);
	fflush(stdout);
	sleep(3600);
	return 0;
}
'''


@pytest.mark.slow
def test_page_cache_is_not_a_memory_verdict(daemon):
    """Killed for wall time after reading far more than its memory limit
    through the page cache: the kernel reclaimed, it killed nothing, so
    the verdict is the time limit; the resident peak shows how little the
    program itself held."""
    body = run(daemon, {"language": "c", "source": CACHE_READER,
                        "run": {"limits": {"memory_kb": 49152, "wall_time_s": budget(3),
                                                   "cpu_time_s": budget(3)}},
                        "tests": [{"stdin": ""}]})
    t = body["tests"][0]
    assert t["stdout"].startswith("read "), dump(body)
    assert int(t["stdout"].split()[1]) > 48, dump(body)
    assert t["status"] == "time_exceeded", dump(body)
    assert t["memory_rss_peak_kb"] < 16384, dump(body)


def test_the_next_job_gets_the_whole_disk():
    """One worker, jobs back to back: the files a job left must not stay
    on the job disk while the next job runs (its jail's teardown may wait,
    its files may not)."""
    d = Daemon(languages=small(), workers=1, args=["--job-disk-size", "%dM" % DISK_MB,
                                "--job-disk-files", str(DISK_FILES)])
    try:
        leave = FILL_BYTES.replace('printf("write: %s after %ld MiB\\n", n < 0 ? strerror(errno) : "short",\n\t\t\t\t       total);\n\t\t\t\treturn 1;',
                                   'puts("full");\n\t\t\t\treturn 0;')
        assert "full" in leave
        src = FILL_BYTES.replace("for (int f = 0; f < 1000; f++)", "for (int f = 0; f < 2; f++)")
        jobs = [{"language": "c", "source": leave,
                 "tests": [{"stdin": "", "expected_stdout": "full\n"}]}] * 3
        jobs.append({"language": "c", "source": src,
                     "tests": [{"stdin": "", "expected_stdout": "wrote 16 MiB\n"}]})
        bodies = [None] * len(jobs)

        def post(i):
            bodies[i] = run(d, jobs[i])

        # Queued together, so that each job starts as soon as the one
        # before it has answered, with no idle moment between them.
        threads = []
        for i in range(len(jobs)):
            threads.append(threading.Thread(target=post, args=(i,)))
            threads[-1].start()
            time.sleep(0.05)
        for t in threads:
            t.join()
        for b in bodies:
            assert b["status"] == "accepted", dump(b)
    finally:
        d.stop()
