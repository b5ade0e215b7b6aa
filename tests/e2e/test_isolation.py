"""Nothing carries from test to test: IPC objects, through the real daemon."""
import pytest

from conftest import Daemon, dump, run_ok as run


@pytest.fixture(scope="module")
def daemon():
    d = Daemon()
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
	sleep(30);
	return 0;
}
'''


def test_page_cache_is_not_a_memory_verdict(daemon):
    """Killed for wall time after reading far more than its memory limit
    through the page cache: the kernel reclaimed, it killed nothing, so
    the verdict is the time limit."""
    body = run(daemon, {"language": "c", "source": CACHE_READER,
                        "run": {"limits": {"memory_kb": 49152, "wall_time_s": 2}},
                        "tests": [{"stdin": ""}]})
    t = body["tests"][0]
    assert t["stdout"].startswith("read "), dump(body)
    assert int(t["stdout"].split()[1]) > 48, dump(body)
    assert t["status"] == "time_exceeded", dump(body)
