#include "autoconf.h"

#include "common/buf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

void buf_init(struct buf *b, size_t limit)
{
	memset(b, 0, sizeof(*b));
	b->limit = limit;
}

void buf_free(struct buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
	b->truncated = false;
}

void buf_reset(struct buf *b)
{
	b->len = 0;
	b->truncated = false;
	if (b->data)
		b->data[0] = '\0';
}

static int buf_reserve(struct buf *b, size_t extra)
{
	size_t need = b->len + extra + 1;
	size_t cap = b->cap ? b->cap : 256;
	char *p;

	if (need <= b->cap)
		return 0;
	while (cap < need) {
		if (cap > SIZE_MAX / 2)
			return -EOVERFLOW;
		cap *= 2;
	}
	p = xreallocarray(b->data, cap, 1);
	b->data = p;
	b->cap = cap;
	return 0;
}

int buf_append(struct buf *b, const void *data, size_t len)
{
	if (b->limit && b->len + len > b->limit) {
		len = b->limit > b->len ? b->limit - b->len : 0;
		b->truncated = true;
	}
	int rc = buf_reserve(b, len);

	if (rc < 0)
		return rc;
	if (len)
		memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
	return 0;
}

int buf_puts(struct buf *b, const char *s)
{
	return buf_append(b, s, strlen(s));
}

int buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	char small[256];
	int n;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	if ((size_t)n < sizeof(small))
		return buf_append(b, small, (size_t)n);
	{
		char *big = xmalloc((size_t)n + 1);
		int rc;

		va_start(ap, fmt);
		vsnprintf(big, (size_t)n + 1, fmt, ap);
		va_end(ap);
		rc = buf_append(b, big, (size_t)n);
		free(big);
		return rc;
	}
}

void buf_truncate(struct buf *b, size_t n)
{
	char *p;

	if (n >= b->len)
		return;
	b->len = n;
	b->data[n] = '\0';
	p = xreallocarray(b->data, n + 1, 1);
	b->data = p;
	b->cap = n + 1;
}

void buf_consume(struct buf *b, size_t n)
{
	if (n >= b->len) {
		buf_reset(b);
		return;
	}
	memmove(b->data, b->data + n, b->len - n);
	b->len -= n;
	b->data[b->len] = '\0';
}

char *buf_steal(struct buf *b, size_t *len)
{
	char *p = b->data;

	if (len)
		*len = b->len;
	if (!p)
		p = xcalloc(1, 1);
	b->data = NULL;
	b->len = b->cap = 0;
	b->truncated = false;
	return p;
}
