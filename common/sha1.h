/*
 * SHA-1 (FIPS 180-4), one-shot: only the WebSocket handshake's
 * Sec-WebSocket-Accept needs it (RFC 6455, 4.2.2), and there SHA-1 is a
 * fixed part of the protocol, not a security choice.
 */
#ifndef GOBOXD_SHA1_H
#define GOBOXD_SHA1_H

#include <stddef.h>

#define SHA1_LEN 20

void sha1_digest(const void *data, size_t len, unsigned char out[SHA1_LEN]);

#endif
