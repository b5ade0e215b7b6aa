/*
 * Judge0's /submissions and /statistics answered from the store
 * (api_judge0_routes.h): submissions taken in, shown by token, in a
 * batch and a page, deleted; each its owner's.
 */
#include "autoconf.h"

#include "worker/http/api_judge0_routes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/util.h"
#include "worker/http/api_judge0.h"
#include "worker/http/api_judge0_info.h"
#include "worker/http/api_judge0_show.h"
#include "worker/http/api_judge0_status.h"
#include "worker/http/json_body.h"

/* The store, when the worker has one now: s->store, else NULL and s->why
 * says why. */
static struct store *routes_store(struct judge0_routes *s)
{
	s->why = "";
	s->store = s->open_store(s->arg, &s->why);
	return s->store;
}

/* ---- answers -------------------------------------------------------- */

/*
 * A JSON body (malloc'd, taken over) as the answer. With no answer before
 * it on the connection the head is written in front of it in its own
 * block (a big body is then never held twice); behind pipelined ones it
 * is copied after them.
 */
static int answer_body(struct buf *out, int status, char *body, size_t len, bool ka,
		       const char *hdr)
{
	if (out->len == 0) {
		http_response_around(out, status, "application/json", body, len, ka, hdr);
		return status;
	}
	http_format_response(out, status, "application/json", body, len, ka, hdr);
	free(body);
	return status;
}

static int answer_json(struct buf *out, int status, cJSON *o, bool ka, const char *hdr)
{
	char *body = o ? cJSON_PrintUnformatted(o) : NULL;

	cJSON_Delete(o);
	if (!body) {
		http_format_error(out, 500, "out_of_memory", "no memory", ka, hdr);
		return 500;
	}
	return answer_body(out, status, body, strlen(body), ka, hdr);
}

/* Judge0's {"error": ...} */
static int answer_error(struct buf *out, int status, const char *msg, bool ka, const char *hdr)
{
	char *body = api_judge0_error(msg);

	http_format_response(out, status, "application/json", body, strlen(body), ka, hdr);
	free(body);
	return status;
}

static int no_store(struct judge0_routes *s, struct buf *out, bool ka, const char *hdr)
{
	char msg[320];

	snprintf(msg, sizeof(msg), "the submission store is unavailable: %s", s->why);
	return answer_error(out, 503, msg, ka, hdr);
}

/* ---- taking submissions --------------------------------------------- */

/*
 * One submission into the store: its token object for the answer, or
 * Judge0's 422 errors object, or (NULL, *status) when the store failed.
 */
static cJSON *take_one(struct judge0_routes *s, const struct auth_who *who, const cJSON *sub,
		       const struct json_body_marker *m, bool base64, int *status, char *err,
		       size_t errlen)
{
	struct job_request *job = NULL;
	char *stored = NULL, *callback = NULL;
	char token[STORE_TOKEN_LEN + 1];
	cJSON *errors = NULL, *o;
	int64_t id;
	int rc;

	if (api_judge0_parse(sub, m, base64, s->langs, s->cfg, &job, &stored, &callback,
			     &errors) < 0) {
		*status = 422;
		return errors;
	}
	request_free(job);
	rc = store_add(s->store, JUDGE0_STORED_API, who->owner, stored, callback, token, &id, err, errlen);
	free(stored);
	free(callback);
	if (rc < 0) {
		*status = 503;
		return NULL;
	}
	if (s->submitted)
		s->submitted(s->arg, id);
	*status = 201;
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "token", token);
	return o;
}

static cJSON *parse_body(const struct http_request *r, struct json_body_marker *m)
{
	return json_body_parse(r->body.data ? r->body.data : "", r->body.len, m);
}

static int post_one(struct judge0_routes *s, const struct http_request *r,
		    const struct auth_who *who, const struct judge0_view *v, bool ka,
		    const char *hdr, struct buf *out)
{
	struct json_body_marker m;
	cJSON *root = parse_body(r, &m), *answer;
	char err[256] = "";
	int status = 0;

	if (!cJSON_IsObject(root)) {
		cJSON_Delete(root);
		return answer_error(out, 400, "the body must be one JSON object (a submission)", ka,
				    hdr);
	}
	answer = take_one(s, who, root, &m, v->base64, &status, err, sizeof(err));
	cJSON_Delete(root);
	if (!answer)
		return answer_error(out, status, err, ka, hdr);
	return answer_json(out, status, answer, ka, hdr);
}

static int post_batch(struct judge0_routes *s, const struct http_request *r,
		      const struct auth_who *who, const struct judge0_view *v, bool ka,
		      const char *hdr, struct buf *out)
{
	struct json_body_marker m;
	cJSON *root = parse_body(r, &m);
	const cJSON *subs = cJSON_GetObjectItemCaseSensitive(root, "submissions"), *sub;
	cJSON *answers;
	bool any = false;
	int n = cJSON_IsArray(subs) ? cJSON_GetArraySize(subs) : 0;
	char msg[128], store_err[256] = "";

	if (n > JUDGE0_MAX_BATCH) {
		cJSON_Delete(root);
		snprintf(msg, sizeof(msg),
			 "number of submissions in a batch should be less than or equal to %d",
			 JUDGE0_MAX_BATCH);
		return answer_error(out, 400, msg, ka, hdr);
	}
	if (n == 0) {
		cJSON_Delete(root);
		return answer_error(out, 400, "there should be at least one submission in a batch",
				    ka, hdr);
	}
	answers = cJSON_CreateArray();
	cJSON_ArrayForEach(sub, subs) {
		char err[256] = "";
		int status = 0;
		cJSON *a = take_one(s, who, sub, &m, v->base64, &status, err, sizeof(err));

		if (!a) {
			/* the store failed: those taken stay taken, and say so */
			a = cJSON_CreateObject();
			cJSON_AddStringToObject(a, "error", err);
			snprintf(store_err, sizeof(store_err), "%s", err);
		}
		any |= status == 201;
		cJSON_AddItemToArray(answers, a);
	}
	cJSON_Delete(root);
	if (!any && store_err[0]) {
		/* nothing taken, and not for the submissions' faults */
		cJSON_Delete(answers);
		return answer_error(out, 503, store_err, ka, hdr);
	}
	return answer_json(out, any ? 201 : 422, answers, ka, hdr);
}

/* ---- answering by token --------------------------------------------- */

/*
 * A submission by its token, if who may see it: its own (made with the
 * same API token), or any to an operator (and to everyone where no token
 * is needed). Another's is -ENOENT, as a token that never was: whether
 * it exists is not for others to learn.
 */
static int find_for(struct judge0_routes *s, const struct auth_who *who, const char *token,
		    struct store_sub *sub)
{
	int rc = store_find(s->store, token, sub);

	if (rc == 0 && !who->is_operator && strcmp(who->owner, sub->owner) != 0) {
		store_sub_free(sub);
		return -ENOENT;
	}
	return rc;
}

static int get_one(struct judge0_routes *s, const struct auth_who *who, const char *token,
		   const struct judge0_view *v, bool ka, const char *hdr, struct buf *out)
{
	struct store_sub sub;
	cJSON *shown;
	int rc = find_for(s, who, token, &sub);

	if (rc == -ENOENT)
		return answer_error(out, 404, "record not found", ka, hdr);
	if (rc < 0)
		return answer_error(out, 503, "the submission store failed; retry later", ka, hdr);
	shown = api_judge0_show(&sub, v, s->langs);
	store_sub_free(&sub);
	if (!shown)
		return answer_error(out, 400, API_JUDGE0_NOT_UTF8, ka, hdr);
	return answer_json(out, 200, shown, ka, hdr);
}

/* ---- answers of many submissions ----------------------------------- */

/*
 * An answer of many submissions ({"submissions":[...]} and, for a page,
 * its meta) is measured as it is made, each submission rendered once
 * however often it is asked for, and refused as soon as it would pass
 * --max-batch-answer-size: 20 tokens of one submission of 14 MiB were a
 * 277 MiB answer, built in the loop.
 */
#define MANY_HEAD "{\"submissions\":["
#define MANY_NULL "null"

/* One submission as such an answer shows it, rendered once. */
struct shown {
	char *json;     /* NULL: null (no such token) */
	size_t len;
};

struct many {
	size_t cap;     /* --max-batch-answer-size */
	size_t total;   /* the answer's bytes so far, its frame and commas included */
};

/* The frame of n entries and the tail after the list (a page's meta). */
static void many_start(struct many *m, size_t cap, size_t n, const char *tail)
{
	m->cap = cap;
	m->total = strlen(MANY_HEAD) + (n ? n - 1 : 0) + strlen("]") + strlen(tail) + strlen("}");
}

/* One entry more: false once the answer passes its cap. */
static bool many_add(struct many *m, const struct shown *e)
{
	m->total += e->json ? e->len : strlen(MANY_NULL);
	return m->total <= m->cap;
}

/* 0, or -EILSEQ when a text is not UTF-8 and base64 was not asked for. */
static int render(struct judge0_routes *s, const struct store_sub *sub,
		  const struct judge0_view *v, struct shown *e)
{
	cJSON *o = api_judge0_show(sub, v, s->langs);

	if (!o)
		return -EILSEQ;
	e->json = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (!e->json)
		abort(); /* out of memory, as xmalloc's rule says */
	e->len = strlen(e->json);
	return 0;
}

int api_judge0_routes_split_tokens(char *list, char **tokens, size_t max, size_t *n)
{
	static const char blanks[] = " \t\r\n\v\f";
	char *p = list + strspn(list, blanks), *end = p + strlen(p);
	size_t k = 0, kept = 0;

	while (end > p && strchr(blanks, end[-1]))
		*--end = '\0';
	for (char *t = *p ? p : NULL, *next; t; t = next) {
		next = strchr(t, ',');
		if (next)
			*next++ = '\0';
		if (k < max)
			tokens[k] = t;
		k++;
		/* split drops the empty pieces at the end, and only those */
		if (*t)
			kept = k;
	}
	if (kept > max)
		return -E2BIG;
	*n = kept;
	return 0;
}

/* For each token, the first one alike: a token given twice is looked up
 * and rendered once. */
static void batch_firsts(char *const *tokens, size_t n, size_t *first)
{
	for (size_t i = 0; i < n; i++) {
		first[i] = i;
		for (size_t k = 0; k < i && first[i] == i; k++)
			if (!strcmp(tokens[k], tokens[i]))
				first[i] = k;
	}
}

/*
 * The distinct tokens looked up and rendered into shown[] (a token's
 * entry at its first place), in the order given, each entry counted in m
 * as it comes: 0; -EFBIG as soon as the answer passes its cap (nothing
 * after is looked up); -EIO when the store failed; -EILSEQ (not UTF-8).
 */
static int batch_render(struct judge0_routes *s, const struct auth_who *who, char *const *tokens,
			size_t n, const size_t *first, const struct judge0_view *v, struct many *m,
			struct shown *shown)
{
	for (size_t i = 0; i < n; i++) {
		struct store_sub sub;
		int rc;

		if (first[i] == i && *tokens[i]) {
			rc = find_for(s, who, tokens[i], &sub);
			if (rc < 0 && rc != -ENOENT)
				return -EIO;
			if (rc == 0) {
				rc = render(s, &sub, v, &shown[i]);
				store_sub_free(&sub);
				if (rc < 0)
					return rc;
			}
		}
		if (!many_add(m, &shown[first[i]]))
			return -EFBIG;
	}
	return 0;
}

/* len bytes at *at of body, *at moved past them. */
static void put(char *body, size_t *at, const char *p, size_t len)
{
	memcpy(body + *at, p, len);
	*at += len;
}

/*
 * The answer's text, m->total bytes: entry i shows shown[of[i]]. Each
 * rendering is freed after its last use, so that what is held stays about
 * one answer, not the answer and its parts.
 */
static char *many_body(const struct many *m, struct shown *shown, const size_t *of, size_t n,
		       const char *tail)
{
	size_t *last = xcalloc(n ? n : 1, sizeof(*last)), at = 0;
	char *body = xmalloc(m->total + 1);

	for (size_t i = 0; i < n; i++)
		last[of[i]] = i;
	put(body, &at, MANY_HEAD, strlen(MANY_HEAD));
	for (size_t i = 0; i < n; i++) {
		struct shown *e = &shown[of[i]];

		if (i)
			put(body, &at, ",", 1);
		if (e->json)
			put(body, &at, e->json, e->len);
		else
			put(body, &at, MANY_NULL, strlen(MANY_NULL));
		if (last[of[i]] == i) {
			free(e->json);
			e->json = NULL;
		}
	}
	put(body, &at, "]", 1);
	put(body, &at, tail, strlen(tail));
	put(body, &at, "}", 1);
	body[at] = '\0';
	free(last);
	return body;
}

static void shown_free(struct shown *shown, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(shown[i].json);
		shown[i].json = NULL;
	}
}

/* The answer of many, as rc (batch_render's) says; the renderings freed. */
static int answer_many(struct judge0_routes *s, int rc, const struct many *m, struct shown *shown,
		       const size_t *of, size_t n, const char *tail, const char *hint, bool ka,
		       const char *hdr, struct buf *out)
{
	char msg[256];

	if (rc == 0)
		return answer_body(out, 200, many_body(m, shown, of, n, tail), m->total, ka, hdr);
	shown_free(shown, n);
	if (rc == -EIO)
		return answer_error(out, 503, "the submission store failed; retry later", ka, hdr);
	if (rc == -EILSEQ)
		return answer_error(out, 400, API_JUDGE0_NOT_UTF8_SOME, ka, hdr);
	if (s->stats)
		atomic_fetch_add(&s->stats->batch_answers_refused, 1);
	snprintf(msg, sizeof(msg), "the answer would be larger than %zu bytes"
		 " (--max-batch-answer-size); %s", m->cap, hint);
	return answer_error(out, 400, msg, ka, hdr);
}

static int get_batch(struct judge0_routes *s, const struct http_request *r,
		     const struct auth_who *who, const struct judge0_view *v, bool ka,
		     const char *hdr, struct buf *out)
{
	const char *given = http_header_get(r, "tokens");
	char *list = given ? xstrdup(given) : http_query_param(r, "tokens");
	char *tokens[JUDGE0_MAX_BATCH], msg[128];
	struct shown shown[JUDGE0_MAX_BATCH] = { { 0 } };
	size_t n = 0, first[JUDGE0_MAX_BATCH];
	struct many m;
	int rc = list ? api_judge0_routes_split_tokens(list, tokens, JUDGE0_MAX_BATCH, &n) : 0;

	if (rc == -E2BIG) {
		free(list);
		snprintf(msg, sizeof(msg),
			 "number of submissions in a batch should be less than or equal to %d",
			 JUDGE0_MAX_BATCH);
		return answer_error(out, 400, msg, ka, hdr);
	}
	if (n == 0) {
		free(list);
		return answer_error(out, 400, "there should be at least one submission in a batch",
				    ka, hdr);
	}
	batch_firsts(tokens, n, first);
	many_start(&m, s->cfg->max_batch_answer_bytes, n, "");
	rc = batch_render(s, who, tokens, n, first, v, &m, shown);
	free(list);
	return answer_many(s, rc, &m, shown, first, n, "", "ask for fewer tokens or fewer fields",
			   ka, hdr, out);
}

/* Judge0's pages: 20 by default; goboxd's bound, so that a page is
 * never the whole store in one answer. */
#define LIST_PER_PAGE 20
#define LIST_PER_PAGE_MAX 100

/* Ruby's String#to_i, as Judge0 reads page and per_page: leading blanks,
 * a sign, the digits that follow; 0 when there are none. */
static long long ruby_to_i(const char *t)
{
	long long v = 0;
	bool neg = false;

	t += strspn(t, " \t\r\n\v\f");
	if (*t == '-' || *t == '+')
		neg = *t++ == '-';
	for (; *t >= '0' && *t <= '9'; t++)
		if (v < 1000000000000LL)
			v = v * 10 + (*t - '0');
	return neg ? -v : v;
}

static long long list_param(const struct http_request *r, const char *name, long long dflt)
{
	char *v = http_query_param(r, name);
	long long n = v ? ruby_to_i(v) : dflt;

	free(v);
	return n;
}

/* will_paginate's numbers, as Judge0's pagination_dict shows them. */
static cJSON *page_meta(long long page, long long per_page, uint64_t total)
{
	cJSON *m = cJSON_CreateObject();
	uint64_t pages = (total + (uint64_t)per_page - 1) / (uint64_t)per_page;

	cJSON_AddNumberToObject(m, "current_page", (double)page);
	if ((uint64_t)page < pages)
		cJSON_AddNumberToObject(m, "next_page", (double)(page + 1));
	else
		cJSON_AddNullToObject(m, "next_page");
	if (page > 1)
		cJSON_AddNumberToObject(m, "prev_page", (double)(page - 1));
	else
		cJSON_AddNullToObject(m, "prev_page");
	cJSON_AddNumberToObject(m, "total_pages", (double)pages);
	cJSON_AddNumberToObject(m, "total_count", (double)total);
	return m;
}

/* A page's answer: the n submissions (freed here), then its meta (taken
 * over), held to the cap as the batch's is. */
static int answer_page(struct judge0_routes *s, struct store_sub *subs, size_t n, cJSON *meta,
		       const struct judge0_view *v, bool ka, const char *hdr, struct buf *out)
{
	char *json = cJSON_PrintUnformatted(meta), *tail;
	size_t tlen;
	struct shown *shown = xcalloc(n ? n : 1, sizeof(*shown));
	size_t *of = xcalloc(n ? n : 1, sizeof(*of));
	struct many m;
	int rc = 0, status;

	cJSON_Delete(meta);
	if (!json)
		abort(); /* out of memory, as xmalloc's rule says */
	tlen = strlen(",\"meta\":") + strlen(json) + 1;
	tail = xmalloc(tlen);
	snprintf(tail, tlen, ",\"meta\":%s", json);
	free(json);
	many_start(&m, s->cfg->max_batch_answer_bytes, n, tail);
	for (size_t i = 0; i < n && rc == 0; i++) {
		of[i] = i;
		rc = render(s, &subs[i], v, &shown[i]);
		if (rc == 0 && !many_add(&m, &shown[i]))
			rc = -EFBIG;
	}
	store_subs_free(subs, n);
	status = answer_many(s, rc, &m, shown, of, n, tail,
			     "ask for a smaller per_page or fewer fields", ka, hdr, out);
	free(shown);
	free(of);
	free(tail);
	return status;
}

/*
 * GET /submissions: a page of submissions, newest first. Judge0 answers
 * it only to its authorization token (403 when none is set); goboxd only
 * with --auth-tokens, and to each token its own submissions (an
 * operator's: everyone's): the list names tokens, and a token reads a
 * submission.
 */
static int get_list(struct judge0_routes *s, const struct http_request *r,
		    const struct auth_who *who, const struct judge0_view *v, bool ka,
		    const char *hdr, struct buf *out)
{
	long long page = list_param(r, "page", 1), per_page = list_param(r, "per_page",
									 LIST_PER_PAGE);
	struct store_sub *subs = NULL;
	uint64_t total = 0;
	size_t n = 0;
	char msg[96];
	int rc;

	if (!s->cfg->auth) {
		http_format_response(out, 403, "application/json", "", 0, ka, hdr);
		return 403;
	}
	if (page <= 0 || per_page <= 0) {
		snprintf(msg, sizeof(msg), "invalid %s: %lld", page <= 0 ? "page" : "per_page",
			 page <= 0 ? page : per_page);
		return answer_error(out, 400, msg, ka, hdr);
	}
	if (per_page > LIST_PER_PAGE_MAX)
		per_page = LIST_PER_PAGE_MAX;
	rc = store_list(s->store, JUDGE0_STORED_API, who->is_operator ? NULL : who->owner,
			(uint64_t)(page - 1) * (uint64_t)per_page, (size_t)per_page, &subs, &n,
			&total);
	if (rc < 0)
		return answer_error(out, 503, "the submission store failed; retry later", ka, hdr);
	return answer_page(s, subs, n, page_meta(page, per_page, total), v, ka, hdr, out);
}

/* Judge0 keeps its statistics this long (its cache's duration). */
#define STATISTICS_CACHED_MS (10 * 60 * 1000)

/* Count what GET /statistics shows: 0, or the store's negative errno. */
static int count_statistics(struct judge0_routes *s, struct judge0_statistics *st)
{
	uint64_t today = wall_ms() / 86400000ull;
	int rc;

	memset(st, 0, sizeof(*st));
	st->now_ms = wall_ms();
	st->cached_ms = STATISTICS_CACHED_MS;
	rc = store_count(s->store, JUDGE0_STORED_API, STORE_BY_REQUEST, "language_id", 0, &st->languages,
			 &st->nlanguages);
	if (rc == 0)
		rc = store_count(s->store, JUDGE0_STORED_API, STORE_BY_RESULT, "status_id", 0,
				 &st->statuses, &st->nstatuses);
	if (rc == 0)
		rc = store_count(s->store, JUDGE0_STORED_API, STORE_BY_DAY, NULL,
				 (today - 30) * 86400000ull, &st->days, &st->ndays);
	if (rc == 0)
		rc = store_size(s->store, &st->bytes);
	return rc;
}

/*
 * GET /statistics: counted at most every 10 minutes (each count reads
 * every submission), or when asked with invalidate_cache=true, as
 * Judge0's. Every token sees the same counts: they name no submission.
 */
static int get_statistics(struct judge0_routes *s, const struct http_request *r, bool ka,
			  const char *hdr, struct buf *out)
{
	char *inval = http_query_param(r, "invalidate_cache");
	bool fresh = inval && !strcmp(inval, "true");
	struct judge0_statistics st;
	cJSON *o;
	int rc;

	free(inval);
	if (s->statistics && !fresh && now_ms() < s->statistics_until_ms) {
		http_format_response(out, 200, "application/json", s->statistics,
				     strlen(s->statistics), ka, hdr);
		return 200;
	}
	rc = count_statistics(s, &st);
	o = rc == 0 ? api_judge0_info_statistics(&st, s->langs) : NULL;
	free(st.languages);
	free(st.statuses);
	free(st.days);
	if (!o)
		return answer_error(out, 503, "the submission store failed; retry later", ka, hdr);
	free(s->statistics);
	s->statistics = cJSON_PrintUnformatted(o);
	s->statistics_until_ms = now_ms() + STATISTICS_CACHED_MS;
	return answer_json(out, 200, o, ka, hdr);
}

/* DELETE answers what went, base64-encoded as Judge0 does (whatever was
 * asked: what it shows can never be asked for again). */
static int delete_one(struct judge0_routes *s, const struct auth_who *who, const char *token,
		      const struct judge0_view *v, bool ka, const char *hdr, struct buf *out)
{
	struct judge0_view shown_as = *v;
	struct store_sub sub;
	cJSON *shown;
	char msg[160];
	int rc = find_for(s, who, token, &sub);

	if (rc == -ENOENT)
		return answer_error(out, 404, "record not found", ka, hdr);
	if (rc < 0)
		return answer_error(out, 503, "the submission store failed; retry later", ka, hdr);
	if (sub.state != STORE_DONE) {
		int id = sub.state == STORE_QUEUED ? J0_IN_QUEUE : J0_PROCESSING;

		store_sub_free(&sub);
		snprintf(msg, sizeof(msg),
			 "submission cannot be deleted because its status is %d (%s)", id,
			 api_judge0_status_name(id));
		return answer_error(out, 400, msg, ka, hdr);
	}
	shown_as.base64 = true;
	shown = api_judge0_show(&sub, &shown_as, s->langs);
	store_sub_free(&sub);
	rc = store_delete(s->store, token);
	if (rc < 0 && rc != -ENOENT) {
		cJSON_Delete(shown);
		return answer_error(out, 503, "the submission store failed; retry later", ka, hdr);
	}
	return answer_json(out, 200, shown, ka, hdr);
}

/* /submissions, /submissions/batch and /submissions/TOKEN */
static int answer_submissions(struct judge0_routes *s, const struct http_request *r,
			      const struct auth_who *who, bool ka, const char *hdr,
			      struct buf *out)
{
	static const char base[] = "/submissions";
	const char *rest = r->path + sizeof(base) - 1; /* "", "/batch" or "/TOKEN" */
	bool is_get = !strcmp(r->method, "GET"), is_post = !strcmp(r->method, "POST");
	bool is_delete = !strcmp(r->method, "DELETE");
	struct judge0_view v;
	char err[256], allow[192];

	if (api_judge0_show_view(r, &v, err, sizeof(err)) < 0 &&
	    !(is_post && !strcmp(rest, "/batch")))
		return answer_error(out, 400, err, ka, hdr);
	if ((!*rest && !is_get && !is_post) || (!strcmp(rest, "/batch") && !is_get && !is_post) ||
	    (*rest && strcmp(rest, "/batch") && !is_get && !is_delete)) {
		snprintf(allow, sizeof(allow), "%sAllow: %s\r\n", hdr,
			 !*rest || !strcmp(rest, "/batch") ? "GET, POST" : "GET, DELETE");
		return answer_error(out, 405, "method not allowed", ka, allow);
	}
	if (is_post && json_body_over_cap(r->body.len, s->cfg->max_run_body_bytes))
		return answer_error(out, 413, "request body too large", ka, hdr);
	if (!routes_store(s))
		return no_store(s, out, ka, hdr);
	if (!*rest)
		return is_post ? post_one(s, r, who, &v, ka, hdr, out) :
				 get_list(s, r, who, &v, ka, hdr, out);
	if (!strcmp(rest, "/batch"))
		return is_post ? post_batch(s, r, who, &v, ka, hdr, out) :
				 get_batch(s, r, who, &v, ka, hdr, out);
	if (is_delete)
		return delete_one(s, who, rest + 1, &v, ka, hdr, out);
	return get_one(s, who, rest + 1, &v, ka, hdr, out);
}

void api_judge0_routes_free(struct judge0_routes *s)
{
	free(s->statistics);
	s->statistics = NULL;
}

int api_judge0_routes_handle(struct judge0_routes *s, const struct http_request *r,
		       const struct auth_who *who, bool ka, const char *hdr, struct buf *out)
{
	if (!strcmp(r->path, "/statistics")) {
		if (!routes_store(s))
			return no_store(s, out, ka, hdr);
		return get_statistics(s, r, ka, hdr, out);
	}
	return answer_submissions(s, r, who, ka, hdr, out);
}

