/*
 * The SQLite store backend: one database file, written by the workers
 * (each process and thread with its own connection) and read by the
 * master at start. WAL lets readers go on while one writes. A new
 * submission's commit is synced (synchronous=FULL for it), because its
 * 201 promises it outlives whatever dies next; the rest (a start, a
 * result, a removal) outlive any process's crash without a sync
 * (synchronous=NORMAL: WAL commits are atomic, and written to the file
 * before they return), and after a power loss at worst a submission
 * runs again.
 */
#include "autoconf.h"

#include <errno.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/store.h"
#include "common/util.h"

/* The schema this goboxd writes (PRAGMA user_version). */
#define SCHEMA_VERSION 2

/* Version 1, made on a new file; then each step to the next version. */
static const char schema[] =
	"CREATE TABLE submissions ("
	" id INTEGER PRIMARY KEY AUTOINCREMENT,"
	" token TEXT NOT NULL UNIQUE,"
	" api TEXT NOT NULL,"
	" state INTEGER NOT NULL,"
	" request TEXT NOT NULL,"
	" result TEXT,"
	" callback_url TEXT,"
	" created_ms INTEGER NOT NULL,"
	" started_ms INTEGER NOT NULL DEFAULT 0,"
	" finished_ms INTEGER NOT NULL DEFAULT 0,"
	" attempts INTEGER NOT NULL DEFAULT 0);"
	"CREATE INDEX submissions_pending ON submissions (state, id) WHERE state < 2;"
	"CREATE INDEX submissions_finished ON submissions (finished_ms) WHERE state = 2;"
	"PRAGMA user_version = 1;";

static const char *const migrations[SCHEMA_VERSION] = {
	[1] = /* 2: each submission's owner (the API token that made it) */
	"ALTER TABLE submissions ADD COLUMN owner TEXT NOT NULL DEFAULT '';"
	"CREATE INDEX submissions_owner ON submissions (api, owner, id);"
	"PRAGMA user_version = 2;",
};

#define SUB_COLUMNS                                                                       \
	"id, token, api, state, request, result, callback_url, created_ms, started_ms," \
	" finished_ms, attempts, owner"

enum stmt {
	ST_USED, ST_ADD, ST_GET_ID, ST_GET_TOKEN, ST_START, ST_FINISH, ST_DELETE, ST_STATE,
	ST_PENDING, ST_REQUEUE, ST_EXPIRE, ST_OVERVIEW, ST_LIST, ST_LIST_OWNER, ST_COUNT,
	ST_COUNT_OWNER, ST_SIZE, ST_N
};

static const char *const stmt_sql[ST_N] = {
	/* bytes in use: the file's pages less the free ones */
	[ST_USED] = "SELECT (SELECT page_count FROM pragma_page_count()) -"
		    " (SELECT freelist_count FROM pragma_freelist_count()),"
		    " (SELECT page_size FROM pragma_page_size())",
	[ST_ADD] = "INSERT INTO submissions (token, api, state, request, result, callback_url,"
		   " created_ms, started_ms, finished_ms, owner)"
		   " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
	[ST_GET_ID] = "SELECT " SUB_COLUMNS " FROM submissions WHERE id = ?",
	[ST_GET_TOKEN] = "SELECT " SUB_COLUMNS " FROM submissions WHERE token = ?",
	[ST_START] = "UPDATE submissions SET state = 1, started_ms = ?, attempts = attempts + 1"
		     " WHERE id = ? AND state < 2 RETURNING attempts",
	[ST_FINISH] = "UPDATE submissions SET state = 2, result = ?, finished_ms = ?"
		      " WHERE id = ? AND state < 2",
	[ST_DELETE] = "DELETE FROM submissions WHERE token = ? AND state = 2",
	[ST_STATE] = "SELECT state FROM submissions WHERE token = ?",
	[ST_PENDING] = "SELECT id FROM submissions WHERE state < 2 ORDER BY id",
	[ST_REQUEUE] = "UPDATE submissions SET state = 0 WHERE state = 1",
	[ST_EXPIRE] = "DELETE FROM submissions WHERE id IN (SELECT id FROM submissions"
		      " WHERE state = 2 AND finished_ms < ? LIMIT ?)",
	[ST_OVERVIEW] = "SELECT count(*) FILTER (WHERE state = 0), count(*) FILTER (WHERE state = 1),"
			" min(created_ms) FILTER (WHERE state = 0) FROM submissions WHERE state < 2",
	/* newest first: ids grow with time, and the key walks backwards */
	[ST_LIST] = "SELECT " SUB_COLUMNS " FROM submissions WHERE api = ?"
		    " ORDER BY id DESC LIMIT ? OFFSET ?",
	[ST_LIST_OWNER] = "SELECT " SUB_COLUMNS " FROM submissions WHERE api = ? AND owner = ?"
			  " ORDER BY id DESC LIMIT ? OFFSET ?",
	[ST_COUNT] = "SELECT count(*) FROM submissions WHERE api = ?",
	[ST_COUNT_OWNER] = "SELECT count(*) FROM submissions WHERE api = ? AND owner = ?",
	/* the file's bytes, free pages too */
	[ST_SIZE] = "SELECT (SELECT page_count FROM pragma_page_count()),"
		    " (SELECT page_size FROM pragma_page_size())",
};

struct store_sqlite {
	struct store base;
	char *path;
	uint64_t max_bytes;    /* new submissions only: 0, none */
	sqlite3 *db;
	sqlite3_stmt *st[ST_N];
};

static struct store_sqlite *of(struct store *s)
{
	return (struct store_sqlite *)s;
}

static int errno_of(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_FULL:
		return -ENOSPC;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return -EAGAIN;
	case SQLITE_NOMEM:
		abort(); /* as every allocation in goboxd (util.h) */
	default:
		return -EIO;
	}
}

/* A statement ready for new bindings. */
static sqlite3_stmt *stmt(struct store_sqlite *q, enum stmt i)
{
	sqlite3_stmt *st = q->st[i];

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return st;
}

static void text_or_null(sqlite3_stmt *st, int col, const char *s)
{
	if (s)
		sqlite3_bind_text(st, col, s, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, col);
}

static char *column_dup(sqlite3_stmt *st, int col)
{
	const unsigned char *t = sqlite3_column_text(st, col);

	return t ? xstrdup((const char *)t) : NULL;
}

static void sq_close(struct store *s)
{
	struct store_sqlite *q = of(s);

	for (size_t i = 0; i < ST_N; i++)
		sqlite3_finalize(q->st[i]);
	sqlite3_close(q->db);
	free(q->path);
	free(q);
}

/* flock, which SQLite's own (POSIX record) locks never meet, on a
 * descriptor of its own: the claim outlives the connection. */
static int sq_claim(struct store *s, int *claim_fd, char *err, size_t errlen)
{
	struct store_sqlite *q = of(s);
	int fd;

	*claim_fd = -1;
	fd = open(q->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", q->path, strerror(errno));
		return -errno;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int e = errno;

		close(fd);
		snprintf(err, errlen, "%s: %s", q->path, e == EWOULDBLOCK ?
			 "another goboxd serves this store (a SQLite store is one daemon's)" :
			 strerror(e));
		return e == EWOULDBLOCK ? -EBUSY : -e;
	}
	*claim_fd = fd;
	return 0;
}

static int sq_add(struct store *s, const struct store_sub *sub, int64_t *id, char *err,
		  size_t errlen)
{
	struct store_sqlite *q = of(s);
	const char *result = sub->result;
	sqlite3_stmt *st;
	uint64_t now = wall_ms();
	int rc, code;

	/*
	 * The cap holds every new submission back, a waited-for one (added
	 * finished, its result with it) as an async one; never a result of
	 * one it took: what the store took must finish even when it is full.
	 */
	if (q->max_bytes) {
		st = stmt(q, ST_USED);
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW &&
		    (uint64_t)sqlite3_column_int64(st, 0) * (uint64_t)sqlite3_column_int64(st, 1) +
				    strlen(sub->request) + (result ? strlen(result) : 0) >
			    q->max_bytes) {
			sqlite3_reset(st);
			snprintf(err, errlen, "the submission store is full");
			return -ENOSPC;
		}
		sqlite3_reset(st);
	}
	/* the promise of a 201: synced before it is sent */
	if (!result && sqlite3_exec(q->db, "PRAGMA synchronous = FULL", NULL, NULL, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s", sqlite3_errmsg(q->db));
		return -EIO;
	}
	st = stmt(q, ST_ADD);
	sqlite3_bind_text(st, 1, sub->token, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, sub->api, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 3, result ? STORE_DONE : STORE_QUEUED);
	sqlite3_bind_text(st, 4, sub->request, -1, SQLITE_STATIC);
	text_or_null(st, 5, result);
	text_or_null(st, 6, sub->callback_url);
	sqlite3_bind_int64(st, 7, (sqlite3_int64)(result && sub->started_ms ? sub->started_ms : now));
	sqlite3_bind_int64(st, 8, (sqlite3_int64)(result ? sub->started_ms : 0));
	sqlite3_bind_int64(st, 9, (sqlite3_int64)(result ? now : 0));
	sqlite3_bind_text(st, 10, sub->owner, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc != SQLITE_DONE) {
		/* read before anything else runs on the connection: the next
		 * statement's success would leave "not an error" */
		code = sqlite3_extended_errcode(q->db);
		rc = errno_of(code);
		if (rc == -ENOSPC)
			snprintf(err, errlen, "the submission store's disk is full");
		else
			snprintf(err, errlen, "the submission store failed: %s", sqlite3_errmsg(q->db));
		sqlite3_reset(st);
		if (!result)
			sqlite3_exec(q->db, "PRAGMA synchronous = NORMAL", NULL, NULL, NULL);
		return rc;
	}
	sqlite3_reset(st);
	if (!result)
		sqlite3_exec(q->db, "PRAGMA synchronous = NORMAL", NULL, NULL, NULL);
	*id = sqlite3_last_insert_rowid(q->db);
	return 0;
}

/* A row of ST_GET_ID's columns into out. */
static void row_of(sqlite3_stmt *st, struct store_sub *out)
{
	out->id = sqlite3_column_int64(st, 0);
	snprintf(out->token, sizeof(out->token), "%s", (const char *)sqlite3_column_text(st, 1));
	snprintf(out->api, sizeof(out->api), "%s", (const char *)sqlite3_column_text(st, 2));
	out->state = (enum store_state)sqlite3_column_int(st, 3);
	out->request = column_dup(st, 4);
	out->result = column_dup(st, 5);
	out->callback_url = column_dup(st, 6);
	out->created_ms = (uint64_t)sqlite3_column_int64(st, 7);
	out->started_ms = (uint64_t)sqlite3_column_int64(st, 8);
	out->finished_ms = (uint64_t)sqlite3_column_int64(st, 9);
	out->attempts = (unsigned)sqlite3_column_int(st, 10);
	snprintf(out->owner, sizeof(out->owner), "%s",
		 sqlite3_column_text(st, 11) ? (const char *)sqlite3_column_text(st, 11) : "");
	if (!out->request)
		out->request = xstrdup("");
}

static int sq_get(struct store *s, int64_t id, const char *token, struct store_sub *out)
{
	struct store_sqlite *q = of(s);
	sqlite3_stmt *st = stmt(q, token ? ST_GET_TOKEN : ST_GET_ID);
	int rc;

	memset(out, 0, sizeof(*out));
	if (token)
		sqlite3_bind_text(st, 1, token, -1, SQLITE_STATIC);
	else
		sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE) {
		sqlite3_reset(st);
		return -ENOENT;
	}
	if (rc != SQLITE_ROW) {
		rc = errno_of(sqlite3_extended_errcode(q->db));
		sqlite3_reset(st);
		return rc;
	}
	row_of(st, out);
	sqlite3_reset(st);
	return 0;
}

static int sq_start(struct store *s, int64_t id, unsigned *attempts)
{
	struct store_sqlite *q = of(s);
	sqlite3_stmt *st = stmt(q, ST_START);
	int rc;

	sqlite3_bind_int64(st, 1, (sqlite3_int64)wall_ms());
	sqlite3_bind_int64(st, 2, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*attempts = (unsigned)sqlite3_column_int(st, 0);
		rc = sqlite3_step(st);
	} else if (rc == SQLITE_DONE) {
		sqlite3_reset(st);
		return -ENOENT;
	}
	rc = rc == SQLITE_DONE ? 0 : errno_of(sqlite3_extended_errcode(q->db));
	sqlite3_reset(st);
	return rc;
}

static int step_changes(struct store_sqlite *q, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	if (rc != SQLITE_DONE) {
		rc = errno_of(sqlite3_extended_errcode(q->db));
		sqlite3_reset(st);
		return rc;
	}
	sqlite3_reset(st);
	return sqlite3_changes(q->db);
}

static int sq_finish(struct store *s, int64_t id, const char *result)
{
	struct store_sqlite *q = of(s);
	sqlite3_stmt *st = stmt(q, ST_FINISH);
	int rc;

	sqlite3_bind_text(st, 1, result, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)wall_ms());
	sqlite3_bind_int64(st, 3, id);
	rc = step_changes(q, st);
	return rc < 0 ? rc : rc ? 0 : -ENOENT;
}

static int sq_remove(struct store *s, const char *token)
{
	struct store_sqlite *q = of(s);
	sqlite3_stmt *st = stmt(q, ST_DELETE);
	int rc;

	sqlite3_bind_text(st, 1, token, -1, SQLITE_STATIC);
	rc = step_changes(q, st);
	if (rc != 0)
		return rc < 0 ? rc : 0;
	/* nothing removed: gone, or not done yet */
	st = stmt(q, ST_STATE);
	sqlite3_bind_text(st, 1, token, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	return rc == SQLITE_ROW ? -EBUSY : -ENOENT;
}

static int sq_pending(struct store *s, bool requeue_running, int64_t **ids, size_t *n)
{
	struct store_sqlite *q = of(s);
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc;

	*ids = NULL;
	*n = 0;
	if (requeue_running) {
		rc = step_changes(q, stmt(q, ST_REQUEUE));
		if (rc < 0)
			return rc;
	}
	st = stmt(q, ST_PENDING);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			*ids = xreallocarray(*ids, cap, sizeof(**ids));
		}
		(*ids)[(*n)++] = sqlite3_column_int64(st, 0);
	}
	if (rc != SQLITE_DONE) {
		rc = errno_of(sqlite3_extended_errcode(q->db));
		sqlite3_reset(st);
		free(*ids);
		*ids = NULL;
		*n = 0;
		return rc;
	}
	sqlite3_reset(st);
	return 0;
}

static int sq_expire(struct store *s, uint64_t before_ms, size_t max, size_t *removed)
{
	struct store_sqlite *q = of(s);
	sqlite3_stmt *st = stmt(q, ST_EXPIRE);
	int rc;

	sqlite3_bind_int64(st, 1, (sqlite3_int64)before_ms);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)(max > INT64_MAX ? INT64_MAX : max));
	rc = step_changes(q, st);
	*removed = rc > 0 ? (size_t)rc : 0;
	return rc < 0 ? rc : 0;
}

/* One goboxd's store: no nodes but itself, so none listed. */
static int sq_overview(struct store *s, struct store_overview *out)
{
	struct store_sqlite *q = of(s);
	sqlite3_stmt *st = stmt(q, ST_OVERVIEW);
	int rc = sqlite3_step(st);

	if (rc != SQLITE_ROW) {
		rc = errno_of(sqlite3_extended_errcode(q->db));
		sqlite3_reset(st);
		return rc;
	}
	out->queued = (uint64_t)sqlite3_column_int64(st, 0);
	out->running = (uint64_t)sqlite3_column_int64(st, 1);
	if (sqlite3_column_type(st, 2) != SQLITE_NULL) {
		uint64_t oldest = (uint64_t)sqlite3_column_int64(st, 2), now = wall_ms();

		out->oldest_queued_age_ms = now > oldest ? now - oldest : 1;
	}
	sqlite3_reset(st);
	return 0;
}

static int sq_list(struct store *s, const char *api, const char *owner, uint64_t offset,
		   size_t limit, struct store_sub **out, size_t *n, uint64_t *total)
{
	struct store_sqlite *q = of(s);
	sqlite3_stmt *st = stmt(q, owner ? ST_COUNT_OWNER : ST_COUNT);
	int rc = SQLITE_DONE, col = 1;

	sqlite3_bind_text(st, 1, api, -1, SQLITE_STATIC);
	if (owner)
		sqlite3_bind_text(st, 2, owner, -1, SQLITE_STATIC);
	if (sqlite3_step(st) != SQLITE_ROW)
		goto fail;
	*total = (uint64_t)sqlite3_column_int64(st, 0);
	/* a statement left unreset holds its read transaction, and every
	 * later read of this connection would see the store as it was */
	sqlite3_reset(st);
	st = stmt(q, owner ? ST_LIST_OWNER : ST_LIST);
	sqlite3_bind_text(st, col++, api, -1, SQLITE_STATIC);
	if (owner)
		sqlite3_bind_text(st, col++, owner, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, col++, (sqlite3_int64)(limit > INT64_MAX ? INT64_MAX : limit));
	sqlite3_bind_int64(st, col, (sqlite3_int64)(offset > INT64_MAX ? INT64_MAX : offset));
	*out = xcalloc(limit ? limit : 1, sizeof(**out));
	while (*n < limit && (rc = sqlite3_step(st)) == SQLITE_ROW)
		row_of(st, &(*out)[(*n)++]);
	if (*n < limit && rc != SQLITE_DONE)
		goto fail;
	sqlite3_reset(st);
	return 0;
fail:
	rc = errno_of(sqlite3_extended_errcode(q->db));
	sqlite3_reset(st);
	store_subs_free(*out, *n);
	*out = NULL;
	*n = 0;
	return rc;
}

/* A key of a JSON text as SQLite's json_extract names it: letters,
 * digits and underscores only, so that the path needs no quoting. */
static bool plain_key(const char *key)
{
	if (!key || !*key || strlen(key) > 64)
		return false;
	for (const char *k = key; *k; k++)
		if (!(*k == '_' || (*k >= 'a' && *k <= 'z') || (*k >= 'A' && *k <= 'Z') ||
		      (*k >= '0' && *k <= '9')))
			return false;
	return true;
}

static int sq_count(struct store *s, const char *api, enum store_group by, const char *key,
		    uint64_t since_ms, struct store_count **out, size_t *n)
{
	/* ?1 the API, ?2 since when, ?3 the JSON path */
	static const char *const sql[] = {
		/* each in parentheses: one string of several pieces, not a
		 * missing comma (clang's -Wstring-concatenation) */
		[STORE_BY_REQUEST] = ("SELECT state, CASE WHEN json_valid(request) THEN"
				      " json_extract(request, ?3) END AS v, count(*) FROM submissions"
				      " WHERE api = ?1 AND created_ms >= ?2 GROUP BY state, v"),
		[STORE_BY_RESULT] = ("SELECT state, CASE WHEN json_valid(result) THEN"
				     " json_extract(result, ?3) END AS v, count(*) FROM submissions"
				     " WHERE api = ?1 AND created_ms >= ?2 GROUP BY state, v"),
		[STORE_BY_DAY] = ("SELECT state, created_ms / 86400000 AS v, count(*) FROM submissions"
				  " WHERE api = ?1 AND created_ms >= ?2 GROUP BY state, v"),
	};
	struct store_sqlite *q = of(s);
	sqlite3_stmt *st = NULL;
	char path[72];
	size_t cap = 0;
	int rc;

	if (by != STORE_BY_DAY && !plain_key(key))
		return -EINVAL;
	if (sqlite3_prepare_v2(q->db, sql[by], -1, &st, NULL) != SQLITE_OK)
		return errno_of(sqlite3_extended_errcode(q->db));
	sqlite3_bind_text(st, 1, api, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)(since_ms > INT64_MAX ? INT64_MAX : since_ms));
	if (by != STORE_BY_DAY) {
		snprintf(path, sizeof(path), "$.%s", key);
		sqlite3_bind_text(st, 3, path, -1, SQLITE_TRANSIENT);
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_count *c;

		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			*out = xreallocarray(*out, cap, sizeof(**out));
		}
		c = &(*out)[(*n)++];
		c->state = (enum store_state)sqlite3_column_int(st, 0);
		c->has_value = sqlite3_column_type(st, 1) == SQLITE_INTEGER;
		c->value = c->has_value ? sqlite3_column_int64(st, 1) : 0;
		c->count = (uint64_t)sqlite3_column_int64(st, 2);
	}
	if (rc != SQLITE_DONE) {
		rc = errno_of(sqlite3_extended_errcode(q->db));
		sqlite3_finalize(st);
		free(*out);
		*out = NULL;
		*n = 0;
		return rc;
	}
	sqlite3_finalize(st);
	return 0;
}

static int sq_size(struct store *s, uint64_t *bytes)
{
	struct store_sqlite *q = of(s);
	sqlite3_stmt *st = stmt(q, ST_SIZE);
	int rc = sqlite3_step(st);

	if (rc != SQLITE_ROW) {
		rc = errno_of(sqlite3_extended_errcode(q->db));
		sqlite3_reset(st);
		return rc;
	}
	*bytes = (uint64_t)sqlite3_column_int64(st, 0) * (uint64_t)sqlite3_column_int64(st, 1);
	sqlite3_reset(st);
	return 0;
}

static const struct store_ops sqlite_ops = {
	.close = sq_close, .claim = sq_claim, .add = sq_add, .get = sq_get, .start = sq_start,
	.finish = sq_finish, .remove = sq_remove, .pending = sq_pending,
	.expire = sq_expire, .overview = sq_overview, .list = sq_list, .count = sq_count,
	.size = sq_size,
};

static int exec(sqlite3 *db, const char *sql, const char *path, char *err, size_t errlen)
{
	char *msg = NULL;
	int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);

	if (rc != SQLITE_OK) {
		snprintf(err, errlen, "%s: %s", path, msg ? msg : sqlite3_errstr(rc));
		sqlite3_free(msg);
		return errno_of(rc);
	}
	return 0;
}

/* The schema, made on a new file, an older one's brought to ours; a newer
 * one than ours is refused. */
static int ensure_schema(sqlite3 *db, const char *path, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	int version, rc;

	rc = exec(db, "BEGIN IMMEDIATE", path, err, errlen);
	if (rc < 0)
		return rc;
	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW) {
		snprintf(err, errlen, "%s: %s", path, sqlite3_errmsg(db));
		sqlite3_finalize(st);
		exec(db, "ROLLBACK", path, err, 0);
		return -EIO;
	}
	version = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (version > SCHEMA_VERSION) {
		snprintf(err, errlen,
			 "%s: its schema is version %d, newer than this goboxd's (%d): run a newer "
			 "goboxd, or name another store", path, version, SCHEMA_VERSION);
		exec(db, "ROLLBACK", path, err, 0);
		return -EPROTO;
	}
	for (int v = version; v < SCHEMA_VERSION; v++) {
		rc = exec(db, v == 0 ? schema : migrations[v], path, err, errlen);
		if (rc < 0) {
			exec(db, "ROLLBACK", path, err, 0);
			return rc;
		}
	}
	return exec(db, "COMMIT", path, err, errlen);
}

/* mkdir -p: each missing level of path (writable, NUL-terminated) with mode. */
static int make_dirs(char *path, mode_t mode)
{
	for (char *p = path + 1;; p++) {
		char c = *p;

		if (c != '/' && c != '\0')
			continue;
		*p = '\0';
		if (mkdir(path, mode) < 0 && errno != EEXIST) {
			int e = errno;

			*p = c;
			return -e;
		}
		*p = c;
		if (!c)
			return 0;
	}
}

/* A store directory an older goboxd made 0700 hid the default jail dir
 * beneath it from the sandbox uids: made searchable (0711), if ours. */
static int unhide_dir(const char *dir)
{
	struct stat st;

	if (stat(dir, &st) < 0)
		return -errno;
	if (st.st_uid == geteuid() && (st.st_mode & 07777) == 0700 && chmod(dir, 0711) < 0)
		return -errno;
	return 0;
}

int store_sqlite_unhide_dir(const char *path)
{
	char *dir = xstrdup(path);
	char *slash = strrchr(dir, '/');
	int rc = 0;

	if (slash && slash != dir) {
		*slash = '\0';
		rc = unhide_dir(dir);
		if (rc == -ENOENT)
			rc = 0;
	}
	free(dir);
	return rc;
}

/*
 * A store file is goboxd's own: one another user made (in advance, where
 * goboxd would make it) or one anyone else may write could hold what its
 * maker wants, and hand clients' code over. Readable by others (a file of
 * an older goboxd) is mended by the caller; these are refused.
 */
static int check_owner(int fd, const char *path, char *err, size_t errlen)
{
	struct stat st;

	if (fstat(fd, &st) < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -errno;
	}
	if (st.st_uid != geteuid()) {
		snprintf(err, errlen, "%s is owned by uid %u, not by goboxd's (%u): remove it, or "
			 "give it to goboxd's user", path, (unsigned)st.st_uid, (unsigned)geteuid());
		return -EPERM;
	}
	if (st.st_mode & 0022) {
		snprintf(err, errlen, "%s may be written by others (mode %04o): anyone could have "
			 "changed what it holds; check it, then chmod 600 it", path,
			 (unsigned)(st.st_mode & 07777));
		return -EPERM;
	}
	return 0;
}

int store_sqlite_open(const char *path, uint64_t max_bytes, struct store **out, char *err,
		      size_t errlen)
{
	struct store_sqlite *q = xcalloc(1, sizeof(*q));
	char *dir = xstrdup(path);
	int fd;
	char *slash = strrchr(dir, '/');
	int rc;

	/* its directory, made where missing (a user's ~/.local/state may not
	 * be there yet); the file is its owner's alone, so the directory
	 * need not be: 0711 leaves it searchable, so that a jail dir beside
	 * or under it (/var/lib/goboxd/jails) stays reachable, and unlistable */
	if (slash && slash != dir) {
		*slash = '\0';
		rc = make_dirs(dir, 0711);
		if (rc == 0)
			rc = unhide_dir(dir);
		if (rc < 0) {
			snprintf(err, errlen, "%s: %s", dir, strerror(-rc));
			free(dir);
			free(q);
			return rc;
		}
	}
	free(dir);
	q->base.ops = &sqlite_ops;
	q->path = xstrdup(path);
	/* the store holds clients' code: its owner's alone (SQLite gives
	 * its -wal and -shm files the database's mode) */
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		rc = -errno;
		goto fail;
	}
	rc = check_owner(fd, path, err, errlen);
	/* one made before this rule (or by hand) is made private too */
	if (rc == 0 && fchmod(fd, 0600) < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		rc = -errno;
	}
	close(fd);
	if (rc < 0)
		goto fail;
	rc = sqlite3_open_v2(path, &q->db,
			     SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		snprintf(err, errlen, "%s: %s", path,
			 q->db ? sqlite3_errmsg(q->db) : sqlite3_errstr(rc));
		goto fail;
	}
	sqlite3_busy_timeout(q->db, 5000);
	rc = exec(q->db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;", path, err,
		  errlen);
	if (rc < 0)
		goto fail;
	rc = ensure_schema(q->db, path, err, errlen);
	if (rc < 0)
		goto fail;
	q->max_bytes = max_bytes;
	for (size_t i = 0; i < ST_N; i++) {
		if (sqlite3_prepare_v3(q->db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &q->st[i],
				       NULL) != SQLITE_OK) {
			snprintf(err, errlen, "%s: %s", path, sqlite3_errmsg(q->db));
			rc = -EIO;
			goto fail;
		}
	}
	*out = &q->base;
	return 0;
fail:
	sq_close(&q->base);
	return rc < 0 ? rc : -EIO;
}
