/*
 * The build cache: a successful build's job directory and its output,
 * kept under <jail dir>/build-cache and keyed by a SHA-256 of everything
 * that decides them, so that the same build asked again (a rejudge, a
 * resubmission) is not run again. Shared by every worker through the
 * host's filesystem:
 *
 *   build-cache/lock          flock'ed for a sweep (leftovers, LRU eviction)
 *   build-cache/boot-id       the boot the entries were written in
 *   build-cache/<64 hex>/     one entry, never changed once in place:
 *       meta                  the build's outcome, times, sizes (text)
 *       stdout stderr interleaved
 *       tree/                 the job directory as the build left it
 *   build-cache/.tmp-*        an entry being written (its writer holds its
 *                             flock), renamed into place when complete
 *   build-cache/.old-*        an entry being removed (the same)
 *
 * Everything in it is root's and out of every jail's sight; a job gets
 * the entry's files as root's read-only links or copies (jobdir_import).
 */
#ifndef GOBOXD_BUILDCACHE_H
#define GOBOXD_BUILDCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "worker/sandbox/jobdir.h"
#include "common/limits.h"
#include "common/sha256.h"
#include "common/stats.h"
#include "worker/sandbox/sandbox.h"

struct req_capture;

#define BUILDCACHE_DIR "build-cache"
/*
 * The most files, directories and symlinks an entry's tree may hold: a
 * request carries at most 1000 files (--max-files) and a build adds a few,
 * while a build that runs code of its own (a macro, staticExec) could
 * leave hundreds of thousands of empty names, each an inode to copy in
 * and out.
 */
#define BUILDCACHE_MAX_NAMES 4096

struct buildcache;

struct buildcache_file {
	const char *name;
	const char *data;
	size_t len;
};

/* Everything a build's result depends on, as buildcache_key hashes it. */
struct buildcache_input {
	const char *lang_id;
	const char *lang_version;       /* the entry's version text, may be NULL */
	const char *const *argv;        /* the build command as expanded (flags, names) */
	const char *const *envp;        /* its environment as expanded */
	const char *const *tools;       /* the toolchain's files (buildcache_tool_id) */
	const struct limits *limits;    /* the build's limits: they decide success */
	unsigned open_files;
	bool tmp_exec;
	const struct req_capture *capture; /* how the output is captured and counted */
	bool interleave;                /* both streams captured as one too */
	uint64_t job_output_bytes;      /* --max-job-output-size */
	const char *jail;               /* the jail driver's name */
	const struct buildcache_file *files; /* every file the build sees */
	size_t nfiles;
};

/*
 * The key: SHA-256 of every field, each with its length before it, so
 * that no two different inputs give the same byte stream (a name that
 * ends where the next begins cannot pass for another split).
 */
void buildcache_key(const struct buildcache_input *in, unsigned char key[SHA256_LEN]);
/*
 * Who path is (followed to its file): device, inode, size, modification
 * and change times, as text in buf. A toolchain upgraded in place
 * replaces its files, and with them these. 0, -EINVAL when path is not a
 * regular file, or negative errno.
 */
int buildcache_tool_id(const char *path, char *buf, size_t n);

/* One entry as a sweep sees it. */
struct buildcache_ent {
	char name[2 * SHA256_LEN + 1];
	uint64_t bytes;
	int64_t used_ns;                /* its last use (the entry's mtime) */
};

/*
 * The LRU: sorts ents from the least recently used (ties by name) and
 * returns how many of the first must go: none while they fit in
 * max_bytes, else as many as bring the rest down to nine tenths of it;
 * *kept: the bytes of the rest.
 */
size_t buildcache_lru(struct buildcache_ent *ents, size_t n, uint64_t max_bytes,
		      uint64_t *kept);

/*
 * Open (make) <jail_dir>/build-cache, before the job disk hides the jail
 * directory: the cache is used through this fd only. Entries of another
 * boot are dropped (they were written without fsync: only the page cache
 * of this boot vouches for them), leftovers of a crash removed, and the
 * whole is cut to max_bytes. max_bytes 0: no cache, *out NULL, 0. stats
 * (may be NULL) gets the counters. 0 or negative errno.
 */
int buildcache_open(const char *jail_dir, uint64_t max_bytes, struct stats *stats,
		    struct buildcache **out);
/*
 * The job disk a fetch imports into (--job-disk-size, --job-disk-files;
 * 0: none, the job directory shares the cache's disk and gets hard
 * links): an entry whose copy would not fit it is not kept. c may be NULL.
 */
void buildcache_job_disk(struct buildcache *c, uint64_t bytes, uint64_t files);
void buildcache_close(struct buildcache *c);

/*
 * A hit: the job directory d becomes the entry's tree (as uid:gid's
 * directories, root's read-only files), *r the build's recorded result
 * and *budget_spent what its output cost the job's budget; the entry is
 * marked used. -ENOENT: a miss (no entry, one being removed, or a corrupt
 * one, which goes); d untouched. Another negative errno: a miss too, but d
 * may have lost its files: an entry that could not be imported (a job disk
 * too small for its copy) is dropped, and the build must run in d cleared.
 * Either miss is counted as one.
 */
int buildcache_fetch(struct buildcache *c, const unsigned char key[SHA256_LEN],
		     struct jobdir *d, uid_t uid, gid_t gid, struct step_result *r,
		     uint64_t *budget_spent);
/*
 * Keep the job directory d (as its successful build left it: nothing may
 * run in it meanwhile) and the build's result under key; when the
 * daemon's count of the cache's bytes then passes the cap, sweep (the
 * least recently used entries go). Each name of the tree counts for its
 * blocks, at least one (jobdir_usage). An entry bigger than the whole
 * cache, with more than BUILDCACHE_MAX_NAMES names, or whose copy would
 * not fit the job disk, is not kept (-EFBIG, logged); a concurrent
 * writer's entry under the same key wins (0). 0 or negative errno; the
 * cache is unchanged on error.
 */
int buildcache_store(struct buildcache *c, const unsigned char key[SHA256_LEN],
		     const struct jobdir *d, const struct step_result *r, uint64_t budget_spent);

#endif
