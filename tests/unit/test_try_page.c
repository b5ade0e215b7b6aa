#include "autoconf.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "worker/http/http.h"
#include "worker/http/try_page.h"

static int serve(const char *method, const char *path, const char *dir, struct buf *out)
{
	struct http_request r;

	memset(&r, 0, sizeof(r));
	snprintf(r.method, sizeof(r.method), "%s", method);
	r.path = (char *)path;
	buf_init(out, 0);
	return try_page_serve(dir, &r, true, "X-Request-Id: t\r\n", out);
}

static bool has(const struct buf *b, const char *s)
{
	return b->data && memmem(b->data, b->len, s, strlen(s)) != NULL;
}

Test(try_page, owns_its_paths_only)
{
	cr_assert(try_page_owns("/try"));
	cr_assert(try_page_owns("/try/"));
	cr_assert(try_page_owns("/try/try.js"));
	cr_assert(try_page_owns("/try/xterm.css"));
	cr_assert_not(try_page_owns("/try/../info"));
	cr_assert_not(try_page_owns("/try/xterm.js.map"));
	cr_assert_not(try_page_owns("/tryx"));
	cr_assert_not(try_page_owns("/"));
}

Test(try_page, the_page_with_its_headers)
{
	struct buf out;

	cr_assert_eq(serve("GET", "/try", "/nonexistent", &out), 200);
	cr_assert(has(&out, "Content-Type: text/html; charset=utf-8\r\n"));
	cr_assert(has(&out, "script-src 'self';"));
	cr_assert(has(&out, "X-Content-Type-Options: nosniff\r\n"));
	cr_assert(has(&out, "X-Request-Id: t\r\n"));
	cr_assert(has(&out, "<script src=\"/try/try.js\"></script>"));
	buf_free(&out);
	cr_assert_eq(serve("GET", "/try/try.js", "/nonexistent", &out), 200);
	cr_assert(has(&out, "Content-Type: text/javascript; charset=utf-8\r\n"));
	cr_assert(has(&out, "new WebSocket("));
	buf_free(&out);
	cr_assert_eq(serve("POST", "/try", "/nonexistent", &out), 405);
	cr_assert(has(&out, "Allow: GET\r\n"));
	buf_free(&out);
}

Test(try_page, xterm_read_from_its_directory)
{
	char dir[] = "/tmp/try-page-XXXXXX", path[64];
	struct buf out;
	FILE *f;

	cr_assert_not_null(mkdtemp(dir));
	cr_assert_eq(serve("GET", "/try/xterm.js", dir, &out), 404);
	cr_assert(has(&out, "xterm.js: No such file or directory"));
	cr_assert(has(&out, "@xterm/xterm"));
	buf_free(&out);
	snprintf(path, sizeof(path), "%s/xterm.js", dir);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs("var Terminal = 1;\n", f);
	fclose(f);
	cr_assert_eq(serve("GET", "/try/xterm.js", dir, &out), 200);
	cr_assert(has(&out, "Content-Length: 18\r\n"));
	cr_assert(has(&out, "\r\n\r\nvar Terminal = 1;\n"));
	buf_free(&out);
	unlink(path);
	rmdir(dir);
}
