/*
 * The PostgreSQL store backend: one database that a fleet of goboxd
 * shares (common/store.h says what a shared store promises). Every
 * process and thread has its own connection (libpq's, never across a
 * fork); a connection that broke is made again once, at the next
 * operation, and an operation that fails on a broken connection is tried
 * once more on the new one (each is safe to repeat: a new submission's
 * token is unique, a finish applies to an unfinished one only).
 *
 * Time is the database's (clock_timestamp(), in ms since the epoch), so
 * that a lease means the same on every node whatever their clocks say.
 *
 * The schema is versioned in goboxd_meta; store_pg_open brings an older
 * one up to this goboxd's, one step at a time, under an advisory lock
 * (one migrator at a time), and refuses a newer one.
 */
#include "autoconf.h"

#include <errno.h>
#include <inttypes.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/store.h"
#include "common/util.h"

/* The schema this goboxd writes, and each step to it from the one before. */
#define SCHEMA_VERSION 2

static const char *const migrations[SCHEMA_VERSION] = {
	/* 1: submissions with leases and callback state, and the nodes */
	"CREATE TABLE goboxd_submissions ("
	" id bigserial PRIMARY KEY,"
	" token text NOT NULL UNIQUE,"
	" api text NOT NULL,"
	" state smallint NOT NULL,"               /* enum store_state */
	" request text NOT NULL,"
	" result text,"
	" callback_url text,"
	" created_ms bigint NOT NULL,"
	" started_ms bigint NOT NULL DEFAULT 0,"
	" finished_ms bigint NOT NULL DEFAULT 0,"
	" attempts integer NOT NULL DEFAULT 0,"
	" node text,"                             /* who holds (or last held) it */
	" lease_key text,"
	" lease_until_ms bigint NOT NULL DEFAULT 0,"
	" finished_by text,"
	" finished_count integer NOT NULL DEFAULT 0," /* results written: at most 1 */
	" callback_state smallint NOT NULL DEFAULT 0," /* 0 none, 1 due, 2 delivered, 3 given up */
	" callback_rounds integer NOT NULL DEFAULT 0,"
	" callback_due_ms bigint NOT NULL DEFAULT 0);"
	"CREATE INDEX goboxd_submissions_waiting ON goboxd_submissions (id) WHERE state < 2;"
	"CREATE INDEX goboxd_submissions_finished ON goboxd_submissions (finished_ms)"
	" WHERE state = 2;"
	"CREATE INDEX goboxd_submissions_callbacks ON goboxd_submissions (callback_due_ms)"
	" WHERE callback_state = 1;"
	"CREATE TABLE goboxd_nodes ("
	" name text PRIMARY KEY,"
	" started_ms bigint NOT NULL,"
	" heartbeat_ms bigint NOT NULL,"
	" workers integer NOT NULL,"
	" running integer NOT NULL,"
	" version text NOT NULL);",
	/* 2: each submission's owner (the API token that made it) */
	"ALTER TABLE goboxd_submissions ADD COLUMN owner text NOT NULL DEFAULT '';"
	"CREATE INDEX goboxd_submissions_owner ON goboxd_submissions (api, owner, id);",
};

/* The database's clock, in ms since the epoch. */
#define NOW "(extract(epoch FROM clock_timestamp()) * 1000)::bigint"

/* The same key for every goboxd: the schema's migrator. */
#define MIGRATE_LOCK "7449029658478002177"

/* A callback taken over this many times (each sender having
 * STORE_CALLBACK_TURN_MS for its three tries) is given up. */
#define CALLBACK_ROUNDS 4

/* A node silent this long is forgotten. */
#define NODE_FORGET_MS (10 * 60 * 1000)

_Static_assert(STORE_MAX_NODES == 32, "the node list's LIMIT");

/* What sub_of reads, in its order: the SELECTs' and the UPDATEs'
 * RETURNING lists (whose CTEs name their id apart, so that none is
 * ambiguous there). */
#define SUB_COLUMNS                                                                       \
	"id, token, api, state, request, result, callback_url, created_ms, started_ms," \
	" finished_ms, attempts, owner"

struct store_pg {
	struct store base;
	PGconn *conn;
	char logged[256];      /* the failure last logged, and when */
	uint64_t logged_ms;
};

/* A database away fails every look (four a second per node): the same
 * failure is logged once a minute, a new one at once. */
#define SAME_FAILURE_LOG_MS 60000

static void log_failure(struct store_pg *q)
{
	uint64_t now = now_ms();

	if (!strcmp(q->logged, q->base.error) && now - q->logged_ms < SAME_FAILURE_LOG_MS)
		return;
	snprintf(q->logged, sizeof(q->logged), "%s", q->base.error);
	q->logged_ms = now;
	log_warn("the submission store: %s", q->base.error);
}

static struct store_pg *of(struct store *s)
{
	return (struct store_pg *)s;
}

/* The server's notices (a table that already exists...) are not ours to print. */
static void no_notice(void *arg, const char *message)
{
	(void)arg;
	(void)message;
}

static PGconn *pg_connect(const char *url)
{
	/* the URL's own settings come after these defaults, and win */
	static const char *const keys[] = { "connect_timeout", "application_name", "options",
					    "dbname", NULL };
	const char *values[] = { "5", "goboxd",
				 "-c statement_timeout=30000 -c idle_in_transaction_session_timeout=60000",
				 url, NULL };

	return PQconnectdbParams(keys, values, 1);
}

/* A connection's error without its trailing newline. */
static void conn_error(PGconn *c, char *err, size_t errlen)
{
	const char *msg = c ? PQerrorMessage(c) : "out of memory";
	size_t n = strlen(msg);

	while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
		n--;
	snprintf(err, errlen, "%.*s", (int)n, msg);
}

static int errno_of(const PGresult *r)
{
	const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;

	if (state && strcmp(state, "53100") == 0) /* disk_full */
		return -ENOSPC;
	return -EIO;
}

/*
 * Run sql with text parameters: the result (PQclear it) when it
 * succeeded, else NULL and *rc. A broken connection is made again and
 * the statement tried once more.
 */
static int migrate(PGconn *c, char *err, size_t errlen);

/*
 * Run sql with text parameters: the result (PQclear it) when it
 * succeeded, else NULL and *rc, the reason kept in the handle's error.
 * A broken connection is made again and the statement tried once more;
 * so is a statement that found goboxd's tables gone (a database made
 * anew behind the same URL): the schema is made again first.
 */
static PGresult *run(struct store_pg *q, const char *sql, int n, const char *const *params,
		     int *rc)
{
	char *err = q->base.error;
	size_t errlen = sizeof(q->base.error);

	for (int attempt = 0; attempt < 2; attempt++) {
		PGresult *r;
		ExecStatusType st;
		const char *state;
		bool gone;

		if (PQstatus(q->conn) != CONNECTION_OK) {
			PQreset(q->conn);
			if (PQstatus(q->conn) != CONNECTION_OK) {
				conn_error(q->conn, err, errlen);
				log_failure(q);
				*rc = -EIO;
				return NULL;
			}
		}
		r = PQexecParams(q->conn, sql, n, NULL, params, NULL, NULL, 0);
		st = PQresultStatus(r);
		if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) {
			err[0] = '\0';
			if (q->logged[0]) {
				log_info("the submission store answers again");
				q->logged[0] = '\0';
			}
			return r;
		}
		*rc = errno_of(r);
		conn_error(q->conn, err, errlen);
		state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
		/* undefined_table */
		gone = state && strcmp(state, "42P01") == 0;
		PQclear(r);
		if (attempt == 0 && gone) {
			char why[256];

			log_warn("the submission store: %s; its schema is made again", err);
			if (migrate(q->conn, why, sizeof(why)) == 0)
				continue;
			log_warn("the submission store: %s", why);
		}
		if (PQstatus(q->conn) == CONNECTION_OK || attempt == 1) {
			log_failure(q);
			return NULL;
		}
		/* the connection broke under it: once more */
	}
	return NULL;
}

/* Rows a command changed, or a negative errno. */
static int run_changes(struct store_pg *q, const char *sql, int n, const char *const *params)
{
	int rc = 0;
	PGresult *r = run(q, sql, n, params, &rc);

	if (!r)
		return rc;
	rc = atoi(PQcmdTuples(r));
	PQclear(r);
	return rc;
}

static char *value_dup(const PGresult *r, int row, int col)
{
	return PQgetisnull(r, row, col) ? NULL : xstrdup(PQgetvalue(r, row, col));
}

static uint64_t value_u64(const PGresult *r, int row, int col)
{
	return PQgetisnull(r, row, col) ? 0 : strtoull(PQgetvalue(r, row, col), NULL, 10);
}

/* A row of SUB_COLUMNS into out. */
static void sub_of(const PGresult *r, int row, struct store_sub *out)
{
	memset(out, 0, sizeof(*out));
	out->id = strtoll(PQgetvalue(r, row, 0), NULL, 10);
	snprintf(out->token, sizeof(out->token), "%s", PQgetvalue(r, row, 1));
	snprintf(out->api, sizeof(out->api), "%s", PQgetvalue(r, row, 2));
	out->state = (enum store_state)atoi(PQgetvalue(r, row, 3));
	out->request = value_dup(r, row, 4);
	out->result = value_dup(r, row, 5);
	out->callback_url = value_dup(r, row, 6);
	out->created_ms = value_u64(r, row, 7);
	out->started_ms = value_u64(r, row, 8);
	out->finished_ms = value_u64(r, row, 9);
	out->attempts = (unsigned)value_u64(r, row, 10);
	snprintf(out->owner, sizeof(out->owner), "%s", PQgetvalue(r, row, 11));
	if (!out->request)
		out->request = xstrdup("");
}

static void pg_close(struct store *s)
{
	struct store_pg *q = of(s);

	PQfinish(q->conn);
	free(q);
}

static int pg_add(struct store *s, const struct store_sub *sub, int64_t *id, char *err,
		  size_t errlen)
{
	struct store_pg *q = of(s);
	const char *result = sub->result;
	char state[4], started[24];
	const char *p[] = { sub->token, sub->api, state, sub->request, result, sub->callback_url,
			    started, q->base.node, sub->owner };
	PGresult *r;
	int rc = 0;

	snprintf(state, sizeof(state), "%d", result ? STORE_DONE : STORE_QUEUED);
	snprintf(started, sizeof(started), "%" PRIu64, sub->started_ms);
	/* tried again after a broken connection: the first may have landed */
	r = run(q,
		"INSERT INTO goboxd_submissions (token, api, state, request, result, callback_url,"
		" created_ms, started_ms, finished_ms, finished_by, finished_count, owner)"
		" VALUES ($1, $2, $3::smallint, $4, $5, $6, " NOW ", $7::bigint,"
		" CASE WHEN $3::smallint = 2 THEN " NOW " ELSE 0 END,"
		" CASE WHEN $3::smallint = 2 THEN $8 END,"
		" CASE WHEN $3::smallint = 2 THEN 1 ELSE 0 END, $9)"
		" ON CONFLICT (token) DO NOTHING RETURNING id",
		9, p, &rc);
	if (r && PQntuples(r) == 0) {
		PQclear(r);
		r = run(q, "SELECT id FROM goboxd_submissions WHERE token = $1", 1, p, &rc);
	}
	if (!r || PQntuples(r) != 1) {
		if (r)
			rc = -EIO;
		snprintf(err, errlen, "%s", q->base.error[0] ? q->base.error : "no id returned");
		PQclear(r);
		return rc;
	}
	*id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
	PQclear(r);
	return 0;
}

static int pg_get(struct store *s, int64_t id, const char *token, struct store_sub *out)
{
	struct store_pg *q = of(s);
	char ids[24];
	const char *p[1];
	PGresult *r;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	snprintf(ids, sizeof(ids), "%" PRId64, id);
	p[0] = token ? token : ids;
	r = run(q,
		token ? "SELECT " SUB_COLUMNS " FROM goboxd_submissions WHERE token = $1"
		      : "SELECT " SUB_COLUMNS " FROM goboxd_submissions WHERE id = $1::bigint",
		1, p, &rc);
	if (!r)
		return rc;
	if (PQntuples(r) == 0) {
		PQclear(r);
		return -ENOENT;
	}
	sub_of(r, 0, out);
	PQclear(r);
	return 0;
}

/*
 * Written once: a submission already finished (by another node that ran
 * it after this one's lease ended) keeps its result, and this one's is
 * dropped. Its callback becomes due, first this node's to send.
 */
static int pg_finish(struct store *s, int64_t id, const char *result)
{
	struct store_pg *q = of(s);
	char ids[24], first[24];
	const char *p[] = { ids, result, q->base.node, first };
	int rc;

	snprintf(ids, sizeof(ids), "%" PRId64, id);
	snprintf(first, sizeof(first), "%d", STORE_CALLBACK_TURN_MS);
	rc = run_changes(q,
			 "UPDATE goboxd_submissions SET state = 2, result = $2,"
			 " finished_ms = " NOW ", finished_by = $3,"
			 " finished_count = finished_count + 1, lease_key = NULL,"
			 " callback_state = CASE WHEN callback_url IS NULL THEN 0 ELSE 1 END,"
			 " callback_due_ms = " NOW " + $4::bigint"
			 " WHERE id = $1::bigint AND state < 2",
			 4, p);
	return rc < 0 ? rc : rc == 1 ? 0 : -ENOENT;
}

static int pg_remove(struct store *s, const char *token)
{
	struct store_pg *q = of(s);
	const char *p[] = { token };
	PGresult *r;
	int rc = run_changes(q, "DELETE FROM goboxd_submissions WHERE token = $1 AND state = 2",
			     1, p);

	if (rc != 0)
		return rc < 0 ? rc : 0;
	r = run(q, "SELECT 1 FROM goboxd_submissions WHERE token = $1", 1, p, &rc);
	if (!r)
		return rc;
	rc = PQntuples(r) ? -EBUSY : -ENOENT;
	PQclear(r);
	return rc;
}

/* A finished one whose callback is still due stays until it is sent or
 * given up. */
static int pg_expire(struct store *s, uint64_t before_ms, size_t max, size_t *removed)
{
	struct store_pg *q = of(s);
	char before[24], lim[24];
	const char *p[] = { before, lim };
	int rc;

	snprintf(before, sizeof(before), "%" PRIu64, before_ms);
	snprintf(lim, sizeof(lim), "%zu", max);
	rc = run_changes(q,
			 "DELETE FROM goboxd_submissions WHERE id IN (SELECT id FROM"
			 " goboxd_submissions WHERE state = 2 AND finished_ms < $1::bigint"
			 " AND callback_state <> 1 ORDER BY finished_ms LIMIT $2::bigint"
			 " FOR UPDATE SKIP LOCKED)",
			 2, p);
	*removed = rc > 0 ? (size_t)rc : 0;
	return rc < 0 ? rc : 0;
}

static int pg_overview(struct store *s, struct store_overview *out)
{
	struct store_pg *q = of(s);
	PGresult *r;
	int rc = 0;

	r = run(q,
		"WITH t AS (SELECT " NOW " AS now)"
		" SELECT count(*) FILTER (WHERE state = 0 OR lease_until_ms < t.now),"
		" count(*) FILTER (WHERE state = 1 AND lease_until_ms >= t.now),"
		" t.now - min(created_ms) FILTER (WHERE state = 0 OR lease_until_ms < t.now)"
		" FROM goboxd_submissions, t WHERE state < 2 GROUP BY t.now",
		0, NULL, &rc);
	if (!r)
		return rc;
	if (PQntuples(r) == 1) {
		out->queued = value_u64(r, 0, 0);
		out->running = value_u64(r, 0, 1);
		out->oldest_queued_age_ms = value_u64(r, 0, 2);
		if (out->queued && !out->oldest_queued_age_ms)
			out->oldest_queued_age_ms = 1;
	}
	PQclear(r);
	r = run(q,
		"SELECT name, " NOW " - heartbeat_ms, started_ms, workers, running"
		" FROM goboxd_nodes ORDER BY name LIMIT 32",
		0, NULL, &rc);
	if (!r)
		return rc;
	out->nodes = (size_t)PQntuples(r);
	for (size_t i = 0; i < out->nodes; i++) {
		struct store_node *n = &out->node[i];
		int row = (int)i;

		snprintf(n->name, sizeof(n->name), "%s", PQgetvalue(r, row, 0));
		n->heartbeat_age_ms = value_u64(r, row, 1);
		n->started_ms = value_u64(r, row, 2);
		n->workers = (unsigned)value_u64(r, row, 3);
		n->running = (unsigned)value_u64(r, row, 4);
	}
	PQclear(r);
	return 0;
}

static int pg_lease(struct store *s, uint32_t lease_ms, const char *key, struct store_sub *out)
{
	struct store_pg *q = of(s);
	char ms[16];
	const char *p[] = { q->base.node, key, ms };
	PGresult *r;
	int rc = 0;

	snprintf(ms, sizeof(ms), "%" PRIu32, lease_ms);
	r = run(q,
		"WITH next AS (SELECT id AS next_id FROM goboxd_submissions WHERE state < 2"
		" AND (state = 0 OR lease_until_ms < " NOW ") ORDER BY id LIMIT 1"
		" FOR UPDATE SKIP LOCKED)"
		" UPDATE goboxd_submissions s SET state = 1, attempts = s.attempts + 1,"
		" started_ms = " NOW ", node = $1, lease_key = $2,"
		" lease_until_ms = " NOW " + $3::bigint FROM next WHERE s.id = next_id"
		" RETURNING " SUB_COLUMNS,
		3, p, &rc);
	if (!r)
		return rc;
	rc = PQntuples(r) == 1 ? 0 : -ENOENT;
	if (rc == 0)
		sub_of(r, 0, out);
	PQclear(r);
	return rc;
}

static int pg_renew(struct store *s, int64_t id, const char *key, uint32_t lease_ms)
{
	struct store_pg *q = of(s);
	char ids[24], ms[16];
	const char *p[] = { ids, key, ms };
	int rc;

	snprintf(ids, sizeof(ids), "%" PRId64, id);
	snprintf(ms, sizeof(ms), "%" PRIu32, lease_ms);
	rc = run_changes(q,
			 "UPDATE goboxd_submissions SET lease_until_ms = " NOW " + $3::bigint"
			 " WHERE id = $1::bigint AND lease_key = $2 AND state = 1",
			 3, p);
	return rc < 0 ? rc : rc == 1 ? 0 : -ENOENT;
}

static int pg_callback_done(struct store *s, int64_t id)
{
	struct store_pg *q = of(s);
	char ids[24];
	const char *p[] = { ids };
	int rc;

	snprintf(ids, sizeof(ids), "%" PRId64, id);
	rc = run_changes(q,
			 "UPDATE goboxd_submissions SET callback_state = 2"
			 " WHERE id = $1::bigint AND callback_state = 1",
			 1, p);
	return rc < 0 ? rc : 0;
}

static int pg_callbacks_due(struct store *s, uint32_t lease_ms, size_t max,
			    struct store_sub **out, size_t *n)
{
	struct store_pg *q = of(s);
	char lim[24], ms[16], rounds[8];
	const char *p[] = { lim, ms, rounds };
	PGresult *r;
	int rc = 0;

	snprintf(lim, sizeof(lim), "%zu", max);
	snprintf(ms, sizeof(ms), "%" PRIu32, lease_ms);
	snprintf(rounds, sizeof(rounds), "%d", CALLBACK_ROUNDS);
	/* one past the last round gives it up */
	r = run(q,
		"WITH due AS (SELECT id AS due_id FROM goboxd_submissions WHERE callback_state = 1"
		" AND callback_due_ms < " NOW " ORDER BY callback_due_ms LIMIT $1::bigint"
		" FOR UPDATE SKIP LOCKED)"
		" UPDATE goboxd_submissions s SET callback_due_ms = " NOW " + $2::bigint,"
		" callback_rounds = s.callback_rounds + 1,"
		" callback_state = CASE WHEN s.callback_rounds >= $3::int THEN 3 ELSE 1 END"
		" FROM due WHERE s.id = due_id"
		" RETURNING " SUB_COLUMNS ", callback_state",
		3, p, &rc);
	if (!r)
		return rc;
	*out = xreallocarray(NULL, (size_t)PQntuples(r) + 1, sizeof(**out));
	for (int row = 0; row < PQntuples(r); row++) {
		if (atoi(PQgetvalue(r, row, 12)) != 1) {
			log_warn("submission %s: its callback was not delivered in %d rounds;"
				 " given up", PQgetvalue(r, row, 1), CALLBACK_ROUNDS + 1);
			continue;
		}
		sub_of(r, row, &(*out)[(*n)++]);
	}
	PQclear(r);
	return 0;
}

static int pg_beat(struct store *s, uint64_t started_ms, unsigned workers, unsigned running)
{
	struct store_pg *q = of(s);
	char started[24], w[16], run_[16], forget[24];
	const char *p[] = { q->base.node, started, w, run_, PACKAGE_VERSION, forget };
	int rc;

	snprintf(started, sizeof(started), "%" PRIu64, started_ms);
	snprintf(w, sizeof(w), "%u", workers);
	snprintf(run_, sizeof(run_), "%u", running);
	snprintf(forget, sizeof(forget), "%d", NODE_FORGET_MS);
	rc = run_changes(q,
			 "INSERT INTO goboxd_nodes (name, started_ms, heartbeat_ms, workers,"
			 " running, version) VALUES ($1, $2::bigint, " NOW ", $3::int, $4::int, $5)"
			 " ON CONFLICT (name) DO UPDATE SET started_ms = excluded.started_ms,"
			 " heartbeat_ms = excluded.heartbeat_ms, workers = excluded.workers,"
			 " running = excluded.running, version = excluded.version",
			 5, p);
	if (rc < 0)
		return rc;
	rc = run_changes(q, "DELETE FROM goboxd_nodes WHERE heartbeat_ms < " NOW " - $1::bigint",
			 1, p + 5);
	return rc < 0 ? rc : 0;
}

static int pg_list(struct store *s, const char *api, const char *owner, uint64_t offset,
		   size_t limit, struct store_sub **out, size_t *n, uint64_t *total)
{
	struct store_pg *q = of(s);
	char lim[24], off[24];
	/* $4 NULL: everyone's */
	const char *p[] = { api, lim, off, owner };
	PGresult *r;
	int rc = 0;

	snprintf(lim, sizeof(lim), "%zu", limit);
	snprintf(off, sizeof(off), "%" PRIu64, offset > INT64_MAX ? (uint64_t)INT64_MAX : offset);
	r = run(q,
		"SELECT count(*) FROM goboxd_submissions WHERE api = $1 AND"
		" ($2::text IS NULL OR owner = $2)",
		2, (const char *const[]){ api, owner }, &rc);
	if (!r)
		return rc;
	*total = value_u64(r, 0, 0);
	PQclear(r);
	/* newest first: ids grow with time, and the key walks backwards */
	r = run(q,
		"SELECT " SUB_COLUMNS " FROM goboxd_submissions WHERE api = $1 AND"
		" ($4::text IS NULL OR owner = $4) ORDER BY id DESC LIMIT $2::bigint"
		" OFFSET $3::bigint",
		4, p, &rc);
	if (!r)
		return rc;
	*out = xcalloc(PQntuples(r) ? (size_t)PQntuples(r) : 1, sizeof(**out));
	for (int i = 0; i < PQntuples(r); i++)
		sub_of(r, i, &(*out)[(*n)++]);
	PQclear(r);
	return 0;
}

static int pg_count(struct store *s, const char *api, enum store_group by, const char *key,
		    uint64_t since_ms, struct store_count **out, size_t *n)
{
	/* $1 the API, $2 since when, $3 the JSON key; a text that is not a
	 * number counts as none */
	static const char *const sql[] = {
		[STORE_BY_REQUEST] = "SELECT state, CASE WHEN jsonb_typeof(request::jsonb -> $3)"
				     " = 'number' THEN (request::jsonb ->> $3)::numeric::bigint END"
				     " AS v, count(*) FROM goboxd_submissions WHERE api = $1 AND"
				     " created_ms >= $2::bigint GROUP BY state, v",
		[STORE_BY_RESULT] = "SELECT state, CASE WHEN jsonb_typeof(result::jsonb -> $3)"
				    " = 'number' THEN (result::jsonb ->> $3)::numeric::bigint END"
				    " AS v, count(*) FROM goboxd_submissions WHERE api = $1 AND"
				    " created_ms >= $2::bigint GROUP BY state, v",
		[STORE_BY_DAY] = "SELECT state, created_ms / 86400000 AS v, count(*)"
				 " FROM goboxd_submissions WHERE api = $1 AND created_ms >= $2::bigint"
				 " GROUP BY state, v",
	};
	struct store_pg *q = of(s);
	char since[24];
	const char *p[] = { api, since, key ? key : "" };
	PGresult *r;
	int rc = 0;

	if (by != STORE_BY_DAY && (!key || !*key))
		return -EINVAL;
	snprintf(since, sizeof(since), "%" PRIu64, since_ms > INT64_MAX ? (uint64_t)INT64_MAX :
						   since_ms);
	r = run(q, sql[by], by == STORE_BY_DAY ? 2 : 3, p, &rc);
	if (!r)
		return rc;
	*out = xcalloc(PQntuples(r) ? (size_t)PQntuples(r) : 1, sizeof(**out));
	for (int i = 0; i < PQntuples(r); i++) {
		struct store_count *c = &(*out)[(*n)++];

		c->state = (enum store_state)atoi(PQgetvalue(r, i, 0));
		c->has_value = !PQgetisnull(r, i, 1);
		c->value = c->has_value ? strtoll(PQgetvalue(r, i, 1), NULL, 10) : 0;
		c->count = value_u64(r, i, 2);
	}
	PQclear(r);
	return 0;
}

static int pg_size(struct store *s, uint64_t *bytes)
{
	struct store_pg *q = of(s);
	PGresult *r;
	int rc = 0;

	r = run(q, "SELECT pg_database_size(current_database())", 0, NULL, &rc);
	if (!r)
		return rc;
	*bytes = value_u64(r, 0, 0);
	PQclear(r);
	return 0;
}

static const struct store_ops pg_ops = {
	/* no claim, start or pending: a fleet's nodes lease their work */
	.close = pg_close, .add = pg_add, .get = pg_get, .finish = pg_finish, .remove = pg_remove,
	.expire = pg_expire, .overview = pg_overview, .list = pg_list, .count = pg_count,
	.size = pg_size, .lease = pg_lease, .renew = pg_renew,
	.callback_done = pg_callback_done, .callbacks_due = pg_callbacks_due, .beat = pg_beat,
};

/* A statement of the migration's transaction; false with err on failure. */
static bool migrate_exec(PGconn *c, const char *sql, PGresult **keep, char *err, size_t errlen)
{
	PGresult *r = PQexec(c, sql);
	ExecStatusType st = PQresultStatus(r);

	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
		conn_error(c, err, errlen);
		PQclear(r);
		return false;
	}
	if (keep)
		*keep = r;
	else
		PQclear(r);
	return true;
}

/* The schema at this goboxd's version: 0, -EPROTO when the database's
 * is newer, -EIO. */
static int migrate(PGconn *c, char *err, size_t errlen)
{
	PGresult *r = NULL;
	int have;

	if (!migrate_exec(c, "BEGIN", NULL, err, errlen))
		return -EIO;
	if (!migrate_exec(c, "SELECT pg_advisory_xact_lock(" MIGRATE_LOCK ")", NULL, err, errlen) ||
	    !migrate_exec(c,
			  "CREATE TABLE IF NOT EXISTS goboxd_meta (key text PRIMARY KEY,"
			  " value text NOT NULL)",
			  NULL, err, errlen) ||
	    !migrate_exec(c, "SELECT value FROM goboxd_meta WHERE key = 'schema_version'", &r, err,
			  errlen))
		goto fail;
	have = PQntuples(r) ? atoi(PQgetvalue(r, 0, 0)) : 0;
	PQclear(r);
	if (have > SCHEMA_VERSION) {
		snprintf(err, errlen,
			 "the database's schema is version %d, newer than this goboxd's (%d):"
			 " a newer goboxd wrote it; run that one",
			 have, SCHEMA_VERSION);
		PQclear(PQexec(c, "ROLLBACK"));
		return -EPROTO;
	}
	for (int v = have; v < SCHEMA_VERSION; v++)
		if (!migrate_exec(c, migrations[v], NULL, err, errlen))
			goto fail;
	if (have < SCHEMA_VERSION) {
		char sql[160];

		snprintf(sql, sizeof(sql),
			 "INSERT INTO goboxd_meta VALUES ('schema_version', '%d') ON CONFLICT (key)"
			 " DO UPDATE SET value = excluded.value",
			 SCHEMA_VERSION);
		if (!migrate_exec(c, sql, NULL, err, errlen))
			goto fail;
	}
	if (!migrate_exec(c, "COMMIT", NULL, err, errlen))
		return -EIO;
	if (have < SCHEMA_VERSION)
		log_info("the submission store's schema: version %d (was %d)", SCHEMA_VERSION,
			 have);
	return 0;
fail:
	PQclear(PQexec(c, "ROLLBACK"));
	return -EIO;
}

int store_pg_open(const char *url, struct store **out, char *err, size_t errlen)
{
	struct store_pg *q;
	PGconn *c;
	int rc;

	*out = NULL;
	c = pg_connect(url);
	if (c)
		PQsetNoticeProcessor(c, no_notice, NULL);
	if (!c || PQstatus(c) != CONNECTION_OK) {
		char why[256];

		conn_error(c, why, sizeof(why));
		/* the URL may hold a password: name the database by its host alone */
		snprintf(err, errlen, "PostgreSQL at %s: %s", c && PQhost(c) ? PQhost(c) : "?", why);
		PQfinish(c);
		return -EIO;
	}
	rc = migrate(c, err, errlen);
	if (rc < 0) {
		PQfinish(c);
		return rc;
	}
	q = xcalloc(1, sizeof(*q));
	q->base.ops = &pg_ops;
	q->conn = c;
	*out = &q->base;
	return 0;
}
