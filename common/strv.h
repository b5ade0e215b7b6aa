/*
 * The string vector: a NULL-terminated char ** whose strings and array are
 * malloc'd and owned by the vector, the shape execve takes. Every list of
 * strings goes in one (a language's args and aliases, a request's flags,
 * an expanded argv and envp), so one strv_free releases any of them.
 * NULL is a valid, empty vector for every function here.
 */
#ifndef GOBOXD_STRV_H
#define GOBOXD_STRV_H

#include <stdbool.h>
#include <stddef.h>

/* An empty vector: { NULL }. */
char **strv_new(void);
/* The number of strings before the NULL. */
size_t strv_len(char *const *v);
/* A deep copy; an empty vector for NULL. */
char **strv_dup(char *const *v);
/* Append s (not NULL) to *v (a NULL *v is an empty vector), which takes s over. */
void strv_push(char ***v, char *s);
/* Whether one string of v equals s. */
bool strv_contains(char *const *v, const char *s);
void strv_free(char **v);

#endif
