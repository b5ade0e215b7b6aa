#include "autoconf.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "common/sha256.h"

static void hex(const unsigned char *d, char *out)
{
	for (int i = 0; i < SHA256_LEN; i++)
		sprintf(out + 2 * i, "%02x", d[i]);
}

/* FIPS 180-2's examples, and lengths around the padding's block edge. */
static const struct {
	const char *in;
	const char *sum;
} vectors[] = {
	{ "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
	{ "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
	{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
	  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
	{ "The quick brown fox jumps over the lazy dog",
	  "d7a8fbb307d7809469ca9abcb0082e4f8d5651e46d3cdb762d02d0bf37c9e592" },
};

Test(sha256, known_vectors)
{
	for (size_t i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
		unsigned char d[SHA256_LEN];
		char got[2 * SHA256_LEN + 1];
		struct sha256 s;

		sha256_init(&s);
		sha256_update(&s, vectors[i].in, strlen(vectors[i].in));
		sha256_final(&s, d);
		hex(d, got);
		cr_expect_str_eq(got, vectors[i].sum, "\"%s\"", vectors[i].in);
	}
}

/* A million "a" fed in uneven pieces: the incremental path and long input. */
Test(sha256, million_a_in_pieces)
{
	static char a[1000];
	unsigned char d[SHA256_LEN];
	char got[2 * SHA256_LEN + 1];
	struct sha256 s;
	size_t done = 0, step = 1;

	memset(a, 'a', sizeof(a));
	sha256_init(&s);
	while (done < 1000000) {
		size_t n = step < 1000000 - done ? step : 1000000 - done;

		if (n > sizeof(a))
			n = sizeof(a);
		sha256_update(&s, a, n);
		done += n;
		step = step % 997 + 63;
	}
	sha256_final(&s, d);
	hex(d, got);
	cr_expect_str_eq(got, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}
