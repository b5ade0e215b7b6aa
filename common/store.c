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

int store_claim(struct store *s, int *fd, char *err, size_t errlen)
{
	*fd = -1;
	if (!s->ops->claim) {
		snprintf(err, errlen, "a shared store is not claimed");
		return -ENOTSUP;
	}
	return s->ops->claim(s, fd, err, errlen);
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

/* A submission as the backends take it: sub's strings are borrowed. */
static void new_sub(struct store_sub *sub, const char *api, const char *owner, const char *request,
		    char *token)
{
	memset(sub, 0, sizeof(*sub));
	new_token(token);
	snprintf(sub->token, sizeof(sub->token), "%s", token);
	snprintf(sub->api, sizeof(sub->api), "%s", api);
	snprintf(sub->owner, sizeof(sub->owner), "%s", owner ? owner : "");
	sub->request = (char *)request;
}

int store_add(struct store *s, const char *api, const char *owner, const char *request,
	      const char *callback_url, char *token, int64_t *id, char *err, size_t errlen)
{
	struct store_sub sub;

	new_sub(&sub, api, owner, request, token);
	sub.callback_url = (char *)callback_url;
	return s->ops->add(s, &sub, id, err, errlen);
}

int store_add_done(struct store *s, const char *api, const char *owner, const char *request,
		   const char *result, uint64_t started_ms, char *token, char *err,
		   size_t errlen)
{
	struct store_sub sub;
	int64_t id;

	new_sub(&sub, api, owner, request, token);
	sub.result = (char *)result;
	sub.started_ms = started_ms;
	return s->ops->add(s, &sub, &id, err, errlen);
}

bool store_token_valid(const char *token)
{
	if (!token || strlen(token) != STORE_TOKEN_LEN)
		return false;
	for (size_t i = 0; i < STORE_TOKEN_LEN; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;
		char c = token[i];

		if (dash ? c != '-' : !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return false;
	}
	return true;
}

int store_get(struct store *s, int64_t id, struct store_sub *out)
{
	return s->ops->get(s, id, NULL, out);
}

int store_find(struct store *s, const char *token, struct store_sub *out)
{
	if (!store_token_valid(token)) {
		memset(out, 0, sizeof(*out));
		return -ENOENT;
	}
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
	if (!store_token_valid(token))
		return -ENOENT;
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

int store_list(struct store *s, const char *api, const char *owner, uint64_t offset,
	       size_t limit, struct store_sub **out, size_t *n, uint64_t *total)
{
	*out = NULL;
	*n = 0;
	*total = 0;
	return s->ops->list(s, api, owner, offset, limit, out, n, total);
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
