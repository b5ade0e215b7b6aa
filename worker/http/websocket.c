#include "autoconf.h"

#include "worker/http/websocket.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/base64.h"
#include "common/sha1.h"

#define WEBSOCKET_GUID "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

void websocket_accept(const char *key, char out[WEBSOCKET_ACCEPT_LEN])
{
	char joined[128];
	unsigned char sum[SHA1_LEN];
	char *b64;
	size_t n = strlen(key);

	if (n > sizeof(joined) - sizeof(WEBSOCKET_GUID))
		n = sizeof(joined) - sizeof(WEBSOCKET_GUID);
	memcpy(joined, key, n);
	memcpy(joined + n, WEBSOCKET_GUID, sizeof(WEBSOCKET_GUID));
	sha1_digest(joined, n + sizeof(WEBSOCKET_GUID) - 1, sum);
	b64 = base64_encode(sum, sizeof(sum));
	out[0] = '\0';
	if (b64 && strlen(b64) == WEBSOCKET_ACCEPT_LEN - 1)
		memcpy(out, b64, WEBSOCKET_ACCEPT_LEN);
	free(b64);
}

/* Whether a comma-separated header value names token (case-blind). */
static bool lists(const char *v, const char *token)
{
	size_t t = strlen(token);

	while (v && *v) {
		size_t n;

		v += strspn(v, " \t,");
		n = strcspn(v, ",");
		while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
			n--;
		if (n == t && !strncasecmp(v, token, t))
			return true;
		v += strcspn(v, ",");
	}
	return false;
}

/* A key is 16 bytes, base64-encoded: 24 characters. */
static bool good_key(const char *key)
{
	char *raw = NULL;
	size_t n = 0;
	bool ok = key && strlen(key) == 24 && base64_decode(key, 24, &raw, &n) == 0 && n == 16;

	free(raw);
	return ok;
}

int websocket_check(const struct http_request *r, char out[WEBSOCKET_ACCEPT_LEN],
		    const char **why)
{
	const char *version = http_header_get(r, "sec-websocket-version");
	const char *key = http_header_get(r, "sec-websocket-key");

	if (strcmp(r->method, "GET") || r->http_major != 1 || r->http_minor < 1) {
		*why = "a WebSocket is opened by GET over HTTP/1.1";
		return 400;
	}
	if (!lists(http_header_get(r, "upgrade"), "websocket") ||
	    !lists(http_header_get(r, "connection"), "upgrade")) {
		*why = "this path speaks WebSocket only (Upgrade: websocket, Connection: Upgrade)";
		return 426;
	}
	if (!version || strcmp(version, "13")) {
		*why = "Sec-WebSocket-Version must be 13";
		return 426;
	}
	if (!good_key(key)) {
		*why = "Sec-WebSocket-Key must be 16 bytes in base64";
		return 400;
	}
	websocket_accept(key, out);
	return 0;
}

int websocket_switching(struct buf *out, const char *accept, const char *extra)
{
	return buf_printf(out,
			  "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
			  "Connection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n%s\r\n",
			  accept, extra ? extra : "");
}
