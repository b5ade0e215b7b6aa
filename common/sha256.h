/*
 * SHA-256 (FIPS 180-4), incremental: the build cache's keys. A copy of
 * its own rather than a dependency on a crypto library for one hash.
 */
#ifndef GOBOXD_SHA256_H
#define GOBOXD_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_LEN 32

struct sha256 {
	uint32_t h[8];
	uint64_t len;         /* bytes hashed so far */
	unsigned char blk[64];
	size_t n;             /* bytes waiting in blk */
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t len);
void sha256_final(struct sha256 *s, unsigned char out[SHA256_LEN]);

#endif
