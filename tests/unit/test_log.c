#include "autoconf.h"

#include "common/log.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/utf8.h"

static char dir[64];
static char path[128], rotated[128];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/goboxd-logtest-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/goboxd.log", dir);
	snprintf(rotated, sizeof(rotated), "%s/goboxd.log.1", dir);
	log_init("test", LOG_INFO);
}

static void teardown(void)
{
	unlink(path);
	unlink(rotated);
	rmdir(dir);
}

static bool file_has(const char *p, const char *needle)
{
	char buf[8192];
	FILE *f = fopen(p, "r");
	size_t n;

	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return strstr(buf, needle) != NULL;
}

TestSuite(log, .init = setup, .fini = teardown);

Test(log, reopen_without_a_file_says_so)
{
	cr_assert_eq(log_reopen(), -ENOENT);
}

Test(log, the_file_replaces_stderr_and_reopen_follows_a_rename)
{
	cr_assert_eq(log_open_file(path), 0);
	log_info("first line");
	cr_assert(file_has(path, "\"first line\""));
	cr_assert_eq(rename(path, rotated), 0);
	cr_assert_eq(log_reopen(), 0);
	log_info("second line");
	cr_assert(file_has(path, "\"second line\""));
	cr_assert_not(file_has(rotated, "second line"));
	cr_assert(file_has(rotated, "first line"));
}

Test(log, a_forked_process_follows_at_its_next_line)
{
	int go[2], done[2];
	char c;
	pid_t pid;
	int status;

	cr_assert_eq(log_open_file(path), 0);
	cr_assert_eq(pipe(go), 0);
	cr_assert_eq(pipe(done), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		log_info("from the child");
		_exit(write(done[1], "x", 1) == 1 ? 0 : 1);
	}
	cr_assert_eq(rename(path, rotated), 0);
	cr_assert_eq(log_reopen(), 0);
	cr_assert_eq(write(go[1], "x", 1), 1);
	cr_assert_eq(read(done[0], &c, 1), 1);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	cr_assert(file_has(path, "\"from the child\""));
	cr_assert_not(file_has(rotated, "from the child"));
}

Test(log, an_unopenable_file_is_an_error)
{
	char bad[160];

	snprintf(bad, sizeof(bad), "%s/missing/goboxd.log", dir);
	cr_assert_eq(log_open_file(bad), -ENOENT);
	cr_assert_eq(log_reopen(), -ENOENT, "a failed open leaves no file to reopen");
}

/* "log the failure, then return -errno" must return the caller's error. */
Test(log, errno_survives_a_line_that_cannot_be_written)
{
	int ro = open("/dev/null", O_RDONLY | O_CLOEXEC);

	cr_assert_geq(ro, 0);
	/* fd 2 open for reading only: writing the line fails with EBADF */
	cr_assert_eq(dup2(ro, STDERR_FILENO), STDERR_FILENO);
	close(ro);
	errno = EXDEV;
	log_error("rename(%s): %s", "x", strerror(errno));
	cr_expect_eq(errno, EXDEV, "errno became %d", errno);
	errno = ENOSPC;
	log_json(LOG_WARN, cJSON_CreateObject());
	cr_expect_eq(errno, ENOSPC, "errno became %d", errno);
}

Test(log, errno_survives_a_line_written_to_the_file)
{
	cr_assert_eq(log_open_file(path), 0);
	errno = EMFILE;
	log_info("a line");
	cr_expect_eq(errno, EMFILE, "errno became %d", errno);
	cr_assert(file_has(path, "\"a line\""));
}

Test(log, a_line_with_bytes_that_are_no_utf8_is_still_utf8)
{
	char buf[512];
	FILE *f;
	size_t n;

	cr_assert_eq(log_open_file(path), 0);
	/* a client's path, as a request's log line carries it */
	log_info("GET /submissions/\xff\xfe%s", "\xc3\xa9-\xc3");
	f = fopen(path, "r");
	cr_assert_not_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	cr_expect(utf8_valid(buf, n), "%s", buf);
	cr_expect_not_null(strstr(buf, "/submissions/\xef\xbf\xbd\xef\xbf\xbd\xc3\xa9-\xef\xbf\xbd"),
			   "each bad byte is U+FFFD, the good ones stay: %s", buf);
}
