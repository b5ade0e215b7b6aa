/*
 * A program's output as it goes into a response, and what it costs there.
 *
 * /run answers with the output as JSON strings: valid UTF-8 kept, every
 * other byte (and NUL) replaced by U+FFFD, control characters escaped.
 * /v1/run answers with it in base64, each byte twice (its own stream, and
 * "output", both streams in write order). A job's output budget is counted
 * in those response bytes, so that a job's answer is bounded however its
 * output is made up: a byte 0x01 costs 6 (\u0001), not 1.
 */
#ifndef GOBOXD_OUTTEXT_H
#define GOBOXD_OUTTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Valid UTF-8 of s, NUL-terminated, for a JSON string (malloc'd). */
char *outtext_utf8(const char *s, size_t n);

enum outtext_format {
	OUTTEXT_JSON,       /* /run: outtext_utf8, then JSON escapes */
	OUTTEXT_BASE64_TWICE, /* /v1/run */
};

/* What is left of one job's budget. */
struct outtext_budget {
	enum outtext_format format;
	uint64_t left;      /* in thirds of a response byte (base64 is 4/3) */
};

/*
 * One stream's position: a UTF-8 sequence may be cut between two reads,
 * and its bytes' cost is known only once it ends. Zero-initialised.
 */
struct outtext_stream {
	unsigned char seq[4];
	uint8_t have, need;
};

void outtext_budget_init(struct outtext_budget *b, enum outtext_format f, uint64_t bytes);
/* Response bytes left (rounded down). */
uint64_t outtext_budget_left(const struct outtext_budget *b);
/*
 * The longest prefix of data (read after what st has seen) whose cost is
 * still in the budget; that prefix is charged. The cost is exact, but for
 * the bytes of an unfinished UTF-8 sequence: charged as if it will not be
 * valid (3 each) until it is.
 */
size_t outtext_take(struct outtext_budget *b, struct outtext_stream *st, const char *data,
		    size_t n);

#endif
