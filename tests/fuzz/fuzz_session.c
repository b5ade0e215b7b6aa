/*
 * libFuzzer target: a live session's client messages
 * (worker/http/session_msg.c), in both dialects: the first byte picks
 * goboxd's own or Piston's, the rest is one text frame. Whatever comes,
 * the message is read into exactly one kind, a refused one carries its
 * words, and a start's body is JSON again.
 */
#include "autoconf.h"

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "worker/http/session_msg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct session_msg m;
	enum session_proto p;
	cJSON *body;

	if (size < 1)
		return 0;
	p = data[0] & 1 ? SESSION_PISTON : SESSION_NATIVE;
	session_msg_parse(p, (const char *)data + 1, size - 1, &m);
	if (m.kind == SM_BAD && !m.error[0])
		abort();
	if (m.kind == SM_START) {
		body = cJSON_ParseWithLength(m.data, m.len);
		if (!cJSON_IsObject(body) || cJSON_GetObjectItemCaseSensitive(body, "type"))
			abort();
		cJSON_Delete(body);
	}
	if (m.kind == SM_SIGNAL && m.signal <= 0)
		abort();
	if (m.kind == SM_STDIN || m.kind == SM_START) {
		char *out = session_msg_output(p, false, m.data, m.len);

		if (!out)
			abort();
		free(out);
	}
	session_msg_free(&m);
	return 0;
}
