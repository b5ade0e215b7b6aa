/*
 * The process management protocol's server (worker/sandbox/procctl.c) against real
 * FIFOs in a temporary directory, with a fake program behind it and a
 * client in a child process that opens, writes and reads as an interactor
 * would (blocking calls, as a plain client makes them).
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/util.h"
#include "worker/sandbox/procctl.h"

/* ---- the answer's text ---------------------------------------------------- */

Test(procctl, format_running)
{
	struct procctl_status st = { .cpu_us = 1234, .memory_bytes = 8192, .state = PCS_RUNNING };
	char buf[128];

	procctl_format(&st, NULL, buf, sizeof(buf));
	cr_assert_str_eq(buf, "1234\n8192\nrunning\n");
}

Test(procctl, format_states)
{
	static const struct {
		enum procctl_state state;
		int code;
		const char *line;
	} cases[] = {
		{ PCS_EXITED, 3, "exited with code 3" },
		{ PCS_SIGNALED, 11, "killed by signal 11 (SIGSEGV)" },
		{ PCS_TIME, 0, "killed: time limit" },
		{ PCS_MEMORY, 0, "killed: memory limit" },
		{ PCS_OUTPUT, 0, "killed: output limit" },
		{ PCS_TERMINATED, 0, "killed: terminated" },
	};
	char buf[128], want[128];

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct procctl_status st = { 7, 9, cases[i].state, cases[i].code };

		procctl_format(&st, NULL, buf, sizeof(buf));
		snprintf(want, sizeof(want), "7\n9\n%s\n", cases[i].line);
		cr_assert_str_eq(buf, want);
	}
}

Test(procctl, format_error_replaces_the_state)
{
	struct procctl_status st = { 1, 2, PCS_RUNNING, 0 };
	char buf[128];

	procctl_format(&st, "wait after terminate", buf, sizeof(buf));
	cr_assert_str_eq(buf, "1\n2\nerror: wait after terminate\n");
}

/* ---- the server ------------------------------------------------------------ */

struct fake {
	uint64_t cpu_us;
	bool terminate_asked;
	uint64_t terminate_at;
	bool ended;
	int exit_code;
};

static void fake_status(void *arg, struct procctl_status *st)
{
	struct fake *f = arg;

	/* time goes on between two readings, as it does for a running program */
	if (!f->ended)
		f->cpu_us += 1000;
	st->cpu_us = f->cpu_us;
	st->memory_bytes = 65536;
	st->state = f->ended ? PCS_EXITED : PCS_RUNNING;
	st->code = f->exit_code;
}

static void fake_terminate(void *arg)
{
	struct fake *f = arg;

	f->terminate_asked = true;
	/* the program takes 30 ms to exit after it was asked */
	f->terminate_at = now_ms() + 30;
}

static bool fake_ended(void *arg)
{
	return ((struct fake *)arg)->ended;
}

static const struct procctl_ops fake_ops = { fake_status, fake_terminate, fake_ended };

static char dir[64];
static int dirfd_;

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/goboxd-procctl-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	dirfd_ = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(dirfd_, 0);
}

static void teardown(void)
{
	char p[128];

	for (const char *const *n = (const char *const[]){ PROCCTL_WAIT, PROCCTL_STATUS,
							   PROCCTL_STATUS ".new", NULL };
	     *n; n++) {
		snprintf(p, sizeof(p), "%s/%s", dir, *n);
		unlink(p);
	}
	close(dirfd_);
	rmdir(dir);
}

TestSuite(procctl_server, .init = setup, .fini = teardown, .timeout = 30);

/* ---- a client, as an interactor would be one ------------------------------- */

static void client_wait(int out, const char *req)
{
	char p[128];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, PROCCTL_WAIT);
	fd = open(p, O_WRONLY);
	if (fd < 0 || write(fd, req, strlen(req)) != (ssize_t)strlen(req))
		dprintf(out, "client: wait: %s\n", strerror(errno));
	if (fd >= 0)
		close(fd);
}

/* Read the status pipe to end of file; its text goes to out, then "|". */
static void client_status(int out)
{
	char p[128], buf[512];
	ssize_t n;
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, PROCCTL_STATUS);
	fd = open(p, O_RDONLY);
	if (fd < 0) {
		dprintf(out, "client: status: %s\n", strerror(errno));
		return;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		(void)!write(out, buf, (size_t)n);
	close(fd);
	(void)!write(out, "|", 1);
}

typedef void (*client_fn)(int out);

/*
 * Serve while the client runs in a child; the fake program ends when its
 * terminate time comes. Returns what the client wrote.
 */
static char *serve(struct procctl *p, struct fake *f, client_fn fn, int timeout_ms)
{
	static char text[4096];
	int res[2];
	size_t len = 0;
	uint64_t until = now_ms() + (uint64_t)timeout_ms;
	pid_t pid;
	int status;

	cr_assert_eq(pipe2(res, O_CLOEXEC), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		alarm(10);
		fn(res[1]);
		_exit(0);
	}
	close(res[1]);
	set_nonblock(res[0], true);
	for (;;) {
		struct pollfd pf[3];
		int nf = procctl_pollfds(p, pf);
		ssize_t n;

		pf[nf++] = (struct pollfd){ .fd = res[0], .events = POLLIN };
		poll(pf, (nfds_t)nf, 5);
		while ((n = read(res[0], text + len, sizeof(text) - 1 - len)) > 0)
			len += (size_t)n;
		if (f->terminate_asked && !f->ended && now_ms() >= f->terminate_at)
			f->ended = true;
		procctl_service(p);
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
		if (now_ms() > until) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			break;
		}
	}
	while (len < sizeof(text) - 1) {
		ssize_t n = read(res[0], text + len, sizeof(text) - 1 - len);

		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(res[0]);
	text[len] = '\0';
	return text;
}

static struct procctl *start(struct fake *f)
{
	struct procctl *p = NULL;
	char err[256] = "";
	int rc = procctl_start(dirfd_, getuid(), getgid(), &fake_ops, f, &p, err, sizeof(err));

	cr_assert_eq(rc, 0, "procctl_start: %s", err);
	return p;
}

static void two_keep_running(int out)
{
	client_wait(out, "1");
	client_status(out);
	client_wait(out, "1\n");
	client_status(out);
}

Test(procctl_server, keep_running_waits_are_answered_each)
{
	struct fake f = { 0 };
	struct procctl *p = start(&f);
	char *got = serve(p, &f, two_keep_running, 5000);

	cr_assert_str_eq(got, "1000\n65536\nrunning\n|2000\n65536\nrunning\n|");
	cr_assert_eq(procctl_errors(p), 0);
	procctl_stop(p);
}

Test(procctl_server, fifos_say_which_way_they_go)
{
	struct fake f = { 0 };
	struct procctl *p = start(&f);
	struct stat w, s;

	cr_assert_eq(fstatat(dirfd_, PROCCTL_WAIT, &w, AT_SYMLINK_NOFOLLOW), 0);
	cr_assert_eq(fstatat(dirfd_, PROCCTL_STATUS, &s, AT_SYMLINK_NOFOLLOW), 0);
	cr_assert(S_ISFIFO(w.st_mode) && S_ISFIFO(s.st_mode));
	cr_assert_eq(w.st_mode & 07777, 0200);
	cr_assert_eq(s.st_mode & 07777, 0400);
	procctl_stop(p);
}

static void terminate_then_status(int out)
{
	client_wait(out, "1");
	client_status(out);
	client_wait(out, "0");
	client_status(out);
}

Test(procctl_server, terminate_is_answered_when_the_program_has_ended)
{
	struct fake f = { .exit_code = 4 };
	struct procctl *p = start(&f);
	uint64_t t0 = now_ms();
	char *got = serve(p, &f, terminate_then_status, 5000);

	cr_assert(f.terminate_asked);
	cr_assert_str_eq(got, "1000\n65536\nrunning\n|1000\n65536\nexited with code 4\n|");
	cr_assert_geq(now_ms() - t0, 30);
	cr_assert_eq(procctl_errors(p), 0);
	procctl_stop(p);
}

static void misuse(int out)
{
	client_status(out);             /* no wait before */
	client_wait(out, "x");          /* garbage */
	client_status(out);
	client_wait(out, "0");
	client_status(out);
	client_wait(out, "0");          /* a second terminate */
	client_status(out);
	client_wait(out, "1");          /* a wait after terminate */
	client_status(out);
}

Test(procctl_server, rule_breaks_get_an_error_line_never_a_hang)
{
	struct fake f = { 0 };
	struct procctl *p = start(&f);
	char *got = serve(p, &f, misuse, 5000);
	char *parts[8];
	size_t n = 0;

	for (char *save = NULL, *t = strtok_r(got, "|", &save); t && n < 8;
	     t = strtok_r(NULL, "|", &save))
		parts[n++] = t;
	cr_assert_eq(n, 5, "answers: %zu", n);
	cr_assert(strstr(parts[0], "\nerror: status pipe opened without a wait\n"), "%s", parts[0]);
	cr_assert(strstr(parts[1], "\nerror: unknown wait request 0x78"), "%s", parts[1]);
	cr_assert(strstr(parts[2], "\nexited with code 0\n"), "%s", parts[2]);
	cr_assert(strstr(parts[3], "\nerror: wait after terminate\n"), "%s", parts[3]);
	cr_assert(strstr(parts[4], "\nerror: wait after terminate\n"), "%s", parts[4]);
	cr_assert_eq(procctl_errors(p), 4);
	cr_assert_str_eq(procctl_last_error(p), "a wait after the terminate wait");
	procctl_stop(p);
}

static void wait_and_go(int out)
{
	client_wait(out, "1");
	(void)out;
}

Test(procctl_server, stop_with_an_opener_blocked_returns)
{
	struct fake f = { 0 };
	struct procctl *p = start(&f);
	uint64_t t0;

	/* a wait nobody reads the answer of, and the opener blocked in open() */
	serve(p, &f, wait_and_go, 5000);
	t0 = now_ms();
	procctl_stop(p);
	cr_assert_lt(now_ms() - t0, 1000);
}

/* A client waiting for the answer to a terminate that never comes (the
 * program did not end before the test did) reads end of file. */
static void terminate_and_read(int out)
{
	client_wait(out, "0");
	client_status(out);
}

Test(procctl_server, stop_gives_a_waiting_client_end_of_file)
{
	struct fake f = { 0 };
	struct procctl *p = start(&f);
	int res[2];
	char buf[64] = "";
	pid_t pid;

	cr_assert_eq(pipe(res), 0);
	pid = fork();
	if (pid == 0) {
		close(res[0]);
		alarm(10);
		terminate_and_read(res[1]);
		_exit(0);
	}
	close(res[1]);
	/* serve until the client holds the status fd, the program never ends */
	for (int i = 0; i < 100; i++) {
		struct pollfd pf[2];
		int nf = procctl_pollfds(p, pf);

		poll(pf, (nfds_t)nf, 5);
		procctl_service(p);
	}
	cr_assert(f.terminate_asked);
	procctl_stop(p);
	cr_assert_eq(read(res[0], buf, sizeof(buf) - 1), 1);
	cr_assert_str_eq(buf, "|");
	waitpid(pid, NULL, 0);
	close(res[0]);
}
