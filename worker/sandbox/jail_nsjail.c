#include "autoconf.h"

#include "worker/sandbox/jail_driver.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"
#include "common/lang/jailpath.h"
#include "worker/sandbox/initmsg.h"
#include "worker/sandbox/policy.h"

/* nsjail splits mount arguments on ':'; such a path cannot be expressed. */
static int nsjail_check_path(const char *p, char *err, size_t errlen)
{
	if (strchr(p, ':')) {
		snprintf(err, errlen, "path \"%s\" contains ':', which nsjail cannot mount", p);
		return -EINVAL;
	}
	return 0;
}

static int nsjail_add_mounts(const struct jail_env *e, char ***a, char *err, size_t errlen)
{
	const char *const fixed[] = { e->box_dir, e->init_path,
				      e->control_dir ? e->control_dir : "" };
	int rc;

	for (size_t i = 0; i < ARRAY_SIZE(fixed); i++) {
		rc = nsjail_check_path(fixed[i], err, errlen);
		if (rc < 0)
			return rc;
	}
	for (size_t i = 0; i < e->nmounts; i++) {
		const struct jail_mount *m = &e->mounts[i];

		switch (m->kind) {
		case JAIL_MOUNT_RO_BIND:
			jail_args_add(a, "-R");
			jail_args_addf(a, "%s:%s", m->src, m->path);
			break;
		case JAIL_MOUNT_DEV_BIND:
			jail_args_add(a, "-B");
			jail_args_addf(a, "%s:%s", m->src, m->path);
			break;
		case JAIL_MOUNT_SYMLINK:
			jail_args_add(a, "-s");
			jail_args_addf(a, "%s:%s", m->target, m->path);
			break;
		}
	}
	/* A placeholder: the init mounts a fresh, capped /tmp for each program. */
	jail_args_add(a, "-m");
	jail_args_addf(a, "none:%s:tmpfs:size=4096", JAILPATH_TMP);
	for (const char *const *p = e->ro_mounts; p && *p; p++) {
		if (nsjail_check_path(*p, err, errlen) < 0 || access(*p, F_OK) < 0)
			continue;
		jail_args_add(a, "-R");
		jail_args_add(a, *p);
	}
	jail_args_add(a, "-B");
	jail_args_addf(a, "%s:%s", e->box_dir, JAILPATH_BOX);
	if (e->control_dir) {
		jail_args_add(a, "-R");
		jail_args_addf(a, "%s:%s", e->control_dir, JAILPATH_CONTROL);
	}
	jail_args_add(a, "-R");
	jail_args_addf(a, "%s:%s", e->init_path, POLICY_INIT_PATH);
	return 0;
}

/*
 * nsjail replaces every rlimit with its own small defaults (1 MB files,
 * 32 fds, 4 GB address space). "max" keeps the hard limits the jail was
 * started with, so that the init can set each program's own limits below
 * them; the address space stays unlimited because memory is the cgroup's
 * job.
 */
static void nsjail_add_rlimits(char ***a)
{
	static const char *const keep_max[] = {
		"--rlimit_cpu", "--rlimit_fsize", "--rlimit_nofile", "--rlimit_nproc",
		"--rlimit_stack", "--rlimit_memlock", "--rlimit_rtprio", "--rlimit_msgqueue",
	};

	jail_args_add(a, "--rlimit_as");
	jail_args_add(a, "inf");
	jail_args_add(a, "--rlimit_core");
	jail_args_add(a, "0");
	for (size_t i = 0; i < ARRAY_SIZE(keep_max); i++) {
		jail_args_add(a, keep_max[i]);
		jail_args_add(a, "max");
	}
}

static int nsjail_build_argv(const struct jail_env *e, char ***a, char *err, size_t errlen)
{
	int rc;

	jail_args_add(a, e->path);
	jail_args_add(a, "-Mo");
	/* Warnings and errors only, on stderr (the worker's log pipe). */
	jail_args_add(a, "--quiet");
	/* Unprivileged, like bwrap: the pre-exec child is already on the
	 * worker's sandbox uid, which nsjail maps to 65534 inside. */
	jail_args_add(a, "-u");
	jail_args_addf(a, "%d:%u:1", POLICY_INSIDE_UID, (unsigned)e->uid);
	jail_args_add(a, "-g");
	jail_args_addf(a, "%d:%u:1", POLICY_INSIDE_GID, (unsigned)e->gid);
	jail_args_add(a, "--hostname");
	jail_args_add(a, POLICY_HOSTNAME);
	/* goboxd enforces wall time and owns the cgroups. */
	jail_args_add(a, "--time_limit");
	jail_args_add(a, "0");
	/* nsjail would renice to 19; bwrap leaves the priority alone. */
	jail_args_add(a, "--nice_level");
	jail_args_add(a, "0");
	jail_args_add(a, "--iface_no_lo");
	/* The init's socket; nsjail closes every other fd. */
	jail_args_add(a, "--pass_fd");
	jail_args_addf(a, "%d", INITMSG_FD);
	/* The init's one capability, for mounting each program's /tmp. */
	jail_args_add(a, "--cap");
	jail_args_add(a, "CAP_SYS_ADMIN");
	nsjail_add_rlimits(a);
	rc = nsjail_add_mounts(e, a, err, errlen);
	if (rc < 0)
		return rc;
	jail_args_add(a, "--cwd");
	jail_args_add(a, JAILPATH_BOX);
	jail_args_add(a, "--");
	jail_args_add(a, POLICY_INIT_PATH);
	return 0;
}

const struct jail_driver jail_nsjail = {
	.name = "nsjail",
	.version_arg = NULL,
	.build_argv = nsjail_build_argv,
};
