/*
 * The jail closed off by goboxd-init before its hello, its network again
 * at ENTER and at a RESET that needs a new one. Every mount hardened (init_seal_mounts), the
 * programs' /proc hiding the init (init_seal_proc), a network with no
 * working interface (init_seal_network). Part of goboxd-init, which links libc alone: this
 * header and its .c include nothing of goboxd but initmsg.h.
 */
#ifndef GOBOXD_SANDBOX_INIT_SEAL_H
#define GOBOXD_SANDBOX_INIT_SEAL_H

#include <stdbool.h>
#include <stddef.h>

/* The init's own binary, self, unmounted (it is mapped already), the root
 * read-only, every mount nosuid, and nodev but for the device nodes bound
 * in. 0 or -errno. */
int init_seal_mounts(const char *self);

/* /proc remounted hidepid=ptraceable, its other flags kept. 0 or -errno. */
int init_seal_proc(void);

/* With new_namespace, a network namespace of the init's own first; then
 * the check that no interface works, through proc_fd, a /proc whose net
 * is the init's. 0, -EADDRINUSE when one does, or -errno. */
int init_seal_network(int proc_fd, bool new_namespace);

/* The sockets of the init's network namespace, whoever holds them: the
 * "sockets: used" line of its sockstat (through proc_fd, as above), which
 * counts every socket made there from its making until it is freed. The
 * count, or -errno. */
long init_seal_network_sockets(int proc_fd);

/* For a job's network (NETWORK, initmsg.h): the init's user and network
 * namespaces, opened here as only the init may, sent on sock as two fds
 * beside the message msg (len bytes). 0 or -errno. */
int init_seal_send_namespaces(int sock, const void *msg, size_t len);

#endif
