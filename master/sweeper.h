/*
 * Removing what jobs left behind, off the master's loop. Removing a tree
 * can take seconds (a program may leave hundreds of thousands of files),
 * and the master's loop hands every job to a worker: so the master only
 * lists what is to go (jobdir_stale) and a short-lived child, "goboxd:
 * sweeper", removes it. At most one runs at a time; paths added meanwhile
 * wait for the next one, which starts when it has been reaped.
 */
#ifndef GOBOXD_SWEEPER_H
#define GOBOXD_SWEEPER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct sweeper {
	pid_t pid;     /* the running sweeper, 0 when none */
	char **paths;  /* waiting for the next one */
	size_t n;
	size_t cap;
};

/* Queue a directory for removal (once, however often it is added). */
void sweeper_add(struct sweeper *s, const char *path);
/*
 * Fork a sweeper for what waits, unless one runs or nothing waits.
 * in_child(arg) runs first in the child: the caller closes there what the
 * child must not hold. 0, or negative errno when fork failed (the paths
 * keep waiting).
 */
int sweeper_start(struct sweeper *s, void (*in_child)(void *), void *arg);
/* After waitpid: true when pid was the sweeper (then none runs). */
bool sweeper_reaped(struct sweeper *s, pid_t pid, int status);
/* Ask the running sweeper to stop after its current batch. */
void sweeper_stop(struct sweeper *s);
/* Forget what waits (the next start-up sweep finds it again). */
void sweeper_free(struct sweeper *s);

#endif
