/*
 * The sandbox against a real jail. Needs root (cgroups, the per-worker
 * uid). The driver comes from GOBOXD_TEST_JAIL: nsjail, bwrap or auto.
 * Probes are small C programs compiled into each test's job directory.
 *
 * Most tests are rows of two tables: STEP_CASE (one program in a jail of
 * its own: what runs, its limits, what must come of it) and PAIR_CASE (an
 * interactive test: a solution and an interactor, each with its own
 * expectations, and what must come of the pair). A new case of either
 * shape is a new row; each row is a Criterion test of its own name, so
 * --filter 'sandbox/<name>' runs it and a failure names it. The tests
 * written out in full below them are of other shapes: several programs in
 * one jail, a sandbox opened with other options, checks on the host's
 * cgroups, repeated runs, arithmetic between readings.
 */
#include "autoconf.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/util.h"
#include "worker/cgroup/cgroup.h"
#include "worker/cgroup/cgroup_place.h"
#include "worker/sandbox/jail.h"
#include "worker/sandbox/sandbox.h"

#define TEST_UID 60990
#define TEST_GID 60990

static struct sandbox *sb;
static char box[64];
static char jails[64];
static char tree[32];
static struct cgroup_place place;

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
		.jobs_per_jail = 8,
	};
	char err[256];
	int rc;

	cr_assert_eq(geteuid(), 0, "the sandbox tests need root");
	snprintf(jails, sizeof(jails), "/tmp/goboxd-sbjails-XXXXXX");
	cr_assert_not_null(mkdtemp(jails));
	cr_assert_eq(chmod(jails, 0755), 0);
	/* the daemon's master start-up: choose the cgroup place, prepare it */
	rc = cgroup_place_start(NULL, &place, err, sizeof(err));
	cr_assert_eq(rc, 0, "cgroup_place_start: %s", err);
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

/*
 * How much slower than a real host this one runs: GOBOXD_TEST_TIME_SCALE,
 * which tests/v2/run-tests measures in an emulated guest; 1 elsewhere.
 * Time budgets stretch by it (the limits a program must finish within,
 * the bounds on how long something may take); the limits a test expects
 * a program to hit, and what it checks of them, do not.
 */
static uint64_t time_scale(void)
{
	static uint64_t scale;

	if (!scale) {
		const char *v = getenv("GOBOXD_TEST_TIME_SCALE");
		unsigned long long n = v ? strtoull(v, NULL, 10) : 1;

		scale = n >= 1 && n <= 1000 ? n : 1;
	}
	return scale;
}

/* A time budget, stretched on a slow host (time_scale). */
#define BUDGET_MS(ms) ((uint64_t)(ms) * time_scale())

static struct limits default_limits(void)
{
	return (struct limits){
		.wall_ms = BUDGET_MS(10000),
		.cpu_ms = BUDGET_MS(5000),
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

	sandbox_step_result_init(r);
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

static const char *text(const struct buf *b)
{
	return b->data ? b->data : "";
}

/* ---- what the tables say about a program's run ---------------------------- */

/* A yes-or-no fact about a run; ANY leaves it unchecked. */
enum flag { ANY, YES, NO };

/* How the program ended. */
struct ending {
	enum { END_ANY, END_EXIT, END_SIGNAL, END_NOT_EXITED, END_NOT_CLEAN } how;
	int value;                  /* the exit code or the signal */
};

#define EXITS(code) { END_EXIT, (code) }
#define KILLED_BY(sig) { END_SIGNAL, (sig) }
#define NOT_EXITED { END_NOT_EXITED, 0 }       /* by whatever signal */
#define NOT_CLEAN { END_NOT_CLEAN, 0 }         /* anything but exit code 0 */

/* The number a stream starts with (a count the program printed). */
struct number {
	bool checked;
	unsigned long long min, max;
};

#define EXACTLY(n) { true, (n), (n) }
#define BETWEEN(lo, hi) { true, (lo), (hi) }
#define AT_MOST(hi) { true, 0, (hi) }

/* How many strings a has or lacks list holds. */
#define TEXTS 4

struct step_expect {
	struct ending ends;
	enum flag timed_out, oom, output_limited;
	/* Whole streams, exactly; NULL leaves them unchecked. */
	const char *out, *err, *interleaved;
	/* Strings a stream must, or must not, contain. */
	const char *out_has[TEXTS], *out_lacks[TEXTS];
	const char *err_has[TEXTS], *err_lacks[TEXTS];
	struct number out_number, err_number;
	/* stdout cut after this many bytes, the truncation marker after them */
	size_t out_capped_at;
	/* Bounds on what was measured; 0 leaves one unchecked. */
	uint64_t cpu_ms_at_least, cpu_ms_below;
	uint64_t wall_ms_at_least, wall_ms_below;
	uint64_t memory_kb_at_most;
};

static void check_flag(const char *who, const char *what, bool got, enum flag want)
{
	if (want != ANY)
		cr_assert_eq(got, want == YES, "%s: %s is %s", who, what, got ? "set" : "not set");
}

static void check_number(const char *who, const char *what, unsigned long long got,
			 const struct number *want)
{
	if (!want->checked)
		return;
	if (want->min == want->max)
		cr_assert_eq(got, want->min, "%s: %s is %llu, want %llu", who, what, got, want->min);
	else
		cr_assert(got >= want->min && got <= want->max, "%s: %s is %llu, want %llu to %llu",
			  who, what, got, want->min, want->max);
}

static void check_ending(const char *who, const struct step_result *r, const struct ending *e)
{
	const struct run_outcome *o = &r->outcome;

	switch (e->how) {
	case END_ANY:
		break;
	case END_EXIT:
		cr_assert(o->exited, "%s: killed by signal %d, want exit code %d", who,
			  o->term_signal, e->value);
		cr_assert_eq(o->exit_code, e->value, "%s: exit code %d, want %d; stderr: %.500s",
			     who, o->exit_code, e->value, text(&r->err));
		cr_assert_eq(o->term_signal, 0, "%s: exit code %d read as signal %d", who,
			     o->exit_code, o->term_signal);
		break;
	case END_SIGNAL:
		cr_assert_not(o->exited, "%s: exited with code %d, want signal %d; stdout: %.500s",
			      who, o->exit_code, e->value, text(&r->out));
		cr_assert_eq(o->term_signal, e->value, "%s: signal %d, want %d", who,
			     o->term_signal, e->value);
		break;
	case END_NOT_EXITED:
		cr_assert_not(o->exited, "%s: exited with code %d", who, o->exit_code);
		break;
	case END_NOT_CLEAN:
		cr_assert_not(o->exited && o->exit_code == 0, "%s: exited with code 0", who);
		break;
	}
}

static void check_stream(const char *who, const char *name, const struct buf *b,
			 const char *exact, const char *const *has, const char *const *lacks,
			 const struct number *number)
{
	const char *t = text(b);

	if (exact) {
		cr_assert_str_eq(t, exact, "%s: %s is \"%.500s\", want \"%s\"", who, name, t, exact);
		cr_assert_eq(b->len, strlen(exact), "%s: %s has %zu bytes, want %zu", who, name,
			     b->len, strlen(exact));
	}
	for (size_t i = 0; i < TEXTS && has[i]; i++)
		cr_assert_not_null(strstr(t, has[i]), "%s: %s lacks \"%s\": %.500s", who, name,
				   has[i], t);
	for (size_t i = 0; i < TEXTS && lacks[i]; i++)
		cr_assert_null(strstr(t, lacks[i]), "%s: %s has \"%s\": %.500s", who, name,
			       lacks[i], t);
	if (number->checked) {
		char *end;
		unsigned long long v = strtoull(t, &end, 10);

		cr_assert_neq(end, t, "%s: %s starts with no number: %.500s", who, name, t);
		check_number(who, name, v, number);
	}
}

static void check_step(const char *who, const struct step_result *r, const struct step_expect *e)
{
	static const struct number none;

	check_ending(who, r, &e->ends);
	check_flag(who, "timed_out", r->outcome.timed_out, e->timed_out);
	check_flag(who, "oom", r->outcome.oom, e->oom);
	check_flag(who, "output_limited", r->outcome.output_limited, e->output_limited);
	check_stream(who, "stdout", &r->out, e->out, e->out_has, e->out_lacks, &e->out_number);
	check_stream(who, "stderr", &r->err, e->err, e->err_has, e->err_lacks, &e->err_number);
	if (e->interleaved)
		check_stream(who, "the interleaved streams", &r->interleaved, e->interleaved,
			     (const char *const[TEXTS]){ NULL }, (const char *const[TEXTS]){ NULL },
			     &none);
	if (e->out_capped_at) {
		size_t mlen = strlen(TRUNCATION_MARKER);

		cr_assert(r->out_truncated, "%s: stdout not truncated", who);
		cr_assert_eq(r->out.len, e->out_capped_at + mlen, "%s: stdout has %zu bytes, want %zu",
			     who, r->out.len, e->out_capped_at + mlen);
		cr_assert_eq(memcmp(r->out.data + e->out_capped_at, TRUNCATION_MARKER, mlen), 0,
			     "%s: no truncation marker after %zu bytes", who, e->out_capped_at);
	}
	if (e->cpu_ms_at_least)
		cr_assert_geq(r->cpu_ms, e->cpu_ms_at_least, "%s: cpu %llu ms, want %llu at least", who,
			      (unsigned long long)r->cpu_ms, (unsigned long long)e->cpu_ms_at_least);
	if (e->cpu_ms_below)
		cr_assert_lt(r->cpu_ms, BUDGET_MS(e->cpu_ms_below), "%s: cpu %llu ms, want below %llu",
			     who, (unsigned long long)r->cpu_ms,
			     (unsigned long long)BUDGET_MS(e->cpu_ms_below));
	if (e->wall_ms_at_least)
		cr_assert_geq(r->wall_ms, e->wall_ms_at_least, "%s: wall %llu ms, want %llu at least",
			      who, (unsigned long long)r->wall_ms,
			      (unsigned long long)e->wall_ms_at_least);
	if (e->wall_ms_below)
		cr_assert_lt(r->wall_ms, BUDGET_MS(e->wall_ms_below),
			     "%s: wall %llu ms, want below %llu", who, (unsigned long long)r->wall_ms,
			     (unsigned long long)BUDGET_MS(e->wall_ms_below));
	if (e->memory_kb_at_most)
		cr_assert_leq(r->memory_peak_kb, e->memory_kb_at_most,
			      "%s: peak %llu kB, want %llu at most", who,
			      (unsigned long long)r->memory_peak_kb,
			      (unsigned long long)e->memory_kb_at_most);
}

/* A row's limits: the fields it leaves 0 are default_limits()'. */
static struct limits case_limits(const struct limits *l)
{
	struct limits d = default_limits();

	if (l->wall_ms)
		d.wall_ms = l->wall_ms;
	if (l->cpu_ms)
		d.cpu_ms = l->cpu_ms;
	if (l->memory_kb)
		d.memory_kb = l->memory_kb;
	if (l->max_processes)
		d.max_processes = l->max_processes;
	if (l->fsize_kb)
		d.fsize_kb = l->fsize_kb;
	if (l->output_kb)
		d.output_kb = l->output_kb;
	return d;
}

/*
 * A row's program: a shell script, or argv (argv[0] absolute or relative
 * to the box). With a probe's source, it is compiled into the box under
 * argv[0]'s last name first.
 */
static const char *const *program_argv(const char *sh, const char *const *argv,
				       const char *probe_src, const char *sh_argv[4])
{
	if (probe_src) {
		const char *slash = strrchr(argv[0], '/');

		probe(slash ? slash + 1 : argv[0], probe_src);
	}
	if (!sh)
		return argv;
	sh_argv[0] = "/usr/bin/sh";
	sh_argv[1] = "-c";
	sh_argv[2] = sh;
	sh_argv[3] = NULL;
	return sh_argv;
}

/* ---- one program, one jail: the shape of a row, and its runner -------------- */

/* A file the program leaves in the box, looked at from the host. */
struct box_file {
	const char *name;
	off_t max_bytes;            /* 0: unchecked */
	uid_t uid;                  /* 0: unchecked */
};

struct step_case {
	/* what runs */
	const char *sh;             /* a shell script; or */
	const char *argv[4];
	const char *probe;          /* C source compiled into the box as argv[0] */
	const char *stdin_text;     /* stdin; or */
	char stdin_fill;            /* stdin_len bytes of stdin_fill */
	size_t stdin_len;
	struct limits limits;       /* fields left 0: default_limits()' */
	bool tmp_exec;
	size_t combined_cap;
	const char *driver;         /* only under this jail driver */
	/* what must come of it */
	bool internal_error;        /* the sandbox cannot run it: nothing else holds */
	struct step_expect expect;
	struct box_file leaves;
};

static void check_box_file(const struct box_file *f)
{
	char path[256];
	struct stat st;

	if (!f->name)
		return;
	snprintf(path, sizeof(path), "%s/%s", box, f->name);
	cr_assert_eq(stat(path, &st), 0, "the program left no %s", f->name);
	if (f->max_bytes)
		cr_assert_leq(st.st_size, f->max_bytes, "%s has %lld bytes, want %lld at most",
			      f->name, (long long)st.st_size, (long long)f->max_bytes);
	if (f->uid)
		cr_assert_eq(st.st_uid, f->uid, "%s belongs to uid %u, want %u", f->name,
			     (unsigned)st.st_uid, (unsigned)f->uid);
}

static void run_step_case(const struct step_case *c)
{
	const char *sh_argv[4];
	struct step_spec s = {
		.envp = test_env,
		.limits = case_limits(&c->limits),
		.tmp_exec = c->tmp_exec,
		.combined_cap = c->combined_cap,
		.want_interleaved = c->expect.interleaved != NULL,
	};
	struct step_result r;
	char *filled = NULL;
	int rc;

	if (c->driver && strcmp(sandbox_driver_name(sb), c->driver) != 0)
		cr_skip_test("driver is %s", sandbox_driver_name(sb));
	s.argv = program_argv(c->sh, c->argv, c->probe, sh_argv);
	if (c->stdin_text) {
		s.stdin_data = c->stdin_text;
		s.stdin_len = strlen(c->stdin_text);
	} else if (c->stdin_len) {
		filled = xcalloc(1, c->stdin_len);
		memset(filled, c->stdin_fill, c->stdin_len);
		s.stdin_data = filled;
		s.stdin_len = c->stdin_len;
	}
	sandbox_step_result_init(&r);
	rc = sandbox_run_once(sb, box, &s, &r);
	if (c->internal_error) {
		cr_assert_lt(rc, 0, "the sandbox ran it");
		cr_assert(r.outcome.internal_error);
		cr_assert_neq(r.internal_msg[0], '\0', "an internal error with no message");
	} else {
		assert_ran(rc, &r);
		check_step("the program", &r, &c->expect);
		check_box_file(&c->leaves);
	}
	free(filled);
	sandbox_step_result_free(&r);
}

/* One row: a test named name, the fields of a struct step_case. */
#define STEP_CASE(name, ...)                                          \
	static const struct step_case name##_case = { __VA_ARGS__ }; \
	Test(sandbox, name)                                          \
	{                                                            \
		run_step_case(&name##_case);                         \
	}

/* Two-level, so that an errno macro becomes its number. */
#define STR(x) #x
#define NUMBER_TEXT(x) STR(x)

/* ---- one program, one jail: the rows --------------------------------------- */

STEP_CASE(echo_exit_zero,
	  .sh = "echo hello; echo oops >&2",
	  .expect = { .ends = EXITS(0), .out = "hello\n", .err = "oops\n",
		      .timed_out = NO, .oom = NO, .output_limited = NO })

STEP_CASE(exit_code_three, .sh = "exit 3", .expect = { .ends = EXITS(3) })

STEP_CASE(exit_code_255_is_the_programs, .sh = "exit 255", .expect = { .ends = EXITS(255) })

/* The init reports the wait status as it was: no 128+N guessing. */
STEP_CASE(exit_code_129_is_an_exit_code, .sh = "exit 129", .expect = { .ends = EXITS(129) })
STEP_CASE(exit_code_137_is_an_exit_code, .sh = "exit 137", .expect = { .ends = EXITS(137) })
STEP_CASE(exit_code_139_is_an_exit_code, .sh = "exit 139", .expect = { .ends = EXITS(139) })
STEP_CASE(exit_code_143_is_an_exit_code, .sh = "exit 143", .expect = { .ends = EXITS(143) })
STEP_CASE(exit_code_159_is_an_exit_code, .sh = "exit 159", .expect = { .ends = EXITS(159) })
STEP_CASE(exit_code_200_is_an_exit_code, .sh = "exit 200", .expect = { .ends = EXITS(200) })

STEP_CASE(segfault_is_a_signal,
	  .argv = { "segv" },
	  .probe = "int main(void) { volatile int *p = 0; *p = 1; return 0; }\n",
	  .expect = { .ends = KILLED_BY(SIGSEGV) })

STEP_CASE(own_signal_is_a_signal,
	  .sh = "kill -TERM $$; sleep 5",
	  .expect = { .ends = KILLED_BY(SIGTERM) })

STEP_CASE(stdin_is_fed,
	  .argv = { "/usr/bin/cat" }, .stdin_text = "one\ntwo\n",
	  .expect = { .ends = EXITS(0), .out = "one\ntwo\n" })

/* Programs that open their streams by name (/dev/stdin, /dev/stdout). */
STEP_CASE(stdio_can_be_reopened_by_name,
	  .sh = "cat /dev/stdin > /dev/stdout", .stdin_text = "by name\n",
	  .expect = { .ends = EXITS(0), .out = "by name\n" })

STEP_CASE(large_stdin_round_trip,
	  .argv = { "/usr/bin/wc", "-c" }, .stdin_fill = 'x', .stdin_len = 3 * 1024 * 1024,
	  .expect = { .out_number = EXACTLY(3 * 1024 * 1024) })

STEP_CASE(large_stdin_not_read_does_not_hang,
	  .argv = { "/usr/bin/true" }, .stdin_fill = 'y', .stdin_len = 2 * 1024 * 1024,
	  .expect = { .ends = EXITS(0), .timed_out = NO })

STEP_CASE(busy_loop_times_out_on_cpu,
	  .argv = { "busy" }, .probe = "int main(void) { for (;;) ; }\n",
	  .limits = { .cpu_ms = 500, .wall_ms = 10000 },
	  .expect = { .ends = NOT_EXITED, .timed_out = YES,
		      .cpu_ms_at_least = 500, .wall_ms_below = 5000 })

STEP_CASE(sleep_times_out_on_wall,
	  .sh = "sleep 30", .limits = { .wall_ms = 500 },
	  .expect = { .ends = NOT_EXITED, .timed_out = YES,
		      .wall_ms_at_least = 500, .wall_ms_below = 5000 })

STEP_CASE(memory_hog_is_oom,
	  .argv = { "hog" },
	  .probe = "#include <stdlib.h>\n#include <string.h>\n"
		   "int main(void) { for (;;) { char *p = malloc(1 << 20);"
		   " if (!p) return 7; memset(p, 1, 1 << 20); } }\n",
	  .limits = { .memory_kb = 64 * 1024 },
	  .expect = { .ends = NOT_CLEAN, .oom = YES, .memory_kb_at_most = 64 * 1024 + 1024 })

/* The bomb's parent finishes, having forked up to the pids limit. */
STEP_CASE(fork_bomb_is_contained,
	  .argv = { "bomb" },
	  .probe = "#include <stdio.h>\n#include <unistd.h>\n"
		   "int main(void) { int n = 0; for (int i = 0; i < 10000; i++) {"
		   " pid_t p = fork(); if (p == 0) { pause(); _exit(0); }"
		   " if (p < 0) break; n++; } printf(\"%d\\n\", n); return 0; }\n",
	  .limits = { .max_processes = 16, .wall_ms = 5000 },
	  .expect = { .ends = EXITS(0), .timed_out = NO, .out_number = BETWEEN(8, 16) })

STEP_CASE(file_size_limit,
	  .sh = "yes | head -c 10000000 > /sandbox/big", .limits = { .fsize_kb = 1024 },
	  .expect = { .ends = NOT_CLEAN },
	  .leaves = { "big", .max_bytes = 1024 * 1024 })

STEP_CASE(stdout_flood_is_capped,
	  .argv = { "/usr/bin/yes" }, .limits = { .output_kb = 64 },
	  .expect = { .output_limited = YES, .out_capped_at = 64 * 1024, .wall_ms_below = 5000 })

STEP_CASE(interleaved_output_keeps_the_write_order,
	  .sh = "echo a; sleep 0.1; echo b >&2; sleep 0.1; echo c",
	  .expect = { .interleaved = "a\nb\nc\n" })

/* combined_cap counts stdout and stderr together; stdout gets it all here */
STEP_CASE(combined_cap_is_one_cap_for_both_streams,
	  .argv = { "/usr/bin/yes" }, .combined_cap = 1000,
	  .expect = { .output_limited = YES, .out_capped_at = 1000 })

/* Without a network, the internet families are refused like the other
 * families but unix and netlink (a job with one: test_network.py) */
STEP_CASE(no_network,
	  .argv = { "net" },
	  .probe = "#include <stdio.h>\n#include <errno.h>\n#include <sys/socket.h>\n"
		   "int main(void) {"
		   " int a = socket(AF_INET, SOCK_STREAM, 0); int ea = errno;"
		   " int b = socket(AF_INET6, SOCK_DGRAM, 0); int eb = errno;"
		   " int p = socket(AF_PACKET, SOCK_RAW, 0); int ep = errno;"
		   " int u = socket(AF_UNIX, SOCK_STREAM, 0);"
		   " printf(\"%d %d %d %d %d %d %d\\n\", a, ea, b, eb, p, ep, u >= 0);"
		   " return 0; }\n",
	  .expect = { .out = "-1 " NUMBER_TEXT(EPERM) " -1 " NUMBER_TEXT(EPERM) " -1 "
			     NUMBER_TEXT(EPERM) " 1\n" })

STEP_CASE(runs_as_nobody_not_root,
	  .sh = "id -u; id -g; hostname",
	  .expect = { .out = "65534\n65534\nsandbox\n" })

STEP_CASE(host_uid_is_the_sandbox_uid,
	  .sh = "echo x > /sandbox/owned",
	  .leaves = { "owned", .uid = TEST_UID })

STEP_CASE(filesystem_is_read_only_but_tmp_and_box,
	  .sh = "touch /usr/x 2>/dev/null && echo usr-writable;"
		"echo x >> /etc/passwd 2>/dev/null && echo etc-writable;"
		"touch /usr/bin/x 2>/dev/null && echo usrbin-writable;"
		"touch /dev/x 2>/dev/null || echo dev-ro;"
		"echo t > /tmp/x && echo tmp-ok;"
		"echo b > /sandbox/x && echo box-ok;"
		"test -e /etc/shadow && echo shadow-visible;"
		"echo z > /dev/null && echo null-ok",
	  .expect = { .out_lacks = { "writable", "shadow" },
		      .out_has = { "tmp-ok", "box-ok", "null-ok" } })

/* bwrap's root is remounted read-only; nsjail 3.4 keeps its own 16 MB root
 * tmpfs writable (see nsjail/README.md), so this is bwrap's alone. */
STEP_CASE(bwrap_root_is_read_only,
	  .driver = "bwrap",
	  .sh = "touch /x 2>/dev/null && echo root-writable;"
		"touch /etc/x 2>/dev/null && echo etc-writable; echo done",
	  .expect = { .out = "done\n" })

/* the sandbox's tmpfs_kb is 16384 */
STEP_CASE(tmp_is_size_capped,
	  .sh = "yes | head -c 40000000 > /tmp/big; wc -c < /tmp/big",
	  .expect = { .out_number = AT_MOST(16384 * 1024) })

/* A file written to /tmp cannot be executed, unless the step allows it. */
STEP_CASE(tmp_is_noexec,
	  .sh = "cp /usr/bin/true /tmp/t && /tmp/t && echo ran",
	  .expect = { .ends = EXITS(126), .out = "" })

STEP_CASE(tmp_is_exec_when_the_step_allows_it,
	  .sh = "cp /usr/bin/true /tmp/t && /tmp/t && echo ran", .tmp_exec = true,
	  .expect = { .out = "ran\n" })

/* the shell, ls, grep and the jail's init at most */
STEP_CASE(host_processes_are_invisible,
	  .sh = "ls /proc | grep -c '^[0-9]'",
	  .expect = { .out_number = BETWEEN(1, 5) })

/*
 * goboxd-init is pid 1 and runs under the program's uid: its binary is
 * unmounted, its /proc entries are closed to the program (not dumpable),
 * and the kernel drops the program's signals to it.
 */
STEP_CASE(init_is_out_of_reach,
	  .sh = "test -s /.goboxd-init && echo binary;"
		" cat /proc/1/environ >/dev/null 2>&1 && echo environ;"
		" ls /proc/1/fd >/dev/null 2>&1 && echo fds;"
		" kill -KILL 1; kill -TERM 1; echo alive",
	  .expect = { .ends = EXITS(0), .out = "alive\n" })

/*
 * A forbidden call kills the program with SIGSYS; the calls runtimes probe
 * and fall back from (clone3, io_uring, Linux AIO) fail with ENOSYS;
 * sethostname fails with EPERM, which hostname(1) reports itself. The
 * probe makes the call named by its argument and prints "result errno".
 */
#define DENY_PROBE                                                                             \
	"#define _GNU_SOURCE\n#include <stdio.h>\n#include <errno.h>\n"                        \
	"#include <string.h>\n#include <sched.h>\n#include <signal.h>\n"                       \
	"#include <unistd.h>\n#include <sys/mount.h>\n#include <sys/ptrace.h>\n"               \
	"#include <sys/syscall.h>\n#include <sys/timex.h>\n"                                   \
	"int main(int argc, char **argv) { const char *c = argv[1]; long r = 0;"               \
	" struct timex tx = { 0 };"                                                            \
	" if (!strcmp(c, \"unshare\")) r = unshare(CLONE_NEWUSER);"                            \
	" else if (!strcmp(c, \"mount\")) r = mount(\"none\", \"/tmp\", \"tmpfs\", 0, 0);"     \
	" else if (!strcmp(c, \"clone_newnet\")) r = syscall(SYS_clone, CLONE_NEWNET | SIGCHLD, 0, 0, 0, 0);" \
	" else if (!strcmp(c, \"ptrace\")) r = ptrace(PTRACE_TRACEME, 0, 0, 0);"               \
	" else if (!strcmp(c, \"bpf\")) r = syscall(SYS_bpf, 0, 0, 0);"                        \
	" else if (!strcmp(c, \"keyctl\")) r = syscall(SYS_keyctl, 0, 0, 0, 0, 0);"            \
	" else if (!strcmp(c, \"clone3\")) r = syscall(SYS_clone3, 0, 0);"                     \
	" else if (!strcmp(c, \"io_uring_setup\")) r = syscall(SYS_io_uring_setup, 1, 0);"     \
	" else if (!strcmp(c, \"io_setup\")) r = syscall(SYS_io_setup, 1, 0);"                 \
	" else if (!strcmp(c, \"adjtimex\")) { tx.modes = ADJ_OFFSET; r = adjtimex(&tx); }"    \
	" else if (!strcmp(c, \"sethostname\")) r = sethostname(\"x\", 1);"                    \
	" printf(\"%ld %d\\n\", r, errno); return 0; }\n"
#define DENIED_IS_KILLED(name, call) \
	STEP_CASE(name, .argv = { "deny", call }, .probe = DENY_PROBE, \
		  .expect = { .ends = KILLED_BY(SIGSYS) })
#define DENIED_FAILS(name, call, errno_value)                          \
	STEP_CASE(name, .argv = { "deny", call }, .probe = DENY_PROBE, \
		  .expect = { .ends = EXITS(0), .out = "-1 " NUMBER_TEXT(errno_value) "\n" })

DENIED_IS_KILLED(syscall_unshare_is_killed, "unshare")
DENIED_IS_KILLED(syscall_mount_is_killed, "mount")
DENIED_IS_KILLED(syscall_clone_newnet_is_killed, "clone_newnet")
DENIED_IS_KILLED(syscall_ptrace_is_killed, "ptrace")
DENIED_IS_KILLED(syscall_bpf_is_killed, "bpf")
DENIED_IS_KILLED(syscall_keyctl_is_killed, "keyctl")
DENIED_FAILS(syscall_clone3_fails_with_enosys, "clone3", ENOSYS)
DENIED_FAILS(syscall_io_uring_setup_fails_with_enosys, "io_uring_setup", ENOSYS)
DENIED_FAILS(syscall_io_setup_fails_with_enosys, "io_setup", ENOSYS)
DENIED_IS_KILLED(syscall_adjtimex_is_killed, "adjtimex")
DENIED_FAILS(syscall_sethostname_fails_with_eperm, "sethostname", EPERM)

#ifdef __x86_64__
/* An x32 system call number must not slip past the native-ABI denylist. */
STEP_CASE(x32_syscalls_are_killed,
	  .argv = { "x32" },
	  .probe = "#include <unistd.h>\n#include <sys/syscall.h>\n"
		   "int main(void) { syscall(0x40000000 | SYS_getpid); return 0; }\n",
	  .expect = { .ends = KILLED_BY(SIGSYS) })
#endif

/* Every mount: nosuid; nodev but for the device nodes themselves. */
STEP_CASE(mounts_are_nosuid_and_nodev,
	  .sh = "while read -r id parent dev root mp opts rest; do"
		" case \",$opts,\" in *,nosuid,*) ;; *) echo \"suid $mp\";; esac;"
		" case \"$mp\" in /dev/null|/dev/random|/dev/urandom) continue;; esac;"
		" case \",$opts,\" in *,nodev,*) ;; *) echo \"dev $mp\";; esac;"
		" done < /proc/self/mountinfo; echo checked",
	  .expect = { .out = "checked\n" })

/* No user database, and none of the host's /etc it does not need. */
STEP_CASE(etc_is_minimal,
	  .sh = "id;"
		" for f in passwd group shadow ld.so.cache ld.so.conf nsswitch.conf"
		" localtime hostname; do test -e /etc/$f && echo \"host $f\"; done; echo done",
	  .expect = { .out = "uid=65534 gid=65534 groups=65534\ndone\n" })

STEP_CASE(no_locked_memory, .sh = "ulimit -l", .expect = { .out = "0\n" })

STEP_CASE(threads_and_plain_fork_still_work,
	  .sh = "(echo child) ; echo $(echo sub)",
	  .expect = { .out = "child\nsub\n" })

/* 0-2, plus the fd ls itself opened on the directory */
STEP_CASE(only_stdio_is_inherited,
	  .sh = "ls /proc/self/fd | sort -n | tr '\\n' ' '",
	  .expect = { .out = "0 1 2 3 " })

STEP_CASE(missing_program_is_an_internal_error,
	  .argv = { "/nonexistent/prog" }, .internal_error = true)

/* ---- one program, tests of their own ---------------------------------------- */

Test(sandbox, driver_is_known)
{
	const char *n = sandbox_driver_name(sb);

	cr_assert(strcmp(n, "nsjail") == 0 || strcmp(n, "bwrap") == 0);
	cr_assert_not_null(sandbox_driver_version(sb));
	cr_log_info("driver %s (%s) version \"%s\"", n, sandbox_driver_path(sb),
		    sandbox_driver_version(sb));
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
	sandbox_step_result_init(&r);
	rc = sandbox_run_once(pinned, box, &s, &r);
	assert_ran(rc, &r);
	cr_assert_str_eq(r.out.data, "Cpus_allowed_list:\t0\nend\n", "%s", r.out.data);
	sandbox_step_result_free(&r);
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
		sandbox_step_result_init(&r);
		rc = sandbox_run_once(own, box, &s, &r);
		assert_ran(rc, &r);
		cr_assert_str_eq(r.out.data, pin ? "1\n" : all, "pin %d: %s", pin, r.out.data);
		sandbox_step_result_free(&r);
	}
	sandbox_close(own);
}

/* This process's Cpus_allowed_list line, as a program prints it. */
static void own_cpu_list(char *out, size_t cap)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];

	cr_assert_not_null(f);
	out[0] = '\0';
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "Cpus_allowed_list:", 18) == 0)
			snprintf(out, cap, "%s", line);
	fclose(f);
	cr_assert(out[0], "no Cpus_allowed_list in /proc/self/status");
}

/*
 * A worker kept on one CPU (worker.c, keep_to_own_cpu) starts its jails
 * there: their programs run on the CPUs it names (program_cpus), or on
 * the one a step asks for; with none named, on the jail's one.
 */
Test(sandbox, programs_run_on_the_cpus_a_kept_worker_names)
{
	struct sandbox_opts o = {
		.jail = test_jail(), .nsjail_path = "/usr/local/bin/nsjail",
		.bwrap_path = "/usr/bin/bwrap", .init_path = getenv("GOBOXD_INIT_PATH"),
		.jail_dir = jails, .uid = TEST_UID, .gid = TEST_GID, .tmpfs_kb = 16384,
		.has_cpu = true, .cgroup_root = place.root[0] ? place.root : NULL,
	};
	const char *argv[] = { "/usr/bin/grep", "Cpus_allowed_list", "/proc/self/status", NULL };
	struct step_spec s = { .argv = argv, .envp = test_env, .limits = default_limits() };
	struct sandbox *kept;
	struct step_result r;
	char err[256], name[48], every[256], want[64];
	cpu_set_t all, one;
	int last = -1, first = -1, rc;

	if (!o.init_path && access(GOBOXD_BUILDDIR "/goboxd-init", X_OK) == 0)
		o.init_path = GOBOXD_BUILDDIR "/goboxd-init";
	cr_assert_eq(sched_getaffinity(0, sizeof(all), &all), 0);
	if (CPU_COUNT(&all) < 2)
		cr_skip_test("one CPU: nothing to keep a worker to");
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &all)) {
			first = first < 0 ? c : first;
			last = c;
		}
	own_cpu_list(every, sizeof(every));
	/* the worker, as keep_to_own_cpu leaves it: its jails are born here */
	CPU_ZERO(&one);
	CPU_SET(last, &one);
	cr_assert_eq(sched_setaffinity(0, sizeof(one), &one), 0);
	o.cpu = (unsigned)first;
	for (int named = 0; named < 2; named++) {
		o.program_cpus = named ? &all : NULL;
		snprintf(name, sizeof(name), "%s-kept%d", tree, named);
		o.cgroup_name = name;
		cr_assert_eq(sandbox_open(&o, &kept, err, sizeof(err)), 0, "%s", err);
		for (int pin = 0; pin < 2; pin++) {
			s.pin_cpu = pin;
			if (pin)
				snprintf(want, sizeof(want), "Cpus_allowed_list:\t%d\n", first);
			else if (!named)
				snprintf(want, sizeof(want), "Cpus_allowed_list:\t%d\n", last);
			sandbox_step_result_init(&r);
			rc = sandbox_run_once(kept, box, &s, &r);
			assert_ran(rc, &r);
			cr_assert_str_eq(r.out.data, pin || !named ? want : every, "named %d, pin %d: %s",
					 named, pin, r.out.data);
			sandbox_step_result_free(&r);
		}
		sandbox_close(kept);
	}
	cr_assert_eq(sched_setaffinity(0, sizeof(all), &all), 0);
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
	sandbox_step_result_free(&r);
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
		sandbox_step_result_free(&r);
	}
	cr_log_info("200 runs of true: mean %llu ms, max %llu ms",
		    (unsigned long long)(sum / 200), (unsigned long long)max);
	cr_assert_eq(slow, 0, "%d runs took >= 900 ms (max %llu)", slow,
		     (unsigned long long)max);
}

/* ---- one jail, several programs ----------------------------------------- */

static struct jail *open_jail(void)
{
	struct jail *j = NULL;
	char err[256];
	int rc = jail_start(sandbox_jail_shared(sb), box, &j, err, sizeof(err));

	cr_assert_eq(rc, 0, "jail_start: %s", err);
	return j;
}

static int run_in(struct jail *j, struct step_result *r, const char *script,
		  const struct limits *l)
{
	const char *argv[] = { "/usr/bin/sh", "-c", script, NULL };
	struct step_spec s = { .argv = argv, .envp = test_env, .limits = *l };

	sandbox_step_result_init(r);
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
	sandbox_step_result_free(&r);
	rc = run_in(j, &r, "test -e /tmp/left && echo tmp-kept; cat /proc/[0-9]*/comm", &l);
	assert_ran(rc, &r);
	/* the shell alone (the init is out of sight, cat came after the
	 * glob): no sleep left from before */
	cr_assert_null(strstr(r.out.data, "sleep"), "%s", r.out.data);
	cr_assert_not_null(strstr(r.out.data, "sh"), "%s", r.out.data);
	cr_assert_null(strstr(r.out.data, "tmp-kept"));
	sandbox_step_result_free(&r);
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
	sandbox_step_result_free(&r);
	rc = run_in(j, &r, "true", &l);
	assert_ran(rc, &r);
	cr_assert_lt(r.cpu_ms, BUDGET_MS(50), "cpu %llu ms", (unsigned long long)r.cpu_ms);
	cr_assert_lt(r.memory_peak_kb, 16 * 1024, "peak %llu kB",
		     (unsigned long long)r.memory_peak_kb);
	sandbox_step_result_free(&r);
	jail_destroy(j);
}

/*
 * A program that ran used memory, and is told so however small it is. In
 * the jail's first cgroup, set back between programs, a C hello's pages
 * can come out of what the kernel had charged there before (its per-CPU
 * batches, what the program before freed late), so that the cgroup's peak
 * does not move: 78 of 300 tests were told 0 kB through /run here. Runs
 * of a C hello, program after program in one job, then in the next job
 * of the same jail (a full rebase between them).
 */
#define HELLO_RUNS 60

static unsigned hello_runs_told_nothing(struct jail *j)
{
	const char *argv[] = { "/sandbox/hello", NULL };
	struct limits l = default_limits();
	struct step_spec s = { .argv = argv, .envp = test_env, .limits = l };
	unsigned zero = 0;

	for (int i = 0; i < HELLO_RUNS; i++) {
		struct step_result r;
		int rc;

		sandbox_step_result_init(&r);
		rc = sandbox_run(j, &s, &r);
		assert_ran(rc, &r);
		cr_assert(r.outcome.exited && r.outcome.exit_code == 0, "run %d: %s", i,
			  text(&r.err));
		if (r.memory_peak_kb == 0)
			zero++;
		sandbox_step_result_free(&r);
	}
	return zero;
}

/* The hello probe, compiled into the test's box, into jail j's own. */
static void hello_into(struct jail *j)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "cp %s/hello %s/hello", box, jail_box_dir(j));
	cr_assert_eq(system(cmd), 0, "%s", cmd);
}

Test(sandbox, a_small_program_is_never_told_it_used_no_memory)
{
	struct jail *j = NULL;
	unsigned zero[2] = { 0, 0 };
	char err[256];
	int rc;

	probe("hello", "#include <stdio.h>\nint main(void) { puts(\"hi\"); }\n");
	rc = jail_start(sandbox_jail_shared(sb), NULL, &j, err, sizeof(err));
	cr_assert_eq(rc, 0, "jail_start: %s", err);
	hello_into(j);
	zero[0] = hello_runs_told_nothing(j);
	/* where the host lets the first cgroup be set back (not cgroup v2
	 * before 6.12), the next job's, after a full rebase */
	rc = jail_recycle(j, err, sizeof(err));
	cr_assert(rc == 0 || rc == -EOPNOTSUPP, "jail_recycle: %s", err);
	if (rc == 0) {
		hello_into(j);
		zero[1] = hello_runs_told_nothing(j);
	}
	jail_destroy(j);
	cr_assert_eq(zero[0] + zero[1], 0, "told 0 kB: %u of %d runs, then %u of %d in the next job",
		     zero[0], HELLO_RUNS, zero[1], HELLO_RUNS);
}

/* A 40 MB line held whole by tail, under the memory limit of each program
 * of one jail: its own, up, down and up again. The cgroup keeps the
 * limits written last, so one not written again would be the last's. */
static bool holds_a_long_line_under(struct jail *j, uint64_t memory_kb)
{
	struct step_result r;
	struct limits l = default_limits();
	bool held;
	int rc;

	l.memory_kb = memory_kb;
	rc = run_in(j, &r, "yes | tr -d '\\n' | head -c 40000000 | tail -n 1 | wc -c", &l);
	assert_ran(rc, &r);
	held = r.outcome.exited && r.outcome.exit_code == 0 && !r.outcome.oom &&
	       strcmp(r.out.data, "40000000\n") == 0;
	sandbox_step_result_free(&r);
	return held;
}

Test(sandbox, each_program_has_its_own_memory_limit)
{
	struct jail *j = open_jail();

	cr_assert(holds_a_long_line_under(j, 256 * 1024));
	cr_assert_not(holds_a_long_line_under(j, 16 * 1024));
	cr_assert_not(holds_a_long_line_under(j, 16 * 1024));
	cr_assert(holds_a_long_line_under(j, 256 * 1024));
	cr_assert(holds_a_long_line_under(j, 256 * 1024));
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
	sandbox_step_result_free(&r);
	l = default_limits();
	l.wall_ms = 300;
	rc = run_in(j, &r, "sleep 10", &l);
	assert_ran(rc, &r);
	cr_assert(r.outcome.timed_out);
	sandbox_step_result_free(&r);
	l = default_limits();
	rc = run_in(j, &r, "echo ok", &l);
	assert_ran(rc, &r);
	cr_assert(r.outcome.exited);
	cr_assert_eq(r.outcome.exit_code, 0);
	cr_assert_str_eq(r.out.data, "ok\n");
	cr_assert_not(r.outcome.oom);
	sandbox_step_result_free(&r);
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
	sandbox_step_result_free(&r);
	jail_destroy(j);
}


static int run_tmp(struct jail *j, struct step_result *r, const char *script, bool tmp_exec)
{
	const char *argv[] = { "/usr/bin/sh", "-c", script, NULL };
	struct step_spec s = { .argv = argv, .envp = test_env, .limits = default_limits(),
			       .tmp_exec = tmp_exec };

	sandbox_step_result_init(r);
	return sandbox_run(j, &s, r);
}

/*
 * The reset makes the next job's /tmp, as the last program's was, and
 * its IPC namespace: each new and empty all the same, and a first
 * program that asks for another kind of /tmp gets its own.
 */
Test(sandbox, after_a_reset_the_first_program_has_a_new_tmp_and_ipc)
{
	const char *exec_tmp = "cp /usr/bin/true /tmp/t && /tmp/t && echo ran";
	struct jail *j = NULL;
	struct step_result r;
	char err[256];
	int rc = jail_start(sandbox_jail_shared(sb), NULL, &j, err, sizeof(err));

	cr_assert_eq(rc, 0, "jail_start: %s", err);
	cr_assert_eq(run_tmp(j, &r, "echo x > /tmp/left && ipcmk -M 4096 >/dev/null &&"
			     " ipcs -m | grep -c '^0x'", false), 0);
	cr_assert_str_eq(r.out.data, "1\n");
	sandbox_step_result_free(&r);
	rc = jail_recycle(j, err, sizeof(err));
	if (rc == -EOPNOTSUPP) {
		jail_destroy(j);
		cr_skip_test("no jail serves a second job on this host: %s", err);
	}
	cr_assert_eq(rc, 0, "jail_recycle: %s", err);
	rc = run_tmp(j, &r, "ls -A /tmp | wc -l; ipcs -m | grep -c '^0x'", false);
	assert_ran(rc, &r);
	cr_assert_str_eq(r.out.data, "0\n0\n");
	sandbox_step_result_free(&r);
	cr_assert_eq(jail_recycle(j, err, sizeof(err)), 0, "jail_recycle: %s", err);
	rc = run_tmp(j, &r, exec_tmp, true);
	assert_ran(rc, &r);
	cr_assert_str_eq(r.out.data, "ran\n");
	sandbox_step_result_free(&r);
	cr_assert_eq(jail_recycle(j, err, sizeof(err)), 0, "jail_recycle: %s", err);
	rc = run_tmp(j, &r, exec_tmp, false);
	assert_ran(rc, &r);
	cr_assert_eq(r.out.len, 0);
	cr_assert_eq(r.outcome.exit_code, 126);
	sandbox_step_result_free(&r);
	jail_destroy(j);
}

/*
 * The init is not dumpable (hide_from_programs), and stays so while it
 * starts programs: their set-up shares its memory until their exec
 * (init_child_spawn), and a change of uid there would set that memory's
 * dumpable flag to the host's fs.suid_dumpable, here 1. The programs
 * could not tell (the init's capabilities keep them
 * out of /proc/1 either way, and both owners look like nobody from
 * inside), so the test looks from the host: the kernel gives the /proc
 * files of a process that is not dumpable to root, and those of one that
 * is to its uid.
 */
static int write_sysctl(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, value, strlen(value));
	close(fd);
	return n < 0 ? -errno : 0;
}

/* The parent pid of pid, or -1. */
static pid_t parent_of(pid_t pid)
{
	char path[64], line[512], *rp;
	FILE *f;
	int ppid = -1;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fgets(line, sizeof(line), f) && (rp = strrchr(line, ')')) != NULL)
		sscanf(rp + 1, " %*c %d", &ppid);
	fclose(f);
	return ppid;
}

/* The host pid of the init of this test's one jail: the jail binary is
 * this process's child, the init the jail binary's child. */
static pid_t own_jail_init(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t found = -1;

	cr_assert_not_null(d);
	while ((e = readdir(d)) != NULL) {
		pid_t pid = atoi(e->d_name), up;
		char path[64], comm[32] = "";
		FILE *f;

		if (pid <= 0 || (up = parent_of(pid)) <= 0 || parent_of(up) != getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
		f = fopen(path, "r");
		if (f && fgets(comm, sizeof(comm), f) && strncmp(comm, ".goboxd-init", 12) == 0)
			found = pid;
		if (f)
			fclose(f);
	}
	closedir(d);
	return found;
}

static int fd_count(pid_t pid)
{
	char path[64];
	struct dirent *e;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	cr_assert_not_null(d, "%s: %s", path, strerror(errno));
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* The init holds each program's stdout and stderr until it has reaped it
 * (INITMSG_RUN_HOLD_OUTPUT), and lets them go then: after twenty more
 * programs it holds no more files than after the first (each count may
 * find the last program's still held, a moment after its EXITED). */
Test(sandbox, the_init_lets_each_programs_output_go)
{
	struct jail *j = NULL;
	struct step_result r;
	struct limits l = default_limits();
	char err[256];
	int rc = jail_start(sandbox_jail_shared(sb), NULL, &j, err, sizeof(err));
	int first, now = 0;
	pid_t init;

	cr_assert_eq(rc, 0, "jail_start: %s", err);
	cr_assert_eq(run_in(j, &r, "echo out; echo err >&2", &l), 0);
	sandbox_step_result_free(&r);
	init = own_jail_init();
	cr_assert_gt(init, 0, "no init found under this test's jail");
	first = fd_count(init);
	for (int i = 0; i < 20; i++) {
		cr_assert_eq(run_in(j, &r, "echo out; echo err >&2; exit 3", &l), 0);
		cr_assert_str_eq(r.out.data, "out\n");
		cr_assert_str_eq(r.err.data, "err\n");
		cr_assert_eq(r.outcome.exit_code, 3);
		sandbox_step_result_free(&r);
	}
	for (int tries = 0; tries < 100 && (now = fd_count(init)) > first; tries++)
		usleep(10000);
	cr_assert_leq(now, first, "the init holds %d files, %d after the first program", now,
		      first);
	jail_destroy(j);
}

/* The owner of the init's /proc files after each of two programs. */
Test(sandbox, init_stays_hidden_where_the_host_lets_setuid_programs_dump)
{
	static const char path[] = "/proc/sys/fs/suid_dumpable";
	char was[8] = "0", environ_path[64];
	struct jail *j;
	struct step_result r;
	struct limits l = default_limits();
	struct stat st;
	FILE *f = fopen(path, "r");
	int rc[2];
	uid_t owner[2] = { (uid_t)-1, (uid_t)-1 };
	pid_t init;

	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	cr_assert_not_null(fgets(was, sizeof(was), f));
	fclose(f);
	j = open_jail();
	cr_assert_eq(run_in(j, &r, "true", &l), 0);
	sandbox_step_result_free(&r);
	init = own_jail_init();
	cr_assert_gt(init, 0, "no init found under this test's jail");
	snprintf(environ_path, sizeof(environ_path), "/proc/%d/environ", (int)init);
	/* from here the host's setting is back before anything is asserted */
	cr_assert_eq(write_sysctl(path, "1"), 0);
	for (int i = 0; i < 2; i++) {
		rc[i] = run_in(j, &r, "true", &l);
		sandbox_step_result_free(&r);
		if (stat(environ_path, &st) == 0)
			owner[i] = st.st_uid;
	}
	jail_destroy(j);
	cr_assert_eq(write_sysctl(path, was), 0);
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(rc[i], 0, "program %d did not run", i + 1);
		cr_assert_eq(owner[i], 0, "after program %d the init's /proc files are uid %d's:"
			     " it is dumpable", i + 1, (int)owner[i]);
	}
}
/*
 * What a program inherits of the init (its limits, nice value, CPUs and
 * scheduling class) no program can change (the seccomp filter refuses a
 * call that names pid 1, a process group or a uid: test_job_to_job.py).
 * Were one to find a way, the reset between two jobs would find it and
 * end the jail rather than pass it on to the next user's job. Here the
 * host changes it, as a program could not, between one job and the next.
 */
enum init_change { CHANGE_NOFILE, CHANGE_AS, CHANGE_NICE, CHANGE_CPUS, CHANGE_POLICY, CHANGES };

/* prlimit on the init from a process of its host uid, which may (root
 * may not, where it lacks CAP_SYS_RESOURCE, as on the test hosts). */
static int lower_init_limit(const struct jail *j, pid_t init, int resource, rlim_t to)
{
	struct rlimit rl = { to, to };
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		if (setgroups(0, NULL) < 0 || setresgid(jail_gid(j), jail_gid(j), jail_gid(j)) < 0 ||
		    setresuid(jail_uid(j), jail_uid(j), jail_uid(j)) < 0 ||
		    prlimit(init, resource, &rl, NULL) < 0)
			_exit(errno);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	errno = WIFEXITED(status) ? WEXITSTATUS(status) : EINTR;
	return errno ? -1 : 0;
}

static int change_init(const struct jail *j, pid_t init, enum init_change c)
{
	struct sched_param none = { 0 };
	cpu_set_t cpus;

	switch (c) {
	case CHANGE_NOFILE:
		return lower_init_limit(j, init, RLIMIT_NOFILE, 32);
	case CHANGE_AS:
		return lower_init_limit(j, init, RLIMIT_AS, 64 << 20);
	case CHANGE_NICE:
		return setpriority(PRIO_PROCESS, (id_t)init, 10);
	case CHANGE_CPUS:
		if (sched_getaffinity(init, sizeof(cpus), &cpus) < 0)
			return -1;
		/* one CPU fewer: the lowest one is dropped, unless it is the only one */
		for (int i = 0; i < CPU_SETSIZE && CPU_COUNT(&cpus) > 1; i++)
			if (CPU_ISSET(i, &cpus)) {
				CPU_CLR(i, &cpus);
				break;
			}
		return sched_setaffinity(init, sizeof(cpus), &cpus);
	case CHANGE_POLICY:
		return sched_setscheduler(init, SCHED_BATCH, &none);
	case CHANGES:
		break;
	}
	return -1;
}

Test(sandbox, a_reset_ends_a_jail_whose_init_a_job_changed)
{
	for (int c = 0; c < CHANGES; c++) {
		struct jail *j = NULL;
		struct step_result r;
		struct limits l = default_limits();
		char err[256];
		int rc = jail_start(sandbox_jail_shared(sb), NULL, &j, err, sizeof(err));
		pid_t init;

		cr_assert_eq(rc, 0, "jail_start: %s", err);
		cr_assert_eq(run_in(j, &r, "true", &l), 0);
		sandbox_step_result_free(&r);
		/* untouched, it serves another job, where the host lets the
		 * first cgroup be set back (not cgroup v2 before 6.12) */
		rc = jail_recycle(j, err, sizeof(err));
		if (rc == -EOPNOTSUPP) {
			jail_destroy(j);
			cr_skip_test("no jail serves a second job on this host: %s", err);
		}
		cr_assert_eq(rc, 0, "change %d: jail_recycle of an untouched jail: %s", c, err);
		cr_assert_eq(run_in(j, &r, "true", &l), 0);
		sandbox_step_result_free(&r);
		init = own_jail_init();
		cr_assert_gt(init, 0, "no init found under this test's jail");
		if (c == CHANGE_CPUS && sysconf(_SC_NPROCESSORS_ONLN) < 2) {
			jail_destroy(j);
			continue;
		}
		cr_assert_eq(change_init(j, init, (enum init_change)c), 0, "change %d: %s", c,
			     strerror(errno));
		rc = jail_recycle(j, err, sizeof(err));
		jail_destroy(j);
		cr_assert_lt(rc, 0, "change %d of the init passed on to the next job", c);
	}
}

/* The network namespace a program of the jail runs in, as readlink gives
 * it ("net:[...]\n"), into ns. */
static void net_of(struct jail *j, char *ns, size_t size)
{
	struct step_result r;
	struct limits l = default_limits();

	assert_ran(run_in(j, &r, "readlink /proc/self/ns/net", &l), &r);
	cr_assert(r.out.len > 0 && r.out.len < size, "%s", r.out.data);
	memcpy(ns, r.out.data, r.out.len + 1);
	sandbox_step_result_free(&r);
}

/* A job without a network leaves the jail's network namespace to the
 * next; a job whose network was asked for (NETWORK: the namespaces and
 * the filter that lets internet sockets through) takes it along, even
 * when nothing of a network is left in it, as here, where no stack was
 * ever started. */
Test(sandbox, a_job_with_a_network_takes_its_namespace_along)
{
	struct jail *j = NULL;
	char err[256], first[64], kept[64], asked[64], after[64];
	int fds[2], rc = jail_start(sandbox_jail_shared(sb), NULL, &j, err, sizeof(err));

	cr_assert_eq(rc, 0, "jail_start: %s", err);
	net_of(j, first, sizeof(first));
	rc = jail_recycle(j, err, sizeof(err));
	if (rc == -EOPNOTSUPP) {
		jail_destroy(j);
		cr_skip_test("no jail serves a second job on this host: %s", err);
	}
	cr_assert_eq(rc, 0, "jail_recycle: %s", err);
	net_of(j, kept, sizeof(kept));
	cr_assert_str_eq(kept, first, "a job without a network did not leave its namespace");
	cr_assert_eq(jail_namespaces(j, fds, err, sizeof(err)), 0, "jail_namespaces: %s", err);
	close(fds[0]);
	close(fds[1]);
	net_of(j, asked, sizeof(asked));
	cr_assert_str_eq(asked, kept, "a job's network changed its namespace mid-job");
	cr_assert_eq(jail_recycle(j, err, sizeof(err)), 0, "jail_recycle: %s", err);
	net_of(j, after, sizeof(after));
	jail_destroy(j);
	cr_assert_str_neq(after, asked, "the namespace of a job with a network was kept");
}

/*
 * The init waits in the cgroup of the programs it starts; when one fills
 * it, the kernel's OOM killer takes the largest process there, then the
 * next while the cgroup is still over its limit, and the init is the size
 * of a small program: a_killed_program_leaves_the_jail_usable's pipeline
 * took the init with it (dmesg named .goboxd-init) in 2 of 11 runs of
 * this suite under nsjail on the 2-vCPU host. Every program starts at
 * oom_score_adj 1000, so that all of it goes first; the init keeps its
 * own (read from the host). And a pipeline killed for its memory, again
 * and again, leaves the jail serving.
 */
Test(sandbox, oom_killer_takes_the_programs_before_the_init)
{
	struct jail *j = open_jail();
	struct step_result r;
	struct limits l = default_limits();
	char path[64], adj[16] = "";
	pid_t init;
	FILE *f;
	int rc;

	rc = run_in(j, &r, "cat /proc/self/oom_score_adj; sh -c 'cat /proc/self/oom_score_adj'",
		    &l);
	assert_ran(rc, &r);
	cr_assert_str_eq(r.out.data, "1000\n1000\n");
	sandbox_step_result_free(&r);
	init = own_jail_init();
	cr_assert_gt(init, 0, "no init found under this test's jail");
	snprintf(path, sizeof(path), "/proc/%d/oom_score_adj", (int)init);
	f = fopen(path, "r");
	cr_assert_not_null(f);
	cr_assert_not_null(fgets(adj, sizeof(adj), f));
	fclose(f);
	cr_assert_str_eq(adj, "0\n", "the init's oom_score_adj is %s", adj);
	l.memory_kb = 32 * 1024;
	for (int i = 0; i < 5; i++) {
		rc = run_in(j, &r, "for k in 1 2 3 4 5 6; do sleep 5 & done;"
				   " yes | tr -d '\\n' | head -c 200000000 | tail -n 1", &l);
		assert_ran(rc, &r);
		cr_assert(r.outcome.oom, "run %d was not killed for its memory", i + 1);
		sandbox_step_result_free(&r);
	}
	l = default_limits();
	rc = run_in(j, &r, "echo ok", &l);
	assert_ran(rc, &r);
	cr_assert_str_eq(r.out.data, "ok\n");
	sandbox_step_result_free(&r);
	jail_destroy(j);
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

/* ---- interactive tests: two programs, two jails ---------------------------- */

/* The interactor's jail: its own uid, the box (where probes are) and a
 * control directory. */
static struct jail *open_interactor_jail(void)
{
	struct jail_opts o = { .box_dir = box, .uid = TEST_UID + 1, .gid = TEST_GID + 1,
			       .control_dir = true };
	struct jail *j = NULL;
	char err[256];
	int rc = jail_start_with(sandbox_jail_shared(sb), &o, &j, err, sizeof(err));

	cr_assert_eq(rc, 0, "jail_start_with: %s", err);
	return j;
}

/* One side of a pair: a program as in a step_case, and what must come of it. */
struct pair_side {
	const char *sh;
	const char *argv[4];
	const char *probe;
	struct limits limits;       /* fields left 0: default_limits()' */
	struct step_expect expect;
};

struct pair_case {
	struct pair_side solution, interactor;
	uint32_t wall_ms;           /* the pair's wall limit */
	bool protocol;              /* serve the process management protocol */
	/* what must come of the pair */
	enum flag wall_limit, idle, stopped, terminated;
	struct number protocol_errors;
	uint64_t elapsed_ms_below;  /* the whole test, its jails' start included */
};

static int run_pair(const struct pair_case *c, struct interact_result *r)
{
	const char *sol_sh[4], *itr_sh[4];
	struct step_spec ss = {
		.argv = program_argv(c->solution.sh, c->solution.argv, c->solution.probe, sol_sh),
		.envp = test_env,
		.limits = case_limits(&c->solution.limits),
	};
	struct step_spec is = {
		.argv = program_argv(c->interactor.sh, c->interactor.argv, c->interactor.probe,
				     itr_sh),
		.envp = test_env,
		.limits = case_limits(&c->interactor.limits),
	};
	struct interact_spec spec = {
		.solution = &ss, .interactor = &is, .wall_ms = c->wall_ms,
		/* testlib: accepted and points let the solution finish */
		.solution_continues = (1u << 0) | (1u << 7),
		.protocol = c->protocol,
	};
	struct jail *sj = open_jail(), *ij = open_interactor_jail();
	int rc;

	sandbox_interact_result_init(r);
	rc = sandbox_interact(sj, ij, &spec, r);
	jail_destroy(sj);
	jail_destroy(ij);
	return rc;
}

static void assert_pair_ran(int rc, const struct interact_result *r)
{
	cr_assert_eq(rc, 0, "sandbox_interact: %d (%s / %s)", rc, r->solution.internal_msg,
		     r->interactor.internal_msg);
	cr_assert_not(r->solution.outcome.internal_error);
	cr_assert_not(r->interactor.outcome.internal_error);
}

static void run_pair_case(const struct pair_case *c)
{
	struct interact_result r;
	uint64_t t0 = now_ms();
	int rc = run_pair(c, &r);
	uint64_t elapsed = now_ms() - t0;

	assert_pair_ran(rc, &r);
	check_step("the solution", &r.solution, &c->solution.expect);
	check_step("the interactor", &r.interactor, &c->interactor.expect);
	check_flag("the pair", "wall_limit", r.wall_limit, c->wall_limit);
	check_flag("the pair", "idle", r.idle, c->idle);
	check_flag("the pair", "stopped", r.stopped, c->stopped);
	check_flag("the pair", "terminated", r.terminated, c->terminated);
	check_number("the pair", "protocol_errors", r.protocol_errors, &c->protocol_errors);
	if (c->elapsed_ms_below)
		cr_assert_lt(elapsed, c->elapsed_ms_below, "the test took %llu ms, want below %llu",
			     (unsigned long long)elapsed, (unsigned long long)c->elapsed_ms_below);
	sandbox_interact_result_free(&r);
}

/* One row: a test named name, the fields of a struct pair_case. */
#define PAIR_CASE(name, ...)                                          \
	static const struct pair_case name##_case = { __VA_ARGS__ }; \
	Test(sandbox, name)                                          \
	{                                                            \
		run_pair_case(&name##_case);                         \
	}

/* The dialogue goes through pipes the worker does not read: the
 * solution's captured stdout stays empty. */
PAIR_CASE(interact_dialogue_both_ways,
	  .solution = { .sh = "read x; echo $((x + 1)); echo sol-err >&2",
			.expect = { .ends = EXITS(0), .err = "sol-err\n", .out = "" } },
	  .interactor = { .sh = "echo 41; read y; echo \"got $y\" >&2; [ \"$y\" = 42 ]",
			  .expect = { .ends = EXITS(0), .err = "got 42\n" } },
	  .wall_ms = 5000, .protocol = true,
	  .wall_limit = NO, .idle = NO, .stopped = NO, .terminated = NO)

/* The interactor is killed with the solution: not a failure of its own. */
PAIR_CASE(interact_deadlock_ends_at_the_wall_limit_as_idle,
	  .solution = { .sh = "read x",
			.expect = { .timed_out = YES, .cpu_ms_below = 50,
				    .wall_ms_at_least = 1000, .wall_ms_below = 3000 } },
	  .interactor = { .sh = "read y", .expect = { .timed_out = NO } },
	  .wall_ms = 1000, .protocol = true,
	  .wall_limit = YES, .idle = YES)

PAIR_CASE(interact_a_computing_solution_is_not_idle,
	  .solution = { .sh = "while :; do :; done", .expect = { .timed_out = YES } },
	  .interactor = { .sh = "read y" },
	  .wall_ms = 1000, .protocol = true,
	  .wall_limit = YES, .idle = NO)

PAIR_CASE(interact_interactor_verdict_stops_the_solution,
	  .solution = { .sh = "sleep 30",
			.expect = { .ends = KILLED_BY(SIGKILL), .timed_out = NO } },
	  .interactor = { .sh = "exit 1" },
	  .wall_ms = 10000, .protocol = true,
	  .stopped = YES, .elapsed_ms_below = 5000)

PAIR_CASE(interact_accepted_lets_the_solution_finish,
	  .solution = { .sh = "sleep 0.3; exit 6",
			.expect = { .ends = EXITS(6), .wall_ms_at_least = 300 } },
	  .interactor = { .sh = "exit 0" },
	  .wall_ms = 10000, .protocol = true,
	  .stopped = NO)

PAIR_CASE(interact_a_solution_ending_first_keeps_its_exit_code,
	  .solution = { .sh = "exit 3", .expect = { .ends = EXITS(3) } },
	  .interactor = { .sh = "read y; sleep 0.1; exit 1", .expect = { .ends = EXITS(1) } },
	  .wall_ms = 10000, .protocol = true,
	  .stopped = NO)

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
PAIR_CASE(interact_a_kill_too_late_is_not_a_stop,
	  .solution = {
		  .argv = { "/sandbox/late_segv" },
		  .probe = "#include <pthread.h>\n#include <signal.h>\n#include <stdlib.h>\n"
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
			   "  raise(SIGSEGV); return p[n - 1]; }\n",
		  .limits = { .memory_kb = 1024 * 1024 },
		  .expect = { .ends = KILLED_BY(SIGSEGV) } },
	  .interactor = { .sh = "read y; exit 1", .expect = { .ends = EXITS(1) } },
	  .wall_ms = 10000,
	  .stopped = NO)

PAIR_CASE(interact_interactor_cpu_limit_is_its_own,
	  .solution = { .sh = "read x", .expect = { .timed_out = NO } },
	  .interactor = { .sh = "while :; do :; done", .limits = { .cpu_ms = 300 },
			  .expect = { .timed_out = YES } },
	  .wall_ms = 10000,
	  .wall_limit = NO)

/* Writing to a solution that has gone is EPIPE for the interactor, which
 * can then say so, not a SIGPIPE that looks like its own crash. */
PAIR_CASE(interact_interactor_survives_a_gone_solution,
	  .solution = { .sh = "exit 0" },
	  .interactor = { .sh = "sleep 0.2; echo hi; echo \"after $?\" >&2; exit 1",
			  .expect = { .ends = EXITS(1), .err_has = { "after " } } },
	  .wall_ms = 10000, .protocol = true)

/*
 * The solution's jail shows nothing of the interactor: no control
 * directory, no process of it (the init, the shell, ls, grep and wc at
 * most); the interactor runs under a uid of its own: 65534 inside both,
 * and the host uids differ (the kernel shows ours).
 */
PAIR_CASE(interact_solution_cannot_reach_the_interactor,
	  .solution = { .sh = "ls /judge >&2 2>/dev/null && echo SEEN >&2;"
			      " ls /proc | grep '^[0-9]' | wc -l >&2;"
			      " grep '^Uid' /proc/self/status >&2; echo done",
			.expect = { .err_lacks = { "SEEN" }, .err_number = AT_MOST(5),
				    .err_has = { "65534" } } },
	  .interactor = { .sh = "read x; ls /judge >&2; grep '^Uid' /proc/self/status >&2",
			  .expect = { .err_has = { "status", "wait", "65534" } } },
	  .wall_ms = 10000, .protocol = true)

PAIR_CASE(interact_protocol_fifos_go_one_way,
	  .solution = { .sh = "read x" },
	  .interactor = { .sh = "cat /judge/wait 2>/dev/null && echo READ-WAIT >&2;"
				" (echo 1 > /judge/status) 2>/dev/null && echo WROTE-STATUS >&2;"
				" touch /judge/x 2>/dev/null && echo WROTE-DIR >&2; echo bye",
			  .expect = { .err = "" } },
	  .wall_ms = 10000, .protocol = true)

PAIR_CASE(interact_protocol_terminate_kills_after_the_grace,
	  .solution = { .sh = "sleep 30",
			.expect = { .ends = KILLED_BY(SIGKILL),
				    .wall_ms_at_least = SANDBOX_TERMINATE_GRACE_MS } },
	  .interactor = { .sh = "echo 0 > /judge/wait; sed -n 3p /judge/status >&2",
			  .expect = { .err = "killed: terminated\n" } },
	  .wall_ms = 20000, .protocol = true,
	  .terminated = YES, .elapsed_ms_below = 5000)

PAIR_CASE(interact_protocol_terminate_of_an_ended_program,
	  .solution = { .sh = "read x; exit 5", .expect = { .ends = EXITS(5) } },
	  .interactor = { .sh = "echo bye; sleep 0.3; echo 0 > /judge/wait;"
				" sed -n 3p /judge/status >&2",
			  .expect = { .err = "exited with code 5\n" } },
	  .wall_ms = 20000, .protocol = true,
	  .terminated = NO)

PAIR_CASE(interact_protocol_misuse_is_answered,
	  .solution = { .sh = "sleep 30" },
	  .interactor = { .sh = "sed -n 3p /judge/status >&2; echo 0 > /judge/wait;"
				" sed -n 3p /judge/status >&2;"
				" echo 1 > /judge/wait; sed -n 3p /judge/status >&2",
			  .expect = { .err = "error: status pipe opened without a wait\n"
					     "killed: terminated\n"
					     "error: wait after terminate\n" } },
	  .wall_ms = 20000, .protocol = true,
	  .protocol_errors = EXACTLY(2))

/*
 * The state line of a solution that has ended names its end as its
 * verdict will: the memory limit before the time limit before the output
 * cap, then its exit code or signal. The interactor lets the solution go,
 * asks until the state is no longer running and prints the line it got
 * (an error line ends the loop too: it never spins).
 */
#define ASK_UNTIL_ENDED                                                              \
	"echo go; while :; do echo 1 > /judge/wait; s=$(sed -n 3p /judge/status);" \
	" [ \"$s\" != running ] && break; sleep 0.05; done; echo \"$s\" >&2"
#define ENDS_AS(line) { .sh = ASK_UNTIL_ENDED, .expect = { .err = line "\n" } }

/* A hog that reads its line first: the interactor's write finds it alive. */
#define HOG_AFTER_A_LINE                                                          \
	"#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"          \
	"int main(void) { if (getchar() == EOF) return 2;"                        \
	" for (;;) { char *p = malloc(1 << 20); if (!p) return 7; memset(p, 1, 1 << 20); } }\n"

/*
 * A solution over two limits at once: a child hog is killed by the kernel
 * for memory, and the parent, once it has seen that, goes on to burn its
 * CPU time ("cpu") or to flood its stderr past the output cap (otherwise),
 * for which goboxd kills it. Either way the memory limit is named.
 */
#define HOG_THEN                                                                            \
	"#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include <unistd.h>\n" \
	"#include <sys/wait.h>\n"                                                            \
	"int main(int argc, char **argv) { char b[4096]; int st; pid_t p;"                   \
	" if (getchar() == EOF) return 2;"                                                   \
	" p = fork(); if (p < 0) return 3;"                                                  \
	" if (p == 0) for (;;) { char *m = malloc(1 << 20); if (!m) _exit(7);"               \
	" memset(m, 1, 1 << 20); }"                                                          \
	" if (waitpid(p, &st, 0) != p || !WIFSIGNALED(st)) return 4;"                        \
	" if (argc > 1 && !strcmp(argv[1], \"cpu\")) for (;;) ;"                             \
	" memset(b, 'x', sizeof(b)); for (;;) if (write(2, b, sizeof(b)) < 0) return 5; }\n"

PAIR_CASE(interact_protocol_state_of_an_exit,
	  .solution = { .sh = "read x; exit 5", .expect = { .ends = EXITS(5) } },
	  .interactor = ENDS_AS("exited with code 5"),
	  .wall_ms = 20000, .protocol = true)

PAIR_CASE(interact_protocol_state_of_a_signal,
	  .solution = { .sh = "read x; kill -SEGV $$",
			.expect = { .ends = KILLED_BY(SIGSEGV) } },
	  .interactor = ENDS_AS("killed by signal 11 (SIGSEGV)"),
	  .wall_ms = 20000, .protocol = true)

PAIR_CASE(interact_protocol_state_of_the_memory_limit,
	  .solution = { .argv = { "hog" }, .probe = HOG_AFTER_A_LINE,
			.limits = { .memory_kb = 64 * 1024 }, .expect = { .oom = YES } },
	  .interactor = ENDS_AS("killed: memory limit"),
	  .wall_ms = 20000, .protocol = true)

PAIR_CASE(interact_protocol_state_of_the_time_limit,
	  .solution = { .sh = "read x; while :; do :; done", .limits = { .cpu_ms = 300 },
			.expect = { .timed_out = YES, .oom = NO } },
	  .interactor = ENDS_AS("killed: time limit"),
	  .wall_ms = 20000, .protocol = true)

PAIR_CASE(interact_protocol_state_of_the_output_cap,
	  .solution = { .sh = "read x; yes >&2", .limits = { .output_kb = 64 },
			.expect = { .output_limited = YES, .timed_out = NO, .oom = NO } },
	  .interactor = ENDS_AS("killed: output limit"),
	  .wall_ms = 20000, .protocol = true)

/*
 * The hog's page faults count against the CPU limit: a 64 MiB hog used
 * about 60 ms of it on the host and 770 to 1,400 ms in an emulated guest
 * (tests/v2/run-tests), where a fixed 1000 ms sometimes ran out before
 * the memory did. A smaller hog, and a limit that stretches with the
 * host's slowness, keep the order the test is about: the memory limit
 * first, then the time.
 */
Test(sandbox, interact_protocol_state_names_memory_before_time)
{
	const struct pair_case c = {
		.solution = { .argv = { "hog_then", "cpu" }, .probe = HOG_THEN,
			      .limits = { .memory_kb = 16 * 1024,
					  .cpu_ms = (uint32_t)BUDGET_MS(150) },
			      .expect = { .oom = YES, .timed_out = YES } },
		.interactor = ENDS_AS("killed: memory limit"),
		.wall_ms = (uint32_t)BUDGET_MS(20000), .protocol = true,
	};

	run_pair_case(&c);
}

PAIR_CASE(interact_protocol_state_names_memory_before_output,
	  .solution = { .argv = { "hog_then", "output" }, .probe = HOG_THEN,
			.limits = { .memory_kb = 64 * 1024, .output_kb = 64 },
			.expect = { .oom = YES, .output_limited = YES } },
	  .interactor = ENDS_AS("killed: memory limit"),
	  .wall_ms = 20000, .protocol = true)

/* ---- interactive tests that compare two readings ---------------------------- */

Test(sandbox, interact_protocol_time_grows_while_the_solution_computes)
{
	/* a shell loop of real CPU work: its budget stretches with the host's
	 * slowness (an emulated guest takes 13 to 18 times longer) */
	struct pair_case c = {
		.solution = { .sh = "read go; i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done;"
				    " echo done; read x" },
		.interactor = { .sh = "echo 1 > /judge/wait; a=$(head -n 1 /judge/status); echo go;"
				      " read d; echo 1 > /judge/wait; b=$(head -n 1 /judge/status);"
				      " echo \"$a $b\" >&2; echo bye" },
		.wall_ms = (uint32_t)BUDGET_MS(20000), .protocol = true,
	};
	struct interact_result r;
	unsigned long long a = 0, b = 0;
	int rc = run_pair(&c, &r);

	assert_pair_ran(rc, &r);
	cr_assert_eq(sscanf(text(&r.interactor.err), "%llu %llu", &a, &b), 2, "%s",
		     text(&r.interactor.err));
	cr_assert_gt(b, a + 100000, "cpu %llu -> %llu us", a, b);
	/* the reading is the cgroup's, as the step's own total is */
	cr_assert_leq(b / 1000, r.solution.cpu_ms);
	cr_assert_eq(r.protocol_errors, 0);
	sandbox_interact_result_free(&r);
}

Test(sandbox, interact_protocol_memory_reflects_an_allocation)
{
	static const struct pair_case c = {
		.solution = {
			.argv = { "alloc" },
			.probe = "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"
				 "int main(void) { char b[16]; size_t n = 64u << 20; volatile char *p;\n"
				 "  if (!fgets(b, sizeof b, stdin)) return 2;\n"
				 "  p = malloc(n); for (size_t i = 0; i < n; i += 512) p[i] = 1;\n"
				 "  puts(\"ready\"); fflush(stdout);\n"
				 "  if (!fgets(b, sizeof b, stdin)) return 3;\n"
				 "  return p[n - 512] == 1 ? 0 : 4; }\n" },
		.interactor = { .sh = "echo 1 > /judge/wait; sed -n 2p /judge/status >&2; echo go;"
				      " read r; echo 1 > /judge/wait; sed -n 2p /judge/status >&2;"
				      " echo bye" },
		.wall_ms = 20000, .protocol = true,
	};
	struct interact_result r;
	unsigned long long before = 0, after = 0;
	int rc = run_pair(&c, &r);

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
	sandbox_interact_result_free(&r);
}
