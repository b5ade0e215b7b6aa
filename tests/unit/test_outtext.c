#include "autoconf.h"

#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "common/base64.h"
#include "common/outtext.h"

TestSuite(outtext);

/* What the bytes cost in /run's answer, measured: the JSON string cJSON
 * prints for them, without its quotes. */
static size_t json_size(const char *s, size_t n)
{
	char *clean = outtext_utf8(s, n);
	cJSON *str = cJSON_CreateString(clean);
	char *printed = cJSON_PrintUnformatted(str);
	size_t len = strlen(printed) - 2;

	cJSON_free(printed);
	cJSON_Delete(str);
	free(clean);
	return len;
}

/* What outtext charges for them, given in pieces of at most step bytes. */
static uint64_t charged(const char *s, size_t n, size_t step)
{
	struct outtext_budget b;
	struct outtext_stream st = { 0 };

	outtext_budget_init(&b, OUTTEXT_JSON, 1ull << 40);
	for (size_t i = 0; i < n; i += step) {
		size_t k = n - i < step ? n - i : step;

		cr_assert_eq(outtext_take(&b, &st, s + i, k), k);
	}
	return (1ull << 40) - outtext_budget_left(&b);
}

struct cost_case {
	const char *name;
	const char *data;
	size_t len;
	size_t cost;
};

#define C(name, lit, cost) { name, lit, sizeof(lit) - 1, cost }

static const struct cost_case cost_cases[] = {
	C("printable", "hello", 5),
	C("0x01 is \\u0001", "\x01", 6),
	C("short escapes", "\"\\\b\f\n\r\t", 14),
	C("NUL becomes U+FFFD", "a\0b", 5),
	C("DEL is printed as it is", "\x7f", 1),
	C("two-byte sequence", "\xc3\xa9", 2),
	C("three-byte sequence", "\xe2\x82\xac", 3),
	C("four-byte sequence", "\xf0\x9f\x98\x80", 4),
	C("lone continuation byte", "\x80", 3),
	C("overlong", "\xc0\xaf", 6),
	C("overlong three bytes", "\xe0\x80\xaf", 9),
	C("surrogate", "\xed\xa0\x80", 9),
	C("past U+10FFFF", "\xf4\x90\x80\x80", 12),
	C("cut short by ASCII", "\xe2\x82" "A", 7),
	C("cut short at the end", "ab\xf0\x9f\x98", 11),
	C("lead after lead", "\xc3\xc3\xa9", 5),
	C("0xFF", "\xff\xfe", 6),
};

Test(outtext, cost_is_the_json_strings_size)
{
	for (size_t i = 0; i < sizeof(cost_cases) / sizeof(cost_cases[0]); i++) {
		const struct cost_case *c = &cost_cases[i];

		cr_assert_eq(json_size(c->data, c->len), c->cost, "%s: the case is wrong", c->name);
		for (size_t step = 1; step <= c->len; step++)
			cr_assert_eq(charged(c->data, c->len, step), c->cost,
				     "%s, in pieces of %zu: charged %llu", c->name, step,
				     (unsigned long long)charged(c->data, c->len, step));
	}
}

/* Random bytes, mostly from the interesting ranges, cut anywhere. */
Test(outtext, cost_is_exact_for_random_output)
{
	static const unsigned char pool[] = { 0x00, 0x01, 0x1f, '"', '\\', '\n', 'a', 0x7f,
					      0x80, 0xbf, 0xc2, 0xc3, 0xdf, 0xe0, 0xe2, 0xed,
					      0xef, 0xf0, 0xf4, 0xf5, 0xff, 0x82, 0xa0, 0x90 };
	char s[512];

	srand(20);
	for (int round = 0; round < 2000; round++) {
		size_t n = (size_t)(rand() % (int)sizeof(s));
		size_t step = 1 + (size_t)(rand() % 17);

		for (size_t i = 0; i < n; i++)
			s[i] = (char)pool[rand() % (int)sizeof(pool)];
		cr_assert_eq(charged(s, n, step), json_size(s, n), "round %d", round);
	}
}

Test(outtext, take_stops_where_the_budget_ends)
{
	char ones[1000], text[1000];
	struct outtext_budget b;
	struct outtext_stream st = { 0 };
	size_t got;

	memset(ones, 0x01, sizeof(ones));
	outtext_budget_init(&b, OUTTEXT_JSON, 1000);
	got = outtext_take(&b, &st, ones, sizeof(ones));
	/* 166 times \u0001 is 996 bytes; one more would be 1002 */
	cr_assert_eq(got, 166);
	cr_assert_eq(outtext_budget_left(&b), 4);
	memset(text, 'x', sizeof(text));
	cr_assert_eq(outtext_take(&b, &st, text, sizeof(text)), 4);
	cr_assert_eq(outtext_take(&b, &st, text, sizeof(text)), 0);
	cr_assert_eq(outtext_budget_left(&b), 0);
	/* what was taken is exactly what the budget allowed */
	cr_assert_eq(json_size(ones, 166) + 4, 1000);
}

Test(outtext, a_sequence_is_charged_as_invalid_until_it_ends)
{
	struct outtext_budget b;
	struct outtext_stream st = { 0 };

	/* "é" costs 2 once whole, but its first byte alone could be U+FFFD */
	outtext_budget_init(&b, OUTTEXT_JSON, 4);
	cr_assert_eq(outtext_take(&b, &st, "\xc3", 1), 1);
	cr_assert_eq(outtext_budget_left(&b), 1);
	cr_assert_eq(outtext_take(&b, &st, "\xa9", 1), 0, "3 more do not fit");
	/* once whole it costs its 2 bytes */
	outtext_budget_init(&b, OUTTEXT_JSON, 6);
	memset(&st, 0, sizeof(st));
	cr_assert_eq(outtext_take(&b, &st, "\xc3", 1), 1);
	cr_assert_eq(outtext_budget_left(&b), 3);
	cr_assert_eq(outtext_take(&b, &st, "\xa9", 1), 1);
	cr_assert_eq(outtext_budget_left(&b), 4);
}

Test(outtext, base64_twice_is_eight_thirds_a_byte)
{
	struct outtext_budget b;
	struct outtext_stream st = { 0 };
	char data[3000];
	size_t got;
	char *enc;

	memset(data, 'q', sizeof(data));
	outtext_budget_init(&b, OUTTEXT_BASE64_TWICE, 1000);
	got = outtext_take(&b, &st, data, sizeof(data));
	cr_assert_eq(got, 375);
	enc = base64_encode(data, got);
	/* its stream and "output": within the budget but for one padding */
	cr_assert_leq(2 * strlen(enc), 1000 + 8);
	free(enc);
	cr_assert_eq(outtext_take(&b, &st, data, 1), 0);
}

Test(outtext, utf8_keeps_valid_text_and_replaces_the_rest)
{
	char *s = outtext_utf8("a\0\xc3\xa9\xff" "z", 6);

	cr_assert_str_eq(s, "a\xef\xbf\xbd\xc3\xa9\xef\xbf\xbdz");
	free(s);
}
