/* A growable byte buffer with an optional hard cap. */
#ifndef GOBOXD_BUF_H
#define GOBOXD_BUF_H

#include <stdbool.h>
#include <stddef.h>

struct buf {
	char *data;     /* always NUL-terminated when non-NULL */
	size_t len;
	size_t cap;     /* allocated bytes */
	size_t limit;   /* 0: unlimited; else appends beyond it are dropped */
	bool truncated; /* set when an append was cut by limit */
};

void buf_init(struct buf *b, size_t limit);
void buf_free(struct buf *b);
void buf_reset(struct buf *b);
/* 0, or -EOVERFLOW when the size would not fit a size_t. Bytes beyond
 * b->limit are dropped and b->truncated set. */
int buf_append(struct buf *b, const void *data, size_t len);
int buf_puts(struct buf *b, const char *s);
int buf_printf(struct buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Keep the first n bytes; the memory past them goes back. */
void buf_truncate(struct buf *b, size_t n);
/* Remove the first n bytes. */
void buf_consume(struct buf *b, size_t n);
/* Hand the data over to the caller (who frees it); the buffer is empty. */
char *buf_steal(struct buf *b, size_t *len);

#endif
