#include "autoconf.h"

#include "common/sha1.h"

#include <stdint.h>
#include <string.h>

static uint32_t rol(uint32_t x, unsigned n)
{
	return (x << n) | (x >> (32 - n));
}

static void block(uint32_t h[5], const unsigned char *p)
{
	uint32_t w[80], a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];

	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		       (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (int i = 16; i < 80; i++)
		w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
	for (int i = 0; i < 80; i++) {
		uint32_t f, k, t;

		if (i < 20) {
			f = (b & c) | (~b & d);
			k = 0x5a827999;
		} else if (i < 40) {
			f = b ^ c ^ d;
			k = 0x6ed9eba1;
		} else if (i < 60) {
			f = (b & c) | (b & d) | (c & d);
			k = 0x8f1bbcdc;
		} else {
			f = b ^ c ^ d;
			k = 0xca62c1d6;
		}
		t = rol(a, 5) + f + e + k + w[i];
		e = d;
		d = c;
		c = rol(b, 30);
		b = a;
		a = t;
	}
	h[0] += a;
	h[1] += b;
	h[2] += c;
	h[3] += d;
	h[4] += e;
}

void sha1_digest(const void *data, size_t len, unsigned char out[SHA1_LEN])
{
	uint32_t h[5] = { 0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0 };
	const unsigned char *p = data;
	unsigned char tail[128] = { 0 };
	size_t full = len / 64 * 64, rest = len - full, n;
	uint64_t bits = (uint64_t)len * 8;

	for (size_t off = 0; off < full; off += 64)
		block(h, p + off);
	memcpy(tail, p + full, rest);
	tail[rest] = 0x80;
	n = rest + 1 + 8 <= 64 ? 64 : 128;
	for (int i = 0; i < 8; i++)
		tail[n - 1 - i] = (unsigned char)(bits >> (8 * i));
	block(h, tail);
	if (n == 128)
		block(h, tail + 64);
	for (int i = 0; i < 5; i++) {
		out[4 * i] = (unsigned char)(h[i] >> 24);
		out[4 * i + 1] = (unsigned char)(h[i] >> 16);
		out[4 * i + 2] = (unsigned char)(h[i] >> 8);
		out[4 * i + 3] = (unsigned char)h[i];
	}
}
