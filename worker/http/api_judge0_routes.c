#include "autoconf.h"

#include "worker/submissions.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/util.h"
#include "worker/http/json_body.h"

/* How often the expired ones are looked for (at most: a shorter TTL
 * looks as often as it lasts), and how many go at once: a batch is a few
 * milliseconds of the loop. */
#define EXPIRE_EVERY_MS 10000
#define EXPIRE_BATCH 500

static uint64_t expire_every_ms(const struct config *cfg)
{
	uint64_t ttl_ms = (uint64_t)cfg->submission_ttl_s * 1000;

	return ttl_ms < EXPIRE_EVERY_MS ? ttl_ms : EXPIRE_EVERY_MS;
}

/* The watcher looks at the store this often. */
#define WATCH_EVERY_MS 2000
/* A store that did not open is tried again this often. */
#define REOPEN_EVERY_MS 1000

/* The loop's store, opened again when it failed before. */
static struct store *loop_store(struct submissions *s)
{
	uint64_t now = now_ms();

	/* the master did not claim it: it may be another goboxd's */
	if (s->store || s->refused || now < s->reopen_ms)
		return s->store;
	s->reopen_ms = now + REOPEN_EVERY_MS;
	if (store_open(s->cfg->store, s->cfg->store_max_bytes, &s->store, s->error,
		       sizeof(s->error)) < 0) {
		s->store = NULL;
		return NULL;
	}
	store_set_node(s->store, s->cfg->node_name);
	log_info("the submission store is open");
	return s->store;
}

void submissions_open(struct submissions *s, const struct config *cfg, const struct langtab *t,
		      const char *refused, bool watcher, struct stats *stats,
		      struct outbox *cb)
{
	s->cfg = cfg;
	if (refused) {
		s->refused = true;
		snprintf(s->error, sizeof(s->error), "%s", refused);
	}
	s->langs = t;
	s->expires = watcher;
	s->stats = stats;
	s->callbacks = cb;
	s->next_expire_ms = now_ms() + expire_every_ms(cfg);
	if (!loop_store(s) && !s->refused)
		log_error("the submission store: %s", s->error);
}

/* A result the store refused, in the order they came. */
struct unstored {
	int64_t id;
	char *result;
	struct unstored *next;
};

static void unstored_free_all(struct submissions *s)
{
	while (s->unstored) {
		struct unstored *u = s->unstored;

		s->unstored = u->next;
		free(u->result);
		free(u);
	}
	s->unstored_bytes = 0;
}

void submissions_close(struct submissions *s)
{
	unstored_free_all(s);
	store_close(s->store);
	s->store = NULL;
	free(s->statistics);
	s->statistics = NULL;
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

static int no_store(struct submissions *s, struct buf *out, bool ka, const char *hdr)
{
	char msg[320];

	snprintf(msg, sizeof(msg), "the submission store is unavailable: %s", s->error);
	return answer_error(out, 503, msg, ka, hdr);
}

/* ---- taking submissions --------------------------------------------- */

/*
 * One submission into the store: its token object for the answer, or
 * Judge0's 422 errors object, or (NULL, *status) when the store failed.
 */
static cJSON *take_one(struct submissions *s, const struct auth_who *who, const cJSON *sub,
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
	rc = store_add(s->store, SUBMISSIONS_API, who->owner, stored, callback, token, &id, err, errlen);
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

static int post_one(struct submissions *s, const struct http_request *r,
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

static int post_batch(struct submissions *s, const struct http_request *r,
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
static int find_for(struct submissions *s, const struct auth_who *who, const char *token,
		    struct store_sub *sub)
{
	int rc = store_find(s->store, token, sub);

	if (rc == 0 && !who->is_operator && strcmp(who->owner, sub->owner) != 0) {
		store_sub_free(sub);
		return -ENOENT;
	}
	return rc;
}

static int get_one(struct submissions *s, const struct auth_who *who, const char *token,
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
static int render(struct submissions *s, const struct store_sub *sub,
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

int submissions_split_tokens(char *list, char **tokens, size_t max, size_t *n)
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
static int batch_render(struct submissions *s, const struct auth_who *who, char *const *tokens,
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
static int answer_many(struct submissions *s, int rc, const struct many *m, struct shown *shown,
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

static int get_batch(struct submissions *s, const struct http_request *r,
		     const struct auth_who *who, const struct judge0_view *v, bool ka,
		     const char *hdr, struct buf *out)
{
	const char *given = http_header_get(r, "tokens");
	char *list = given ? xstrdup(given) : http_query_param(r, "tokens");
	char *tokens[JUDGE0_MAX_BATCH], msg[128];
	struct shown shown[JUDGE0_MAX_BATCH] = { { 0 } };
	size_t n = 0, first[JUDGE0_MAX_BATCH];
	struct many m;
	int rc = list ? submissions_split_tokens(list, tokens, JUDGE0_MAX_BATCH, &n) : 0;

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
static int answer_page(struct submissions *s, struct store_sub *subs, size_t n, cJSON *meta,
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
static int get_list(struct submissions *s, const struct http_request *r,
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
	rc = store_list(s->store, SUBMISSIONS_API, who->is_operator ? NULL : who->owner,
			(uint64_t)(page - 1) * (uint64_t)per_page, (size_t)per_page, &subs, &n,
			&total);
	if (rc < 0)
		return answer_error(out, 503, "the submission store failed; retry later", ka, hdr);
	return answer_page(s, subs, n, page_meta(page, per_page, total), v, ka, hdr, out);
}

/* Judge0 keeps its statistics this long (its cache's duration). */
#define STATISTICS_CACHED_MS (10 * 60 * 1000)

/* Count what GET /statistics shows: 0, or the store's negative errno. */
static int count_statistics(struct submissions *s, struct judge0_statistics *st)
{
	uint64_t today = wall_ms() / 86400000ull;
	int rc;

	memset(st, 0, sizeof(*st));
	st->now_ms = wall_ms();
	st->cached_ms = STATISTICS_CACHED_MS;
	rc = store_count(s->store, SUBMISSIONS_API, STORE_BY_REQUEST, "language_id", 0, &st->languages,
			 &st->nlanguages);
	if (rc == 0)
		rc = store_count(s->store, SUBMISSIONS_API, STORE_BY_RESULT, "status_id", 0,
				 &st->statuses, &st->nstatuses);
	if (rc == 0)
		rc = store_count(s->store, SUBMISSIONS_API, STORE_BY_DAY, NULL,
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
static int get_statistics(struct submissions *s, const struct http_request *r, bool ka,
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
static int delete_one(struct submissions *s, const struct auth_who *who, const char *token,
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
static int submissions_answer(struct submissions *s, const struct http_request *r,
			      const struct auth_who *who, bool ka, const char *hdr,
			      struct buf *out)
{
	static const char base[] = "/submissions";
	const char *rest = r->path + sizeof(base) - 1; /* "", "/batch" or "/TOKEN" */
	bool is_get = !strcmp(r->method, "GET"), is_post = !strcmp(r->method, "POST");
	bool is_delete = !strcmp(r->method, "DELETE");
	struct judge0_view v;
	char err[256], allow[192];

	if (api_judge0_view(r, &v, err, sizeof(err)) < 0 && !(is_post && !strcmp(rest, "/batch")))
		return answer_error(out, 400, err, ka, hdr);
	if ((!*rest && !is_get && !is_post) || (!strcmp(rest, "/batch") && !is_get && !is_post) ||
	    (*rest && strcmp(rest, "/batch") && !is_get && !is_delete)) {
		snprintf(allow, sizeof(allow), "%sAllow: %s\r\n", hdr,
			 !*rest || !strcmp(rest, "/batch") ? "GET, POST" : "GET, DELETE");
		return answer_error(out, 405, "method not allowed", ka, allow);
	}
	if (is_post && json_body_over_cap(r->body.len, s->cfg->max_run_body_bytes))
		return answer_error(out, 413, "request body too large", ka, hdr);
	if (!loop_store(s))
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

int submissions_handle(struct submissions *s, const struct http_request *r,
		       const struct auth_who *who, bool ka, const char *hdr, struct buf *out)
{
	if (!strcmp(r->path, "/statistics")) {
		if (!loop_store(s))
			return no_store(s, out, ka, hdr);
		return get_statistics(s, r, ka, hdr, out);
	}
	return submissions_answer(s, r, who, ka, hdr, out);
}

bool submissions_store_ready(struct submissions *s, char *why, size_t whylen)
{
	if (loop_store(s))
		return true;
	snprintf(why, whylen, "the submission store is unavailable: %.200s", s->error);
	return false;
}

/* ---- running -------------------------------------------------------- */

static void fail_stored(struct submissions *s, int64_t id, const char *why);

void submissions_fail(struct submissions *s, int64_t id, const char *why)
{
	if (s->store)
		fail_stored(s, id, why);
}

/* A stored submission that will not run: its failure is its result. */
static void fail_stored(struct submissions *s, int64_t id, const char *why)
{
	char *result = api_judge0_result_failed(why);
	int rc = store_finish(s->store, id, result);

	if (rc < 0 && rc != -ENOENT) {
		log_error("submission %lld: its failure could not be stored (%s); it is offered"
			  " again until the store takes it", (long long)id, strerror(-rc));
		submissions_keep(s, id, result);
		return;
	}
	free(result);
}

void submissions_keep(struct submissions *s, int64_t id, char *result)
{
	struct unstored *u = xcalloc(1, sizeof(*u)), **tail = &s->unstored;
	size_t len = strlen(result);

	if (s->unstored_bytes + len > UNSTORED_MAX_BYTES) {
		/* its failure instead: what it said is lost, not that it ran */
		free(result);
		result = api_judge0_result_failed("the sandbox failed: its result could not be"
						  " stored, and too many results wait for the store");
		len = strlen(result);
	}
	u->id = id;
	u->result = result;
	s->unstored_bytes += len;
	while (*tail)
		tail = &(*tail)->next;
	*tail = u;
	if (!s->unstored_retry_ms)
		s->unstored_retry_ms = now_ms() + UNSTORED_RETRY_MS;
}

/* Its callback, now that its result is stored, as the job thread would
 * have sent it. */
static void call_back_stored(struct submissions *s, int64_t id)
{
	struct store_sub sub;
	char *body;

	if (!s->callbacks || store_get(s->store, id, &sub) < 0)
		return;
	body = sub.callback_url ? api_judge0_callback_body(&sub, s->langs) : NULL;
	if (body)
		outbox_add(s->callbacks, sub.id, sub.token, sub.callback_url, body);
	free(body);
	store_sub_free(&sub);
}

/* Each kept result offered to the store, oldest first, until one is
 * refused again (the rest would be too): the number still kept. */
static size_t store_kept(struct submissions *s)
{
	size_t left = 0;

	while (s->unstored && loop_store(s)) {
		struct unstored *u = s->unstored;
		int rc = store_finish(s->store, u->id, u->result);

		if (rc < 0 && rc != -ENOENT)
			break;
		if (rc == 0) {
			log_info("submission %lld: its result is stored now", (long long)u->id);
			call_back_stored(s, u->id);
		}
		s->unstored = u->next;
		s->unstored_bytes -= strlen(u->result);
		free(u->result);
		free(u);
	}
	for (struct unstored *u = s->unstored; u; u = u->next)
		left++;
	return left;
}

void submissions_flush(struct submissions *s)
{
	size_t left = store_kept(s);

	if (!left)
		return;
	log_error("%zu results could not be stored before this worker ends: their submissions"
		  " run again", left);
	for (struct unstored *u = s->unstored; u; u = u->next)
		if (s->deferred)
			s->deferred(s->arg, u->id);
	unstored_free_all(s);
}

/*
 * A submission taken (its attempts counted) into its job: 0, or
 * -ECANCELED when it may not run (tried too often, or no longer valid on
 * this server), its failure then written as its result.
 */
static int job_of(struct submissions *s, const struct store_sub *sub, struct job_request **job)
{
	struct json_body_marker m;
	char *stored = NULL, *callback = NULL;
	cJSON *root, *errors = NULL;
	int rc;

	if (sub->attempts > SUBMISSION_MAX_ATTEMPTS) {
		log_warn("submission %lld: its worker died in each of %d attempts; not run again",
			 (long long)sub->id, SUBMISSION_MAX_ATTEMPTS);
		fail_stored(s, sub->id, "the sandbox failed: its worker died in every attempt");
		return -ECANCELED;
	}
	root = json_body_parse(sub->request, strlen(sub->request), &m);
	rc = root ? api_judge0_parse(root, &m, true, s->langs, s->cfg, job, &stored, &callback,
				     &errors) : -EINVAL;
	cJSON_Delete(root);
	free(stored);
	free(callback);
	if (rc < 0) {
		char *why = errors ? cJSON_PrintUnformatted(errors) : NULL;
		char msg[512];

		/* the server changed under it (a language gone, lower caps) */
		snprintf(msg, sizeof(msg), "no longer valid on this server: %s",
			 why ? why : "unreadable");
		fail_stored(s, sub->id, msg);
		free(why);
		cJSON_Delete(errors);
		return -ECANCELED;
	}
	return 0;
}

int submissions_take(struct submissions *s, int64_t id, struct job_request **job)
{
	struct store_sub sub;
	unsigned attempts = 0;
	int rc;

	*job = NULL;
	if (!s->store)
		return -EIO;
	rc = store_start(s->store, id, &attempts);
	if (rc < 0) {
		if (rc != -ENOENT)
			log_error("submission %lld could not start: %s", (long long)id,
				  strerror(-rc));
		return rc;
	}
	rc = store_get(s->store, id, &sub);
	if (rc < 0)
		return rc;
	sub.attempts = attempts;
	rc = job_of(s, &sub, job);
	store_sub_free(&sub);
	return rc;
}

int submissions_lease(struct submissions *s, int64_t *id, struct job_request **job)
{
	struct store_sub sub;
	int rc;

	*job = NULL;
	if (!loop_store(s))
		return -ENOENT;
	rc = store_lease(s->store, s->cfg->store_lease_ms, &sub, s->lease_key);
	if (rc < 0)
		return -ENOENT;
	*id = sub.id;
	s->lease_id = sub.id;
	s->renew_ms = now_ms() + s->cfg->store_lease_ms / 3;
	if (sub.attempts > 1)
		log_warn("submission %lld runs again (attempt %u): whoever ran it before let its"
			 " lease end", (long long)sub.id, sub.attempts);
	rc = job_of(s, &sub, job);
	store_sub_free(&sub);
	if (rc < 0)
		submissions_lease_end(s);
	return rc;
}

void submissions_lease_end(struct submissions *s)
{
	s->lease_id = 0;
	s->lease_key[0] = '\0';
}

/* The running submission stays this node's. */
static void renew(struct submissions *s, uint64_t now)
{
	int rc;

	if (!s->lease_id || now < s->renew_ms || !loop_store(s))
		return;
	s->renew_ms = now + s->cfg->store_lease_ms / 3;
	rc = store_renew(s->store, s->lease_id, s->lease_key, s->cfg->store_lease_ms);
	if (rc == -ENOENT) {
		log_warn("submission %lld: its lease was lost (another node may run it too; the"
			 " first result stands)", (long long)s->lease_id);
		submissions_lease_end(s);
	} else if (rc < 0) {
		/* tried again at the next renewal, a third of a lease later */
		log_warn("submission %lld: its lease could not be renewed: %s",
			 (long long)s->lease_id, strerror(-rc));
	}
}

/* Callbacks whose sender went quiet, sent from here. */
static void recover_callbacks(struct submissions *s)
{
	struct store_sub *due = NULL;
	size_t n = 0;

	if (!s->callbacks || store_callbacks_due(s->store, STORE_CALLBACK_TURN_MS, 16, &due, &n) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		char *body = due[i].callback_url ? api_judge0_callback_body(&due[i], s->langs)
						 : NULL;

		if (body) {
			log_info("submission %s: its callback is sent again from here", due[i].token);
			outbox_add(s->callbacks, due[i].id, due[i].token, due[i].callback_url, body);
		}
		free(body);
	}
	store_subs_free(due, n);
}

/* The watcher's look: where the submissions are, this node's beat. */
static void watch(struct submissions *s, uint64_t now)
{
	bool shared = store_url_shared(s->cfg->store);
	struct store_seen *seen;
	unsigned running = 0;
	int rc;

	if (!s->stats || now < s->next_watch_ms)
		return;
	/* a shared store's beat comes at least once a third of a lease */
	s->next_watch_ms = now + (shared && s->cfg->store_lease_ms / 3 < WATCH_EVERY_MS ?
					  s->cfg->store_lease_ms / 3 : WATCH_EVERY_MS);
	seen = xcalloc(1, sizeof(*seen));
	seen->wall_ms = wall_ms();
	for (size_t i = 0; i < STATS_MAX_WORKERS; i++)
		if (atomic_load(&s->stats->workers[i].state) == WS_BUSY)
			running++;
	rc = loop_store(s) ? 0 : -EIO;
	if (rc == 0 && shared)
		rc = store_beat(s->store, atomic_load(&s->stats->started_wall_ms),
				s->cfg->workers, running);
	if (rc == 0)
		rc = store_overview(s->store, &seen->ov);
	seen->up = rc == 0;
	if (!s->store)
		snprintf(seen->error, sizeof(seen->error), "%s", s->error);
	else if (rc < 0)
		snprintf(seen->error, sizeof(seen->error), "%s",
			 store_error(s->store)[0] ? store_error(s->store) : strerror(-rc));
	stats_store_publish(s->stats, seen);
	free(seen);
	if (rc == 0 && shared)
		recover_callbacks(s);
}

void submissions_tick(struct submissions *s)
{
	uint64_t now = now_ms();
	size_t removed = 0;
	int rc;

	renew(s, now);
	if (s->unstored && now >= s->unstored_retry_ms)
		s->unstored_retry_ms = store_kept(s) ? now + UNSTORED_RETRY_MS : 0;
	if (!s->expires)
		return;
	watch(s, now);
	if (!s->store || now < s->next_expire_ms)
		return;
	s->next_expire_ms = now + expire_every_ms(s->cfg);
	rc = store_expire(s->store, wall_ms() - (uint64_t)s->cfg->submission_ttl_s * 1000,
			  EXPIRE_BATCH, &removed);
	if (rc < 0)
		log_warn("removing expired submissions: %s", strerror(-rc));
	else if (removed)
		log_info("%zu expired submissions removed", removed);
	/* more than a batch: the next one soon */
	if (removed == EXPIRE_BATCH)
		s->next_expire_ms = now + 100;
}
