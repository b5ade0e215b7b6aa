/*
 * A live session (GET /sessions, Piston's GET /api/v2/connect): a
 * WebSocket whose client starts one program and talks to it while it
 * runs. The loop's side: the socket's frames (libwslay), the program's
 * pipes, the caps and timers, the messages of its dialect
 * (worker/http/session_msg.h). The program itself is a job, run by the
 * job thread (jobthread_submit_session) in the worker's jail. One at a
 * time per worker: it holds the worker's job slot from its 101 on.
 */
#ifndef GOBOXD_SESSION_H
#define GOBOXD_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include "worker/http/session_msg.h"

struct conn;
struct worker;

/* Its request is admitted and holds a job slot: the 101 goes out and the
 * session waits for its start. 0, or negative errno (nothing sent). */
int session_open(struct worker *w, struct conn *c, enum session_proto p, const char *accept);
/* epoll's events for p (the session's connection, or one of its pipes):
 * false when p is none of the session's. */
bool session_event(struct worker *w, void *p, uint32_t events);
/* The job thread has news for the session (its eventfd). */
void session_progress(struct worker *w);
/* Its job is over (the job thread's result still there): the rest of the
 * output, the exit, the close. */
void session_job_done(struct worker *w);
/* Its connection is being closed. */
void session_conn_closing(struct worker *w, struct conn *c);
/* Timers: the idle timeout, the start's, a close that is not taken. */
void session_tick(struct worker *w);

#endif
