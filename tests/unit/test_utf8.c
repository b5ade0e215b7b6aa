#include "autoconf.h"

#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "common/utf8.h"

TestSuite(utf8);

struct decode_case {
	const char *name;
	const char *bytes;
	size_t n;       /* bytes the decoder may read */
	size_t len;     /* what it returns: 0 for no well-formed sequence */
	uint32_t cp;
};

#define OK(name, lit, cp) { name, lit, sizeof(lit) - 1, sizeof(lit) - 1, cp }
#define BAD(name, lit) { name, lit, sizeof(lit) - 1, 0, 0 }
/* only the first n bytes of lit are there */
#define CUT(name, lit, n) { name, lit, n, 0, 0 }

static const struct decode_case decode_cases[] = {
	OK("ASCII", "A", 'A'),
	OK("NUL", "\0", 0),
	OK("DEL", "\x7f", 0x7F),
	OK("smallest two-byte", "\xc2\x80", 0x80),
	OK("e acute", "\xc3\xa9", 0xE9),
	OK("largest two-byte", "\xdf\xbf", 0x7FF),
	OK("smallest three-byte", "\xe0\xa0\x80", 0x800),
	OK("euro sign", "\xe2\x82\xac", 0x20AC),
	OK("last before the surrogates", "\xed\x9f\xbf", 0xD7FF),
	OK("first after the surrogates", "\xee\x80\x80", 0xE000),
	OK("U+FFFD", "\xef\xbf\xbd", 0xFFFD),
	OK("largest three-byte", "\xef\xbf\xbf", 0xFFFF),
	OK("smallest four-byte", "\xf0\x90\x80\x80", 0x10000),
	OK("emoji", "\xf0\x9f\x98\x80", 0x1F600),
	OK("U+10FFFF, the last code point", "\xf4\x8f\xbf\xbf", 0x10FFFF),

	BAD("overlong NUL", "\xc0\x80"),
	BAD("overlong '/'", "\xc0\xaf"),
	BAD("overlong C1", "\xc1\xbf"),
	BAD("overlong three-byte", "\xe0\x80\xaf"),
	BAD("largest overlong three-byte", "\xe0\x9f\xbf"),
	BAD("overlong four-byte", "\xf0\x80\x80\xaf"),
	BAD("largest overlong four-byte", "\xf0\x8f\xbf\xbf"),
	BAD("first surrogate", "\xed\xa0\x80"),
	BAD("last high surrogate", "\xed\xaf\xbf"),
	BAD("first low surrogate", "\xed\xb0\x80"),
	BAD("last surrogate", "\xed\xbf\xbf"),
	BAD("U+110000, past the last", "\xf4\x90\x80\x80"),
	BAD("F5 lead", "\xf5\x80\x80\x80"),
	BAD("F7 lead, U+1FFFFF", "\xf7\xbf\xbf\xbf"),
	BAD("five-byte lead", "\xf8\x88\x80\x80\x80"),
	BAD("FE", "\xfe"),
	BAD("FF", "\xff"),
	BAD("lone continuation byte", "\x80"),
	BAD("last continuation byte", "\xbf"),
	BAD("lead then ASCII", "\xc3" "A"),
	BAD("three-byte lead, ASCII second", "\xe2(\xa1"),
	BAD("three-byte lead, ASCII third", "\xe2\x82("),
	BAD("four-byte lead, lead fourth", "\xf0\x9f\x98\xf0"),
	BAD("two leads", "\xc3\xc3\xa9"),

	CUT("two-byte cut after the lead", "\xc3\xa9", 1),
	CUT("three-byte cut after two", "\xe2\x82\xac", 2),
	CUT("four-byte cut after three", "\xf0\x9f\x98\x80", 3),
	CUT("four-byte cut after the lead", "\xf0\x9f\x98\x80", 1),
	CUT("nothing at all", "A", 0),
};

Test(utf8, decode_table)
{
	for (size_t i = 0; i < sizeof(decode_cases) / sizeof(decode_cases[0]); i++) {
		const struct decode_case *c = &decode_cases[i];
		uint32_t cp = 0xDEAD;
		size_t len = utf8_decode(c->bytes, c->n, &cp);

		cr_expect_eq(len, c->len, "%s: length %zu, wanted %zu", c->name, len, c->len);
		if (c->len)
			cr_expect_eq(cp, c->cp, "%s: U+%04X, wanted U+%04X", c->name, cp, c->cp);
		else
			cr_expect_eq(cp, 0xDEAD, "%s: *cp written on failure", c->name);
		cr_expect_eq(utf8_decode(c->bytes, c->n, NULL), c->len, "%s, without cp", c->name);
	}
}

/* A sequence decodes to the code point, then stops: what follows is not read. */
Test(utf8, decode_reads_one_sequence)
{
	uint32_t cp;

	cr_assert_eq(utf8_decode("\xc3\xa9\xff", 3, &cp), 2);
	cr_assert_eq(cp, 0xE9);
	cr_assert_eq(utf8_decode("ab", 2, &cp), 1);
	cr_assert_eq(cp, 'a');
}

Test(utf8, valid_strings)
{
	for (size_t i = 0; i < sizeof(decode_cases) / sizeof(decode_cases[0]); i++) {
		const struct decode_case *c = &decode_cases[i];
		char buf[16];

		/* each case alone, and after and before ASCII */
		cr_expect_eq(utf8_valid(c->bytes, c->n), c->len == c->n, "%s", c->name);
		buf[0] = 'x';
		memcpy(buf + 1, c->bytes, c->n);
		buf[1 + c->n] = 'y';
		cr_expect_eq(utf8_valid(buf, c->n + 2), c->len == c->n, "%s in x...y", c->name);
	}
	cr_assert(utf8_valid("", 0));
	cr_assert(utf8_valid("a\0b", 3), "NUL is valid UTF-8");
	cr_assert_not(utf8_valid("ok \xe2\x82", 5), "cut short at the end");
}

/* The shortest UTF-8 of cp, the way RFC 3629 section 3 writes it. */
static size_t encode(uint32_t cp, unsigned char *out)
{
	if (cp < 0x80) {
		out[0] = (unsigned char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (unsigned char)(0xC0 | cp >> 6);
		out[1] = (unsigned char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (unsigned char)(0xE0 | cp >> 12);
		out[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
		out[2] = (unsigned char)(0x80 | (cp & 0x3F));
		return 3;
	}
	out[0] = (unsigned char)(0xF0 | cp >> 18);
	out[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
	out[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
	out[3] = (unsigned char)(0x80 | (cp & 0x3F));
	return 4;
}

static bool scalar(uint32_t cp)
{
	return cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
}

/*
 * Every byte string of one to three bytes, and every four-byte string
 * with a lead from F0 to F7 and continuation bytes: the decoder takes
 * exactly the shortest encodings of Unicode scalar values, and gives
 * their code points.
 */
Test(utf8, decode_accepts_exactly_the_shortest_encodings)
{
	unsigned char b[4], enc[4];

	for (uint32_t x = 0; x < 1u << 24; x++) {
		size_t n = x < 1u << 8 ? 1 : x < 1u << 16 ? 2 : 3;
		uint32_t cp = 0;
		size_t len;
		bool want;

		for (size_t k = 0; k < n; k++)
			b[k] = (unsigned char)(x >> (8 * (n - 1 - k)));
		len = utf8_decode((const char *)b, n, &cp);
		if (len == 0)
			continue;
		want = scalar(cp) && encode(cp, enc) == len && memcmp(enc, b, len) == 0;
		cr_assert(want, "%zu bytes %02X %02X %02X: accepted as U+%04X", n, b[0],
			  n > 1 ? b[1] : 0, n > 2 ? b[2] : 0, cp);
	}
	for (uint32_t x = 0; x < 8u << 18; x++) {
		uint32_t cp = 0;
		size_t len;

		b[0] = (unsigned char)(0xF0 | x >> 18);
		b[1] = (unsigned char)(0x80 | ((x >> 12) & 0x3F));
		b[2] = (unsigned char)(0x80 | ((x >> 6) & 0x3F));
		b[3] = (unsigned char)(0x80 | (x & 0x3F));
		len = utf8_decode((const char *)b, 4, &cp);
		if (x <= 0x10FFFF && x >= 0x10000)
			cr_assert(len == 4 && cp == x, "U+%X: length %zu", x, len);
		else
			cr_assert_eq(len, 0, "%02X %02X %02X %02X accepted", b[0], b[1], b[2], b[3]);
	}
	for (uint32_t cp = 0; cp <= 0x10FFFF; cp++) {
		uint32_t got = 0;
		size_t n;

		if (!scalar(cp))
			continue;
		n = encode(cp, enc);
		cr_assert_eq(utf8_decode((const char *)enc, n, &got), n, "U+%04X refused", cp);
		cr_assert_eq(got, cp);
	}
}

/* How long a lead byte says its sequence is, for a reader that gets the
 * bytes one read at a time (outtext.c). */
Test(utf8, lead_len)
{
	for (unsigned c = 0; c < 256; c++) {
		unsigned want = c < 0x80 ? 1 : c < 0xC2 ? 0 : c < 0xE0 ? 2 : c < 0xF0 ? 3 :
			c < 0xF5 ? 4 : 0;

		cr_expect_eq(utf8_lead_len((unsigned char)c), want, "byte %02X", c);
	}
}
