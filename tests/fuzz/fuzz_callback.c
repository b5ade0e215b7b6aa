/*
 * libFuzzer target: what decides where a callback may go. The input is
 * three parts split at NUL bytes: a callback URL (callback_url_check), an
 * operator's list of allowed networks (cidr_list_parse), and the bytes of
 * an address (4: IPv4, 16: IPv6) that callback_addr_refused judges under
 * that list, with and without --callback-allow-local. Besides not
 * crashing, each answer is held to what callback.h promises:
 *   - an accepted URL is http:// or https://, at most 2048 bytes, without
 *     a blank or a control byte;
 *   - a cloud's metadata address is refused whatever the options;
 *   - an IPv4 address and the same one written as ::ffff:a.b.c.d get the
 *     same answer;
 *   - allowing the local addresses or more networks never refuses an
 *     address that was let through without them.
 */
#include "autoconf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/cidr.h"
#include "worker/http/callback.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz_callback: %s: \"%.300s\"\n", what, detail);
	abort();
}

static void check_url(const char *url)
{
	char err[256];
	size_t len = strlen(url);

	if (callback_url_check(url, err, sizeof(err)) != 0)
		return;
	if (strncasecmp(url, "http://", 7) != 0 && strncasecmp(url, "https://", 8) != 0)
		fail("a URL of another scheme accepted", url);
	if (len > 2048)
		fail("a URL over 2048 bytes accepted", url);
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)url[i] <= ' ' || url[i] == 0x7f)
			fail("a URL with a blank or a control byte accepted", url);
}

static bool refused4(const unsigned char *a, bool local, const struct cidr_list *nets)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	const char *why = NULL;

	memcpy(&sin.sin_addr, a, 4);
	return callback_addr_refused((const struct sockaddr *)&sin, sizeof(sin), local, nets, &why);
}

static bool refused6(const unsigned char *a, bool local, const struct cidr_list *nets)
{
	struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6 };
	const char *why = NULL;
	bool r;

	memcpy(&sin6.sin6_addr, a, 16);
	r = callback_addr_refused((const struct sockaddr *)&sin6, sizeof(sin6), local, nets, &why);
	if (r && !why)
		fail("refused without a reason", "");
	return r;
}

static bool metadata(const unsigned char *a, size_t n)
{
	static const char *const v4[] = { "169.254.169.254", "169.254.170.2", "100.100.100.200",
					  "168.63.129.16" };
	unsigned char b[16];

	if (n == 4) {
		for (size_t i = 0; i < sizeof(v4) / sizeof(v4[0]); i++)
			if (inet_pton(AF_INET, v4[i], b) == 1 && !memcmp(a, b, 4))
				return true;
		return false;
	}
	return inet_pton(AF_INET6, "fd00:ec2::254", b) == 1 && !memcmp(a, b, 16);
}

static void check_addr(const unsigned char *a, size_t n, const struct cidr_list *nets)
{
	static const struct cidr_list none;
	unsigned char mapped[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	for (int local = 0; local <= 1; local++) {
		bool plain = n == 4 ? refused4(a, local, nets) : refused6(a, local, nets);
		bool bare = n == 4 ? refused4(a, local, &none) : refused6(a, local, &none);

		if (metadata(a, n) && !plain)
			fail("a cloud's metadata address let through", "");
		if (plain && !bare)
			fail("an allowed network refused what none let through", "");
		if (local && plain && !(n == 4 ? refused4(a, false, nets) : refused6(a, false, nets)))
			fail("allowing the local addresses refused more", "");
		if (n == 4) {
			memcpy(mapped + 12, a, 4);
			if (refused6(mapped, local, nets) != plain)
				fail("::ffff:a.b.c.d judged otherwise than a.b.c.d", "");
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *in = malloc(size + 2), *url, *list, err[256];
	const unsigned char *addr;
	struct cidr_list nets;
	size_t rest;

	if (!in)
		abort();
	memcpy(in, data, size);
	in[size] = in[size + 1] = '\0';
	url = in;
	list = url + strlen(url) + 1;
	check_url(url);
	if (list > in + size)
		goto out;
	if (cidr_list_parse(list, &nets, err, sizeof(err)) < 0)
		memset(&nets, 0, sizeof(nets));
	addr = (const unsigned char *)list + strlen(list) + 1;
	rest = addr <= (const unsigned char *)in + size ?
		       (size_t)((const unsigned char *)in + size - addr) : 0;
	if (rest >= 16)
		check_addr(addr, 16, &nets);
	if (rest >= 4)
		check_addr(addr, 4, &nets);
out:
	free(in);
	return 0;
}
