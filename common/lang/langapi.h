/*
 * A language's sections for the APIs goboxd speaks besides its own.
 * Codize, Judge0 and Piston (docs/languages.md, "codize", "judge0" and
 * "piston") each know it by names or ids of their own, and Piston's
 * scripts may run commands of their own. That no two languages share a
 * name is the table's rule (langtab.c).
 */
#ifndef GOBOXD_LANGAPI_H
#define GOBOXD_LANGAPI_H

#include "common/lang/lang.h"

struct lctx;
struct yamlutil_node;

/*
 * The sections codize, judge0 and piston of the file whose top level is
 * root into l, but Piston's commands. 0, or -EINVAL with the reason in
 * c->err; what l holds then is its owner's to free.
 */
int langapi_parse(struct lctx *c, const struct yamlutil_node *root, struct lang *l);
/*
 * How Piston's scripts differ from the steps (piston's extension,
 * compiled, build and run), once l's steps are read.
 */
int langapi_parse_piston_steps(struct lctx *c, const struct yamlutil_node *root, struct lang *l);

#endif
