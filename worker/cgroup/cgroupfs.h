/*
 * The cgroup filesystem as cgroup.c, cgroup_v1.c, cgroup_v2.c and
 * cgroup_place.c use it: reading and writing a cgroup's files, listing
 * and killing its processes, removing its directories. Knows no version:
 * the file names are the callers'.
 */
#ifndef GOBOXD_CGROUPFS_H
#define GOBOXD_CGROUPFS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* err <- the formatted reason (when err is given); returns rc. */
int cgroupfs_err(char *err, size_t errlen, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* out <- dir/name: 0 or -ENAMETOOLONG. */
int cgroupfs_join(char *out, size_t len, const char *dir, const char *name);
/* dir/file, whole, into buf (NUL-terminated): 0 or negative errno. */
int cgroupfs_read(const char *dir, const char *file, char *buf, size_t size);
int cgroupfs_write(const char *dir, const char *file, const char *val);
bool cgroupfs_exists(const char *dir, const char *file);
/* mkdir 0755, an existing one taken as made: 0 or negative errno. */
int cgroupfs_mkdir(const char *path);
void cgroupfs_sleep_us(long us);
/* dir/cgroup.procs: the count of pids (may exceed max; up to max stored)
 * or negative errno. */
int cgroupfs_read_pids(const char *dir, pid_t *pids, size_t max);

/*
 * The files of a step cgroup, each opened once and kept: a program's step
 * reads and writes the same dozen, and a jail's first cgroup serves one
 * program after another, where an open by name walks the whole path each
 * time (a third of the worker's CPU a test). Read with pread from 0 (a
 * cgroup file is made anew for a read at 0), written with pwrite. Not
 * cgroup.procs: on v1 a read through an fd that read it before may be
 * served the list it made then (kept for a second), so it is opened anew
 * each time (cgroupfs_read_pids). A file is known by its dir pointer (one
 * of its step's dir[]) and its name.
 */
struct cgroupfs_files;

struct cgroupfs_files *cgroupfs_files_new(void);
/* Close every kept file and free. NULL is nothing. */
void cgroupfs_files_close(struct cgroupfs_files *f);
/* cgroupfs_read through f; the whole file, from its start. */
int cgroupfs_files_read(struct cgroupfs_files *f, const char *dir, const char *file, char *buf,
			size_t size);
int cgroupfs_files_write(struct cgroupfs_files *f, const char *dir, const char *file,
			 const char *val);
/* cgroupfs_files_write, and on failure the reason in err:
 * "write(dir/file, val): ...". */
int cgroupfs_files_write_or_say(struct cgroupfs_files *f, const char *dir, const char *file,
				const char *val, char *err, size_t errlen);
/* A file holding one number. */
int cgroupfs_files_read_u64(struct cgroupfs_files *f, const char *dir, const char *file,
			    uint64_t *out);
/* key's value in a flat keyed file (cgroupfs_parse_kv). */
int cgroupfs_files_read_kv(struct cgroupfs_files *f, const char *dir, const char *file,
			   const char *key, uint64_t *out);

/* dirs[i] is one of dirs[0..i-1] (v1's co-mounted controllers). */
bool cgroupfs_dup_dir(char (*dirs)[PATH_MAX], unsigned i);
/*
 * SIGKILL every process listed in the n dirs, but spare (0: none), until
 * none is left: 0, or -EBUSY after CGROUPFS_KILL_TIMEOUT_MS.
 */
int cgroupfs_kill_until_empty(char (*dirs)[PATH_MAX], unsigned n, pid_t spare);
/* Remove each distinct directory of dirs and all below, killing what runs
 * there; logs what could not be removed. */
void cgroupfs_remove_dirs(char (*dirs)[PATH_MAX], unsigned n);
/*
 * Remove every child cgroup of dir (not dir itself) for which skip, when
 * given, says no (it is given the child's path and name); counts them in
 * *count (NULL: not counted). 0 or the last error.
 */
int cgroupfs_rm_children_unless(const char *dir, unsigned *count,
				bool (*skip)(const char *path, const char *name));
int cgroupfs_rm_children(const char *dir, unsigned *count);

/* Parsing helpers (pure, no I/O; unit-tested). */

/*
 * The value of key in a flat keyed file ("key value" lines: memory.stat,
 * cpu.stat, memory.events, memory.oom_control). 0, -ENOENT, -EINVAL.
 */
int cgroupfs_parse_kv(const char *text, const char *key, uint64_t *out);
/*
 * A cgroup.procs text: stores up to max pids and returns how many the text
 * holds in all (may exceed max), or -EINVAL.
 */
int cgroupfs_parse_pids(const char *text, pid_t *pids, size_t max);

#endif
