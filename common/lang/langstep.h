/*
 * A language's build or run step read from its file (the keys of
 * docs/languages.md, "build" and "run"), and the checks of a command
 * template that Piston's own commands (langapi.c) share.
 */
#ifndef GOBOXD_LANGSTEP_H
#define GOBOXD_LANGSTEP_H

#include <stdbool.h>

#include "common/lang/lang.h"

struct lctx;
struct yamlutil_node;

/*
 * The step named step ("build" or "run") under root into s, its limits
 * under c->max and its templates checked against l (the artifact l has or
 * lacks). 0, or -EINVAL with the reason in c->err; what s holds then is
 * for langstep_clear.
 */
int langstep_parse(struct lctx *c, const struct yamlutil_node *root, const struct lang *l,
		   const char *step, struct lang_step *s);
/* Free what s holds and zero it. */
void langstep_clear(struct lang_step *s);
/* A cmd template at line: step ("build", "piston.run") names it in messages. */
int langstep_check_cmd(struct lctx *c, int line, const struct lang *l, const char *step,
		       const char *cmd);
/* The args templates of list node n; *has_flags: one is "{{flags}}". */
int langstep_check_args(struct lctx *c, const struct yamlutil_node *n, const struct lang *l,
			const char *step, char *const *args, bool *has_flags);

#endif
