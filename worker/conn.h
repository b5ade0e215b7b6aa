/*
 * A worker's client connections: each one's buffers and HTTP parser, and
 * its course from request to answer. What a request means (a simple
 * answer, a job, a move to another worker) is the worker's: it is told
 * through struct conn_hooks.
 */
#ifndef GOBOXD_CONN_H
#define GOBOXD_CONN_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/auth.h"
#include "common/buf.h"
#include "common/config.h"
#include "worker/http/http.h"

enum conn_state {
	C_READING,   /* parsing requests, answering simple ones */
	C_JOB,       /* its job runs in the job thread */
	C_HANDOFF,   /* a job request waits for the output to drain, then moves */
	C_CLOSING,   /* write what is left, then close */
	C_LINGER,    /* answered and shut for writing: what comes is dropped, then close */
};

struct conn {
	int fd;
	enum conn_state state;
	struct buf in;        /* read; from in_off on, not yet fed to the parser */
	struct buf raw;       /* bytes of the request being parsed (for handoff) */
	struct buf out;       /* answers; from out_off on, not yet sent */
	size_t in_off, out_off; /* consumed by offset: no memmove per request or send */
	struct http_parser hp;
	uint64_t last_active_ms;
	uint64_t req_start_ms; /* first byte of the current request, 0 if none */
	uint64_t queued_ms;    /* time the job waited in the master's queue */
	unsigned served;       /* requests answered on it */
	bool job_slot;         /* dispatched by the master: holds a job slot, may run one job */
	bool admitted;         /* the worker let its current request in already */
	struct auth_who who;   /* who its current request is, once admitted */
	bool body_unread;      /* refused at its headers: its body is not wanted */
	uint64_t linger_until_ms;
	size_t linger_left;    /* the most still read and dropped */
	bool streaming;        /* its job's answer goes out line by line */
	bool live;             /* a live session's (worker/session.c), which watches it */
	bool peer_closed;
	bool dead;             /* closed; freed after the current epoll batch */
	uint32_t events;       /* what epoll watches for it now; 0: not in epoll */
	char reqid[33];
	struct conn *prev, *next;
};

/* What the owner of the connections (the worker) does at its points. */
struct conn_hooks {
	void *arg;
	/* A whole request is parsed (c->hp.req): answer it into c->out and
	 * call conn_next_request, or start its job (C_JOB), or move it
	 * (C_HANDOFF). */
	void (*request)(void *arg, struct conn *c);
	/* The headers of a request with a body are complete (c->hp.req
	 * without its body): true to read the body (after a 100 Continue
	 * when asked); false when it was refused, its answer (Connection:
	 * close) in c->out and conn_next_request called: the connection
	 * then closes without reading the body. */
	bool (*headers)(void *arg, struct conn *c);
	/* A C_HANDOFF connection has sent all its answers: move it now. */
	void (*handoff)(void *arg, struct conn *c);
	/* Its request was refused: it will run no job, so the job slot the
	 * master dispatched it with goes back. */
	void (*no_job)(void *arg, struct conn *c);
	/* It is about to be closed: forget it (a job that runs for it), and
	 * give its job slot back as no_job does. */
	void (*closing)(void *arg, struct conn *c);
};

/* All of a worker's connections, in one epoll set. */
struct conn_set {
	int epfd;
	const struct config *cfg;
	struct conn_hooks hooks;
	struct conn *list;
	struct conn *dead;     /* closed this batch, freed after it */
	size_t n;
	bool draining;         /* no more keep-alive; idle ones close */
};

void conn_set_init(struct conn_set *s, int epfd, const struct config *cfg,
		const struct conn_hooks *hooks);
/* A connection on fd (non-blocking), watched for input; NULL (fd closed)
 * when epoll refuses it. */
struct conn *conn_new(struct conn_set *s, int fd);
/* Close it now; its memory goes at conn_set_free_dead, after the batch of
 * epoll events that may still name it. */
void conn_free(struct conn_set *s, struct conn *c);
void conn_set_free_dead(struct conn_set *s);
/* Close every connection (a worker that leaves). */
void conn_set_close(struct conn_set *s);
/* Slow clients, idle keep-alive connections, and clients that do not
 * read their answers are let go. */
void conn_set_sweep(struct conn_set *s);

/* epoll's events for a connection that is not running a job. */
void conn_event(struct conn_set *s, struct conn *c, uint32_t events);
/* Parse and answer what its input holds, send, and close or move it
 * when it is done. */
void conn_process(struct conn_set *s, struct conn *c);
/* Send what can be sent now. A send that fails marks its client gone. */
void conn_flush(struct conn_set *s, struct conn *c);
/* Watch it for what its state wants (input, output, the client's end). */
void conn_watch(struct conn_set *s, struct conn *c);
/* Watch it no more until its job ends (epoll reports a hang-up whatever
 * the mask). */
void conn_unwatch(struct conn_set *s, struct conn *c);

/* Whether its current request's answer keeps the connection open. */
bool conn_keep_alive(const struct conn_set *s, const struct conn *c);
/* Finish the current request: forget its bytes, ready the parser. */
void conn_next_request(struct conn *c, bool keep_alive);
/* Appends b to what is to be sent, or takes b's block whole (b emptied)
 * when nothing is pending. */
void conn_take_out(struct conn *c, struct buf *b);
/* Only what is still to be parsed stays, in a block of its size. */
void conn_compact_input(struct conn *c);
/* A dispatched connection's input: data (malloc'd, len bytes) becomes
 * its input as it is. */
void conn_adopt_input(struct conn *c, char *data, size_t len);
/* The bytes a handoff carries: the current request as parsed, then what
 * the parser has not seen. -1: no memory. */
int conn_handoff_bytes(struct conn *c, const char **data, size_t *len);
/* The most a handed-off connection carries under these caps. */
size_t conn_handoff_max(const struct config *cfg);

/* The request id of the current request: the client's X-Request-Id when
 * it is a safe token, else a random one. */
void conn_request_id(struct conn *c, const struct http_request *r);
/* Headers every answer on it carries (its request id), then more. */
void conn_headers(const struct conn *c, char *out, size_t n, const char *more);
void conn_respond_error(struct conn *c, int status, const char *code, const char *msg,
			bool keep_alive);
/* One access-log line; extra (taken) adds its fields. */
void conn_log(const struct conn *c, const char *method, const char *path, int status,
	      uint64_t started_ms, cJSON *extra);

#endif
