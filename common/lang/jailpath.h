/*
 * The paths every jailed program sees. Language files name them (the
 * {box} placeholder, absolute paths under the job directory), the judge
 * writes into them and both jail drivers mount them; they are defined
 * once, here, below everything that uses them.
 */
#ifndef GOBOXD_JAILPATH_H
#define GOBOXD_JAILPATH_H

/* The job directory, the programs' working directory: where Codize keeps
 * them too, so paths in messages and stack traces read the same. */
#define JAILPATH_BOX "/sandbox"
#define JAILPATH_TMP "/tmp"
/* An interactor's jail only: the test's input, the answer, and the
 * process management protocol's pipes (worker/sandbox/procctl.h), read-only. */
#define JAILPATH_CONTROL "/judge"

#endif
