/*
 * A job's answer as the loop takes it from the job thread (the loop's
 * side of struct jobthread): the job's start noted, a streamed answer's
 * lines moved to its connection as they come, its client's end stopping
 * the job, and at the job's end the stats, the log line and the answer.
 */
#ifndef GOBOXD_ANSWER_H
#define GOBOXD_ANSWER_H

#include <stdint.h>

struct conn;
struct worker;

/* A job is in the thread, for connection c (NULL: a stored submission):
 * the loop's notes on it, and the shared stats. */
void answer_job_began(struct worker *w, struct conn *c, const char *method, const char *path);
/* The job thread has news (its eventfd): lines of a streamed answer, or
 * the job's end, when the answer goes to its connection and the master
 * hears DONE. */
void answer_progress(struct worker *w);
/* Events of a connection whose streamed answer is being made: room to
 * send, or its client's end, which stops the job. */
void answer_stream_event(struct worker *w, struct conn *c, uint32_t events);

#endif
