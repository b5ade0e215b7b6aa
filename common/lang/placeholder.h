/*
 * Placeholder expansion for a language step's cmd, args and env.
 *
 *   {{source}}    the source file name, e.g. solution.cpp
 *   {{stem}}      the source file name without its last extension (Main)
 *   {{stem_class}} the stem as a JVM class name, Kotlin's way: my-file.kt
 *                 gives My_file (for a file's class of top-level functions)
 *   {{artifact}}  the artifact file name, e.g. solution or Main
 *   {{sources}}   every file of the request (whole argument only; 1..n args)
 *   {{flags}}     the checked flags (whole argument only; 0..n args)
 *   {{box}}       the job directory as seen inside the jail (/sandbox)
 *   {{tmp}}       the writable tmpfs inside the jail (/tmp)
 *   {{memory_mb}} the step's memory limit in MiB (for -Xmx and the like)
 *
 * A scalar placeholder may sit inside a larger argument ("-o{{artifact}}");
 * a list placeholder ({{sources}}, {{flags}}) must be the whole argument
 * and is allowed in args only, never in cmd or env. Names are exact: no
 * spaces inside the braces, no escape for a literal "{{". Expansion never
 * goes through a shell and never splits on spaces. docs/languages.md is the
 * reference.
 */
#ifndef GOBOXD_PLACEHOLDER_H
#define GOBOXD_PLACEHOLDER_H

#include <stdbool.h>
#include <stddef.h>

struct expand_ctx {
	const char *source;
	const char *artifact;       /* may be NULL if the language has none */
	const char *const *sources; /* NULL-terminated; NULL: just source */
	/* The request's checked flags, NULL-terminated. NULL or empty: the
	 * request gave none, and {{flags}} takes the step's default_flags. */
	const char *const *flags;
	/* What {{flags}} takes then: the step's default_flags (NULL: none). */
	const char *const *default_flags;
	const char *box;            /* NULL: JAILPATH_BOX */
	const char *tmp;            /* NULL: "/tmp" */
	unsigned long memory_mb;
};

/* Where a template string is used: list placeholders only fit in args. */
enum ph_where { PH_IN_CMD, PH_IN_ARG, PH_IN_ENV };

/*
 * Check one template string at load time. Returns 0, or -EINVAL with a reason
 * (unknown placeholder, unclosed braces, list placeholder not alone or not
 * allowed here).
 */
int placeholder_check(const char *tmpl, enum ph_where where, char *err, size_t errlen);

/* Whether a template uses {{name}} (name without braces). */
bool placeholder_uses(const char *tmpl, const char *name);

/*
 * Build argv from a step's templates (common/lang/langtab.h: cmd, then
 * args, NULL-terminated or NULL): each expanded, as a string vector
 * (common/strv.h; free with strv_free). Returns 0, or the negated errno of
 * placeholder_expand_one, or -EINVAL for {{sources}} without a source.
 */
int placeholder_expand_argv(const char *cmd, char *const *args, const struct expand_ctx *ctx,
			    char ***out);
/* Expand a step's "KEY=VALUE" env entries (NULL: none) the same way. */
int placeholder_expand_env(char *const *env, const struct expand_ctx *ctx, char ***out);
/*
 * Expand one template that holds scalar placeholders only. malloc'd string,
 * or NULL with errno EINVAL (bad template, list placeholder,
 * {{source}} or {{artifact}} asked for but NULL in ctx).
 */
char *placeholder_expand_one(const char *tmpl, const struct expand_ctx *ctx);

#endif
