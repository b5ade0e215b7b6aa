/*
 * The WebSocket opening handshake (RFC 6455, 4.2): whether a request is a
 * client's valid offer, and the 101 that accepts it. The frames after it
 * are libwslay's (worker/session.c).
 */
#ifndef GOBOXD_WEBSOCKET_H
#define GOBOXD_WEBSOCKET_H

#include <stddef.h>

#include "common/buf.h"
#include "worker/http/http.h"

/* Sec-WebSocket-Accept's value: 28 characters and a NUL. */
#define WEBSOCKET_ACCEPT_LEN 29

/* The accept value for a client's Sec-WebSocket-Key. */
void websocket_accept(const char *key, char out[WEBSOCKET_ACCEPT_LEN]);
/*
 * Whether r offers a WebSocket: GET, HTTP/1.1, Upgrade: websocket,
 * Connection naming upgrade, Sec-WebSocket-Version 13 and a key that is
 * 16 bytes in base64. 0 and its accept value in out; else the status to
 * answer (400, or 426 for another version) with why.
 */
int websocket_check(const struct http_request *r, char out[WEBSOCKET_ACCEPT_LEN],
		    const char **why);
/* The 101 head that accepts it, with extra headers (each ending in \r\n). */
int websocket_switching(struct buf *out, const char *accept, const char *extra);

#endif
