#include "autoconf.h"

#include "common/store.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "common/util.h"

int store_open(const char *url, uint64_t max_bytes, struct store **out, char *err,
	       size_t errlen)
{
	static const char sqlite[] = "sqlite:";

	*out = NULL;
	if (!url || !*url) {
		snprintf(err, errlen, "no store named");
		return -EINVAL;
	}
	if (strncmp(url, sqlite, sizeof(sqlite) - 1) == 0)
		url += sizeof(sqlite) - 1;
	else if (strstr(url, "://")) {
		snprintf(err, errlen, "%s: no store backend for this URL (sqlite:PATH or a path)",
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
	return s->ops->start(s, id, attempts);
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
	return s->ops->pending(s, requeue_running, ids, n);
}

int store_expire(struct store *s, uint64_t before_ms, size_t max, size_t *removed)
{
	return s->ops->expire(s, before_ms, max, removed);
}
