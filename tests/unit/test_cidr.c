#include "autoconf.h"

#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "common/cidr.h"

static bool holds(const char *net, const char *addr)
{
	struct cidr c;
	unsigned char a[16];
	int family = strchr(addr, ':') ? AF_INET6 : AF_INET;

	cr_assert_eq(cidr_parse(net, strlen(net), &c), 0, "%s", net);
	cr_assert_eq(inet_pton(family, addr, a), 1, "%s", addr);
	return cidr_holds(&c, family, a);
}

Test(cidr, prefixes_of_each_length)
{
	cr_expect(holds("10.0.0.0/8", "10.255.1.2"));
	cr_expect_not(holds("10.0.0.0/8", "11.0.0.0"));
	cr_expect(holds("172.16.0.0/12", "172.31.255.255"));
	cr_expect_not(holds("172.16.0.0/12", "172.32.0.0"));
	cr_expect(holds("1.2.3.4", "1.2.3.4"), "an address alone is /32");
	cr_expect_not(holds("1.2.3.4", "1.2.3.5"));
	cr_expect(holds("0.0.0.0/0", "8.8.8.8"));
	cr_expect(holds("fd00::/8", "fdff::1"));
	cr_expect_not(holds("fd00::/8", "fe00::1"));
	cr_expect(holds("2001:db8::/33", "2001:db8:7fff::1"));
	cr_expect_not(holds("2001:db8::/33", "2001:db8:8000::1"));
	cr_expect_not(holds("10.0.0.0/8", "::ffff:10.0.0.1"), "families never mix");
}

Test(cidr, lists_and_their_errors)
{
	struct cidr_list l;
	char err[128] = "";

	cr_expect_eq(cidr_list_parse(NULL, &l, err, sizeof(err)), 0);
	cr_expect_eq(l.n, 0);
	cr_expect_eq(cidr_list_parse(" 10.0.0.0/8,, fd00::/8\t192.168.1.1 ", &l, err, sizeof(err)), 0);
	cr_expect_eq(l.n, 3);
	for (const char *const *bad = (const char *const[]){ "10.0.0.0/33", "fd00::/129", "10.0.0/8",
							       "10.0.0.0/", "10.0.0.0/+8", "x",
							       "10.0.0.0/8x", NULL };
	     *bad; bad++) {
		cr_expect_eq(cidr_list_parse(*bad, &l, err, sizeof(err)), -EINVAL, "%s", *bad);
		cr_expect_not_null(strstr(err, "is not a network"), "%s: %s", *bad, err);
	}
}
