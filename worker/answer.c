/*
 * A job's answer as the loop takes it from the job thread: its start
 * noted, a streamed answer's lines and its client's leaving, the end
 * (the stats, the log line, a stored submission's result), the answer
 * moved to its connection.
 */
#include "autoconf.h"

#include "worker/answer.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>

#include "common/buf.h"
#include "common/channel.h"
#include "common/log.h"
#include "common/stats.h"
#include "common/util.h"
#include "common/verdict.h"
#include "worker/conn.h"
#include "worker/http/http.h"
#include "worker/jobthread.h"
#include "worker/submissions.h"
#include "worker/to_master.h"
#include "worker/worker_state.h"

/* A job is in the thread: the loop's notes on it, and the shared stats. */
void answer_job_began(struct worker *w, struct conn *c, const char *method, const char *path)
{
	w->job_conn = c;
	w->job_started_ms = now_ms();
	snprintf(w->job_method, sizeof(w->job_method), "%s", method);
	snprintf(w->job_path, sizeof(w->job_path), "%s", path);
	atomic_fetch_add(&w->ctx->stats->in_flight, 1);
	atomic_store(&w->ctx->stats->workers[w->ctx->index].state, WS_BUSY);
	atomic_store(&w->ctx->stats->workers[w->ctx->index].job_started_ms, wall_ms());
}

static void record_job(struct worker *w, const struct jobthread *j, const struct conn *c)
{
	struct job_record rec = { 0 };
	const struct job_result *res = &j->res;

	rec.end_wall_ms = wall_ms();
	snprintf(rec.lang, sizeof(rec.lang), "%s", j->req->lang->id);
	rec.status = (uint8_t)res->top;
	rec.api = j->format->stats_id;
	rec.queue_ms = c ? (uint32_t)c->queued_ms : (uint32_t)w->job_queued_ms;
	rec.build_ms = (uint32_t)res->build_ms;
	rec.run_ms = (uint32_t)res->run_ms;
	rec.cpu_ms = (uint32_t)res->cpu_ms;
	rec.memory_peak_kb = res->memory_peak_kb;
	stats_push(w->ctx->stats, &rec, res->internal_error);
}

/*
 * The job thread's answer goes out as it is, without a copy, unless the
 * connection stopped being keep-alive meanwhile (the worker began to
 * drain, the client half-closed): then its head is written again.
 */
static void take_answer(struct conn *c, struct jobthread *j, bool ka)
{
	struct buf *a = &j->answer;
	const char *end = a->data ? strstr(a->data, "\r\n\r\n") : NULL;

	/* A streamed answer's head is gone already: its end follows as it
	 * is, and a connection that stopped being keep-alive closes after. */
	if (j->head_sent) {
		buf_append(&c->out, a->data, a->len);
		return;
	}
	if (!end)
		return;
	if (ka != j->ka) {
		end += 4;
		http_format_response(&c->out, j->status, "application/json", end,
				     a->len - (size_t)(end - a->data), ka, j->hdr);
		return;
	}
	conn_take_out(c, a);
}

/*
 * A streamed answer's client went away: its job stops at once (its
 * programs are killed, nothing more runs) and the connection goes now.
 * The job's end, soon, frees the worker.
 */
static void cancel_streamed_job(struct worker *w, struct conn *c)
{
	jobthread_cancel(&w->job);
	log_info("the client of a streamed answer went away: its job stops");
	conn_free(&w->conns, c);
}

static void finish_job(struct worker *w);

/* Send what a streamed answer has; a send that fails means its client
 * is gone. */
static void stream_flush(struct worker *w, struct conn *c)
{
	conn_flush(&w->conns, c);
	if (c->peer_closed) {
		c->state = C_JOB;
		cancel_streamed_job(w, c);
	}
}

/* Events of a connection whose streamed answer is being made: room to
 * send, or its client's end (a half-close included, as nginx reads it). */
void answer_stream_event(struct worker *w, struct conn *c, uint32_t events)
{
	if (events & (EPOLLHUP | EPOLLERR | EPOLLRDHUP)) {
		cancel_streamed_job(w, c);
		return;
	}
	if (events & EPOLLOUT)
		stream_flush(w, c);
}

/* The job thread has news: lines of a streamed answer, or the job's end. */
void answer_progress(struct worker *w)
{
	struct conn *c = w->job_conn;
	struct buf lines;
	bool done;

	if (w->session)
		w->session_progress(w);
	jobthread_take(&w->job, &lines, &done);
	if (c && lines.len) {
		conn_take_out(c, &lines);
		if (done)
			conn_flush(&w->conns, c);
		else
			stream_flush(w, c);
	}
	buf_free(&lines);
	if (done)
		finish_job(w);
}

static void finish_job(struct worker *w)
{
	struct jobthread *j = &w->job;
	struct conn *c = w->job_conn;
	cJSON *extra = cJSON_CreateObject();

	atomic_fetch_sub(&w->ctx->stats->in_flight, 1);
	atomic_store(&w->ctx->stats->workers[w->ctx->index].state,
		     w->conns.draining ? WS_DRAINING : WS_IDLE);
	atomic_fetch_add(&w->ctx->stats->workers[w->ctx->index].jobs_done, 1);
	record_job(w, j, c);

	if (j->status == 500 && extra)
		cJSON_AddStringToObject(extra, "error", j->res.internal_msg[0] ?
					j->res.internal_msg : "could not build the response");
	if (extra) {
		cJSON_AddStringToObject(extra, "language", j->req->lang->id);
		cJSON_AddStringToObject(extra, "job_status", verdict_test_status_name(j->res.top));
		cJSON_AddNumberToObject(extra, "queue_ms", c ? (double)c->queued_ms : 0);
		cJSON_AddNumberToObject(extra, "build_ms", (double)j->res.build_ms);
		cJSON_AddBoolToObject(extra, "build_cached", j->res.build_cached);
		cJSON_AddNumberToObject(extra, "run_ms", (double)j->res.run_ms);
		cJSON_AddNumberToObject(extra, "cpu_ms", (double)j->res.cpu_ms);
		cJSON_AddNumberToObject(extra, "memory_peak_kb", (double)j->res.memory_peak_kb);
	}
	if (w->job_sub) {
		char id[32];

		/* a result the store refused stays with the loop until it takes it */
		if (j->unstored) {
			submissions_keep(&w->subs, w->job_sub, j->unstored);
			j->unstored = NULL;
		}
		snprintf(id, sizeof(id), "%lld", (long long)w->job_sub);
		if (extra) {
			cJSON_AddStringToObject(extra, "msg", "submission");
			cJSON_AddStringToObject(extra, "submission", id);
			log_json(LOG_INFO, extra);
		}
		extra = NULL;
		w->job_sub = 0;
		submissions_lease_end(&w->subs);
	}
	if (c && w->session) {
		/* a live session's client had its answer frame by frame */
		conn_log(c, w->job_method, w->job_path, 101, w->job_started_ms, extra);
		extra = NULL;
	} else if (c) {
		bool ka = conn_keep_alive(&w->conns, c);

		c->streaming = false;
		take_answer(c, j, ka);
		conn_log(c, w->job_method, w->job_path, j->status, w->job_started_ms - c->queued_ms,
			 extra);
		extra = NULL;
		c->state = C_READING;
		conn_next_request(c, ka);
		/* the client first: what follows is the worker's own */
		conn_flush(&w->conns, c);
	}
	/* The master counts this job as running until told, client or not. */
	to_master_done(w, CHANNEL_DONE);
	cJSON_Delete(extra);
	if (w->session) {
		/* its exit is told from the result, before the reset frees it */
		w->job_conn = NULL;
		w->session_job_done(w);
		jobthread_reset(j);
		return;
	}
	jobthread_reset(j);
	w->job_conn = NULL;
	if (c)
		conn_process(&w->conns, c);
}
