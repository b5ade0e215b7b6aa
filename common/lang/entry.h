/*
 * A language's entry patterns, the regular expressions that find the
 * class a source declares as its entry. Each is compiled into two
 * regex_t: as written, and as "^.*(P)".
 */
#ifndef GOBOXD_ENTRY_H
#define GOBOXD_ENTRY_H

#include <regex.h>
#include <stddef.h>

/*
 * Compile pattern (POSIX extended) into re and locate: 0, or -EINVAL
 * with the reason, the pattern quoted first, in why, and nothing left
 * compiled. Refused too: a back-reference, groups nested past 16, a
 * pattern whose repetitions glibc would copy past 1024 nodes, one
 * without a group to name the entry.
 */
int entry_compile(const char *pattern, regex_t *re, regex_t *locate, char *why, size_t whylen);
void entry_free(regex_t *re, regex_t *locate);
/*
 * What the compiled pattern names in src, malloc'd: the last group of
 * the match that ends first, at its longest. NULL when nothing matches,
 * or the name is empty or longer than FILENAME_MAX_LEN.
 */
char *entry_find(const regex_t *re, const regex_t *locate, const char *src);

#endif
