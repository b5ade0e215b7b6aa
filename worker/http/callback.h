/*
 * An HTTP callback: a finished submission PUT to the URL its client gave
 * (Judge0's callback_url), with libcurl. The URL is a client's, so the
 * request is bounded and goes nowhere it should not: http or https only,
 * no redirect followed, no proxy, a time limit on the whole exchange, and
 * no connection to a cloud's metadata service ever, nor to a loopback,
 * link-local, unspecified, multicast or broadcast address, an address of
 * this host or a private range (checked on the address actually
 * connected to, after resolution, so a name that resolves there is
 * refused too) unless the operator allows it.
 */
#ifndef GOBOXD_CALLBACK_H
#define GOBOXD_CALLBACK_H

#include <stdbool.h>
#include <stddef.h>

#include "common/cidr.h"

struct sockaddr;

struct callback_opts {
	unsigned timeout_ms;   /* the whole exchange, connecting included; > 0 */
	/* loopback and link-local addresses, and this host's own, allowed */
	bool allow_local;
	/* private ranges allowed (NULL: none) */
	const struct cidr_list *allow_nets;
	/* sent as Idempotency-Key (NULL: none): the same for every try and
	 * every node that sends this callback, so that its receiver can tell
	 * a repeat; letters, digits and '-' only */
	const char *idempotency_key;
};

/* curl_global_init: call once, before any thread starts (it is not
 * thread-safe). 0 or -EIO. */
int callback_global_init(void);
/* Its counterpart, at exit, after every thread that used callback_put. */
void callback_global_cleanup(void);

/* Whether url is one a callback may name: http:// or https://, a host, no
 * user name or password, no whitespace or control byte, at most 2048
 * bytes. 0, or -EINVAL with the reason in err (-EIO: libcurl could not
 * allocate). */
int callback_url_check(const char *url, char *err, size_t errlen);

/*
 * Whether a callback may not connect to sa (salen bytes): anything but
 * AF_INET and AF_INET6 always; the metadata services of the major clouds
 * always (169.254.169.254, 169.254.170.2, 100.100.100.200,
 * 168.63.129.16, fd00:ec2::254); unless allow_local, IPv4 0/8, 127/8,
 * 169.254/16, 224/4 and 255.255.255.255, IPv6 ::, ::1, fe80::/10 and
 * ff00::/8; unless allow_nets holds them, the private ranges (10/8,
 * 172.16/12, 192.168/16, 100.64/10, 198.18/15, fc00::/7); IPv4 ones
 * written as ::ffff:a.b.c.d alike. When refused, *why says which rule
 * ("loopback", "private"...). Pure.
 */
bool callback_addr_refused(const struct sockaddr *sa, size_t salen, bool allow_local,
			   const struct cidr_list *allow_nets, const char **why);
/* Whether sa is an address of one of this host's interfaces (getifaddrs):
 * a callback there would reach the host's own services. */
bool callback_addr_is_host(const struct sockaddr *sa, size_t salen);

/*
 * PUT body (len bytes, Content-Type: application/json) to url, once.
 * 0 when the server answered 2xx; -EINVAL when callback_url_check refuses
 * url or timeout_ms is 0; -EACCES when the address is refused; -ETIMEDOUT;
 * -EPROTO for another status (a redirect included), with the status in
 * err; -EIO for another failure. The reason is in err. Safe to call from
 * several threads at once once callback_global_init has run.
 */
int callback_put(const char *url, const char *body, size_t len, const struct callback_opts *o,
		 char *err, size_t errlen);

#endif
