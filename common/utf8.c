#include "autoconf.h"

#include "common/utf8.h"

unsigned utf8_lead_len(unsigned char c)
{
	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		return 2;
	if (c >= 0xE0 && c <= 0xEF)
		return 3;
	if (c >= 0xF0 && c <= 0xF4)
		return 4;
	return 0;
}

/*
 * The code point is assembled first and checked after, by the range each
 * length may encode: one rule for the overlong forms (too small for their
 * length), the surrogates and the top, instead of a second-byte table.
 */
size_t utf8_decode(const char *str, size_t n, uint32_t *cp)
{
	static const uint32_t min[5] = { 0, 0, 0x80, 0x800, 0x10000 };
	const unsigned char *s = (const unsigned char *)str;
	unsigned len;
	uint32_t v;

	if (n == 0)
		return 0;
	len = utf8_lead_len(s[0]);
	if (len == 0 || len > n)
		return 0;
	v = len == 1 ? s[0] : s[0] & (0xFFu >> (len + 1));
	for (unsigned k = 1; k < len; k++) {
		if ((s[k] & 0xC0) != 0x80)
			return 0;
		v = v << 6 | (s[k] & 0x3F);
	}
	if (v < min[len] || (v >= 0xD800 && v <= 0xDFFF) || v > 0x10FFFF)
		return 0;
	if (cp)
		*cp = v;
	return len;
}

bool utf8_valid(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		size_t len;

		/* ASCII, most of any source, without the call */
		if ((unsigned char)s[i] < 0x80) {
			i++;
			continue;
		}
		len = utf8_decode(s + i, n - i, NULL);
		if (len == 0)
			return false;
		i += len;
	}
	return true;
}
