#include "autoconf.h"

#include "worker/jail.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/util.h"
#include "nsjail/policy.h"

static void add_mounts(const struct jail_env *e, const struct step_spec *s, struct jail_args *a)
{
	/* /dev is a tmpfs holding only the policy's devices, then made
	 * read-only so nothing else can be created there. */
	jail_args_add(a, "--tmpfs");
	jail_args_add(a, "/dev");
	for (size_t i = 0; i < e->nmounts; i++) {
		const struct jail_mount *m = &e->mounts[i];

		if (m->need_proc && !s->mount_proc)
			continue;
		switch (m->kind) {
		case JM_RO_BIND:
			jail_args_add(a, "--ro-bind");
			jail_args_add(a, m->path);
			jail_args_add(a, m->path);
			break;
		case JM_DEV_BIND:
			jail_args_add(a, "--dev-bind");
			jail_args_add(a, m->path);
			jail_args_add(a, m->path);
			break;
		case JM_SYMLINK:
			jail_args_add(a, "--symlink");
			jail_args_add(a, m->target);
			jail_args_add(a, m->path);
			break;
		}
	}
	jail_args_add(a, "--remount-ro");
	jail_args_add(a, "/dev");
	if (s->mount_proc) {
		jail_args_add(a, "--proc");
		jail_args_add(a, "/proc");
	}
	jail_args_add(a, "--size");
	jail_args_addf(a, "%llu", (unsigned long long)e->tmpfs_kb * 1024);
	jail_args_add(a, "--tmpfs");
	jail_args_add(a, POLICY_TMP_DIR);
	for (const char *const *p = s->ro_mounts; p && *p; p++) {
		jail_args_add(a, "--ro-bind");
		jail_args_add(a, *p);
		jail_args_add(a, *p);
	}
	jail_args_add(a, "--bind");
	jail_args_add(a, s->box_dir);
	jail_args_add(a, POLICY_BOX_DIR);
	/* bwrap's own root tmpfs stays writable unless told otherwise; the
	 * mounts on top of it (/tmp, /box) keep their own flags. */
	jail_args_add(a, "--remount-ro");
	jail_args_add(a, "/");
}

/* Entries are "NAME=value" (checked by sandbox_run). */
static void add_env(const struct step_spec *s, struct jail_args *a)
{
	jail_args_add(a, "--clearenv");
	for (const char *const *p = s->envp; p && *p; p++) {
		const char *eq = strchr(*p, '=');

		jail_args_add(a, "--setenv");
		jail_args_addf(a, "%.*s", (int)(eq - *p), *p);
		jail_args_add(a, eq + 1);
	}
}

static int bwrap_build_argv(const struct jail_env *e, const struct step_spec *s,
			    struct jail_args *a, char *err, size_t errlen)
{
	static const char *const fixed[] = {
		"--unshare-user", "--unshare-ipc", "--unshare-pid", "--unshare-net",
		"--unshare-uts", "--unshare-cgroup",
		"--die-with-parent", "--new-session", "--cap-drop", "ALL",
	};
	jail_args_add(a, e->path);
	for (size_t i = 0; i < ARRAY_SIZE(fixed); i++)
		jail_args_add(a, fixed[i]);
	jail_args_add(a, "--uid");
	jail_args_addf(a, "%d", POLICY_INSIDE_UID);
	jail_args_add(a, "--gid");
	jail_args_addf(a, "%d", POLICY_INSIDE_GID);
	jail_args_add(a, "--hostname");
	jail_args_add(a, POLICY_HOSTNAME);
	add_mounts(e, s, a);
	jail_args_add(a, "--chdir");
	jail_args_add(a, POLICY_BOX_DIR);
	add_env(s, a);
	jail_args_add(a, "--seccomp");
	jail_args_addf(a, "%d", JAIL_SIDE_FD);
	jail_args_add(a, "--");
	jail_args_add_command(a, s->argv);
	if (a->err)
		snprintf(err, errlen, "building the bwrap command line: %s", strerror(-a->err));
	return a->err;
}

/*
 * bwrap has no log channel: its own errors go to the program's stderr as
 * "bwrap: ..." with exit status 1 (mount set-up, execvp of the program).
 */
static bool bwrap_own_failure(int exit_code, const struct buf *side, const struct buf *err,
			      char *msg, size_t msglen)
{
	static const char prefix[] = "bwrap: ";
	size_t n;

	(void)side;
	if (exit_code != 1 || !err->data || strncmp(err->data, prefix, sizeof(prefix) - 1) != 0)
		return false;
	n = strcspn(err->data, "\n");
	snprintf(msg, msglen, "%.*s", (int)n, err->data);
	return true;
}

const struct jail_driver jail_bwrap = {
	.name = "bwrap",
	.helpers = POLICY_BWRAP_HELPERS,
	.needs_wake = false,
	.side = JAIL_SIDE_SECCOMP_IN,
	.version_arg = "--version",
	.build_argv = bwrap_build_argv,
	.own_failure = bwrap_own_failure,
};
