#include "autoconf.h"

#include "master/dispatch.h"

#include <errno.h>
#include <string.h>

#include "common/log.h"

struct queue *dispatch_next(struct queue *clients, struct queue *subs, bool stopping)
{
	bool take_subs = subs->len > 0 && !stopping;

	if (clients->len > 0 &&
	    (!take_subs || queue_oldest_ms(clients) <= queue_oldest_ms(subs)))
		return clients;
	return take_subs ? subs : NULL;
}

int dispatch_one(struct admit *a, unsigned limit, const struct dispatch_hooks *h,
		 const struct queue_entry *e)
{
	int rc;

	if (!admit_reserve(a, limit))
		return -EAGAIN;
	rc = h->hand_over(h->arg, e);
	if (rc < 0)
		admit_unreserve(a);
	return rc;
}

void dispatch_run(struct queue *clients, struct queue *subs, bool stopping, struct admit *a,
		  unsigned limit, const struct dispatch_hooks *h)
{
	struct queue_entry e;
	struct queue *q;

	/* at the limit, no worker is even asked */
	while ((q = dispatch_next(clients, subs, stopping)) && admit_running(a) < limit) {
		int rc;

		queue_pop(q, &e);
		rc = dispatch_one(a, limit, h, &e);
		if (rc == -EAGAIN) {
			/* just popped: there is room, and it keeps its place */
			queue_unpop(q, &e);
			break;
		}
		if (rc < 0 && e.sub) {
			log_error("could not send submission %lld to a worker: %s; it waits",
				  (long long)e.sub, strerror(-rc));
			queue_unpop(q, &e);
			break;
		}
		if (rc < 0)
			h->overloaded(h->arg, &e);
	}
}
