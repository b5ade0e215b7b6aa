#include "autoconf.h"

#include "worker/http/routes.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <time.h>

#include "common/util.h"
#include "common/verdict.h"
#include "worker/http/api.h"
#include "worker/http/api_judge0.h"
#include "worker/http/api_judge0_info.h"
#include "worker/http/try_page.h"
#include "worker/sandbox/host.h"

#define RECENT_MAX 1024

/* Judge0's submissions: /submissions, /submissions/batch, /submissions/TOKEN. */
static bool is_submissions(const char *path)
{
	static const char base[] = "/submissions";

	return strncmp(path, base, sizeof(base) - 1) == 0 &&
	       (path[sizeof(base) - 1] == '\0' ||
		(path[sizeof(base) - 1] == '/' && path[sizeof(base)] != '\0'));
}

enum route_api routes_api(const char *path)
{
	static const char *const judge0[] = { "/languages", "/statuses", "/about", "/config_info",
					      "/system_info", "/workers", "/authenticate",
					      "/authorize", "/version", "/isolate", "/license",
					      "/statistics" };

	if (is_submissions(path) || !strncmp(path, "/languages/", 11))
		return API_JUDGE0;
	for (size_t i = 0; i < ARRAY_SIZE(judge0); i++)
		if (!strcmp(path, judge0[i]))
			return API_JUDGE0;
	if (!strncmp(path, "/api/v2/", 8))
		return API_PISTON;
	if (!strncmp(path, "/v1/", 4))
		return API_CODIZE;
	return API_NATIVE;
}

bool routes_is_probe(const char *path)
{
	return !strcmp(path, "/healthz") || !strcmp(path, "/readyz") || !strcmp(path, "/metrics");
}

enum route_kind routes_classify(const struct http_request *r)
{
	bool post = strcmp(r->method, "POST") == 0;

	if (!strcmp(r->path, "/statistics") && !strcmp(r->method, "GET"))
		return ROUTE_SUBMISSIONS;
	if (is_submissions(r->path)) {
		char *wait = post && !strcmp(r->path, "/submissions") ?
				     http_query_param(r, "wait") : NULL;
		bool sync = wait && !strcmp(wait, "true");

		free(wait);
		return sync ? ROUTE_JOB : ROUTE_SUBMISSIONS;
	}
	if (!strcmp(r->path, "/sessions") || !strcmp(r->path, "/api/v2/connect"))
		return ROUTE_SESSION;
	if (post && (!strcmp(r->path, "/run") || !strcmp(r->path, "/v1/run") ||
		     !strcmp(r->path, "/api/v2/execute")))
		return ROUTE_JOB;
	return ROUTE_SIMPLE;
}

static int send_json(struct buf *out, int status, cJSON *o, bool ka, const char *hdr)
{
	char *body = o ? cJSON_PrintUnformatted(o) : NULL;

	cJSON_Delete(o);
	if (!body)
		return http_format_error(out, 500, "out_of_memory", "no memory", ka, hdr), 500;
	http_format_response(out, status, "application/json", body, strlen(body), ka, hdr);
	free(body);
	return status;
}

/*
 * Judge0's GET /workers: one queue (goboxd has one), its length (with a
 * shared store's, the fleet's submissions waiting there too), and the
 * workers by state.
 */
static cJSON *judge0_workers(const struct route_ctx *rc)
{
	cJSON *a = cJSON_CreateArray(), *o = cJSON_CreateObject();
	unsigned available = 0, idle = 0, working = 0;
	double size = (double)atomic_load(&rc->stats->queued);

	if (store_url_shared(rc->cfg->store)) {
		struct store_seen *seen = xcalloc(1, sizeof(*seen));

		stats_store_read(rc->stats, seen);
		size += (double)seen->ov.queued;
		free(seen);
	}

	for (size_t i = 0; i < STATS_MAX_WORKERS; i++) {
		int st = atomic_load(&rc->stats->workers[i].state);

		if (st == WS_EMPTY)
			continue;
		available++;
		idle += st == WS_IDLE;
		working += st == WS_BUSY;
	}
	cJSON_AddStringToObject(o, "queue", "goboxd");
	cJSON_AddNumberToObject(o, "size", size);
	cJSON_AddNumberToObject(o, "available", available);
	cJSON_AddNumberToObject(o, "idle", idle);
	cJSON_AddNumberToObject(o, "working", working);
	cJSON_AddNumberToObject(o, "paused", 0);
	cJSON_AddNumberToObject(o, "failed", 0);
	cJSON_AddItemToArray(a, o);
	return a;
}

/* Judge0's GET /system_info: what lscpu and free would say, briefly. */
static cJSON *judge0_system_info(void)
{
	cJSON *o = cJSON_CreateObject();
	struct utsname u;
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);

	if (uname(&u) == 0) {
		cJSON_AddStringToObject(o, "Architecture", u.machine);
		cJSON_AddStringToObject(o, "Kernel", u.release);
	}
	cJSON_AddNumberToObject(o, "CPU(s)", (double)sysconf(_SC_NPROCESSORS_ONLN));
	if (pages > 0 && page > 0)
		cJSON_AddNumberToObject(o, "Mem", (double)pages * (double)page);
	return o;
}

/* Piston's error body. */
static cJSON *piston_message(const char *msg)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "message", msg);
	return o;
}

/*
 * Piston's /api/v2/packages: GET lists, POST installs, DELETE removes;
 * any other method is no route of its router (its 404).
 */
static int piston_packages(const struct route_ctx *rc, const struct http_request *r, bool ka,
			   const char *hdr, struct buf *out)
{
	bool post = !strcmp(r->method, "POST");
	cJSON *body = NULL;
	int status;

	if (!strcmp(r->method, "GET"))
		return send_json(out, 200, api_piston_packages(rc->langs), ka, hdr);
	if (!post && strcmp(r->method, "DELETE") != 0)
		return send_json(out, 404, piston_message("Not Found"), ka, hdr);
	status = api_piston_package_change(post, r->body.data, r->body.len, rc->langs, &body);
	return send_json(out, status, body, ka, hdr);
}

static void iso_time(uint64_t ms, char *out, size_t n)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static cJSON *limits_json(const struct limits *l)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddNumberToObject(o, "wall_time_s", l->wall_ms / 1000.0);
	cJSON_AddNumberToObject(o, "cpu_time_s", l->cpu_ms / 1000.0);
	cJSON_AddNumberToObject(o, "memory_kb", (double)l->memory_kb);
	cJSON_AddNumberToObject(o, "max_processes", l->max_processes);
	cJSON_AddNumberToObject(o, "file_size_kb", (double)l->fsize_kb);
	cJSON_AddNumberToObject(o, "output_kb", (double)l->output_kb);
	return o;
}

static const struct probe_entry *probe_find(const struct probe_snapshot *s, const char *id)
{
	for (uint32_t i = 0; i < s->n && i < STATS_MAX_LANGS; i++)
		if (strcmp(s->e[i].id, id) == 0)
			return &s->e[i];
	return NULL;
}

static int do_readyz(const struct route_ctx *rc, bool ka, const char *hdr, struct buf *out)
{
	struct probe_snapshot *snap = xcalloc(1, sizeof(*snap));
	cJSON *o = cJSON_CreateObject();
	cJSON *jail = cJSON_AddObjectToObject(o, "nsjail");
	cJSON *langs = cJSON_AddObjectToObject(o, "languages");
	bool ready;
	bool fresh;

	probe_table_read(rc->probes, snap);
	fresh = snap->done_wall_ms != 0 && snap->generation == rc->generation;
	ready = fresh && snap->jail_state == PROBE_OK && !rc->sandbox_error;
	cJSON_AddBoolToObject(jail, "ok", snap->jail_state == PROBE_OK && !rc->sandbox_error);
	cJSON_AddStringToObject(jail, "driver", rc->jail_name[0] ? rc->jail_name : snap->jail_name);
	cJSON_AddStringToObject(jail, "path", rc->jail_path[0] ? rc->jail_path : snap->jail_path);
	cJSON_AddStringToObject(jail, "version", snap->jail_version);
	if (rc->sandbox_error)
		cJSON_AddStringToObject(jail, "error", rc->sandbox_error);
	else if (snap->jail_error[0])
		cJSON_AddStringToObject(jail, "error", snap->jail_error);
	for (size_t i = 0; i < langtab_count(rc->langs); i++) {
		const struct lang *l = langtab_at(rc->langs, i);
		const struct probe_entry *e = fresh ? probe_find(snap, l->id) : NULL;
		cJSON *lo = cJSON_AddObjectToObject(langs, l->id);

		if (e && e->state == PROBE_OK) {
			cJSON_AddBoolToObject(lo, "ok", true);
			cJSON_AddStringToObject(lo, "version", e->version);
		} else {
			cJSON_AddBoolToObject(lo, "ok", false);
			cJSON_AddStringToObject(lo, "error", e ? e->error :
					fresh ? "not probed" : "probes are running");
			ready = false;
		}
	}
	/* a node of a fleet serves nothing async while its store is away */
	if (store_url_shared(rc->cfg->store)) {
		struct store_seen *seen = xcalloc(1, sizeof(*seen));
		cJSON *so = cJSON_AddObjectToObject(o, "store");

		stats_store_read(rc->stats, seen);
		cJSON_AddBoolToObject(so, "ok", seen->up);
		if (!seen->up) {
			cJSON_AddStringToObject(so, "error", seen->wall_ms ? seen->error :
					"not reached yet");
			ready = false;
		}
		free(seen);
	}
	cJSON_AddStringToObject(o, "status", ready ? "ok" : "degraded");
	free(snap);
	return send_json(out, ready ? 200 : 503, o, ka, hdr);
}

static cJSON *stats_json(const struct route_ctx *rc)
{
	const struct stats *s = rc->stats;
	struct job_record *recs = xcalloc(RECENT_MAX, sizeof(*recs));
	size_t n = stats_recent(s, recs, RECENT_MAX);
	cJSON *o = cJSON_CreateObject();
	cJSON *lat = cJSON_CreateObject();
	cJSON *ws = cJSON_CreateArray();
	uint64_t last = atomic_load(&s->last_internal_error_ms);
	struct statvfs vfs;
	char when[40];

	cJSON_AddNumberToObject(o, "in_flight_jobs", (double)atomic_load(&s->in_flight));
	cJSON_AddNumberToObject(o, "queued_jobs", (double)atomic_load(&s->queued));
	cJSON_AddNumberToObject(o, "jobs_total", (double)atomic_load(&s->jobs_total));
	cJSON_AddNumberToObject(o, "jobs_taken_directly",
				(double)atomic_load(&s->jobs_taken_directly));
	cJSON_AddNumberToObject(o, "jobs_failed_internal",
				(double)atomic_load(&s->jobs_failed_internal));
	if (last) {
		iso_time(last, when, sizeof(when));
		cJSON_AddStringToObject(o, "last_internal_error_at", when);
	} else {
		cJSON_AddNullToObject(o, "last_internal_error_at");
	}
	cJSON_AddNumberToObject(o, "requests_total", (double)atomic_load(&s->requests_total));
	cJSON_AddNumberToObject(o, "queue_rejected_full",
				(double)atomic_load(&s->queue_rejected_full));
	cJSON_AddNumberToObject(o, "queue_rejected_timeout",
				(double)atomic_load(&s->queue_rejected_timeout));
	cJSON_AddNumberToObject(o, "workers_respawned", (double)atomic_load(&s->workers_respawned));
	cJSON_AddNumberToObject(o, "reloads", (double)atomic_load(&s->reloads));
	if (statvfs(rc->cfg->jail_dir, &vfs) == 0)
		cJSON_AddNumberToObject(o, "disk_free_bytes_jail_dir",
					(double)vfs.f_bavail * (double)vfs.f_frsize);
	else
		cJSON_AddNullToObject(o, "disk_free_bytes_jail_dir");
	cJSON_AddNumberToObject(lat, "samples", (double)n);
	cJSON_AddNumberToObject(lat, "p50", stats_percentile(recs, n, 50));
	cJSON_AddNumberToObject(lat, "p95", stats_percentile(recs, n, 95));
	cJSON_AddNumberToObject(lat, "p99", stats_percentile(recs, n, 99));
	cJSON_AddItemToObject(o, "latency_ms", lat);
	cJSON_AddNumberToObject(o, "uptime_s",
				(double)(wall_ms() - atomic_load(&s->started_wall_ms)) / 1000.0);
	for (size_t i = 0; i < STATS_MAX_WORKERS; i++) {
		const struct worker_slot *ws_i = &s->workers[i];
		int32_t state = atomic_load(&ws_i->state);
		static const char *const names[] = { "empty", "idle", "busy", "draining" };
		cJSON *wo;

		if (state == WS_EMPTY || atomic_load(&ws_i->pid) == 0)
			continue;
		wo = cJSON_CreateObject();
		cJSON_AddNumberToObject(wo, "slot", (double)i);
		cJSON_AddNumberToObject(wo, "pid", atomic_load(&ws_i->pid));
		cJSON_AddNumberToObject(wo, "generation", atomic_load(&ws_i->generation));
		cJSON_AddStringToObject(wo, "state", names[state & 3]);
		cJSON_AddNumberToObject(wo, "jobs_done", (double)atomic_load(&ws_i->jobs_done));
		cJSON_AddItemToArray(ws, wo);
	}
	cJSON_AddItemToObject(o, "workers", ws);
	free(recs);
	return o;
}

static void metric(struct buf *b, const char *name, const char *type, const char *help,
		   double v)
{
	buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n%s %.0f\n", name, help, name, type, name, v);
}

/* The submission store as the watcher last saw it: where every
 * submission is, and, in a shared store, every node's last beat. */
static cJSON *store_json(const struct route_ctx *rc)
{
	struct store_seen *seen = xcalloc(1, sizeof(*seen));
	cJSON *o = cJSON_CreateObject();
	cJSON *nodes;

	stats_store_read(rc->stats, seen);
	cJSON_AddStringToObject(o, "backend", store_url_shared(rc->cfg->store) ? "postgresql" :
					      "sqlite");
	cJSON_AddBoolToObject(o, "shared", store_url_shared(rc->cfg->store));
	cJSON_AddStringToObject(o, "node", rc->cfg->node_name ? rc->cfg->node_name : "");
	cJSON_AddBoolToObject(o, "up", seen->up);
	if (!seen->up)
		cJSON_AddStringToObject(o, "error", seen->wall_ms ? seen->error : "not looked at yet");
	cJSON_AddNumberToObject(o, "seen_age_ms",
				seen->wall_ms ? (double)(wall_ms() - seen->wall_ms) : -1);
	cJSON_AddNumberToObject(o, "queued", (double)seen->ov.queued);
	cJSON_AddNumberToObject(o, "running", (double)seen->ov.running);
	cJSON_AddNumberToObject(o, "oldest_queued_age_ms", (double)seen->ov.oldest_queued_age_ms);
	nodes = cJSON_AddArrayToObject(o, "nodes");
	for (size_t i = 0; i < seen->ov.nodes && i < STORE_MAX_NODES; i++) {
		const struct store_node *n = &seen->ov.node[i];
		cJSON *no = cJSON_CreateObject();

		cJSON_AddStringToObject(no, "name", n->name);
		cJSON_AddNumberToObject(no, "heartbeat_age_ms", (double)n->heartbeat_age_ms);
		cJSON_AddNumberToObject(no, "started_ms", (double)n->started_ms);
		cJSON_AddNumberToObject(no, "workers", n->workers);
		cJSON_AddNumberToObject(no, "running", n->running);
		cJSON_AddItemToArray(nodes, no);
	}
	free(seen);
	return o;
}

/* A label value as Prometheus' text format writes it. */
static void label_value(struct buf *b, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			buf_printf(b, "\\%c", *v);
		else if (*v == '\n')
			buf_puts(b, "\\n");
		else
			buf_printf(b, "%c", *v);
	}
}

static void store_metrics(const struct route_ctx *rc, struct buf *b)
{
	struct store_seen *seen = xcalloc(1, sizeof(*seen));

	stats_store_read(rc->stats, seen);
	metric(b, "goboxd_store_up", "gauge",
	       "Whether the submission store answered this node's last look.", seen->up);
	metric(b, "goboxd_store_queued", "gauge",
	       "Submissions waiting in the store (the whole fleet's, when shared).",
	       (double)seen->ov.queued);
	metric(b, "goboxd_store_running", "gauge",
	       "Submissions running (under a live lease, when shared).",
	       (double)seen->ov.running);
	buf_printf(b, "# HELP goboxd_store_oldest_queued_seconds How long the oldest waiting"
		      " submission has waited.\n# TYPE goboxd_store_oldest_queued_seconds gauge\n"
		      "goboxd_store_oldest_queued_seconds %.3f\n",
		   (double)seen->ov.oldest_queued_age_ms / 1000.0);
	if (seen->ov.nodes) {
		buf_puts(b, "# HELP goboxd_store_node_heartbeat_age_seconds Since each node of the"
			    " fleet last said it lives.\n"
			    "# TYPE goboxd_store_node_heartbeat_age_seconds gauge\n");
		for (size_t i = 0; i < seen->ov.nodes && i < STORE_MAX_NODES; i++) {
			buf_puts(b, "goboxd_store_node_heartbeat_age_seconds{node=\"");
			label_value(b, seen->ov.node[i].name);
			buf_printf(b, "\"} %.3f\n", (double)seen->ov.node[i].heartbeat_age_ms / 1000.0);
		}
		buf_puts(b, "# HELP goboxd_store_node_running Jobs each node of the fleet runs, as"
			    " its last beat said.\n# TYPE goboxd_store_node_running gauge\n");
		for (size_t i = 0; i < seen->ov.nodes && i < STORE_MAX_NODES; i++) {
			buf_puts(b, "goboxd_store_node_running{node=\"");
			label_value(b, seen->ov.node[i].name);
			buf_printf(b, "\"} %u\n", seen->ov.node[i].running);
		}
	}
	free(seen);
}

static int do_info(const struct route_ctx *rc, bool ka, const char *hdr, struct buf *out)
{
	const struct config *cfg = rc->cfg;
	struct probe_snapshot *snap = xcalloc(1, sizeof(*snap));
	cJSON *o = cJSON_CreateObject();
	cJSON *bi = cJSON_AddObjectToObject(o, "build_info");
	cJSON *jail = cJSON_AddObjectToObject(o, "nsjail");
	cJSON *langs = cJSON_AddArrayToObject(o, "languages");
	cJSON *lim = cJSON_AddObjectToObject(o, "limits");

	probe_table_read(rc->probes, snap);
	cJSON_AddStringToObject(bi, "version", PACKAGE_VERSION);
	cJSON_AddStringToObject(bi, "commit", GOBOXD_GIT_COMMIT);
	cJSON_AddStringToObject(bi, "compiler", "gcc " __VERSION__);
	cJSON_AddStringToObject(jail, "driver", rc->jail_name);
	cJSON_AddStringToObject(jail, "path", rc->jail_path);
	cJSON_AddStringToObject(jail, "version", rc->jail_version);
	if (rc->sandbox_error)
		cJSON_AddStringToObject(jail, "error", rc->sandbox_error);
	for (size_t i = 0; i < langtab_count(rc->langs); i++) {
		const struct lang *l = langtab_at(rc->langs, i);
		const struct probe_entry *e =
			snap->generation == rc->generation ? probe_find(snap, l->id) : NULL;
		cJSON *lo = cJSON_CreateObject();
		cJSON *al = cJSON_AddArrayToObject(lo, "aliases");

		cJSON_AddStringToObject(lo, "id", l->id);
		cJSON_AddStringToObject(lo, "name", l->name);
		if (e && e->state == PROBE_OK)
			cJSON_AddStringToObject(lo, "version", e->version);
		else if (l->version_hint)
			cJSON_AddStringToObject(lo, "version", l->version_hint);
		else
			cJSON_AddNullToObject(lo, "version");
		for (size_t k = 0; l->aliases[k]; k++)
			cJSON_AddItemToArray(al, cJSON_CreateString(l->aliases[k]));
		cJSON_AddBoolToObject(lo, "compiled", l->has_build);
		if (l->has_build)
			cJSON_AddItemToObject(lo, "build_limits", limits_json(&l->build.limits));
		cJSON_AddItemToObject(lo, "run_limits", limits_json(&l->run.limits));
		cJSON_AddItemToArray(langs, lo);
	}
	cJSON_AddNumberToObject(lim, "max_source_bytes", (double)cfg->max_source_bytes);
	cJSON_AddNumberToObject(lim, "max_tests", cfg->max_tests);
	cJSON_AddNumberToObject(lim, "max_concurrent_jobs", cfg->max_concurrency);
	cJSON_AddNumberToObject(lim, "max_queue", cfg->max_queue_size);
	cJSON_AddNumberToObject(lim, "queue_timeout_ms", cfg->queue_timeout_ms);
	cJSON_AddNumberToObject(lim, "max_body_bytes", (double)cfg->max_run_body_bytes);
	cJSON_AddNumberToObject(lim, "max_test_stdin_bytes", (double)cfg->max_test_stdin_bytes);
	cJSON_AddNumberToObject(lim, "codize_max_body_bytes", (double)cfg->max_body_bytes);
	cJSON_AddNumberToObject(lim, "max_stdin_bytes", (double)cfg->max_stdin_bytes);
	cJSON_AddNumberToObject(lim, "max_expected_bytes", (double)cfg->max_expected_bytes);
	cJSON_AddNumberToObject(lim, "max_files", cfg->max_files);
	cJSON_AddNumberToObject(lim, "max_file_bytes", (double)cfg->max_file_bytes);
	cJSON_AddNumberToObject(lim, "max_job_output_bytes", (double)cfg->max_job_output_bytes);
	cJSON_AddNumberToObject(lim, "max_return_files", cfg->max_return_files);
	cJSON_AddNumberToObject(lim, "max_return_file_bytes", (double)cfg->max_return_file_bytes);
	cJSON_AddNumberToObject(lim, "max_return_total_bytes",
				(double)cfg->max_return_total_bytes);
	cJSON_AddNumberToObject(lim, "workers", cfg->workers);
	cJSON_AddItemToObject(lim, "step_max", limits_json(&cfg->limits_max));
	cJSON_AddItemToObject(o, "stats", stats_json(rc));
	cJSON_AddItemToObject(o, "store", store_json(rc));
	free(snap);
	return send_json(out, 200, o, ka, hdr);
}

/* The live workers' callbacks waiting: a dead one's are gone with it. */
static uint64_t callbacks_waiting(const struct stats *s)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < STATS_MAX_WORKERS; i++)
		if (atomic_load(&s->workers[i].pid) != 0)
			sum += atomic_load(&s->workers[i].callbacks_bytes);
	return sum;
}

/* Each language's jobs by status, and its duration histogram. */
static void lang_metrics(const struct stats *s, struct buf *b)
{
	buf_puts(b, "# HELP goboxd_jobs_total Finished jobs by language and status.\n"
		    "# TYPE goboxd_jobs_total counter\n");
	for (size_t i = 0; i < STATS_MAX_LANGS; i++) {
		const struct lang_stats *l = &s->langs[i];

		if (atomic_load(&l->used) != 2)
			continue;
		for (int st = 0; st < STATS_NSTATUS; st++) {
			uint64_t v = atomic_load(&l->by_status[st]);

			if (v)
				buf_printf(b, "goboxd_jobs_total{language=\"%s\",status=\"%s\"} %llu\n",
					   l->id, verdict_test_status_name((enum test_status)st),
					   (unsigned long long)v);
		}
	}
	buf_puts(b, "# HELP goboxd_job_duration_seconds Queue, build and run time of a job.\n"
		     "# TYPE goboxd_job_duration_seconds histogram\n");
	for (size_t i = 0; i < STATS_MAX_LANGS; i++) {
		const struct lang_stats *l = &s->langs[i];
		uint64_t cum = 0;

		if (atomic_load(&l->used) != 2)
			continue;
		for (size_t k = 0; k < STATS_NBUCKETS; k++) {
			cum += atomic_load(&l->buckets[k]);
			if (k < STATS_NBUCKETS - 1)
				buf_printf(b, "goboxd_job_duration_seconds_bucket{language=\"%s\",le=\"%g\"} %llu\n",
					   l->id, stats_bucket_ms[k] / 1000.0,
					   (unsigned long long)cum);
			else
				buf_printf(b, "goboxd_job_duration_seconds_bucket{language=\"%s\",le=\"+Inf\"} %llu\n",
					   l->id, (unsigned long long)cum);
		}
		buf_printf(b, "goboxd_job_duration_seconds_sum{language=\"%s\"} %.3f\n", l->id,
			   atomic_load(&l->duration_sum_ms) / 1000.0);
		buf_printf(b, "goboxd_job_duration_seconds_count{language=\"%s\"} %llu\n", l->id,
			   (unsigned long long)atomic_load(&l->count));
	}
}

static int do_metrics(const struct route_ctx *rc, bool ka, const char *hdr, struct buf *out)
{
	const struct stats *s = rc->stats;
	struct buf b;

	buf_init(&b, 0);
	metric(&b, "goboxd_active_jobs", "gauge", "Jobs running now.",
	       (double)atomic_load(&s->in_flight));
	metric(&b, "goboxd_max_active_jobs", "gauge", "Configured maximum of running jobs.",
	       rc->cfg->max_concurrency);
	metric(&b, "goboxd_queue_length", "gauge", "Jobs waiting in the queue.",
	       (double)atomic_load(&s->queued));
	metric(&b, "goboxd_max_queue_length", "gauge", "Configured maximum of waiting jobs.",
	       rc->cfg->max_queue_size);
	metric(&b, "goboxd_requests_total", "counter", "HTTP requests parsed.",
	       (double)atomic_load(&s->requests_total));
	metric(&b, "goboxd_jobs_taken_directly_total", "counter",
	       "Jobs a worker ran for a request it read itself, with no hop through the master.",
	       (double)atomic_load(&s->jobs_taken_directly));
	metric(&b, "goboxd_jobs_failed_internal_total", "counter",
	       "Jobs that failed because of the sandbox.",
	       (double)atomic_load(&s->jobs_failed_internal));
	metric(&b, "goboxd_queue_rejected_total", "counter",
	       "Jobs refused because the queue was full or the wait too long.",
	       (double)(atomic_load(&s->queue_rejected_full) +
			atomic_load(&s->queue_rejected_timeout)));
	metric(&b, "goboxd_batch_answers_refused_total", "counter",
	       "Judge0 batches and pages of submissions refused: their answer would pass"
	       " --max-batch-answer-size.",
	       (double)atomic_load(&s->batch_answers_refused));
	metric(&b, "goboxd_build_cache_hits_total", "counter",
	       "Builds taken from the build cache instead of run.",
	       (double)atomic_load(&s->build_cache_hits));
	metric(&b, "goboxd_build_cache_misses_total", "counter",
	       "Builds looked up in the build cache and not found there.",
	       (double)atomic_load(&s->build_cache_misses));
	metric(&b, "goboxd_build_cache_evictions_total", "counter",
	       "Build cache entries removed to keep it under --build-cache-mb.",
	       (double)atomic_load(&s->build_cache_evictions));
	metric(&b, "goboxd_build_cache_bytes", "gauge",
	       "Bytes the build cache's entries take, as its last sweep counted them.",
	       (double)atomic_load(&s->build_cache_bytes));
	metric(&b, "goboxd_callbacks_refused_total", "counter",
	       "Judge0 callbacks not sent: a bound on waiting ones (--callback-queue-size,"
	       " --callback-host-queue-size) left no room.",
	       (double)atomic_load(&s->callbacks_refused));
	metric(&b, "goboxd_callbacks_waiting_bytes", "gauge",
	       "Bytes of Judge0 callbacks the workers hold, waiting or being sent.",
	       (double)callbacks_waiting(s));
	store_metrics(rc, &b);
	lang_metrics(s, &b);
	http_format_response(out, 200, "text/plain; version=0.0.4", b.data ? b.data : "",
			     b.len, ka, hdr);
	buf_free(&b);
	return 200;
}

int routes_simple(const struct route_ctx *rc, const struct http_request *r, bool ka,
		  const char *hdr, struct buf *out)
{
	static const char *const known[] = { "/healthz", "/readyz", "/info", "/metrics",
					     "/run", "/v1/run", "/api/v2/execute",
					     "/api/v2/runtimes", "/api/v2/packages" };
	bool is_get = !strcmp(r->method, "GET");
	bool is_known = false;
	cJSON *body = NULL;
	char *text;
	int status;

	/* Judge0's lists and information */
	if (is_get && (status = api_judge0_info(r->path, rc->langs, rc->cfg, &body)) != 0)
		return send_json(out, status, body, ka, hdr);
	if (is_get && !strcmp(r->path, "/workers"))
		return send_json(out, 200, judge0_workers(rc), ka, hdr);
	if (is_get && !strcmp(r->path, "/system_info"))
		return send_json(out, 200, judge0_system_info(), ka, hdr);
	if (is_get && (text = api_judge0_info_text(r->path, rc->jail_name, rc->jail_version))) {
		http_format_response(out, 200, "text/plain; charset=utf-8", text, strlen(text), ka,
				     hdr);
		free(text);
		return 200;
	}

	if (rc->cfg->try_page && try_page_owns(r->path))
		return try_page_serve(rc->cfg->try_page_xterm_dir, r, ka, hdr, out);
	for (size_t i = 0; i < ARRAY_SIZE(known); i++)
		is_known |= !strcmp(r->path, known[i]);
	if (!strcmp(r->path, "/metrics") && !rc->cfg->metrics)
		is_known = false;
	if (!is_known && !strncmp(r->path, "/api/v2/", 8))
		return send_json(out, 404, piston_message("Not Found"), ka, hdr);
	if (!is_known) {
		http_format_error(out, 404, "not_found", "no such endpoint", ka, hdr);
		return 404;
	}
	if (!strcmp(r->path, "/run") || !strcmp(r->path, "/v1/run") ||
	    !strcmp(r->path, "/api/v2/execute")) {
		char allow[160];

		snprintf(allow, sizeof(allow), "%sAllow: POST\r\n", hdr);
		/* /v1/run in Codize's words, /api/v2/execute in Piston's */
		if (r->path[1] == 'a')
			send_json(out, 405, piston_message("Method not allowed"), ka, allow);
		else if (r->path[1] == 'v')
			http_format_error(out, 405, "METHOD_NOT_ALLOWED",
					  "the request method is not allowed for this resource", ka,
					  allow);
		else
			http_format_error(out, 405, "method_not_allowed", "use POST", ka, allow);
		return 405;
	}
	if (!strcmp(r->path, "/api/v2/packages"))
		return piston_packages(rc, r, ka, hdr, out);
	if (!is_get && !strcmp(r->path, "/api/v2/runtimes"))
		return send_json(out, 404, piston_message("Not Found"), ka, hdr);
	if (!is_get) {
		char allow[160];

		snprintf(allow, sizeof(allow), "%sAllow: GET\r\n", hdr);
		http_format_error(out, 405, "method_not_allowed", "use GET", ka, allow);
		return 405;
	}
	if (!strcmp(r->path, "/healthz")) {
		static const char ok[] = "{\"status\":\"ok\"}";

		http_format_response(out, 200, "application/json", ok, sizeof(ok) - 1, ka, hdr);
		return 200;
	}
	if (!strcmp(r->path, "/readyz"))
		return do_readyz(rc, ka, hdr, out);
	if (!strcmp(r->path, "/info"))
		return do_info(rc, ka, hdr, out);
	if (!strcmp(r->path, "/api/v2/runtimes"))
		return send_json(out, 200, api_piston_runtimes(rc->langs), ka, hdr);
	return do_metrics(rc, ka, hdr, out);
}
