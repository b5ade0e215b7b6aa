/* Pure checks on client input: file names and compiler flags. */
#ifndef GOBOXD_VALIDATE_H
#define GOBOXD_VALIDATE_H

#include <stdbool.h>
#include <stddef.h>

#define FILENAME_MAX_LEN 128

/*
 * A client file name must be one path component: [A-Za-z0-9_.+-] only,
 * starting with a letter, digit or '_' (no leading dot, and no leading '-'
 * or '+' that a tool would read as an option), no "/", no NUL,
 * 1..FILENAME_MAX_LEN bytes.
 * Returns 0, or -1 with a reason in err.
 */
int validate_filename(const char *name, size_t len, char *err, size_t errlen);

#define CODIZE_FILENAME_MAX_LEN 255

/*
 * A Codize /v1/run file name, Codize's rule with its wording: not empty,
 * no '/' and no NUL ("contains invalid characters"), not "." or ".." ("not
 * allowed"), at most CODIZE_FILENAME_MAX_LEN bytes. One rule of goboxd's
 * own on top: no leading '-', because file names become arguments of the
 * build command ({{sources}}). Returns NULL when the name is fine, else the
 * message.
 */
const char *validate_codize_filename(const char *name, size_t len);

/* fnmatch-style glob ('*', '?', '[...]'), no special meaning for '/'. */
bool flag_glob_match(const char *pattern, const char *flag);

/*
 * A flag is accepted when it matches one allow-list pattern and no entry of
 * the built-in deny-list (code-executing flags: -fplugin*, -B*, --specs*,
 * -Wl,*, -Wa,*, -Wp,*, @*, -x, -wrapper, -include, -imacros, -L, -l...,
 * javac -processor*, -J*, ...). Returns 0, or -1 with a reason.
 */
int validate_flag(const char *const *allow, size_t nallow, const char *flag,
		  char *err, size_t errlen);

#endif
