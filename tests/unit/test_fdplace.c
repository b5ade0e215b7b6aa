/*
 * initmsg_place_fds, the fd hand-over of both pre-exec children (the
 * worker's for the jail binary, the init's for each program). Each case
 * runs in a child process of its own, which closes every fd it has, opens
 * one distinct file (a memfd) at each source number the case names, adds
 * two strays, places, and then checks every fd by its inode: what sits at
 * each target, which targets close on exec, and that nothing else is
 * open. The child says what it found in its exit code.
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/util.h"
#include "worker/sandbox/initmsg.h"

#define MAX_PLACED 8
/* Open before the placement and not named by any case: must end closed. */
#define STRAY_LOW 9
#define STRAY_HIGH 40
/* Where the case's files are made before they move to their numbers. */
#define SCRATCH 100

struct place_case {
	const char *name;
	int from[MAX_PLACED];   /* target i takes the fd from[i] */
	int n;
	int cloexec_from;
};

static const struct place_case cases[] = {
	{ "already in place", { 0, 1, 2, 3 }, 4, 3 },
	{ "all above the targets", { 10, 11, 12, 13 }, 4, 3 },
	{ "a swap", { 1, 0 }, 2, 1 },
	{ "reversed: two swaps", { 3, 2, 1, 0 }, 4, 3 },
	{ "a rotation: each on the next one's target", { 1, 2, 3, 0 }, 4, 3 },
	{ "shifted down onto each other", { 2, 3, 4, 5 }, 4, 3 },
	{ "shifted up onto each other", { 5, 0, 1, 2 }, 4, 3 },
	{ "the error pipe on stdin's target", { 6, 7, 8, 0 }, 4, 3 },
	{ "one fd at two targets (the launcher's log)", { 12, 6, 6, 0, 3 }, 5, 4 },
	{ "one fd at every target", { 2, 2, 2 }, 3, 3 },
};

/* The child's findings, as its exit code. */
enum {
	PLACE_OK = 0,
	PLACE_SETUP = 1,        /* the test could not arrange the case */
	PLACE_FAILED = 2,       /* initmsg_place_fds returned an error */
	PLACE_FDS_NOT_UPDATED = 3,
	PLACE_LEFT_OPEN = 4,    /* an fd from n up survived */
	PLACE_WRONG_FILE = 10,  /* + the target */
	PLACE_WRONG_CLOEXEC = 20, /* + the target */
};

static ino_t inode_of(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 ? st.st_ino : 0;
}

/* Open a distinct file at fd `at` (any fd there is replaced), close-on-exec
 * as every fd of the real callers is. */
static bool open_at(int at, int k)
{
	int fd = (int)syscall(SYS_memfd_create, "fdplace", MFD_CLOEXEC);
	int high = fd < 0 ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, SCRATCH + k);

	if (high < 0)
		return false;
	close(fd);
	if (dup3(high, at, O_CLOEXEC) < 0)
		return false;
	close(high);
	return true;
}

/* In the child: arrange, place, check. Returns an exit code. */
static int place_and_check(const struct place_case *c)
{
	ino_t want[MAX_PLACED];
	int fds[MAX_PLACED];
	int rc;

	syscall(SYS_close_range, 0U, ~0U, 0);
	for (int i = 0; i < c->n; i++) {
		bool seen = false;

		for (int j = 0; j < i; j++)
			seen = seen || c->from[j] == c->from[i];
		if (!seen && !open_at(c->from[i], i))
			return PLACE_SETUP;
	}
	if (!open_at(STRAY_LOW, MAX_PLACED) || !open_at(STRAY_HIGH, MAX_PLACED + 1))
		return PLACE_SETUP;
	for (int i = 0; i < c->n; i++) {
		want[i] = inode_of(c->from[i]);
		fds[i] = c->from[i];
		if (want[i] == 0)
			return PLACE_SETUP;
	}
	rc = initmsg_place_fds(fds, c->n, c->cloexec_from);
	if (rc < 0)
		return PLACE_FAILED;
	for (int i = 0; i < c->n; i++) {
		int fl = fcntl(i, F_GETFD);

		if (fds[i] != i)
			return PLACE_FDS_NOT_UPDATED;
		if (inode_of(i) != want[i])
			return PLACE_WRONG_FILE + i;
		if (fl < 0 || !!(fl & FD_CLOEXEC) != (i >= c->cloexec_from))
			return PLACE_WRONG_CLOEXEC + i;
	}
	for (int fd = c->n; fd < SCRATCH + 2 * MAX_PLACED; fd++)
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			return PLACE_LEFT_OPEN;
	return PLACE_OK;
}

Test(fdplace, every_case_lands_on_its_targets)
{
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		int status = 0;
		pid_t pid = fork();

		cr_assert_geq(pid, 0, "fork: %s", strerror(errno));
		if (pid == 0)
			_exit(place_and_check(&cases[i]));
		cr_assert_eq(waitpid(pid, &status, 0), pid);
		cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == PLACE_OK,
			  "%s: the child found %d (status %#x)", cases[i].name,
			  WIFEXITED(status) ? WEXITSTATUS(status) : -1, status);
	}
}

/* A failure leaves fds[] naming fds that are still open, so that the
 * caller can report through its error pipe. */
Test(fdplace, a_failure_leaves_every_fd_usable)
{
	int p[2];
	int fds[2];

	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	fds[0] = p[0];
	fds[1] = 1 << 20;       /* not open: the first copy fails */
	cr_assert_eq(initmsg_place_fds(fds, 2, 1), -EBADF);
	cr_expect_geq(fcntl(fds[0], F_GETFD), 0, "fds[0] = %d is closed", fds[0]);
	cr_expect_eq(inode_of(fds[0]), inode_of(p[0]));
	if (fds[0] != p[0])
		close(fds[0]);
	close(p[0]);
	close(p[1]);
}
