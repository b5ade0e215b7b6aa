#include "autoconf.h"

#include "common/config.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/auth.h"
#include "common/cidr.h"
#include "common/log.h"
#include "common/util.h"
#include "common/yamlutil.h"

/*
 * One table drives the three sources: "--max-tests" on the command line,
 * GOBOXD_MAX_TESTS in the environment and max_tests in the YAML file.
 */
/*
 * Durations are read as OT_MS (stored in uint32_t ms) or OT_SEC (uint32_t s);
 * sizes as OT_SIZE (size_t bytes), OT_BYTES64 (uint64_t bytes) or OT_KB
 * (uint64_t KiB). Ranges are always in ms or bytes, as written.
 */
enum opt_type {
	OT_STR, OT_UINT, OT_U16, OT_U32, OT_MS, OT_SEC, OT_SIZE, OT_BYTES64, OT_KB,
	OT_BOOL, OT_JAIL, OT_LEVEL,
};

struct opt {
	const char *name;       /* long option; YAML key and env derive from it */
	enum opt_type type;
	size_t off;
	uint64_t min, max;
	const char *help;
	/* its default as an operator would write it (NULL: none, or one
	 * config_defaults works out: the CPUs, the user's state directory) */
	const char *dflt;
};

#define F(field) offsetof(struct config, field)
#define HOUR_MS (3600ull * 1000ull)
#define GiB (1024ull * 1024ull * 1024ull)

static const struct opt opts[] = {
	{ "port", OT_U16, F(port), 0, 65535, "TCP port (0: any free port)", "8080" },
	{ "listen", OT_STR, F(listen), 0, 0, "address to bind", "0.0.0.0" },
	{ "workers", OT_UINT, F(workers), 1, 256, "worker processes (default: CPUs)", NULL },
	{ "languages-dir", OT_STR, F(languages_dir), 0, 0, "directory of language YAML files",
	  CONFIG_DEFAULT_LANGUAGES_DIR },
	{ "jail-dir", OT_STR, F(jail_dir), 0, 0, "parent directory of job directories",
	  "/var/lib/goboxd/jails" },
	{ "jail", OT_JAIL, F(jail), 0, 0, "jail driver: auto, nsjail or bwrap", "auto" },
	{ "nsjail-path", OT_STR, F(nsjail_path), 0, 0, "nsjail binary", "/usr/local/bin/nsjail" },
	{ "bwrap-path", OT_STR, F(bwrap_path), 0, 0, "bubblewrap binary", "/usr/bin/bwrap" },
	{ "init-path", OT_STR, F(init_path), 0, 0,
	  "goboxd-init, pid 1 of every jail (default: next to goboxd, then the installed one)",
	  NULL },
	{ "cgroup-root", OT_STR, F(cgroup_root), 0, 0, "cgroup base path (default: discover)",
	  NULL },
	{ "allow-degraded-cgroups", OT_BOOL, F(allow_degraded_cgroups), 0, 1,
	  "start without usable cgroups, refusing every job", NULL },
	{ "sandbox-uid-base", OT_U32, F(sandbox_uid_base), 1000, 4000000000u,
	  "worker i runs jails as this uid + i", "60000" },
	{ "tmpfs-size", OT_KB, F(tmpfs_kb), 64 * 1024, 16 * GiB,
	  "largest size of each program's fresh /tmp (at most a quarter of its memory)", "256M" },
	{ "job-disk-size", OT_KB, F(job_disk_kb), 0, 256 * GiB,
	  "each jail's own disk, new for every job (0: no cap, the jail dir's disk)", "512M" },
	{ "job-disk-files", OT_U32, F(job_disk_files), 0, 100000000,
	  "files (and directories) the job disk and each /tmp may hold (0: no cap)", "16384" },
	{ "jobs-per-jail", OT_U32, F(jobs_per_jail), 1, 1000000,
	  "jobs one jail serves, reset between them (1: a new jail for every job)", "1000" },
	{ "jails-per-worker", OT_U32, F(jails_per_worker), 1, 2,
	  "a worker's live jails: 2 take turns, one resetting while the other serves", "2" },
	{ "build-cache-mb", OT_U32, F(build_cache_mb), 0, 1024 * 1024,
	  "MiB of successful builds kept under the jail dir for the same build again (0: off)",
	  "1024" },
	{ "max-concurrency", OT_UINT, F(max_concurrency), 1, 1024,
	  "jobs running at once (default: CPUs)", NULL },
	{ "max-queue-size", OT_UINT, F(max_queue_size), 0, 100000, "jobs waiting at most", "256" },
	{ "queue-timeout", OT_MS, F(queue_timeout_ms), 1, HOUR_MS, "longest wait in the queue",
	  "60s" },
	{ "session-idle-timeout", OT_MS, F(session_idle_timeout_ms), 100, HOUR_MS,
	  "a live session with no frame either way this long ends", "60s" },
	{ "session-max-time", OT_MS, F(session_max_time_ms), 100, 24 * HOUR_MS,
	  "a live session's program runs at most this long", "15m" },
	{ "max-session-frame", OT_SIZE, F(max_session_frame), 64, 64 * 1024 * 1024,
	  "a live session's message from its client at most (start included)", "1M" },
	{ "max-session-stdin", OT_BYTES64, F(max_session_stdin), 0, 64 * GiB,
	  "stdin bytes a live session's client may send", "64M" },
	{ "max-session-output", OT_BYTES64, F(max_session_output), 1024, 64 * GiB,
	  "stdout and stderr bytes of a live session's program; past it, it is killed", "16M" },
	{ "max-body-size", OT_SIZE, F(max_body_bytes), 1024, GiB,
	  "/v1/run: request body cap", "5M" },
	{ "max-run-body-size", OT_SIZE, F(max_run_body_bytes), 1024, GiB,
	  "/run: request body cap", "16M" },
	{ "max-header-size", OT_SIZE, F(max_header_bytes), 1024, 1024 * 1024, "header cap", "16k" },
	{ "max-source-size", OT_SIZE, F(max_source_bytes), 16, GiB, "source code cap", "256k" },
	{ "max-tests", OT_UINT, F(max_tests), 1, 10000, "tests per request", "50" },
	{ "max-stdin-size", OT_SIZE, F(max_stdin_bytes), 0, GiB, "/v1/run: stdin cap", "1M" },
	{ "max-test-stdin-size", OT_SIZE, F(max_test_stdin_bytes), 0, GiB,
	  "/run: stdin cap per test", "4M" },
	{ "max-expected-size", OT_SIZE, F(max_expected_bytes), 0, GiB,
	  "expected output cap per test", "4M" },
	{ "max-files", OT_UINT, F(max_files), 1, 1000,
	  "files per /v1/run request, extra files per /run request", "10" },
	{ "max-file-size", OT_SIZE, F(max_file_bytes), 1, GiB,
	  "size of one such file", "256k" },
	{ "read-timeout", OT_MS, F(read_timeout_ms), 100, HOUR_MS, "time to send a request",
	  "10s" },
	{ "keepalive-timeout", OT_MS, F(keepalive_timeout_ms), 100, HOUR_MS,
	  "idle keep-alive connection lifetime", "30s" },
	{ "max-wall-time", OT_MS, F(limits_max.wall_ms), 100, HOUR_MS, "wall time cap of a step",
	  "60s" },
	{ "max-cpu-time", OT_MS, F(limits_max.cpu_ms), 100, HOUR_MS, "CPU time cap of a step",
	  "60s" },
	{ "max-memory", OT_KB, F(limits_max.memory_kb), 1024 * 1024, 256 * GiB,
	  "memory cap of a step", "4G" },
	{ "max-processes", OT_U32, F(limits_max.max_processes), 1, 65536,
	  "process cap of a step", "256" },
	{ "max-write-size", OT_KB, F(limits_max.fsize_kb), 1024, 256 * GiB,
	  "largest file a step may write", "256M" },
	{ "max-output-size", OT_KB, F(limits_max.output_kb), 1024, GiB,
	  "captured stdout/stderr cap of a step", "16M" },
	{ "max-job-output-size", OT_SIZE, F(max_job_output_bytes), 64 * 1024, GiB,
	  "captured output of a whole job, counted as it costs in the answer", "32M" },
	{ "max-return-files", OT_UINT, F(max_return_files), 1, 100000,
	  "/run's return_files: files one answer carries", "64" },
	{ "max-return-file-size", OT_SIZE, F(max_return_file_bytes), 1, GiB,
	  "/run's return_files: size of one such file (a larger one is left out)", "1M" },
	{ "max-return-total-size", OT_SIZE, F(max_return_total_bytes), 1, GiB,
	  "/run's return_files: size of all of them together", "8M" },
	{ "max-batch-answer-size", OT_SIZE, F(max_batch_answer_bytes), 1024, GiB,
	  "Judge0's GET /submissions/batch and GET /submissions: the answer's JSON cap", "32M" },
	{ "run-timeout", OT_MS, F(run_timeout_ms), 0, HOUR_MS, "/v1/run: run step wall time", "0" },
	{ "compile-timeout", OT_MS, F(compile_timeout_ms), 0, HOUR_MS,
	  "/v1/run: compile step wall time", "0" },
	{ "output-limit", OT_BYTES64, F(output_limit_bytes), 1024, GiB,
	  "/v1/run: stdout+stderr cap", "1M" },
	{ "piston-any-version", OT_BOOL, F(piston_any_version), 0, 1,
	  "/api/v2/execute: a version no runtime has (python 3.10.0) is served by the"
	  " language's installed one (default false: runtime is unknown)", NULL },
	{ "store", OT_STR, F(store), 0, 0,
	  "where async submissions are kept: sqlite:PATH or a path (SQLite),"
	  " or postgresql://... (PostgreSQL, shared by a fleet)", NULL },
	{ "store-lease", OT_MS, F(store_lease_ms), 1000, HOUR_MS,
	  "a shared store: how long a node holds a submission it runs without renewing", "30s" },
	{ "node-name", OT_STR, F(node_name), 0, 0,
	  "this node's name in a shared store (default: hostname:port)", NULL },
	{ "store-max-size", OT_BYTES64, F(store_max_bytes), 0, 1024 * GiB,
	  "the submission store's cap; when full, new submissions get 503 (0: none)", "1G" },
	{ "submission-ttl", OT_SEC, F(submission_ttl_s), 1000, 365 * 24 * HOUR_MS,
	  "how long a finished submission is kept", "24h" },
	{ "callback-allow-local", OT_BOOL, F(callback_allow_local), 0, 1,
	  "let callbacks go to loopback and link-local addresses, and this host's own", NULL },
	{ "callback-allow-networks", OT_STR, F(callback_allow_networks), 0, 0,
	  "private networks callbacks may reach, as CIDRs: 10.2.0.0/16,fd00::/8"
	  " (default: none)", NULL },
	{ "callback-queue-size", OT_SIZE, F(callback_queue_bytes), 64 * 1024, 16 * GiB,
	  "bytes of callbacks a worker holds; past it the receiver holding the most loses its"
	  " oldest", "64M" },
	{ "callback-host-queue-size", OT_SIZE, F(callback_host_queue_bytes), 64 * 1024, 16 * GiB,
	  "bytes of callbacks one receiver (host:port) has waiting; past it its new ones are"
	  " refused", "16M" },
	{ "callback-senders", OT_UINT, F(callback_senders), 1, 64,
	  "a worker's callback threads; receivers slow to answer share half", "8" },
	{ "network", OT_BOOL, F(network), 0, 1,
	  "let a request ask for a network: a user-mode stack (slirp4netns) per job, which"
	  " reaches neither this host nor private ranges", "false" },
	{ "network-allow", OT_STR, F(network_allow), 0, 0,
	  "private IPv4 networks a job's network may reach, as CIDRs: 10.2.0.0/16"
	  " (default: none)", NULL },
	{ "network-max-bytes", OT_BYTES64, F(network_max_bytes), 4096, 1024 * GiB,
	  "a job's network traffic, both ways together; past it the network ends", "64M" },
	{ "network-max-connections", OT_UINT, F(network_max_connections), 1, 256,
	  "a job's TCP sockets in use at once, listening ones too; past it the network ends", "32" },
	{ "slirp4netns-path", OT_STR, F(slirp4netns_path), 0, 0, "slirp4netns binary",
	  "/usr/bin/slirp4netns" },
	{ "auth-tokens", OT_STR, F(auth_tokens_file), 0, 0,
	  "file of API tokens, one per line: every request then needs one (default: none)", NULL },
	{ "auth-probes", OT_BOOL, F(auth_probes), 0, 1,
	  "with --auth-tokens, /healthz, /readyz and /metrics need a token too", NULL },
	{ "sweep-age", OT_SEC, F(sweep_age_s), 1000, 7 * 24 * HOUR_MS,
	  "job directories older than this are orphans", "30m" },
	{ "sweep-interval", OT_SEC, F(sweep_interval_s), 1000, 24 * HOUR_MS, "sweep period", "5m" },
	{ "shutdown-timeout", OT_SEC, F(shutdown_timeout_s), 0, HOUR_MS,
	  "graceful stop deadline", "30s" },
	{ "metrics", OT_BOOL, F(metrics), 0, 1, "serve GET /metrics", "false" },
	{ "try-page", OT_BOOL, F(try_page), 0, 1,
	  "serve GET /try, a page to try live sessions in a browser", "false" },
	{ "try-page-xterm-dir", OT_STR, F(try_page_xterm_dir), 0, 0,
	  "directory of xterm.js and xterm.css, served under /try/", "/opt/goboxd/xterm" },
	{ "pin-workers", OT_BOOL, F(pin_workers), 0, 1,
	  "keep each worker and its jails' own processes on one CPU (worker i: the i-th usable"
	  " CPU); its programs keep every CPU unless pinned", "true" },
	{ "pin-cpus", OT_BOOL, F(pin_cpus), 0, 1,
	  "run each worker's programs on one CPU of their own (worker i: the i-th usable CPU)",
	  NULL },
	{ "codize-pin-cpus", OT_BOOL, F(codize_pin_cpus), 0, 1,
	  "/v1/run: its programs on their worker's CPU even without --pin-cpus",
	  "true" },
	{ "log-level", OT_LEVEL, F(log_level), 0, 0, "debug, info, warn or error", "info" },
	{ "log-file", OT_STR, F(log_file), 0, 0, "log here, not on stderr (SIGUSR1 reopens)",
	  NULL },
};

/*
 * The store a goboxd has when none is named: root's under /var/lib/goboxd;
 * another user's in that user's own state directory ($STATE_DIRECTORY,
 * which systemd's StateDirectory= gives a unit, else $XDG_STATE_HOME,
 * else ~/.local/state, then goboxd/). Decided once, by the real uid at
 * the first call: a rootless goboxd is root of its own namespace later,
 * and a reload keeps the store it started with.
 */
const char *config_default_store(void)
{
	static char store[4096];
	const char *dir = getenv("STATE_DIRECTORY"), *xdg = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");
	size_t n;

	if (store[0])
		return store;
	if (getuid() == 0)
		snprintf(store, sizeof(store), "sqlite:/var/lib/goboxd/submissions.db");
	else if (dir && dir[0] == '/' && (n = strcspn(dir, ":")) < sizeof(store) - 32)
		snprintf(store, sizeof(store), "sqlite:%.*s/submissions.db", (int)n, dir);
	else if (xdg && xdg[0] == '/' && strlen(xdg) < sizeof(store) - 40)
		snprintf(store, sizeof(store), "sqlite:%s/goboxd/submissions.db", xdg);
	else if (home && home[0] == '/' && strlen(home) < sizeof(store) - 48)
		snprintf(store, sizeof(store), "sqlite:%s/.local/state/goboxd/submissions.db",
			 home);
	else
		snprintf(store, sizeof(store), "sqlite:/var/lib/goboxd/submissions.db");
	return store;
}

static int opt_apply(struct config *c, const struct opt *o, const char *val, char *why,
		     size_t whylen);

void config_defaults(struct config *c)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	char why[256];

	memset(c, 0, sizeof(*c));
	/* each option's default is written once, in the table, as an operator
	 * would write it, and read as the option would be */
	for (size_t i = 0; i < ARRAY_SIZE(opts); i++)
		if (opts[i].dflt && opt_apply(c, &opts[i], opts[i].dflt, why, sizeof(why)) < 0)
			abort(); /* a default its own range refuses (tests/unit/test_config.c) */
	/* the ones worked out rather than written: the CPUs, the user's store */
	if (ncpu < 1)
		ncpu = 1;
	c->workers = (unsigned)ncpu;
	c->max_concurrency = (unsigned)ncpu;
	c->store = xstrdup(config_default_store());
	c->action = ACTION_RUN;
	config_derive(c);
}

void config_derive(struct config *c)
{
	c->http_max_body_bytes = c->max_run_body_bytes > c->max_body_bytes ?
				    c->max_run_body_bytes : c->max_body_bytes;
}

void config_free(struct config *c)
{
	for (size_t i = 0; i < ARRAY_SIZE(opts); i++) {
		if (opts[i].type == OT_STR) {
			char **p = (char **)((char *)c + opts[i].off);

			free(*p);
			*p = NULL;
		}
	}
	free(c->config_file);
	c->config_file = NULL;
	auth_free(c->auth);
	c->auth = NULL;
}

const char *config_jail_name(enum jail_kind k)
{
	switch (k) {
	case JAIL_KIND_NSJAIL:
		return "nsjail";
	case JAIL_KIND_BWRAP:
		return "bwrap";
	default:
		return "auto";
	}
}

/* "2.5" or "2.5s" seconds, "500ms", "3m". */
static int parse_duration_ms(const char *s, uint64_t *out)
{
	char *end;
	double v;
	double mul = 1000.0;

	if (!s || !*s || !(isdigit((unsigned char)*s) || *s == '.'))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || v < 0)
		return -EINVAL;
	if (strcmp(end, "ms") == 0)
		mul = 1.0;
	else if (strcmp(end, "m") == 0)
		mul = 60000.0;
	else if (strcmp(end, "h") == 0)
		mul = 3600000.0;
	else if (*end && strcmp(end, "s") != 0)
		return -EINVAL;
	v *= mul;
	if (v > 1e15)
		return -ERANGE;
	*out = (uint64_t)(v + 0.5);
	return 0;
}

/* Bytes with an optional k/K, m/M, g/G suffix (binary multiples). */
static int parse_size(const char *s, uint64_t *out)
{
	char digits[32];
	size_t n = strlen(s);
	uint64_t mul = 1, v;
	int rc;

	if (n == 0 || n >= sizeof(digits))
		return -EINVAL;
	memcpy(digits, s, n + 1);
	switch (digits[n - 1]) {
	case 'k': case 'K': mul = 1024; break;
	case 'm': case 'M': mul = 1024 * 1024; break;
	case 'g': case 'G': mul = GiB; break;
	default: break;
	}
	if (mul != 1)
		digits[n - 1] = '\0';
	rc = parse_u64(digits, 0, UINT64_MAX / mul, &v);
	if (rc < 0)
		return rc;
	*out = v * mul;
	return 0;
}

static int parse_bool(const char *s, bool *out)
{
	if (!strcmp(s, "1") || !strcasecmp(s, "true") || !strcasecmp(s, "yes") ||
	    !strcasecmp(s, "on")) {
		*out = true;
		return 0;
	}
	if (!strcmp(s, "0") || !strcasecmp(s, "false") || !strcasecmp(s, "no") ||
	    !strcasecmp(s, "off")) {
		*out = false;
		return 0;
	}
	return -EINVAL;
}

/* Apply one textual value; on error, a reason without the source prefix. */
/* A word option (a string, a boolean, the jail, the log level) into its
 * field: 0, or -EINVAL with why. */
static int opt_apply_word(void *field, enum opt_type type, const char *val, char *why,
			  size_t whylen)
{
	switch (type) {
	case OT_STR:
		if (!*val) {
			snprintf(why, whylen, "must not be empty");
			return -EINVAL;
		}
		free(*(char **)field);
		*(char **)field = xstrdup(val);
		return 0;
	case OT_BOOL:
		if (parse_bool(val, (bool *)field) < 0) {
			snprintf(why, whylen, "'%s' is not a boolean (true/false)", val);
			return -EINVAL;
		}
		return 0;
	case OT_JAIL:
		if (!strcmp(val, "auto"))
			*(enum jail_kind *)field = JAIL_KIND_AUTO;
		else if (!strcmp(val, "nsjail"))
			*(enum jail_kind *)field = JAIL_KIND_NSJAIL;
		else if (!strcmp(val, "bwrap") || !strcmp(val, "bubblewrap"))
			*(enum jail_kind *)field = JAIL_KIND_BWRAP;
		else {
			snprintf(why, whylen, "'%s' is not one of auto, nsjail, bwrap", val);
			return -EINVAL;
		}
		return 0;
	default: {
		enum log_level l;

		if (log_parse_level(val, &l) < 0) {
			snprintf(why, whylen, "'%s' is not one of debug, info, warn, error", val);
			return -EINVAL;
		}
		*(int *)field = (int)l;
		return 0;
	}
	}
}

/* A number, checked against its option's range, into its field as its
 * type stores it (durations in ms or whole seconds up, sizes in bytes or
 * KiB up). */
static void opt_store_number(void *field, enum opt_type type, uint64_t v)
{
	switch (type) {
	case OT_U16:
		*(uint16_t *)field = (uint16_t)v;
		break;
	case OT_UINT:
		*(unsigned *)field = (unsigned)v;
		break;
	case OT_U32:
	case OT_MS:
		*(uint32_t *)field = (uint32_t)v;
		break;
	case OT_SEC:
		*(uint32_t *)field = (uint32_t)((v + 999) / 1000);
		break;
	case OT_SIZE:
		*(size_t *)field = (size_t)v;
		break;
	case OT_BYTES64:
		*(uint64_t *)field = v;
		break;
	case OT_KB:
		*(uint64_t *)field = (v + 1023) / 1024;
		break;
	default:
		break;
	}
}

static int opt_apply(struct config *c, const struct opt *o, const char *val, char *why,
		     size_t whylen)
{
	void *field = (char *)c + o->off;
	bool duration = false, size = false;
	uint64_t v = 0;
	int rc = 0;

	switch (o->type) {
	case OT_STR:
	case OT_BOOL:
	case OT_JAIL:
	case OT_LEVEL:
		return opt_apply_word(field, o->type, val, why, whylen);
	case OT_MS:
	case OT_SEC:
		duration = true;
		rc = parse_duration_ms(val, &v);
		break;
	case OT_SIZE:
	case OT_BYTES64:
	case OT_KB:
		size = true;
		rc = parse_size(val, &v);
		break;
	default:
		rc = parse_u64(val, 0, UINT64_MAX, &v);
		break;
	}
	if (rc < 0) {
		snprintf(why, whylen, "'%s' is not a valid %s", val,
			 duration ? "duration (e.g. 10, 2.5s, 500ms)" :
			 size ? "size (e.g. 65536, 64k, 16M)" : "number");
		return -EINVAL;
	}
	if (v < o->min || v > o->max) {
		snprintf(why, whylen, "%s is out of range [%llu, %llu]%s", val,
			 (unsigned long long)o->min, (unsigned long long)o->max,
			 duration ? " ms" : size ? " bytes" : "");
		return -EINVAL;
	}
	opt_store_number(field, o->type, v);
	return 0;
}

static const struct opt *opt_by_name(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(opts); i++)
		if (strcmp(opts[i].name, name) == 0)
			return &opts[i];
	return NULL;
}

/* "max-tests" -> "max_tests" (YAML) or "GOBOXD_MAX_TESTS" (env). */
static void opt_key(const char *name, char *out, size_t n, bool env)
{
	size_t j = 0;

	if (env)
		j = (size_t)snprintf(out, n, "GOBOXD_");
	for (size_t i = 0; name[i] && j + 1 < n; i++) {
		char ch = name[i] == '-' ? '_' : name[i];

		out[j++] = env ? (char)toupper((unsigned char)ch) : ch;
	}
	out[j] = '\0';
}

int config_load_file(struct config *c, const char *path, char *err, size_t errlen)
{
	struct yamlutil_node *root = NULL;
	int rc = -EINVAL;

	if (yamlutil_load_file(path, &root, err, errlen) < 0)
		return -EINVAL;
	if (root->type != YAMLUTIL_MAP) {
		snprintf(err, errlen, "%s:%d: the config file must be a mapping of option: value",
			 path, root->line);
		goto out;
	}
	for (size_t i = 0; i < root->n; i++) {
		const char *key = root->keys[i];
		const struct yamlutil_node *val = root->items[i];
		const struct opt *o = NULL;
		char name[64], why[200];

		for (size_t k = 0; k < ARRAY_SIZE(opts); k++) {
			opt_key(opts[k].name, name, sizeof(name), false);
			if (strcmp(name, key) == 0) {
				o = &opts[k];
				break;
			}
		}
		if (!o) {
			snprintf(err, errlen, "%s:%d: unknown option '%s'", path, root->key_lines[i],
				 key);
			goto out;
		}
		if (val->type != YAMLUTIL_SCALAR) {
			snprintf(err, errlen, "%s:%d: %s: expected a single value", path, val->line,
				 key);
			goto out;
		}
		if (opt_apply(c, o, val->scalar, why, sizeof(why)) < 0) {
			snprintf(err, errlen, "%s:%d: %s: %s", path, val->line, key, why);
			goto out;
		}
	}
	rc = 0;
out:
	yamlutil_free(root);
	return rc;
}

static const char *env_get(char *const *envp, const char *name)
{
	size_t n = strlen(name);

	for (; envp && *envp; envp++)
		if (strncmp(*envp, name, n) == 0 && (*envp)[n] == '=')
			return *envp + n + 1;
	return NULL;
}

int config_load_env(struct config *c, char *const *envp, char *err, size_t errlen)
{
	char name[64], why[200];
	const char *v;

	/* PORT is what container platforms set; GOBOXD_PORT wins over it. */
	v = env_get(envp, "PORT");
	if (v && opt_apply(c, opt_by_name("port"), v, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "environment PORT: %s", why);
		return -EINVAL;
	}
	for (size_t i = 0; i < ARRAY_SIZE(opts); i++) {
		opt_key(opts[i].name, name, sizeof(name), true);
		v = env_get(envp, name);
		if (!v)
			continue;
		if (opt_apply(c, &opts[i], v, why, sizeof(why)) < 0) {
			snprintf(err, errlen, "environment %s: %s", name, why);
			return -EINVAL;
		}
	}
	return 0;
}

enum { OPT_CONFIG = 1000, OPT_HELP, OPT_VERSION, OPT_CHECK, OPT_LIST, OPT_BASE };

static void print_help(const char *argv0)
{
	char env[64];

	printf("Usage: %s [OPTION]...\n"
	       "goboxd runs untrusted code in sandboxes for judges and code runners.\n\n"
	       "  --config FILE            YAML config file (env GOBOXD_CONFIG)\n"
	       "  --check                  validate the config and languages, then exit\n"
	       "  --list-packages=debian|npm  print the languages' install packages\n"
	       "  --help, --version\n",
	       argv0);
	for (size_t i = 0; i < ARRAY_SIZE(opts); i++) {
		opt_key(opts[i].name, env, sizeof(env), true);
		printf("  --%-22s %s%s%s (%s)\n", opts[i].name, opts[i].help,
		       opts[i].dflt ? "; default " : "", opts[i].dflt ? opts[i].dflt : "", env);
	}
	printf("\nPrecedence: command line, then environment, then config file, then "
	       "defaults.\nDurations: 10, 2.5s, 500ms, 2m. Sizes: 65536, 64k, 16M.\n");
}

static struct option *build_longopts(void)
{
	size_t n = ARRAY_SIZE(opts);
	struct option *lo = xcalloc(n + 7, sizeof(*lo));
	size_t i;

	for (i = 0; i < n; i++) {
		lo[i].name = opts[i].name;
		lo[i].has_arg = opts[i].type == OT_BOOL ? optional_argument : required_argument;
		lo[i].val = OPT_BASE + (int)i;
	}
	lo[i++] = (struct option){ "config", required_argument, NULL, OPT_CONFIG };
	lo[i++] = (struct option){ "help", no_argument, NULL, OPT_HELP };
	lo[i++] = (struct option){ "version", no_argument, NULL, OPT_VERSION };
	lo[i++] = (struct option){ "check", no_argument, NULL, OPT_CHECK };
	lo[i++] = (struct option){ "list-packages", required_argument, NULL, OPT_LIST };
	lo[i++] = (struct option){ "max-concurrent-jobs", required_argument, NULL,
				   OPT_BASE + (int)(opt_by_name("max-concurrency") - opts) };
	return lo;
}

int config_load_args(struct config *c, int argc, char **argv, bool *exit_now, char *err,
		     size_t errlen)
{
	struct option *lo = build_longopts();
	char why[200];
	int ch, rc = -EINVAL;

	*exit_now = false;
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "hVp:w:c:", lo, NULL)) != -1) {
		const struct opt *o = NULL;
		const char *val = optarg;
		const char *arg = optarg ? optarg : "";

		switch (ch) {
		case 'h':
		case OPT_HELP:
			print_help(argv[0]);
			*exit_now = true;
			rc = 0;
			goto out;
		case 'V':
		case OPT_VERSION:
			printf("goboxd %s (commit %s)\n", PACKAGE_VERSION, GOBOXD_GIT_COMMIT);
			*exit_now = true;
			rc = 0;
			goto out;
		case 'c':
		case OPT_CONFIG:
			free(c->config_file);
			c->config_file = xstrdup(arg);
			continue;
		case OPT_CHECK:
			c->action = ACTION_CHECK;
			continue;
		case OPT_LIST:
			if (!strcmp(arg, "debian"))
				c->action = ACTION_LIST_DEBIAN;
			else if (!strcmp(arg, "npm"))
				c->action = ACTION_LIST_NPM;
			else {
				snprintf(err, errlen, "--list-packages: '%s' is not debian or npm",
					 arg);
				goto out;
			}
			continue;
		case 'p':
			o = opt_by_name("port");
			break;
		case 'w':
			o = opt_by_name("workers");
			break;
		case '?':
			snprintf(err, errlen, "unknown or incomplete option '%s' (see --help)",
				 argv[optind - 1]);
			goto out;
		default:
			if (ch >= OPT_BASE && ch < OPT_BASE + (int)ARRAY_SIZE(opts))
				o = &opts[ch - OPT_BASE];
			break;
		}
		if (!o) {
			snprintf(err, errlen, "unexpected option");
			goto out;
		}
		if (!val)
			val = o->type == OT_BOOL ? "true" : "";
		if (opt_apply(c, o, val, why, sizeof(why)) < 0) {
			snprintf(err, errlen, "--%s: %s", o->name, why);
			goto out;
		}
	}
	if (optind < argc) {
		snprintf(err, errlen, "unexpected argument '%s' (see --help)", argv[optind]);
		goto out;
	}
	rc = 0;
out:
	free(lo);
	return rc;
}

int config_resolve_paths(struct config *c, const char *cwd, char *err, size_t errlen)
{
	struct {
		const char *name;
		char **path;
	} paths[] = {
		{ "languages-dir", &c->languages_dir }, { "jail-dir", &c->jail_dir },
		{ "log-file", &c->log_file }, { "init-path", &c->init_path },
		{ "nsjail-path", &c->nsjail_path }, { "bwrap-path", &c->bwrap_path },
		{ "cgroup-root", &c->cgroup_root },
		{ "try-page-xterm-dir", &c->try_page_xterm_dir },
		{ "slirp4netns-path", &c->slirp4netns_path },
	};

	for (size_t i = 0; i < ARRAY_SIZE(paths); i++) {
		char *p = *paths[i].path, *abs;
		size_t n;

		if (!p || !*p || p[0] == '/')
			continue;
		while (p[0] == '.' && p[1] == '/')
			p += 2;
		n = strlen(cwd) + 1 + strlen(p) + 1;
		if (n > PATH_MAX) {
			snprintf(err, errlen, "--%s: %s/%s is longer than PATH_MAX", paths[i].name,
				 cwd, p);
			return -EINVAL;
		}
		abs = xcalloc(1, n);
		if (strcmp(p, ".") == 0)
			snprintf(abs, n, "%s", cwd);
		else
			snprintf(abs, n, "%s%s%s", cwd, strcmp(cwd, "/") ? "/" : "", p);
		free(*paths[i].path);
		*paths[i].path = abs;
	}
	return 0;
}

void config_builddir_languages(struct config *c, const char *exe, const char *builddir,
			       const char *srcdir)
{
	size_t n = strlen(builddir);
	char dir[PATH_MAX];
	struct stat st;

	if (strcmp(c->languages_dir, CONFIG_DEFAULT_LANGUAGES_DIR) != 0 ||
	    stat(c->languages_dir, &st) == 0)
		return;
	if (!exe || strncmp(exe, builddir, n) != 0 || exe[n] != '/')
		return;
	char named[PATH_MAX];

	/* realpath: a tree configured as ../configure names its source
	 * directory through the build directory ("SRC/build/.."), which the
	 * log and --check should not repeat */
	if ((size_t)snprintf(named, sizeof(named), "%s/languages", srcdir) >= sizeof(named) ||
	    !realpath(named, dir) || stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
		return;
	free(c->languages_dir);
	c->languages_dir = xstrdup(dir);
	c->languages_from_source = true;
}

int config_validate(const struct config *c, char *err, size_t errlen)
{
	if (c->languages_dir[0] != '/' || c->jail_dir[0] != '/') {
		snprintf(err, errlen, "languages-dir and jail-dir must be absolute paths "
			 "(the working directory could not be read to resolve them)");
		return -EINVAL;
	}
	if (c->node_name && strlen(c->node_name) > 63) {
		snprintf(err, errlen, "node-name: at most 63 bytes");
		return -EINVAL;
	}
	if (c->limits_max.cpu_ms == 0 || c->limits_max.wall_ms == 0) {
		snprintf(err, errlen, "max-wall-time and max-cpu-time must be positive");
		return -EINVAL;
	}
	return 0;
}

/* Find --config / -c in argv without consuming anything. */
static const char *argv_config(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if ((!strcmp(argv[i], "--config") || !strcmp(argv[i], "-c")) && i + 1 < argc)
			return argv[i + 1];
		if (!strncmp(argv[i], "--config=", 9))
			return argv[i] + 9;
	}
	return NULL;
}

/* Relative paths against the working directory; the languages of the
 * source tree when this goboxd runs from its build directory. */
static int resolve_here(struct config *c, char *err, size_t errlen)
{
	char cwd[PATH_MAX];

	if (getcwd(cwd, sizeof(cwd)) && config_resolve_paths(c, cwd, err, errlen) < 0)
		return -EINVAL;
	if (self_exe()[0])
		config_builddir_languages(c, self_exe(), GOBOXD_BUILDDIR, GOBOXD_SRCDIR);
	return 0;
}

/*
 * --network's stack, and the device it opens as the jail's uid: a
 * Debian host's udev leaves /dev/net/tun open to every uid (0666).
 */
static int network_usable(const struct config *c, char *err, size_t errlen)
{
	struct stat st;

	if (access(c->slirp4netns_path, X_OK) < 0) {
		snprintf(err, errlen,
			 "--network: no slirp4netns at %s (apt-get install slirp4netns, or "
			 "--slirp4netns-path)", c->slirp4netns_path);
		return -EINVAL;
	}
	if (stat("/dev/net/tun", &st) < 0 || !S_ISCHR(st.st_mode) ||
	    (st.st_mode & 0666) != 0666) {
		snprintf(err, errlen,
			 "--network: /dev/net/tun is missing or not open to every uid, which "
			 "slirp4netns needs as the jail's (modprobe tun; chmod 0666 /dev/net/tun)");
		return -EINVAL;
	}
	return 0;
}

int config_build(struct config *c, int argc, char **argv, char *const *envp, bool *exit_now,
		 char *err, size_t errlen)
{
	const char *file = argv_config(argc, argv);
	int rc;

	config_defaults(c);
	*exit_now = false;
	if (!file)
		file = env_get(envp, "GOBOXD_CONFIG");
	if (file) {
		c->config_file = xstrdup(file);
		if (config_load_file(c, file, err, errlen) < 0)
			return -EINVAL;
	}
	if (config_load_env(c, envp, err, errlen) < 0)
		return -EINVAL;
	if (config_load_args(c, argc, argv, exit_now, err, errlen) < 0)
		return -EINVAL;
	if (*exit_now)
		return 0;
	if (resolve_here(c, err, errlen) < 0)
		return -EINVAL;
	config_derive(c);
	if (!c->node_name || !c->node_name[0]) {
		char host[64] = "";
		char name[96];

		if (gethostname(host, sizeof(host) - 1) < 0 || !host[0])
			snprintf(host, sizeof(host), "goboxd");
		snprintf(name, sizeof(name), "%s:%u", host, (unsigned)c->port);
		free(c->node_name);
		c->node_name = xstrdup(name);
	}
	rc = config_validate(c, err, errlen);
	if (rc == 0 &&
	    cidr_list_parse(c->callback_allow_networks, &c->callback_nets, err, errlen) < 0) {
		char why[512];

		snprintf(why, sizeof(why), "--callback-allow-networks: %s", err);
		snprintf(err, errlen, "%s", why);
		return -EINVAL;
	}
	if (rc == 0 && c->network && (rc = network_usable(c, err, errlen)) < 0)
		return rc;
	if (rc == 0 && cidr_list_parse(c->network_allow, &c->network_nets, err, errlen) < 0) {
		char why[512];

		snprintf(why, sizeof(why), "--network-allow: %s", err);
		snprintf(err, errlen, "%s", why);
		return -EINVAL;
	}
	if (rc == 0 && c->auth_tokens_file && c->auth_tokens_file[0] &&
	    (rc = auth_load(c->auth_tokens_file, &c->auth, err, errlen)) < 0) {
		char why[512];

		snprintf(why, sizeof(why), "--auth-tokens: %s", err);
		snprintf(err, errlen, "%s", why);
		return -EINVAL;
	}
	return rc;
}
