/*
 * The routes that make a job's network refuse what it must: the fixed
 * ranges, split around what the operator lets through, and this host's
 * own addresses, which nothing lets through.
 */
#include "autoconf.h"

#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "common/cidr.h"
#include "worker/sandbox/network.h"

static struct network_route routes[NETWORK_MAX_ROUTES];

static uint32_t ip(const char *s)
{
	struct in_addr a;

	cr_assert_eq(inet_pton(AF_INET, s, &a), 1, "%s", s);
	return ntohl(a.s_addr);
}

/* Whether the routes refuse addr: by the longest prefix that holds it,
 * as the kernel picks (every route here refuses). */
static bool refused(int n, uint32_t addr)
{
	for (int i = 0; i < n; i++) {
		uint32_t mask = routes[i].prefix ? ~0u << (32 - routes[i].prefix) : 0;

		if ((addr & mask) == routes[i].addr)
			return true;
	}
	return false;
}

static int make(const char *allow, const uint32_t *host, size_t nhost)
{
	struct cidr_list list;
	char err[128];
	int n;

	cr_assert_eq(cidr_list_parse(allow, &list, err, sizeof(err)), 0, "%s", err);
	n = network_routes(&list, host, nhost, routes, NETWORK_MAX_ROUTES);
	cr_assert_gt(n, 0);
	return n;
}

Test(network, without_an_allow_list_only_the_internet_is_reached)
{
	uint32_t host[] = { ip("203.0.113.7") };
	int n = make(NULL, host, 1);
	static const char *const refuse[] = {
		"10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.0.1", "100.64.0.1",
		"127.0.0.1", "0.0.0.0", "169.254.169.254", "169.254.170.2", "100.100.100.200",
		"168.63.129.16", "224.0.0.1", "255.255.255.255", "198.18.0.1", "192.0.2.1",
		"203.0.113.7",
	};
	static const char *const reach[] = {
		"1.1.1.1", "8.8.8.8", "151.101.0.223", "172.32.0.1", "172.15.255.255",
		"100.128.0.1", "168.63.129.17", "11.0.0.1",
	};

	for (size_t i = 0; i < sizeof(refuse) / sizeof(refuse[0]); i++)
		cr_assert(refused(n, ip(refuse[i])), "%s must be refused", refuse[i]);
	for (size_t i = 0; i < sizeof(reach) / sizeof(reach[0]); i++)
		cr_assert_not(refused(n, ip(reach[i])), "%s must be reached", reach[i]);
}

Test(network, an_allowed_private_network_is_reached_and_the_rest_of_its_range_is_not)
{
	int n = make("10.213.0.0/30", NULL, 0);

	cr_assert_not(refused(n, ip("10.213.0.2")));
	cr_assert_not(refused(n, ip("10.213.0.3")));
	cr_assert(refused(n, ip("10.213.0.4")));
	cr_assert(refused(n, ip("10.0.0.1")));
	cr_assert(refused(n, ip("10.255.255.255")));
	/* the range is split, not dropped: at most one route a bit */
	cr_assert_lt(n, 64);
}

Test(network, no_allow_list_lifts_loopback_link_local_metadata_or_this_host)
{
	uint32_t host[] = { ip("10.213.0.1") };
	int n = make("10.213.0.0/24,127.0.0.0/8,169.254.0.0/16,100.64.0.0/10", host, 1);

	cr_assert_not(refused(n, ip("10.213.0.2")));
	cr_assert(refused(n, ip("10.213.0.1")), "this host's own address");
	cr_assert(refused(n, ip("127.0.0.1")));
	cr_assert(refused(n, ip("169.254.169.254")));
	cr_assert(refused(n, ip("100.100.100.200")), "Alibaba's metadata, inside 100.64/10");
	cr_assert_not(refused(n, ip("100.64.0.1")), "the rest of 100.64/10 was allowed");
}

Test(network, an_allowed_network_larger_than_a_range_lifts_it_whole)
{
	int n = make("172.0.0.0/8", NULL, 0);

	cr_assert_not(refused(n, ip("172.16.5.5")));
	cr_assert(refused(n, ip("10.0.0.1")));
}

Test(network, ipv6_networks_in_the_allow_list_change_nothing)
{
	int plain = make(NULL, NULL, 0);
	int with6 = make("fd00::/8", NULL, 0);

	cr_assert_eq(plain, with6);
}

Test(network, too_small_an_array_is_said)
{
	struct cidr_list list = { 0 };

	cr_assert_eq(network_routes(&list, NULL, 0, routes, 3), -E2BIG);
}

Test(network, cut_names)
{
	cr_assert_null(network_cut_name(NETWORK_CUT_NONE));
	cr_assert_str_eq(network_cut_name(NETWORK_CUT_BYTES), "bytes");
	cr_assert_str_eq(network_cut_name(NETWORK_CUT_CONNECTIONS), "connections");
	cr_assert_str_eq(network_cut_name(NETWORK_CUT_FAILED), "failed");
}

/* As a namespace's /proc/net/sockstat and sockstat6 read. */
static const char sockstat[] = "sockets: used 212\n"
			       "TCP: inuse 7 orphan 1 tw 3 alloc 40 mem 2\n"
			       "UDP: inuse 2 mem 0\n"
			       "UDPLITE: inuse 0\n"
			       "RAW: inuse 0\n"
			       "FRAG: inuse 0 memory 0\n";
static const char sockstat6[] = "TCP6: inuse 12\n"
				"UDP6: inuse 1\n"
				"UDPLITE6: inuse 0\n"
				"RAW6: inuse 0\n"
				"FRAG6: inuse 0 memory 0\n";

Test(network, sockstat_gives_a_protocol_s_sockets_in_use)
{
	cr_assert_eq(network_sockstat_inuse(sockstat, "TCP"), 7);
	cr_assert_eq(network_sockstat_inuse(sockstat, "UDP"), 2);
	cr_assert_eq(network_sockstat_inuse(sockstat6, "TCP6"), 12);
	/* a line's prefix is not another protocol's */
	cr_assert_eq(network_sockstat_inuse(sockstat6, "TCP"), -1);
	cr_assert_eq(network_sockstat_inuse(sockstat6, "UDPLITE6"), 0);
}

Test(network, sockstat_without_the_line_or_its_count_is_minus_one)
{
	cr_assert_eq(network_sockstat_inuse("", "TCP"), -1);
	cr_assert_eq(network_sockstat_inuse("TCP: inuse \n", "TCP"), -1);
	cr_assert_eq(network_sockstat_inuse("TCP: inuse -3\n", "TCP"), -1);
	cr_assert_eq(network_sockstat_inuse("TCP: inuse 99999999999999999999999\n", "TCP"), -1);
	cr_assert_eq(network_sockstat_inuse("xTCP: inuse 4\n", "TCP"), -1);
	cr_assert_eq(network_sockstat_inuse("sockets: used 3\nTCP: inuse 4", "TCP"), 4);
}
