/*
 * Privileges of the master's children: each stays uid 0 but keeps only the
 * capabilities its work needs, in all three sets and the bounding set, and
 * sets PR_SET_NO_NEW_PRIVS, so that nothing it executes can regain any.
 */
#ifndef GOBOXD_CAPS_H
#define GOBOXD_CAPS_H

#include <stddef.h>
#include <sys/capability.h>

/*
 * Keep exactly keep[0..n) (permitted and effective; nothing inheritable),
 * drop every other capability from the bounding set, set no_new_privs.
 * Capabilities are per thread: call it before starting any thread.
 * 0 or negative errno.
 */
int caps_keep(const cap_value_t *keep, size_t n);

#endif
