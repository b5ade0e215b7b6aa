/* What Judge0 answers without a submission (api_judge0_info.h). */
#include "autoconf.h"

#include "worker/http/api_judge0_info.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/util.h"
#include "worker/http/api_judge0.h"
#include "worker/http/api_judge0_status.h"

/* ---- lists and information ------------------------------------------ */

/* A language as Judge0 shows it under one of its ids. */
static cJSON *language_json(const struct lang *l, unsigned id, bool whole)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddNumberToObject(o, "id", id);
	cJSON_AddStringToObject(o, "name", l->judge0_name);
	if (whole && l->judge0_project) {
		/* Judge0's Multi-file program: the archive's scripts are all */
		cJSON_AddBoolToObject(o, "is_archived", false);
		cJSON_AddNullToObject(o, "source_file");
		cJSON_AddNullToObject(o, "compile_cmd");
		cJSON_AddNullToObject(o, "run_cmd");
	} else if (whole) {
		cJSON_AddBoolToObject(o, "is_archived", false);
		cJSON_AddStringToObject(o, "source_file", l->source_filename ? l->source_filename :
							 l->source_default ? l->source_default :
									     "");
		if (l->has_build)
			cJSON_AddStringToObject(o, "compile_cmd", l->build.cmd);
		else
			cJSON_AddNullToObject(o, "compile_cmd");
		cJSON_AddStringToObject(o, "run_cmd", l->run.cmd);
	}
	return o;
}

/* Whether GET /languages lists id: a language's own, or one listed beside it. */
static bool listed(const struct lang *l, unsigned id)
{
	if (l->judge0_id == id)
		return true;
	for (size_t k = 0; l->judge0_listed && l->judge0_listed[k]; k++)
		if (l->judge0_listed[k] == id)
			return true;
	return false;
}

struct listed_id {
	unsigned id;
	const struct lang *lang;
};

static int cmp_ids(const void *a, const void *b)
{
	const struct listed_id *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

/* /languages: id and name; /languages/all: whether archived too (none is) */
static cJSON *languages(const struct langtab *t, bool all)
{
	size_t n = langtab_count(t), cap = n + 1, k = 0;
	struct listed_id *v = xcalloc(cap, sizeof(*v));
	cJSON *a = cJSON_CreateArray();

	for (size_t i = 0; i < n; i++) {
		const struct lang *l = langtab_at(t, i);

		for (size_t j = 0; l->judge0_id && (j == 0 || l->judge0_listed[j - 1]); j++) {
			if (k == cap) {
				cap *= 2;
				v = xreallocarray(v, cap, sizeof(*v));
			}
			v[k].id = j == 0 ? l->judge0_id : l->judge0_listed[j - 1];
			v[k++].lang = l;
		}
	}
	qsort(v, k, sizeof(*v), cmp_ids);
	for (size_t i = 0; i < k; i++) {
		cJSON *o = language_json(v[i].lang, v[i].id, false);

		if (all)
			cJSON_AddBoolToObject(o, "is_archived", false);
		cJSON_AddItemToArray(a, o);
	}
	free(v);
	return a;
}

static cJSON *statuses(void)
{
	cJSON *a = cJSON_CreateArray();

	for (int i = J0_IN_QUEUE; i <= J0_EXEC_FORMAT_ERROR; i++) {
		cJSON *o = cJSON_CreateObject();

		cJSON_AddNumberToObject(o, "id", i);
		cJSON_AddStringToObject(o, "description", api_judge0_status_name(i));
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

static cJSON *config_info(const struct config *cfg)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddBoolToObject(o, "maintenance_mode", false);
	cJSON_AddBoolToObject(o, "enable_wait_result", true);
	cJSON_AddBoolToObject(o, "enable_compiler_options", true);
	cJSON_AddArrayToObject(o, "allowed_languages_for_compile_options");
	cJSON_AddBoolToObject(o, "enable_command_line_arguments", true);
	cJSON_AddBoolToObject(o, "enable_submission_delete", true);
	cJSON_AddBoolToObject(o, "enable_callbacks", true);
	cJSON_AddNumberToObject(o, "callbacks_max_tries", 3);
	cJSON_AddNumberToObject(o, "callbacks_timeout", 5);
	cJSON_AddBoolToObject(o, "enable_additional_files", true);
	cJSON_AddNumberToObject(o, "max_queue_size", cfg->max_queue_size);
	cJSON_AddNumberToObject(o, "cpu_time_limit", J0_CPU_TIME);
	cJSON_AddNumberToObject(o, "max_cpu_time_limit", J0_MAX_CPU_TIME);
	cJSON_AddNumberToObject(o, "cpu_extra_time", J0_CPU_EXTRA);
	cJSON_AddNumberToObject(o, "max_cpu_extra_time", J0_MAX_CPU_EXTRA);
	cJSON_AddNumberToObject(o, "wall_time_limit", J0_WALL_TIME);
	cJSON_AddNumberToObject(o, "max_wall_time_limit", J0_MAX_WALL_TIME);
	cJSON_AddNumberToObject(o, "memory_limit", J0_MEMORY);
	cJSON_AddNumberToObject(o, "max_memory_limit", J0_MAX_MEMORY);
	cJSON_AddNumberToObject(o, "stack_limit", J0_STACK);
	cJSON_AddNumberToObject(o, "max_stack_limit", J0_MAX_STACK);
	cJSON_AddNumberToObject(o, "max_processes_and_or_threads", J0_PROCESSES);
	cJSON_AddNumberToObject(o, "max_max_processes_and_or_threads", J0_MAX_PROCESSES);
	cJSON_AddBoolToObject(o, "enable_per_process_and_thread_time_limit", false);
	cJSON_AddBoolToObject(o, "allow_enable_per_process_and_thread_time_limit", true);
	cJSON_AddBoolToObject(o, "enable_per_process_and_thread_memory_limit", false);
	cJSON_AddBoolToObject(o, "allow_enable_per_process_and_thread_memory_limit", true);
	cJSON_AddNumberToObject(o, "max_file_size", J0_FILE_SIZE);
	cJSON_AddNumberToObject(o, "max_max_file_size", J0_MAX_FILE_SIZE);
	cJSON_AddNumberToObject(o, "number_of_runs", J0_RUNS);
	cJSON_AddNumberToObject(o, "max_number_of_runs", J0_MAX_RUNS);
	cJSON_AddBoolToObject(o, "redirect_stderr_to_stdout", false);
	cJSON_AddNumberToObject(o, "max_extract_size", floor((double)cfg->max_run_body_bytes / 1024.0));
	cJSON_AddBoolToObject(o, "enable_batched_submissions", true);
	cJSON_AddNumberToObject(o, "max_submission_batch_size", JUDGE0_MAX_BATCH);
	/* seconds in Judge0; 0: no cache (goboxd answers from its store) */
	cJSON_AddNumberToObject(o, "submission_cache_duration", 0);
	cJSON_AddBoolToObject(o, "use_docs_as_homepage", false);
	cJSON_AddBoolToObject(o, "allow_enable_network", cfg->network);
	cJSON_AddBoolToObject(o, "enable_network", false);
	return o;
}

/* ---- statistics ----------------------------------------------------- */

#define DAY_MS 86400000ull

/* A time as Rails shows a DateTime: 2026-11-29T06:55:26.123+00:00 */
static void add_rails_time(cJSON *o, const char *key, uint64_t ms)
{
	time_t sec = (time_t)(ms / 1000);
	struct tm tm;
	char text[64];

	gmtime_r(&sec, &tm);
	snprintf(text, sizeof(text), "%04d-%02d-%02dT%02d:%02d:%02d.%03u+00:00",
		 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (unsigned)(ms % 1000));
	cJSON_AddStringToObject(o, key, text);
}

/* PostgreSQL's pg_size_pretty: bytes below 10 kB, then each unit while
 * the number stays below 10240, halves rounded up. */
static void size_pretty(uint64_t bytes, char *out, size_t outlen)
{
	static const char *const units[] = { "kB", "MB", "GB", "TB" };
	uint64_t v = bytes;
	size_t u = 0;

	if (v < 10 * 1024) {
		snprintf(out, outlen, "%" PRIu64 " bytes", v);
		return;
	}
	v = (v + 512) / 1024;
	while (v >= 10 * 1024 && u + 1 < ARRAY_SIZE(units)) {
		v = (v + 512) / 1024;
		u++;
	}
	snprintf(out, outlen, "%" PRIu64 " %s", v, units[u]);
}

/* The status a group stands for: queued and running ones have none yet. */
static int count_status(const struct store_count *c)
{
	if (c->state == STORE_QUEUED)
		return J0_IN_QUEUE;
	if (c->state == STORE_RUNNING)
		return J0_PROCESSING;
	return c->has_value && c->value >= J0_IN_QUEUE && c->value <= J0_EXEC_FORMAT_ERROR ?
		       (int)c->value : J0_INTERNAL_ERROR;
}

struct tally {
	int64_t key;
	uint64_t count;
};

/* Add count to key's tally (a short list: ids and statuses). */
static void tally_add(struct tally **t, size_t *n, int64_t key, uint64_t count)
{
	for (size_t i = 0; i < *n; i++)
		if ((*t)[i].key == key) {
			(*t)[i].count += count;
			return;
		}
	*t = xreallocarray(*t, *n + 1, sizeof(**t));
	(*t)[*n].key = key;
	(*t)[(*n)++].count = count;
}

/* Most first, as Judge0 sorts them (sort_by count, reversed). */
static int cmp_tally(const void *a, const void *b)
{
	const struct tally *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return (x->key > y->key) - (x->key < y->key);
}

static cJSON *statistics_submissions(const struct judge0_statistics *st, uint64_t *total)
{
	cJSON *o = cJSON_CreateObject(), *days;
	uint64_t today = st->now_ms / DAY_MS, n_today = 0;

	*total = 0;
	for (size_t i = 0; i < st->nlanguages; i++)
		*total += st->languages[i].count;
	for (size_t i = 0; i < st->ndays; i++)
		if ((uint64_t)st->days[i].value == today)
			n_today += st->days[i].count;
	cJSON_AddNumberToObject(o, "total", (double)*total);
	cJSON_AddNumberToObject(o, "today", (double)n_today);
	days = cJSON_AddObjectToObject(o, "last_30_days");
	/* the 30 days before today, newest first */
	for (uint64_t d = today - 1; d + 30 >= today; d--) {
		time_t sec = (time_t)(d * DAY_MS / 1000);
		uint64_t n = 0;
		struct tm tm;
		char key[32];

		for (size_t i = 0; i < st->ndays; i++)
			if ((uint64_t)st->days[i].value == d)
				n += st->days[i].count;
		gmtime_r(&sec, &tm);
		snprintf(key, sizeof(key), "%04d-%02d-%02d", tm.tm_year + 1900, tm.tm_mon + 1,
			 tm.tm_mday);
		cJSON_AddNumberToObject(days, key, (double)n);
	}
	return o;
}

cJSON *api_judge0_info_statistics(const struct judge0_statistics *st, const struct langtab *t)
{
	cJSON *o = cJSON_CreateObject(), *a, *db;
	struct tally *langs = NULL, *stats = NULL;
	size_t nl = 0, ns = 0;
	uint64_t total;
	char pretty[32];

	add_rails_time(o, "created_at", st->now_ms);
	add_rails_time(o, "cached_until", st->now_ms + st->cached_ms);
	cJSON_AddItemToObject(o, "submissions", statistics_submissions(st, &total));
	for (size_t i = 0; i < st->nlanguages; i++)
		tally_add(&langs, &nl, st->languages[i].has_value ? st->languages[i].value : 0,
			  st->languages[i].count);
	for (size_t i = 0; i < st->nstatuses; i++)
		tally_add(&stats, &ns, count_status(&st->statuses[i]), st->statuses[i].count);
	if (nl)
		qsort(langs, nl, sizeof(*langs), cmp_tally);
	if (ns)
		qsort(stats, ns, sizeof(*stats), cmp_tally);
	a = cJSON_AddArrayToObject(o, "languages");
	for (size_t i = 0; i < nl; i++) {
		const struct lang *l = langs[i].key > 0 && langs[i].key <= UINT32_MAX ?
					       langtab_find_judge0(t, (unsigned)langs[i].key) : NULL;
		cJSON *e = cJSON_CreateObject(), *lo = cJSON_AddObjectToObject(e, "language");

		cJSON_AddNumberToObject(lo, "id", (double)langs[i].key);
		if (l)
			cJSON_AddStringToObject(lo, "name", l->judge0_name);
		else
			cJSON_AddNullToObject(lo, "name");
		cJSON_AddNumberToObject(e, "count", (double)langs[i].count);
		cJSON_AddItemToArray(a, e);
	}
	a = cJSON_AddArrayToObject(o, "statuses");
	for (size_t i = 0; i < ns; i++) {
		cJSON *e = cJSON_CreateObject(), *so = cJSON_AddObjectToObject(e, "status");

		cJSON_AddNumberToObject(so, "id", (double)stats[i].key);
		cJSON_AddStringToObject(so, "name", api_judge0_status_name((int)stats[i].key));
		cJSON_AddNumberToObject(e, "count", (double)stats[i].count);
		cJSON_AddItemToArray(a, e);
	}
	free(langs);
	free(stats);
	db = cJSON_AddObjectToObject(o, "database");
	size_pretty(st->bytes, pretty, sizeof(pretty));
	cJSON_AddStringToObject(db, "size_pretty", pretty);
	cJSON_AddNumberToObject(db, "size_in_bytes", (double)st->bytes);
	return o;
}

/* Judge0 CE's version whose API goboxd serves: clients key on it (the
 * official SDK maps language names to ids by it). */
#define JUDGE0_API_VERSION "1.13.1"

static cJSON *about(void)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "version", JUDGE0_API_VERSION);
	cJSON_AddNullToObject(o, "homepage");
	cJSON_AddNullToObject(o, "source_code");
	cJSON_AddNullToObject(o, "maintainer");
	/* goboxd's own, after Judge0's four */
	cJSON_AddStringToObject(o, "name", PACKAGE_NAME);
	cJSON_AddStringToObject(o, "goboxd_version", PACKAGE_VERSION);
	return o;
}

char *api_judge0_info_text(const char *path, const char *jail_name, const char *jail_version)
{
	struct buf b;

	if (strcmp(path, "/version") && strcmp(path, "/isolate") && strcmp(path, "/license"))
		return NULL;
	buf_init(&b, 0);
	if (!strcmp(path, "/version"))
		buf_puts(&b, JUDGE0_API_VERSION);
	else if (!strcmp(path, "/isolate"))
		/* Judge0 shows its sandbox's --version: goboxd's is its jail */
		buf_printf(&b, "%s %s\n", jail_name && *jail_name ? jail_name : "no sandbox",
			   jail_version && *jail_version ? jail_version : "");
	else
		buf_printf(&b, "%s %s serves the API of Judge0 CE %s; no license text was "
			   "installed with this build.\n", PACKAGE_NAME, PACKAGE_VERSION,
			   JUDGE0_API_VERSION);
	return buf_steal(&b, NULL);
}

int api_judge0_info(const char *path, const struct langtab *t, const struct config *cfg,
		    cJSON **body)
{
	static const char lang_prefix[] = "/languages/";

	*body = NULL;
	if (!strcmp(path, "/languages") || !strcmp(path, "/languages/all"))
		*body = languages(t, !strcmp(path, "/languages/all"));
	else if (!strcmp(path, "/statuses"))
		*body = statuses();
	else if (!strcmp(path, "/about"))
		*body = about();
	else if (!strcmp(path, "/config_info"))
		*body = config_info(cfg);
	if (*body)
		return 200;
	if (!strncmp(path, lang_prefix, sizeof(lang_prefix) - 1)) {
		const char *id = path + sizeof(lang_prefix) - 1;
		uint64_t n = 0;
		const struct lang *l = parse_u64(id, 1, 1000000, &n) == 0 ?
					       langtab_find_judge0(t, (unsigned)n) : NULL;

		if (!l || !listed(l, (unsigned)n)) {
			cJSON *e = cJSON_CreateObject();

			cJSON_AddStringToObject(e, "error", "record not found");
			*body = e;
			return 404;
		}
		*body = language_json(l, (unsigned)n, true);
		return 200;
	}
	return 0;
}

