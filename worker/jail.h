/*
 * Jail drivers: how one step of nsjail/policy.h is expressed as an nsjail
 * or a bwrap command line, and how each jail reports its own failures.
 * sandbox.c picks a driver, builds the argv before fork, and execs it.
 */
#ifndef GOBOXD_JAIL_H
#define GOBOXD_JAIL_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "common/buf.h"
#include "nsjail/policy.h"
#include "worker/sandbox.h"
#include "worker/seccomp.h"

/* The fd number the jail's side channel is given in the child. */
#define JAIL_SIDE_FD 3

/* A policy mount resolved against the host at sandbox_open time. */
enum jail_mount_kind { JM_RO_BIND, JM_DEV_BIND, JM_SYMLINK };

struct jail_mount {
	enum jail_mount_kind kind;
	char *path;             /* inside the jail (== host path for binds) */
	char *target;           /* JM_SYMLINK */
	bool need_proc;
};

/* Everything a driver needs besides the step itself. */
struct jail_env {
	const char *path;       /* jail binary */
	uid_t uid;              /* host ids the jail runs as */
	gid_t gid;
	uint64_t tmpfs_kb;
	const struct jail_mount *mounts;
	size_t nmounts;
	const struct seccomp_set *seccomp;
};

/* What the driver's side channel at JAIL_SIDE_FD carries. */
enum jail_side {
	JAIL_SIDE_SECCOMP_IN,   /* the jail reads the BPF program from it */
	JAIL_SIDE_LOG_OUT,      /* the jail writes its own log to it */
};

/* A NULL-terminated argv whose strings it owns; errors are sticky. */
struct jail_args {
	char **v;
	size_t n, cap;
	int err;
};

struct jail_driver {
	const char *name;
	/* Processes the jail keeps in the step cgroup besides the program. */
	unsigned helpers;
	/* The jail may sleep after its child is gone (nsjail -Mo pause()
	 * race): wake it with SIGCHLD once only it is left in the cgroup. */
	bool needs_wake;
	enum jail_side side;
	/* Argument that prints a version line, or NULL if there is none. */
	const char *version_arg;
	/*
	 * The jail's command line for a spec sandbox_run has checked (argv
	 * non-empty, env entries "NAME=value"). 0, or negative errno with a
	 * reason in err.
	 */
	int (*build_argv)(const struct jail_env *e, const struct step_spec *s,
			  struct jail_args *out, char *err, size_t errlen);
	/*
	 * Did the jail itself fail (bad mount, exec of the program failed)
	 * rather than the program? side: what the jail wrote on its log
	 * channel; err: the captured stderr. On true, a reason in msg.
	 */
	bool (*own_failure)(int exit_code, const struct buf *side, const struct buf *err,
			    char *msg, size_t msglen);
};

extern const struct jail_driver jail_nsjail;
extern const struct jail_driver jail_bwrap;

static inline void jail_args_init(struct jail_args *a)
{
	memset(a, 0, sizeof(*a));
}

static inline void jail_args_free(struct jail_args *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->v[i]);
	free(a->v);
	memset(a, 0, sizeof(*a));
}

static inline void jail_args_take(struct jail_args *a, char *s)
{
	if (!s || a->err) {
		if (!a->err)
			a->err = -ENOMEM;
		free(s);
		return;
	}
	if (a->n + 2 > a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 64;
		char **v = realloc(a->v, cap * sizeof(*v));

		if (!v) {
			a->err = -ENOMEM;
			free(s);
			return;
		}
		a->v = v;
		a->cap = cap;
	}
	a->v[a->n++] = s;
	a->v[a->n] = NULL;
}

static inline void jail_args_add(struct jail_args *a, const char *s)
{
	jail_args_take(a, strdup(s));
}

__attribute__((format(printf, 2, 3)))
static inline void jail_args_addf(struct jail_args *a, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	jail_args_take(a, s);
}

/*
 * The program's argv, last on the jail's command line; argv[0] as the jail
 * must exec it (relative means under /box).
 */
static inline void jail_args_add_command(struct jail_args *a, const char *const *argv)
{
	if (argv[0][0] == '/')
		jail_args_add(a, argv[0]);
	else
		jail_args_addf(a, "%s/%s", POLICY_BOX_DIR, argv[0]);
	for (size_t i = 1; argv[i]; i++)
		jail_args_add(a, argv[i]);
}

#endif
