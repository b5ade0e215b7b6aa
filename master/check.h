/*
 * goboxd --check: what the daemon would start with, validated without
 * changing anything, and printed.
 */
#ifndef GOBOXD_CHECK_H
#define GOBOXD_CHECK_H

#include <stdio.h>

#include "common/config.h"
#include "common/lang/langtab.h"
#include "master/rootless.h"

/* Exit status of --check once the configuration and the language table
 * have loaded (their errors exit 2 before this runs). */
enum { CHECK_OK = 0, CHECK_FAILED = 1 };

/*
 * Print the configuration, who goboxd runs as (root, or rootless in the
 * namespace main entered), the language table with its counts, the jail
 * binary and the cgroup place to out, one "FAILED:" line per problem.
 * CHECK_OK, or CHECK_FAILED when the daemon could not serve jobs (no jail
 * binary; no usable cgroups unless allow_degraded_cgroups).
 */
int check_run(const struct config *cfg, const struct langtab *langs,
	      const struct rootless *rootless, FILE *out);

#endif
