/*
 * Networks as CIDRs ("10.1.0.0/16", "fd00:1::/64", or an address alone),
 * and whether an address is in one: pure, for the ranges an operator
 * names (--callback-allow-networks) and the ranges goboxd refuses.
 */
#ifndef GOBOXD_CIDR_H
#define GOBOXD_CIDR_H

#include <stdbool.h>
#include <stddef.h>

#define CIDR_LIST_MAX 64

struct cidr {
	int family;            /* AF_INET or AF_INET6 */
	unsigned char addr[16]; /* network order: 4 or 16 bytes */
	unsigned prefix;
};

struct cidr_list {
	size_t n;
	struct cidr v[CIDR_LIST_MAX];
};

/* The clouds' metadata services: never reached from a callback nor from
 * a job's network, whatever the operator allows. */
extern const char *const cidr_metadata[];
extern const size_t cidr_metadata_count;
/* Private ranges: another machine of the operator's, reached from inside
 * its network on a client's say; only where the operator allows it. */
extern const char *const cidr_private[];
extern const size_t cidr_private_count;

/* One CIDR of len bytes: 0, or -EINVAL. */
int cidr_parse(const char *s, size_t len, struct cidr *out);
/* A comma- or blank-separated list into out (NULL or "": none). 0, or
 * -EINVAL with the bad one in err. */
int cidr_list_parse(const char *list, struct cidr_list *out, char *err, size_t errlen);
/* Whether the address (family, its 4 or 16 bytes) is in c; in one of list's. */
bool cidr_holds(const struct cidr *c, int family, const unsigned char *addr);
bool cidr_list_holds(const struct cidr_list *list, int family, const unsigned char *addr);

#endif
