"""Attacks that broke other judges' sandboxes, each tried against goboxd
through the real daemon. docs/security.md has the table: attack, defense,
test (the names below).
"""
import os
import signal
import socket
import subprocess
import tempfile

import pytest

from conftest import Daemon, dump, run_ok as run, small


@pytest.fixture(scope="module")
def daemon():
    d = Daemon(languages=small("nim"))
    yield d
    d.stop()


@pytest.fixture
def victim(daemon):
    """A host file outside the jail, which no job may read, write or chown."""
    path = os.path.join(daemon.tmp, "victim")
    with open(path, "w") as f:
        f.write("host secret\n")
    os.chmod(path, 0o640)
    yield path
    st = os.lstat(path)
    with open(path) as f:
        assert f.read() == "host secret\n", "a job wrote into a host file"
    assert (st.st_uid, st.st_gid, st.st_mode & 0o7777) == (0, 0, 0o640), \
        "a job changed a host file's owner or mode"


# One C program, one attack per test: stdin names it; it prints what it saw.
PROBE = r'''
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif

static void say(long r) { puts(r < 0 ? strerrorname_np(errno) : "allowed"); }

int main(void)
{
	char cmd[64] = "", arg[64] = "";
	if (scanf("%63s %63s", cmd, arg) < 1)
		return 2;
	if (!strcmp(cmd, "keyctl")) {
		say(syscall(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3, 0));
	} else if (!strcmp(cmd, "add_key")) {
		say(syscall(SYS_add_key, "user", "k", "v", 1, -3));
	} else if (!strcmp(cmd, "vsock")) {
		say(socket(AF_VSOCK, SOCK_STREAM, 0));
	} else if (!strcmp(cmd, "inet")) {
		/* the host's goboxd is listening on this port */
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(atoi(arg)) };
		int s = socket(AF_INET, SOCK_STREAM, 0);
		inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
		say(s < 0 ? s : connect(s, (struct sockaddr *)&a, sizeof(a)));
	} else if (!strcmp(cmd, "io_uring")) {
		char params[120] = { 0 };
		say(syscall(SYS_io_uring_setup, 1, params));
	} else if (!strcmp(cmd, "i386")) {
		/* getpid through the 32-bit entry point: another system call table */
		long r;
		__asm__ volatile ("int $0x80" : "=a"(r) : "a"(20L) : "memory");
		printf("i386 getpid: %ld\n", r);
	} else if (!strcmp(cmd, "x32")) {
		say(syscall(0x40000000L | SYS_getpid));
	} else if (!strcmp(cmd, "fds")) {
		DIR *d = opendir("/proc/self/fd");
		struct dirent *e;
		while (d && (e = readdir(d)))
			if (e->d_name[0] != '.' && atoi(e->d_name) != dirfd(d))
				printf("%s ", e->d_name);
		puts("");
	} else if (!strcmp(cmd, "lock")) {
		/* test 0 takes the lock in a child that never lets go */
		int fd = open("/sandbox/solution", O_RDONLY);
		if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
			puts(strerrorname_np(errno));
			return 0;
		}
		puts("locked");
		if (!strcmp(arg, "hold") && fork() == 0) {
			sleep(60);
			_exit(0);
		}
	} else if (!strcmp(cmd, "abstract")) {
		struct sockaddr_un a = { .sun_family = AF_UNIX };
		int s = socket(AF_UNIX, SOCK_STREAM, 0);
		memcpy(a.sun_path, "\0goboxd-left-behind", 19);
		if (bind(s, (struct sockaddr *)&a, sizeof(sa_family_t) + 19) < 0 || listen(s, 1) < 0) {
			puts(strerrorname_np(errno));
			return 0;
		}
		puts("bound");
		if (!strcmp(arg, "hold") && fork() == 0) {
			sleep(60);
			_exit(0);
		}
	} else if (!strcmp(cmd, "devshm")) {
		int fd = open("/dev/shm/left-behind", !strcmp(arg, "make") ? O_CREAT | O_WRONLY : O_RDONLY, 0644);
		puts(fd < 0 ? strerrorname_np(errno) : "there");
	} else {
		return 3;
	}
	return 0;
}
'''

# (attack, stdin, status, stdout or signal): one test each, in order.
PROBES = [
    ("keyrings", "keyctl", "runtime_error", "SIGSYS"),
    ("keyrings", "add_key", "runtime_error", "SIGSYS"),
    ("AF_VSOCK", "vsock", "accepted", "EPERM\n"),
    # no internet socket in a job without a network (test_network.py has
    # what a job with one may reach)
    ("network", "inet {port}", "accepted", "EPERM\n"),
    ("io_uring", "io_uring", "accepted", "ENOSYS\n"),
    ("32-bit system calls", "i386", "runtime_error", "SIGSYS"),
    ("x32 system calls", "x32", "runtime_error", "SIGSYS"),
    ("fds leaked into the box", "fds", "accepted", "0 1 2 \n"),
    # a lock held by a left-over process of one test, tried by the next
    ("file locks", "lock hold", "accepted", "locked\n"),
    ("file locks", "lock", "accepted", "locked\n"),
    # an abstract UNIX socket kept open by a left-over process
    ("abstract sockets", "abstract hold", "accepted", "bound\n"),
    ("abstract sockets", "abstract", "accepted", "bound\n"),
    # there is no /dev/shm to share
    ("shared /dev/shm", "devshm make", "accepted", "ENOENT\n"),
    ("shared /dev/shm", "devshm look", "accepted", "ENOENT\n"),
]


def host_has_i386_entry():
    """Whether this host's kernel takes a 32-bit system call at all: some
    kernels (IA32 emulation off, some paravirtualized guests) answer
    int 0x80 with SIGSEGV before any seccomp filter sees it. The surface
    is then out of reach everywhere, and the jail's filter has nothing to
    refuse."""
    with tempfile.TemporaryDirectory() as tmp:
        c, exe = os.path.join(tmp, "p.c"), os.path.join(tmp, "p")
        with open(c, "w") as f:
            f.write(PROBE)
        subprocess.run(["gcc", "-o", exe, c], check=True)
        rc = subprocess.run([exe], input=b"i386\n", capture_output=True).returncode
    return rc != -signal.SIGSEGV


def test_reachable_kernel_surfaces(daemon):
    tests = [{"stdin": stdin.format(port=daemon.port) + "\n"} for _, stdin, _, _ in PROBES]
    body = run(daemon, {"language": "c", "source": PROBE, "tests": tests})
    assert body["build"]["status"] == "ok", dump(body)
    probes = PROBES
    if not host_has_i386_entry():
        probes = [p if p[1] != "i386" else p[:3] + ("SIGSEGV",) for p in PROBES]
    for (attack, stdin, status, seen), t in zip(probes, body["tests"]):
        assert t["status"] == status, "%s (%s): %s" % (attack, stdin, dump(t))
        if seen.startswith("SIG"):
            assert t["signal"] == seen, "%s (%s): %s" % (attack, stdin, dump(t))
        else:
            assert t["stdout"] == seen, "%s (%s): %s" % (attack, stdin, dump(t))


def test_network_cannot_be_asked_for(daemon):
    """Judge0 CVE-2024-29021: a request field turned the network on. goboxd's
    one field for it ("network") is refused unless the operator runs it
    with --network (tests/e2e/test_network.py), and every field it does
    not know is refused."""
    for req, want in (({"enable_network": True}, "unknown_field"),
                      ({"run": {"network": True}}, "unknown_field"),
                      ({"build": {"enable_network": True}}, "unknown_field"),
                      ({"network": "host"}, "invalid_type"),
                      ({"network": True}, "network_not_allowed")):
        body = {"language": "py3", "source": "print(1)", "tests": [{"stdin": ""}]}
        for k, v in req.items():
            body[k] = v if not isinstance(v, dict) else dict(v)
        code, answer = daemon.post("/run", body)
        assert code == 400, dump(answer)
        assert answer["error"]["code"] == want, dump(answer)


# Nim runs code at compile time (staticExec runs a shell command in the
# build's jail): the build plants symlinks to a host file for the worker,
# which writes the input file, snapshots and restores the job directory
# and reads the output file, all as root.
PLANTER = r'''
const planted = staticExec("ln -s {victim} input.txt && ln -s {victim} output.txt && " &
                           "ln -s {victim} owned && ln -s {victimdir} dir && echo planted")
static: doAssert planted == "planted", planted
let f = open("input.txt")
echo f.readLine()
f.close()
'''


def test_planted_symlinks_are_never_followed_by_root(daemon, victim):
    """Judge0 CVE-2024-28185 (root wrote through a planted symlink),
    CVE-2024-28189 (a host chown followed one), go-judge's output copy
    that followed one: the input file replaces the link, the snapshot and
    its restores copy links as links, the output file is read only as a
    regular file of the job directory."""
    src = PLANTER.replace("{victim}", victim).replace("{victimdir}", os.path.dirname(victim))
    body = run(daemon, {"language": "nim", "source": src, "tests": [
        {"stdin": "first\n", "input_file": "input.txt", "output_file": "output.txt"},
        {"stdin": "second\n", "input_file": "input.txt", "output_file": "output.txt"}]})
    assert body["build"]["status"] == "ok", dump(body)
    for t, line in zip(body["tests"], ("first", "second")):
        assert t["stdout"] == line + "\n", dump(body)
        assert t["output_file"]["content"] is None, dump(body)


def test_compile_time_random_include(daemon):
    """#include </dev/random>: the compiler reads forever; the build's own
    limits stop it and the answer comes."""
    body = run(daemon, {"language": "c", "source": "#include </dev/random>\nint main(){}\n",
                        "build": {"limits": {"wall_time_s": 3, "memory_kb": 262144}},
                        "tests": [{"stdin": ""}]})
    b = body["build"]
    assert body["status"] == "build_failed", dump(body)
    assert b["timed_out"] or b["memory_exceeded"], dump(body)


def test_compile_time_zero_include(daemon):
    """#include </dev/zero>: the jail has no /dev/zero, and the build fails
    at once."""
    body = run(daemon, {"language": "c", "source": "#include </dev/zero>\nint main(){}\n",
                        "build": {"limits": {"wall_time_s": 3, "memory_kb": 262144}},
                        "tests": [{"stdin": ""}]})
    b = body["build"]
    assert body["status"] == "build_failed", dump(body)
    assert not b["timed_out"] and not b["memory_exceeded"], dump(body)
    assert "/dev/zero: No such file or directory" in b["stderr"], dump(body)


# 2^30 distinct instantiations: nothing can be shared between them.
TEMPLATE_BOMB = r'''
template <int N, long M> struct Bomb {
	static const long v = Bomb<N - 1, 2 * M>::v + Bomb<N - 1, 2 * M + 1>::v;
};
template <long M> struct Bomb<0, M> { static const long v = 1; };
int main() { return Bomb<30, 0>::v == 0; }
'''


def test_template_bomb(daemon):
    body = run(daemon, {"language": "cpp", "source": TEMPLATE_BOMB,
                        "build": {"limits": {"wall_time_s": 5, "memory_kb": 262144}},
                        "tests": [{"stdin": ""}]})
    b = body["build"]
    assert body["status"] == "build_failed", dump(body)
    assert b["timed_out"] or b["memory_exceeded"], dump(body)


def test_huge_compiler_output(daemon):
    """80,000 errors: the build's stderr is cut at its cap and marked."""
    body = run(daemon, {"language": "c", "source": "Q;\n" * 80000, "tests": [{"stdin": ""}]})
    b = body["build"]
    assert body["status"] == "build_failed", dump(body)
    assert b["stderr"].endswith("[goboxd: output truncated]\n"), dump(body)
    assert len(b["stderr"]) < 80 * 1024, len(b["stderr"])


def test_daemon_still_serves(daemon):
    assert daemon.get("/healthz")[0] == 200
    assert daemon.leftovers() == []
