/*
 * The jail drivers' interface: one jail of worker/sandbox/policy.h as a
 * command line of its jail binary. jail_bwrap.c and jail_nsjail.c
 * implement it; jail.c (starting a jail) and sandbox.c (choosing the
 * driver) use it.
 */
#ifndef GOBOXD_JAIL_DRIVER_H
#define GOBOXD_JAIL_DRIVER_H

#include <stdarg.h>
#include <stddef.h>
#include <sys/types.h>

#include "common/strv.h"
#include "common/util.h"

/* A policy mount resolved against the host at sandbox_open time. */
enum jail_mount_kind { JAIL_MOUNT_RO_BIND, JAIL_MOUNT_DEV_BIND, JAIL_MOUNT_SYMLINK };

struct jail_mount {
	enum jail_mount_kind kind;
	char *path;             /* inside the jail */
	char *src;              /* the binds': host path (often == path) */
	char *target;           /* JAIL_MOUNT_SYMLINK */
};

/* Everything a driver needs to express one jail as a command line. */
struct jail_env {
	const char *path;       /* jail binary */
	const char *init_path;  /* goboxd-init on the host */
	uid_t uid;              /* host ids the jail runs as */
	gid_t gid;
	const struct jail_mount *mounts;
	size_t nmounts;
	const char *const *ro_mounts; /* the languages' extra read-only paths */
	const char *box_dir;    /* host directory bound read-write at the box */
	const char *control_dir; /* NULL, or a host directory bound read-only at
				  * JAILPATH_CONTROL (an interactor's jail) */
};

struct jail_driver {
	const char *name;
	/* Argument that prints a version line, or NULL if there is none. */
	const char *version_arg;
	/*
	 * The jail's command line: namespaces, mounts, the init's capability,
	 * and goboxd-init (bound at POLICY_INIT_PATH) as its command with the
	 * init's socket at INITMSG_FD. 0, or negative errno with a reason.
	 */
	int (*build_argv)(const struct jail_env *e, char ***argv, char *err, size_t errlen);
};

extern const struct jail_driver jail_nsjail;
extern const struct jail_driver jail_bwrap;

/* The drivers' words for adding to a command line (a string vector). */
static inline void jail_args_add(char ***argv, const char *s)
{
	strv_push(argv, xstrdup(s));
}

__attribute__((format(printf, 2, 3)))
static inline void jail_args_addf(char ***argv, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	strv_push(argv, xvasprintf(fmt, ap));
	va_end(ap);
}

#endif
