/*
 * What the master makes ready on the host before its first worker
 * (prepare.h): the listening socket, and the jail dir.
 */
#include "autoconf.h"

#include "master/prepare.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"

int prepare_listen(const struct config *cfg, char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV };
	struct addrinfo *res = NULL;
	char port[8];
	int n = sd_listen_fds(1);
	int fd = -1, rc;
	int one = 1;

	if (n > 1) {
		snprintf(err, errlen, "systemd passed %d sockets; goboxd takes exactly one", n);
		return -EINVAL;
	}
	if (n == 1) {
		if (sd_is_socket(SD_LISTEN_FDS_START, AF_UNSPEC, SOCK_STREAM, 1) <= 0) {
			snprintf(err, errlen, "the socket from systemd is not a listening stream");
			return -EINVAL;
		}
		set_cloexec(SD_LISTEN_FDS_START, true);
		log_info("using the listening socket passed by systemd");
		return SD_LISTEN_FDS_START;
	}
	snprintf(port, sizeof(port), "%u", cfg->port);
	rc = getaddrinfo(cfg->listen, port, &hints, &res);
	if (rc != 0) {
		snprintf(err, errlen, "listen address %s: %s", cfg->listen, gai_strerror(rc));
		return -EADDRNOTAVAIL;
	}
	fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, res->ai_addr, res->ai_addrlen) < 0 || listen(fd, 1024) < 0) {
		snprintf(err, errlen, "bind %s:%s: %s", cfg->listen, port, strerror(errno));
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	return fd;
}

unsigned prepare_bound_port(int fd)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		return 0;
	if (ss.ss_family == AF_INET)
		return ntohs(((struct sockaddr_in *)&ss)->sin_port);
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return 0;
}


/* Every directory on the way to path must be searchable by others. */
static int check_searchable(const char *path, char *err, size_t errlen)
{
	char prefix[4096];
	size_t n = strlen(path);

	for (size_t i = 1; i <= n; i++) {
		struct stat st;

		if (i < n && path[i] != '/')
			continue;
		snprintf(prefix, sizeof(prefix), "%.*s", (int)i, path);
		if (stat(prefix, &st) == 0 && !(st.st_mode & S_IXOTH)) {
			snprintf(err, errlen, "%.300s (mode %o) is not searchable by others: the "
				 "sandbox uids could not reach the jail dir", prefix,
				 st.st_mode & 07777);
			return -EACCES;
		}
	}
	return 0;
}

/*
 * The jail dir holds every job's files: it must be goboxd's own and
 * writable by nobody else (a directory another user made first, in a
 * shared place such as /var/tmp, would give them the jobs).
 */
static int check_own(const char *path, char *err, size_t errlen)
{
	struct stat st;

	if (stat(path, &st) < 0) {
		int e = errno;

		snprintf(err, errlen, "stat(%.300s): %s", path, strerror(e));
		return -e;
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022)) {
		snprintf(err, errlen, "jail dir %.300s is not goboxd's own (owner uid %u, mode %o): "
			 "another user could reach the jobs in it; remove it, or give another "
			 "--jail-dir", path, (unsigned)st.st_uid, st.st_mode & 07777);
		return -EPERM;
	}
	return 0;
}

int prepare_jail_dir(const char *jail_dir, char *err, size_t errlen)
{
	char path[4096];
	int rc;

	/* Each level made traversable (not readable) by the sandbox uids,
	 * whatever the umask: under umask 077 a level made 0700 (such as
	 * /var/lib/goboxd, which the store shares) would refuse the start. */
	snprintf(path, sizeof(path), "%s", jail_dir);
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0711) == 0)
			chmod(path, 0711);
		else if (errno != EEXIST) {
			int e = errno;

			snprintf(err, errlen, "mkdir(%.300s): %s", path, strerror(e));
			return -e;
		}
		*p = '/';
	}
	if (mkdir(path, 0711) < 0 && errno != EEXIST) {
		int e = errno;

		snprintf(err, errlen, "mkdir(%.300s): %s", path, strerror(e));
		return -e;
	}
	chmod(path, 0711);
	if ((rc = check_own(path, err, errlen)) < 0)
		return rc;
	/* The jails run as unprivileged uids: they must reach their directory. */
	if ((rc = check_searchable(jail_dir, err, errlen)) < 0)
		return rc;
	return 0;
}
