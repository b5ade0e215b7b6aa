#include "autoconf.h"

#include "worker/judge/buildcache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"
#include "worker/judge/request.h"

/* 2: every name counted for its blocks (1 counted file contents only:
 * its entries are dropped as corrupt by the first sweep). */
#define META_MAGIC "goboxd build cache 2"
/* The longest meta: it takes a block. */
#define META_MAX 1024
#define BOOT_ID_PATH "/proc/sys/kernel/random/boot_id"

struct buildcache {
	int fd;            /* <jail dir>/build-cache, opened before the job disk hid it */
	int lock_fd;       /* its lock file: one sweep at a time */
	uint64_t max_bytes;
	uint64_t job_disk_bytes;  /* what a fetch imports into: 0, no job disk */
	uint64_t job_disk_files;
	struct stats *stats;
};

/* ---- the key ----------------------------------------------------------- */

static void put(struct sha256 *h, const void *data, size_t len)
{
	unsigned char n[8];

	for (int i = 0; i < 8; i++)
		n[i] = (unsigned char)((uint64_t)len >> (8 * i));
	sha256_update(h, n, sizeof(n));
	sha256_update(h, data, len);
}

static void put_u64(struct sha256 *h, uint64_t v)
{
	put(h, &(uint64_t){ v }, sizeof(v));
}

/* NULL and "" differ: NULL is a length no string has. */
static void put_str(struct sha256 *h, const char *s)
{
	if (!s) {
		put_u64(h, UINT64_MAX);
		return;
	}
	put(h, s, strlen(s));
}

static void put_strv(struct sha256 *h, const char *const *v)
{
	size_t n = 0;

	while (v && v[n])
		n++;
	put_u64(h, n);
	for (size_t i = 0; i < n; i++)
		put_str(h, v[i]);
}

void buildcache_key(const struct buildcache_input *in, unsigned char key[SHA256_LEN])
{
	const struct limits *l = in->limits;
	struct sha256 h;

	sha256_init(&h);
	put_str(&h, META_MAGIC);
	put_str(&h, in->lang_id);
	put_str(&h, in->lang_version);
	put_strv(&h, in->argv);
	put_strv(&h, in->envp);
	put_strv(&h, in->tools);
	put_u64(&h, l->wall_ms);
	put_u64(&h, l->cpu_ms);
	put_u64(&h, l->memory_kb);
	put_u64(&h, l->max_processes);
	put_u64(&h, l->fsize_kb);
	put_u64(&h, l->output_kb);
	put_u64(&h, in->open_files);
	put_u64(&h, in->tmp_exec);
	put_u64(&h, in->capture->stream_cap);
	put_u64(&h, in->capture->pin_cpu);
	put_u64(&h, (uint64_t)in->capture->budget_format);
	put_u64(&h, in->capture->budget_bytes);
	put_u64(&h, in->interleave);
	put_u64(&h, in->job_output_bytes);
	put_str(&h, in->jail);
	put_u64(&h, in->nfiles);
	for (size_t i = 0; i < in->nfiles; i++) {
		put_str(&h, in->files[i].name);
		put(&h, in->files[i].data ? in->files[i].data : "", in->files[i].len);
	}
	sha256_final(&h, key);
}

int buildcache_tool_id(const char *path, char *buf, size_t n)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return -errno;
	/* a directory named on the command line (a scratch place) changes
	 * with every use and says nothing of the toolchain */
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	snprintf(buf, n, "%s %llu:%llu %lld %lld.%09ld %lld.%09ld", path,
		 (unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
		 (long long)st.st_size, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
		 (long long)st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
	return 0;
}

static void key_hex(const unsigned char key[SHA256_LEN], char out[2 * SHA256_LEN + 1])
{
	static const char hex[] = "0123456789abcdef";

	for (int i = 0; i < SHA256_LEN; i++) {
		out[2 * i] = hex[key[i] >> 4];
		out[2 * i + 1] = hex[key[i] & 15];
	}
	out[2 * SHA256_LEN] = '\0';
}

static bool is_key_name(const char *s)
{
	size_t n = strspn(s, "0123456789abcdef");

	return n == 2 * SHA256_LEN && s[n] == '\0';
}

/* ---- the LRU ----------------------------------------------------------- */

static int by_use(const void *a, const void *b)
{
	const struct buildcache_ent *x = a, *y = b;

	if (x->used_ns != y->used_ns)
		return x->used_ns < y->used_ns ? -1 : 1;
	return strcmp(x->name, y->name);
}

size_t buildcache_lru(struct buildcache_ent *ents, size_t n, uint64_t max_bytes,
		      uint64_t *kept)
{
	uint64_t total = 0, low = max_bytes - max_bytes / 10;
	size_t k = 0;

	if (n > 0)
		qsort(ents, n, sizeof(*ents), by_use);
	for (size_t i = 0; i < n; i++)
		total += ents[i].bytes;
	/* past the cap, down to nine tenths of it: a full cache is not swept
	 * again at every store */
	if (total > max_bytes)
		while (k < n && total > low)
			total -= ents[k++].bytes;
	*kept = total;
	return k;
}

/* ---- entries ------------------------------------------------------------ */

/* One more of a counter in the shared statistics (none in unit tests). */
#define COUNT(c, field)                                         \
	do {                                                    \
		if ((c)->stats)                                 \
			atomic_fetch_add(&(c)->stats->field, 1); \
	} while (0)

/* The directory name, whose lock the caller holds exclusive, renamed away
 * and removed. */
static int drop_locked(struct buildcache *c, const char *name)
{
	char old[64], id[17];
	int rc = 0;

	if (strncmp(name, ".old-", 5) == 0) {
		snprintf(old, sizeof(old), "%s", name);
	} else {
		random_hex(id, 8);
		snprintf(old, sizeof(old), ".old-%d-%s", (int)getpid(), id);
		if (renameat2(c->fd, name, c->fd, old, RENAME_NOREPLACE) < 0)
			rc = -errno;
	}
	if (rc == 0)
		rc = jobdir_remove_at(c->fd, old);
	if (rc < 0)
		log_warn("removing %s/%s: %s", BUILDCACHE_DIR, name, strerror(-rc));
	return rc;
}

/*
 * Remove the directory name of the cache, unless someone holds it (a
 * reader of an entry, the writer of a .tmp-): it is first renamed away,
 * so that no reader can open it by its name while it goes. 0, -EBUSY, or
 * negative errno.
 */
static int drop(struct buildcache *c, const char *name)
{
	int fd = openat(c->fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int rc;

	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		rc = errno == EWOULDBLOCK ? -EBUSY : -errno;
		close(fd);
		return rc;
	}
	rc = drop_locked(c, name);
	close(fd);
	return rc;
}

/* fd is still the directory the cache calls name (not one removed since). */
static bool still_named(int dirfd, const char *name, int fd)
{
	struct stat a, b;

	return fstatat(dirfd, name, &a, AT_SYMLINK_NOFOLLOW) == 0 && fstat(fd, &b) == 0 &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/*
 * The entry a reader holds (shared) at fd goes, as drop would take it:
 * only when no other reader holds it (the lock becomes exclusive without
 * waiting) and the name still leads to it. A reader that holds it too
 * finds it as unusable and drops it in turn. 0, -EBUSY, or negative errno.
 */
static int drop_held(struct buildcache *c, const char *name, int fd)
{
	if (flock(fd, LOCK_EX | LOCK_NB) < 0)
		return errno == EWOULDBLOCK ? -EBUSY : -errno;
	if (!still_named(c->fd, name, fd))
		return -ENOENT;
	return drop_locked(c, name);
}

/* name's meta file, whole, NUL-terminated. */
static int read_meta(int dirfd, char *buf, size_t size)
{
	int fd = openat(dirfd, "meta", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read_small_fd(fd, buf, size);
	close(fd);
	return n < 0 ? (int)n : 0;
}

/* The number after "\nname " in meta; -EINVAL when absent. */
static int meta_u64(const char *meta, const char *name, uint64_t *v)
{
	char pat[48];
	const char *p;
	char *end;

	snprintf(pat, sizeof(pat), "\n%s ", name);
	p = strstr(meta, pat);
	if (!p)
		return -EINVAL;
	p += strlen(pat);
	errno = 0;
	*v = strtoull(p, &end, 10);
	return errno || end == p || *end != '\n' ? -EINVAL : 0;
}

/* The meta of the entry open at fd, checked: its magic and its own key. */
static int meta_load(int fd, const char *hex, char *meta, size_t size)
{
	char head[sizeof(META_MAGIC "\nkey \n") + 2 * SHA256_LEN];
	int rc = read_meta(fd, meta, size);

	if (rc < 0)
		return rc;
	snprintf(head, sizeof(head), META_MAGIC "\nkey %s\n", hex);
	return strncmp(meta, head, strlen(head)) == 0 ? 0 : -EINVAL;
}

/* An entry as a sweep counts it; -EINVAL: a corrupt one. */
static int probe(struct buildcache *c, const char *name, struct buildcache_ent *e)
{
	char meta[META_MAX];
	struct stat st;
	int fd = openat(c->fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int rc;

	if (fd < 0)
		return -errno;
	rc = meta_load(fd, name, meta, sizeof(meta));
	if (rc == 0)
		rc = meta_u64(meta, "bytes", &e->bytes);
	if (rc == 0 && fstat(fd, &st) < 0)
		rc = -errno;
	close(fd);
	if (rc < 0)
		return rc == -ENOENT ? -EINVAL : rc;
	snprintf(e->name, sizeof(e->name), "%s", name);
	e->used_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	return 0;
}

/* ---- sweeps ------------------------------------------------------------ */

/* True when the entries were written in another boot (or it is unknown). */
static bool other_boot(struct buildcache *c, char *now, size_t n)
{
	char was[64] = "";
	int fd;
	ssize_t len;

	if (read_small_file(BOOT_ID_PATH, now, n) <= 0)
		snprintf(now, n, "unknown\n");
	fd = openat(c->fd, "boot-id", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return true;
	len = read(fd, was, sizeof(was) - 1);
	close(fd);
	if (len > 0)
		was[len] = '\0';
	return strcmp(was, now) != 0;
}

static int write_boot_id(struct buildcache *c, const char *id)
{
	int fd = openat(c->fd, ".boot-id", O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
			0600);
	int rc;

	if (fd < 0)
		return -errno;
	rc = write_all(fd, id, strlen(id));
	if (fsync(fd) < 0 && rc == 0)
		rc = -errno;
	close(fd);
	if (rc == 0 && renameat(c->fd, ".boot-id", c->fd, "boot-id") < 0)
		rc = -errno;
	return rc;
}

static int lock_sweeps(struct buildcache *c)
{
	while (flock(c->lock_fd, LOCK_EX) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

/*
 * Under the cache's lock: leftovers of a crash (a .tmp- or .old- nobody
 * holds) and corrupt entries go; with wipe, every entry goes; then the
 * least recently used entries, until the rest fits. The bytes gauge is
 * the result.
 */
static int sweep_locked(struct buildcache *c, bool wipe)
{
	struct buildcache_ent *ents = NULL;
	size_t n = 0, cap = 0, k;
	uint64_t kept;
	int rc;
	struct dirent *de;
	DIR *dir;
	int dfd = fcntl(c->fd, F_DUPFD_CLOEXEC, 0);

	if (dfd < 0 || !(dir = fdopendir(dfd))) {
		rc = -errno;
		if (dfd >= 0)
			close(dfd);
		return rc;
	}
	rewinddir(dir);
	while ((de = readdir(dir))) {
		const char *name = de->d_name;

		if (strncmp(name, ".tmp-", 5) == 0 || strncmp(name, ".old-", 5) == 0) {
			drop(c, name);
			continue;
		}
		if (!is_key_name(name))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			ents = xreallocarray(ents, cap, sizeof(*ents));
		}
		if (wipe) {
			drop(c, name);
			continue;
		}
		rc = probe(c, name, &ents[n]);
		if (rc == -EINVAL)
			drop(c, name);
		else if (rc == 0)
			n++;
	}
	closedir(dir);
	k = buildcache_lru(ents, n, c->max_bytes, &kept);
	for (size_t i = 0; ents && i < k; i++) {
		if (drop(c, ents[i].name) == 0)
			COUNT(c, build_cache_evictions);
		else
			kept += ents[i].bytes;  /* in use: the next sweep */
	}
	if (c->stats)
		atomic_store(&c->stats->build_cache_bytes, kept);
	free(ents);
	return 0;
}

static int sweep(struct buildcache *c, bool check_boot)
{
	char boot[64];
	bool wipe = false;
	int rc = lock_sweeps(c);

	if (rc < 0)
		return rc;
	if (check_boot && other_boot(c, boot, sizeof(boot))) {
		wipe = true;
		rc = write_boot_id(c, boot);
	}
	if (rc == 0)
		rc = sweep_locked(c, wipe);
	flock(c->lock_fd, LOCK_UN);
	return rc;
}

int buildcache_open(const char *jail_dir, uint64_t max_bytes, struct stats *stats,
		    struct buildcache **out)
{
	struct buildcache *c;
	char path[4096];
	struct stat st;
	int rc;

	*out = NULL;
	if (!max_bytes)
		return 0;
	if ((size_t)snprintf(path, sizeof(path), "%s/" BUILDCACHE_DIR, jail_dir) >= sizeof(path))
		return -ENAMETOOLONG;
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return -errno;
	c = xcalloc(1, sizeof(*c));
	c->lock_fd = -1;
	c->max_bytes = max_bytes;
	c->stats = stats;
	c->fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (c->fd < 0) {
		rc = -errno;
		goto fail;
	}
	/* Root's, and no one else's to read, write or cross. */
	if (fstat(c->fd, &st) < 0 || fchown(c->fd, 0, 0) < 0 || fchmod(c->fd, 0700) < 0) {
		rc = -errno;
		goto fail;
	}
	c->lock_fd = openat(c->fd, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (c->lock_fd < 0) {
		rc = -errno;
		goto fail;
	}
	rc = sweep(c, true);
	if (rc < 0)
		goto fail;
	*out = c;
	return 0;
fail:
	buildcache_close(c);
	return rc;
}

void buildcache_job_disk(struct buildcache *c, uint64_t bytes, uint64_t files)
{
	if (!c)
		return;
	c->job_disk_bytes = bytes;
	c->job_disk_files = files;
}

void buildcache_close(struct buildcache *c)
{
	if (!c)
		return;
	if (c->lock_fd >= 0)
		close(c->lock_fd);
	if (c->fd >= 0)
		close(c->fd);
	free(c);
}

/* ---- fetch and store ----------------------------------------------------- */

static int read_output(int dirfd, const char *name, uint64_t len, struct buf *b)
{
	struct jobdir d = { .fd = dirfd, .base_fd = -1 };
	int rc = jobdir_read(&d, name, (size_t)len, b);

	if (rc == 0 && (b->truncated || b->len != len))
		rc = -EINVAL;
	b->truncated = false;
	return rc;
}

/* The recorded result of the entry open at fd into r. */
static int load(int fd, const char *hex, struct step_result *r, uint64_t *budget_spent)
{
	static const char *const names[] = { "exited", "exit_code", "signal", "disk_full",
					     "out_truncated", "err_truncated", "wall_ms", "cpu_ms",
					     "memory_peak_kb", "memory_rss_peak_kb",
					     "budget_spent", "stdout", "stderr", "interleaved" };
	uint64_t v[ARRAY_SIZE(names)];
	char meta[META_MAX];
	int rc = meta_load(fd, hex, meta, sizeof(meta));

	for (size_t i = 0; i < ARRAY_SIZE(names) && rc == 0; i++)
		rc = meta_u64(meta, names[i], &v[i]);
	if (rc < 0)
		return -EINVAL;
	r->outcome = (struct run_outcome){ .exited = v[0] != 0, .exit_code = (int)v[1],
					   .term_signal = (int)v[2], .disk_full = v[3] != 0 };
	r->out_truncated = v[4] != 0;
	r->err_truncated = v[5] != 0;
	r->wall_ms = v[6];
	r->cpu_ms = v[7];
	r->memory_peak_kb = v[8];
	r->memory_rss_peak_kb = v[9];
	*budget_spent = v[10];
	rc = read_output(fd, "stdout", v[11], &r->out);
	if (rc == 0)
		rc = read_output(fd, "stderr", v[12], &r->err);
	if (rc == 0)
		rc = read_output(fd, "interleaved", v[13], &r->interleaved);
	return rc < 0 ? -EINVAL : 0;
}

int buildcache_fetch(struct buildcache *c, const unsigned char key[SHA256_LEN],
		     struct jobdir *d, uid_t uid, gid_t gid, struct step_result *r,
		     uint64_t *budget_spent)
{
	char hex[2 * SHA256_LEN + 1];
	int fd, tree, rc;

	key_hex(key, hex);
	fd = openat(c->fd, hex, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		rc = errno == ENOENT ? -ENOENT : -errno;
		goto miss;
	}
	/* Held while its files are taken: a sweep skips it meanwhile. */
	if (flock(fd, LOCK_SH | LOCK_NB) < 0 || !still_named(c->fd, hex, fd)) {
		close(fd);
		rc = -ENOENT;
		goto miss;
	}
	rc = load(fd, hex, r, budget_spent);
	tree = rc == 0 ? openat(fd, "tree", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
	if (rc < 0 || tree < 0) {
		close(fd);
		sandbox_step_result_free(r);
		sandbox_step_result_init(r);
		log_warn("build cache entry %s is corrupt: removed", hex);
		drop(c, hex);
		rc = -ENOENT;
		goto miss;
	}
	rc = jobdir_import(d, tree, uid, gid);
	close(tree);
	if (rc < 0) {
		/* Stored from a host's disk, copied onto a smaller job disk: an
		 * entry that does not fit now will not fit later either. */
		log_warn("build cache entry %s could not be taken (%s): %s; the build runs", hex,
			 strerror(-rc),
			 drop_held(c, hex, fd) == 0 ? "removed" : "kept while another job reads it");
		close(fd);
		sandbox_step_result_free(r);
		sandbox_step_result_init(r);
		/* not a plain miss: d has lost its files */
		rc = rc == -ENOENT ? -EIO : rc;
		goto miss;
	}
	/* its last use, for the LRU */
	futimens(fd, NULL);
	close(fd);
	COUNT(c, build_cache_hits);
	return 0;
miss:
	COUNT(c, build_cache_misses);
	return rc;
}

static int write_at(int dirfd, const char *name, const void *data, size_t len)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	int rc;

	if (fd < 0)
		return -errno;
	rc = write_all(fd, data ? data : "", len);
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	return rc;
}

/* Whole blocks of n bytes, at least one (an empty file takes an inode). */
static uint64_t blocks_of(uint64_t n)
{
	return n ? (n + JOBDIR_BLOCK - 1) / JOBDIR_BLOCK * JOBDIR_BLOCK : JOBDIR_BLOCK;
}

/* An entry's own names beside its tree: the directory, meta, the outputs. */
static uint64_t own_bytes(const struct step_result *r)
{
	return 2 * JOBDIR_BLOCK + blocks_of(r->out.len) + blocks_of(r->err.len) +
	       blocks_of(r->interleaved.len);
}

static int write_entry(int fd, const char *hex, const struct step_result *r,
		       uint64_t budget_spent, uint64_t tree_bytes)
{
	const struct run_outcome *o = &r->outcome;
	char meta[META_MAX];
	uint64_t out = own_bytes(r);
	int rc, n;

	n = snprintf(meta, sizeof(meta),
		     META_MAGIC "\nkey %s\nbytes %" PRIu64 "\nexited %d\nexit_code %d\n"
		     "signal %d\ndisk_full %d\nout_truncated %d\nerr_truncated %d\n"
		     "wall_ms %" PRIu64 "\ncpu_ms %" PRIu64 "\nmemory_peak_kb %" PRIu64 "\n"
		     "memory_rss_peak_kb %" PRIu64 "\nbudget_spent %" PRIu64 "\nstdout %zu\n"
		     "stderr %zu\ninterleaved %zu\n",
		     hex, tree_bytes + out, o->exited, o->exit_code, o->term_signal,
		     o->disk_full, r->out_truncated, r->err_truncated, r->wall_ms, r->cpu_ms,
		     r->memory_peak_kb, r->memory_rss_peak_kb, budget_spent, r->out.len,
		     r->err.len, r->interleaved.len);
	if (n < 0 || (size_t)n >= sizeof(meta))
		return -ENAMETOOLONG;
	rc = write_at(fd, "stdout", r->out.data, r->out.len);
	if (rc == 0)
		rc = write_at(fd, "stderr", r->err.data, r->err.len);
	if (rc == 0)
		rc = write_at(fd, "interleaved", r->interleaved.data, r->interleaved.len);
	/* meta last: an entry without it is corrupt, whatever else it has */
	if (rc == 0)
		rc = write_at(fd, "meta", meta, (size_t)n);
	return rc;
}

/* Why an export was refused, for the log. */
static void log_refused(const struct buildcache *c, const char *hex,
			const struct jobdir_usage *cap, const struct jobdir_usage *used)
{
	if (cap->names && used->names > cap->names)
		log_info("build %.12s not kept in the build cache: more than %" PRIu64
			 " files, directories and symlinks", hex, cap->names);
	else if (cap->import && used->import > cap->import)
		log_info("build %.12s not kept in the build cache: its copy would take more than"
			 " the job disk's %" PRIu64 " bytes", hex, cap->import);
	else
		log_info("build %.12s not kept in the build cache: it takes more than its %" PRIu64
			 " bytes", hex, c->max_bytes);
}

int buildcache_store(struct buildcache *c, const unsigned char key[SHA256_LEN],
		     const struct jobdir *d, const struct step_result *r, uint64_t budget_spent)
{
	uint64_t out = own_bytes(r);
	char hex[2 * SHA256_LEN + 1], tmp[64], id[17];
	struct jobdir_usage cap = { .names = BUILDCACHE_MAX_NAMES }, used = { 0 };
	uint64_t added = 0;
	int fd = -1, tree = -1, rc;

	key_hex(key, hex);
	if (out >= c->max_bytes) {
		log_info("build %.12s not kept in the build cache: its output takes more than its"
			 " %" PRIu64 " bytes", hex, c->max_bytes);
		return -EFBIG;
	}
	/* what a fetch will copy onto the job disk must fit there */
	cap.bytes = c->max_bytes - out;
	cap.import = c->job_disk_bytes;
	if (c->job_disk_files && c->job_disk_files < cap.names)
		cap.names = c->job_disk_files;
	random_hex(id, 8);
	snprintf(tmp, sizeof(tmp), ".tmp-%d-%s", (int)getpid(), id);
	if (mkdirat(c->fd, tmp, 0700) < 0)
		return -errno;
	fd = openat(c->fd, tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	/* held until it is in place: a sweep takes an unheld .tmp- for a crash's */
	if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0 || mkdirat(fd, "tree", 0755) < 0 ||
	    (tree = openat(fd, "tree", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		rc = -errno;
		goto out;
	}
	rc = jobdir_export(d, tree, &cap, &used);
	if (rc == -EFBIG)
		log_refused(c, hex, &cap, &used);
	if (rc == 0)
		rc = write_entry(fd, hex, r, budget_spent, used.bytes);
	/* The same build done at once by another worker: the first in stays. */
	if (rc == 0 && renameat2(c->fd, tmp, c->fd, hex, RENAME_NOREPLACE) == 0)
		added = used.bytes + out;
	else if (rc == 0 && errno != EEXIST && errno != ENOTEMPTY)
		rc = -errno;
out:
	if (tree >= 0)
		close(tree);
	/* still there when not renamed: removed while held */
	if (faccessat(c->fd, tmp, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
		jobdir_remove_at(c->fd, tmp);
	if (fd >= 0)
		close(fd);
	if (rc < 0 || !added)
		return rc;
	/* The daemon's count, kept by every store and set by every sweep: a
	 * sweep (a listing of every entry) only when it says the cache is full. */
	if (c->stats &&
	    atomic_fetch_add(&c->stats->build_cache_bytes, added) + added <= c->max_bytes)
		return 0;
	return sweep(c, false);
}
