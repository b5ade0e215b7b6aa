/*
 * What the master makes ready on the host before its first worker: the
 * listening socket (systemd's, or its own), and the jail dir (made,
 * goboxd's own and writable by nobody else, reachable by the sandbox
 * uids on every level of its path).
 */
#ifndef GOBOXD_PREPARE_H
#define GOBOXD_PREPARE_H

#include <stddef.h>

#include "common/config.h"

/* The listening socket: systemd's, or bind cfg->listen:cfg->port. The fd,
 * or a negative errno with the reason in err. */
int prepare_listen(const struct config *cfg, char *err, size_t errlen);
/* The port a listening socket is bound to (0: none known). */
unsigned prepare_bound_port(int fd);
/* The jail dir, made when missing (each level 0711 whatever the umask),
 * refused when another user owns it or others may write it, or when a
 * level of its path is not searchable by others. 0, or a negative errno
 * with the reason in err. */
int prepare_jail_dir(const char *jail_dir, char *err, size_t errlen);

#endif
