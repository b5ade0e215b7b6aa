#include "autoconf.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/base64.h"

/* RFC 4648 section 10 test vectors */
static const char *const rfc_plain[] = { "", "f", "fo", "foo", "foob", "fooba", "foobar" };
static const char *const rfc_coded[] = { "", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=",
					 "Zm9vYmFy" };

Test(base64, rfc_vectors_encode)
{
	for (size_t i = 0; i < sizeof(rfc_plain) / sizeof(rfc_plain[0]); i++) {
		char *e = base64_encode(rfc_plain[i], strlen(rfc_plain[i]));

		cr_assert_not_null(e);
		cr_expect_str_eq(e, rfc_coded[i]);
		cr_expect_eq(base64_encoded_len(strlen(rfc_plain[i])), strlen(rfc_coded[i]));
		free(e);
	}
}

Test(base64, rfc_vectors_decode)
{
	for (size_t i = 0; i < sizeof(rfc_plain) / sizeof(rfc_plain[0]); i++) {
		char *d = NULL;
		size_t n = 99;

		cr_assert_eq(base64_decode(rfc_coded[i], strlen(rfc_coded[i]), &d, &n), 0,
			     "%s", rfc_coded[i]);
		cr_expect_eq(n, strlen(rfc_plain[i]));
		cr_expect_eq(memcmp(d, rfc_plain[i], n), 0);
		cr_expect_eq(d[n], '\0');
		free(d);
	}
}

Test(base64, binary_round_trip)
{
	unsigned char raw[256];
	char *e, *d;
	size_t n;

	for (int i = 0; i < 256; i++)
		raw[i] = (unsigned char)(255 - i);
	for (size_t len = 0; len <= sizeof(raw); len += 37) {
		e = base64_encode(raw, len);
		cr_assert_not_null(e);
		cr_assert_eq(base64_decode(e, strlen(e), &d, &n), 0);
		cr_expect_eq(n, len);
		cr_expect_eq(memcmp(d, raw, len), 0);
		free(e);
		free(d);
	}
}

Test(base64, strict_rejects)
{
	static const char *const bad[] = {
		"Zg=",        /* length not a multiple of 4 */
		"Zg",         /* missing padding */
		"Zm9v\n",     /* whitespace */
		"Zm 9v",
		"Zm9-",       /* URL-safe alphabet */
		"Zm9_",
		"Z===",       /* too much padding */
		"====",
		"Zg==Zm9v",   /* padding in the middle */
		"Z=g=",
		"Zh==",       /* non-zero unused bits: not canonical */
		"Zm9=",
		"Zm8*",
	};
	char *d = (char *)0x1;
	size_t n = 7;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_expect_eq(base64_decode(bad[i], strlen(bad[i]), &d, &n), -EINVAL, "%s", bad[i]);
		cr_expect_eq(d, (char *)0x1, "out-parameter touched on failure");
		cr_expect_eq(n, 7);
	}
}

Test(base64, embedded_nul_is_refused)
{
	char *d;
	size_t n;

	cr_expect_eq(base64_decode("Zm\0v", 4, &d, &n), -EINVAL);
}

Test(base64, decodes_nul_bytes)
{
	char *d;
	size_t n;

	cr_assert_eq(base64_decode("AAA=", 4, &d, &n), 0);
	cr_expect_eq(n, 2);
	cr_expect_eq(d[0], 0);
	cr_expect_eq(d[1], 0);
	free(d);
}
