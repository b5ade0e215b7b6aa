/*
 * What Judge0 answers without a submission: its lists (/languages,
 * /statuses, /config_info), /about, the plain-text /version, /isolate and
 * /license, and GET /statistics from the counts the store gives.
 */
#ifndef GOBOXD_API_JUDGE0_INFO_H
#define GOBOXD_API_JUDGE0_INFO_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "common/config.h"
#include "common/lang/langtab.h"
#include "common/store.h"

/* What GET /statistics shows, as the store counted it (submissions.c). */
struct judge0_statistics {
	uint64_t now_ms;                   /* when it was counted */
	uint64_t cached_ms;                /* for how long it is shown */
	struct store_count *languages;     /* by the request's language_id, all time */
	size_t nlanguages;
	struct store_count *statuses;      /* by the result's status_id, all time */
	size_t nstatuses;
	struct store_count *days;          /* by the day they were made, the last 31 */
	size_t ndays;
	uint64_t bytes;                    /* the store's size */
};

/* Judge0's statistics: totals, the last 30 days, by language and status,
 * the database's size. */
cJSON *api_judge0_info_statistics(const struct judge0_statistics *st, const struct langtab *t);

/*
 * GET /version, /isolate and /license: Judge0's plain-text answers
 * (malloc'd), or NULL when path is none of them. jail_name and
 * jail_version name the sandbox, as Judge0's /isolate names isolate.
 */
char *api_judge0_info_text(const char *path, const char *jail_name, const char *jail_version);

/*
 * The GET endpoints answered from memory: /languages, /languages/ID,
 * /statuses, /about, /config_info. Returns the status and *body (a tree),
 * or 0 when path is none of them.
 */
int api_judge0_info(const char *path, const struct langtab *t, const struct config *cfg,
		    cJSON **body);

#endif
