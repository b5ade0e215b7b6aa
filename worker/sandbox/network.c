#include "autoconf.h"

#include "worker/sandbox/network.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <limits.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cidr.h"
#include "common/log.h"
#include "common/util.h"
#include "worker/sandbox/jail.h"

/* How long slirp4netns may take to say it is ready. */
#define NETWORK_READY_MS 5000
/* The interface it makes in the namespace. */
#define NETWORK_IFACE "tap0"

/* Never reached, whatever the operator allows; with the clouds' metadata
 * services (cidr_metadata). */
static const struct network_route never[] = {
	{ 0x00000000u, 8 },  /* "this network": Linux connects 0.0.0.0 to the local host */
	{ 0x7f000000u, 8 },  /* loopback */
	{ 0xa9fe0000u, 16 }, /* link-local: the clouds' metadata services, 169.254.169.254 */
	{ 0xe0000000u, 4 },  /* multicast */
	{ 0xf0000000u, 4 },  /* reserved, and the broadcast address */
};

/* Not on the internet either, beside the private ranges (cidr_private):
 * reached only where --network-allow lets one through. */
static const struct network_route reserved[] = {
	{ 0xc0000000u, 24 }, /* 192.0.0.0/24, IETF protocol assignments */
	{ 0xc0000200u, 24 }, /* 192.0.2.0/24, documentation */
	{ 0xc6336400u, 24 }, /* 198.51.100.0/24, documentation */
	{ 0xcb007100u, 24 }, /* 203.0.113.0/24, documentation */
};

static uint32_t mask_of(unsigned prefix)
{
	return prefix ? ~0u << (32 - prefix) : 0;
}

/* a/ap holds all of b/bp. */
static bool covers(uint32_t a, unsigned ap, uint32_t b, unsigned bp)
{
	return ap <= bp && ((a ^ b) & mask_of(ap)) == 0;
}

static int emit(struct network_route *out, size_t max, size_t *n, uint32_t addr, unsigned prefix)
{
	if (*n >= max)
		return -E2BIG;
	out[(*n)++] = (struct network_route){ addr & mask_of(prefix), prefix };
	return 0;
}

/* addr/prefix less every allowed IPv4 network: whole, in halves, or not
 * at all. */
static int emit_less(const struct cidr_list *allow, uint32_t addr, unsigned prefix,
		     struct network_route *out, size_t max, size_t *n)
{
	bool inside = false;
	int rc;

	for (size_t i = 0; allow && i < allow->n; i++) {
		const struct cidr *c = &allow->v[i];
		uint32_t a;

		if (c->family != AF_INET)
			continue;
		memcpy(&a, c->addr, sizeof(a));
		a = ntohl(a);
		if (covers(a, c->prefix, addr, prefix))
			return 0;
		if (covers(addr, prefix, a, c->prefix))
			inside = true;
	}
	if (!inside)
		return emit(out, max, n, addr, prefix);
	rc = emit_less(allow, addr, prefix + 1, out, max, n);
	if (rc == 0)
		rc = emit_less(allow, addr | (1u << (31 - prefix)), prefix + 1, out, max, n);
	return rc;
}

/* The IPv4 ones of a list of CIDRs (common/cidr.h), as routes. */
static int emit_list(const struct cidr_list *allow, const char *const *list, size_t count,
		     bool lifted, struct network_route *out, size_t max, size_t *n)
{
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < count; i++) {
		struct cidr c;
		uint32_t a;

		if (cidr_parse(list[i], strlen(list[i]), &c) < 0 || c.family != AF_INET)
			continue;
		memcpy(&a, c.addr, sizeof(a));
		rc = lifted ? emit_less(allow, ntohl(a), c.prefix, out, max, n)
			    : emit(out, max, n, ntohl(a), c.prefix);
	}
	return rc;
}

int network_routes(const struct cidr_list *allow, const uint32_t *host, size_t nhost,
		   struct network_route *out, size_t max)
{
	size_t n = 0;
	int rc = emit_list(allow, cidr_private, cidr_private_count, true, out, max, &n);

	for (size_t i = 0; rc == 0 && i < ARRAY_SIZE(reserved); i++)
		rc = emit_less(allow, reserved[i].addr, reserved[i].prefix, out, max, &n);
	for (size_t i = 0; rc == 0 && i < ARRAY_SIZE(never); i++)
		rc = emit(out, max, &n, never[i].addr, never[i].prefix);
	if (rc == 0)
		rc = emit_list(allow, cidr_metadata, cidr_metadata_count, false, out, max, &n);
	/* after the allowed ones: no operator lifts this host's own */
	for (size_t i = 0; rc == 0 && i < nhost; i++)
		rc = emit(out, max, &n, host[i], 32);
	return rc < 0 ? rc : (int)n;
}

const char *network_cut_name(enum network_cut cut)
{
	switch (cut) {
	case NETWORK_CUT_BYTES:
		return "bytes";
	case NETWORK_CUT_CONNECTIONS:
		return "connections";
	case NETWORK_CUT_FAILED:
		return "failed";
	case NETWORK_CUT_NONE:
		break;
	}
	return NULL;
}

/* ---- one job's network ------------------------------------------------ */

struct network {
	pid_t slirp;             /* 0 once it is gone */
	struct jail *jail;
	int ns[2];               /* the jail's user and network namespaces */
	int dev, sockstat, sockstat6; /* the namespace's counters: its /proc/<init>/net files */
	uint64_t max_bytes;
	unsigned max_connections;
	struct network_usage u;
};

/* This host's IPv4 addresses (host order), at most max. */
static size_t host_addresses(uint32_t *out, size_t max)
{
	struct ifaddrs *list;
	size_t n = 0;

	if (getifaddrs(&list) < 0)
		return 0;
	for (struct ifaddrs *i = list; i && n < max; i = i->ifa_next) {
		struct sockaddr_in sin;

		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET)
			continue;
		memcpy(&sin, i->ifa_addr, sizeof(sin));
		out[n++] = ntohl(sin.sin_addr.s_addr);
	}
	freeifaddrs(list);
	return n;
}

/* One RTM_NEWROUTE of type prohibit: a connect there fails with EACCES. */
struct route_msg {
	struct nlmsghdr nh;
	struct rtmsg rt;
	struct rtattr dst_attr;
	uint32_t dst;
};

static void route_msg(struct route_msg *m, const struct network_route *r, uint32_t seq)
{
	memset(m, 0, sizeof(*m));
	m->nh.nlmsg_len = sizeof(*m);
	m->nh.nlmsg_type = RTM_NEWROUTE;
	m->nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK;
	m->nh.nlmsg_seq = seq;
	m->rt.rtm_family = AF_INET;
	m->rt.rtm_dst_len = (unsigned char)r->prefix;
	m->rt.rtm_table = RT_TABLE_MAIN;
	m->rt.rtm_protocol = RTPROT_STATIC;
	m->rt.rtm_scope = RT_SCOPE_UNIVERSE;
	m->rt.rtm_type = RTN_PROHIBIT;
	m->dst_attr.rta_len = RTA_LENGTH(sizeof(m->dst));
	m->dst_attr.rta_type = RTA_DST;
	m->dst = htonl(r->addr);
}

/* One netlink request of len bytes on sock, and its acknowledgement. 0
 * or an errno. */
static int netlink_ask(int sock, const void *req, size_t len)
{
	struct {
		struct nlmsghdr nh;
		struct nlmsgerr err;
	} ack;

	if (send(sock, req, len, 0) < 0)
		return errno;
	if (recv(sock, &ack, sizeof(ack), 0) < (ssize_t)sizeof(ack) ||
	    ack.nh.nlmsg_type != NLMSG_ERROR)
		return EPROTO;
	return -ack.err.error;
}

struct route_batch {
	const struct route_msg *msgs;
	size_t n;
};

/* In the jail's namespaces (in_jail_namespaces): each route of a
 * route_batch, acknowledged. 0 or an errno. */
static int child_routes(const void *arg)
{
	const struct route_batch *b = arg;
	int sock = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE), rc = 0;

	if (sock < 0)
		return errno;
	for (size_t i = 0; rc == 0 && i < b->n; i++)
		rc = netlink_ask(sock, &b->msgs[i], sizeof(b->msgs[i]));
	return rc;
}

/* The child's first steps, as the jail launcher's: the jail's ids (the
 * namespaces are theirs), and killed with the worker. 0 or an errno. */
static int child_become(const struct jail *j, pid_t parent)
{
	int rc = jail_child_drop_ids(jail_uid(j), jail_gid(j));

	if (rc == 0)
		rc = jail_child_die_with(parent);
	return -rc;
}

static int wait_child(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (WIFEXITED(status))
		return -WEXITSTATUS(status);
	return -EINTR;
}

/* fn(arg) in a child of the worker, as the jail's uid, inside the jail's
 * user and network namespaces (ns), waited for: its exit status is fn's
 * errno. 0 or negative errno. */
static int in_jail_namespaces(const struct jail *j, const int ns[2], int (*fn)(const void *),
			      const void *arg)
{
	pid_t parent = getpid(), pid = fork();

	if (pid == 0) {
		int e = child_become(j, parent);

		if (e == 0 && (setns(ns[0], CLONE_NEWUSER) < 0 || setns(ns[1], CLONE_NEWNET) < 0))
			e = errno;
		_exit(e ? e : fn(arg));
	}
	return pid < 0 ? -errno : wait_child(pid);
}

/*
 * slirp4netns processes killed and not reaped yet. Its exit takes the
 * tap device down, which waits for RCU grace periods (17 to 42 ms here):
 * not on the job's path. Each open and close reaps those that are gone;
 * the job thread alone calls them.
 */
static pid_t dying[16];
static size_t ndying;

static void reap_dying(void)
{
	for (size_t i = 0; i < ndying;) {
		pid_t got = waitpid(dying[i], NULL, WNOHANG);

		if (got == 0 || (got < 0 && errno == EINTR))
			i++;
		else
			dying[i] = dying[--ndying];
	}
}

static void bury(pid_t pid)
{
	kill(pid, SIGKILL);
	reap_dying();
	if (ndying < ARRAY_SIZE(dying))
		dying[ndying++] = pid;
	else
		wait_child(pid);
}

/* The policy's routes in the namespace ns[1], entered through ns[0]. */
static int set_routes(struct jail *j, const struct network_policy *p, const int ns[2],
		      char *err, size_t errlen)
{
	uint32_t host[64];
	size_t nhost = host_addresses(host, ARRAY_SIZE(host));
	struct network_route *routes = xcalloc(NETWORK_MAX_ROUTES, sizeof(*routes));
	struct route_msg *msgs = NULL;
	int n = network_routes(p->allow, host, nhost, routes, NETWORK_MAX_ROUTES), rc;

	if (n < 0) {
		free(routes);
		snprintf(err, errlen, "too many routes for the network's policy");
		return n;
	}
	msgs = xcalloc((size_t)n, sizeof(*msgs));
	for (int i = 0; i < n; i++)
		route_msg(&msgs[i], &routes[i], (uint32_t)i + 1);
	rc = in_jail_namespaces(j, ns, child_routes, &(struct route_batch){ msgs, (size_t)n });
	free(msgs);
	free(routes);
	if (rc < 0)
		snprintf(err, errlen, "setting the network's routes: %s", strerror(-rc));
	return rc;
}

/* ---- past a cap: the connections aborted ------------------------------ */

/* How many times the namespace's sockets are listed: a socket aborted
 * while a listing runs may move another past it. */
#define ABORT_ROUNDS 4

struct diag_msg {
	struct nlmsghdr nh;
	struct inet_diag_req_v2 r;
};

/* A socket whose peer is another machine: neither unconnected nor on
 * the namespace's own loopback, which the network's end leaves alone. */
static bool peer_is_outside(const struct inet_diag_msg *m)
{
	const struct in6_addr *a6 = (const struct in6_addr *)m->id.idiag_dst;
	const uint8_t *a = (const uint8_t *)m->id.idiag_dst;

	if (m->idiag_family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(a6))
		a += 12;
	else if (m->idiag_family == AF_INET6)
		return !IN6_IS_ADDR_UNSPECIFIED(a6) && !IN6_IS_ADDR_LOOPBACK(a6);
	return a[0] != 0 && a[0] != 127;
}

/* SOCK_DESTROY of one socket, acknowledged on sock: the program's next
 * read or write of it fails with ECONNABORTED. 0 (gone already, too) or
 * an errno. */
static int destroy_one(int sock, int protocol, const struct inet_diag_msg *m)
{
	struct diag_msg d = {
		.nh = { .nlmsg_len = sizeof(d), .nlmsg_type = SOCK_DESTROY,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK },
		.r = { .sdiag_family = m->idiag_family, .sdiag_protocol = (uint8_t)protocol,
		       .idiag_states = ~0u, .id = m->id },
	};
	int rc = netlink_ask(sock, &d, sizeof(d));

	return rc == ENOENT ? 0 : rc;
}

/* One listing of the namespace's sockets of a family and protocol on
 * list, each whose peer is outside destroyed on destroy. How many were,
 * or a negative errno. */
static int abort_listed(int list, int destroy, int family, int protocol)
{
	struct diag_msg q = {
		.nh = { .nlmsg_len = sizeof(q), .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
		.r = { .sdiag_family = (uint8_t)family, .sdiag_protocol = (uint8_t)protocol,
		       .idiag_states = ~0u },
	};
	static char buf[32768] __attribute__((aligned(NLMSG_ALIGNTO)));
	int count = 0, rc = 0;

	if (send(list, &q, sizeof(q), 0) < 0)
		return -errno;
	for (;;) {
		ssize_t got = recv(list, buf, sizeof(buf), 0);

		if (got < 0)
			return -errno;
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)got);
		     h = NLMSG_NEXT(h, got)) {
			if (h->nlmsg_type == NLMSG_DONE)
				return rc ? -rc : count;
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);

				return e->error < 0 ? e->error : -EPROTO;
			}
			if (rc == 0 && peer_is_outside(NLMSG_DATA(h))) {
				rc = destroy_one(destroy, protocol, NLMSG_DATA(h));
				count++;
			}
		}
	}
}

/* In the jail's namespaces (in_jail_namespaces): each TCP and UDP
 * socket whose peer is outside aborted, until a listing finds none. 0 or
 * an errno. */
static int child_abort(const void *arg)
{
	static const int kinds[][2] = {
		{ AF_INET, IPPROTO_TCP }, { AF_INET6, IPPROTO_TCP },
		{ AF_INET, IPPROTO_UDP }, { AF_INET6, IPPROTO_UDP },
	};
	int list, destroy, found = 1;

	(void)arg;
	list = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	destroy = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (list < 0 || destroy < 0)
		return errno;
	for (int round = 0; round < ABORT_ROUNDS && found > 0; round++) {
		found = 0;
		for (size_t i = 0; i < ARRAY_SIZE(kinds); i++) {
			int n = abort_listed(list, destroy, kinds[i][0], kinds[i][1]);

			if (n < 0)
				return -n;
			found += n;
		}
	}
	return 0;
}

/* The network has ended: its programs' connections to other machines
 * end too, at once, rather than wait for a peer that will never answer. */
static void abort_connections(struct network *n)
{
	int rc = in_jail_namespaces(n->jail, n->ns, child_abort, NULL);

	if (rc < 0)
		log_warn("the network ended, but its connections stay open until their peers "
			 "time out: %s", strerror(-rc));
}

/* slirp4netns, as the jail's uid, told the namespaces by their fds; its
 * readiness read from a pipe. It dies with the worker (child_become).
 * 0 and n->slirp, or negative errno. */
static int start_slirp(struct network *n, struct jail *j, const struct network_policy *p,
		       const int ns[2], char *err, size_t errlen)
{
	int ready[2], rc, r = 0;
	pid_t parent = getpid(), pid;
	char c;

	if (pipe2(ready, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid == 0) {
		/* fds 3 to 5, in this order: ready, userns, netns */
		int keep[3] = { ready[1], ns[0], ns[1] };
		int e = child_become(j, parent);

		for (int i = 0; i < 3 && e == 0; i++)
			if ((keep[i] = fcntl(keep[i], F_DUPFD, 16)) < 0)
				e = errno;
		for (int i = 0; i < 3 && e == 0; i++)
			if (dup2(keep[i], 3 + i) < 0)
				e = errno;
		/* what it says of its work is not the worker's log */
		for (int i = 0, null = open("/dev/null", O_RDWR); i < 3 && e == 0; i++)
			if (null < 0 || dup2(null, i) < 0)
				e = errno;
		if (e == 0) {
			static char *const envp[] = { "PATH=/usr/bin:/bin", NULL };
			char *const argv[] = {
				(char *)p->slirp4netns, "--configure", "--mtu=65520",
				"--disable-host-loopback", "--enable-seccomp", "--ready-fd=3",
				"--userns-path=/proc/self/fd/4", "--netns-type=path",
				"/proc/self/fd/5", NETWORK_IFACE, NULL,
			};

			close_range(6, ~0u, 0);
			execve(p->slirp4netns, argv, envp);
			e = errno;
		}
		_exit(e ? e : 127);
	}
	rc = pid < 0 ? -errno : 0;
	close(ready[1]);
	if (rc == 0) {
		struct pollfd pf = { .fd = ready[0], .events = POLLIN };

		do
			r = poll(&pf, 1, NETWORK_READY_MS);
		while (r < 0 && errno == EINTR);
		if (r <= 0 || read(ready[0], &c, 1) != 1) {
			kill(pid, SIGKILL);
			rc = wait_child(pid);
			snprintf(err, errlen, "slirp4netns (%s) did not become ready: %s",
				 p->slirp4netns, r <= 0 ? "it took too long" : strerror(-rc));
			rc = -EIO;
		}
	} else {
		snprintf(err, errlen, "starting slirp4netns: %s", strerror(-rc));
	}
	close(ready[0]);
	if (rc == 0)
		n->slirp = pid;
	return rc;
}

/* The namespace's counters, the init's /proc/<init>/net files, kept
 * open: each check reads them again from their start. 0 or -errno. */
static int open_counters(struct network *n, pid_t init, char *err, size_t errlen)
{
	static const char *const names[] = { "dev", "sockstat", "sockstat6" };
	int *fds[] = { &n->dev, &n->sockstat, &n->sockstat6 };

	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		char path[64];

		snprintf(path, sizeof(path), "/proc/%d/net/%s", (int)init, names[i]);
		*fds[i] = open(path, O_RDONLY | O_CLOEXEC);
		if (*fds[i] < 0) {
			int rc = -errno;

			snprintf(err, errlen, "opening %s: %s", path, strerror(-rc));
			return rc;
		}
	}
	return 0;
}

static void network_free(struct network *n)
{
	int fds[] = { n->ns[0], n->ns[1], n->dev, n->sockstat, n->sockstat6 };

	for (size_t i = 0; i < ARRAY_SIZE(fds); i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(n);
}

int network_open(struct jail *j, const struct network_policy *p, struct network **out,
		 char *err, size_t errlen)
{
	struct network *n;
	int ns[2] = { -1, -1 }, rc;
	pid_t init;

	reap_dying();
	/* a job whose language builds nothing has not waited for it yet */
	rc = jail_ready(j, JAIL_READY_MS, err, errlen);
	if (rc < 0)
		return rc;
	init = jail_init_pid(j);
	if (init <= 0) {
		snprintf(err, errlen, "the jail's init is not known: no network for it");
		return -ESRCH;
	}
	rc = jail_namespaces(j, ns, err, errlen);
	if (rc < 0)
		return rc;
	n = xcalloc(1, sizeof(*n));
	n->jail = j;
	n->ns[0] = ns[0];
	n->ns[1] = ns[1];
	n->max_bytes = p->max_bytes;
	n->max_connections = p->max_connections;
	n->dev = n->sockstat = n->sockstat6 = -1;
	rc = open_counters(n, init, err, errlen);
	if (rc == 0)
		rc = set_routes(j, p, ns, err, errlen);
	if (rc == 0)
		rc = start_slirp(n, j, p, ns, err, errlen);
	if (rc < 0) {
		network_free(n);
		return rc;
	}
	*out = n;
	return 0;
}

/* The interface's bytes, headers included: what it received from
 * slirp4netns the programs received. */
static void read_bytes(struct network *n)
{
	char buf[4096], *line;
	unsigned long long rx, tx;

	if (read_small_fd(n->dev, buf, sizeof(buf)) < 0 ||
	    !(line = strstr(buf, NETWORK_IFACE ":")))
		return;
	if (sscanf(line + strlen(NETWORK_IFACE ":"), "%llu %*u %*u %*u %*u %*u %*u %*u %llu",
		   &rx, &tx) != 2)
		return;
	n->u.bytes_received = rx;
	n->u.bytes_sent = tx;
}

long network_sockstat_inuse(const char *text, const char *proto)
{
	size_t len = strlen(proto);
	const char *line = text;

	while (line && (strncmp(line, proto, len) != 0 || strncmp(line + len, ": inuse ", 8) != 0)) {
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	if (line) {
		const char *digits = line + len + 8;
		unsigned long v;
		char *end;

		errno = 0;
		v = strtoul(digits, &end, 10);
		if (errno == 0 && end != digits && *digits >= '0' && *digits <= '9' && v <= LONG_MAX)
			return (long)v;
	}
	return -1;
}

/* The namespace's TCP sockets in use, IPv4 and IPv6: its sockstat files,
 * whose counts are the namespace's own, read at once; /proc/net/tcp
 * would walk the host's whole connection table (3.4 ms a read here). */
static unsigned count_connections(const struct network *n)
{
	char buf[1024];
	long v4 = -1, v6 = -1;

	if (read_small_fd(n->sockstat, buf, sizeof(buf)) > 0)
		v4 = network_sockstat_inuse(buf, "TCP");
	if (read_small_fd(n->sockstat6, buf, sizeof(buf)) > 0)
		v6 = network_sockstat_inuse(buf, "TCP6");
	return (unsigned)(v4 > 0 ? v4 : 0) + (unsigned)(v6 > 0 ? v6 : 0);
}

/* The network ends: its stack killed, unless it is gone already, and the
 * programs' connections to other machines aborted. */
static void cut(struct network *n, enum network_cut why)
{
	if (n->slirp)
		bury(n->slirp);
	n->slirp = 0;
	n->u.cut = why;
	abort_connections(n);
}

void network_check(struct network *n)
{
	if (!n || !n->slirp)
		return;
	read_bytes(n);
	if (n->u.bytes_sent + n->u.bytes_received > n->max_bytes) {
		cut(n, NETWORK_CUT_BYTES);
		return;
	}
	if (count_connections(n) > n->max_connections) {
		cut(n, NETWORK_CUT_CONNECTIONS);
		return;
	}
	if (waitpid(n->slirp, NULL, WNOHANG) == n->slirp) {
		n->slirp = 0;
		cut(n, NETWORK_CUT_FAILED);
	}
}

void network_close(struct network *n, struct network_usage *u)
{
	if (!n)
		return;
	network_check(n);
	if (n->slirp)
		bury(n->slirp);
	if (u)
		*u = n->u;
	network_free(n);
}
