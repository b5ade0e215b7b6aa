/*
 * A job's network, where the operator lets a request ask for one
 * (--network): a user-mode stack, slirp4netns, attached to the network
 * namespace the jail's init made for this job, so that the programs'
 * connections leave as slirp4netns's own from the worker's namespace.
 * What they may reach is decided inside the jail's namespace, by routes
 * that nothing in the jail can change (its programs hold no capability):
 * this host's addresses, loopback, link-local (the clouds' metadata
 * services), multicast and the reserved ranges are refused ("prohibit",
 * EACCES), and so are the private ranges unless the operator lets one
 * through (--network-allow). DNS goes to slirp4netns's resolver,
 * 10.0.2.3, which asks this host's. Traffic (both ways together) and TCP
 * sockets in use at once are capped: past either the stack is killed, the
 * programs' connections to other machines are aborted, and the network is
 * gone for the rest of the job.
 *
 * Jobs without it keep the empty namespace every job gets (the jail's
 * reset makes a new one after each job, docs/security.md).
 */
#ifndef GOBOXD_NETWORK_H
#define GOBOXD_NETWORK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/cidr.h"

struct jail;

/* slirp4netns's resolver in the namespace. */
#define NETWORK_RESOLVER "10.0.2.3"
/* The jail's /etc/resolv.conf (a file of the jail dir, bound there). */
#define NETWORK_RESOLV_CONF "nameserver " NETWORK_RESOLVER "\n"
#define NETWORK_RESOLV_CONF_NAME "resolv.conf"

struct network_policy {
	const char *slirp4netns;        /* its path */
	const struct cidr_list *allow;  /* private ranges let through (IPv4 ones count) */
	uint64_t max_bytes;             /* both ways together */
	unsigned max_connections;       /* TCP sockets in use at once, listening ones too */
};

/* One IPv4 route the namespace refuses: addr (host order) / prefix. */
struct network_route {
	uint32_t addr;
	unsigned prefix;
};

/* The most routes a namespace gets: the fixed ranges split around what
 * --network-allow lets through, and this host's addresses. */
#define NETWORK_MAX_ROUTES 1024

/*
 * The routes that refuse what policy refuses, the host's own addresses
 * (host order) among them: at most max into out; their count, or -E2BIG.
 * Pure: tests/unit/test_network.c.
 */
int network_routes(const struct cidr_list *allow, const uint32_t *host, size_t nhost,
		   struct network_route *out, size_t max);

/* Why a job's network ended early. */
enum network_cut {
	NETWORK_CUT_NONE = 0,
	NETWORK_CUT_BYTES,          /* --network-max-bytes */
	NETWORK_CUT_CONNECTIONS,    /* --network-max-connections */
	NETWORK_CUT_FAILED,         /* the stack itself ended */
};

const char *network_cut_name(enum network_cut cut);

struct network_usage {
	uint64_t bytes_sent, bytes_received; /* by the programs, as the namespace counted */
	enum network_cut cut;
};

struct network;

/*
 * The job's network in jail j, whose init must be ready: the routes set,
 * slirp4netns started as the jail's uid and ready. 0 and *out, or
 * negative errno with the reason in err.
 */
int network_open(struct jail *j, const struct network_policy *p, struct network **out,
		 char *err, size_t errlen);
/*
 * The count on the line "<proto>: inuse N" of a /proc/net/sockstat or
 * sockstat6 text (proto "TCP", "TCP6"): the namespace's sockets of it
 * that are hashed, listening, connecting or connected, none closed nor in
 * TIME_WAIT. -1 when no such line. Pure: tests/unit/test_network.c.
 */
long network_sockstat_inuse(const char *text, const char *proto);

/* Its counters read, and the network ended when past a cap: often, while
 * a program runs (cheap: three small /proc files). NULL: nothing. */
void network_check(struct network *n);
/* It ends; what it carried, into *u (may be NULL). NULL: nothing. */
void network_close(struct network *n, struct network_usage *u);

#endif
