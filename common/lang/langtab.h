/*
 * The language table: every languages/NAME.yaml loaded with libyaml into
 * an immutable table. docs/languages.md is the schema's reference.
 */
#ifndef GOBOXD_LANGTAB_H
#define GOBOXD_LANGTAB_H

#include <stddef.h>

#include "common/lang/lang.h"

struct langtab;

/*
 * Load every NAME.yaml under dir (byte order of names; names starting with
 * "." and other files are skipped). Validates: unknown keys, missing fields,
 * bad ids, duplicate ids or aliases, unknown or misplaced placeholders,
 * limits above max (a zero field of max, or max NULL, means no maximum).
 * Returns 0 and *out, or -EINVAL with "file:line: reason" in err. A directory
 * without any language is an error.
 */
int langtab_load(const char *dir, const struct limits *max,
		 struct langtab **out, char *err, size_t errlen);
void langtab_free(struct langtab *t);

size_t langtab_count(const struct langtab *t);
/*
 * Every language's extra read-only mounts, in one NULL-terminated array
 * of borrowed strings (duplicates kept): a jail is made before its job's
 * language is known. Free the array, not the strings.
 */
const char **langtab_mounts(const struct langtab *t);
const struct lang *langtab_at(const struct langtab *t, size_t i);
/* By id, then by alias. NULL when unknown. */
const struct lang *langtab_find(const struct langtab *t, const char *id);
/*
 * The entry class of src for a language with an entry section, as a
 * malloc'd string: the first pattern's match, else the default expanded
 * for the source file name (a match or a default that, with the suffix,
 * is not a plain file name does not count). NULL for other languages, or
 * when even the default gives no plain file name (a default built from
 * name, or name NULL where the default needs it).
 */
char *langtab_infer_entry(const struct lang *l, const char *src, const char *name);

/* By Codize runtime name (the language's codize.runtime). NULL when unknown. */
const struct lang *langtab_find_runtime(const struct langtab *t, const char *runtime);
/*
 * The Codize runtime names of the table, sorted byte-wise, each in double
 * quotes, joined by ", ": "\"bash\", \"go\"". Empty when none is served.
 * Returns the length written (truncated to fit n).
 */
size_t langtab_runtime_list(const struct langtab *t, char *buf, size_t n);

/* By Judge0 language id, its own or an older one's. NULL when unknown. */
const struct lang *langtab_find_judge0(const struct langtab *t, unsigned id);
/* By Piston runtime name or alias. NULL when unknown. */
const struct lang *langtab_find_piston(const struct langtab *t, const char *name);
/*
 * The command line a step runs: its own cmd and args, or what instead
 * (a language's piston.build or piston.run, for Piston's requests) gives
 * in their place, each where it gives one (instead NULL: none).
 */
void langtab_step_cmdline(const struct lang_step *step, const struct lang_piston_cmd *instead,
			  const char **cmd, char *const **args);

#endif
