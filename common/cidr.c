#include "autoconf.h"

#include "common/cidr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

const char *const cidr_metadata[] = {
	"169.254.169.254", /* AWS, GCP, Azure, Oracle, DigitalOcean... */
	"169.254.170.2",   /* AWS ECS task metadata */
	"100.100.100.200", /* Alibaba Cloud */
	"168.63.129.16",   /* Azure's WireServer */
	"fd00:ec2::254",   /* AWS over IPv6 */
};
const size_t cidr_metadata_count = sizeof(cidr_metadata) / sizeof(cidr_metadata[0]);

const char *const cidr_private[] = {
	"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "198.18.0.0/15",
	"fc00::/7",
};
const size_t cidr_private_count = sizeof(cidr_private) / sizeof(cidr_private[0]);

int cidr_parse(const char *s, size_t len, struct cidr *out)
{
	char text[INET6_ADDRSTRLEN + 8], *slash, *end;
	unsigned long prefix;

	if (len == 0 || len >= sizeof(text))
		return -EINVAL;
	memcpy(text, s, len);
	text[len] = '\0';
	slash = strchr(text, '/');
	if (slash)
		*slash++ = '\0';
	memset(out, 0, sizeof(*out));
	if (inet_pton(AF_INET, text, out->addr) == 1)
		out->family = AF_INET;
	else if (inet_pton(AF_INET6, text, out->addr) == 1)
		out->family = AF_INET6;
	else
		return -EINVAL;
	prefix = out->family == AF_INET ? 32 : 128;
	if (slash) {
		if (*slash < '0' || *slash > '9')
			return -EINVAL;
		errno = 0;
		prefix = strtoul(slash, &end, 10);
		if (errno || *end || prefix > (out->family == AF_INET ? 32u : 128u))
			return -EINVAL;
	}
	out->prefix = (unsigned)prefix;
	return 0;
}

int cidr_list_parse(const char *list, struct cidr_list *out, char *err, size_t errlen)
{
	const char *p = list ? list : "";

	memset(out, 0, sizeof(*out));
	for (;;) {
		size_t n;

		p += strspn(p, ", \t");
		n = strcspn(p, ", \t");
		if (!n)
			return 0;
		if (out->n == CIDR_LIST_MAX) {
			snprintf(err, errlen, "more than %d networks", CIDR_LIST_MAX);
			return -EINVAL;
		}
		if (cidr_parse(p, n, &out->v[out->n]) < 0) {
			snprintf(err, errlen, "'%.*s' is not a network (a.b.c.d/n or x:y::/n)",
				 (int)(n > 64 ? 64 : n), p);
			return -EINVAL;
		}
		out->n++;
		p += n;
	}
}

bool cidr_holds(const struct cidr *c, int family, const unsigned char *addr)
{
	unsigned full = c->prefix / 8, rest = c->prefix % 8;

	if (c->family != family || memcmp(c->addr, addr, full) != 0)
		return false;
	return !rest || ((c->addr[full] ^ addr[full]) & (0xffu << (8 - rest)) & 0xffu) == 0;
}

bool cidr_list_holds(const struct cidr_list *list, int family, const unsigned char *addr)
{
	for (size_t i = 0; list && i < list->n; i++)
		if (cidr_holds(&list->v[i], family, addr))
			return true;
	return false;
}
