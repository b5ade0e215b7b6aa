/*
 * goboxd-init's jail closed off: what a program finds is only what it
 * was meant to. The mounts as the driver left them are hardened (nosuid,
 * nodev, the root and /proc read-only, the init's own binary gone), the
 * programs' /proc hides the init, and the network namespace has no
 * working interface. The init does this before its hello (start_steps in
 * init.c), and makes and checks a new network at each ENTER and RESET.
 * Libc only, like the rest of goboxd-init.
 */

#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "worker/sandbox/init_seal.h"

/* The placeholder each program's /tmp is mounted over (init.c). */
#define TMP_DIR "/tmp"

/* Mount point of one /proc/self/mountinfo line, octal escapes decoded. */
static bool mountinfo_point(char *line, char *out, size_t outlen)
{
	char *f = line;
	size_t n = 0;

	for (int i = 0; i < 4; i++) {
		f = strchr(f, ' ');
		if (!f)
			return false;
		f++;
	}
	while (*f && *f != ' ' && n + 1 < outlen) {
		if (f[0] == '\\' && f[1] >= '0' && f[1] <= '3' && f[2] && f[3]) {
			out[n++] = (char)(((unsigned)(f[1] - '0') << 6) | ((unsigned)(f[2] - '0') << 3) |
					  (unsigned)(f[3] - '0'));
			f += 4;
		} else {
			out[n++] = *f++;
		}
	}
	out[n] = '\0';
	return n > 0;
}

/* The flags a mount has, as mount(2) takes them. */
static int mount_flags(const char *mp, unsigned long *fl)
{
	static const struct { unsigned long st, ms; } keep[] = {
		{ ST_RDONLY, MS_RDONLY }, { ST_NOSUID, MS_NOSUID }, { ST_NODEV, MS_NODEV },
		{ ST_NOEXEC, MS_NOEXEC }, { ST_NOATIME, MS_NOATIME },
		{ ST_NODIRATIME, MS_NODIRATIME }, { ST_RELATIME, MS_RELATIME },
	};
	struct statvfs sv;

	if (statvfs(mp, &sv) < 0)
		return -errno;
	*fl = 0;
	for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
		if (sv.f_flag & keep[i].st)
			*fl |= keep[i].ms;
	return 0;
}

/*
 * Every mount nosuid, and nodev but for the device nodes bound in. The
 * flags a mount has (read-only above all, which the kernel keeps locked
 * for mounts inherited from the host) are read back and kept.
 */
static int harden_mount(const char *mp)
{
	unsigned long fl = 0;
	struct stat st;
	int rc;

	if ((rc = mount_flags(mp, &fl)) < 0)
		return rc;
	if (stat(mp, &st) < 0)
		return -errno;
	fl |= MS_REMOUNT | MS_BIND | MS_NOSUID;
	if (!S_ISCHR(st.st_mode))
		fl |= MS_NODEV;
	/* nsjail leaves its root tmpfs writable; bwrap's is read-only already. */
	if (strcmp(mp, "/") == 0)
		fl |= MS_RDONLY;
	/* bwrap mounts /proc writable and noexec, nsjail read-only and
	 * executable: both become read-only, so that a write to /proc/sys,
	 * /proc/self/mem or a process's attributes fails with EROFS before
	 * any permission check, and noexec (/proc/self/exe still runs: exec
	 * follows the link to its own mount). */
	if (strcmp(mp, "/proc") == 0)
		fl |= MS_RDONLY | MS_NOEXEC;
	/* The placeholder under each program's own /tmp: the mount table
	 * lists both, and neither runs anything. */
	if (strcmp(mp, TMP_DIR) == 0)
		fl |= MS_NOEXEC;
	if (mount(NULL, mp, NULL, fl, NULL) < 0)
		return -errno;
	return 0;
}

/*
 * seal (init.c): the jail as the programs will see it: our own binary unmounted (it is
 * mapped already), the root read-only, every mount nosuid and nodev.
 * Before the hello, as no program runs before the worker hears it; it
 * reads the mount table as the driver left it.
 */
int init_seal_mounts(const char *self)
{
	char line[8192], mp[4096];
	FILE *f;
	int rc = 0;

	if (!self)
		return -EINVAL;
	if (umount2(self, MNT_DETACH) < 0)
		return -errno;
	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return -errno;
	while (rc == 0 && fgets(line, sizeof(line), f))
		if (mountinfo_point(line, mp, sizeof(mp)))
			rc = harden_mount(mp);
	fclose(f);
	return rc;
}

/*
 * After seal (init.c), as a remount of the superblock: the programs' /proc shows
 * only the processes they may trace (hidepid=ptraceable: their own, as
 * the init is not dumpable), so that nothing of the init is theirs to
 * read, above all what it counts of every program it reaped (cutime,
 * cstime and the faults in /proc/1/stat; the CPU time and the switches of
 * serving them in /proc/1/sched). Its mount flags are kept as seal left
 * them; read-only, it is the superblock's too (the init writes through
 * its own, keep_own_proc in init.c).
 */
int init_seal_proc(void)
{
	unsigned long fl = 0;
	int rc;

	if ((rc = mount_flags("/proc", &fl)) < 0)
		return rc;
	if (mount(NULL, "/proc", NULL, MS_REMOUNT | fl, "hidepid=ptraceable") < 0)
		return -errno;
	return 0;
}

/* Whether the interface is down, by its name (a unix socket, which goes
 * as it is closed): 1, 0, or -errno. */
static int interface_is_down(int s, const char *name)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	if (strlen(name) >= sizeof(ifr.ifr_name))
		return -ENAMETOOLONG;
	memcpy(ifr.ifr_name, name, strlen(name));
	if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
		return -errno;
	return !(ifr.ifr_flags & IFF_UP);
}

/* A small file whole, into buf (size - 1 bytes at most), NUL-terminated:
 * its length, or -errno; -EFBIG when it does not fit. */
static ssize_t read_whole(int fd, char *buf, size_t size)
{
	size_t len = 0;

	for (;;) {
		ssize_t n = read(fd, buf + len, size - 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		len += (size_t)n;
		if (len == size - 1)
			return -EFBIG;
	}
	buf[len] = '\0';
	return (ssize_t)len;
}

/*
 * Whether every interface of the current network namespace is down, and
 * the namespace has none but lo: -errno when that cannot be told. The
 * interfaces are read from its /proc/net/dev (through proc_fd, a /proc
 * whose net is the init's), not asked over netlink: a netlink socket is
 * freed a grace period after its close, and until then it counts among
 * the namespace's sockets, which the next RESET reads (reset_network in
 * init.c).
 */
static int network_is_empty(int proc_fd)
{
	char buf[4096], *line, *colon, *save = NULL;
	int fd = openat(proc_fd, "net/dev", O_RDONLY | O_CLOEXEC), s, rc = 1;
	ssize_t len;

	if (fd < 0)
		return -errno;
	len = read_whole(fd, buf, sizeof(buf));
	close(fd);
	if (len == -EFBIG)
		return 0;       /* more interfaces than fit: not lo alone */
	if (len < 0)
		return (int)len;
	s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	/* two lines of headings, then "  name: counters" for each */
	for (int i = 0; rc == 1 && (line = strtok_r(i ? NULL : buf, "\n", &save)); i++) {
		if (i < 2)
			continue;
		if (!(colon = strchr(line, ':'))) {
			rc = -EPROTO;
			break;
		}
		*colon = '\0';
		line += strspn(line, " ");
		rc = strcmp(line, "lo") != 0 ? 0 : interface_is_down(s, line);
	}
	close(s);
	return rc;
}

/*
 * The programs' network namespace must have no working interface, so that
 * AF_INET and AF_INET6 (which the seccomp filter lets through in a job
 * with a network, where the stack adds its own) reach nothing else:
 * connect fails with ENETUNREACH, ::1 with EADDRNOTAVAIL, as in a
 * namespace whose lo was never up. nsjail makes one (--iface_no_lo).
 * bubblewrap always brings lo up in the namespace it makes, and taking it
 * down again would not do (127.0.0.1 stays on it and a connect waits for a
 * time-out), so goboxd runs bwrap without one and has the init make its
 * own here (INITMSG_ARG_NEW_NETWORK), once per jail, with the
 * CAP_SYS_ADMIN it holds anyway. Whatever the driver did, the check after
 * is what counts. Before the hello (empty_network in init.c), like seal:
 * a jail whose namespace is not empty never runs a program.
 */
int init_seal_network(int proc_fd, bool new_namespace)
{
	int rc;

	/* Always when asked: the worker's own namespace may look empty too
	 * (goboxd run where only a down lo exists), but sharing it would
	 * share its abstract unix sockets with every jail. */
	if (new_namespace && unshare(CLONE_NEWNET) < 0)
		return -errno;
	rc = network_is_empty(proc_fd);
	if (rc == 0)
		return -EADDRINUSE;
	return rc < 0 ? rc : 0;
}

long init_seal_network_sockets(int proc_fd)
{
	char buf[1024];
	int fd = openat(proc_fd, "net/sockstat", O_RDONLY | O_CLOEXEC);
	ssize_t len;
	long used;

	if (fd < 0)
		return -errno;
	len = read_whole(fd, buf, sizeof(buf));
	close(fd);
	if (len < 0)
		return len;
	if (sscanf(buf, "sockets: used %ld", &used) != 1 || used < 0)
		return -EPROTO;
	return used;
}

int init_seal_send_namespaces(int sock, const void *msg, size_t len)
{
	struct iovec iov = { (void *)msg, len };
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			     .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	int fds[2] = { open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC),
		       open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC) };
	int rc = 0;
	ssize_t n;

	if (fds[0] < 0 || fds[1] < 0) {
		rc = -errno;
		goto out;
	}
	memset(u.buf, 0, sizeof(u.buf));
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(c), fds, sizeof(fds));
	do
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		rc = -errno;
out:
	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return rc;
}
