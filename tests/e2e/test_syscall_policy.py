"""The system call policy as a program meets it, through the real daemon:
which socket families it may open, what its network namespace answers,
which calls fail with which errno and which kill it (docs/security.md,
"Seccomp" and "Network").

One C probe is built once; each case below is one test of that job (its
stdin names what to try) and one pytest test, checked against the answer
the policy gives.
"""
import os

import pytest

from conftest import Daemon, dump, run_ok as run, small


# stdin: "socket FAMILY TYPE" (FAMILY may carry high bits, as a 64-bit
# argument), "socketpair FAMILY", "connect ADDRESS PORT", "interfaces",
# or "call NAME ARG..." (a raw system call, up to 6 numbers; "@" is a
# pointer to a buffer holding "/"). Prints "ok", "connected", the errno's
# name ("socket" before it when the socket could not be made), or for
# "interfaces" each interface with its address family and state.
PROBE = r'''
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Calls added after the C library's headers (the number is the same on
 * every architecture). */
#ifndef SYS_lsm_get_self_attr
#define SYS_lsm_get_self_attr 459
#define SYS_lsm_set_self_attr 460
#define SYS_lsm_list_modules 461
#endif

static const struct { const char *name; long nr; } calls[] = {
	{ "io_setup", SYS_io_setup }, { "io_destroy", SYS_io_destroy },
	{ "io_submit", SYS_io_submit }, { "io_cancel", SYS_io_cancel },
	{ "io_getevents", SYS_io_getevents }, { "io_pgetevents", SYS_io_pgetevents },
	{ "personality", SYS_personality }, { "mbind", SYS_mbind },
	{ "get_mempolicy", SYS_get_mempolicy }, { "set_mempolicy", SYS_set_mempolicy },
	{ "set_mempolicy_home_node", SYS_set_mempolicy_home_node },
	{ "memfd_secret", SYS_memfd_secret }, { "fanotify_mark", SYS_fanotify_mark },
	{ "seccomp", SYS_seccomp }, { "process_madvise", SYS_process_madvise },
	{ "landlock_create_ruleset", SYS_landlock_create_ruleset },
	{ "landlock_add_rule", SYS_landlock_add_rule },
	{ "landlock_restrict_self", SYS_landlock_restrict_self },
	{ "lsm_get_self_attr", SYS_lsm_get_self_attr },
	{ "lsm_set_self_attr", SYS_lsm_set_self_attr },
	{ "lsm_list_modules", SYS_lsm_list_modules },
	{ "clock_adjtime", SYS_clock_adjtime }, { "adjtimex", SYS_adjtimex },
	{ "sethostname", SYS_sethostname }, { "setdomainname", SYS_setdomainname },
	{ "chroot", SYS_chroot }, { "ioctl", SYS_ioctl },
};

static char buf[4096] = "/";

static void say(long r, const char *ok)
{
	puts(r < 0 ? strerrorname_np(errno) : ok);
}

static int inet(const char *addr, int port, struct sockaddr_storage *sa, socklen_t *len)
{
	struct sockaddr_in *a4 = (struct sockaddr_in *)sa;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)sa;
	int s;

	memset(sa, 0, sizeof(*sa));
	if (inet_pton(AF_INET, addr, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons(port);
		*len = sizeof(*a4);
	} else {
		inet_pton(AF_INET6, addr, &a6->sin6_addr);
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons(port);
		*len = sizeof(*a6);
	}
	s = socket(sa->ss_family, SOCK_STREAM, 0);
	if (s < 0) {
		/* the filter's answer, not the network's */
		printf("socket %s\n", strerrorname_np(errno));
		exit(0);
	}
	return s;
}

static const char *word(void)
{
	const char *w = strtok(NULL, " \n");
	return w ? w : "";
}

int main(void)
{
	char line[256] = "";
	struct sockaddr_storage sa;
	socklen_t len;
	int s, sv[2];

	if (!fgets(line, sizeof(line), stdin))
		return 2;
	const char *cmd = strtok(line, " \n"), *a = word(), *b = "";
	if (!cmd)
		return 2;
	if (strcmp(cmd, "call"))
		b = word();
	if (!strcmp(cmd, "socket")) {
		s = syscall(SYS_socket, strtoull(a, NULL, 0), atoi(b), 0);
		say(s, "ok");
	} else if (!strcmp(cmd, "socketpair")) {
		say(syscall(SYS_socketpair, strtoull(a, NULL, 0), SOCK_STREAM, 0, sv), "ok");
	} else if (!strcmp(cmd, "connect")) {
		s = inet(a, atoi(b), &sa, &len);
		say(connect(s, (struct sockaddr *)&sa, len), "connected");
	} else if (!strcmp(cmd, "interfaces")) {
		struct ifaddrs *ifs, *i;
		if (getifaddrs(&ifs) < 0) {
			puts(strerrorname_np(errno));
			return 0;
		}
		for (i = ifs; i; i = i->ifa_next)
			printf("%s %d %s\n", i->ifa_name, i->ifa_addr ? i->ifa_addr->sa_family : -1,
			       i->ifa_flags & IFF_UP ? "up" : "down");
	} else if (!strcmp(cmd, "call")) {
		long arg[6] = { 0 };
		for (int k = 0; k < 6; k++) {
			const char *w = word();
			arg[k] = !strcmp(w, "@") ? (long)buf : strtol(w, NULL, 0);
		}
		for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
			if (!strcmp(calls[i].name, a)) {
				say(syscall(calls[i].nr, arg[0], arg[1], arg[2], arg[3], arg[4], arg[5]), "ok");
				return 0;
			}
		return 3;
	} else {
		return 3;
	}
	return 0;
}
'''

AF_UNIX, AF_INET, AF_INET6, AF_NETLINK, AF_PACKET, AF_ALG, AF_VSOCK = 1, 2, 10, 16, 17, 38, 40
HIGH = 1 << 32
SOCK_STREAM, SOCK_DGRAM, SOCK_RAW = 1, 2, 3
TIOCSTI, TIOCGWINSZ, TIOCLINUX, TIOCCONS, TIOCSETD = 0x5412, 0x5413, 0x541C, 0x541D, 0x5423

# (case, stdin, what the program must print, or "SIGSYS" for a kill)
CASES = [
    # socket(2) in a job without a network: exactly UNIX and NETLINK,
    # judged on the low 32 bits of the family as the kernel reads it; the
    # rest, INET and INET6 included, EPERM (a job with a network may make
    # internet sockets: test_network.py)
    ("socket_unix_high_bits", "socket %d %d" % (HIGH | AF_UNIX, SOCK_STREAM), "ok"),
    ("socket_netlink", "socket %d %d" % (AF_NETLINK, SOCK_RAW), "ok"),
    ("socket_inet", "socket %d %d" % (AF_INET, SOCK_STREAM), "EPERM"),
    ("socket_inet6", "socket %d %d" % (AF_INET6, SOCK_DGRAM), "EPERM"),
    ("socket_inet_high_bits", "socket %d %d" % (HIGH | AF_INET, SOCK_DGRAM), "EPERM"),
    ("socket_packet", "socket %d %d" % (AF_PACKET, SOCK_RAW), "EPERM"),
    ("socket_alg", "socket %d %d" % (AF_ALG, 5), "EPERM"),
    ("socket_vsock", "socket %d %d" % (AF_VSOCK, SOCK_STREAM), "EPERM"),
    ("socket_alg_high_bits", "socket %d %d" % (HIGH | AF_ALG, 5), "EPERM"),
    ("socket_unknown_family", "socket 4096 1", "EPERM"),
    ("socketpair_inet", "socketpair %d" % AF_INET, "EPERM"),
    ("socketpair_netlink", "socketpair %d" % AF_NETLINK, "EPERM"),
    # a network namespace whose only interface, lo, is down, with no address
    ("interfaces", "interfaces", "lo %d down" % AF_PACKET),
    ("connect_internet", "connect 8.8.8.8 80", "socket EPERM"),
    ("connect_host_daemon", "connect 127.0.0.1 {port}", "socket EPERM"),
    # Linux AIO: absent, as on a kernel without it
    ("io_setup", "call io_setup 1 @", "ENOSYS"),
    ("io_destroy", "call io_destroy 0", "ENOSYS"),
    ("io_submit", "call io_submit 0 0 0", "ENOSYS"),
    ("io_cancel", "call io_cancel 0 0 0", "ENOSYS"),
    ("io_getevents", "call io_getevents 0 0 0 0 0", "ENOSYS"),
    ("io_pgetevents", "call io_pgetevents 0 0 0 0 0 0", "ENOSYS"),
    # killed with SIGSYS
    ("personality", "call personality 0xffffffff", "SIGSYS"),
    ("mbind", "call mbind 0 0 0 0 0 0", "SIGSYS"),
    ("set_mempolicy_home_node", "call set_mempolicy_home_node 0 0 0 0", "SIGSYS"),
    ("memfd_secret", "call memfd_secret 0", "SIGSYS"),
    ("fanotify_mark", "call fanotify_mark -1 0 0 -1 0", "SIGSYS"),
    ("seccomp", "call seccomp 1 0 0", "SIGSYS"),
    ("process_madvise", "call process_madvise -1 0 0 0 0", "SIGSYS"),
    ("landlock_create_ruleset", "call landlock_create_ruleset 0 0 1", "SIGSYS"),
    ("landlock_add_rule", "call landlock_add_rule -1 1 0 0", "SIGSYS"),
    ("landlock_restrict_self", "call landlock_restrict_self -1 0", "SIGSYS"),
    ("lsm_get_self_attr", "call lsm_get_self_attr 100 0 0 0", "SIGSYS"),
    ("lsm_set_self_attr", "call lsm_set_self_attr 100 0 0 0", "SIGSYS"),
    ("lsm_list_modules", "call lsm_list_modules 0 0 0", "SIGSYS"),
    ("clock_adjtime", "call clock_adjtime 0 @", "SIGSYS"),
    ("adjtimex", "call adjtimex @", "SIGSYS"),
    # the kernel's own answer to a program without capabilities, which
    # commands report in their own words
    ("sethostname", "call sethostname @ 1", "EPERM"),
    ("setdomainname", "call setdomainname @ 1", "EPERM"),
    ("chroot", "call chroot @", "EPERM"),
    # a terminal's requests that reach past the program's own use of it:
    # refused whatever the fd (stdin here is a pipe, which would answer
    # ENOTTY), on the low 32 bits of the request as the kernel reads it
    ("ioctl_tiocsti", "call ioctl 0 %d @" % TIOCSTI, "EPERM"),
    ("ioctl_tiocsti_high_bits", "call ioctl 0 %d @" % (HIGH | TIOCSTI), "EPERM"),
    ("ioctl_tiocsetd", "call ioctl 0 %d @" % TIOCSETD, "EPERM"),
    ("ioctl_tioccons", "call ioctl 0 %d 0" % TIOCCONS, "EPERM"),
    ("ioctl_tioclinux", "call ioctl 0 %d @" % TIOCLINUX, "EPERM"),
    ("ioctl_tiocgwinsz", "call ioctl 0 %d @" % TIOCGWINSZ, "ENOTTY"),
    # kept: libnuma's constructor probes them in every program linked with
    # it (Octave's), and treats a kill as a crash of the program
    ("get_mempolicy", "call get_mempolicy 0 0 0 0 0", "ok"),
    ("set_mempolicy", "call set_mempolicy 0 0 0", "ok"),
]


@pytest.fixture(scope="module")
def results():
    """Every case's test result, from one job."""
    d = Daemon(languages=small())
    try:
        tests = [{"stdin": stdin.format(port=d.port) + "\n"} for _, stdin, _ in CASES]
        body = run(d, {"language": "c", "source": PROBE, "tests": tests})
        assert body["build"]["status"] == "ok", dump(body)
        yield {name: t for (name, _, _), t in zip(CASES, body["tests"])}
    finally:
        d.stop()


@pytest.mark.parametrize("name,stdin,seen", CASES, ids=[c[0] for c in CASES])
def test_syscall_policy(results, name, stdin, seen):
    t = results[name]
    if seen == "SIGSYS":
        assert (t["status"], t["signal"]) == ("runtime_error", "SIGSYS"), dump(t)
    else:
        assert (t["status"], t["stdout"]) == ("accepted", seen + "\n"), dump(t)



# Starts goboxd with its listening socket made here, in this network
# namespace, handed over as systemd does (LISTEN_FDS), and the rest of
# the command after it: `unshare --net` puts the daemon in a namespace of
# its own whose only interface is a lo that is down.
SOCKET_HANDOVER = r'''
import os, socket, sys
port = int(sys.argv[sys.argv.index("--port") + 1])
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", port))
s.listen(64)
if s.fileno() != 3:
    os.dup2(s.fileno(), 3)
os.set_inheritable(3, True)
os.environ.update(LISTEN_FDS="1", LISTEN_PID=str(os.getpid()))
os.execvp(sys.argv[1], sys.argv[1:])
'''


@pytest.mark.parametrize("where", ["host", "a namespace with lo down"])
def test_a_program_never_shares_the_daemon_s_network_namespace(where):
    """Whatever namespace goboxd itself runs in, even one that already
    looks empty (only lo, down), a program gets a namespace of its own:
    sharing the daemon's would share its abstract unix sockets between
    jobs."""
    wrapper = () if where == "host" else (
        "python3", "-c", SOCKET_HANDOVER, "unshare", "--net", "--")
    d = Daemon(languages=small(), wrapper=wrapper, workers=1)
    try:
        daemon_ns = os.readlink("/proc/%d/ns/net" % d.proc.pid)
        body = run(d, {"language": "py3",
                       "source": "import os\nprint(os.readlink('/proc/self/ns/net'))\n",
                       "tests": [{"stdin": ""}]})
        t = body["tests"][0]
        assert t["status"] == "accepted", dump(body)
        assert t["stdout"].startswith("net:["), dump(body)
        assert t["stdout"].strip() != daemon_ns, (daemon_ns, dump(body))
    finally:
        d.stop()
