#include "autoconf.h"

#include "common/outtext.h"

#include <string.h>

#include "common/utf8.h"
#include "common/util.h"

/*
 * Program output is bytes; JSON strings are UTF-8 without NULs. Invalid
 * sequences and NUL become U+FFFD, one per byte, so the response always
 * parses.
 */
char *outtext_utf8(const char *s, size_t n)
{
	char *out = xcalloc(n * 3 + 1, 1);
	size_t o = 0;

	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)s[i];
		/* NUL is valid UTF-8, but not in a JSON string cJSON prints */
		size_t len = c == 0 ? 0 : c < 0x80 ? 1 : utf8_decode(s + i, n - i, NULL);

		if (len) {
			memcpy(out + o, s + i, len);
			o += len;
			i += len;
			continue;
		}
		memcpy(out + o, "\xEF\xBF\xBD", 3);
		o += 3;
		i++;
	}
	out[o] = '\0';
	return out;
}

void outtext_budget_init(struct outtext_budget *b, enum outtext_format f, uint64_t bytes)
{
	b->format = f;
	b->left = bytes * 3;
}

uint64_t outtext_budget_left(const struct outtext_budget *b)
{
	return b->left / 3;
}

/*
 * A byte's cost in a JSON string once cleaned (outside a UTF-8 sequence),
 * as cJSON prints it: U+FFFD is 3 bytes, the short escapes 2, another
 * control character \u00XX 6. A byte that may start or continue a
 * sequence is charged 3, U+FFFD's, until the sequence is known valid.
 */
static unsigned json_cost(unsigned char c)
{
	if (c == 0 || c >= 0x80)
		return 3;
	if (c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' ||
	    c == '\t')
		return 2;
	return c < 0x20 ? 6 : 1;
}

/* Charge cost thirds if they are left. */
static bool charge(struct outtext_budget *b, uint64_t cost)
{
	if (b->left < cost)
		return false;
	b->left -= cost;
	return true;
}

static size_t take_json(struct outtext_budget *b, struct outtext_stream *st,
			const unsigned char *d, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char c = d[i];

		if (st->have && (c & 0xC0) == 0x80) {
			if (!charge(b, 9))
				break;
			st->seq[st->have++] = c;
			if (st->have == st->need) {
				/* Kept as it is: 1 byte each, not U+FFFD's 3. */
				if (utf8_decode((const char *)st->seq, st->need, NULL) == st->need)
					b->left += 6 * (uint64_t)st->need;
				st->have = 0;
			}
			continue;
		}
		/* A sequence cut short: each of its bytes was U+FFFD, as charged. */
		st->have = 0;
		if (!charge(b, 3 * (uint64_t)json_cost(c)))
			break;
		if (utf8_lead_len(c) > 1) {
			st->seq[0] = c;
			st->have = 1;
			st->need = (uint8_t)utf8_lead_len(c);
		}
	}
	return i;
}

size_t outtext_take(struct outtext_budget *b, struct outtext_stream *st, const char *data,
		    size_t n)
{
	uint64_t fit;

	if (b->format == OUTTEXT_JSON)
		return take_json(b, st, (const unsigned char *)data, n);
	/* base64: 4 bytes for 3, in the stream and again in "output" */
	fit = b->left / 8;
	if (fit > n)
		fit = n;
	b->left -= fit * 8;
	return (size_t)fit;
}
