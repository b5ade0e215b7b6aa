/*
 * GET /try (--try-page): a static page to try live sessions in a
 * browser, its script and style compiled in, and xterm.js and xterm.css
 * read from xterm_dir at each request.
 */
#ifndef GOBOXD_TRY_PAGE_H
#define GOBOXD_TRY_PAGE_H

#include <stdbool.h>

#include "common/buf.h"
#include "worker/http/http.h"

/* Whether the path is the page's: /try, /try/ or one of its files. */
bool try_page_owns(const char *path);

/* The answer for a path the page owns; returns the HTTP status. */
int try_page_serve(const char *xterm_dir, const struct http_request *r, bool ka, const char *hdr,
		   struct buf *out);

#endif
