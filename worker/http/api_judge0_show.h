/*
 * A stored Judge0 submission as Judge0 shows it (GET /submissions/TOKEN,
 * a batch, a page, a waited-for POST's answer, a callback's body): the
 * fields a client asks for with ?fields=, in Judge0's order, its texts
 * base64-encoded or decoded as ?base64_encoded= says.
 */
#ifndef GOBOXD_API_JUDGE0_SHOW_H
#define GOBOXD_API_JUDGE0_SHOW_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "common/lang/langtab.h"
#include "common/store.h"
#include "worker/http/http.h"

/* How a submission is shown: ?base64_encoded= and ?fields=. */
struct judge0_view {
	bool base64;
	unsigned long long fields; /* one bit per field of judge0_fields (api_judge0_show.c) */
};

/*
 * Read ?base64_encoded (default false) and ?fields (default: token,
 * time, memory, stdout, stderr, compile_output, message, status; "*":
 * all). 0, or -EINVAL with Judge0's message in err ("invalid fields:
 * [foo]"). r NULL: the defaults.
 */
int api_judge0_show_view(const struct http_request *r, struct judge0_view *v, char *err,
			 size_t errlen);

/*
 * A stored submission as Judge0 shows it, with the fields v asks for;
 * NULL when a text is not UTF-8 and v does not ask for base64 (Judge0
 * then answers 400: API_JUDGE0_NOT_UTF8).
 */
cJSON *api_judge0_show(const struct store_sub *sub, const struct judge0_view *v,
		       const struct langtab *t);
/* A finished submission's callback body: Judge0 sends its default
 * fields, base64-encoded. NULL when it cannot be shown (malloc'd). */
char *api_judge0_show_callback_body(const struct store_sub *sub, const struct langtab *t);
/* Judge0's words for a text that is not UTF-8. */
#define API_JUDGE0_NOT_UTF8 \
	"some attributes for this submission cannot be converted to UTF-8, use " \
	"base64_encoded=true query parameter"
/* The same of a list (a batch, a page). */
#define API_JUDGE0_NOT_UTF8_SOME \
	"some attributes for one or more submissions cannot be converted to UTF-8, use " \
	"base64_encoded=true query parameter"

#endif
