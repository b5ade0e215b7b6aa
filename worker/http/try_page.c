#include "autoconf.h"

#include "worker/http/try_page.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"

/* try_page_html, try_page_js, try_page_css: the files of the source
 * tree as C strings, made by the build (Makefile.am) */
#include "worker/http/try_page_files.inc"

#define XTERM_MAX_BYTES (16u << 20)

/*
 * Every answer of the page: a static page whose scripts are its own
 * files. xterm.js 3's DOM renderer writes <style> elements, hence styles
 * may be inline; scripts may not.
 */
#define TRY_PAGE_HEADERS                                                                    \
	"Content-Security-Policy: default-src 'none'; script-src 'self'; connect-src 'self';" \
	" style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self';"         \
	" base-uri 'none'; form-action 'none'; frame-ancestors 'none'\r\n"                   \
	"X-Content-Type-Options: nosniff\r\n"                                                 \
	"Referrer-Policy: no-referrer\r\n"                                                    \
	"Cache-Control: no-cache\r\n"

struct try_file {
	const char *path;
	const char *type;
	const char *text;   /* compiled in, or NULL: */
	const char *xterm;  /* the file of that name in xterm_dir */
};

static const struct try_file files[] = {
	{ "/try", "text/html; charset=utf-8", try_page_html, NULL },
	{ "/try/", "text/html; charset=utf-8", try_page_html, NULL },
	{ "/try/try.js", "text/javascript; charset=utf-8", try_page_js, NULL },
	{ "/try/try.css", "text/css; charset=utf-8", try_page_css, NULL },
	{ "/try/xterm.js", "text/javascript; charset=utf-8", NULL, "xterm.js" },
	{ "/try/xterm.css", "text/css; charset=utf-8", NULL, "xterm.css" },
};

static const struct try_file *find(const char *path)
{
	for (size_t i = 0; i < ARRAY_SIZE(files); i++)
		if (!strcmp(path, files[i].path))
			return &files[i];
	return NULL;
}

bool try_page_owns(const char *path)
{
	return find(path) != NULL;
}

/* A regular file of at most XTERM_MAX_BYTES into b: 0 or -errno. */
static int read_whole(const char *path, struct buf *b)
{
	struct stat st;
	char chunk[16384];
	ssize_t n;
	int rc = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > XTERM_MAX_BYTES) {
		rc = S_ISREG(st.st_mode) ? -EFBIG : -EINVAL;
		goto out;
	}
	while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			goto out;
		}
		if (b->len + (size_t)n > XTERM_MAX_BYTES || buf_append(b, chunk, (size_t)n) < 0) {
			rc = -EFBIG;
			goto out;
		}
	}
out:
	close(fd);
	return rc;
}

/* xterm.js or xterm.css from the directory given: 404 saying where it
 * was looked for when it is not there. */
static int serve_xterm(const char *dir, const struct try_file *f, bool ka, const char *hdr,
		       struct buf *out)
{
	char path[4096], msg[4200];
	struct buf b;
	int rc;

	buf_init(&b, 0);
	snprintf(path, sizeof(path), "%s/%s", dir, f->xterm);
	rc = read_whole(path, &b);
	if (rc < 0) {
		buf_free(&b);
		snprintf(msg, sizeof(msg), "%s: %s (./setup.sh install puts npm's @xterm/xterm"
			 " there, or give --try-page-xterm-dir)", path, strerror(-rc));
		http_format_error(out, 404, "not_found", msg, ka, hdr);
		return 404;
	}
	http_format_response(out, 200, f->type, b.data ? b.data : "", b.len, ka, hdr);
	buf_free(&b);
	return 200;
}

int try_page_serve(const char *xterm_dir, const struct http_request *r, bool ka, const char *hdr,
		   struct buf *out)
{
	const struct try_file *f = find(r->path);
	char h[1024];

	snprintf(h, sizeof(h), "%s" TRY_PAGE_HEADERS, hdr);
	if (!f) {
		http_format_error(out, 404, "not_found", "no such endpoint", ka, hdr);
		return 404;
	}
	if (strcmp(r->method, "GET") != 0) {
		snprintf(h, sizeof(h), "%sAllow: GET\r\n", hdr);
		http_format_error(out, 405, "method_not_allowed", "use GET", ka, h);
		return 405;
	}
	if (f->xterm)
		return serve_xterm(xterm_dir, f, ka, h, out);
	http_format_response(out, 200, f->type, f->text, strlen(f->text), ka, h);
	return 200;
}
