/*
 * A program of goboxd-init's, from its RUN to its exec. The RUN's body is
 * read into a plan (init_child_parse), and the child started from it
 * (init_child_spawn) sets itself up step by step (child_run in
 * init_child.c) and execs. Part of goboxd-init, which links libc alone:
 * this header and its .c include nothing of goboxd but initmsg.h.
 */
#ifndef GOBOXD_SANDBOX_INIT_CHILD_H
#define GOBOXD_SANDBOX_INIT_CHILD_H

#include <linux/filter.h>
#include <stddef.h>
#include <sys/types.h>

#include "worker/sandbox/initmsg.h"

/* What the child needs from its clone to its exec: all of it its own
 * copy, as it runs in the init's memory (init_child_spawn). */
struct init_child_plan {
	const struct initmsg_run *run;
	const char *cwd;
	char **argv;
	char **envp;
	int fds[INITMSG_MAX_FDS];
	unsigned nfds;
	int err_w;              /* CLOEXEC pipe: silent on a successful exec */
	struct sock_filter *filter; /* the init's seccomp program (FILTER) */
	unsigned short filter_len;
};

/* Split a RUN's body (the fixed part, then its strings) into p: run, cwd,
 * argv and envp, which point into body, the vectors into vec. 0, or
 * -EINVAL for a malformed body, -E2BIG when vec is too short. */
int init_child_parse(char *body, size_t len, struct init_child_plan *p, char **vec,
		     size_t nvec);

/* The child started from p: its pid, or -1 with errno set. Returns once
 * the child has exec'd or ended; a step that failed is written to
 * p->err_w as a struct initmsg_failed. */
pid_t init_child_spawn(const struct init_child_plan *p);

#endif
