#include "autoconf.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"

Test(buf, append_grows_and_stays_terminated)
{
	struct buf b;

	buf_init(&b, 0);
	for (int i = 0; i < 1000; i++)
		cr_assert_eq(buf_append(&b, "abc", 3), 0);
	cr_assert_eq(b.len, 3000);
	cr_assert_eq(b.data[b.len], '\0');
	cr_assert_not(b.truncated);
	buf_free(&b);
}

Test(buf, limit_truncates_and_flags)
{
	struct buf b;

	buf_init(&b, 10);
	cr_assert_eq(buf_puts(&b, "0123456"), 0);
	cr_assert_eq(buf_puts(&b, "789abc"), 0);
	cr_assert_eq(b.len, 10);
	cr_assert_str_eq(b.data, "0123456789");
	cr_assert(b.truncated);
	buf_free(&b);
}

Test(buf, printf_long_and_consume)
{
	struct buf b;
	char big[1000];

	memset(big, 'q', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	buf_init(&b, 0);
	cr_assert_eq(buf_printf(&b, "%s-%d", big, 42), 0);
	cr_assert_eq(b.len, 999 + 3);
	buf_consume(&b, 999);
	cr_assert_str_eq(b.data, "-42");
	buf_consume(&b, 100);
	cr_assert_eq(b.len, 0);
	buf_free(&b);
}

Test(buf, steal_hands_over)
{
	struct buf b;
	size_t len;
	char *p;

	buf_init(&b, 0);
	p = buf_steal(&b, &len);
	cr_assert_eq(len, 0);
	cr_assert_str_eq(p, "");
	free(p);
	buf_puts(&b, "xyz");
	p = buf_steal(&b, &len);
	cr_assert_eq(len, 3);
	cr_assert_str_eq(p, "xyz");
	cr_assert_null(b.data);
	free(p);
}

Test(buf, truncate_keeps_the_start_and_gives_memory_back)
{
	struct buf b;

	buf_init(&b, 0);
	for (int i = 0; i < 1000; i++)
		buf_puts(&b, "0123456789");
	cr_assert_geq(b.cap, 10001);
	buf_truncate(&b, 15);
	cr_assert_eq(b.len, 15);
	cr_assert_str_eq(b.data, "012345678901234");
	cr_assert_eq(b.cap, 16);
	/* longer than it is: nothing changes */
	buf_truncate(&b, 100);
	cr_assert_eq(b.len, 15);
	cr_assert_eq(buf_puts(&b, "x"), 0);
	cr_assert_str_eq(b.data, "012345678901234x");
	buf_free(&b);
}
