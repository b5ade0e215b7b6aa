#include "autoconf.h"

#include "worker/sandbox/jail_driver.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/util.h"
#include "common/lang/jailpath.h"
#include "worker/sandbox/initmsg.h"
#include "worker/sandbox/policy.h"

static void bwrap_add_mounts(const struct jail_env *e, char ***a)
{
	/* /dev is a tmpfs holding only the policy's devices, then made
	 * read-only so nothing else can be created there. */
	jail_args_add(a, "--tmpfs");
	jail_args_add(a, "/dev");
	for (size_t i = 0; i < e->nmounts; i++) {
		const struct jail_mount *m = &e->mounts[i];

		switch (m->kind) {
		case JAIL_MOUNT_RO_BIND:
			jail_args_add(a, "--ro-bind");
			jail_args_add(a, m->src);
			jail_args_add(a, m->path);
			break;
		case JAIL_MOUNT_DEV_BIND:
			jail_args_add(a, "--dev-bind");
			jail_args_add(a, m->src);
			jail_args_add(a, m->path);
			break;
		case JAIL_MOUNT_SYMLINK:
			jail_args_add(a, "--symlink");
			jail_args_add(a, m->target);
			jail_args_add(a, m->path);
			break;
		}
	}
	jail_args_add(a, "--remount-ro");
	jail_args_add(a, "/dev");
	jail_args_add(a, "--proc");
	jail_args_add(a, "/proc");
	/* A placeholder: the init mounts a fresh, capped /tmp for each program. */
	jail_args_add(a, "--tmpfs");
	jail_args_add(a, JAILPATH_TMP);
	for (const char *const *p = e->ro_mounts; p && *p; p++) {
		jail_args_add(a, "--ro-bind-try");
		jail_args_add(a, *p);
		jail_args_add(a, *p);
	}
	jail_args_add(a, "--bind");
	jail_args_add(a, e->box_dir);
	jail_args_add(a, JAILPATH_BOX);
	if (e->control_dir) {
		jail_args_add(a, "--ro-bind");
		jail_args_add(a, e->control_dir);
		jail_args_add(a, JAILPATH_CONTROL);
	}
	jail_args_add(a, "--ro-bind");
	jail_args_add(a, e->init_path);
	jail_args_add(a, POLICY_INIT_PATH);
	/* bwrap's own root tmpfs stays writable unless told otherwise; the
	 * mounts on top of it (/tmp, the box) keep their own flags. */
	jail_args_add(a, "--remount-ro");
	jail_args_add(a, "/");
}

/*
 * bwrap runs unprivileged: the pre-exec child is already on the worker's
 * sandbox uid, which bwrap maps to POLICY_INSIDE_UID. --as-pid-1 makes
 * goboxd-init pid 1 instead of bwrap's own reaper. With --uid set and no
 * devpts, bwrap builds one user namespace only, so the init's
 * CAP_SYS_ADMIN is over the jail's own mount namespace (for /tmp) and
 * nothing else. No --unshare-net: bwrap would bring lo up in it; the init
 * makes the jail's network namespace itself (INITMSG_ARG_NEW_NETWORK), with
 * no working interface, before anything else runs (empty_network in
 * worker/sandbox/init.c).
 */
static int bwrap_build_argv(const struct jail_env *e, char ***a, char *err, size_t errlen)
{
	static const char *const fixed[] = {
		"--unshare-user", "--unshare-ipc", "--unshare-pid",
		"--unshare-uts", "--unshare-cgroup", "--as-pid-1",
		"--die-with-parent", "--new-session",
		"--cap-drop", "ALL", "--cap-add", "CAP_SYS_ADMIN",
	};
	/* nothing here can fail: the reason is for nsjail's mounts */
	(void)err;
	(void)errlen;
	jail_args_add(a, e->path);
	for (size_t i = 0; i < ARRAY_SIZE(fixed); i++)
		jail_args_add(a, fixed[i]);
	jail_args_add(a, "--uid");
	jail_args_addf(a, "%d", POLICY_INSIDE_UID);
	jail_args_add(a, "--gid");
	jail_args_addf(a, "%d", POLICY_INSIDE_GID);
	jail_args_add(a, "--hostname");
	jail_args_add(a, POLICY_HOSTNAME);
	bwrap_add_mounts(e, a);
	jail_args_add(a, "--chdir");
	jail_args_add(a, JAILPATH_BOX);
	jail_args_add(a, "--clearenv");
	jail_args_add(a, "--");
	jail_args_add(a, POLICY_INIT_PATH);
	jail_args_add(a, INITMSG_ARG_NEW_NETWORK);
	return 0;
}

const struct jail_driver jail_bwrap = {
	.name = "bwrap",
	.version_arg = "--version",
	.build_argv = bwrap_build_argv,
};
