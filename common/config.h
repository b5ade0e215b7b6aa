/*
 * Server configuration: defaults, then a YAML file, then the environment,
 * then the command line (each later source wins). Validated as a whole.
 */
#ifndef GOBOXD_CONFIG_H
#define GOBOXD_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/cidr.h"
#include "common/limits.h"
#include "common/stats.h"

enum jail_kind { JAIL_KIND_AUTO, JAIL_KIND_NSJAIL, JAIL_KIND_BWRAP };

/* What main() does after the configuration is built. */
enum config_action {
	ACTION_RUN,             /* serve */
	ACTION_CHECK,           /* --check: validate config and languages, exit */
	ACTION_LIST_DEBIAN,     /* --list-packages=debian: install step input */
	ACTION_LIST_NPM,        /* --list-packages=npm */
};

struct config {
	char *config_file;      /* NULL: none */
	char *listen;           /* address to bind, "0.0.0.0" */
	uint16_t port;
	unsigned workers;
	char *languages_dir;
	/* languages_dir is the source tree's, the default being absent and
	 * this goboxd running from its build directory (logged at start) */
	bool languages_from_source;
	char *jail_dir;         /* parent of per-job directories */
	enum jail_kind jail;
	char *nsjail_path;
	char *bwrap_path;
	char *init_path;        /* NULL: next to goboxd, then installed */
	char *cgroup_root;      /* NULL: discover (v1 or v2) */
	bool allow_degraded_cgroups; /* start without cgroups, refusing every job */
	uint32_t sandbox_uid_base; /* the first sandbox uid: config_sandbox_uid */
	uint64_t tmpfs_kb;      /* size of each program's fresh /tmp */
	uint64_t job_disk_kb;   /* a worker's job disk (tmpfs); 0: none */
	uint32_t job_disk_files; /* files on it, and in each /tmp; 0: no cap */
	uint32_t jobs_per_jail; /* jobs one jail serves, reset between them */
	uint32_t jails_per_worker; /* 2: one resets while the other serves */
	uint32_t build_cache_mb; /* <jail_dir>/build-cache's cap in MiB; 0: no cache */

	/* concurrency */
	unsigned max_concurrency;
	unsigned max_queue_size;
	uint32_t queue_timeout_ms;

	/* live sessions (GET /sessions, /api/v2/connect) */
	uint32_t session_idle_timeout_ms;
	uint32_t session_max_time_ms;
	size_t max_session_frame;
	uint64_t max_session_stdin;
	uint64_t max_session_output;

	/* request caps */
	size_t max_run_body_bytes;    /* /run */
	size_t max_body_bytes;        /* /v1/run (Codize's --max-body-size) */
	size_t http_max_body_bytes;   /* the HTTP layer's cap: the larger of the two */
	size_t max_header_bytes;
	size_t max_source_bytes;
	unsigned max_tests;
	size_t max_test_stdin_bytes; /* /run, per test */
	size_t max_stdin_bytes;     /* /v1/run (Codize's --max-stdin-size) */
	size_t max_expected_bytes;  /* per test */
	unsigned max_files;         /* /v1/run */
	size_t max_file_bytes;      /* /v1/run, per file */
	size_t max_job_output_bytes; /* a job's output, as it costs in the answer */
	unsigned max_return_files;  /* /run's return_files: files an answer carries */
	size_t max_return_file_bytes; /* one of them */
	size_t max_return_total_bytes; /* all of them together */
	size_t max_batch_answer_bytes; /* GET /submissions/batch's JSON, and a page's */
	uint32_t read_timeout_ms;   /* slow-client guard, per request */
	uint32_t keepalive_timeout_ms;

	/* sandbox maxima: request and language limits are clamped to these */
	struct limits limits_max;
	/* /v1/run defaults (Codize flags) */
	uint32_t run_timeout_ms;
	uint32_t compile_timeout_ms;
	uint64_t output_limit_bytes;
	/* Piston's API: a pinned version the language lacks runs on the installed one */
	bool piston_any_version;

	/* submissions kept for their clients (Judge0's API; common/store.h) */
	char *store;                /* the store's URL: sqlite:PATH or a path */
	uint64_t store_max_bytes;   /* the database's cap; 0: none */
	uint32_t store_lease_ms;    /* a shared store's lease on a running submission */
	char *node_name;            /* in a shared store; NULL or "": hostname:port */
	uint32_t submission_ttl_s;  /* a finished submission is kept this long */
	bool callback_allow_local;  /* callbacks may go to loopback and link-local */
	char *callback_allow_networks; /* private CIDRs callbacks may reach; NULL: none */
	struct cidr_list callback_nets; /* those, parsed by config_build */
	size_t callback_queue_bytes; /* a worker's waiting callbacks, in bytes */
	size_t callback_host_queue_bytes; /* those of one receiver (host:port) */
	unsigned callback_senders;  /* a worker's callback threads */

	/* a job's network, where a request asks (worker/sandbox/network.h) */
	bool network;               /* requests may ask for one */
	char *network_allow;        /* private IPv4 CIDRs it may reach; NULL: none */
	struct cidr_list network_nets; /* those, parsed by config_build */
	uint64_t network_max_bytes; /* its traffic, both ways together */
	unsigned network_max_connections; /* its TCP sockets in use at once */
	char *slirp4netns_path;

	/* who may use the APIs (common/auth.h) */
	char *auth_tokens_file;     /* NULL or "": everyone */
	struct auth *auth;          /* its tokens, read by config_build */
	bool auth_probes;           /* /healthz, /readyz and /metrics need a token too */

	/* housekeeping */
	uint32_t sweep_age_s;       /* job dirs older than this are orphans */
	uint32_t sweep_interval_s;
	uint32_t shutdown_timeout_s;
	bool metrics;
	bool try_page;              /* GET /try: a page to try live sessions */
	char *try_page_xterm_dir;   /* where xterm.js and xterm.css are read */
	bool pin_workers;       /* worker i and its jails on one CPU, its programs not */
	bool pin_cpus;          /* worker i's programs on one CPU */
	bool codize_pin_cpus;   /* ...and /v1/run's even without pin_cpus */
	int log_level;              /* enum log_level */
	char *log_file;             /* NULL: stderr */
	enum config_action action;
};

/* Fill with built-in defaults (workers and max_concurrency = nCPU). */
void config_defaults(struct config *c);
/* The store --store names when it is not given: root's in /var/lib/goboxd,
 * another user's in its own state directory. */
const char *config_default_store(void);
/* Recompute the fields that follow from others (http_max_body_bytes). */
void config_derive(struct config *c);
void config_free(struct config *c);

/*
 * Each loader returns 0, or -EINVAL with a message in err ("file:line: reason"
 * or "--flag: reason"). On failure the config may be partly updated: the
 * caller starts again from defaults (build-then-swap).
 */
int config_load_file(struct config *c, const char *path, char *err, size_t errlen);
int config_load_env(struct config *c, char *const *envp, char *err, size_t errlen);
/*
 * Parse argv with getopt_long. Sets *exit_now when --help or --version was
 * handled (text already printed). Returns 0 or -EINVAL with err.
 */
int config_load_args(struct config *c, int argc, char **argv, bool *exit_now,
		     char *err, size_t errlen);
/* Where languages are looked for when nothing says otherwise. */
#define CONFIG_DEFAULT_LANGUAGES_DIR "/etc/goboxd/languages"

/*
 * Relative paths (languages-dir, jail-dir, log-file, init-path,
 * nsjail-path, bwrap-path, cgroup-root) made absolute against cwd, so that
 * they mean what they meant where goboxd was started (a reload reads them
 * again). Pure; 0, or -EINVAL with err when one would be too long.
 */
int config_resolve_paths(struct config *c, const char *cwd, char *err, size_t errlen);
/*
 * The source tree's languages/ in place of the default directory when the
 * default is absent and exe (this program, /proc/self/exe) lies in
 * builddir: `./build/goboxd` works from a checkout with no flag. Sets
 * languages_from_source. Pure but for the existence checks.
 */
void config_builddir_languages(struct config *c, const char *exe, const char *builddir,
			       const char *srcdir);
/* Cross-field checks after all sources are applied. */
int config_validate(const struct config *c, char *err, size_t errlen);

/*
 * The whole sequence: defaults, --config/GOBOXD_CONFIG file, env, args,
 * validate. Used at start-up and (with the saved argv/envp) on reload.
 */
int config_build(struct config *c, int argc, char **argv, char *const *envp,
		 bool *exit_now, char *err, size_t errlen);

const char *config_jail_name(enum jail_kind k);

/*
 * The sandbox uids (and gids: the same numbers), from sandbox_uid_base:
 * worker i's jails run as base + i; the prober's as base +
 * STATS_MAX_WORKERS, above every worker's; worker i's judge programs
 * (interactors, checkers) as base + STATS_MAX_WORKERS + 1 + i. The last
 * of them is the judge's of the last worker slot.
 */
enum config_sandbox_role { CONFIG_SANDBOX_WORKER, CONFIG_SANDBOX_PROBER, CONFIG_SANDBOX_JUDGE };

static inline uint32_t config_sandbox_uid(const struct config *c, enum config_sandbox_role role,
					  unsigned worker)
{
	switch (role) {
	case CONFIG_SANDBOX_WORKER:
		return c->sandbox_uid_base + worker;
	case CONFIG_SANDBOX_PROBER:
		return c->sandbox_uid_base + STATS_MAX_WORKERS;
	case CONFIG_SANDBOX_JUDGE:
		break;
	}
	return c->sandbox_uid_base + STATS_MAX_WORKERS + 1 + worker;
}

#endif
