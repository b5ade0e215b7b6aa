#include "autoconf.h"

#include "worker/jail.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/util.h"
#include "nsjail/policy.h"

/* nsjail splits mount arguments on ':'; such a path cannot be expressed. */
static int check_path(const char *p, char *err, size_t errlen)
{
	if (strchr(p, ':')) {
		snprintf(err, errlen, "path \"%s\" contains ':', which nsjail cannot mount", p);
		return -EINVAL;
	}
	return 0;
}

static int add_mounts(const struct jail_env *e, const struct step_spec *s, struct jail_args *a,
		      char *err, size_t errlen)
{
	int rc;

	for (size_t i = 0; i < e->nmounts; i++) {
		const struct jail_mount *m = &e->mounts[i];

		if (m->need_proc && !s->mount_proc)
			continue;
		switch (m->kind) {
		case JM_RO_BIND:
			jail_args_add(a, "-R");
			jail_args_add(a, m->path);
			break;
		case JM_DEV_BIND:
			jail_args_add(a, "-B");
			jail_args_add(a, m->path);
			break;
		case JM_SYMLINK:
			jail_args_add(a, "-s");
			jail_args_addf(a, "%s:%s", m->target, m->path);
			break;
		}
	}
	if (!s->mount_proc)
		jail_args_add(a, "--disable_proc");
	/* -T would use nsjail's fixed tmpfs size; -m takes ours. */
	jail_args_add(a, "-m");
	jail_args_addf(a, "none:%s:tmpfs:size=%llu", POLICY_TMP_DIR,
		       (unsigned long long)e->tmpfs_kb * 1024);
	for (const char *const *p = s->ro_mounts; p && *p; p++) {
		rc = check_path(*p, err, errlen);
		if (rc < 0)
			return rc;
		jail_args_add(a, "-R");
		jail_args_add(a, *p);
	}
	rc = check_path(s->box_dir, err, errlen);
	if (rc < 0)
		return rc;
	jail_args_add(a, "-B");
	jail_args_addf(a, "%s:%s", s->box_dir, POLICY_BOX_DIR);
	return 0;
}

/*
 * nsjail replaces every rlimit with its own small defaults (1 MB files,
 * 32 fds, 4 GB address space). "soft" keeps what the pre-exec child set
 * from the step's limits, so both drivers run under the same values; the
 * address space stays unlimited because memory is the cgroup's job.
 */
static void add_rlimits(struct jail_args *a)
{
	static const char *const keep_soft[] = {
		"--rlimit_cpu", "--rlimit_fsize", "--rlimit_nofile", "--rlimit_nproc",
		"--rlimit_stack", "--rlimit_memlock", "--rlimit_rtprio", "--rlimit_msgqueue",
	};

	jail_args_add(a, "--rlimit_as");
	jail_args_add(a, "inf");
	jail_args_add(a, "--rlimit_core");
	jail_args_add(a, "0");
	for (size_t i = 0; i < ARRAY_SIZE(keep_soft); i++) {
		jail_args_add(a, keep_soft[i]);
		jail_args_add(a, "soft");
	}
}

static int nsjail_build_argv(const struct jail_env *e, const struct step_spec *s,
			     struct jail_args *a, char *err, size_t errlen)
{
	int rc;

	jail_args_add(a, e->path);
	jail_args_add(a, "-Mo");
	/* Warnings and errors only, on the side channel: the program's
	 * stderr stays the program's. */
	jail_args_add(a, "--quiet");
	jail_args_add(a, "--log_fd");
	jail_args_addf(a, "%d", JAIL_SIDE_FD);
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
	add_rlimits(a);
	rc = add_mounts(e, s, a, err, errlen);
	if (rc < 0)
		return rc;
	jail_args_add(a, "--cwd");
	jail_args_add(a, POLICY_BOX_DIR);
	for (const char *const *p = s->envp; p && *p; p++) {
		jail_args_add(a, "-E");
		jail_args_add(a, *p);
	}
	jail_args_add(a, "--seccomp_string");
	jail_args_add(a, seccomp_set_kafel(e->seccomp));
	jail_args_add(a, "--");
	/*
	 * nsjail makes the program PID 1 of its namespace, where signals it
	 * sends itself (raise, abort, kill(getpid())) are ignored unless it
	 * handles them. coreutils' timeout with no limit stands in as PID 1:
	 * it forks the program, waits, and as PID 1 exits 128+N when the
	 * program died of signal N, as bwrap's own init does.
	 */
	jail_args_add(a, POLICY_PID1_SHIM);
	jail_args_add(a, "0");
	jail_args_add_command(a, s->argv);
	if (a->err)
		snprintf(err, errlen, "building the nsjail command line: %s", strerror(-a->err));
	return a->err;
}

/*
 * nsjail exits 255 when it could not set the jail up or exec the program,
 * after logging "[E]"/"[F]" lines. A program exiting 255 by itself leaves
 * the log empty (--quiet hides the informational lines).
 */
static bool nsjail_own_failure(int exit_code, const struct buf *side, const struct buf *err,
			       char *msg, size_t msglen)
{
	const char *p, *line = NULL;

	/* The pid-1 shim could not start the program (126: not executable,
	 * 127: not found); it says so first thing on stderr. */
	if ((exit_code == 126 || exit_code == 127) && err->data &&
	    strncmp(err->data, POLICY_PID1_SHIM ": failed to run command",
		    sizeof(POLICY_PID1_SHIM ": failed to run command") - 1) == 0) {
		snprintf(msg, msglen, "%.*s", (int)strcspn(err->data, "\n"), err->data);
		return true;
	}
	if (exit_code != 255 || !side->data)
		return false;
	for (p = side->data; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, "[E]", 3) == 0 || strncmp(p, "[F]", 3) == 0) {
			line = p;
			break;
		}
	}
	if (!line)
		return false;
	snprintf(msg, msglen, "nsjail: %.*s", (int)strcspn(line, "\n"), line);
	return true;
}

const struct jail_driver jail_nsjail = {
	.name = "nsjail",
	.helpers = POLICY_NSJAIL_HELPERS,
	.needs_wake = true,
	.side = JAIL_SIDE_LOG_OUT,
	.version_arg = NULL,
	.build_argv = nsjail_build_argv,
	.own_failure = nsjail_own_failure,
};
