#include "autoconf.h"

#include "common/store.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "common/util.h"

bool store_url_shared(const char *url)
{
	return url && (strncmp(url, "postgresql://", 13) == 0 || strncmp(url, "postgres://", 11) == 0);
}

int store_unhide_dir(const char *url)
{
	static const char sqlite[] = "sqlite:";

	if (!url || store_url_shared(url))
		return 0;
	if (strncmp(url, sqlite, sizeof(sqlite) - 1) == 0)
		url += sizeof(sqlite) - 1;
	else if (strstr(url, "://"))
		return 0;
	return *url ? store_sqlite_unhide_dir(url) : 0;
}

int store_open(const char *url, uint64_t max_bytes, struct store **out, char *err,
	       size_t errlen)
{
	static const char sqlite[] = "sqlite:";

	*out = NULL;
	if (!url || !*url) {
		snprintf(err, errlen, "no store named");
		return -EINVAL;
	}
	if (store_url_shared(url))
		return store_pg_open(url, out, err, errlen);
	if (strncmp(url, sqlite, sizeof(sqlite) - 1) == 0)
		url += sizeof(sqlite) - 1;
	else if (strstr(url, "://")) {
		snprintf(err, errlen,
			 "%s: no store backend for this URL (sqlite:PATH, a path, or postgresql://)",
			 url);
		return -EINVAL;
	}
	if (!*url) {
		snprintf(err, errlen, "sqlite: needs a file name");
		return -EINVAL;
	}
	return store_sqlite_open(url, max_bytes, out, err, errlen);
}

void store_close(struct store *s)
{
	if (s)
		s->ops->close(s);
}

int store_claim(struct store *s, char *err, size_t errlen)
{
	if (!s->ops->claim) {
		snprintf(err, errlen, "a shared store is not claimed");
		return -ENOTSUP;
	}
	return s->ops->claim(s, err, errlen);
}

/* RFC 9562 version 4: random but for the version and variant bits. */
static void new_token(char *out)
{
	unsigned char r[16];
	size_t got = 0;

	while (got < sizeof(r)) {
		ssize_t n = getrandom(r + got, sizeof(r) - got, 0);

		if (n < 0 && errno != EINTR)
			abort(); /* the kernel has had getrandom since 3.17 */
		if (n > 0)
			got += (size_t)n;
	}
	r[6] = (unsigned char)((r[6] & 0x0f) | 0x40);
	r[8] = (unsigned char)((r[8] & 0x3f) | 0x80);
	snprintf(out, STORE_TOKEN_LEN + 1,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", r[0],
		 r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12], r[13],
		 r[14], r[15]);
}

int store_add(struct store *s, const char *api, const char *request, const char *callback_url,
	      char *token, int64_t *id, char *err, size_t errlen)
{
	new_token(token);
	return s->ops->add(s, api, request, NULL, callback_url, token, 0, id, err, errlen);
}

int store_add_done(struct store *s, const char *api, const char *request, const char *result,
		   uint64_t started_ms, char *token, char *err, size_t errlen)
{
	int64_t id;

	new_token(token);
	return s->ops->add(s, api, request, result, NULL, token, started_ms, &id, err, errlen);
}

int store_get(struct store *s, int64_t id, struct store_sub *out)
{
	return s->ops->get(s, id, NULL, out);
}

int store_find(struct store *s, const char *token, struct store_sub *out)
{
	return s->ops->get(s, 0, token, out);
}

void store_sub_free(struct store_sub *sub)
{
	free(sub->request);
	free(sub->result);
	free(sub->callback_url);
	memset(sub, 0, sizeof(*sub));
}

int store_start(struct store *s, int64_t id, unsigned *attempts)
{
	return s->ops->start ? s->ops->start(s, id, attempts) : -ENOTSUP;
}

int store_finish(struct store *s, int64_t id, const char *result)
{
	return s->ops->finish(s, id, result);
}

int store_delete(struct store *s, const char *token)
{
	return s->ops->remove(s, token);
}

int store_pending(struct store *s, bool requeue_running, int64_t **ids, size_t *n)
{
	*ids = NULL;
	*n = 0;
	return s->ops->pending ? s->ops->pending(s, requeue_running, ids, n) : -ENOTSUP;
}

int store_expire(struct store *s, uint64_t before_ms, size_t max, size_t *removed)
{
	return s->ops->expire(s, before_ms, max, removed);
}

int store_overview(struct store *s, struct store_overview *out)
{
	memset(out, 0, sizeof(*out));
	return s->ops->overview(s, out);
}

int store_list(struct store *s, const char *api, uint64_t offset, size_t limit,
	       struct store_sub **out, size_t *n, uint64_t *total)
{
	*out = NULL;
	*n = 0;
	*total = 0;
	return s->ops->list(s, api, offset, limit, out, n, total);
}

int store_count(struct store *s, const char *api, enum store_group by, const char *key,
		uint64_t since_ms, struct store_count **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	return s->ops->count(s, api, by, key, since_ms, out, n);
}

int store_size(struct store *s, uint64_t *bytes)
{
	*bytes = 0;
	return s->ops->size(s, bytes);
}

void store_subs_free(struct store_sub *subs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		store_sub_free(&subs[i]);
	free(subs);
}

void store_set_node(struct store *s, const char *node)
{
	snprintf(s->node, sizeof(s->node), "%s", node);
}

int store_lease(struct store *s, uint32_t lease_ms, struct store_sub *out, char *key)
{
	if (!s->ops->lease)
		return -ENOTSUP;
	new_token(key);
	return s->ops->lease(s, lease_ms, key, out);
}

int store_renew(struct store *s, int64_t id, const char *key, uint32_t lease_ms)
{
	return s->ops->renew ? s->ops->renew(s, id, key, lease_ms) : -ENOTSUP;
}

int store_callback_done(struct store *s, int64_t id)
{
	/* a store that is not shared keeps no callback state */
	return s->ops->callback_done ? s->ops->callback_done(s, id) : 0;
}

int store_callbacks_due(struct store *s, uint32_t lease_ms, size_t max, struct store_sub **out,
			size_t *n)
{
	*out = NULL;
	*n = 0;
	return s->ops->callbacks_due ? s->ops->callbacks_due(s, lease_ms, max, out, n) : -ENOTSUP;
}

int store_beat(struct store *s, uint64_t started_ms, unsigned workers, unsigned running)
{
	return s->ops->beat ? s->ops->beat(s, started_ms, workers, running) : -ENOTSUP;
}

const char *store_error(const struct store *s)
{
	return s->error;
}
