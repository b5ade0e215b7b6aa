#include "autoconf.h"

#include "worker/http/http.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "common/util.h"

static struct http_parser *parser_of(llhttp_t *ll)
{
	return ll->data;
}

/*
 * Record why the request is refused. The callback then returns non-zero and
 * llhttp stops with some HPE_* code; err_status being set is what tells
 * http_parser_feed() that the reason is ours and not llhttp's.
 */
static int parse_fail(struct http_parser *p, int status, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int parse_fail(struct http_parser *p, int status, const char *code, const char *fmt, ...)
{
	if (!p->err_status) {
		va_list ap;

		p->err_status = status;
		p->err_code = code;
		va_start(ap, fmt);
		vsnprintf(p->err_msg, sizeof(p->err_msg), fmt, ap);
		va_end(ap);
	}
	llhttp_set_error_reason(&p->ll, p->err_msg);
	return HPE_USER;
}

/* A buffer that cannot grow: only its size arithmetic can fail (the
 * allocation itself aborts), and the caps keep it far from that. */
static int fail_buffer(struct http_parser *p)
{
	return parse_fail(p, 500, "internal_error", "a request buffer cannot grow");
}

static int fail_headers_too_large(struct http_parser *p)
{
	return parse_fail(p, 431, "headers_too_large",
			  "request line and headers exceed %zu bytes", p->max_header_bytes);
}

/* /v1/run speaks Codize's errors, also when the HTTP layer refuses. */
static bool codize_route(const struct http_parser *p)
{
	return p->req.path && strcmp(p->req.path, "/v1/run") == 0;
}

static int fail_body_too_large(struct http_parser *p)
{
	if (codize_route(p))
		return parse_fail(p, 413, "REQUEST_BODY_TOO_LARGE", "request body too large");
	return parse_fail(p, 413, "body_too_large",
			  "request body exceeds %zu bytes", p->max_body_bytes);
}

/*
 * A chunked body's framing out of bounds. Its bytes are not body, so the
 * body cap alone would never see them: chunk extensions reach only their
 * own callbacks, and a chunk size padded with zeros ("000...01") reaches
 * none (Node's CVE-2024-22019 is the same hole).
 */
static int fail_framing(struct http_parser *p, const char *what)
{
	if (codize_route(p))
		return parse_fail(p, 413, "REQUEST_BODY_TOO_LARGE", "request body too large");
	return parse_fail(p, 413, "body_too_large", "%s", what);
}

/*
 * Spans (method, URL, version, header names and values) all point into the
 * bytes of the running execute, so their end tells exactly how far the
 * header section has reached; whitespace between spans is caught at the
 * next span or when the execute returns.
 */
static int check_header_span(struct http_parser *p, const char *at, size_t len)
{
	size_t upto = (size_t)(at + len - p->base);

	if (p->headers_done) {
		p->trailer_bytes += len;
		if (p->max_header_bytes && p->trailer_bytes > p->max_header_bytes)
			return fail_headers_too_large(p);
		return 0;
	}
	if (p->max_header_bytes && p->header_bytes + upto > p->max_header_bytes)
		return fail_headers_too_large(p);
	return 0;
}

static int on_message_begin(llhttp_t *ll)
{
	parser_of(ll)->started = true;
	return 0;
}

static int on_span(llhttp_t *ll, const char *at, size_t len)
{
	return check_header_span(parser_of(ll), at, len);
}

static int on_url(llhttp_t *ll, const char *at, size_t len)
{
	struct http_parser *p = parser_of(ll);
	int rc = check_header_span(p, at, len);

	if (rc)
		return rc;
	if (buf_append(&p->url, at, len) < 0)
		return fail_buffer(p);
	return 0;
}

/*
 * Servers must accept the absolute form "http://host/path" (RFC 9112,
 * 3.2.2); routes only want the path, "/" when the URL has none.
 */
static int on_url_complete(llhttp_t *ll)
{
	struct http_parser *p = parser_of(ll);
	const char *url = p->url.data ? p->url.data : "";
	const char *path = url;
	const char *q;
	size_t plen;

	if (strncasecmp(url, "http://", 7) == 0 || strncasecmp(url, "https://", 8) == 0) {
		path = strstr(url, "://") + 3;
		path += strcspn(path, "/?");
	}
	q = strchr(path, '?');
	plen = q ? (size_t)(q - path) : strlen(path);
	if (!plen) {
		path = "/";
		plen = 1;
	}
	p->req.path = xstrndup(path, plen);
	if (q)
		p->req.query = xstrdup(q + 1);
	return 0;
}

static int check_version(struct http_parser *p)
{
	llhttp_t *ll = &p->ll;

	if (ll->http_major != 1 || ll->http_minor > 1) {
		parse_fail(p, 505, "http_version_not_supported",
			   "HTTP/%u.%u is not supported; use HTTP/1.1 or HTTP/1.0",
			   ll->http_major, ll->http_minor);
		return -1;
	}
	return 0;
}

static int on_version_complete(llhttp_t *ll)
{
	return check_version(parser_of(ll));
}

static int on_header_field(llhttp_t *ll, const char *at, size_t len)
{
	struct http_parser *p = parser_of(ll);
	int rc = check_header_span(p, at, len);
	size_t start = p->field.len;

	if (rc || p->headers_done)
		return rc;
	if (buf_append(&p->field, at, len) < 0)
		return fail_buffer(p);
	for (size_t i = start; i < p->field.len; i++) {
		char ch = p->field.data[i];

		/*
		 * llhttp's loose mode lets blanks into a field name; "Content-Length :"
		 * read as some other header is a request smuggling vector
		 * (RFC 9112, 5.1 wants a 400).
		 */
		if (ch == ' ' || ch == '\t') {
			parse_fail(p, 400, "bad_request", "Invalid header field name");
			return HPE_USER;
		}
		p->field.data[i] = (char)tolower((unsigned char)ch);
	}
	return 0;
}

static int on_header_value(llhttp_t *ll, const char *at, size_t len)
{
	struct http_parser *p = parser_of(ll);
	int rc = check_header_span(p, at, len);

	if (rc || p->headers_done)
		return rc;
	if (buf_append(&p->value, at, len) < 0)
		return fail_buffer(p);
	return 0;
}

static int on_header_value_complete(llhttp_t *ll)
{
	struct http_parser *p = parser_of(ll);
	struct http_header *h;

	/* Trailers of a chunked body are counted, not kept. */
	if (p->headers_done)
		return 0;
	if (p->req.nheaders == HTTP_MAX_HEADERS) {
		parse_fail(p, 431, "headers_too_large",
			   "more than %d header fields", HTTP_MAX_HEADERS);
		return -1;
	}
	/* llhttp skips leading whitespace of a value, not trailing. */
	while (p->value.len && (p->value.data[p->value.len - 1] == ' ' ||
				p->value.data[p->value.len - 1] == '\t'))
		p->value.data[--p->value.len] = '\0';
	h = &p->req.headers[p->req.nheaders];
	h->name = buf_steal(&p->field, NULL);
	h->value = buf_steal(&p->value, NULL);
	p->req.nheaders++;
	return 0;
}

static bool has_body(const llhttp_t *ll)
{
	return (ll->flags & F_CHUNKED) || ll->content_length > 0;
}

/*
 * Always pause here: the pause position gives the exact size of the header
 * section, and http_parser_feed() decides whether to report
 * HTTP_HEADERS_DONE or to go straight on.
 */
static int on_headers_complete(llhttp_t *ll)
{
	struct http_parser *p = parser_of(ll);
	struct http_request *r = &p->req;
	const char *expect;

	p->headers_done = true;
	snprintf(r->method, sizeof(r->method), "%s",
		 llhttp_method_name((llhttp_method_t)ll->method));
	r->http_major = ll->http_major;
	r->http_minor = ll->http_minor;
	r->keep_alive = llhttp_should_keep_alive(ll);
	expect = http_header_get(r, "expect");
	r->expect_continue = expect && r->http_minor >= 1 &&
			     strcasecmp(expect, "100-continue") == 0;

	/* "GET /" alone is an HTTP/0.9 request: it has no version span. */
	if (check_version(p))
		return -1;
	if (ll->method == HTTP_CONNECT) {
		parse_fail(p, 501, "not_implemented", "CONNECT is not supported");
		return -1;
	}
	/*
	 * An Upgrade offer (h2c from curl --http2, websocket) may be ignored
	 * (RFC 9110, 7.8): answer in HTTP/1.1 instead of letting llhttp stop
	 * parsing at the end of the request.
	 */
	r->upgrade = ll->upgrade != 0;
	ll->upgrade = 0;

	if ((ll->flags & F_CONTENT_LENGTH) && p->max_body_bytes &&
	    ll->content_length > p->max_body_bytes) {
		fail_body_too_large(p);
		return -1;
	}
	return HPE_PAUSED;
}

static int on_chunk_header(llhttp_t *ll)
{
	struct http_parser *p = parser_of(ll);

	/* Refuse an oversize chunk from its size line, before its data. */
	if (p->max_body_bytes && ll->content_length > p->max_body_bytes - p->req.body.len) {
		fail_body_too_large(p);
		return -1;
	}
	return 0;
}

static int on_body(llhttp_t *ll, const char *at, size_t len)
{
	struct http_parser *p = parser_of(ll);

	if (p->max_body_bytes && len > p->max_body_bytes - p->req.body.len)
		return fail_body_too_large(p);
	if (buf_append(&p->req.body, at, len) < 0)
		return fail_buffer(p);
	return 0;
}

/* Extensions (";name=value" after a chunk size) get the header cap, as trailers do. */
static int on_chunk_extension(llhttp_t *ll, const char *at, size_t len)
{
	struct http_parser *p = parser_of(ll);
	char what[96];

	(void)at;
	p->ext_bytes += len;
	if (p->max_header_bytes && p->ext_bytes > p->max_header_bytes) {
		snprintf(what, sizeof(what), "chunk extensions exceed %zu bytes",
			 p->max_header_bytes);
		return fail_framing(p, what);
	}
	return 0;
}

static int on_message_complete(llhttp_t *ll)
{
	struct http_parser *p = parser_of(ll);

	p->req.keep_alive = llhttp_should_keep_alive(ll);
	p->done = true;
	return HPE_PAUSED;
}

static const llhttp_settings_t http_settings = {
	.on_message_begin = on_message_begin,
	.on_url = on_url,
	.on_method = on_span,
	.on_version = on_span,
	.on_header_field = on_header_field,
	.on_header_value = on_header_value,
	.on_url_complete = on_url_complete,
	.on_version_complete = on_version_complete,
	.on_header_value_complete = on_header_value_complete,
	.on_headers_complete = on_headers_complete,
	.on_chunk_header = on_chunk_header,
	.on_chunk_extension_name = on_chunk_extension,
	.on_chunk_extension_value = on_chunk_extension,
	.on_body = on_body,
	.on_message_complete = on_message_complete,
};

static void http_request_init(struct http_request *r)
{
	memset(r, 0, sizeof(*r));
	buf_init(&r->body, 0);
}

/* Free what a parsed request holds, leaving it empty for the next one. */
static void http_request_reset(struct http_request *r)
{
	free(r->path);
	free(r->query);
	for (size_t i = 0; i < r->nheaders; i++) {
		free(r->headers[i].name);
		free(r->headers[i].value);
	}
	buf_free(&r->body);
	http_request_init(r);
}

void http_parser_init(struct http_parser *p, size_t max_header_bytes, size_t max_body_bytes)
{
	memset(p, 0, sizeof(*p));
	llhttp_init(&p->ll, HTTP_REQUEST, &http_settings);
	p->ll.data = p;
	p->max_header_bytes = max_header_bytes;
	p->max_body_bytes = max_body_bytes;
	http_request_init(&p->req);
	buf_init(&p->field, 0);
	buf_init(&p->value, 0);
	buf_init(&p->url, 0);
}

void http_parser_free(struct http_parser *p)
{
	http_request_reset(&p->req);
	buf_free(&p->field);
	buf_free(&p->value);
	buf_free(&p->url);
}

/*
 * A fresh llhttp state per request: leftovers of the previous one (its
 * Connection: close, a paused state) cannot leak into the next.
 */
void http_parser_next(struct http_parser *p)
{
	http_request_reset(&p->req);
	buf_reset(&p->field);
	buf_reset(&p->value);
	buf_reset(&p->url);
	llhttp_reset(&p->ll);
	p->header_bytes = 0;
	p->trailer_bytes = 0;
	p->ext_bytes = 0;
	p->body_wire = 0;
	p->base = NULL;
	p->headers_done = false;
	p->headers_reported = false;
	p->done = false;
	p->started = false;
	p->err_status = 0;
	p->err_code = NULL;
	p->err_msg[0] = '\0';
}

bool http_parser_in_request(const struct http_parser *p)
{
	return p->started && !p->done;
}

/* Turn an llhttp error that no callback of ours raised into a status. */
static void map_llhttp_error(struct http_parser *p, llhttp_errno_t err)
{
	const char *reason = llhttp_get_error_reason(&p->ll);

	if (!reason || !*reason)
		reason = llhttp_errno_name(err);
	switch (err) {
	case HPE_PAUSED_H2_UPGRADE:
		parse_fail(p, 505, "http_version_not_supported",
			   "HTTP/2 is not supported; use HTTP/1.1");
		break;
	case HPE_INVALID_VERSION:
		/* Other reasons under this code are syntax errors ("Expected dot"). */
		if (strcmp(reason, "Invalid HTTP version") == 0)
			parse_fail(p, 505, "http_version_not_supported", "%s", reason);
		else
			parse_fail(p, 400, "bad_request", "%s", reason);
		break;
	default:
		parse_fail(p, 400, "bad_request", "%s", reason);
		break;
	}
}

static enum http_feed feed_error(struct http_parser *p, llhttp_errno_t err)
{
	if (!p->err_status)
		map_llhttp_error(p, err);
	return HTTP_ERROR;
}

/*
 * n more bytes of the body section were parsed. Whatever of them is not
 * body is framing, allowed up to the header cap plus the body so far: a
 * sane client's chunks are far larger than their size lines.
 */
static int count_body_wire(struct http_parser *p, size_t n)
{
	char what[96];

	p->body_wire += n;
	if (!p->max_header_bytes ||
	    p->body_wire - p->req.body.len <= p->max_header_bytes + p->req.body.len)
		return 0;
	snprintf(what, sizeof(what), "chunk framing exceeds the body's size plus %zu bytes",
		 p->max_header_bytes);
	return fail_framing(p, what);
}

enum http_feed http_parser_feed(struct http_parser *p, const char *data, size_t len,
				size_t *consumed)
{
	size_t off = 0;
	llhttp_errno_t err;
	const char *pos;
	bool in_body;

	if (p->err_status) {
		*consumed = 0;
		return HTTP_ERROR;
	}
	if (p->done) {
		*consumed = 0;
		return HTTP_REQUEST_DONE;
	}
	/* Paused after reporting HTTP_HEADERS_DONE. */
	llhttp_resume(&p->ll);
	for (;;) {
		/* Headers always pause at their end: an execute is one section. */
		in_body = p->headers_done;
		p->base = data + off;
		err = llhttp_execute(&p->ll, data + off, len - off);
		if (err == HPE_OK) {
			*consumed = len;
			if (in_body && count_body_wire(p, len - off))
				return HTTP_ERROR;
			if (!p->headers_done) {
				p->header_bytes += len - off;
				if (p->max_header_bytes && p->header_bytes > p->max_header_bytes) {
					fail_headers_too_large(p);
					return HTTP_ERROR;
				}
			}
			return HTTP_NEED_MORE;
		}
		pos = llhttp_get_error_pos(&p->ll);
		*consumed = pos && pos >= data && pos <= data + len ? (size_t)(pos - data) : len;
		if (err != HPE_PAUSED)
			return feed_error(p, err);
		if (in_body && count_body_wire(p, *consumed - off))
			return HTTP_ERROR;
		if (p->done)
			return HTTP_REQUEST_DONE;

		/* Paused in on_headers_complete. */
		p->header_bytes += (size_t)(pos - p->base);
		if (p->max_header_bytes && p->header_bytes > p->max_header_bytes) {
			fail_headers_too_large(p);
			return HTTP_ERROR;
		}
		if (has_body(&p->ll) && !p->headers_reported) {
			p->headers_reported = true;
			return HTTP_HEADERS_DONE;
		}
		llhttp_resume(&p->ll);
		off = (size_t)(pos - data);
	}
}

const char *http_header_get(const struct http_request *r, const char *lname)
{
	for (size_t i = 0; i < r->nheaders; i++)
		if (strcasecmp(r->headers[i].name, lname) == 0)
			return r->headers[i].value;
	return NULL;
}

const char *http_status_text(int status)
{
	switch (status) {
	case 100: return "Continue";
	case 200: return "OK";
	case 201: return "Created";
	case 204: return "No Content";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 411: return "Length Required";
	case 413: return "Content Too Large";
	case 414: return "URI Too Long";
	case 415: return "Unsupported Media Type";
	case 417: return "Expectation Failed";
	case 422: return "Unprocessable Content";
	case 429: return "Too Many Requests";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 501: return "Not Implemented";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	case 505: return "HTTP Version Not Supported";
	case 507: return "Insufficient Storage";
	default: return "Unknown";
	}
}

static int format_head(struct buf *out, int status, const char *content_type, size_t len,
		       bool keep_alive, const char *extra_headers)
{
	int rc = buf_printf(out, "HTTP/1.1 %d %s\r\n", status, http_status_text(status));

	if (!rc && content_type)
		rc = buf_printf(out, "Content-Type: %s\r\n", content_type);
	if (!rc)
		rc = buf_printf(out, "Content-Length: %zu\r\nConnection: %s\r\n", len,
				keep_alive ? "keep-alive" : "close");
	if (!rc && extra_headers)
		rc = buf_puts(out, extra_headers);
	if (!rc)
		rc = buf_puts(out, "\r\n");
	return rc;
}

int http_format_chunked_head(struct buf *out, int status, const char *content_type,
			     bool keep_alive, const char *extra_headers)
{
	int rc = buf_printf(out, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\n"
			    "Transfer-Encoding: chunked\r\nConnection: %s\r\n%s\r\n",
			    status, http_status_text(status), content_type,
			    keep_alive ? "keep-alive" : "close", extra_headers ? extra_headers : "");

	return rc;
}

int http_append_chunk(struct buf *out, const char *data, size_t len)
{
	int rc;

	/* an empty chunk would end the body */
	if (len == 0)
		return 0;
	rc = buf_printf(out, "%zx\r\n", len);
	if (!rc)
		rc = buf_append(out, data, len);
	if (!rc)
		rc = buf_puts(out, "\r\n");
	return rc;
}

int http_format_response(struct buf *out, int status, const char *content_type,
			 const char *body, size_t len, bool keep_alive,
			 const char *extra_headers)
{
	size_t old_len = out->len;
	bool old_trunc = out->truncated;
	int rc;

	rc = format_head(out, status, content_type, len, keep_alive, extra_headers);
	if (!rc && len)
		rc = buf_append(out, body, len);
	if (!rc && out->truncated && !old_trunc)
		rc = -ENOBUFS;
	if (rc) {
		/* Leave no half response behind. */
		out->len = old_len;
		out->truncated = old_trunc;
		if (out->data)
			out->data[old_len] = '\0';
	}
	return rc;
}

int http_response_around(struct buf *out, int status, const char *content_type, char *body,
			 size_t len, bool keep_alive, const char *extra_headers)
{
	struct buf head;
	char *p;
	int rc;

	buf_init(&head, 0);
	rc = format_head(&head, status, content_type, len, keep_alive, extra_headers);
	/* realloc of a big block moves its pages (mremap), not its bytes */
	if (rc) {
		free(body);
		buf_free(&head);
		return rc;
	}
	p = xreallocarray(body, head.len + len + 1, 1);
	memmove(p + head.len, p, len);
	memcpy(p, head.data, head.len);
	p[head.len + len] = '\0';
	buf_free(out);
	out->data = p;
	out->len = head.len + len;
	out->cap = out->len + 1;
	buf_free(&head);
	return 0;
}

int http_format_error(struct buf *out, int status, const char *code, const char *message,
		      bool keep_alive, const char *extra_headers)
{
	cJSON *root = cJSON_CreateObject();
	cJSON *err = root ? cJSON_AddObjectToObject(root, "error") : NULL;
	char *json = NULL;
	int rc = -ENOMEM;

	if (!err)
		goto out;
	if (!cJSON_AddStringToObject(err, "code", code ? code : "error") ||
	    !cJSON_AddStringToObject(err, "message",
				     message ? message : http_status_text(status)))
		goto out;
	/* Codize's codes are upper case; its clients read them at the top level. */
	if (code && isupper((unsigned char)code[0]) &&
	    (!cJSON_AddStringToObject(root, "code", code) ||
	     !cJSON_AddStringToObject(root, "message",
				      message ? message : http_status_text(status))))
		goto out;
	json = cJSON_PrintUnformatted(root);
	if (!json)
		goto out;
	rc = http_format_response(out, status, "application/json", json, strlen(json),
				  keep_alive, extra_headers);
out:
	cJSON_free(json);
	cJSON_Delete(root);
	return rc;
}

char *http_query_param(const struct http_request *r, const char *name)
{
	size_t nlen = strlen(name);
	const char *p = r->query;

	while (p && *p) {
		size_t n = strcspn(p, "&");
		size_t k = strcspn(p, "=&");

		if (k == nlen && strncmp(p, name, nlen) == 0) {
			const char *v = p + k + (p[k] == '=');
			size_t vlen = n - (size_t)(v - p);
			char *out = xmalloc(vlen + 1), *o = out;

			for (size_t i = 0; i < vlen; i++) {
				int hi, lo;

				if (v[i] == '+') {
					*o++ = ' ';
				} else if (v[i] == '%' && i + 2 < vlen &&
					   (hi = hex_digit_value(v[i + 1])) >= 0 &&
					   (lo = hex_digit_value(v[i + 2])) >= 0) {
					if (hi == 0 && lo == 0) {
						free(out);
						return NULL;
					}
					*o++ = (char)(hi << 4 | lo);
					i += 2;
				} else {
					*o++ = v[i];
				}
			}
			*o = '\0';
			return out;
		}
		p += n;
		if (*p == '&')
			p++;
	}
	return NULL;
}
