#include "autoconf.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "worker/outbox.h"

TestSuite(outbox, .timeout = 10);

/* ---- a URL's receiver ---- */

struct host_case {
	const char *url;
	const char *host; /* NULL: -EINVAL */
};

static const struct host_case host_cases[] = {
	{ "http://Example.COM/x", "example.com:80" },
	{ "https://a.example:8443/p?q=1", "a.example:8443" },
	{ "HTTPS://a.example", "a.example:443" },
	{ "http://a.example?x", "a.example:80" },
	{ "http://a.example#f", "a.example:80" },
	{ "http://a.example:/x", "a.example:80" },
	{ "http://a.example:080/x", "a.example:80" },
	{ "http://[::1]:9/x", "[::1]:9" },
	{ "https://[FE80::1]/", "[fe80::1]:443" },
	{ "http://user@a.example:1/", "a.example:1" },
	{ "http://127.0.0.1:8080/a/b", "127.0.0.1:8080" },
	{ "ftp://a.example/", NULL },
	{ "a.example/x", NULL },
	{ "http://", NULL },
	{ "http:///x", NULL },
	{ "http://:80/", NULL },
	{ "http://a.example:65536/", NULL },
	{ "http://a.example:8a/", NULL },
	{ "http://[::1/", NULL },
	{ "http://[::1]x/", NULL },
};

Test(outbox, host_of_a_url)
{
	for (size_t i = 0; i < sizeof(host_cases) / sizeof(host_cases[0]); i++) {
		const struct host_case *c = &host_cases[i];
		char out[64] = "";
		int rc = outbox_host_of(c->url, out, sizeof(out));

		if (c->host) {
			cr_expect_eq(rc, 0, "%s: %d", c->url, rc);
			cr_expect_str_eq(out, c->host, "%s", c->url);
		} else {
			cr_expect_eq(rc, -EINVAL, "%s: %d (%s)", c->url, rc, out);
		}
	}
}

Test(outbox, host_of_a_url_too_long_for_out)
{
	char out[12];

	cr_expect_eq(outbox_host_of("http://a.example/", out, sizeof(out)), -EINVAL);
}

/* ---- helpers ---- */

/* A callback of submission "t<n>" to http://<host>/<n>, its body padded
 * to len bytes, so that items of one test cost the same. */
static struct outbox_item *item(const char *host, int n, size_t len)
{
	char url[128], key[16], body[4096];

	snprintf(url, sizeof(url), "http://%s/%d", host, n);
	snprintf(key, sizeof(key), "t%d", n);
	cr_assert_lt(len, sizeof(body));
	memset(body, 'x', len);
	body[len] = '\0';
	return outbox_item_new(n, key, url, body);
}

/* What every item of these tests costs (hosts of one length, n < 10). */
static size_t item_bytes(void)
{
	struct outbox_item *it = item("a.example", 1, 100);
	size_t n = it->bytes;

	outbox_item_free(it);
	return n;
}

static void add_ok(struct outbox_queue *q, const char *host, int n, uint64_t now)
{
	struct outbox_item *dropped = (struct outbox_item *)1;

	cr_assert_eq(outbox_queue_add(q, item(host, n, 100), now, &dropped), 0, "%s %d", host,
		     n);
	cr_assert_null(dropped);
}

/* The next try's submission number; 0: none due. */
static int take(struct outbox_queue *q, uint64_t now, struct outbox_item **out)
{
	uint64_t wait;
	struct outbox_item *it = outbox_queue_take(q, now, &wait);

	if (out)
		*out = it;
	return it ? (int)it->id : 0;
}

/* Take and deliver at once. */
static int send_one(struct outbox_queue *q, uint64_t now)
{
	struct outbox_item *it;
	int n = take(q, now, &it);

	if (it) {
		cr_assert_not(outbox_queue_done(q, it, 0, now));
		outbox_item_free(it);
	}
	return n;
}

static void free_chain(struct outbox_item *it)
{
	while (it) {
		struct outbox_item *next = it->next;

		outbox_item_free(it);
		it = next;
	}
}

/* ---- order ---- */

Test(outbox, one_receivers_callbacks_go_in_order)
{
	struct outbox_queue *q = outbox_queue_new(1 << 20, 1 << 20, 4);

	for (int i = 1; i <= 3; i++)
		add_ok(q, "a.example", i, 0);
	for (int i = 1; i <= 3; i++)
		cr_expect_eq(send_one(q, 0), i);
	cr_expect_eq(send_one(q, 0), 0);
	cr_expect_eq(outbox_queue_bytes(q), 0);
	outbox_queue_free(q);
}

Test(outbox, receivers_are_served_in_turn)
{
	struct outbox_queue *q = outbox_queue_new(1 << 20, 1 << 20, 4);
	int got[8] = { 0 };
	/* a1 a2 a3 then b4 b5 then c6: each receiver in turn, its own in order */
	const int want[] = { 1, 4, 6, 2, 5, 3 };

	for (int i = 1; i <= 3; i++)
		add_ok(q, "a.example", i, 0);
	add_ok(q, "b.example", 4, 0);
	add_ok(q, "b.example", 5, 0);
	add_ok(q, "c.example", 6, 0);
	for (size_t i = 0; i < 6; i++)
		got[i] = send_one(q, 0);
	for (size_t i = 0; i < 6; i++)
		cr_expect_eq(got[i], want[i], "try %zu: %d, not %d", i, got[i], want[i]);
	cr_expect_eq(send_one(q, 0), 0);
	outbox_queue_free(q);
}

Test(outbox, a_receiver_has_one_try_under_way_at_most)
{
	struct outbox_queue *q = outbox_queue_new(1 << 20, 1 << 20, 4);
	struct outbox_item *a1, *b3;
	uint64_t wait;

	add_ok(q, "a.example", 1, 0);
	add_ok(q, "a.example", 2, 0);
	add_ok(q, "b.example", 3, 0);
	cr_assert_eq(take(q, 0, &a1), 1);
	/* a's second waits for its first, b goes */
	cr_assert_eq(take(q, 0, &b3), 3);
	cr_expect_null(outbox_queue_take(q, 0, &wait));
	cr_expect_eq(wait, UINT64_MAX, "the end of a try wakes the senders, not a timer");
	cr_expect_not(outbox_queue_done(q, a1, 0, 10));
	cr_expect_eq(send_one(q, 10), 2);
	cr_expect_not(outbox_queue_done(q, b3, 0, 10));
	outbox_item_free(a1);
	outbox_item_free(b3);
	cr_expect_eq(outbox_queue_bytes(q), 0);
	outbox_queue_free(q);
}

/* Deliver what is under way (the tests' end). */
static void end_tries(struct outbox_queue *q, struct outbox_item **busy, size_t n,
		      uint64_t now)
{
	for (size_t i = 0; i < n; i++) {
		cr_assert_not(outbox_queue_done(q, busy[i], 0, now));
		outbox_item_free(busy[i]);
	}
}

/* The case: four receivers hang, a fifth's callback goes at
 * once, during their first tries as during their next. */
Test(outbox, hanging_receivers_hold_up_no_other)
{
	const char *hang[] = { "h1.example", "h2.example", "h3.example", "h4.example" };
	struct outbox_queue *q = outbox_queue_new(1 << 20, 1 << 20, 8);
	struct outbox_item *busy[4];
	uint64_t wait;

	for (int i = 0; i < 4; i++) {
		add_ok(q, hang[i], 2 * i + 1, 0);
		add_ok(q, hang[i], 2 * i + 2, 0);
	}
	for (int i = 0; i < 4; i++)
		cr_assert_eq(take(q, 0, &busy[i]), 2 * i + 1);
	add_ok(q, "victim.example", 9, 100);
	cr_expect_eq(send_one(q, 100), 9);
	/* their first tries time out; their second callbacks go, slow now */
	for (int i = 0; i < 4; i++)
		cr_assert(outbox_queue_done(q, busy[i], -ETIMEDOUT, CALLBACKS_TIMEOUT_MS));
	for (int i = 0; i < 4; i++)
		cr_assert_eq(take(q, CALLBACKS_TIMEOUT_MS, &busy[i]), 2 * i + 2);
	add_ok(q, "victim.example", 10, CALLBACKS_TIMEOUT_MS + 100);
	cr_expect_eq(send_one(q, CALLBACKS_TIMEOUT_MS + 100), 10);
	/* their first callbacks' next tries wait for their receivers */
	cr_expect_null(outbox_queue_take(q, CALLBACKS_TIMEOUT_MS + 2000, &wait));
	end_tries(q, busy, 4, CALLBACKS_TIMEOUT_MS + 3000);
	outbox_queue_free(q);
}

Test(outbox, slow_receivers_share_half_the_senders)
{
	struct outbox_queue *q = outbox_queue_new(1 << 20, 1 << 20, 4);
	struct outbox_item *busy[3], *it;
	uint64_t wait;

	for (int i = 0; i < 3; i++) {
		char host[16];

		snprintf(host, sizeof(host), "h%d.example", i + 1);
		add_ok(q, host, 2 * i + 1, 0);
		add_ok(q, host, 2 * i + 2, 0);
	}
	/* not known slow yet: each has its try */
	for (int i = 0; i < 3; i++)
		cr_assert_eq(take(q, 0, &busy[i]), 2 * i + 1);
	for (int i = 0; i < 3; i++)
		cr_assert(outbox_queue_done(q, busy[i], -ETIMEDOUT, 5000));
	/* slow now: two of the four senders for them */
	cr_assert_eq(take(q, 5000, &busy[0]), 2);
	cr_assert_eq(take(q, 5000, &busy[1]), 4);
	cr_expect_null(outbox_queue_take(q, 5000, &wait), "a third slow try");
	cr_expect_eq(wait, UINT64_MAX, "the end of a slow try wakes the senders");
	add_ok(q, "victim.example", 7, 5000);
	cr_expect_eq(send_one(q, 5000), 7);
	/* a slow try ends: another may start */
	cr_assert(outbox_queue_done(q, busy[0], -ETIMEDOUT, 10000));
	cr_assert_eq(take(q, 10000, &it), 1, "h1's first callback, its second try");
	cr_expect_null(outbox_queue_take(q, 10000, &wait));
	busy[0] = it;
	end_tries(q, busy, 2, 10010);
	outbox_queue_free(q);
}

Test(outbox, a_receiver_that_fails_fast_is_not_slow)
{
	struct outbox_queue *q = outbox_queue_new(1 << 20, 1 << 20, 2);
	struct outbox_item *busy[2];

	/* two senders: one for slow receivers */
	add_ok(q, "s.example", 1, 0);
	add_ok(q, "f.example", 2, 0);
	add_ok(q, "f.example", 3, 0);
	cr_assert_eq(take(q, 0, &busy[0]), 1);
	cr_assert(outbox_queue_done(q, busy[0], -ETIMEDOUT, CALLBACKS_TIMEOUT_MS));
	cr_assert_eq(take(q, 0, &busy[1]), 2);
	/* a 500 within the second: f is not slow */
	cr_assert(outbox_queue_done(q, busy[1], -EPROTO, CALLBACKS_SLOW_MS - 1));
	cr_assert_eq(take(q, 6000, &busy[0]), 1);
	cr_expect_eq(take(q, 6000, &busy[1]), 3, "f's while the slow share is taken");
	end_tries(q, busy, 2, 6010);
	cr_expect_eq(send_one(q, 6010), 2);
	cr_expect_eq(outbox_queue_bytes(q), 0);
	outbox_queue_free(q);
}

/* ---- tries ---- */

Test(outbox, three_tries_one_then_two_seconds_apart)
{
	struct outbox_queue *q = outbox_queue_new(1 << 20, 1 << 20, 4);
	struct outbox_item *it;
	uint64_t wait;

	add_ok(q, "a.example", 1, 0);
	cr_assert_eq(take(q, 0, &it), 1);
	cr_assert(outbox_queue_done(q, it, -ETIMEDOUT, 5000));
	cr_expect_null(outbox_queue_take(q, 5999, &wait));
	cr_expect_eq(wait, 1);
	cr_assert_eq(take(q, 6000, &it), 1);
	cr_assert(outbox_queue_done(q, it, -EIO, 6010));
	cr_expect_null(outbox_queue_take(q, 6010, &wait));
	cr_expect_eq(wait, 2000);
	cr_assert_eq(take(q, 8010, &it), 1);
	cr_expect_not(outbox_queue_done(q, it, -EPROTO, 8020), "three tries in all");
	cr_expect_eq(it->tries, CALLBACKS_TRIES);
	outbox_item_free(it);
	cr_expect_eq(outbox_queue_bytes(q), 0);
	outbox_queue_free(q);
}

Test(outbox, a_refused_address_or_url_is_not_tried_again)
{
	const int final[] = { -EACCES, -EINVAL };

	for (size_t i = 0; i < 2; i++) {
		struct outbox_queue *q = outbox_queue_new(1 << 20, 1 << 20, 4);
		struct outbox_item *it;

		add_ok(q, "a.example", 1, 0);
		cr_assert_eq(take(q, 0, &it), 1);
		cr_expect_not(outbox_queue_done(q, it, final[i], 1), "rc %d", final[i]);
		outbox_item_free(it);
		outbox_queue_free(q);
	}
}

Test(outbox, a_callback_waiting_for_its_next_try_holds_up_no_other)
{
	struct outbox_queue *q = outbox_queue_new(1 << 20, 1 << 20, 4);
	struct outbox_item *it;

	add_ok(q, "a.example", 1, 0);
	add_ok(q, "a.example", 2, 0);
	cr_assert_eq(take(q, 0, &it), 1);
	cr_assert(outbox_queue_done(q, it, -EIO, 10));
	cr_expect_eq(send_one(q, 10), 2);
	cr_expect_eq(send_one(q, 1010), 1);
	outbox_queue_free(q);
}

/* ---- bounds ---- */

Test(outbox, a_receiver_past_its_bound_is_refused_others_are_not)
{
	size_t s = item_bytes();
	struct outbox_queue *q = outbox_queue_new(100 * s, 3 * s, 4);
	struct outbox_item *it, *busy, *dropped;

	for (int i = 1; i <= 3; i++)
		add_ok(q, "a.example", i, 0);
	it = item("a.example", 4, 100);
	cr_expect_eq(outbox_queue_add(q, it, 0, &dropped), -ENOSPC);
	cr_expect_null(dropped);
	outbox_item_free(it);
	cr_expect_eq(outbox_queue_host_bytes(q, "a.example:80"), 3 * s);
	add_ok(q, "b.example", 5, 0);
	/* a try under way still counts: its bytes are held */
	cr_assert_eq(take(q, 0, &busy), 1);
	it = item("a.example", 6, 100);
	cr_expect_eq(outbox_queue_add(q, it, 0, &dropped), -ENOSPC);
	outbox_item_free(it);
	cr_assert_not(outbox_queue_done(q, busy, 0, 0));
	outbox_item_free(busy);
	add_ok(q, "a.example", 6, 0);
	outbox_queue_free(q);
}

Test(outbox, a_callback_larger_than_a_receivers_bound_is_refused)
{
	size_t s = item_bytes();
	struct outbox_queue *q = outbox_queue_new(100 * s, s + 10, 4);
	struct outbox_item *it = item("a.example", 1, 111), *dropped;

	cr_expect_eq(outbox_queue_add(q, it, 0, &dropped), -EMSGSIZE);
	cr_expect_eq(outbox_queue_bytes(q), 0);
	outbox_item_free(it);
	outbox_queue_free(q);
}

Test(outbox, past_the_workers_bound_the_largest_receiver_loses_its_oldest)
{
	size_t s = item_bytes();
	struct outbox_queue *q = outbox_queue_new(5 * s, 4 * s, 4);
	struct outbox_item *dropped;

	for (int i = 1; i <= 4; i++)
		add_ok(q, "a.example", i, 0);
	add_ok(q, "b.example", 5, 0);
	cr_assert_eq(outbox_queue_add(q, item("b.example", 6, 100), 0, &dropped), 0);
	cr_assert_not_null(dropped);
	cr_expect_eq(dropped->id, 1, "a's oldest, not b's");
	cr_expect_null(dropped->next);
	free_chain(dropped);
	cr_expect_eq(outbox_queue_bytes(q), 5 * s);
	cr_expect_eq(outbox_queue_host_bytes(q, "a.example:80"), 3 * s);
	/* a flooding its own receiver loses its own */
	cr_assert_eq(outbox_queue_add(q, item("a.example", 7, 100), 0, &dropped), 0);
	cr_assert_not_null(dropped);
	cr_expect_eq(dropped->id, 2);
	free_chain(dropped);
	cr_expect_eq(outbox_queue_host_bytes(q, "b.example:80"), 2 * s);
	outbox_queue_free(q);
}

/* A callback that costs k of the others (item_bytes()). */
static struct outbox_item *item_of(const char *host, int n, size_t k)
{
	size_t s = item_bytes();
	struct outbox_item *it = item(host, n, 100 + (k - 1) * s);

	cr_assert_eq(it->bytes, k * s);
	return it;
}

Test(outbox, a_receiver_at_its_bound_is_refused_though_the_worker_is_full)
{
	size_t s = item_bytes();
	struct outbox_queue *q = outbox_queue_new(4 * s, 2 * s, 4);
	struct outbox_item *it, *dropped = (struct outbox_item *)1;

	add_ok(q, "a.example", 1, 0);
	add_ok(q, "b.example", 2, 0);
	add_ok(q, "b.example", 3, 0);
	add_ok(q, "a.example", 4, 0);
	/* a is at its own bound: its new one is refused, and nothing of b's
	 * (or a's) is dropped to make room for it */
	it = item("a.example", 5, 100);
	cr_expect_eq(outbox_queue_add(q, it, 0, &dropped), -ENOSPC);
	cr_expect_null(dropped);
	outbox_item_free(it);
	cr_expect_eq(outbox_queue_host_bytes(q, "a.example:80"), 2 * s);
	cr_expect_eq(outbox_queue_host_bytes(q, "b.example:80"), 2 * s);
	cr_expect_eq(send_one(q, 0), 1, "a's oldest is still there");
	outbox_queue_free(q);
}

Test(outbox, room_for_a_large_one_is_taken_from_whoever_holds_the_most_at_each_drop)
{
	size_t s = item_bytes();
	struct outbox_queue *q = outbox_queue_new(6 * s, 6 * s, 4);
	struct outbox_item *dropped;

	add_ok(q, "a.example", 1, 0);
	add_ok(q, "b.example", 2, 0);
	add_ok(q, "b.example", 3, 0);
	add_ok(q, "b.example", 4, 0);
	add_ok(q, "a.example", 5, 0);
	add_ok(q, "a.example", 6, 0);
	/* full, a and b hold the same; one that costs two: once one of
	 * them lost its oldest, the other holds the most */
	cr_assert_eq(outbox_queue_add(q, item_of("c.example", 8, 2), 0, &dropped), 0);
	cr_assert_not_null(dropped);
	cr_assert_not_null(dropped->next, "two go for a callback that costs two");
	cr_expect_null(dropped->next->next);
	cr_expect_eq(dropped->id + dropped->next->id, 1 + 2, "a's oldest and b's oldest: %d %d",
		     (int)dropped->id, (int)dropped->next->id);
	free_chain(dropped);
	cr_expect_eq(outbox_queue_bytes(q), 6 * s);
	cr_expect_eq(outbox_queue_host_bytes(q, "a.example:80"), 2 * s);
	cr_expect_eq(outbox_queue_host_bytes(q, "b.example:80"), 2 * s);
	cr_expect_eq(outbox_queue_host_bytes(q, "c.example:80"), 2 * s);
	outbox_queue_free(q);
}

Test(outbox, a_receiver_emptied_to_make_room_for_its_own_new_one_keeps_it)
{
	size_t s = item_bytes();
	struct outbox_queue *q = outbox_queue_new(2 * s, 3 * s, 4);
	struct outbox_item *dropped;

	add_ok(q, "a.example", 1, 0);
	cr_assert_eq(outbox_queue_add(q, item_of("a.example", 2, 2), 0, &dropped), 0);
	cr_assert_not_null(dropped);
	cr_expect_eq(dropped->id, 1);
	free_chain(dropped);
	cr_expect_eq(outbox_queue_host_bytes(q, "a.example:80"), 2 * s);
	cr_expect_eq(outbox_queue_bytes(q), 2 * s);
	cr_expect_eq(send_one(q, 0), 2);
	cr_expect_eq(outbox_queue_bytes(q), 0);
	outbox_queue_free(q);
}

Test(outbox, the_oldest_counts_a_callback_waiting_for_its_next_try)
{
	size_t s = item_bytes();
	struct outbox_queue *q = outbox_queue_new(3 * s, 3 * s, 4);
	struct outbox_item *it, *dropped;

	add_ok(q, "a.example", 1, 0);
	add_ok(q, "a.example", 2, 0);
	add_ok(q, "a.example", 3, 0);
	cr_assert_eq(take(q, 0, &it), 1);
	cr_assert(outbox_queue_done(q, it, -EIO, 1));
	cr_assert_eq(outbox_queue_add(q, item("b.example", 4, 100), 2, &dropped), 0);
	cr_assert_not_null(dropped);
	cr_expect_eq(dropped->id, 1);
	free_chain(dropped);
	outbox_queue_free(q);
}

Test(outbox, a_try_under_way_is_never_dropped)
{
	size_t s = item_bytes();
	struct outbox_queue *q = outbox_queue_new(2 * s, 2 * s, 4);
	struct outbox_item *a, *b, *it, *dropped = NULL;

	add_ok(q, "a.example", 1, 0);
	add_ok(q, "a.example", 2, 0);
	cr_assert_eq(take(q, 0, &a), 1);
	cr_assert_eq(outbox_queue_add(q, item("c.example", 3, 100), 0, &dropped), 0);
	cr_assert_not_null(dropped);
	cr_expect_eq(dropped->id, 2, "the waiting one, not the one under way");
	free_chain(dropped);
	cr_assert_eq(take(q, 0, &b), 3);
	/* both under way: nothing to drop, the new one is refused */
	it = item("d.example", 4, 100);
	cr_expect_eq(outbox_queue_add(q, it, 0, &dropped), -ENOBUFS);
	cr_expect_null(dropped);
	outbox_item_free(it);
	cr_expect_eq(outbox_queue_bytes(q), 2 * s);
	cr_assert_not(outbox_queue_done(q, a, 0, 1));
	cr_assert_not(outbox_queue_done(q, b, 0, 1));
	outbox_item_free(a);
	outbox_item_free(b);
	cr_expect_eq(outbox_queue_bytes(q), 0);
	outbox_queue_free(q);
}

Test(outbox, drain_takes_what_waits_and_leaves_what_is_under_way)
{
	size_t s = item_bytes();
	struct outbox_queue *q = outbox_queue_new(100 * s, 100 * s, 4);
	struct outbox_item *a, *chain, *it;
	int n = 0;

	add_ok(q, "a.example", 1, 0);
	add_ok(q, "a.example", 2, 0);
	add_ok(q, "b.example", 3, 0);
	cr_assert_eq(take(q, 0, &a), 1);
	chain = outbox_queue_drain(q);
	for (it = chain; it; it = it->next)
		n++;
	cr_expect_eq(n, 2);
	free_chain(chain);
	cr_expect_eq(outbox_queue_bytes(q), s);
	cr_expect_eq(outbox_queue_host_bytes(q, "b.example:80"), 0);
	cr_assert_not(outbox_queue_done(q, a, 0, 1));
	outbox_item_free(a);
	cr_expect_eq(outbox_queue_bytes(q), 0);
	outbox_queue_free(q);
}

Test(outbox, a_url_without_a_host_still_has_a_receiver)
{
	struct outbox_queue *q = outbox_queue_new(1 << 20, 1 << 20, 4);
	struct outbox_item *it = outbox_item_new(1, "t", "not a url", "{}"), *dropped;

	cr_expect_str_eq(it->host_key, "");
	cr_assert_eq(outbox_queue_add(q, it, 0, &dropped), 0);
	cr_expect_eq(send_one(q, 0), 1);
	outbox_queue_free(q);
}
