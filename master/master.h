/* The privileged master: socket, workers, queue, reload, sweeping. */
#ifndef GOBOXD_MASTER_H
#define GOBOXD_MASTER_H

#include "common/config.h"
#include "common/lang/langtab.h"

/*
 * Run the daemon with a built configuration and language table (both are
 * taken over). argv/envp are kept to rebuild the configuration on SIGHUP.
 * Returns the process exit code.
 */
int master_run(struct config *cfg, struct langtab *langs, int argc, char **argv, char **envp);

#endif
