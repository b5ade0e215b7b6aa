#include "autoconf.h"

#include "worker/http/json_body.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base64.h"
#include "common/util.h"

static long hex4(const char *p, const char *end)
{
	long v = 0;

	if (end - p < 4)
		return -1;
	for (int i = 0; i < 4; i++) {
		int h = hex_digit_value(p[i]);

		if (h < 0)
			return -1;
		v = v << 4 | h;
	}
	return v;
}

#define MARKER_TOP 0x10FFFDL
#define MARKER_CANDIDATES 16

/*
 * Walk the strings of a JSON text: note "\u0000" escapes and which marker
 * candidates appear escaped (surrogate pairs). Malformed text is left for
 * cJSON to refuse.
 */
static bool scan_escapes(const char *s, size_t len, unsigned *used)
{
	const char *p = s, *end = s + len;
	bool in_str = false, has_nul = false;

	while (p < end) {
		long cp, lo;

		if (!in_str) {
			in_str = *p++ == '"';
			continue;
		}
		if (*p == '"') {
			in_str = false;
			p++;
			continue;
		}
		if (*p != '\\' || p + 1 >= end) {
			p++;
			continue;
		}
		if (p[1] != 'u') {
			p += 2;
			continue;
		}
		cp = hex4(p + 2, end);
		p += 2;
		if (cp < 0)
			continue;
		p += 4;
		if (cp == 0)
			has_nul = true;
		if (cp >= 0xD800 && cp < 0xDC00 && end - p >= 6 && p[0] == '\\' && p[1] == 'u' &&
		    (lo = hex4(p + 2, end)) >= 0xDC00 && lo < 0xE000) {
			cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
			p += 6;
			if (cp > MARKER_TOP - MARKER_CANDIDATES && cp <= MARKER_TOP)
				*used |= 1u << (MARKER_TOP - cp);
		}
	}
	return has_nul;
}

static void marker_encode(struct json_body_marker *m, long cp)
{
	long v = cp - 0x10000;

	m->utf8[0] = (char)(0xF0 | (cp >> 18));
	m->utf8[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
	m->utf8[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
	m->utf8[3] = (char)(0x80 | (cp & 0x3F));
	snprintf(m->escape, sizeof(m->escape), "\\u%04lX\\u%04lX", 0xD800 + (v >> 10),
		 0xDC00 + (v & 0x3FF));
	m->active = true;
}

/* cJSON ignores what follows the value; a body is one value and nothing else. */
static cJSON *json_parse_all(const char *s, size_t len)
{
	const char *end = NULL;
	cJSON *root = cJSON_ParseWithLengthOpts(s, len, &end, false);

	if (!root)
		return NULL;
	while (end < s + len && (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r'))
		end++;
	if (end != s + len) {
		cJSON_Delete(root);
		return NULL;
	}
	return root;
}

/*
 * Most bodies have no "\u0000" and are parsed as they are; the others are
 * copied with each such escape turned into the marker's, which a string
 * of the body must not already hold (escaped or not).
 */
cJSON *json_body_parse(const char *body, size_t len, struct json_body_marker *m)
{
	unsigned used = 0;
	const char *p, *end = body + len;
	char *copy, *o;
	bool in_str = false;
	cJSON *root;
	long cp = -1;

	memset(m, 0, sizeof(*m));
	if (!scan_escapes(body, len, &used))
		return json_parse_all(body, len);
	for (int k = 0; k < MARKER_CANDIDATES && cp < 0; k++) {
		struct json_body_marker t;

		if (used & (1u << k))
			continue;
		marker_encode(&t, MARKER_TOP - k);
		if (!memmem(body, len, t.utf8, 4))
			cp = MARKER_TOP - k;
	}
	if (cp < 0)
		return NULL;
	marker_encode(m, cp);
	o = copy = xcalloc(len * 2 + 1, 1);
	for (p = body; p < end;) {
		if (in_str && *p == '\\' && end - p >= 6 && memcmp(p, "\\u0000", 6) == 0) {
			memcpy(o, m->escape, 12);
			o += 12;
			p += 6;
			continue;
		}
		if (in_str && *p == '\\' && p + 1 < end) {
			*o++ = *p++;
			*o++ = *p++;
			continue;
		}
		if (*p == '"')
			in_str = !in_str;
		*o++ = *p++;
	}
	root = json_parse_all(copy, (size_t)(o - copy));
	free(copy);
	return root;
}

char *json_body_bytes(const cJSON *item, const struct json_body_marker *m, size_t *len)
{
	const char *s = item->valuestring;
	size_t n = strlen(s), o = 0;
	char *out = xcalloc(n + 1, 1);

	for (size_t i = 0; i < n;) {
		if (m->active && n - i >= 4 && memcmp(s + i, m->utf8, 4) == 0) {
			out[o++] = '\0';
			i += 4;
		} else {
			out[o++] = s[i++];
		}
	}
	out[o] = '\0';
	*len = o;
	return out;
}

int json_body_file_content(const cJSON *v, const struct json_body_marker *m, bool base64,
			   char **data, size_t *len)
{
	size_t rlen;
	char *raw = json_body_bytes(v, m, &rlen);
	int rc;

	if (!base64) {
		*data = raw;
		*len = rlen;
		return 0;
	}
	rc = base64_decode(raw, rlen, data, len);
	free(raw);
	return rc;
}

bool json_body_over_cap(size_t n, size_t cap)
{
	return cap != 0 && n > cap;
}
