/*
 * The seccomp side of worker/sandbox/policy.h, compiled once per worker: the
 * programs' denylist as a BPF program, in two kinds (for a job without a
 * network, and for one with), which goboxd-init installs in every program
 * it starts (both drivers alike), and the baseline filter the jail's
 * launcher installs on itself before it runs the jail binary, which every
 * program inherits below its own.
 */
#ifndef GOBOXD_SECCOMP_H
#define GOBOXD_SECCOMP_H

#include <stdbool.h>
#include <stddef.h>

struct seccomp_set;

/* 0 and *out, or negative errno with a reason in err. */
int seccomp_set_build(struct seccomp_set **out, char *err, size_t errlen);
void seccomp_set_free(struct seccomp_set *s);

/* The full denylist as raw BPF instructions (struct sock_filter array):
 * for a job without a network, or (network) for one with, whose programs
 * may also make internet sockets (policy.h, policy_network_families). */
const void *seccomp_set_bpf(const struct seccomp_set *s, bool network, size_t *len);

/*
 * Install the baseline filter on the calling process: system calls of any
 * other ABI (i386 through int 0x80, x32) kill the process, and so do those
 * of policy_denied_everywhere. The jail binary and goboxd-init run under
 * it (they make none of them), and every program inherits it below its
 * own denylist. Requires PR_SET_NO_NEW_PRIVS. Async-signal-safe. 0 or
 * negative errno.
 */
int seccomp_set_apply_baseline(const struct seccomp_set *s);

#endif
