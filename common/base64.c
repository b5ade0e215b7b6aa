#include "autoconf.h"

#include "common/base64.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/util.h"

static const char b64_alphabet[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t base64_encoded_len(size_t n)
{
	return (n + 2) / 3 * 4;
}

char *base64_encode(const void *data, size_t n)
{
	const unsigned char *in = data;
	char *out, *p;
	size_t i;

	if (n / 3 >= SIZE_MAX / 4 - 1)
		return NULL;
	out = xmalloc(base64_encoded_len(n) + 1);
	p = out;
	for (i = 0; i + 3 <= n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];

		*p++ = b64_alphabet[v >> 18 & 63];
		*p++ = b64_alphabet[v >> 12 & 63];
		*p++ = b64_alphabet[v >> 6 & 63];
		*p++ = b64_alphabet[v & 63];
	}
	if (n - i == 1) {
		uint32_t v = (uint32_t)in[i] << 16;

		*p++ = b64_alphabet[v >> 18 & 63];
		*p++ = b64_alphabet[v >> 12 & 63];
		*p++ = '=';
		*p++ = '=';
	} else if (n - i == 2) {
		uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8;

		*p++ = b64_alphabet[v >> 18 & 63];
		*p++ = b64_alphabet[v >> 12 & 63];
		*p++ = b64_alphabet[v >> 6 & 63];
		*p++ = '=';
	}
	*p = '\0';
	return out;
}

int base64_value(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/*
 * Strict means canonical as well: the bits that padding leaves unused must
 * be zero, so every byte string has exactly one accepted encoding and two
 * different request bodies never decode to the same file.
 */
int base64_decode(const char *s, size_t len, char **out, size_t *outlen)
{
	const unsigned char *in = (const unsigned char *)s;
	size_t npad = 0, nout, i, o = 0;
	char *buf;

	if (len % 4 != 0)
		return -EINVAL;
	if (len > 0 && in[len - 1] == '=')
		npad++;
	if (len > 1 && in[len - 2] == '=')
		npad++;
	nout = len / 4 * 3 - npad;
	buf = xmalloc(nout + 1);
	for (i = 0; i < len; i += 4) {
		bool last = i + 4 == len;
		int v[4];
		uint32_t w;

		for (int k = 0; k < 4; k++) {
			v[k] = base64_value(in[i + k]);
			if (v[k] >= 0)
				continue;
			/* '=' only in the padding positions of the last quantum */
			if (in[i + k] == '=' && last && k >= 4 - (int)npad) {
				v[k] = 0;
				continue;
			}
			goto bad;
		}
		w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 |
		    (uint32_t)v[3];
		if (last && npad == 2 && (w & 0xffff))
			goto bad;
		if (last && npad == 1 && (w & 0xff))
			goto bad;
		buf[o++] = (char)(w >> 16);
		if (!last || npad < 2)
			buf[o++] = (char)(w >> 8 & 0xff);
		if (!last || npad < 1)
			buf[o++] = (char)(w & 0xff);
	}
	buf[o] = '\0';
	*out = buf;
	*outlen = o;
	return 0;
bad:
	free(buf);
	return -EINVAL;
}
