#include "autoconf.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "worker/sandbox/jobdir.h"
#include "common/stats.h"
#include "worker/judge/buildcache.h"
#include "worker/judge/request.h"

/* ---- the key ------------------------------------------------------------ */

static const char *const argv0[] = { "/usr/bin/g++", "-O2", "-o", "solution", "solution.cpp",
				     NULL };
static const char *const env0[] = { "PATH=/bin", "TMPDIR=/tmp", NULL };
static const char *const tools0[] = { "/usr/bin/g++-12 2049:1234 900000 1.0 1.0", NULL };
static const struct limits lim0 = { 15000, 10000, 1048576, 64, 131072, 64 };
static const struct buildcache_file files0[] = {
	{ "solution.cpp", "int main(){}", 12 },
	{ "lib.h", "#define N 5", 11 },
};

static const struct req_capture cap0 = { .budget_format = OUTTEXT_JSON, .budget_bytes = 1 << 20 };
static const struct req_capture cap_stream = { .stream_cap = 65536, .budget_format = OUTTEXT_JSON,
					       .budget_bytes = 1 << 20 };
static const struct req_capture cap_pin = { .pin_cpu = true, .budget_format = OUTTEXT_JSON,
					    .budget_bytes = 1 << 20 };
static const struct req_capture cap_base64 = { .budget_format = OUTTEXT_BASE64_TWICE,
					       .budget_bytes = 1 << 20 };
static const struct req_capture cap_budget = { .budget_format = OUTTEXT_JSON,
					       .budget_bytes = 1 << 19 };

static struct buildcache_input base(void)
{
	return (struct buildcache_input){
		.lang_id = "cpp", .lang_version = "g++ 12.2", .argv = argv0, .envp = env0,
		.tools = tools0, .limits = &lim0, .open_files = 256, .tmp_exec = false,
		.capture = &cap0, .interleave = false, .job_output_bytes = 1 << 20, .jail = "bwrap",
		.files = files0, .nfiles = 2,
	};
}

static void key_of(const struct buildcache_input *in, unsigned char *k)
{
	buildcache_key(in, k);
}

Test(buildcache, same_input_same_key)
{
	struct buildcache_input a = base(), b = base();
	unsigned char ka[SHA256_LEN], kb[SHA256_LEN];

	key_of(&a, ka);
	key_of(&b, kb);
	cr_expect(memcmp(ka, kb, SHA256_LEN) == 0);
}

/* Every input that can change the build's result changes the key. */
static const char *const argv_flags[] = { "/usr/bin/g++", "-O0", "-o", "solution",
					  "solution.cpp", NULL };
static const char *const argv_joined[] = { "/usr/bin/g++", "-O2-o", "solution",
					   "solution.cpp", NULL };
static const char *const env_other[] = { "PATH=/bin", "TMPDIR=/tmp", "X=1", NULL };
static const char *const tools_other[] = { "/usr/bin/g++-12 2049:1235 900000 2.0 2.0", NULL };
static const struct limits lim_wall = { 14000, 10000, 1048576, 64, 131072, 64 };
static const struct limits lim_mem = { 15000, 10000, 524288, 64, 131072, 64 };
static const struct buildcache_file files_src[] = {
	{ "solution.cpp", "int main(){return 1;}", 21 },
	{ "lib.h", "#define N 5", 11 },
};
static const struct buildcache_file files_extra[] = {
	{ "solution.cpp", "int main(){}", 12 },
	{ "lib.h", "#define N 6", 11 },
};
static const struct buildcache_file files_name[] = {
	{ "solution.cpp", "int main(){}", 12 },
	{ "lib.hh", "#define N 5", 11 },
};
/* the same bytes split elsewhere between name and contents */
static const struct buildcache_file files_split[] = {
	{ "solution.cpp", "int main(){}", 12 },
	{ "lib.h#", "define N 5", 10 },
};

enum variant {
	V_LANG, V_VERSION_NULL, V_FLAGS, V_ARGV_JOINED, V_ENV, V_TOOLS, V_WALL, V_MEMORY,
	V_OPEN_FILES, V_TMP_EXEC, V_STREAM_CAP, V_PIN_CPU, V_BUDGET_FORMAT, V_BUDGET_BYTES,
	V_INTERLEAVE, V_JOB_OUTPUT, V_JAIL, V_SOURCE,
	V_EXTRA, V_NAME, V_SPLIT, V_ONE_FILE, V_COUNT
};

static struct buildcache_input variant(enum variant v)
{
	struct buildcache_input in = base();

	switch (v) {
	case V_LANG: in.lang_id = "cpp17"; break;
	case V_VERSION_NULL: in.lang_version = NULL; break;
	case V_FLAGS: in.argv = argv_flags; break;
	case V_ARGV_JOINED: in.argv = argv_joined; break;
	case V_ENV: in.envp = env_other; break;
	case V_TOOLS: in.tools = tools_other; break;
	case V_WALL: in.limits = &lim_wall; break;
	case V_MEMORY: in.limits = &lim_mem; break;
	case V_OPEN_FILES: in.open_files = 64; break;
	case V_TMP_EXEC: in.tmp_exec = true; break;
	case V_STREAM_CAP: in.capture = &cap_stream; break;
	case V_PIN_CPU: in.capture = &cap_pin; break;
	case V_BUDGET_FORMAT: in.capture = &cap_base64; break;
	case V_BUDGET_BYTES: in.capture = &cap_budget; break;
	case V_INTERLEAVE: in.interleave = true; break;
	case V_JOB_OUTPUT: in.job_output_bytes = 2 << 20; break;
	case V_JAIL: in.jail = "nsjail"; break;
	case V_SOURCE: in.files = files_src; break;
	case V_EXTRA: in.files = files_extra; break;
	case V_NAME: in.files = files_name; break;
	case V_SPLIT: in.files = files_split; break;
	case V_ONE_FILE: in.nfiles = 1; break;
	case V_COUNT: break;
	}
	return in;
}

Test(buildcache, every_input_changes_the_key)
{
	unsigned char keys[V_COUNT + 1][SHA256_LEN];

	for (int v = 0; v <= V_COUNT; v++) {
		struct buildcache_input in = variant((enum variant)v);

		key_of(&in, keys[v]);
	}
	/* V_COUNT is the base itself */
	for (int i = 0; i <= V_COUNT; i++)
		for (int j = i + 1; j <= V_COUNT; j++)
			cr_expect(memcmp(keys[i], keys[j], SHA256_LEN) != 0,
				  "variants %d and %d share a key", i, j);
}

Test(buildcache, empty_version_is_not_absent)
{
	struct buildcache_input a = base(), b = base();
	unsigned char ka[SHA256_LEN], kb[SHA256_LEN];

	a.lang_version = "";
	b.lang_version = NULL;
	key_of(&a, ka);
	key_of(&b, kb);
	cr_expect(memcmp(ka, kb, SHA256_LEN) != 0);
}

Test(buildcache, tool_id_follows_the_file)
{
	char a[512], b[512], path[] = "/tmp/goboxd-test-tool-XXXXXX";
	int fd = mkstemp(path);
	struct timespec ts[2] = { { 1000, 0 }, { 1000, 0 } };

	cr_assert(fd >= 0);
	cr_assert_eq(buildcache_tool_id(path, a, sizeof(a)), 0);
	cr_assert_eq(write(fd, "x", 1), 1);
	futimens(fd, ts);
	cr_assert_eq(buildcache_tool_id(path, b, sizeof(b)), 0);
	cr_expect_str_neq(a, b);
	close(fd);
	unlink(path);
	cr_expect_eq(buildcache_tool_id(path, a, sizeof(a)), -ENOENT);
	/* a directory is no part of a toolchain (/tmp changes all the time) */
	cr_expect_eq(buildcache_tool_id("/tmp", a, sizeof(a)), -EINVAL);
}

/* ---- the LRU -------------------------------------------------------------- */

static const struct {
	const char *what;
	uint64_t bytes[10];
	int64_t used[10];
	size_t n;
	uint64_t max;
	size_t evict;
	uint64_t kept;
	const char *first;   /* the least recently used, after the sort */
} lru_cases[] = {
	{ "all fit", { 10, 20, 30 }, { 3, 1, 2 }, 3, 60, 0, 60, "b" },
	{ "the oldest goes", { 10, 20, 30 }, { 3, 1, 2 }, 3, 59, 1, 40, "b" },
	{ "oldest two go", { 10, 20, 30 }, { 3, 1, 2 }, 3, 15, 2, 10, "b" },
	{ "all go", { 10, 20, 30 }, { 3, 1, 2 }, 3, 5, 3, 0, "b" },
	{ "ties by name", { 10, 10 }, { 5, 5 }, 2, 15, 1, 10, "a" },
	/* past the cap, down to nine tenths of it (86): two go, not one */
	{ "low mark", { 10, 10, 10, 10, 10, 10, 10, 10, 10, 10 }, { 9, 8, 7, 6, 5, 4, 3, 2, 1, 0 },
	  10, 95, 2, 80, "j" },
	{ "at the cap", { 10, 10, 10, 10, 10, 10, 10, 10, 10, 10 }, { 0 }, 10, 100, 0, 100, "a" },
	{ "nothing", { 0 }, { 0 }, 0, 10, 0, 0, NULL },
};

Test(buildcache, lru)
{
	for (size_t c = 0; c < sizeof(lru_cases) / sizeof(lru_cases[0]); c++) {
		struct buildcache_ent e[10];
		uint64_t kept = 99;
		size_t k;

		for (size_t i = 0; i < lru_cases[c].n; i++) {
			snprintf(e[i].name, sizeof(e[i].name), "%c", (char)('a' + i));
			e[i].bytes = lru_cases[c].bytes[i];
			e[i].used_ns = lru_cases[c].used[i];
		}
		k = buildcache_lru(e, lru_cases[c].n, lru_cases[c].max, &kept);
		cr_expect_eq(k, lru_cases[c].evict, "%s", lru_cases[c].what);
		cr_expect_eq(kept, lru_cases[c].kept, "%s", lru_cases[c].what);
		if (lru_cases[c].first)
			cr_expect_str_eq(e[0].name, lru_cases[c].first, "%s", lru_cases[c].what);
		for (size_t i = 1; i < lru_cases[c].n; i++)
			cr_expect(e[i - 1].used_ns <= e[i].used_ns, "%s", lru_cases[c].what);
	}
}

/* ---- the cache on disk ---------------------------------------------------- */

static char jail[64];
static char cachedir[96];
static struct stats *st;

static void setup(void)
{
	strcpy(jail, "/tmp/goboxd-test-bcache-XXXXXX");
	cr_assert_not_null(mkdtemp(jail));
	snprintf(cachedir, sizeof(cachedir), "%s/" BUILDCACHE_DIR, jail);
	st = calloc(1, sizeof(*st));
}

static void teardown(void)
{
	int fd = open("/tmp", O_RDONLY | O_DIRECTORY);

	jobdir_remove_at(fd, jail + 5);
	close(fd);
	free(st);
}

static void key_n(unsigned char *k, int n)
{
	memset(k, 0, SHA256_LEN);
	k[0] = (unsigned char)n;
}

static void hex_n(char *out, size_t len, int n)
{
	unsigned char k[SHA256_LEN];
	size_t o = 0;

	key_n(k, n);
	o += (size_t)snprintf(out, len, "%s/", cachedir);
	for (int i = 0; i < SHA256_LEN; i++)
		o += (size_t)snprintf(out + o, len - o, "%02x", k[i]);
}

/* A built job directory: a source, an artifact, a subdirectory. */
static void make_job(struct jobdir *d, const char *artifact)
{
	cr_assert_eq(jobdir_create(jail, 0, 0, d), 0);
	cr_assert_eq(jobdir_write(d, "solution.c", "int main(){}", 12, 0644), 0);
	cr_assert_eq(jobdir_write(d, "solution", artifact, strlen(artifact), 0755), 0);
	cr_assert_eq(mkdirat(d->fd, "classes", 0750), 0);
}

static void build_result(struct step_result *r)
{
	sandbox_step_result_init(r);
	r->outcome.exited = true;
	r->outcome.exit_code = 0;
	r->wall_ms = 1234;
	r->cpu_ms = 1000;
	r->memory_peak_kb = 5000;
	buf_puts(&r->err, "warning: unused\n");
}

/* Stores a job whose artifact is big as entry n, then removes the job. */
static void store_n(struct buildcache *c, int n, const char *big, const struct step_result *r)
{
	struct jobdir d;
	unsigned char k[SHA256_LEN];

	make_job(&d, big);
	key_n(k, n);
	cr_assert_eq(buildcache_store(c, k, &d, r, 0), 0);
	jobdir_remove(&d);
}

/*
 * A cache with room for two entries of nine names, a block each (36 KB:
 * the tree, its source, artifact and directory; the entry, its meta, its
 * outputs), holding entries 1 and 2, stored in that order; big is their
 * artifact, r their build.
 */
static struct buildcache *two_entries(char (*big)[4000], struct step_result *r)
{
	struct buildcache *c;

	memset(*big, 'x', sizeof(*big) - 1);
	(*big)[sizeof(*big) - 1] = '\0';
	cr_assert_eq(buildcache_open(jail, 100000, st, &c), 0);
	build_result(r);
	for (int i = 1; i <= 2; i++) {
		store_n(c, i, *big, r);
		usleep(20000);
	}
	return c;
}

static void read_at(int dirfd, const char *name, char *buf, size_t n)
{
	int fd = openat(dirfd, name, O_RDONLY);
	ssize_t got;

	cr_assert(fd >= 0, "%s", name);
	got = read(fd, buf, n - 1);
	buf[got < 0 ? 0 : got] = '\0';
	close(fd);
}

Test(buildcache, store_then_fetch, .init = setup, .fini = teardown)
{
	struct buildcache *c;
	struct jobdir a, b;
	struct step_result r, got;
	unsigned char k[SHA256_LEN];
	uint64_t spent = 0;
	char text[64];
	struct stat s;

	cr_assert_eq(buildcache_open(jail, 1 << 20, st, &c), 0);
	key_n(k, 1);
	make_job(&a, "ELF one");
	build_result(&r);
	cr_assert_eq(buildcache_store(c, k, &a, &r, 77), 0);
	cr_expect_gt(atomic_load(&st->build_cache_bytes), 0);

	cr_assert_eq(jobdir_create(jail, 0, 0, &b), 0);
	cr_assert_eq(jobdir_write(&b, "solution.c", "other", 5, 0644), 0);
	sandbox_step_result_init(&got);
	cr_assert_eq(buildcache_fetch(c, k, &b, 65534, 65534, &got, &spent), 0);
	cr_expect_eq(spent, 77);
	cr_expect_eq(got.wall_ms, 1234);
	cr_expect_eq(got.cpu_ms, 1000);
	cr_expect_eq(got.memory_peak_kb, 5000);
	cr_expect(got.outcome.exited && got.outcome.exit_code == 0);
	cr_expect_eq(got.err.len, r.err.len);
	cr_expect(memcmp(got.err.data, r.err.data, r.err.len) == 0);
	read_at(b.fd, "solution", text, sizeof(text));
	cr_expect_str_eq(text, "ELF one");
	read_at(b.fd, "solution.c", text, sizeof(text));
	cr_expect_str_eq(text, "int main(){}");
	/* the cache's files: root's, read-only; directories the job's */
	cr_assert_eq(fstatat(b.fd, "solution", &s, 0), 0);
	cr_expect_eq(s.st_uid, 0);
	cr_expect_eq(s.st_mode & 0777, 0555);
	cr_assert_eq(fstatat(b.fd, "classes", &s, 0), 0);
	cr_expect(S_ISDIR(s.st_mode));
	cr_expect_eq(s.st_uid, 65534);
	cr_expect_eq(s.st_mode & 0777, 0750);
	cr_expect_eq(atomic_load(&st->build_cache_hits), 1);

	/* another key: a miss, and the job directory untouched */
	key_n(k, 2);
	cr_expect_eq(buildcache_fetch(c, k, &a, 65534, 65534, &got, &spent), -ENOENT);
	cr_expect_eq(atomic_load(&st->build_cache_misses), 1);
	read_at(a.fd, "solution", text, sizeof(text));
	cr_expect_str_eq(text, "ELF one");
	sandbox_step_result_free(&r);
	sandbox_step_result_free(&got);
	jobdir_remove(&a);
	jobdir_remove(&b);
	buildcache_close(c);
}

/* The cache's copy is a new inode: changing the job's file later changes nothing. */
Test(buildcache, stored_files_are_copies, .init = setup, .fini = teardown)
{
	struct buildcache *c;
	struct jobdir a;
	struct step_result r;
	unsigned char k[SHA256_LEN];
	char path[256], text[64];
	struct stat js, cs;

	cr_assert_eq(buildcache_open(jail, 1 << 20, st, &c), 0);
	key_n(k, 1);
	make_job(&a, "ELF one");
	build_result(&r);
	cr_assert_eq(buildcache_store(c, k, &a, &r, 0), 0);
	hex_n(path, sizeof(path), 1);
	strcat(path, "/tree/solution");
	cr_assert_eq(fstatat(a.fd, "solution", &js, 0), 0);
	cr_assert_eq(stat(path, &cs), 0);
	cr_expect_neq(js.st_ino, cs.st_ino);
	cr_expect_eq(cs.st_uid, 0);
	cr_expect_eq(cs.st_mode & 0222, 0);
	int fd = openat(a.fd, "solution", O_WRONLY | O_TRUNC);
	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, "EVIL", 4), 4);
	close(fd);
	fd = open(path, O_RDONLY);
	cr_assert(fd >= 0);
	text[read(fd, text, sizeof(text) - 1)] = '\0';
	close(fd);
	cr_expect_str_eq(text, "ELF one");
	sandbox_step_result_free(&r);
	jobdir_remove(&a);
	buildcache_close(c);
}

Test(buildcache, least_recently_used_goes, .init = setup, .fini = teardown)
{
	char big[4000];
	struct buildcache *c;
	struct step_result r, got;
	struct jobdir a, b;
	unsigned char k[SHA256_LEN];
	char path[256];
	uint64_t spent;

	c = two_entries(&big, &r);
	/* entry 1 used: entry 2 is now the least recently used */
	cr_assert_eq(jobdir_create(jail, 0, 0, &b), 0);
	sandbox_step_result_init(&got);
	key_n(k, 1);
	cr_assert_eq(buildcache_fetch(c, k, &b, 65534, 65534, &got, &spent), 0);
	usleep(20000);
	make_job(&a, big);
	key_n(k, 3);
	cr_assert_eq(buildcache_store(c, k, &a, &r, 0), 0);
	hex_n(path, sizeof(path), 1);
	cr_expect_eq(access(path, F_OK), 0, "the used entry stays");
	hex_n(path, sizeof(path), 2);
	cr_expect_neq(access(path, F_OK), 0, "the unused one goes");
	hex_n(path, sizeof(path), 3);
	cr_expect_eq(access(path, F_OK), 0, "the new one is in");
	cr_expect_eq(atomic_load(&st->build_cache_evictions), 1);
	cr_expect_leq(atomic_load(&st->build_cache_bytes), 100000);
	sandbox_step_result_free(&r);
	sandbox_step_result_free(&got);
	jobdir_remove(&a);
	jobdir_remove(&b);
	buildcache_close(c);
}

Test(buildcache, too_big_for_the_cache, .init = setup, .fini = teardown)
{
	char big[8000];
	struct buildcache *c;
	struct step_result r;
	struct jobdir a;
	unsigned char k[SHA256_LEN];
	char path[256];

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	cr_assert_eq(buildcache_open(jail, 6000, st, &c), 0);
	build_result(&r);
	make_job(&a, big);
	key_n(k, 1);
	cr_expect_eq(buildcache_store(c, k, &a, &r, 0), -EFBIG);
	hex_n(path, sizeof(path), 1);
	cr_expect_neq(access(path, F_OK), 0);
	sandbox_step_result_free(&r);
	jobdir_remove(&a);
	buildcache_close(c);
}

Test(buildcache, zero_is_off, .init = setup, .fini = teardown)
{
	struct buildcache *c = (struct buildcache *)1;

	cr_expect_eq(buildcache_open(jail, 0, st, &c), 0);
	cr_expect_null(c);
	cr_expect_neq(access(cachedir, F_OK), 0, "nothing made");
}

/* A crash's leftovers and a damaged entry are swept at open; a held .tmp- stays. */
Test(buildcache, leftovers_and_corrupt_entries, .init = setup, .fini = teardown)
{
	struct buildcache *c;
	struct jobdir b;
	struct step_result got;
	unsigned char k[SHA256_LEN];
	char path[256], held[256];
	uint64_t spent;
	int fd;

	cr_assert_eq(buildcache_open(jail, 1 << 20, st, &c), 0);
	buildcache_close(c);
	snprintf(path, sizeof(path), "%s/.tmp-1-dead", cachedir);
	cr_assert_eq(mkdir(path, 0700), 0);
	snprintf(held, sizeof(held), "%s/.tmp-2-alive", cachedir);
	cr_assert_eq(mkdir(held, 0700), 0);
	fd = open(held, O_RDONLY | O_DIRECTORY);
	cr_assert_eq(flock(fd, LOCK_EX), 0);
	/* an entry whose meta is garbage */
	hex_n(path, sizeof(path), 7);
	cr_assert_eq(mkdir(path, 0700), 0);
	strcat(path, "/meta");
	FILE *f = fopen(path, "w");
	fputs("garbage\n", f);
	fclose(f);
	/* and one with no meta at all, found by a fetch */
	cr_assert_eq(buildcache_open(jail, 1 << 20, st, &c), 0);
	snprintf(path, sizeof(path), "%s/.tmp-1-dead", cachedir);
	cr_expect_neq(access(path, F_OK), 0, "the dead writer's directory went");
	cr_expect_eq(access(held, F_OK), 0, "a live writer's stays");
	hex_n(path, sizeof(path), 7);
	cr_expect_neq(access(path, F_OK), 0, "the corrupt entry went");
	hex_n(path, sizeof(path), 8);
	cr_assert_eq(mkdir(path, 0700), 0);
	cr_assert_eq(jobdir_create(jail, 0, 0, &b), 0);
	sandbox_step_result_init(&got);
	key_n(k, 8);
	cr_expect_eq(buildcache_fetch(c, k, &b, 65534, 65534, &got, &spent), -ENOENT);
	cr_expect_neq(access(path, F_OK), 0, "a corrupt entry found by a fetch goes");
	close(fd);
	sandbox_step_result_free(&got);
	jobdir_remove(&b);
	buildcache_close(c);
}

/* Entries of another boot are not trusted: written without fsync. */
Test(buildcache, another_boot_wipes, .init = setup, .fini = teardown)
{
	struct buildcache *c;
	struct step_result r;
	struct jobdir a;
	unsigned char k[SHA256_LEN];
	char path[256];
	FILE *f;

	cr_assert_eq(buildcache_open(jail, 1 << 20, st, &c), 0);
	build_result(&r);
	make_job(&a, "ELF");
	key_n(k, 1);
	cr_assert_eq(buildcache_store(c, k, &a, &r, 0), 0);
	buildcache_close(c);
	cr_assert_eq(buildcache_open(jail, 1 << 20, st, &c), 0);
	buildcache_close(c);
	hex_n(path, sizeof(path), 1);
	cr_expect_eq(access(path, F_OK), 0, "the same boot keeps it");
	snprintf(path, sizeof(path), "%s/boot-id", cachedir);
	f = fopen(path, "w");
	fputs("00000000-0000-0000-0000-000000000000\n", f);
	fclose(f);
	cr_assert_eq(buildcache_open(jail, 1 << 20, st, &c), 0);
	hex_n(path, sizeof(path), 1);
	cr_expect_neq(access(path, F_OK), 0, "another boot's entry went");
	sandbox_step_result_free(&r);
	jobdir_remove(&a);
	buildcache_close(c);
}

/* A reader holds the entry's lock while it takes the files: a sweep
 * leaves the entry alone until it lets go. */
Test(buildcache, an_entry_being_read_is_not_evicted, .init = setup, .fini = teardown)
{
	char big[4000], path[256];
	struct buildcache *c;
	struct step_result r;
	int held;

	c = two_entries(&big, &r);
	/* entry 1, the least recently used, is being read */
	hex_n(path, sizeof(path), 1);
	held = open(path, O_RDONLY | O_DIRECTORY);
	cr_assert(held >= 0);
	cr_assert_eq(flock(held, LOCK_SH), 0);
	store_n(c, 3, big, &r);
	cr_expect_eq(access(path, F_OK), 0, "the entry being read stays");
	strcat(path, "/tree/solution");
	cr_expect_eq(access(path, F_OK), 0, "with its files");
	cr_expect_eq(atomic_load(&st->build_cache_evictions), 0);
	close(held);
	/* let go: the next sweep takes it */
	store_n(c, 4, big, &r);
	hex_n(path, sizeof(path), 1);
	cr_expect_neq(access(path, F_OK), 0, "gone once nobody reads it");
	cr_expect_geq(atomic_load(&st->build_cache_evictions), 1);
	sandbox_step_result_free(&r);
	buildcache_close(c);
}

/* ---- what an entry really takes -------------------------------------------- */

/* The blocks of everything under dirfd (not following symlinks), at least
 * one each, the directory itself included: what du would say, and more. */
static uint64_t disk_use(int dirfd)
{
	DIR *dir = fdopendir(dup(dirfd));
	struct dirent *de;
	struct stat s;
	uint64_t sum;

	cr_assert_not_null(dir);
	cr_assert_eq(fstat(dirfd, &s), 0);
	sum = (uint64_t)s.st_blocks * 512;
	while ((de = readdir(dir))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		cr_assert_eq(fstatat(dirfd, de->d_name, &s, AT_SYMLINK_NOFOLLOW), 0);
		if (S_ISDIR(s.st_mode)) {
			int sub = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY);

			cr_assert(sub >= 0);
			sum += disk_use(sub);
			close(sub);
		} else {
			sum += (uint64_t)s.st_blocks * 512;
		}
	}
	closedir(dir);
	return sum;
}

/* A build that ran code of its own left links with long targets and empty
 * directories: no file contents, but blocks and inodes all the same. */
static void make_links(struct jobdir *d, int links, int dirs)
{
	char target[4000], name[32];

	memset(target, 'a', sizeof(target) - 1);
	target[sizeof(target) - 1] = '\0';
	cr_assert_eq(jobdir_create(jail, 0, 0, d), 0);
	cr_assert_eq(jobdir_write(d, "solution", "ELF", 3, 0755), 0);
	for (int i = 0; i < links; i++) {
		snprintf(name, sizeof(name), "l%d", i);
		target[0] = (char)('a' + i % 26);
		cr_assert_eq(symlinkat(target, d->fd, name), 0);
	}
	for (int i = 0; i < dirs; i++) {
		snprintf(name, sizeof(name), "d%d", i);
		cr_assert_eq(mkdirat(d->fd, name, 0755), 0);
	}
}

static uint64_t meta_bytes(int n)
{
	char path[256], text[1024], *p;
	int fd;

	hex_n(path, sizeof(path), n);
	fd = open(path, O_RDONLY | O_DIRECTORY);
	cr_assert(fd >= 0);
	read_at(fd, "meta", text, sizeof(text));
	close(fd);
	p = strstr(text, "\nbytes ");
	cr_assert_not_null(p);
	return strtoull(p + 7, NULL, 10);
}

/* What an entry is counted for is at least what it takes on disk. */
Test(buildcache, an_entry_is_counted_for_its_blocks, .init = setup, .fini = teardown)
{
	struct buildcache *c;
	struct step_result r;
	struct jobdir a;
	unsigned char k[SHA256_LEN];
	char path[256];
	int fd;

	cr_assert_eq(buildcache_open(jail, 64 << 20, st, &c), 0);
	build_result(&r);
	make_links(&a, 300, 100);
	key_n(k, 1);
	cr_assert_eq(buildcache_store(c, k, &a, &r, 0), 0);
	hex_n(path, sizeof(path), 1);
	fd = open(path, O_RDONLY | O_DIRECTORY);
	cr_assert(fd >= 0);
	/* every name at least a block: 400 of them */
	cr_expect_geq(meta_bytes(1), 400 * 4096);
	cr_expect_geq(meta_bytes(1), disk_use(fd));
	cr_expect_eq(atomic_load(&st->build_cache_bytes), meta_bytes(1));
	close(fd);
	sandbox_step_result_free(&r);
	jobdir_remove(&a);
	buildcache_close(c);
}

/* 2000 links of 4 KB targets and 1000 directories: 12 MB of blocks, never
 * kept in an 8 MiB cache, however often they are stored. */
Test(buildcache, links_and_directories_count_against_the_cap, .init = setup, .fini = teardown)
{
	struct buildcache *c;
	struct step_result r;
	struct jobdir a;
	unsigned char k[SHA256_LEN];
	int fd;

	cr_assert_eq(buildcache_open(jail, 8 << 20, st, &c), 0);
	build_result(&r);
	make_links(&a, 2000, 1000);
	for (int i = 1; i <= 3; i++) {
		key_n(k, i);
		cr_expect_eq(buildcache_store(c, k, &a, &r, 0), -EFBIG);
	}
	fd = open(cachedir, O_RDONLY | O_DIRECTORY);
	cr_assert(fd >= 0);
	cr_expect_leq(disk_use(fd), 8 << 20);
	close(fd);
	cr_expect_leq(atomic_load(&st->build_cache_bytes), 8 << 20);
	sandbox_step_result_free(&r);
	jobdir_remove(&a);
	buildcache_close(c);
}

/* More names than an entry may hold: not kept, however big the cache. */
Test(buildcache, too_many_names_for_an_entry, .init = setup, .fini = teardown)
{
	struct buildcache *c;
	struct step_result r;
	struct jobdir a, b;
	unsigned char k[SHA256_LEN];
	char path[256];

	cr_assert_eq(buildcache_open(jail, 1 << 30, st, &c), 0);
	build_result(&r);
	/* the job directory's names: BUILDCACHE_MAX_NAMES in all, then one more */
	make_links(&a, 0, BUILDCACHE_MAX_NAMES - 1);
	key_n(k, 1);
	cr_expect_eq(buildcache_store(c, k, &a, &r, 0), 0);
	make_links(&b, 0, BUILDCACHE_MAX_NAMES);
	key_n(k, 2);
	cr_expect_eq(buildcache_store(c, k, &b, &r, 0), -EFBIG);
	hex_n(path, sizeof(path), 2);
	cr_expect_neq(access(path, F_OK), 0);
	sandbox_step_result_free(&r);
	jobdir_remove(&a);
	jobdir_remove(&b);
	buildcache_close(c);
}

/* A file of size bytes, all of it a hole: nothing on disk, all of it in a copy. */
static void make_sparse(struct jobdir *d, const char *name, off_t size)
{
	int fd = openat(d->fd, name, O_WRONLY | O_CREAT | O_EXCL, 0644);

	cr_assert(fd >= 0);
	cr_assert_eq(ftruncate(fd, size), 0);
	close(fd);
}

/* A fetch copies every file whole onto the job disk (a hole, each name of a
 * hard link): an entry whose copy would not fit there is not kept. */
Test(buildcache, an_entry_too_big_for_the_job_disk, .init = setup, .fini = teardown)
{
	struct buildcache *c;
	struct step_result r;
	struct jobdir a;
	unsigned char k[SHA256_LEN];
	char path[256];

	cr_assert_eq(buildcache_open(jail, 64 << 20, st, &c), 0);
	buildcache_job_disk(c, 1 << 20, 16384);
	build_result(&r);
	/* a hole of 2 MiB */
	make_job(&a, "ELF");
	make_sparse(&a, "hole", 2 << 20);
	key_n(k, 1);
	cr_expect_eq(buildcache_store(c, k, &a, &r, 0), -EFBIG);
	jobdir_remove(&a);
	/* 600 kB, twice by name */
	make_job(&a, "ELF");
	make_sparse(&a, "once", 600 << 10);
	cr_assert_eq(linkat(a.fd, "once", a.fd, "twice", 0), 0);
	key_n(k, 2);
	cr_expect_eq(buildcache_store(c, k, &a, &r, 0), -EFBIG);
	/* the same on the cache's own disk (no job disk): links, kept */
	buildcache_job_disk(c, 0, 0);
	cr_expect_eq(buildcache_store(c, k, &a, &r, 0), 0);
	hex_n(path, sizeof(path), 1);
	cr_expect_neq(access(path, F_OK), 0);
	hex_n(path, sizeof(path), 2);
	cr_expect_eq(access(path, F_OK), 0);
	sandbox_step_result_free(&r);
	jobdir_remove(&a);
	buildcache_close(c);
}

/* An entry that cannot be imported (here: the job directory is gone from
 * under its fd) is a miss, and goes; unless another reader holds it. */
Test(buildcache, an_entry_that_cannot_be_taken_goes, .init = setup, .fini = teardown)
{
	struct buildcache *c;
	struct step_result r, got;
	struct jobdir a, b;
	unsigned char k[SHA256_LEN];
	char path[256];
	uint64_t spent;
	int held, rc;

	cr_assert_eq(buildcache_open(jail, 1 << 20, st, &c), 0);
	build_result(&r);
	make_job(&a, "ELF");
	key_n(k, 1);
	cr_assert_eq(buildcache_store(c, k, &a, &r, 0), 0);
	hex_n(path, sizeof(path), 1);
	sandbox_step_result_init(&got);
	for (int reader = 1; reader >= 0; reader--) {
		held = -1;
		if (reader) {
			held = open(path, O_RDONLY | O_DIRECTORY);
			cr_assert_eq(flock(held, LOCK_SH), 0);
		}
		cr_assert_eq(jobdir_create(jail, 0, 0, &b), 0);
		cr_assert_eq(rmdir(b.path), 0);
		rc = buildcache_fetch(c, k, &b, 65534, 65534, &got, &spent);
		cr_expect(rc < 0 && rc != -ENOENT, "a failed import is not a plain miss: %d", rc);
		cr_expect_eq(got.err.len, 0, "no recorded result");
		if (reader)
			cr_expect_eq(access(path, F_OK), 0, "another reader's entry stays");
		else
			cr_expect_neq(access(path, F_OK), 0, "the entry went");
		if (held >= 0)
			close(held);
		jobdir_remove(&b);
	}
	cr_expect_eq(atomic_load(&st->build_cache_hits), 0);
	cr_expect_eq(atomic_load(&st->build_cache_misses), 2);
	cr_assert_eq(jobdir_create(jail, 0, 0, &b), 0);
	cr_expect_eq(buildcache_fetch(c, k, &b, 65534, 65534, &got, &spent), -ENOENT);
	sandbox_step_result_free(&r);
	sandbox_step_result_free(&got);
	jobdir_remove(&a);
	jobdir_remove(&b);
	buildcache_close(c);
}

/* An export refused half-way leaves the job directory as it was: the
 * directories it went down into get their own modes back. */
Test(buildcache, a_refused_export_leaves_the_modes, .init = setup, .fini = teardown)
{
	struct jobdir_usage cap = { .names = 4 }, used;
	struct jobdir a;
	struct stat s;
	char name[128];
	int sub, dst;

	cr_assert_eq(jobdir_create(jail, 0, 0, &a), 0);
	cr_assert_eq(mkdirat(a.fd, "sub", 0751), 0);
	cr_assert_eq(mkdirat(a.fd, "sub/deeper", 0715), 0);
	sub = openat(a.fd, "sub/deeper", O_RDONLY | O_DIRECTORY);
	cr_assert(sub >= 0);
	for (int i = 0; i < 8; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		close(openat(sub, name, O_WRONLY | O_CREAT, 0644));
	}
	close(sub);
	snprintf(name, sizeof(name), "%s/out", jail);
	cr_assert_eq(mkdir(name, 0700), 0);
	dst = open(name, O_RDONLY | O_DIRECTORY);
	cr_expect_eq(jobdir_export(&a, dst, &cap, &used), -EFBIG);
	cr_expect_eq(used.names, 5, "stopped at the fifth name");
	close(dst);
	cr_assert_eq(fstatat(a.fd, "sub", &s, AT_SYMLINK_NOFOLLOW), 0);
	cr_expect_eq(s.st_mode & 07777, 0751);
	cr_assert_eq(fstatat(a.fd, "sub/deeper", &s, AT_SYMLINK_NOFOLLOW), 0);
	cr_expect_eq(s.st_mode & 07777, 0715);
	jobdir_remove(&a);
}
