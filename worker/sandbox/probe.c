#include "autoconf.h"

#include "worker/sandbox/host.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "worker/sandbox/jobdir.h"
#include "common/log.h"
#include "common/seqlock.h"
#include "common/util.h"
#include "worker/sandbox/sandbox.h"

/* Probes are small: a version banner needs little time or memory. */
#define PROBE_WALL_MS 20000
#define PROBE_MEMORY_KB (1024 * 1024)

struct probe_table *probe_table_map(void)
{
	void *p = mmap(NULL, sizeof(struct probe_table), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

void probe_table_unmap(struct probe_table *t)
{
	if (t)
		munmap(t, sizeof(*t));
}

void probe_table_read(const struct probe_table *t, struct probe_snapshot *out)
{
	/* a prober that died mid-write: nothing rather than garbage */
	seqlock_read(&t->seq, out, &t->snap, sizeof(*out));
}

static void publish(struct probe_table *t, const struct probe_snapshot *s)
{
	seqlock_write(&t->seq, &t->snap, s, sizeof(*s));
}

/* First non-empty line of a or else b, trimmed, into out. */
static void first_line(const struct buf *a, const struct buf *b, char *out, size_t n)
{
	const struct buf *src[2] = { a, b };

	out[0] = '\0';
	for (int k = 0; k < 2; k++) {
		const char *p = src[k]->data;
		size_t len = src[k]->len;

		while (p && len) {
			const char *nl = memchr(p, '\n', len);
			size_t l = nl ? (size_t)(nl - p) : len;
			size_t s = 0;

			while (s < l && (p[s] == ' ' || p[s] == '\t' || p[s] == '\r'))
				s++;
			while (l > s && (p[l - 1] == ' ' || p[l - 1] == '\t' || p[l - 1] == '\r'))
				l--;
			if (l > s) {
				snprintf(out, n, "%.*s", (int)(l - s), p + s);
				return;
			}
			if (!nl)
				break;
			len -= (size_t)(nl - p) + 1;
			p = nl + 1;
		}
	}
}

static void probe_one(struct sandbox *sandbox, const struct config *cfg, const struct lang *l,
		      uid_t uid, struct probe_entry *e)
{
	struct jobdir d;
	struct step_result r;
	struct step_spec s = { 0 };
	int rc;

	snprintf(e->id, sizeof(e->id), "%s", l->id);
	e->state = PROBE_FAILED;
	if (!l->probe[0]) {
		snprintf(e->error, sizeof(e->error), "no probe configured");
		return;
	}
	if (access(l->probe[0], X_OK) < 0 && l->probe[0][0] == '/') {
		snprintf(e->error, sizeof(e->error), "%s not found or not executable: %s",
			 l->probe[0], strerror(errno));
		return;
	}
	rc = jobdir_create(cfg->jail_dir, uid, uid, &d);
	if (rc < 0) {
		snprintf(e->error, sizeof(e->error), "job directory: %s", strerror(-rc));
		return;
	}
	sandbox_step_result_init(&r);
	s.argv = (const char *const *)l->probe;
	s.envp = sandbox_base_env;
	s.tmp_exec = l->tmp_exec;
	s.open_files = l->run.open_files;
	s.limits = l->run.limits;
	s.limits.wall_ms = PROBE_WALL_MS;
	s.limits.cpu_ms = PROBE_WALL_MS;
	if (s.limits.memory_kb < PROBE_MEMORY_KB)
		s.limits.memory_kb = PROBE_MEMORY_KB;
	if (s.limits.max_processes < 64)
		s.limits.max_processes = 64;
	rc = sandbox_run_once(sandbox, d.path, &s, &r);
	if (rc < 0 || r.outcome.internal_error) {
		snprintf(e->error, sizeof(e->error), "sandbox: %.170s", r.internal_msg);
	} else if (!r.outcome.exited || r.outcome.exit_code != 0) {
		char line[128];

		first_line(&r.err, &r.out, line, sizeof(line));
		snprintf(e->error, sizeof(e->error), "probe %s failed (%s %d)%s%s", l->probe[0],
			 r.outcome.timed_out ? "timed out," :
			 r.outcome.exited ? "exit code" : "signal",
			 r.outcome.exited ? r.outcome.exit_code : r.outcome.term_signal,
			 line[0] ? ": " : "", line);
	} else {
		first_line(&r.out, &r.err, e->version, sizeof(e->version));
		e->state = PROBE_OK;
	}
	sandbox_step_result_free(&r);
	jobdir_remove(&d);
}

int probe_run_all(const struct config *cfg, const struct langtab *langs, uint32_t generation,
		  struct probe_table *t, volatile sig_atomic_t *stop)
{
	struct probe_snapshot *snap = xcalloc(1, sizeof(*snap));
	struct sandbox *sandbox = NULL;
	/* Above every worker's uid: never shared with a running job. */
	uid_t uid = config_sandbox_uid(cfg, CONFIG_SANDBOX_PROBER, 0);
	struct sandbox_opts o = {
		.jail = cfg->jail, .nsjail_path = cfg->nsjail_path, .bwrap_path = cfg->bwrap_path,
		.cgroup_root = cfg->cgroup_root, .uid = uid, .gid = uid,
		.tmpfs_kb = cfg->tmpfs_kb, .disk_files = cfg->job_disk_files,
		.init_path = cfg->init_path, .jail_dir = cfg->jail_dir,
	};
	const char **mounts = langtab_mounts(langs);
	char tree[32];
	int failed = 0, rc;

	snprintf(tree, sizeof(tree), "%d-probe", (int)getppid());
	o.cgroup_name = tree;
	o.ro_mounts = mounts;
	snap->generation = generation;
	rc = sandbox_open(&o, &sandbox, snap->jail_error, sizeof(snap->jail_error));
	free(mounts);
	/* Like a worker: what launching jails takes, and nothing more. */
	if (rc == 0 && geteuid() == 0 && (rc = sandbox_keep_caps()) < 0) {
		snprintf(snap->jail_error, sizeof(snap->jail_error),
			 "dropping capabilities: %s", strerror(-rc));
		sandbox_close(sandbox);
	}
	if (rc < 0) {
		snap->jail_state = PROBE_FAILED;
		sandbox = NULL;
	} else {
		snap->jail_state = PROBE_OK;
		snprintf(snap->jail_name, sizeof(snap->jail_name), "%s",
			 sandbox_driver_name(sandbox));
		snprintf(snap->jail_path, sizeof(snap->jail_path), "%s",
			 sandbox_driver_path(sandbox));
		snprintf(snap->jail_version, sizeof(snap->jail_version), "%s",
			 sandbox_driver_version(sandbox));
	}
	for (size_t i = 0; i < langtab_count(langs) && i < STATS_MAX_LANGS; i++) {
		const struct lang *l = langtab_at(langs, i);
		struct probe_entry *e = &snap->e[i];

		if (*stop) {
			sandbox_close(sandbox);
			free(snap);
			return -EINTR;
		}
		if (sandbox) {
			probe_one(sandbox, cfg, l, uid, e);
		} else {
			snprintf(e->id, sizeof(e->id), "%s", l->id);
			e->state = PROBE_FAILED;
			snprintf(e->error, sizeof(e->error), "no sandbox: %.170s", snap->jail_error);
		}
		if (e->state != PROBE_OK) {
			failed++;
			log_warn("probe %s: %s", l->id, e->error);
		}
		snap->n = (uint32_t)(i + 1);
	}
	snap->done_wall_ms = wall_ms();
	publish(t, snap);
	log_info("probes done: %zu languages, %d failed", langtab_count(langs), failed);
	sandbox_close(sandbox);
	free(snap);
	return failed || !sandbox ? -EIO : 0;
}
