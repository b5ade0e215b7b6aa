/* Pure checks on client input: file names and compiler flags. */
#ifndef GOBOXD_VALIDATE_H
#define GOBOXD_VALIDATE_H

#include <stdbool.h>
#include <stddef.h>

#define FILENAME_MAX_LEN 128
#define CODIZE_FILENAME_MAX_LEN 255

/*
 * The file name rule, one for both APIs, with what differs between them
 * as parameters. A name is always one path component: not empty, no '/',
 * no NUL, not "." or "..", at most max_len bytes. Then:
 *
 *   portable     only [A-Za-z0-9_.+-] (goboxd's /run: a name is safe in
 *                any tool's argv and any file system); false: any other
 *                byte (Codize's /v1/run takes "my file (1).txt" and UTF-8)
 *   no_first     bytes a name must not start with: a leading '-' (and
 *                '+') would turn a name into an option once {{sources}}
 *                puts it on a command line; a leading '.' hides the file
 *   length_first whether a name too long is reported before a bad byte
 *                (goboxd's order) or after the bad byte and "." / ".."
 *                (Codize's order, which its error messages follow)
 *
 * validate_filename_check reports the first problem in that order; the
 * APIs word it their own way (validate_filename, validate_codize_filename).
 */
struct validate_filename_rule {
	size_t max_len;
	bool portable;
	const char *no_first;
	bool length_first;
};

/* /run's rule and /v1/run's. */
extern const struct validate_filename_rule validate_filename_native;
extern const struct validate_filename_rule validate_filename_codize;

enum validate_filename_problem {
	VALIDATE_FILENAME_OK,
	VALIDATE_FILENAME_EMPTY,
	VALIDATE_FILENAME_TOO_LONG,
	VALIDATE_FILENAME_BAD_BYTE,   /* '/', NUL, or outside the portable set */
	VALIDATE_FILENAME_DOTS,       /* "." or ".." */
	VALIDATE_FILENAME_BAD_FIRST,  /* starts with a byte of no_first */
};

/*
 * The first problem of the len bytes of name under rule. For BAD_BYTE
 * (the first bad byte) and BAD_FIRST, *bad is the byte at fault.
 */
enum validate_filename_problem validate_filename_check(const struct validate_filename_rule *rule,
							const char *name, size_t len,
							char *bad);

/*
 * A /run file name (validate_filename_native: [A-Za-z0-9_.+-] only, not
 * starting with '.', '-' or '+', 1..FILENAME_MAX_LEN bytes). Returns 0,
 * or -EINVAL with a reason in err.
 */
int validate_filename(const char *name, size_t len, char *err, size_t errlen);

/* A path inside a job's directory: at most this many names deep, and
 * this many bytes in all. */
#define VALIDATE_PATH_MAX_DEPTH 8
#define VALIDATE_PATH_MAX_LEN 255

/*
 * A file's path inside the job's directory (Judge0's archives and
 * Piston's files may name directories): one to VALIDATE_PATH_MAX_DEPTH
 * names that validate_filename accepts, joined by single '/' (none
 * leading, none trailing, none empty), at most VALIDATE_PATH_MAX_LEN
 * bytes. Returns 0, or -EINVAL with a reason naming the bad part in err.
 */
int validate_path(const char *path, size_t len, char *err, size_t errlen);

/*
 * A pattern naming files of a job's directory (POST /run's return_files):
 * validate_path's shape, each part an fnmatch pattern ('*', '?', '[...]',
 * '\' escapes) in place of a portable name: any valid UTF-8 but control
 * characters; no leading '/', no empty part, no part "." or "..", at most
 * VALIDATE_PATH_MAX_DEPTH parts and VALIDATE_PATH_MAX_LEN bytes. Returns
 * 0, or -EINVAL with a reason naming the bad part in err.
 */
int validate_path_pattern(const char *pattern, size_t len, char *err, size_t errlen);

/* Whether two valid paths cannot both be files of one job: the same
 * path, or one a directory of the other ("a" and "a/b"). */
bool validate_paths_clash(const char *a, const char *b);

/*
 * A Codize /v1/run file name (validate_filename_codize), with Codize's
 * words: "must not be empty", "contains invalid characters" ('/' or
 * NUL), "not allowed" ("." or ".."), "file name too long (max: 255
 * bytes)"; and, goboxd's own, "must not start with '-'". Returns NULL
 * when the name is fine, else the message.
 */
const char *validate_codize_filename(const char *name, size_t len);

/* fnmatch-style glob ('*', '?', '[...]'), no special meaning for '/'. */
bool validate_flag_glob_match(const char *pattern, const char *flag);

/*
 * A flag is accepted when it matches one allow-list pattern and no entry of
 * the built-in deny-list (code-executing flags: -fplugin*, -B*, --specs*,
 * -Wl,*, -Wa,*, -Wp,*, @*, -x, -wrapper, -include, -imacros, -L, -l...,
 * javac -processor*, -J*, ...). Returns 0, or -EINVAL with a reason.
 */
int validate_flag(const char *const *allow, size_t nallow, const char *flag,
		  char *err, size_t errlen);

#endif
