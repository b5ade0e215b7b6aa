#include "autoconf.h"

#include "master/sweeper.h"

#include <errno.h>
#include <linux/ioprio.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/caps.h"
#include "common/log.h"
#include "common/proctitle.h"
#include "common/util.h"
#include "worker/sandbox/host.h"

static volatile sig_atomic_t sweeper_stopping;

static void on_term(int sig)
{
	(void)sig;
	sweeper_stopping = 1;
}

void sweeper_add(struct sweeper *s, const char *path)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->paths[i], path) == 0)
			return;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		s->paths = xreallocarray(s->paths, cap, sizeof(*s->paths));
		s->cap = cap;
	}
	s->paths[s->n++] = xstrdup(path);
}

/*
 * The child's own set-up: a title, the master's death as a stop, low CPU
 * and I/O priority (jobs come first), and of root's privileges only what
 * removing other uids' files takes.
 */
static int setup_child(void)
{
	static const cap_value_t keep[] = {
		CAP_DAC_OVERRIDE, /* unlink in directories of the sandbox uids */
		CAP_FOWNER,       /* give their directories an owner mode back */
	};
	sigset_t none;
	int rc;

	log_set_role("sweeper");
	prctl(PR_SET_NAME, "goboxd-sweeper", 0, 0, 0);
	proctitle_set("goboxd: sweeper");
	prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0);
	signal(SIGTERM, on_term);
	signal(SIGHUP, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	signal(SIGUSR1, SIG_IGN);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (setpriority(PRIO_PROCESS, 0, 10) < 0)
		log_debug("setpriority: %s", strerror(errno));
	if (syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0,
		    IOPRIO_PRIO_VALUE(IOPRIO_CLASS_BE, 7)) < 0)
		log_debug("ioprio_set: %s", strerror(errno));
	if (geteuid() == 0 && (rc = caps_keep(keep, ARRAY_SIZE(keep))) < 0) {
		log_error("sweeper: dropping capabilities: %s", strerror(-rc));
		return rc;
	}
	return 0;
}

static int sweeper_main(char **paths, size_t n)
{
	unsigned removed = 0, failed = 0;

	if (setup_child() < 0)
		return 1;
	for (size_t i = 0; i < n && !sweeper_stopping; i++) {
		int rc = jobdir_reclaim(paths[i], &sweeper_stopping);

		if (rc > 0)
			removed++;
		else if (rc < 0 && rc != -EINTR) {
			failed++;
			log_warn("removing %s: %s (the next sweep retries)", paths[i], strerror(-rc));
		}
	}
	if (removed)
		log_info("removed %u job director%s", removed, removed == 1 ? "y" : "ies");
	if (sweeper_stopping)
		log_info("stopped; what is left waits for the next sweep");
	return failed ? 1 : 0;
}

int sweeper_start(struct sweeper *s, void (*in_child)(void *), void *arg)
{
	pid_t pid;

	if (s->pid > 0 || s->n == 0)
		return 0;
	pid = fork();
	if (pid < 0) {
		int rc = -errno;

		log_error("fork (sweeper): %s", strerror(-rc));
		return rc;
	}
	if (pid == 0) {
		in_child(arg);
		_exit(sweeper_main(s->paths, s->n));
	}
	/* The child has its copy of the list; the next one starts empty. */
	for (size_t i = 0; i < s->n; i++)
		free(s->paths[i]);
	s->n = 0;
	s->pid = pid;
	return 0;
}

bool sweeper_reaped(struct sweeper *s, pid_t pid, int status)
{
	if (pid <= 0 || pid != s->pid)
		return false;
	s->pid = 0;
	if (WIFSIGNALED(status))
		log_warn("sweeper pid %d killed by signal %d", (int)pid, WTERMSIG(status));
	return true;
}

void sweeper_stop(struct sweeper *s)
{
	if (s->pid > 0)
		kill(s->pid, SIGTERM);
}

void sweeper_free(struct sweeper *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->paths[i]);
	free(s->paths);
	s->paths = NULL;
	s->n = 0;
	s->cap = 0;
}
