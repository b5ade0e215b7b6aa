/*
 * HTTP/1.1 request parsing over llhttp, one parser per connection.
 * The parser stops after each complete request so that pipelined requests
 * are answered in order and the unparsed rest can travel with the
 * connection when it is handed to another worker.
 */
#ifndef GOBOXD_HTTP_H
#define GOBOXD_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include <llhttp.h>

#include "common/buf.h"

#define HTTP_MAX_HEADERS 64

/* Interim answer to "Expect: 100-continue", written before the body is read. */
#define HTTP_CONTINUE_RESPONSE "HTTP/1.1 100 Continue\r\n\r\n"

struct http_header {
	char *name;   /* lower-cased */
	char *value;
};

struct http_request {
	char method[16];
	char *path;          /* without the query string */
	char *query;         /* NULL if none */
	struct http_header headers[HTTP_MAX_HEADERS];
	size_t nheaders;
	struct buf body;
	bool keep_alive;     /* from version and Connection header */
	bool expect_continue;
	bool upgrade;        /* llhttp saw an Upgrade offer (answered in HTTP/1.1 unless taken) */
	unsigned http_major, http_minor;
};

enum http_feed {
	HTTP_NEED_MORE,      /* all input consumed, no complete request yet */
	HTTP_HEADERS_DONE,   /* headers complete (answer 100-continue if asked); call again */
	HTTP_REQUEST_DONE,   /* one complete request in p->req; call again for more */
	HTTP_ERROR,          /* p->err_status / p->err_code / p->err_msg set */
};

/*
 * One per connection. The parser keeps a pointer to itself inside llhttp,
 * so it must not be moved (copied by value) after http_parser_init().
 * Only req and the err_* fields are for callers; the rest is private.
 */
struct http_parser {
	llhttp_t ll;
	size_t max_header_bytes;  /* 0: no cap */
	size_t max_body_bytes;    /* 0: no cap */
	size_t header_bytes;      /* raw bytes of request line + headers so far */
	size_t trailer_bytes;     /* chunked trailers count against the header cap */
	size_t ext_bytes;         /* so do chunk extensions */
	size_t body_wire;         /* bytes after the header section, framing included */
	const char *base;         /* start of the bytes of the running execute */
	struct http_request req;
	struct buf field, value;  /* header being assembled */
	struct buf url;
	bool headers_done;        /* headers of the current request complete */
	bool headers_reported;    /* HTTP_HEADERS_DONE already returned */
	bool done;                /* HTTP_REQUEST_DONE returned, awaiting next() */
	bool started;             /* some bytes of a request were seen */
	int err_status;           /* 400, 413, 431, 500, 501, 505 */
	const char *err_code;     /* stable code for the JSON body */
	char err_msg[160];
};

/*
 * The most bytes one request that the parser accepts can take on the wire:
 * its head (the header cap), its body (the body cap) and, for a chunked
 * body, the framing around it (sizes, extensions, line ends, trailers): at
 * most the header cap plus the body's own size, or the request is refused
 * with 413 as soon as it goes over.
 */
static inline size_t http_request_max_bytes(size_t max_header_bytes, size_t max_body_bytes)
{
	return 2 * (max_header_bytes + max_body_bytes);
}

void http_parser_init(struct http_parser *p, size_t max_header_bytes, size_t max_body_bytes);
void http_parser_free(struct http_parser *p);
/*
 * Feed bytes. *consumed (always set) tells how many were used; the caller
 * keeps the rest and feeds it again after handling the result. After
 * HTTP_REQUEST_DONE, call http_parser_next() before feeding again (until
 * then every feed returns HTTP_REQUEST_DONE and uses nothing).
 * HTTP_HEADERS_DONE comes once, only for requests with a body, before
 * any byte of it is used (a request may be refused there). After
 * HTTP_ERROR, answer p->err_status with Connection: close and close; the
 * parser keeps returning HTTP_ERROR.
 */
enum http_feed http_parser_feed(struct http_parser *p, const char *data, size_t len,
				size_t *consumed);
/* Forget the finished request and get ready for the next one. */
void http_parser_next(struct http_parser *p);
/* True while a request is partly read (for read timeouts). */
bool http_parser_in_request(const struct http_parser *p);

const char *http_header_get(const struct http_request *r, const char *lname);
/*
 * The value of a query parameter (its first occurrence; '+' and %XX
 * decoded), malloc'd; "" for a name without '='; NULL when absent or
 * when its decoding holds a NUL.
 */
char *http_query_param(const struct http_request *r, const char *name);

const char *http_status_text(int status);
/*
 * Append a full response to out: status line, Date-free fixed headers
 * (Content-Type, Content-Length, Connection, then extra_headers verbatim,
 * each ending in \r\n), blank line, body.
 */
int http_format_response(struct buf *out, int status, const char *content_type,
			 const char *body, size_t len, bool keep_alive,
			 const char *extra_headers);
/*
 * The same response made around a body built elsewhere (the job thread's
 * JSON): body (malloc'd, len bytes) is taken over, whatever happens, and
 * the head is written in front of it in the same block, so that a big
 * body is never held twice. out's old content is dropped.
 */
int http_response_around(struct buf *out, int status, const char *content_type, char *body,
			 size_t len, bool keep_alive, const char *extra_headers);
/*
 * A streamed answer (Transfer-Encoding: chunked): its head, then each
 * piece as one chunk (nothing for an empty piece), then HTTP_LAST_CHUNK
 * (no trailers).
 */
int http_format_chunked_head(struct buf *out, int status, const char *content_type,
			     bool keep_alive, const char *extra_headers);
int http_append_chunk(struct buf *out, const char *data, size_t len);
#define HTTP_LAST_CHUNK "0\r\n\r\n"
/*
 * {"error":{"code":..,"message":..}} response. A code in upper case is one
 * of Codize's (/v1/run): code and message are then also at the top level,
 * where Codize's clients read them.
 */
int http_format_error(struct buf *out, int status, const char *code, const char *message,
		      bool keep_alive, const char *extra_headers);

#endif
