/*
 * The sandbox against a real jail. Needs root (cgroups, the per-worker
 * uid). The driver comes from GOBOXD_TEST_JAIL: nsjail, bwrap or auto.
 * Probes are small C programs compiled into each test's job directory.
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/util.h"
#include "worker/sandbox/cgroup.h"
#include "worker/sandbox/jail.h"
#include "worker/sandbox/sandbox.h"

#define TEST_UID 60990
#define TEST_GID 60990

static struct sandbox *sb;
static char box[64];
static char jails[64];
static char tree[32];
static struct cg_place place;

static enum jail_kind test_jail(void)
{
	const char *j = getenv("GOBOXD_TEST_JAIL");

	if (j && strcmp(j, "nsjail") == 0)
		return JAIL_KIND_NSJAIL;
	if (j && strcmp(j, "bwrap") == 0)
		return JAIL_KIND_BWRAP;
	return JAIL_KIND_AUTO;
}

static void setup(void)
{
	struct sandbox_opts o = {
		.jail = test_jail(),
		.nsjail_path = "/usr/local/bin/nsjail",
		.bwrap_path = "/usr/bin/bwrap",
		.init_path = getenv("GOBOXD_INIT_PATH"),
		.jail_dir = jails,
		.uid = TEST_UID,
		.gid = TEST_GID,
		.tmpfs_kb = 16384,
	};
	char err[256];
	int rc;

	cr_assert_eq(geteuid(), 0, "the sandbox tests need root");
	snprintf(jails, sizeof(jails), "/tmp/goboxd-sbjails-XXXXXX");
	cr_assert_not_null(mkdtemp(jails));
	cr_assert_eq(chmod(jails, 0755), 0);
	/* the daemon's master start-up: choose the cgroup place, prepare it */
	rc = cg_start(NULL, &place, err, sizeof(err));
	cr_assert_eq(rc, 0, "cg_start: %s", err);
	o.cgroup_root = place.root[0] ? place.root : NULL;
	snprintf(tree, sizeof(tree), "%d-sandbox-test", (int)getpid());
	o.cgroup_name = tree;
	/* The build tree's init, unless one sits next to this binary. */
	if (!o.init_path && access(GOBOXD_BUILDDIR "/goboxd-init", X_OK) == 0)
		o.init_path = GOBOXD_BUILDDIR "/goboxd-init";
	rc = sandbox_open(&o, &sb, err, sizeof(err));
	cr_assert_eq(rc, 0, "sandbox_open: %s", err);
	snprintf(box, sizeof(box), "/tmp/goboxd-sbtest-XXXXXX");
	cr_assert_not_null(mkdtemp(box));
	cr_assert_eq(chown(box, TEST_UID, TEST_GID), 0);
	cr_assert_eq(chmod(box, 0755), 0);
}

static void rm_tree(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char p[512];

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		if (e->d_type == DT_DIR)
			rm_tree(p);
		else
			unlink(p);
	}
	closedir(d);
	rmdir(dir);
}

static void teardown(void)
{
	sandbox_close(sb);
	rm_tree(box);
	rm_tree(jails);
}

TestSuite(sandbox, .init = setup, .fini = teardown, .timeout = 120);

/* Compile a probe into the job directory as /sandbox/<name>. */
static void probe(const char *name, const char *src)
{
	char c[256], cmd[1024];
	FILE *f;

	snprintf(c, sizeof(c), "%s/%s.c", box, name);
	f = fopen(c, "w");
	cr_assert_not_null(f);
	fputs(src, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "gcc -O1 -w -o %s/%s %s", box, name, c);
	cr_assert_eq(system(cmd), 0, "compiling probe %s", name);
}

static struct limits default_limits(void)
{
	return (struct limits){
		.wall_ms = 10000,
		.cpu_ms = 5000,
		.memory_kb = 256 * 1024,
		.max_processes = 64,
		.fsize_kb = 64 * 1024,
		.output_kb = 1024,
	};
}

static const char *const test_env[] = {
	"PATH=/usr/bin:/bin", "HOME=/sandbox", "TMPDIR=/tmp", "LANG=C.UTF-8", NULL,
};

static int run_full(struct step_result *r, const char *const *argv, const struct limits *l,
		    const char *in, size_t inlen)
{
	struct step_spec s = {
		.argv = argv,
		.envp = test_env,
		.limits = *l,
		.stdin_data = in,
		.stdin_len = inlen,
	};

	step_result_init(r);
	return sandbox_run_once(sb, box, &s, r);
}

static int run_sh(struct step_result *r, const char *script, const struct limits *l)
{
	const char *argv[] = { "/usr/bin/sh", "-c", script, NULL };

	return run_full(r, argv, l, NULL, 0);
}

static void assert_ran(int rc, const struct step_result *r)
{
	cr_assert_eq(rc, 0, "sandbox_run: %d (%s)", rc, r->internal_msg);
	cr_assert_not(r->outcome.internal_error);
}

Test(sandbox, driver_is_known)
{
	const char *n = sandbox_driver_name(sb);

	cr_assert(strcmp(n, "nsjail") == 0 || strcmp(n, "bwrap") == 0);
	cr_assert_not_null(sandbox_driver_version(sb));
	cr_log_info("driver %s (%s) version \"%s\"", n, sandbox_driver_path(sb),
		    sandbox_driver_version(sb));
}

Test(sandbox, echo_exit_zero)
{
	struct step_result r;
	struct limits l = default_limits();
	int rc = run_sh(&r, "echo hello; echo oops >&2", &l);

	assert_ran(rc, &r);
	cr_assert(r.outcome.exited);
	cr_assert_eq(r.outcome.exit_code, 0);
	cr_assert_str_eq(r.out.data, "hello\n");
	cr_assert_str_eq(r.err.data, "oops\n");
	cr_assert_not(r.outcome.timed_out || r.outcome.oom || r.outcome.output_limited);
	step_result_free(&r);
}

Test(sandbox, exit_code_three)
{
	struct step_result r;
	struct limits l = default_limits();
	int rc = run_sh(&r, "exit 3", &l);

	assert_ran(rc, &r);
	cr_assert(r.outcome.exited);
	cr_assert_eq(r.outcome.exit_code, 3);
	step_result_free(&r);
}

Test(sandbox, exit_code_255_is_the_programs)
{
	struct step_result r;
	struct limits l = default_limits();
	int rc = run_sh(&r, "exit 255", &l);

	assert_ran(rc, &r);
	cr_assert(r.outcome.exited);
	cr_assert_eq(r.outcome.exit_code, 255);
	step_result_free(&r);
}

Test(sandbox, segfault_is_a_signal)
{
	struct step_result r;
	struct limits l = default_limits();
	const char *argv[] = { "segv", NULL };
	int rc;

	probe("segv", "int main(void) { volatile int *p = 0; *p = 1; return 0; }\n");
	rc = run_full(&r, argv, &l, NULL, 0);
	assert_ran(rc, &r);
	cr_assert_not(r.outcome.exited);
	cr_assert_eq(r.outcome.term_signal, SIGSEGV);
	step_result_free(&r);
}

Test(sandbox, stdin_is_fed)
{
	struct step_result r;
	struct limits l = default_limits();
	const char *argv[] = { "/usr/bin/cat", NULL };
	int rc = run_full(&r, argv, &l, "one\ntwo\n", 8);

	assert_ran(rc, &r);
	cr_assert_eq(r.outcome.exit_code, 0);
	cr_assert_str_eq(r.out.data, "one\ntwo\n");
	step_result_free(&r);
}

/* Programs that open their streams by name (/dev/stdin, /dev/stdout). */
Test(sandbox, stdio_can_be_reopened_by_name)
{
	struct step_result r;
	struct limits l = default_limits();
	const char *argv[] = { "/usr/bin/sh", "-c", "cat /dev/stdin > /dev/stdout", NULL };
	int rc = run_full(&r, argv, &l, "by name\n", 8);

	assert_ran(rc, &r);
	cr_assert_eq(r.outcome.exit_code, 0, "stderr: %s", r.err.data ? r.err.data : "");
	cr_assert_str_eq(r.out.data, "by name\n");
	step_result_free(&r);
}

Test(sandbox, large_stdin_round_trip)
{
	struct step_result r;
	struct limits l = default_limits();
	const char *argv[] = { "/usr/bin/wc", "-c", NULL };
	size_t n = 3 * 1024 * 1024;
	char *in = malloc(n);
	int rc;

	memset(in, 'x', n);
	rc = run_full(&r, argv, &l, in, n);
	assert_ran(rc, &r);
	cr_assert_eq(strtoul(r.out.data, NULL, 10), n);
	free(in);
	step_result_free(&r);
}

Test(sandbox, large_stdin_not_read_does_not_hang)
{
	struct step_result r;
	struct limits l = default_limits();
	const char *argv[] = { "/usr/bin/true", NULL };
	size_t n = 2 * 1024 * 1024;
	char *in = malloc(n);
	int rc;

	memset(in, 'y', n);
	rc = run_full(&r, argv, &l, in, n);
	assert_ran(rc, &r);
	cr_assert(r.outcome.exited);
	cr_assert_eq(r.outcome.exit_code, 0);
	cr_assert_not(r.outcome.timed_out);
	free(in);
	step_result_free(&r);
}

Test(sandbox, busy_loop_times_out_on_cpu)
{
	struct step_result r;
	struct limits l = default_limits();
	const char *argv[] = { "busy", NULL };
	int rc;

	probe("busy", "int main(void) { for (;;) ; }\n");
	l.cpu_ms = 500;
	l.wall_ms = 10000;
	rc = run_full(&r, argv, &l, NULL, 0);
	assert_ran(rc, &r);
	cr_assert(r.outcome.timed_out);
	cr_assert_not(r.outcome.exited);
	cr_assert_geq(r.cpu_ms, 500);
	cr_assert_lt(r.wall_ms, 5000, "wall %llu ms", (unsigned long long)r.wall_ms);
	step_result_free(&r);
}

Test(sandbox, sleep_times_out_on_wall)
{
	struct step_result r;
	struct limits l = default_limits();
	int rc;

	l.wall_ms = 500;
	rc = run_sh(&r, "sleep 30", &l);
	assert_ran(rc, &r);
	cr_assert(r.outcome.timed_out);
	cr_assert_not(r.outcome.exited);
	cr_assert_geq(r.wall_ms, 500);
	cr_assert_lt(r.wall_ms, 5000, "wall %llu ms", (unsigned long long)r.wall_ms);
	step_result_free(&r);
}

Test(sandbox, memory_hog_is_oom)
{
	struct step_result r;
	struct limits l = default_limits();
	const char *argv[] = { "hog", NULL };
	int rc;

	probe("hog", "#include <stdlib.h>\n#include <string.h>\n"
		     "int main(void) { for (;;) { char *p = malloc(1 << 20);"
		     " if (!p) return 7; memset(p, 1, 1 << 20); } }\n");
	l.memory_kb = 64 * 1024;
	rc = run_full(&r, argv, &l, NULL, 0);
	assert_ran(rc, &r);
	cr_assert(r.outcome.oom);
	cr_assert_not(r.outcome.exited && r.outcome.exit_code == 0);
	cr_assert_leq(r.memory_peak_kb, 64 * 1024 + 1024);
	step_result_free(&r);
}

Test(sandbox, fork_bomb_is_contained)
{
	struct step_result r;
	struct limits l = default_limits();
	const char *argv[] = { "bomb", NULL };
	int rc;

	probe("bomb", "#include <stdio.h>\n#include <unistd.h>\n"
		      "int main(void) { int n = 0; for (int i = 0; i < 10000; i++) {"
		      " pid_t p = fork(); if (p == 0) { pause(); _exit(0); }"
		      " if (p < 0) break; n++; } printf(\"%d\\n\", n); return 0; }\n");
	l.max_processes = 16;
	l.wall_ms = 5000;
	rc = run_full(&r, argv, &l, NULL, 0);
	assert_ran(rc, &r);
	cr_assert(r.outcome.exited, "the bomb's parent should finish");
	cr_assert_leq(atoi(r.out.data), 16, "forked %s", r.out.data);
	cr_assert_geq(atoi(r.out.data), 8, "forked %s", r.out.data);
	cr_assert_not(r.outcome.timed_out);
	step_result_free(&r);
}

Test(sandbox, file_size_limit)
{
	struct step_result r;
	struct limits l = default_limits();
	char path[128];
	struct stat st;
	int rc;

	l.fsize_kb = 1024;
	rc = run_sh(&r, "yes | head -c 10000000 > /sandbox/big", &l);
	assert_ran(rc, &r);
	cr_assert_not(r.outcome.exited && r.outcome.exit_code == 0);
	snprintf(path, sizeof(path), "%s/big", box);
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_leq(st.st_size, 1024 * 1024);
	step_result_free(&r);
}

Test(sandbox, stdout_flood_is_capped)
{
	struct step_result r;
	struct limits l = default_limits();
	const char *argv[] = { "/usr/bin/yes", NULL };
	size_t mlen = strlen(TRUNCATION_MARKER);
	int rc;

	l.output_kb = 64;
	rc = run_full(&r, argv, &l, NULL, 0);
	assert_ran(rc, &r);
	cr_assert(r.outcome.output_limited);
	cr_assert(r.out_truncated);
	cr_assert_eq(r.out.len, 64 * 1024 + mlen);
	cr_assert_eq(memcmp(r.out.data + 64 * 1024, TRUNCATION_MARKER, mlen), 0);
	cr_assert_lt(r.wall_ms, 5000);
	step_result_free(&r);
}

Test(sandbox, combined_cap_and_interleaving)
{
	struct step_result r;
	struct limits l = default_limits();
	const char *argv[] = { "/usr/bin/sh", "-c", "echo a; sleep 0.1; echo b >&2; sleep 0.1; echo c", NULL };
	struct step_spec s = {
		.argv = argv, .envp = test_env, .limits = l,
		.want_interleaved = true,
	};
	int rc;

	step_result_init(&r);
	rc = sandbox_run_once(sb, box, &s, &r);
	assert_ran(rc, &r);
	cr_assert_str_eq(r.interleaved.data, "a\nb\nc\n");
	s.argv = (const char *const[]){ "/usr/bin/yes", NULL };
	s.combined_cap = 1000;
	rc = sandbox_run_once(sb, box, &s, &r);
	assert_ran(rc, &r);
	cr_assert(r.outcome.output_limited);
	cr_assert_eq(r.out.len, 1000 + strlen(TRUNCATION_MARKER));
	step_result_free(&r);
}

Test(sandbox, no_network)
{
	struct step_result r;
	struct limits l = default_limits();
	const char *argv[] = { "net", NULL };
	int rc;

	/* INET opens, but reaches nothing; other families are refused */
	probe("net", "#include <stdio.h>\n#include <errno.h>\n#include <sys/socket.h>\n"
		     "#include <netinet/in.h>\n#include <arpa/inet.h>\n"
		     "int main(void) { struct sockaddr_in sa = { AF_INET, htons(80) };"
		     " int a = socket(AF_INET, SOCK_STREAM, 0);"
		     " inet_pton(AF_INET, \"127.0.0.1\", &sa.sin_addr);"
		     " int c = connect(a, (struct sockaddr *)&sa, sizeof(sa)); int ec = errno;"
		     " int p = socket(AF_PACKET, SOCK_RAW, 0); int ep = errno;"
		     " int u = socket(AF_UNIX, SOCK_STREAM, 0);"
		     " printf(\"%d %d %d %d %d %d\\n\", a >= 0, c, ec, p, ep, u >= 0);"
		     " return 0; }\n");
	rc = run_full(&r, argv, &l, NULL, 0);
	assert_ran(rc, &r);
	cr_assert_str_eq(r.out.data, "1 -1 101 -1 1 1\n");
	step_result_free(&r);
}

Test(sandbox, runs_as_nobody_not_root)
{
	struct step_result r;
	struct limits l = default_limits();
	int rc = run_sh(&r, "id -u; id -g; hostname", &l);

	assert_ran(rc, &r);
	cr_assert_str_eq(r.out.data, "65534\n65534\nsandbox\n");
	step_result_free(&r);
}

Test(sandbox, host_uid_is_the_sandbox_uid)
{
	struct step_result r;
	struct limits l = default_limits();
	char path[128];
	struct stat st;
	int rc = run_sh(&r, "echo x > /sandbox/owned", &l);

	assert_ran(rc, &r);
	snprintf(path, sizeof(path), "%s/owned", box);
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_uid, TEST_UID);
	step_result_free(&r);
}

Test(sandbox, filesystem_is_read_only_but_tmp_and_box)
{
	struct step_result r;
	struct limits l = default_limits();
	int rc = run_sh(&r,
			"touch /usr/x 2>/dev/null && echo usr-writable;"
			"echo x >> /etc/passwd 2>/dev/null && echo etc-writable;"
			"touch /usr/bin/x 2>/dev/null && echo usrbin-writable;"
			"touch /dev/x 2>/dev/null || echo dev-ro;"
			"echo t > /tmp/x && echo tmp-ok;"
			"echo b > /sandbox/x && echo box-ok;"
			"test -e /etc/shadow && echo shadow-visible;"
			"echo z > /dev/null && echo null-ok", &l);

	assert_ran(rc, &r);
	cr_assert_eq(strstr(r.out.data, "writable"), NULL, "%s", r.out.data);
	cr_assert_eq(strstr(r.out.data, "shadow"), NULL, "%s", r.out.data);
	cr_assert_neq(strstr(r.out.data, "tmp-ok"), NULL, "%s", r.out.data);
	cr_assert_neq(strstr(r.out.data, "box-ok"), NULL, "%s", r.out.data);
	cr_assert_neq(strstr(r.out.data, "null-ok"), NULL, "%s", r.out.data);
	step_result_free(&r);
}

/* bwrap's root is remounted read-only; nsjail 3.4 keeps its own 16 MB root
 * tmpfs writable (see nsjail/README.md), so this is bwrap's alone. */
Test(sandbox, bwrap_root_is_read_only)
{
	struct step_result r;
	struct limits l = default_limits();
	int rc;

	if (strcmp(sandbox_driver_name(sb), "bwrap") != 0)
		cr_skip_test("driver is %s", sandbox_driver_name(sb));
	rc = run_sh(&r, "touch /x 2>/dev/null && echo root-writable;"
		    "touch /etc/x 2>/dev/null && echo etc-writable; echo done", &l);
	assert_ran(rc, &r);
	cr_assert_str_eq(r.out.data, "done\n");
	step_result_free(&r);
}

Test(sandbox, tmp_is_size_capped)
{
	struct step_result r;
	struct limits l = default_limits();
	int rc = run_sh(&r, "yes | head -c 40000000 > /tmp/big; echo $?; "
			"wc -c < /tmp/big", &l);

	assert_ran(rc, &r);
	cr_assert_leq(strtoul(strchr(r.out.data, '\n') + 1, NULL, 10), 16384 * 1024);
	step_result_free(&r);
}

Test(sandbox, host_processes_are_invisible)
{
	struct step_result r;
	struct limits l = default_limits();
	int rc = run_sh(&r, "ls /proc | grep -c '^[0-9]'", &l);

	assert_ran(rc, &r);
	/* the shell, ls, grep and the jail's init at most */
	cr_assert_leq(atoi(r.out.data), 5, "%s", r.out.data);
	cr_assert_geq(atoi(r.out.data), 1, "%s", r.out.data);
	step_result_free(&r);
}

/*
 * goboxd-init is pid 1 and runs under the program's uid: its binary is
 * unmounted, its /proc entries are closed to the program (not dumpable),
 * and the kernel drops the program's signals to it.
 */
Test(sandbox, init_is_out_of_reach)
{
	struct step_result r;
	struct limits l = default_limits();
	int rc = run_sh(&r, "test -s /.goboxd-init && echo binary;"
			    " cat /proc/1/environ >/dev/null 2>&1 && echo environ;"
			    " ls /proc/1/fd >/dev/null 2>&1 && echo fds;"
			    " kill -KILL 1; kill -TERM 1; echo alive", &l);

	assert_ran(rc, &r);
	cr_assert_str_eq(r.out.data, "alive\n", "%s", r.out.data);
	cr_assert(r.outcome.exited);
	cr_assert_eq(r.outcome.exit_code, 0);
	step_result_free(&r);
}

/* The init reports the wait status as it was: no 128+N guessing. */
Test(sandbox, exit_codes_above_128_are_exit_codes)
{
	static const int codes[] = { 129, 137, 139, 143, 159, 200 };
	struct limits l = default_limits();

	for (size_t i = 0; i < ARRAY_SIZE(codes); i++) {
		struct step_result r;
		char cmd[32];
		int rc;

		snprintf(cmd, sizeof(cmd), "exit %d", codes[i]);
		rc = run_sh(&r, cmd, &l);
		assert_ran(rc, &r);
		cr_assert(r.outcome.exited, "exit %d", codes[i]);
		cr_assert_eq(r.outcome.exit_code, codes[i]);
		cr_assert_eq(r.outcome.term_signal, 0, "exit %d read as signal %d", codes[i],
			     r.outcome.term_signal);
		step_result_free(&r);
	}
}

Test(sandbox, own_signal_is_a_signal)
{
	struct step_result r;
	struct limits l = default_limits();
	int rc = run_sh(&r, "kill -TERM $$; sleep 5", &l);

	assert_ran(rc, &r);
	cr_assert_not(r.outcome.exited);
	cr_assert_eq(r.outcome.term_signal, SIGTERM);
	step_result_free(&r);
}

/* ---- one jail, several programs ----------------------------------------- */

static struct jail *open_jail(void)
{
	struct jail *j = NULL;
	char err[256];
	int rc = jail_start(sb, box, &j, err, sizeof(err));

	cr_assert_eq(rc, 0, "jail_start: %s", err);
	return j;
}

static int run_in(struct jail *j, struct step_result *r, const char *script,
		  const struct limits *l)
{
	const char *argv[] = { "/usr/bin/sh", "-c", script, NULL };
	struct step_spec s = { .argv = argv, .envp = test_env, .limits = *l };

	step_result_init(r);
	return sandbox_run(j, &s, r);
}

Test(sandbox, programs_of_one_jail_share_no_tmp_and_no_process)
{
	struct jail *j = open_jail();
	struct step_result r;
	struct limits l = default_limits();
	int rc;

	rc = run_in(j, &r, "echo x > /tmp/left; (sleep 60 &); echo started", &l);
	assert_ran(rc, &r);
	cr_assert_str_eq(r.out.data, "started\n");
	step_result_free(&r);
	rc = run_in(j, &r, "test -e /tmp/left && echo tmp-kept;"
			   " ls /proc | grep -c '^[0-9]'", &l);
	assert_ran(rc, &r);
	/* the init, the shell, ls and grep: no sleep left from before */
	cr_assert_leq(atoi(r.out.data), 4, "%s", r.out.data);
	cr_assert_null(strstr(r.out.data, "tmp-kept"));
	step_result_free(&r);
	jail_destroy(j);
}

Test(sandbox, time_and_memory_are_per_program)
{
	struct jail *j = open_jail();
	struct step_result r;
	struct limits l = default_limits();
	int rc;

	rc = run_in(j, &r, "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done;"
			   " yes | tr -d '\\n' | head -c 40000000 | tail -n 1 | wc -c", &l);
	assert_ran(rc, &r);
	cr_assert_geq(r.cpu_ms, 100, "cpu %llu ms", (unsigned long long)r.cpu_ms);
	cr_assert_geq(r.memory_peak_kb, 30 * 1024, "peak %llu kB",
		      (unsigned long long)r.memory_peak_kb);
	step_result_free(&r);
	rc = run_in(j, &r, "true", &l);
	assert_ran(rc, &r);
	cr_assert_lt(r.cpu_ms, 50, "cpu %llu ms", (unsigned long long)r.cpu_ms);
	cr_assert_lt(r.memory_peak_kb, 16 * 1024, "peak %llu kB",
		     (unsigned long long)r.memory_peak_kb);
	step_result_free(&r);
	jail_destroy(j);
}

Test(sandbox, a_killed_program_leaves_the_jail_usable)
{
	struct jail *j = open_jail();
	struct step_result r;
	struct limits l = default_limits();
	int rc;

	l.memory_kb = 32 * 1024;
	rc = run_in(j, &r, "yes | tr -d '\\n' | head -c 200000000 | tail -n 1", &l);
	assert_ran(rc, &r);
	cr_assert(r.outcome.oom);
	step_result_free(&r);
	l = default_limits();
	l.wall_ms = 300;
	rc = run_in(j, &r, "sleep 10", &l);
	assert_ran(rc, &r);
	cr_assert(r.outcome.timed_out);
	step_result_free(&r);
	l = default_limits();
	rc = run_in(j, &r, "echo ok", &l);
	assert_ran(rc, &r);
	cr_assert(r.outcome.exited);
	cr_assert_eq(r.outcome.exit_code, 0);
	cr_assert_str_eq(r.out.data, "ok\n");
	cr_assert_not(r.outcome.oom);
	step_result_free(&r);
	jail_destroy(j);
}

Test(sandbox, first_program_finds_tmp_empty)
{
	struct jail *j = open_jail();
	struct step_result r;
	struct limits l = default_limits();
	int rc = run_in(j, &r, "ls -A /tmp | wc -l", &l);

	assert_ran(rc, &r);
	cr_assert_eq(atoi(r.out.data), 0, "%s", r.out.data);
	step_result_free(&r);
	jail_destroy(j);
}

/*
 * A forbidden call kills the program with SIGSYS; the calls runtimes probe
 * and fall back from (clone3, io_uring, Linux AIO) fail with ENOSYS;
 * sethostname fails with EPERM, which hostname(1) reports itself.
 */
Test(sandbox, denied_syscalls_kill_or_fail_as_decided)
{
	static const struct {
		const char *call;
		int sig;        /* the expected signal, or 0: exits printing errno */
		int err;
	} cases[] = {
		{ "unshare", SIGSYS, 0 }, { "mount", SIGSYS, 0 }, { "clone_newnet", SIGSYS, 0 },
		{ "ptrace", SIGSYS, 0 }, { "bpf", SIGSYS, 0 }, { "keyctl", SIGSYS, 0 },
		{ "clone3", 0, ENOSYS }, { "io_uring_setup", 0, ENOSYS }, { "io_setup", 0, ENOSYS },
		{ "adjtimex", SIGSYS, 0 }, { "sethostname", 0, EPERM },
	};
	struct limits l = default_limits();

	probe("deny", "#define _GNU_SOURCE\n#include <stdio.h>\n#include <errno.h>\n"
		      "#include <string.h>\n#include <sched.h>\n#include <signal.h>\n"
		      "#include <unistd.h>\n#include <sys/mount.h>\n#include <sys/ptrace.h>\n"
		      "#include <sys/syscall.h>\n#include <sys/timex.h>\n"
		      "int main(int argc, char **argv) { const char *c = argv[1]; long r = 0;"
		      " struct timex tx = { 0 };"
		      " if (!strcmp(c, \"unshare\")) r = unshare(CLONE_NEWUSER);"
		      " else if (!strcmp(c, \"mount\")) r = mount(\"none\", \"/tmp\", \"tmpfs\", 0, 0);"
		      " else if (!strcmp(c, \"clone_newnet\")) r = syscall(SYS_clone, CLONE_NEWNET | SIGCHLD, 0, 0, 0, 0);"
		      " else if (!strcmp(c, \"ptrace\")) r = ptrace(PTRACE_TRACEME, 0, 0, 0);"
		      " else if (!strcmp(c, \"bpf\")) r = syscall(SYS_bpf, 0, 0, 0);"
		      " else if (!strcmp(c, \"keyctl\")) r = syscall(SYS_keyctl, 0, 0, 0, 0, 0);"
		      " else if (!strcmp(c, \"clone3\")) r = syscall(SYS_clone3, 0, 0);"
		      " else if (!strcmp(c, \"io_uring_setup\")) r = syscall(SYS_io_uring_setup, 1, 0);"
		      " else if (!strcmp(c, \"io_setup\")) r = syscall(SYS_io_setup, 1, 0);"
		      " else if (!strcmp(c, \"adjtimex\")) { tx.modes = ADJ_OFFSET; r = adjtimex(&tx); }"
		      " else if (!strcmp(c, \"sethostname\")) r = sethostname(\"x\", 1);"
		      " printf(\"%ld %d\\n\", r, errno); return 0; }\n");
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const char *argv[] = { "deny", cases[i].call, NULL };
		struct step_result r;
		char want[32];
		int rc = run_full(&r, argv, &l, NULL, 0);

		assert_ran(rc, &r);
		if (cases[i].sig) {
			cr_assert_not(r.outcome.exited, "%s: exited, %s", cases[i].call, r.out.data);
			cr_assert_eq(r.outcome.term_signal, cases[i].sig, "%s: signal %d",
				     cases[i].call, r.outcome.term_signal);
		} else {
			snprintf(want, sizeof(want), "-1 %d\n", cases[i].err);
			cr_assert(r.outcome.exited, "%s", cases[i].call);
			cr_assert_str_eq(r.out.data, want, "%s: %s", cases[i].call, r.out.data);
		}
		step_result_free(&r);
	}
}

/* Every mount: nosuid; nodev but for the device nodes themselves. */
Test(sandbox, mounts_are_nosuid_and_nodev)
{
	struct step_result r;
	struct limits l = default_limits();
	int rc = run_sh(&r, "while read -r id parent dev root mp opts rest; do"
			    " case \",$opts,\" in *,nosuid,*) ;; *) echo \"suid $mp\";; esac;"
			    " case \"$mp\" in /dev/null|/dev/random|/dev/urandom) continue;; esac;"
			    " case \",$opts,\" in *,nodev,*) ;; *) echo \"dev $mp\";; esac;"
			    " done < /proc/self/mountinfo; echo checked", &l);

	assert_ran(rc, &r);
	cr_assert_str_eq(r.out.data, "checked\n", "%s", r.out.data);
	step_result_free(&r);
}

/* A file written to /tmp cannot be executed, unless the step allows it. */
Test(sandbox, tmp_is_noexec_unless_allowed)
{
	const char *argv[] = { "/usr/bin/sh", "-c",
			       "cp /usr/bin/true /tmp/t && /tmp/t && echo ran", NULL };
	struct step_spec s = { .argv = argv, .envp = test_env, .limits = default_limits() };
	struct step_result r;
	int rc;

	step_result_init(&r);
	rc = sandbox_run_once(sb, box, &s, &r);
	assert_ran(rc, &r);
	cr_assert_eq(r.out.len, 0, "%s", r.out.data);
	cr_assert_neq(r.outcome.exit_code, 0);
	s.tmp_exec = true;
	rc = sandbox_run_once(sb, box, &s, &r);
	assert_ran(rc, &r);
	cr_assert_str_eq(r.out.data, "ran\n");
	step_result_free(&r);
}

/* No user database, and none of the host's /etc it does not need. */
Test(sandbox, etc_is_minimal)
{
	struct step_result r;
	struct limits l = default_limits();
	int rc = run_sh(&r, "id;"
			    " for f in passwd group shadow ld.so.cache ld.so.conf nsswitch.conf"
			    " localtime hostname; do test -e /etc/$f && echo \"host $f\"; done; echo done",
			    &l);

	assert_ran(rc, &r);
	cr_assert_str_eq(r.out.data, "uid=65534 gid=65534 groups=65534\ndone\n", "%s", r.out.data);
	step_result_free(&r);
}

/* Pinned: one CPU, and the program cannot widen it. */
Test(sandbox, pinned_programs_stay_on_their_cpu)
{
	struct sandbox_opts o = {
		.jail = test_jail(), .nsjail_path = "/usr/local/bin/nsjail",
		.bwrap_path = "/usr/bin/bwrap", .init_path = getenv("GOBOXD_INIT_PATH"),
		.jail_dir = jails, .uid = TEST_UID, .gid = TEST_GID, .tmpfs_kb = 16384,
		.pin_cpu = true, .cpu = 0, .cgroup_root = place.root[0] ? place.root : NULL,
	};
	const char *argv[] = { "/usr/bin/sh", "-c", "grep Cpus_allowed_list /proc/self/status;"
			       " taskset -p ffff $$ >/dev/null 2>&1 && echo widened; echo end", NULL };
	struct step_spec s = { .argv = argv, .envp = test_env, .limits = default_limits() };
	struct sandbox *pinned;
	struct step_result r;
	char err[256], name[48];
	int rc;

	if (!o.init_path && access(GOBOXD_BUILDDIR "/goboxd-init", X_OK) == 0)
		o.init_path = GOBOXD_BUILDDIR "/goboxd-init";
	snprintf(name, sizeof(name), "%s-pinned", tree);
	o.cgroup_name = name;
	cr_assert_eq(sandbox_open(&o, &pinned, err, sizeof(err)), 0, "%s", err);
	step_result_init(&r);
	rc = sandbox_run_once(pinned, box, &s, &r);
	assert_ran(rc, &r);
	cr_assert_str_eq(r.out.data, "Cpus_allowed_list:\t0\nend\n", "%s", r.out.data);
	step_result_free(&r);
	sandbox_close(pinned);
}

/* has_cpu without pin_cpu: only the steps that ask are pinned (/v1/run's). */
Test(sandbox, steps_that_ask_are_pinned)
{
	struct sandbox_opts o = {
		.jail = test_jail(), .nsjail_path = "/usr/local/bin/nsjail",
		.bwrap_path = "/usr/bin/bwrap", .init_path = getenv("GOBOXD_INIT_PATH"),
		.jail_dir = jails, .uid = TEST_UID, .gid = TEST_GID, .tmpfs_kb = 16384,
		.has_cpu = true, .cpu = 0, .cgroup_root = place.root[0] ? place.root : NULL,
	};
	const char *argv[] = { "/usr/bin/nproc", NULL };
	struct step_spec s = { .argv = argv, .envp = test_env, .limits = default_limits() };
	struct sandbox *own;
	struct step_result r;
	char err[256], name[48], all[16];
	cpu_set_t set;
	int rc;

	if (!o.init_path && access(GOBOXD_BUILDDIR "/goboxd-init", X_OK) == 0)
		o.init_path = GOBOXD_BUILDDIR "/goboxd-init";
	snprintf(name, sizeof(name), "%s-asked", tree);
	o.cgroup_name = name;
	cr_assert_eq(sched_getaffinity(0, sizeof(set), &set), 0);
	snprintf(all, sizeof(all), "%d\n", CPU_COUNT(&set));
	cr_assert_eq(sandbox_open(&o, &own, err, sizeof(err)), 0, "%s", err);
	for (int pin = 0; pin < 2; pin++) {
		s.pin_cpu = pin;
		step_result_init(&r);
		rc = sandbox_run_once(own, box, &s, &r);
		assert_ran(rc, &r);
		cr_assert_str_eq(r.out.data, pin ? "1\n" : all, "pin %d: %s", pin, r.out.data);
		step_result_free(&r);
	}
	sandbox_close(own);
}

Test(sandbox, no_locked_memory)
{
	struct step_result r;
	struct limits l = default_limits();
	int rc = run_sh(&r, "ulimit -l", &l);

	assert_ran(rc, &r);
	cr_assert_str_eq(r.out.data, "0\n");
	step_result_free(&r);
}

#ifdef __x86_64__
/* An x32 system call number must not slip past the native-ABI denylist. */
Test(sandbox, x32_syscalls_are_killed)
{
	struct step_result r;
	struct limits l = default_limits();
	const char *argv[] = { "x32", NULL };
	int rc;

	probe("x32", "#include <unistd.h>\n#include <sys/syscall.h>\n"
		     "int main(void) { syscall(0x40000000 | SYS_getpid); return 0; }\n");
	rc = run_full(&r, argv, &l, NULL, 0);
	assert_ran(rc, &r);
	cr_assert_not(r.outcome.exited);
	cr_assert_eq(r.outcome.term_signal, SIGSYS);
	step_result_free(&r);
}
#endif

Test(sandbox, threads_and_plain_fork_still_work)
{
	struct step_result r;
	struct limits l = default_limits();
	int rc = run_sh(&r, "(echo child) ; echo $(echo sub)", &l);

	assert_ran(rc, &r);
	cr_assert_str_eq(r.out.data, "child\nsub\n");
	step_result_free(&r);
}

Test(sandbox, only_stdio_is_inherited)
{
	struct step_result r;
	struct limits l = default_limits();
	int rc = run_sh(&r, "ls /proc/self/fd | sort -n | tr '\\n' ' '", &l);

	assert_ran(rc, &r);
	/* 0-2, plus the fd ls itself opened on the directory */
	cr_assert_str_eq(r.out.data, "0 1 2 3 ", "%s", r.out.data);
	step_result_free(&r);
}

Test(sandbox, missing_program_is_an_internal_error)
{
	struct step_result r;
	struct limits l = default_limits();
	const char *argv[] = { "/nonexistent/prog", NULL };
	int rc = run_full(&r, argv, &l, NULL, 0);

	cr_assert_lt(rc, 0);
	cr_assert(r.outcome.internal_error);
	cr_assert_neq(r.internal_msg[0], '\0');
	step_result_free(&r);
}

/* ---- the init's protocol, spoken directly ------------------------------- */

/* The next packet from the init that answers id (HELLO and ENTERED, id 0,
 * are skipped); its type, with a FAILED's body in *f. */
static uint32_t init_answer(int sock, uint32_t id, struct initmsg_failed *f)
{
	struct {
		struct initmsg_hdr h;
		union {
			struct initmsg_failed failed;
			char any[64];
		} body;
	} m;

	for (;;) {
		struct pollfd pf = { .fd = sock, .events = POLLIN };
		ssize_t n;

		cr_assert_eq(poll(&pf, 1, 10000), 1, "no answer from the init");
		n = recv(sock, &m, sizeof(m), 0);
		cr_assert_geq(n, (ssize_t)sizeof(m.h), "the init closed its end");
		if (m.h.id != id)
			continue;
		if (m.h.type == INITMSG_FAILED)
			*f = m.body.failed;
		return m.h.type;
	}
}

/* A RUN of /usr/bin/true with /dev/null for stdio, as sandbox_run would
 * send it, but on a socket the test holds. */
static void send_true(int sock, uint32_t id)
{
	static const char strings[] = JAILPATH_BOX "\0/usr/bin/true";
	struct initmsg_run r = {
		.uid = POLICY_INSIDE_UID, .gid = POLICY_INSIDE_GID, .cpu = -1, .argc = 1,
		.rlimit = { [INITMSG_RLIMIT_CPU] = 10, [INITMSG_RLIMIT_FSIZE] = 1 << 20,
			    [INITMSG_RLIMIT_NOFILE] = 64, [INITMSG_RLIMIT_NPROC] = 64 },
	};
	struct initmsg_hdr h = { INITMSG_MAGIC, INITMSG_RUN, id, sizeof(r) + sizeof(strings) };
	int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
	int fds[3] = { nul, nul, nul };
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(fds))];
	} ctl;
	struct iovec iov[3] = { { &h, sizeof(h) }, { &r, sizeof(r) },
				{ (void *)strings, sizeof(strings) } };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 3, .msg_control = ctl.buf,
			     .msg_controllen = sizeof(ctl.buf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);

	cr_assert_geq(nul, 0);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(c), fds, sizeof(fds));
	cr_assert_geq(sendmsg(sock, &mh, MSG_NOSIGNAL), 0, "sendmsg: %s", strerror(errno));
	close(nul);
}

/*
 * The seccomp filter is the init's last step before a program's exec, and
 * it comes in FILTER, which jail_ready sends: a RUN that overtook it would
 * start a program with no filter at all. The init refuses it instead.
 */
Test(sandbox, init_refuses_a_run_before_the_filter)
{
	struct jail *j = open_jail();   /* started, and no jail_ready: no FILTER */
	struct initmsg_failed f = { 0 };
	uint32_t type;

	send_true(jail_sock(j), 7);
	type = init_answer(jail_sock(j), 7, &f);
	cr_expect_eq(type, INITMSG_FAILED, "the init answered %u, not FAILED", type);
	cr_expect_eq(f.stage, INITMSG_STAGE_PROTOCOL, "stage %s", initmsg_stage_name(f.stage));
	jail_destroy(j);
}

static int count_subdirs(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_type == DT_DIR && strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

Test(sandbox, step_cgroup_is_removed)
{
	struct step_result r;
	struct limits l = default_limits();
	int seen = 0;
	int rc = run_sh(&r, "sleep 0.1 & echo bg", &l);

	assert_ran(rc, &r);
	for (unsigned i = 0; i < place.ndirs; i++) {
		char dir[PATH_MAX + 64];
		int n;

		snprintf(dir, sizeof(dir), "%s/%s", place.dirs[i], tree);
		n = count_subdirs(dir);
		if (n < 0)
			continue;
		seen++;
		cr_assert_eq(n, 0, "%s still has step cgroups", dir);
	}
	cr_assert_gt(seen, 0, "no goboxd cgroup tree found");
	step_result_free(&r);
}

/*
 * nsjail -Mo could sleep up to its 1 s tick after a child's exit. Timing
 * is a benchmark's business; this only looks for the stall's signature.
 */
Test(sandbox, no_one_second_stall, .timeout = 300)
{
	struct limits l = default_limits();
	const char *argv[] = { "/usr/bin/true", NULL };
	uint64_t max = 0, sum = 0;
	int slow = 0;

	for (int i = 0; i < 200; i++) {
		struct step_result r;
		int rc = run_full(&r, argv, &l, NULL, 0);

		assert_ran(rc, &r);
		cr_assert_eq(r.outcome.exit_code, 0);
		sum += r.wall_ms;
		if (r.wall_ms > max)
			max = r.wall_ms;
		if (r.wall_ms >= 900)
			slow++;
		step_result_free(&r);
	}
	cr_log_info("200 runs of true: mean %llu ms, max %llu ms",
		    (unsigned long long)(sum / 200), (unsigned long long)max);
	cr_assert_eq(slow, 0, "%d runs took >= 900 ms (max %llu)", slow,
		     (unsigned long long)max);
}

/* ---- interactive tests: two programs, two jails ---------------------------- */

/* The interactor's jail: its own uid, the box (where probes are) and a
 * control directory. */
static struct jail *open_interactor_jail(void)
{
	struct jail_opts o = { .box_dir = box, .uid = TEST_UID + 1, .gid = TEST_GID + 1,
			       .control_dir = true };
	struct jail *j = NULL;
	char err[256];
	int rc = jail_start_with(sb, &o, &j, err, sizeof(err));

	cr_assert_eq(rc, 0, "jail_start_with: %s", err);
	return j;
}

struct pair_case {
	const char *const *sol_argv;
	const char *const *itr_argv;
	struct limits sol_limits, itr_limits;
	uint32_t wall_ms;
	bool protocol;
};

static int run_pair(const struct pair_case *c, struct interact_result *r)
{
	struct step_spec ss = { .argv = c->sol_argv, .envp = test_env, .limits = c->sol_limits };
	struct step_spec is = { .argv = c->itr_argv, .envp = test_env, .limits = c->itr_limits };
	struct interact_spec spec = {
		.solution = &ss, .interactor = &is, .wall_ms = c->wall_ms,
		/* testlib: accepted and points let the solution finish */
		.solution_continues = (1u << 0) | (1u << 7),
		.protocol = c->protocol,
	};
	struct jail *sj = open_jail(), *ij = open_interactor_jail();
	int rc;

	interact_result_init(r);
	rc = sandbox_interact(sj, ij, &spec, r);
	jail_destroy(sj);
	jail_destroy(ij);
	return rc;
}

/* Two shell scripts; the wall limit in ms. */
static int pair_sh(const char *sol, const char *itr, uint32_t wall_ms, struct interact_result *r)
{
	const char *sa[] = { "/usr/bin/sh", "-c", sol, NULL };
	const char *ia[] = { "/usr/bin/sh", "-c", itr, NULL };
	struct pair_case c = { sa, ia, default_limits(), default_limits(), wall_ms, true };

	return run_pair(&c, r);
}

static void assert_pair_ran(int rc, const struct interact_result *r)
{
	cr_assert_eq(rc, 0, "sandbox_interact: %d (%s / %s)", rc, r->solution.internal_msg,
		     r->interactor.internal_msg);
	cr_assert_not(r->solution.outcome.internal_error);
	cr_assert_not(r->interactor.outcome.internal_error);
}

static const char *text(const struct buf *b)
{
	return b->data ? b->data : "";
}

Test(sandbox, interact_dialogue_both_ways)
{
	struct interact_result r;
	int rc = pair_sh("read x; echo $((x + 1)); echo sol-err >&2",
			 "echo 41; read y; echo \"got $y\" >&2; [ \"$y\" = 42 ]", 5000, &r);

	assert_pair_ran(rc, &r);
	cr_assert(r.interactor.outcome.exited);
	cr_assert_eq(r.interactor.outcome.exit_code, 0, "%s", text(&r.interactor.err));
	cr_assert_str_eq(text(&r.interactor.err), "got 42\n");
	cr_assert(r.solution.outcome.exited);
	cr_assert_eq(r.solution.outcome.exit_code, 0);
	cr_assert_str_eq(text(&r.solution.err), "sol-err\n");
	/* the dialogue went through pipes the worker does not read */
	cr_assert_eq(r.solution.out.len, 0);
	cr_assert_not(r.wall_limit || r.idle || r.stopped || r.terminated);
	interact_result_free(&r);
}

Test(sandbox, interact_deadlock_ends_at_the_wall_limit_as_idle)
{
	struct interact_result r;
	int rc = pair_sh("read x", "read y", 1000, &r);

	assert_pair_ran(rc, &r);
	cr_assert(r.solution.outcome.timed_out);
	cr_assert(r.wall_limit);
	cr_assert(r.idle);
	/* killed with the solution: not a failure of its own */
	cr_assert_not(r.interactor.outcome.timed_out);
	cr_assert_lt(r.solution.cpu_ms, 50, "cpu %llu ms", (unsigned long long)r.solution.cpu_ms);
	cr_assert_geq(r.solution.wall_ms, 1000);
	cr_assert_lt(r.solution.wall_ms, 3000);
	interact_result_free(&r);
}

Test(sandbox, interact_a_computing_solution_is_not_idle)
{
	struct interact_result r;
	int rc = pair_sh("while :; do :; done", "read y", 1000, &r);

	assert_pair_ran(rc, &r);
	cr_assert(r.solution.outcome.timed_out);
	cr_assert(r.wall_limit);
	cr_assert_not(r.idle);
	interact_result_free(&r);
}

Test(sandbox, interact_interactor_verdict_stops_the_solution)
{
	struct interact_result r;
	uint64_t t0 = now_ms();
	int rc = pair_sh("sleep 30", "exit 1", 10000, &r);

	assert_pair_ran(rc, &r);
	cr_assert(r.stopped);
	cr_assert_eq(r.solution.outcome.term_signal, SIGKILL);
	cr_assert_not(r.solution.outcome.timed_out);
	cr_assert_lt(now_ms() - t0, 5000);
	interact_result_free(&r);
}

Test(sandbox, interact_accepted_lets_the_solution_finish)
{
	struct interact_result r;
	int rc = pair_sh("sleep 0.3; exit 6", "exit 0", 10000, &r);

	assert_pair_ran(rc, &r);
	cr_assert_not(r.stopped);
	cr_assert(r.solution.outcome.exited);
	cr_assert_eq(r.solution.outcome.exit_code, 6);
	cr_assert_geq(r.solution.wall_ms, 300);
	interact_result_free(&r);
}

Test(sandbox, interact_a_solution_ending_first_keeps_its_exit_code)
{
	struct interact_result r;
	int rc = pair_sh("exit 3", "read y; sleep 0.1; exit 1", 10000, &r);

	assert_pair_ran(rc, &r);
	cr_assert_not(r.stopped);
	cr_assert_eq(r.solution.outcome.exit_code, 3);
	cr_assert_eq(r.interactor.outcome.exit_code, 1);
	interact_result_free(&r);
}

/*
 * A solution that crashes while its interactor ends: the interactor sees
 * the end of the dialogue and exits before the solution's init has reported
 * the crash. The kill that follows finds it dying: it was not stopped by
 * goboxd, and its own signal stands.
 *
 * The order is the kernel's, not the scheduler's. The crash is decided
 * before the dialogue can end: the solution's stdout is held by a child
 * that waits on a robust process-shared mutex the solution owns, and the
 * kernel hands that mutex on (EOWNERDEAD) only once the solution is dying,
 * before it frees its memory. Then the solution frees 512 MiB, slowly,
 * while the child exits, the interactor reads the end and exits, and goboxd
 * kills what is left; only then can the solution's init report the crash.
 * (Closing stdout and then raising the signal is a race: a kill that comes
 * in between is a real stop.)
 */
Test(sandbox, interact_a_kill_too_late_is_not_a_stop)
{
	const char *sa[] = { "/sandbox/late_segv", NULL };
	const char *ia[] = { "/usr/bin/sh", "-c", "read y; exit 1", NULL };
	struct pair_case c = { sa, ia, default_limits(), default_limits(), 10000, false };
	struct interact_result r;
	int rc;

	probe("late_segv",
	      "#include <pthread.h>\n#include <signal.h>\n#include <stdlib.h>\n"
	      "#include <string.h>\n#include <sys/mman.h>\n#include <unistd.h>\n"
	      "int main(void) { size_t n = (size_t)512 << 20; char *p;\n"
	      "  pthread_mutexattr_t a; pthread_mutex_t *m = mmap(NULL, sizeof(*m),\n"
	      "    PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);\n"
	      "  if (m == MAP_FAILED) return 2;\n"
	      "  pthread_mutexattr_init(&a);\n"
	      "  pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);\n"
	      "  pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);\n"
	      "  if (pthread_mutex_init(m, &a) || pthread_mutex_lock(m)) return 3;\n"
	      "  switch (fork()) { case -1: return 4; case 0: pthread_mutex_lock(m); _exit(0); }\n"
	      "  close(1); p = malloc(n); if (!p) return 5; memset(p, 1, n);\n"
	      "  raise(SIGSEGV); return p[n - 1]; }\n");
	c.sol_limits.memory_kb = 1024 * 1024;
	rc = run_pair(&c, &r);
	assert_pair_ran(rc, &r);
	cr_assert_eq(r.interactor.outcome.exit_code, 1);
	cr_assert_eq(r.solution.outcome.term_signal, SIGSEGV, "signal %d, exit code %d",
		     r.solution.outcome.term_signal, r.solution.outcome.exit_code);
	cr_assert_not(r.stopped);
	interact_result_free(&r);
}

Test(sandbox, interact_interactor_cpu_limit_is_its_own)
{
	const char *sa[] = { "/usr/bin/sh", "-c", "read x", NULL };
	const char *ia[] = { "/usr/bin/sh", "-c", "while :; do :; done", NULL };
	struct pair_case c = { sa, ia, default_limits(), default_limits(), 10000, false };
	struct interact_result r;
	int rc;

	c.itr_limits.cpu_ms = 300;
	rc = run_pair(&c, &r);
	assert_pair_ran(rc, &r);
	cr_assert(r.interactor.outcome.timed_out);
	cr_assert_not(r.solution.outcome.timed_out);
	cr_assert_not(r.wall_limit);
	interact_result_free(&r);
}

/* Writing to a solution that has gone is EPIPE for the interactor, which
 * can then say so, not a SIGPIPE that looks like its own crash. */
Test(sandbox, interact_interactor_survives_a_gone_solution)
{
	struct interact_result r;
	int rc = pair_sh("exit 0", "sleep 0.2; echo hi; echo \"after $?\" >&2; exit 1", 10000, &r);

	assert_pair_ran(rc, &r);
	cr_assert(r.interactor.outcome.exited, "signal %d", r.interactor.outcome.term_signal);
	cr_assert_eq(r.interactor.outcome.exit_code, 1);
	cr_assert_not_null(strstr(text(&r.interactor.err), "after "), "%s", text(&r.interactor.err));
	interact_result_free(&r);
}

/*
 * The solution's jail shows nothing of the interactor: no control
 * directory, no process of it; the interactor runs under a uid of its own.
 */
Test(sandbox, interact_solution_cannot_reach_the_interactor)
{
	struct interact_result r;
	int rc = pair_sh("ls /judge >&2 2>/dev/null && echo SEEN >&2;"
			 " ls /proc | grep '^[0-9]' | wc -l >&2;"
			 " grep '^Uid' /proc/self/status >&2; echo done",
			 "read x; ls /judge >&2; grep '^Uid' /proc/self/status >&2", 10000, &r);
	const char *se = text(&r.solution.err), *ie = text(&r.interactor.err);

	assert_pair_ran(rc, &r);
	cr_assert_null(strstr(se, "SEEN"), "%s", se);
	/* the init, the shell, ls, grep and wc at most */
	cr_assert_leq(atoi(se), 5, "%s", se);
	cr_assert_not_null(strstr(ie, "status"), "%s", ie);
	cr_assert_not_null(strstr(ie, "wait"), "%s", ie);
	/* 65534 inside both; the host uids differ (the kernel shows ours) */
	cr_assert_not_null(strstr(se, "65534"), "%s", se);
	cr_assert_not_null(strstr(ie, "65534"), "%s", ie);
	interact_result_free(&r);
}

Test(sandbox, interact_protocol_fifos_go_one_way)
{
	struct interact_result r;
	int rc = pair_sh("read x",
			 "cat /judge/wait 2>/dev/null && echo READ-WAIT >&2;"
			 " (echo 1 > /judge/status) 2>/dev/null && echo WROTE-STATUS >&2;"
			 " touch /judge/x 2>/dev/null && echo WROTE-DIR >&2; echo bye", 10000, &r);

	assert_pair_ran(rc, &r);
	cr_assert_str_eq(text(&r.interactor.err), "");
	interact_result_free(&r);
}

Test(sandbox, interact_protocol_time_grows_while_the_solution_computes)
{
	struct interact_result r;
	unsigned long long a = 0, b = 0;
	int rc = pair_sh("read go; i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; echo done;"
			 " read x",
			 "echo 1 > /judge/wait; a=$(head -n 1 /judge/status); echo go; read d;"
			 " echo 1 > /judge/wait; b=$(head -n 1 /judge/status); echo \"$a $b\" >&2;"
			 " echo bye", 20000, &r);

	assert_pair_ran(rc, &r);
	cr_assert_eq(sscanf(text(&r.interactor.err), "%llu %llu", &a, &b), 2, "%s",
		     text(&r.interactor.err));
	cr_assert_gt(b, a + 100000, "cpu %llu -> %llu us", a, b);
	/* the reading is the cgroup's, as the step's own total is */
	cr_assert_leq(b / 1000, r.solution.cpu_ms);
	cr_assert_eq(r.protocol_errors, 0);
	interact_result_free(&r);
}

Test(sandbox, interact_protocol_memory_reflects_an_allocation)
{
	const char *sa[] = { "alloc", NULL };
	const char *ia[] = { "/usr/bin/sh", "-c",
			     "echo 1 > /judge/wait; sed -n 2p /judge/status >&2; echo go; read r;"
			     " echo 1 > /judge/wait; sed -n 2p /judge/status >&2; echo bye", NULL };
	struct pair_case c = { sa, ia, default_limits(), default_limits(), 20000, true };
	struct interact_result r;
	unsigned long long before = 0, after = 0;
	int rc;

	probe("alloc", "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"
		       "int main(void) { char b[16]; size_t n = 64u << 20; volatile char *p;\n"
		       "  if (!fgets(b, sizeof b, stdin)) return 2;\n"
		       "  p = malloc(n); for (size_t i = 0; i < n; i += 512) p[i] = 1;\n"
		       "  puts(\"ready\"); fflush(stdout);\n"
		       "  if (!fgets(b, sizeof b, stdin)) return 3;\n"
		       "  return p[n - 512] == 1 ? 0 : 4; }\n");
	rc = run_pair(&c, &r);
	assert_pair_ran(rc, &r);
	cr_assert(r.solution.outcome.exited, "signal %d", r.solution.outcome.term_signal);
	cr_assert_eq(r.solution.outcome.exit_code, 0, "stderr %s", text(&r.solution.err));
	cr_assert_eq(sscanf(text(&r.interactor.err), "%llu\n%llu", &before, &after), 2, "%s",
		     text(&r.interactor.err));
	/* the readings are the kernel's, charged in per-CPU batches, and
	 * pages charged before can be gone after: 1 MiB of slack */
	cr_assert_geq(after + (1ull << 20), before + (64ull << 20), "memory %llu -> %llu", before,
		      after);
	cr_assert_lt(before, 32ull << 20, "memory before %llu", before);
	interact_result_free(&r);
}

Test(sandbox, interact_protocol_terminate_kills_after_the_grace)
{
	struct interact_result r;
	uint64_t t0 = now_ms();
	int rc = pair_sh("sleep 30", "echo 0 > /judge/wait; sed -n 3p /judge/status >&2", 20000, &r);

	assert_pair_ran(rc, &r);
	cr_assert_str_eq(text(&r.interactor.err), "killed: terminated\n");
	cr_assert(r.terminated);
	cr_assert_eq(r.solution.outcome.term_signal, SIGKILL);
	cr_assert_geq(r.solution.wall_ms, SANDBOX_TERMINATE_GRACE_MS);
	cr_assert_lt(now_ms() - t0, 5000);
	interact_result_free(&r);
}

Test(sandbox, interact_protocol_terminate_of_an_ended_program)
{
	struct interact_result r;
	int rc = pair_sh("read x; exit 5",
			 "echo bye; sleep 0.3; echo 0 > /judge/wait; sed -n 3p /judge/status >&2",
			 20000, &r);

	assert_pair_ran(rc, &r);
	cr_assert_str_eq(text(&r.interactor.err), "exited with code 5\n");
	cr_assert_not(r.terminated);
	cr_assert_eq(r.solution.outcome.exit_code, 5);
	interact_result_free(&r);
}

Test(sandbox, interact_protocol_misuse_is_answered)
{
	struct interact_result r;
	int rc = pair_sh("sleep 30",
			 "sed -n 3p /judge/status >&2; echo 0 > /judge/wait; sed -n 3p /judge/status >&2;"
			 " echo 1 > /judge/wait; sed -n 3p /judge/status >&2", 20000, &r);

	assert_pair_ran(rc, &r);
	cr_assert_str_eq(text(&r.interactor.err),
			 "error: status pipe opened without a wait\nkilled: terminated\n"
			 "error: wait after terminate\n");
	cr_assert_eq(r.protocol_errors, 2);
	interact_result_free(&r);
}
