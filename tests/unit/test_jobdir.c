#include "autoconf.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "worker/sandbox/jobdir.h"
#include "worker/sandbox/host.h"

#define SANDBOX_ID 65534

static char parent[64];
static char outside[64];

static void setup(void)
{
	strcpy(parent, "/tmp/goboxd-test-jobdir-XXXXXX");
	strcpy(outside, "/tmp/goboxd-test-outside-XXXXXX");
	cr_assert_not_null(mkdtemp(parent));
	cr_assert_not_null(mkdtemp(outside));
}

static void teardown(void)
{
	int fd = open("/tmp", O_RDONLY | O_DIRECTORY);

	jobdir_remove_at(fd, parent + 5);
	jobdir_remove_at(fd, outside + 5);
	close(fd);
}

static uid_t test_uid(void)
{
	return geteuid() == 0 ? SANDBOX_ID : geteuid();
}

static gid_t test_gid(void)
{
	return getegid() == 0 ? SANDBOX_ID : getegid();
}

static void write_host_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f, "%s", path);
	fputs(text, f);
	fclose(f);
}

static bool host_file_is(const char *path, const char *text)
{
	char buf[256] = "";
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return strcmp(buf, text) == 0;
}

static bool exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

TestSuite(jobdir, .init = setup, .fini = teardown);

Test(jobdir, create_makes_a_locked_private_dir)
{
	struct jobdir d;
	struct stat st;
	int fd;

	cr_assert_eq(jobdir_create(parent, test_uid(), test_gid(), &d), 0);
	cr_expect_eq(strncmp(d.path, parent, strlen(parent)), 0);
	cr_expect_eq(strncmp(d.path + strlen(parent), "/" JOBDIR_PREFIX, 5), 0);
	cr_assert_eq(stat(d.path, &st), 0);
	cr_expect(S_ISDIR(st.st_mode));
	cr_expect_eq(st.st_mode & 07777, 0750);
	cr_expect_eq(st.st_uid, test_uid());
	cr_expect_eq(st.st_gid, test_gid());

	fd = open(d.path, O_RDONLY | O_DIRECTORY);
	cr_assert_geq(fd, 0);
	cr_expect_eq(flock(fd, LOCK_EX | LOCK_NB), -1, "the job must hold the lock");
	cr_expect_eq(errno, EWOULDBLOCK);
	close(fd);

	cr_expect_eq(jobdir_remove(&d), 0);
	cr_expect_not(exists(d.path));
	cr_expect_eq(d.fd, -1);
	cr_expect_eq(jobdir_remove(&d), 0, "removing twice is harmless");
}

Test(jobdir, create_gives_unique_dirs)
{
	struct jobdir a, b;

	cr_assert_eq(jobdir_create(parent, test_uid(), test_gid(), &a), 0);
	cr_assert_eq(jobdir_create(parent, test_uid(), test_gid(), &b), 0);
	cr_expect_str_neq(a.path, b.path);
	jobdir_remove(&a);
	jobdir_remove(&b);
}

Test(jobdir, create_fails_cleanly)
{
	struct jobdir d = { .fd = -42 };
	char missing[128];

	snprintf(missing, sizeof(missing), "%s/nope", parent);
	cr_expect_eq(jobdir_create(missing, 0, 0, &d), -ENOENT);
	cr_expect_eq(d.fd, -42, "out untouched on failure");
}

Test(jobdir, write_file)
{
	struct jobdir d;
	char path[4200];
	struct stat st;
	mode_t old = umask(077);

	cr_assert_eq(jobdir_create(parent, test_uid(), test_gid(), &d), 0);
	cr_assert_eq(jobdir_write(&d, "solution.py", "print(1)\n", 9, 0644), 0);
	snprintf(path, sizeof(path), "%s/solution.py", d.path);
	cr_expect(host_file_is(path, "print(1)\n"));
	cr_assert_eq(stat(path, &st), 0);
	cr_expect_eq(st.st_mode & 07777, 0644, "umask must not change the mode");
	cr_expect_eq(st.st_uid, test_uid());
	cr_expect_eq(st.st_gid, test_gid());
	umask(old);

	cr_expect_eq(jobdir_write(&d, "solution.py", "x", 1, 0644), -EEXIST);
	cr_expect(host_file_is(path, "print(1)\n"), "O_EXCL: never overwritten");
	cr_expect_eq(jobdir_write(&d, "../escape", "x", 1, 0644), -EINVAL);
	cr_expect_eq(jobdir_write(&d, "..", "x", 1, 0644), -EINVAL);
	cr_expect_eq(jobdir_write(&d, "", "x", 1, 0644), -EINVAL);
	cr_expect_eq(jobdir_write(&d, "empty", "", 0, 0600), 0);
	jobdir_remove(&d);
}

Test(jobdir, write_never_follows_a_planted_symlink)
{
	struct jobdir d;
	char target[128], link[4200];

	snprintf(target, sizeof(target), "%s/passwd", outside);
	write_host_file(target, "root:x:0:0\n");
	cr_assert_eq(jobdir_create(parent, test_uid(), test_gid(), &d), 0);
	snprintf(link, sizeof(link), "%s/a.out", d.path);
	cr_assert_eq(symlink(target, link), 0);
	cr_expect_lt(jobdir_write(&d, "a.out", "pwned", 5, 0644), 0);
	cr_expect(host_file_is(target, "root:x:0:0\n"));
	jobdir_remove(&d);
}

Test(jobdir, write_makes_the_directories_of_a_path)
{
	struct jobdir d;
	char path[4200];
	struct stat st;

	cr_assert_eq(jobdir_create(parent, test_uid(), test_gid(), &d), 0);
	cr_assert_eq(jobdir_write(&d, "src/lib/util.py", "x = 1\n", 6, 0644), 0);
	cr_assert_eq(jobdir_write(&d, "src/main.py", "import lib\n", 11, 0644), 0);
	snprintf(path, sizeof(path), "%s/src/lib/util.py", d.path);
	cr_expect(host_file_is(path, "x = 1\n"));
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/src%s", d.path, i ? "/lib" : "");
		cr_assert_eq(stat(path, &st), 0);
		cr_expect(S_ISDIR(st.st_mode));
		cr_expect_eq(st.st_mode & 07777, 0750, "%s", path);
		cr_expect_eq(st.st_uid, test_uid(), "the directory is the job's owner's");
		cr_expect_eq(st.st_gid, test_gid());
	}
	cr_expect_eq(jobdir_write(&d, "src/main.py/x", "x", 1, 0644), -ENOTDIR,
		     "a file is in the way");
	cr_expect_eq(jobdir_write(&d, "src/../x", "x", 1, 0644), -EINVAL);
	cr_expect_eq(jobdir_write(&d, "src//x", "x", 1, 0644), -EINVAL);
	cr_expect_eq(jobdir_write(&d, "./x", "x", 1, 0644), -EINVAL);
	cr_expect_eq(jobdir_write(&d, "/tmp/x", "x", 1, 0644), -EINVAL);
	cr_expect_eq(jobdir_write(&d, "src/", "x", 1, 0644), -EINVAL);
	jobdir_remove(&d);
}

Test(jobdir, write_never_goes_through_a_planted_directory_link)
{
	struct jobdir d;
	char target[128], link[4200];

	cr_assert_eq(jobdir_create(parent, test_uid(), test_gid(), &d), 0);
	snprintf(link, sizeof(link), "%s/lib", d.path);
	cr_assert_eq(symlink(outside, link), 0);
	cr_expect_lt(jobdir_write(&d, "lib/x.py", "pwned", 5, 0644), 0);
	snprintf(target, sizeof(target), "%s/x.py", outside);
	cr_expect_neq(access(target, F_OK), 0, "nothing was written through the link");
	jobdir_remove(&d);
}

Test(jobdir, read_takes_regular_files_only_and_caps_them)
{
	struct jobdir d;
	struct buf b;
	char target[128], p[4200];

	snprintf(target, sizeof(target), "%s/passwd", outside);
	write_host_file(target, "root:x:0:0\n");
	cr_assert_eq(jobdir_create(parent, test_uid(), test_gid(), &d), 0);
	cr_assert_eq(jobdir_write(&d, "out.txt", "0123456789", 10, 0644), 0);

	buf_init(&b, 0);
	cr_expect_eq(jobdir_read(&d, "out.txt", 100, &b), 0);
	cr_expect_eq(b.len, 10);
	cr_expect_str_eq(b.data, "0123456789");
	cr_expect_not(b.truncated);
	buf_reset(&b);
	cr_expect_eq(jobdir_read(&d, "out.txt", 4, &b), 0);
	cr_expect_eq(b.len, 4);
	cr_expect(b.truncated);
	buf_reset(&b);
	cr_expect_eq(jobdir_read(&d, "out.txt", 10, &b), 0);
	cr_expect_not(b.truncated, "exactly the cap is not truncated");

	/* a program's symlink to a host file, a FIFO that would block, a dir */
	snprintf(p, sizeof(p), "%s/link", d.path);
	cr_assert_eq(symlink(target, p), 0);
	buf_reset(&b);
	cr_expect_eq(jobdir_read(&d, "link", 100, &b), -EINVAL);
	cr_expect_eq(b.len, 0);
	snprintf(p, sizeof(p), "%s/fifo", d.path);
	cr_assert_eq(mkfifo(p, 0644), 0);
	cr_expect_eq(jobdir_read(&d, "fifo", 100, &b), -EINVAL);
	snprintf(p, sizeof(p), "%s/dir", d.path);
	cr_assert_eq(mkdir(p, 0755), 0);
	cr_expect_eq(jobdir_read(&d, "dir", 100, &b), -EINVAL);
	cr_expect_eq(jobdir_read(&d, "missing", 100, &b), -ENOENT);
	cr_expect_eq(jobdir_read(&d, "../passwd", 100, &b), -EINVAL);
	buf_free(&b);
	jobdir_remove(&d);
}

Test(jobdir, remove_leaves_symlink_targets_alone)
{
	struct jobdir d;
	char tfile[128], tdir[128], tdirfile[160], p[4300];

	snprintf(tfile, sizeof(tfile), "%s/secret", outside);
	snprintf(tdir, sizeof(tdir), "%s/dir", outside);
	snprintf(tdirfile, sizeof(tdirfile), "%s/dir/keep", outside);
	write_host_file(tfile, "secret");
	cr_assert_eq(mkdir(tdir, 0755), 0);
	write_host_file(tdirfile, "keep");

	cr_assert_eq(jobdir_create(parent, test_uid(), test_gid(), &d), 0);
	snprintf(p, sizeof(p), "%s/etc-link", d.path);
	cr_assert_eq(symlink(tfile, p), 0);
	snprintf(p, sizeof(p), "%s/dir-link", d.path);
	cr_assert_eq(symlink(tdir, p), 0);
	snprintf(p, sizeof(p), "%s/sub", d.path);
	cr_assert_eq(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/sub/deeper-link", d.path);
	cr_assert_eq(symlink(tdir, p), 0);

	cr_expect_eq(jobdir_remove(&d), 0);
	cr_expect_not(exists(d.path));
	cr_expect(host_file_is(tfile, "secret"));
	cr_expect(host_file_is(tdirfile, "keep"));
}

/*
 * Hole 2: names a program can give its files are removed as plain names.
 * A removal that went through a shell would run these (and create the
 * witness file) or stop at the quoting.
 */
Test(jobdir, remove_takes_shell_syntax_in_names_literally)
{
	static const char *const names[] = {
		"$(touch WITNESS)", "`touch WITNESS`", "; touch WITNESS", "a b\nc",
		"'quote", "\"dq", "-rf", "*", "&& touch WITNESS", "new\nline",
	};
	struct jobdir d;
	char witness[160], p[4300];

	snprintf(witness, sizeof(witness), "%s/WITNESS", outside);
	cr_assert_eq(jobdir_create(parent, test_uid(), test_gid(), &d), 0);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", d.path, names[i]);
		write_host_file(p, "x");
	}
	cr_assert_eq(chdir(outside), 0);
	cr_expect_eq(jobdir_remove(&d), 0);
	cr_expect_not(exists(d.path));
	cr_expect_not(exists(witness));
	cr_expect_not(exists("WITNESS"));
}

/* Build the tree a hostile program could leave: unreadable dirs and files. */
static void plant_locked_tree(const char *root)
{
	char p[4300];

	snprintf(p, sizeof(p), "%s/locked", root);
	cr_assert_eq(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/locked/inner", root);
	cr_assert_eq(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/locked/inner/f", root);
	write_host_file(p, "x");
	chmod(p, 0);
	snprintf(p, sizeof(p), "%s/locked/inner", root);
	chmod(p, 0);
	snprintf(p, sizeof(p), "%s/locked/file", root);
	write_host_file(p, "x");
	snprintf(p, sizeof(p), "%s/locked", root);
	chmod(p, 0);
}

Test(jobdir, remove_handles_mode_000_dirs)
{
	struct jobdir d;

	cr_assert_eq(jobdir_create(parent, test_uid(), test_gid(), &d), 0);
	plant_locked_tree(d.path);
	cr_expect_eq(chmod(d.path, 0), 0);
	cr_expect_eq(jobdir_remove(&d), 0);
	cr_expect_not(exists(d.path));
}

/*
 * Root ignores modes, so as root the case above passes whatever the code
 * does: repeat it as an unprivileged owner, the way the sandbox uid sees it.
 */
Test(jobdir, remove_handles_mode_000_dirs_unprivileged)
{
	char top[128];
	pid_t pid;
	int status;

	if (geteuid() != 0)
		cr_skip_test("needs root to switch to an unprivileged uid");
	snprintf(top, sizeof(top), "%s/tree", parent);
	cr_assert_eq(mkdir(top, 0755), 0);
	cr_assert_eq(chown(top, SANDBOX_ID, SANDBOX_ID), 0);
	chmod(parent, 0777);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int pfd;

		if (setresgid(SANDBOX_ID, SANDBOX_ID, SANDBOX_ID) < 0 ||
		    setresuid(SANDBOX_ID, SANDBOX_ID, SANDBOX_ID) < 0)
			_exit(2);
		plant_locked_tree(top);
		pfd = open(parent, O_RDONLY | O_DIRECTORY);
		_exit(jobdir_remove_at(pfd, "tree") == 0 ? 0 : 1);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
	cr_expect_not(exists(top));
}

Test(jobdir, remove_deep_tree)
{
	struct jobdir d;
	char rel[16];
	int fd;

	cr_assert_eq(jobdir_create(parent, test_uid(), test_gid(), &d), 0);
	fd = dup(d.fd);
	/* far deeper than the removal's own depth bound, with files at each level */
	for (int i = 0; i < 300; i++) {
		int nfd, f;

		snprintf(rel, sizeof(rel), "d%d", i);
		cr_assert_eq(mkdirat(fd, rel, 0700), 0);
		f = openat(fd, "file", O_CREAT | O_WRONLY, 0600);
		cr_assert_geq(f, 0);
		close(f);
		nfd = openat(fd, rel, O_RDONLY | O_DIRECTORY);
		cr_assert_geq(nfd, 0);
		close(fd);
		fd = nfd;
	}
	close(fd);
	cr_expect_eq(jobdir_remove(&d), 0);
	cr_expect_not(exists(d.path));
}

Test(jobdir, remove_at_a_file_and_a_missing_name)
{
	char p[128];
	int pfd = open(parent, O_RDONLY | O_DIRECTORY);

	snprintf(p, sizeof(p), "%s/plain", parent);
	write_host_file(p, "x");
	cr_expect_eq(jobdir_remove_at(pfd, "plain"), 0);
	cr_expect_not(exists(p));
	cr_expect_eq(jobdir_remove_at(pfd, "plain"), -ENOENT);
	close(pfd);
}

static void make_old(const char *path, time_t age)
{
	struct timespec ts[2];

	ts[0].tv_sec = ts[1].tv_sec = time(NULL) - age;
	ts[0].tv_nsec = ts[1].tv_nsec = 0;
	cr_assert_eq(utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW), 0, "%s", path);
}

/* A sweep as the daemon makes it: jobdir_stale lists, jobdir_reclaim removes. */
struct found {
	char paths[16][4200];
	unsigned n;
};

static void collect(void *arg, const char *path)
{
	struct found *f = arg;

	cr_assert_lt(f->n, 16);
	snprintf(f->paths[f->n++], sizeof(f->paths[0]), "%s", path);
}

static int sweep(const char *dir, pid_t owner, unsigned age_s, unsigned *removed)
{
	struct found f = { .n = 0 };
	unsigned count = 0;
	int rc = jobdir_stale(dir, owner, age_s, collect, &f);

	if (rc < 0)
		return rc;
	for (unsigned i = 0; i < f.n; i++)
		if (jobdir_reclaim(f.paths[i], NULL) > 0)
			count++;
	*removed = count;
	return 0;
}

Test(jobdir, sweep)
{
	struct jobdir live, crashed, young;
	char other[128], link[128], tdir[128], keep[160], p[4300];
	unsigned removed = 99;

	cr_assert_eq(jobdir_create(parent, test_uid(), test_gid(), &live), 0);
	cr_assert_eq(jobdir_create(parent, test_uid(), test_gid(), &crashed), 0);
	cr_assert_eq(jobdir_create(parent, test_uid(), test_gid(), &young), 0);
	cr_assert_eq(jobdir_write(&crashed, "a.out", "x", 1, 0755), 0);
	plant_locked_tree(crashed.path);
	/* a crashed worker's lock died with it */
	close(crashed.fd);
	close(young.fd);

	snprintf(other, sizeof(other), "%s/not-a-job", parent);
	cr_assert_eq(mkdir(other, 0755), 0);
	snprintf(tdir, sizeof(tdir), "%s/victim", outside);
	cr_assert_eq(mkdir(tdir, 0755), 0);
	snprintf(keep, sizeof(keep), "%s/keep", tdir);
	write_host_file(keep, "keep");
	snprintf(link, sizeof(link), "%s/" JOBDIR_PREFIX "link", parent);
	cr_assert_eq(symlink(tdir, link), 0);

	make_old(live.path, 3600);
	make_old(crashed.path, 3600);
	make_old(other, 3600);
	make_old(tdir, 3600);
	make_old(link, 3600);

	cr_expect_eq(sweep(parent, 0, 600, &removed), 0);
	cr_expect_eq(removed, 1);
	cr_expect_not(exists(crashed.path));
	cr_expect(exists(live.path), "locked by a live job");
	cr_expect(exists(young.path), "younger than the age limit");
	cr_expect(exists(other), "not a job dir");
	cr_expect(exists(link), "symlinks are not job dirs");
	cr_expect(host_file_is(keep, "keep"));

	/* with age 0 the unlocked young one goes too, the live one stays */
	cr_expect_eq(sweep(parent, 0, 0, &removed), 0);
	cr_expect_eq(removed, 1);
	cr_expect_not(exists(young.path));
	cr_expect(exists(live.path));

	snprintf(p, sizeof(p), "%s", live.path);
	cr_expect_eq(jobdir_remove(&live), 0);
	cr_expect_not(exists(p));
}

static unsigned count_entries(const char *path)
{
	unsigned n = 0;
	DIR *d = opendir(path);
	struct dirent *de;

	cr_assert_not_null(d);
	while ((de = readdir(d)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(d);
	return n;
}

/* The sweeper's removal stops between two batches when told to. */
Test(jobdir, reclaim_stops_after_a_batch_and_finishes_later)
{
	volatile sig_atomic_t stop = 1;
	struct jobdir d;
	char path[4096];
	unsigned left;

	cr_assert_eq(jobdir_create(parent, test_uid(), test_gid(), &d), 0);
	for (int i = 0; i < 2000; i++) {
		char name[16];

		snprintf(name, sizeof(name), "f%d", i);
		cr_assert_eq(jobdir_write(&d, name, "x", 1, 0644), 0);
	}
	snprintf(path, sizeof(path), "%s", d.path);
	cr_assert_eq(jobdir_reclaim(path, &stop), 0, "locked by its job: left alone");
	cr_assert_eq(count_entries(path), 2000);
	close(d.fd); /* its job has ended without removing it */
	cr_assert_eq(jobdir_reclaim(path, &stop), -EINTR);
	left = count_entries(path);
	cr_expect(left > 0 && left < 2000, "%u of 2000 files left: not one batch", left);
	stop = 0;
	cr_assert_eq(jobdir_reclaim(path, &stop), 1);
	cr_expect_not(exists(path));
	cr_assert_eq(jobdir_reclaim(path, &stop), 0, "gone already");
}

Test(jobdir, sweep_missing_parent)
{
	unsigned removed = 7;
	char p[128];

	snprintf(p, sizeof(p), "%s/missing", parent);
	cr_expect_eq(sweep(p, 0, 0, &removed), -ENOENT);
	cr_expect_eq(removed, 7);
}

/* ---- snapshot and restore ---------------------------------------------- */

static void make_built_tree(struct jobdir *d)
{
	char p[4200];

	cr_assert_eq(jobdir_create(parent, test_uid(), test_gid(), d), 0);
	cr_assert_eq(jobdir_write(d, "solution.c", "int main;", 9, 0644), 0);
	cr_assert_eq(jobdir_write(d, "solution", "\x7f" "ELF", 4, 0700), 0);
	snprintf(p, sizeof(p), "%s/pkg", d->path);
	cr_assert_eq(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/pkg/Main.class", d->path);
	write_host_file(p, "class");
	snprintf(p, sizeof(p), "%s/link", d->path);
	cr_assert_eq(symlink("solution", p), 0);
}

Test(jobdir, snapshot_freezes_files_and_restore_undoes_a_test)
{
	struct jobdir d;
	struct stat st;
	char p[4200], target[64] = "";

	make_built_tree(&d);
	cr_assert_eq(jobdir_snapshot(&d), 0);
	/* Files are root's now, readable by all, executable where they were. */
	snprintf(p, sizeof(p), "%s/solution", d.path);
	cr_assert_eq(stat(p, &st), 0);
	cr_assert_eq(st.st_uid, 0);
	cr_assert_eq(st.st_mode & 0777, 0555);
	snprintf(p, sizeof(p), "%s/solution.c", d.path);
	cr_assert_eq(stat(p, &st), 0);
	cr_assert_eq(st.st_mode & 0777, 0444);

	/* What a test may do: remove, replace, add, in its own directory. */
	snprintf(p, sizeof(p), "%s/solution.c", d.path);
	cr_assert_eq(unlink(p), 0);
	snprintf(p, sizeof(p), "%s/solution", d.path);
	cr_assert_eq(unlink(p), 0);
	write_host_file(p, "replaced");
	snprintf(p, sizeof(p), "%s/output.txt", d.path);
	write_host_file(p, "memo");
	snprintf(p, sizeof(p), "%s/pkg/Main.class", d.path);
	cr_assert_eq(unlink(p), 0);
	snprintf(p, sizeof(p), "%s/pkg", d.path);
	cr_assert_eq(rmdir(p), 0);
	snprintf(p, sizeof(p), "%s/newdir", d.path);
	cr_assert_eq(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/newdir/deeper", d.path);
	cr_assert_eq(mkdir(p, 0), 0);
	cr_assert_eq(chmod(d.path, 0), 0);

	cr_assert_eq(jobdir_restore(&d, test_uid(), test_gid()), 0);
	snprintf(p, sizeof(p), "%s/solution.c", d.path);
	cr_assert(host_file_is(p, "int main;"));
	snprintf(p, sizeof(p), "%s/solution", d.path);
	cr_assert(host_file_is(p, "\x7f" "ELF"));
	snprintf(p, sizeof(p), "%s/pkg/Main.class", d.path);
	cr_assert(host_file_is(p, "class"));
	snprintf(p, sizeof(p), "%s/pkg", d.path);
	cr_assert_eq(stat(p, &st), 0);
	cr_assert_eq(st.st_uid, test_uid());
	cr_assert_eq(st.st_mode & 0777, 0755);
	snprintf(p, sizeof(p), "%s/output.txt", d.path);
	cr_assert_neq(access(p, F_OK), 0, "a test's output survived the restore");
	snprintf(p, sizeof(p), "%s/newdir", d.path);
	cr_assert_neq(access(p, F_OK), 0, "a test's directory survived the restore");
	snprintf(p, sizeof(p), "%s/link", d.path);
	cr_assert_gt(readlink(p, target, sizeof(target) - 1), 0);
	cr_assert_str_eq(target, "solution");
	cr_assert_eq(stat(d.path, &st), 0);
	cr_assert_eq(st.st_uid, test_uid());
	cr_assert_eq(st.st_mode & 0777, 0750);
	cr_assert_eq(jobdir_remove(&d), 0);
}

/* What a test reads leaves no mark for the next: a frozen file's access
 * time is its change time after the snapshot and after every restore. */
static bool accessed_as_changed(const char *path)
{
	struct stat st;

	cr_assert_eq(stat(path, &st), 0);
	return st.st_atim.tv_sec == st.st_mtim.tv_sec && st.st_atim.tv_nsec == st.st_mtim.tv_nsec;
}

Test(jobdir, no_test_finds_when_one_before_it_read_a_file)
{
	const struct timespec read_at[2] = { { .tv_sec = 1234567890, .tv_nsec = 5 },
					     { .tv_nsec = UTIME_OMIT } };
	struct jobdir d;
	char p[4200];

	make_built_tree(&d);
	snprintf(p, sizeof(p), "%s/solution.c", d.path);
	cr_assert_eq(utimensat(AT_FDCWD, p, read_at, 0), 0);
	cr_assert_eq(jobdir_snapshot(&d), 0);
	cr_assert(accessed_as_changed(p), "the first test finds the build's last read");
	/* a test reads it: the kernel sets the access time, as here */
	cr_assert_eq(utimensat(AT_FDCWD, p, read_at, 0), 0);
	cr_assert_eq(jobdir_restore(&d, test_uid(), test_gid()), 0);
	cr_assert(accessed_as_changed(p), "the next test finds when the one before read it");
	cr_assert_eq(jobdir_remove(&d), 0);
}

/* Under path, depth nested directories "d", a file "f<i>" at each level. */
static void make_deep_tree(const char *path, int depth)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY);

	cr_assert_geq(fd, 0);
	for (int i = 0; i < depth; i++) {
		char name[16];
		int nfd, f;

		snprintf(name, sizeof(name), "f%d", i);
		f = openat(fd, name, O_CREAT | O_WRONLY, 0640);
		cr_assert_geq(f, 0);
		cr_assert_eq(write(f, name, strlen(name)), (ssize_t)strlen(name));
		close(f);
		cr_assert_eq(mkdirat(fd, "d", i % 2 ? 0750 : 0700), 0);
		nfd = openat(fd, "d", O_RDONLY | O_DIRECTORY);
		cr_assert_geq(nfd, 0);
		close(fd);
		fd = nfd;
	}
	close(fd);
}

/* The deepest level's file of a make_deep_tree tree, and its content. */
static bool deep_file_is(const char *path, int depth, const char *text)
{
	char name[16], buf[64] = "";
	int fd = open(path, O_RDONLY | O_DIRECTORY), f;
	ssize_t n;

	for (int i = 0; fd >= 0 && i < depth - 1; i++) {
		int nfd = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_NOFOLLOW);

		close(fd);
		fd = nfd;
	}
	if (fd < 0)
		return false;
	snprintf(name, sizeof(name), "f%d", depth - 1);
	f = openat(fd, name, O_RDONLY);
	close(fd);
	if (f < 0)
		return false;
	n = read(f, buf, sizeof(buf) - 1);
	close(f);
	return n >= 0 && strcmp(buf, text) == 0;
}

/* A build may leave a tree of any depth: far deeper than the 64 levels
 * the snapshot once stopped at (with ELOOP, a 500 for the job). */
Test(jobdir, snapshot_and_restore_a_tree_300_levels_deep)
{
	struct jobdir d;
	struct stat st;
	char p[4200];

	cr_assert_eq(jobdir_create(parent, test_uid(), test_gid(), &d), 0);
	make_deep_tree(d.path, 300);
	cr_assert_eq(jobdir_snapshot(&d), 0);
	snprintf(p, sizeof(p), "%s.base", d.path);
	cr_expect(deep_file_is(p, 300, "f299"), "the snapshot lacks the deepest file");
	/* a test removes the whole tree and leaves a deep one of its own */
	cr_assert_eq(jobdir_remove_at(d.fd, "d"), 0);
	cr_assert_eq(mkdirat(d.fd, "other", 0700), 0);
	snprintf(p, sizeof(p), "%s/other", d.path);
	make_deep_tree(p, 200);
	cr_assert_eq(jobdir_restore(&d, test_uid(), test_gid()), 0);
	cr_expect(deep_file_is(d.path, 300, "f299"), "the restore lacks the deepest file");
	snprintf(p, sizeof(p), "%s/other", d.path);
	cr_expect_not(exists(p), "the test's tree survived the restore");
	/* each directory gets its own mode back, and the sandbox owns it */
	snprintf(p, sizeof(p), "%s/d/d", d.path);
	cr_assert_eq(stat(p, &st), 0);
	cr_expect_eq(st.st_mode & 0777, 0750);
	cr_expect_eq(st.st_uid, test_uid());
	cr_assert_eq(jobdir_remove(&d), 0);
	snprintf(p, sizeof(p), "%s.base", d.path);
	cr_expect_not(exists(p));
	cr_expect_not(exists(d.path));
}

/*
 * Under dirfd, depth levels of two directories "a" and "b" (modes 0750 and
 * 0700), each level with a file "f" (its path as content, executable on
 * the "b" side) and a symlink "l" to it. Listings go down into "a" before
 * "f" and "l" and then "b", so a walk that loses its place on the way up
 * loses entries.
 */
static void make_branching_tree(int dirfd, const char *path, int depth)
{
	static const char *const subs[] = { "a", "b" };
	int f = openat(dirfd, "f", O_CREAT | O_WRONLY, path[strlen(path) - 1] == 'b' ? 0750 : 0640);

	cr_assert_geq(f, 0);
	cr_assert_eq(write(f, path, strlen(path)), (ssize_t)strlen(path));
	close(f);
	cr_assert_eq(symlinkat("f", dirfd, "l"), 0);
	for (int i = 0; i < 2 && depth > 0; i++) {
		char sub[256];
		int fd;

		snprintf(sub, sizeof(sub), "%s/%s", path, subs[i]);
		cr_assert_eq(mkdirat(dirfd, subs[i], i ? 0700 : 0750), 0);
		fd = openat(dirfd, subs[i], O_RDONLY | O_DIRECTORY);
		cr_assert_geq(fd, 0);
		make_branching_tree(fd, sub, depth - 1);
		close(fd);
	}
}

static int name_order(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every entry under dirfd, in name order, one line each: its path, its
 * mode, and a file's content or a link's target. */
static void list_tree(int dirfd, const char *path, struct buf *out)
{
	int dfd = dup(dirfd);
	DIR *dir = fdopendir(dfd);
	char *names[64];
	size_t n = 0;
	struct dirent *de;

	cr_assert_not_null(dir);
	rewinddir(dir); /* a dup shares the offset */
	while ((de = readdir(dir)))
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0 && n < 64)
			names[n++] = strdup(de->d_name);
	closedir(dir);
	qsort(names, n, sizeof(*names), name_order);
	for (size_t i = 0; i < n; i++) {
		char data[256] = "";
		struct stat st;
		ssize_t len = 0;
		int fd;

		cr_assert_eq(fstatat(dirfd, names[i], &st, AT_SYMLINK_NOFOLLOW), 0);
		buf_printf(out, "%s/%s %o", path, names[i], (unsigned)(st.st_mode & 0777));
		if (S_ISLNK(st.st_mode)) {
			len = readlinkat(dirfd, names[i], data, sizeof(data) - 1);
			buf_printf(out, " -> %.*s\n", (int)len, data);
		} else if (S_ISREG(st.st_mode)) {
			fd = openat(dirfd, names[i], O_RDONLY);
			cr_assert_geq(fd, 0);
			len = read(fd, data, sizeof(data) - 1);
			close(fd);
			buf_printf(out, " \"%.*s\"\n", (int)len, data);
		} else {
			char sub[256];

			buf_puts(out, "/\n");
			snprintf(sub, sizeof(sub), "%s/%s", path, names[i]);
			fd = openat(dirfd, names[i], O_RDONLY | O_DIRECTORY);
			cr_assert_geq(fd, 0);
			list_tree(fd, sub, out);
			close(fd);
		}
		free(names[i]);
	}
}

static size_t count_lines(const struct buf *b)
{
	size_t n = 0;

	for (size_t i = 0; i < b->len; i++)
		n += b->data[i] == '\n';
	return n;
}

/* Every level of a tree that branches, every entry of each, comes back:
 * the restore, like the snapshot, resumes each level after each subtree. */
Test(jobdir, restore_brings_back_every_entry_of_a_branching_tree)
{
	struct jobdir d;
	struct buf built, restored;

	buf_init(&built, 0);
	buf_init(&restored, 0);
	cr_assert_eq(jobdir_create(parent, test_uid(), test_gid(), &d), 0);
	make_branching_tree(d.fd, ".", 4);
	cr_assert_eq(jobdir_snapshot(&d), 0);
	/* after the snapshot: what every test must start from */
	list_tree(d.fd, ".", &built);
	cr_assert_eq(jobdir_remove_at(d.fd, "a"), 0);
	cr_assert_eq(unlinkat(d.fd, "f", 0), 0);
	cr_assert_eq(mkdirat(d.fd, "c", 0700), 0);
	cr_assert_eq(jobdir_restore(&d, test_uid(), test_gid()), 0);
	list_tree(d.fd, ".", &restored);
	/* 30 directories under the top, a file and a link in each of 31 */
	cr_assert_eq(count_lines(&built), 30 + 31 * 2, "%s", built.data);
	cr_assert_str_eq(restored.data, built.data);
	buf_free(&built);
	buf_free(&restored);
	cr_assert_eq(jobdir_remove(&d), 0);
}

Test(jobdir, remove_takes_the_snapshot_too)
{
	struct jobdir d;
	char base[4200];

	make_built_tree(&d);
	cr_assert_eq(jobdir_snapshot(&d), 0);
	snprintf(base, sizeof(base), "%s.base", d.path);
	cr_assert_eq(access(base, F_OK), 0);
	cr_assert_eq(jobdir_remove(&d), 0);
	cr_assert_neq(access(base, F_OK), 0);
	cr_assert_neq(access(d.path, F_OK), 0);
}

Test(jobdir, the_snapshot_is_locked_against_the_sweeper)
{
	struct jobdir d;
	unsigned removed = 99;
	char base[4200];

	make_built_tree(&d);
	cr_assert_eq(jobdir_snapshot(&d), 0);
	snprintf(base, sizeof(base), "%s.base", d.path);
	cr_assert_eq(sweep(parent, 0, 0, &removed), 0);
	cr_assert_eq(removed, 0);
	cr_assert_eq(access(base, F_OK), 0);
	cr_assert_eq(jobdir_remove(&d), 0);
}

/* A process that exited without cleaning up: its parent removes its
 * directories at once, whatever their age, and nobody else's. */
Test(jobdir, sweep_owner_takes_only_the_dead_process_s)
{
	struct jobdir mine, *shared;
	unsigned removed = 99;
	char theirs[4096], mine_path[4096];
	int st;
	pid_t pid;

	shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		      -1, 0);
	cr_assert_neq(shared, MAP_FAILED);
	pid = fork();
	if (pid == 0) {
		if (jobdir_create(parent, test_uid(), test_gid(), shared) < 0 ||
		    jobdir_write(shared, "left", "x", 1, 0644) < 0 || jobdir_snapshot(shared) < 0)
			_exit(1);
		_exit(0);   /* no jobdir_remove: killed in the middle of a job */
	}
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	snprintf(theirs, sizeof(theirs), "%s", shared->path);
	cr_assert_eq(jobdir_create(parent, test_uid(), test_gid(), &mine), 0);
	snprintf(mine_path, sizeof(mine_path), "%s", mine.path);
	cr_assert_eq(sweep(parent, getpid(), 0, &removed), 0);
	cr_assert_eq(removed, 0, "a live, locked directory was removed");
	cr_assert_eq(sweep(parent, pid, 0, &removed), 0);
	cr_assert_eq(removed, 2); /* the directory and its snapshot */
	cr_assert_neq(access(theirs, F_OK), 0);
	cr_assert_eq(access(mine_path, F_OK), 0);
	cr_assert_eq(jobdir_remove(&mine), 0);
	munmap(shared, sizeof(*shared));
}

/* A build may leave links to host files: root's snapshot and restore touch
 * the links, never what they point to. */
Test(jobdir, snapshot_and_restore_never_follow_links)
{
	struct jobdir d;
	struct stat st;
	char victim[128], p[4200];

	snprintf(victim, sizeof(victim), "%s/victim", outside);
	write_host_file(victim, "host");
	cr_assert_eq(chmod(victim, 0666), 0);
	cr_assert_eq(chown(victim, test_uid(), test_gid()), 0);
	cr_assert_eq(jobdir_create(parent, test_uid(), test_gid(), &d), 0);
	snprintf(p, sizeof(p), "%s/input.txt", d.path);
	cr_assert_eq(symlink(victim, p), 0);
	snprintf(p, sizeof(p), "%s/dir", d.path);
	cr_assert_eq(symlink(outside, p), 0);
	cr_assert_eq(jobdir_snapshot(&d), 0);
	cr_assert_eq(jobdir_restore(&d, test_uid(), test_gid()), 0);
	cr_expect_eq(jobdir_write(&d, "input.txt", "job", 3, 0644), -EEXIST,
		     "a write over a planted link must fail, not follow it");
	cr_assert_eq(stat(victim, &st), 0);
	cr_expect_eq(st.st_mode & 07777, 0666);
	cr_expect_eq(st.st_uid, test_uid());
	cr_expect(host_file_is(victim, "host"));
	cr_assert_eq(stat(outside, &st), 0);
	cr_expect_eq(st.st_mode & 07777, 0700);
	cr_expect_eq(jobdir_remove(&d), 0);
}
