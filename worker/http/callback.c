#include "autoconf.h"

#include "worker/http/callback.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "common/cidr.h"
#include "common/util.h"

/* Longer than any callback a client means; it also bounds what we log */
#define CALLBACK_URL_MAX 2048
/* The answer is read only for its status; the rest is counted, then cut */
#define CALLBACK_RESPONSE_MAX (64 * 1024)

/* One callback_put's state, shared with libcurl's callbacks. */
struct put_ctx {
	bool allow_local;
	const struct cidr_list *allow_nets;
	bool refused;                       /* an address was refused */
	const char *refused_why;            /* the first refusal's rule */
	char refused_addr[INET6_ADDRSTRLEN];
	unsigned nopened;                   /* sockets opened */
	size_t nresponse;                   /* answer bytes seen */
	bool response_cut;                  /* more than CALLBACK_RESPONSE_MAX */
};

int callback_global_init(void)
{
	return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -EIO;
}

void callback_global_cleanup(void)
{
	curl_global_cleanup();
}

/* Bytes a URL may not hold: none of them can be sent as they are, and a
 * parser that "fixes" them is how two parsers come to disagree on a host. */
static bool url_byte_bad(unsigned char c)
{
	return c <= 0x20 || c == 0x7f;
}

/* Whether url starts with prefix (any case) and then something not a slash. */
static bool url_has_prefix(const char *url, const char *prefix)
{
	size_t n = strlen(prefix);

	return strncasecmp(url, prefix, n) == 0 && url[n] != '/' && url[n] != '\\';
}

/*
 * Parse url with libcurl's own parser (the one that will connect), so the
 * host checked is the host used. 0 and the handle in *out, or -EINVAL.
 */
static int url_parse(const char *url, CURLU **out, char *err, size_t errlen)
{
	char *scheme = NULL, *host = NULL, *user = NULL, *pass = NULL;
	CURLUcode uc;
	CURLU *u;
	size_t len;
	int rc = -EINVAL;

	if (!url) {
		snprintf(err, errlen, "no URL");
		return -EINVAL;
	}
	len = strnlen(url, CALLBACK_URL_MAX + 1);
	if (len > CALLBACK_URL_MAX) {
		snprintf(err, errlen, "URL longer than %d bytes", CALLBACK_URL_MAX);
		return -EINVAL;
	}
	for (size_t i = 0; i < len; i++) {
		if (url_byte_bad((unsigned char)url[i])) {
			snprintf(err, errlen, "URL has whitespace or a control byte at offset %zu",
				 i);
			return -EINVAL;
		}
	}
	/* libcurl also takes "http:/host" and "http:///host"; only the
	 * plain form is a URL a client means */
	if (!url_has_prefix(url, "http://") && !url_has_prefix(url, "https://")) {
		snprintf(err, errlen, "URL does not start with http:// or https:// and a host");
		return -EINVAL;
	}
	u = curl_url();
	if (!u) {
		snprintf(err, errlen, "curl_url failed");
		return -EIO;
	}
	uc = curl_url_set(u, CURLUPART_URL, url, 0);
	if (uc != CURLUE_OK) {
		snprintf(err, errlen, "not a URL: %s", curl_url_strerror(uc));
		goto out;
	}
	if (curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    (strcasecmp(scheme, "http") != 0 && strcasecmp(scheme, "https") != 0)) {
		snprintf(err, errlen, "URL scheme %s: only http and https",
			 scheme ? scheme : "(none)");
		goto out;
	}
	if (curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK || !*host) {
		snprintf(err, errlen, "URL has no host");
		goto out;
	}
	/* credentials in a callback URL would be sent to whoever it names,
	 * and written to our logs with it */
	if (curl_url_get(u, CURLUPART_USER, &user, 0) != CURLUE_NO_USER ||
	    curl_url_get(u, CURLUPART_PASSWORD, &pass, 0) != CURLUE_NO_PASSWORD) {
		snprintf(err, errlen, "URL has a user name or password");
		goto out;
	}
	*out = u;
	u = NULL;
	rc = 0;
out:
	curl_free(scheme);
	curl_free(host);
	curl_free(user);
	curl_free(pass);
	curl_url_cleanup(u);
	return rc;
}

int callback_url_check(const char *url, char *err, size_t errlen)
{
	CURLU *u = NULL;
	int rc;

	rc = url_parse(url, &u, err, errlen);
	curl_url_cleanup(u);
	return rc;
}

static bool in_list(const char *const *list, size_t n, int family, const unsigned char *a)
{
	struct cidr net;

	for (size_t i = 0; i < n; i++)
		if (cidr_parse(list[i], strlen(list[i]), &net) == 0 && cidr_holds(&net, family, a))
			return true;
	return false;
}

/* a is in host order */
static const char *v4_refused(uint32_t a)
{
	/* "this network": Linux connects 0.0.0.0 to the local host */
	if (a >> 24 == 0)
		return "unspecified";
	if (a >> 24 == 127)
		return "loopback";
	/* cloud metadata services live at 169.254.169.254 */
	if (a >> 16 == 0xa9fe)
		return "link-local";
	if (a >> 28 == 0xe)
		return "multicast";
	if (a == 0xffffffff)
		return "broadcast";
	return NULL;
}

/* a is not IPv4-mapped: addr_bytes made those IPv4 */
static const char *v6_refused(const struct in6_addr *a)
{
	if (IN6_IS_ADDR_UNSPECIFIED(a))
		return "unspecified";
	if (IN6_IS_ADDR_LOOPBACK(a))
		return "loopback";
	if (IN6_IS_ADDR_LINKLOCAL(a))
		return "link-local";
	if (IN6_IS_ADDR_MULTICAST(a))
		return "multicast";
	return NULL;
}

/*
 * The address an IPv4-mapped IPv6 one stands for: a dual-stack socket
 * reaches that IPv4 address itself. *family and a (16 bytes) are set.
 */
static void unmap(int *family, unsigned char *a)
{
	static const unsigned char mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	if (*family == AF_INET6 && memcmp(a, mapped, sizeof(mapped)) == 0) {
		memmove(a, a + 12, 4);
		*family = AF_INET;
	}
}

static bool is_metadata(int family, const unsigned char *a)
{
	return in_list(cidr_metadata, cidr_metadata_count, family, a);
}

static bool is_private(int family, const unsigned char *a, const struct cidr_list *allow_nets)
{
	return in_list(cidr_private, cidr_private_count, family, a) &&
	       !cidr_list_holds(allow_nets, family, a);
}

/* sa's address as bytes (IPv4-mapped ones as IPv4): false for another
 * family or a short sockaddr. */
static bool addr_bytes(const struct sockaddr *sa, size_t salen, int *family, unsigned char *a)
{
	struct sockaddr_in6 s6;
	struct sockaddr_in s4;
	sa_family_t f;

	if (!sa || salen < sizeof(f))
		return false;
	memcpy(&f, &sa->sa_family, sizeof(f));
	if (f == AF_INET && salen >= sizeof(s4)) {
		memcpy(&s4, sa, sizeof(s4));
		memcpy(a, &s4.sin_addr, 4);
	} else if (f == AF_INET6 && salen >= sizeof(s6)) {
		memcpy(&s6, sa, sizeof(s6));
		memcpy(a, &s6.sin6_addr, 16);
	} else {
		return false;
	}
	*family = f;
	unmap(family, a);
	return true;
}

bool callback_addr_refused(const struct sockaddr *sa, size_t salen, bool allow_local,
			   const struct cidr_list *allow_nets, const char **why)
{
	unsigned char a[16];
	const char *rule;
	int fam;

	if (!addr_bytes(sa, salen, &fam, a)) {
		*why = "not an internet address";
		return true;
	}
	if (fam == AF_INET) {
		uint32_t v4;

		memcpy(&v4, a, sizeof(v4));
		rule = v4_refused(ntohl(v4));
	} else {
		struct in6_addr v6;

		memcpy(&v6, a, sizeof(v6));
		rule = v6_refused(&v6);
	}
	/* no operator lifts this one; local rules, then private ranges */
	if (is_metadata(fam, a))
		rule = "a cloud's metadata service";
	else if (allow_local)
		rule = NULL;
	if (!rule && is_private(fam, a, allow_nets))
		rule = "private";
	if (!rule)
		return false;
	*why = rule;
	return true;
}

bool callback_addr_is_host(const struct sockaddr *sa, size_t salen)
{
	struct ifaddrs *list, *i;
	unsigned char want[16], have[16];
	int want_family, have_family;
	bool found = false;

	if (!addr_bytes(sa, salen, &want_family, want) || getifaddrs(&list) < 0)
		return false;
	for (i = list; i && !found; i = i->ifa_next) {
		if (!i->ifa_addr)
			continue;
		if (!addr_bytes(i->ifa_addr, i->ifa_addr->sa_family == AF_INET ?
						     sizeof(struct sockaddr_in) :
						     sizeof(struct sockaddr_in6),
				&have_family, have))
			continue;
		found = have_family == want_family &&
			!memcmp(have, want, want_family == AF_INET ? 4 : 16);
	}
	freeifaddrs(list);
	return found;
}

static void put_note_refused(struct put_ctx *c, const struct curl_sockaddr *a, const char *why)
{
	struct sockaddr_in6 s6;
	struct sockaddr_in s4;
	const char *shown = NULL;

	if (c->refused)
		return;
	c->refused = true;
	c->refused_why = why;
	/* a->addr heads a buffer of a->addrlen bytes in libcurl */
	if (a->family == AF_INET && a->addrlen >= sizeof(s4)) {
		memcpy(&s4, &a->addr, sizeof(s4));
		shown = inet_ntop(AF_INET, &s4.sin_addr, c->refused_addr, sizeof(c->refused_addr));
	} else if (a->family == AF_INET6 && a->addrlen >= sizeof(s6)) {
		memcpy(&s6, &a->addr, sizeof(s6));
		shown = inet_ntop(AF_INET6, &s6.sin6_addr, c->refused_addr,
				  sizeof(c->refused_addr));
	}
	if (!shown)
		snprintf(c->refused_addr, sizeof(c->refused_addr), "(family %d)", a->family);
}

/*
 * libcurl asks here for each address it is about to connect to, after
 * resolving, happy-eyeballs included: the one place where the address
 * checked is the address used. CURL_SOCKET_BAD makes it try the next.
 */
static curl_socket_t put_opensocket(void *clientp, curlsocktype purpose, struct curl_sockaddr *a)
{
	struct put_ctx *c = clientp;
	const char *why;
	int fd;

	if (purpose != CURLSOCKTYPE_IPCXN || a->family != a->addr.sa_family) {
		put_note_refused(c, a, "not an outgoing connection");
		return CURL_SOCKET_BAD;
	}
	if (callback_addr_refused(&a->addr, a->addrlen, c->allow_local, c->allow_nets, &why)) {
		put_note_refused(c, a, why);
		return CURL_SOCKET_BAD;
	}
	/* this host's own addresses reach its own services (goboxd's /metrics) */
	if (!c->allow_local && callback_addr_is_host(&a->addr, a->addrlen)) {
		put_note_refused(c, a, "this host");
		return CURL_SOCKET_BAD;
	}
	fd = socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
	if (fd < 0)
		return CURL_SOCKET_BAD;
	c->nopened++;
	return fd;
}

/* Only the status matters: count the answer, and stop at the limit. */
static size_t put_discard(char *data, size_t size, size_t nmemb, void *userdata)
{
	struct put_ctx *c = userdata;
	size_t n = size * nmemb;

	if (n > CALLBACK_RESPONSE_MAX - c->nresponse) {
		c->response_cut = true;
		return 0;   /* anything but n ends the transfer */
	}
	c->nresponse += n;
	return n;
}

/*
 * The options that bound the request. Each is checked: a libcurl that
 * refused one would leave the request less bounded than promised.
 */
static CURLcode put_bound(CURL *h, const struct callback_opts *o, struct put_ctx *c)
{
	CURLcode e = CURLE_OK;

	e = e ?: curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	e = e ?: curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	e = e ?: curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
	/* "" overrides http_proxy and friends from the environment */
	e = e ?: curl_easy_setopt(h, CURLOPT_PROXY, "");
	e = e ?: curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)o->timeout_ms);
	e = e ?: curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)o->timeout_ms);
	/* a worker thread: no SIGALRM around name resolution */
	e = e ?: curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	e = e ?: curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, put_opensocket);
	e = e ?: curl_easy_setopt(h, CURLOPT_OPENSOCKETDATA, c);
	e = e ?: curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)CALLBACK_RESPONSE_MAX);
	e = e ?: curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, put_discard);
	e = e ?: curl_easy_setopt(h, CURLOPT_WRITEDATA, c);
	return e;
}

/* The request itself: method, body, headers. */
static CURLcode put_request(CURL *h, CURLU *u, struct curl_slist *hdrs, const char *body,
			    size_t len, char *curlerr)
{
	CURLcode e = CURLE_OK;

	e = e ?: curl_easy_setopt(h, CURLOPT_CURLU, u);
	e = e ?: curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, "PUT");
	e = e ?: curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	e = e ?: curl_easy_setopt(h, CURLOPT_POSTFIELDS, body ? body : "");
	e = e ?: curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	e = e ?: curl_easy_setopt(h, CURLOPT_USERAGENT, "goboxd");
	e = e ?: curl_easy_setopt(h, CURLOPT_NOPROGRESS, 1L);
	e = e ?: curl_easy_setopt(h, CURLOPT_ERRORBUFFER, curlerr);
	return e;
}

/* What curl_easy_perform's outcome means to our caller. */
static int put_result(CURL *h, CURLcode res, const struct put_ctx *c, const struct callback_opts *o,
		      const char *curlerr, char *err, size_t errlen)
{
	const char *msg = *curlerr ? curlerr : curl_easy_strerror(res);
	long status = 0;

	/* every address refused: nothing was sent anywhere */
	if (c->refused && c->nopened == 0) {
		snprintf(err, errlen, "address %s refused: %s", c->refused_addr, c->refused_why);
		return -EACCES;
	}
	if (res == CURLE_OPERATION_TIMEDOUT) {
		snprintf(err, errlen, "no answer within %u ms: %s", o->timeout_ms, msg);
		return -ETIMEDOUT;
	}
	/* an answer longer than we keep still came with its status */
	if (res != CURLE_OK && res != CURLE_FILESIZE_EXCEEDED &&
	    !(res == CURLE_WRITE_ERROR && c->response_cut)) {
		snprintf(err, errlen, "%s", msg);
		return -EIO;
	}
	if (curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status) != CURLE_OK)
		status = 0;
	if (status >= 200 && status < 300)
		return 0;
	if (status >= 300 && status < 400)
		snprintf(err, errlen, "status %ld: redirect refused", status);
	else
		snprintf(err, errlen, "status %ld", status);
	return -EPROTO;
}

int callback_put(const char *url, const char *body, size_t len, const struct callback_opts *o,
		 char *err, size_t errlen)
{
	struct put_ctx c = { .allow_local = o->allow_local, .allow_nets = o->allow_nets };
	char curlerr[CURL_ERROR_SIZE] = "";
	struct curl_slist *hdrs = NULL, *l;
	CURLU *u = NULL;
	CURL *h = NULL;
	CURLcode res;
	int rc;

	if (o->timeout_ms == 0) {
		/* 0 is "no limit" to libcurl */
		snprintf(err, errlen, "callback timeout is 0");
		return -EINVAL;
	}
	rc = url_parse(url, &u, err, errlen);
	if (rc < 0)
		return rc;
	rc = -EIO;
	h = curl_easy_init();
	if (!h) {
		snprintf(err, errlen, "curl_easy_init failed");
		goto out;
	}
	/* an empty "Expect:" keeps libcurl from waiting a second for a
	 * 100 Continue that many servers never send */
	l = curl_slist_append(NULL, "Content-Type: application/json");
	hdrs = l;
	l = l ? curl_slist_append(hdrs, "Expect:") : NULL;
	if (l && o->idempotency_key && o->idempotency_key[0]) {
		char key[96];

		if (strspn(o->idempotency_key, "0123456789abcdefABCDEF-") !=
			    strlen(o->idempotency_key) ||
		    strlen(o->idempotency_key) > 64) {
			snprintf(err, errlen, "an idempotency key of other characters");
			rc = -EINVAL;
			goto out;
		}
		snprintf(key, sizeof(key), "Idempotency-Key: %s", o->idempotency_key);
		l = curl_slist_append(hdrs, key);
	}
	if (!l) {
		snprintf(err, errlen, "curl_slist_append failed");
		goto out;
	}
	res = put_bound(h, o, &c);
	res = res ?: put_request(h, u, hdrs, body, len, curlerr);
	if (res != CURLE_OK) {
		snprintf(err, errlen, "curl_easy_setopt: %s", curl_easy_strerror(res));
		goto out;
	}
	res = curl_easy_perform(h);
	rc = put_result(h, res, &c, o, curlerr, err, errlen);
out:
	curl_easy_cleanup(h);
	curl_slist_free_all(hdrs);
	curl_url_cleanup(u);
	return rc;
}
