#include "autoconf.h"

/*
 * What a language is called by the APIs goboxd speaks besides its own
 * (langapi.h): Codize's runtime, Judge0's ids and name, Piston's runtime,
 * version and aliases, and the commands Piston's scripts run where they
 * differ from the steps.
 */
#include "common/lang/langapi.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/lang/langfile.h"
#include "common/lang/langstep.h"
#include "common/lang/validate.h"
#include "common/strv.h"
#include "common/util.h"
#include "common/yamlutil.h"

/*
 * codize: { runtime: NAME, refused_files: [...] }. The runtime name is what
 * /v1/run requests send; only languages with one are served there.
 */
static int parse_codize(struct lctx *c, const struct yamlutil_node *root, struct lang *l)
{
	static const char *const keys[] = { "runtime", "refused_files", NULL };
	const struct yamlutil_node *v = yamlutil_get(root, "codize"), *p;

	if (!v)
		return 0;
	if (langfile_want_map(c, v, "codize") < 0 ||
	    langfile_check_keys(c, v, keys, "codize") < 0)
		return -EINVAL;
	if (langfile_required_str(c, v, "codize", "runtime", &l->codize_runtime, &p) < 0)
		return -EINVAL;
	if (!langfile_valid_id(l->codize_runtime))
		return langfile_fail(c, p->line, "codize.runtime: '%s' is not a valid id",
				     l->codize_runtime);
	if ((p = yamlutil_get(v, "refused_files"))) {
		if (langfile_strv(c, p, "codize.refused_files", &l->codize_refused) < 0)
			return -EINVAL;
		for (size_t i = 0; l->codize_refused[i]; i++) {
			const char *f = l->codize_refused[i];
			const char *why = validate_codize_filename(f, strlen(f));

			if (why)
				return langfile_fail(c, langfile_item_line(p, i),
						     "codize.refused_files: '%s': %s", f, why);
		}
	}
	return 0;
}

/* The highest Judge0 id a file may give: Judge0's own are below 200,
 * goboxd's own for languages Judge0 lacks start at 1001. */
#define JUDGE0_ID_MAX 65535

/* A list of Judge0 ids under judge0.KEY: 0-terminated in *out, always
 * allocated (empty when the key is absent). */
static int parse_judge0_ids(struct lctx *c, const struct yamlutil_node *v, const char *key,
			    unsigned **out)
{
	const struct yamlutil_node *p = yamlutil_get(v, key);
	char what[32];
	uint64_t id;

	snprintf(what, sizeof(what), "judge0.%s", key);
	*out = xcalloc(p && p->type == YAMLUTIL_SEQ ? p->n + 1 : 1, sizeof(unsigned));
	if (!p || langfile_is_empty(p))
		return 0;
	if (p->type != YAMLUTIL_SEQ)
		return langfile_fail(c, p->line, "%s: must be a list of ids", what);
	for (size_t i = 0; i < p->n; i++) {
		if (yamlutil_u64(p->items[i], c->file, what, 1, JUDGE0_ID_MAX, &id, c->err,
				 c->errlen) < 0)
			return -EINVAL;
		(*out)[i] = (unsigned)id;
	}
	return 0;
}

/* judge0: { id: N, name: "Lang (x.y.z)", project: BOOL, listed_ids: [N...],
 *          older_ids: [N...] } */
static int parse_judge0(struct lctx *c, const struct yamlutil_node *root, struct lang *l)
{
	static const char *const keys[] = { "id", "name", "project", "listed_ids", "older_ids",
					    NULL };
	const struct yamlutil_node *v = yamlutil_get(root, "judge0"), *p;
	uint64_t id;

	if (!v)
		return 0;
	if (langfile_want_map(c, v, "judge0") < 0 ||
	    langfile_check_keys(c, v, keys, "judge0") < 0)
		return -EINVAL;
	p = yamlutil_get(v, "id");
	if (!p)
		return langfile_fail(c, v->line, "judge0: missing required key 'id'");
	if (yamlutil_u64(p, c->file, "judge0.id", 1, JUDGE0_ID_MAX, &id, c->err, c->errlen) < 0)
		return -EINVAL;
	l->judge0_id = (unsigned)id;
	if (langfile_required_str(c, v, "judge0", "name", &l->judge0_name, &p) < 0)
		return -EINVAL;
	p = yamlutil_get(v, "project");
	if (p && yamlutil_bool(p, c->file, "judge0.project", &l->judge0_project, c->err,
			       c->errlen) < 0)
		return -EINVAL;
	if (parse_judge0_ids(c, v, "listed_ids", &l->judge0_listed) < 0 ||
	    parse_judge0_ids(c, v, "older_ids", &l->judge0_older) < 0)
		return -EINVAL;
	return 0;
}

/* x.y.z, each part digits: Piston's clients match versions as semver. */
static bool semver_plain(const char *s)
{
	for (int part = 0; part < 3; part++) {
		if (*s < '0' || *s > '9')
			return false;
		while (*s >= '0' && *s <= '9')
			s++;
		if (part < 2 && *s++ != '.')
			return false;
	}
	return *s == '\0';
}

/* A Piston name: an id, or one with '#' ("c#", Piston's own). */
static bool piston_name(const char *s)
{
	char *t = xstrdup(s);
	bool ok;

	for (char *p = t; *p; p++)
		if (*p == '#')
			*p = '_';
	ok = langfile_valid_id(t);
	free(t);
	return ok;
}

/* ".c", ".f90": a dot and a few [A-Za-z0-9_+-]. */
static bool valid_extension(const char *s)
{
	size_t n = strlen(s);

	if (n < 2 || n > 16 || s[0] != '.')
		return false;
	for (size_t i = 1; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("_+-", s[i]))
			return false;
	return true;
}

/* piston.extension and piston.compiled, once the steps are known. */
static int parse_piston_build_keys(struct lctx *c, const struct yamlutil_node *v, struct lang *l)
{
	const struct yamlutil_node *p;

	l->piston_compiled = l->has_build;
	if ((p = yamlutil_get(v, "extension"))) {
		if (langfile_str(c, p, "piston.extension", &l->piston_extension) < 0)
			return -EINVAL;
		if (!valid_extension(l->piston_extension))
			return langfile_fail(c, p->line,
					     "piston.extension: '%s' is not a dot and up to 15 of "
					     "[A-Za-z0-9_+-]", l->piston_extension);
	}
	if ((p = yamlutil_get(v, "compiled"))) {
		if (yamlutil_bool(p, c->file, "piston.compiled", &l->piston_compiled, c->err,
				  c->errlen) < 0)
			return -EINVAL;
		if (l->piston_compiled && !l->has_build)
			return langfile_fail(c, p->line,
					     "piston.compiled: true, but the language has no build");
	}
	return 0;
}

/* piston.build or piston.run: { cmd?, args? } for the step of that name. */
static int parse_piston_cmd(struct lctx *c, const struct yamlutil_node *v, const struct lang *l,
			    const char *step, struct lang_piston_cmd *out)
{
	static const char *const keys[] = { "cmd", "args", NULL };
	const struct yamlutil_node *n = yamlutil_get(v, step), *p;
	char key[32], sub[48];
	bool has_flags;

	if (!n)
		return 0;
	snprintf(key, sizeof(key), "piston.%s", step);
	if (langfile_want_map(c, n, key) < 0 || langfile_check_keys(c, n, keys, key) < 0)
		return -EINVAL;
	if (!strcmp(step, "build") && !l->has_build)
		return langfile_fail(c, n->line, "piston.build: the language has no build");
	if (!n->n)
		return langfile_fail(c, n->line, "%s: give cmd, args or both", key);
	snprintf(sub, sizeof(sub), "%s.cmd", key);
	if ((p = yamlutil_get(n, "cmd")) &&
	    (langfile_str(c, p, sub, &out->cmd) < 0 ||
	     langstep_check_cmd(c, p->line, l, key, out->cmd) < 0))
		return -EINVAL;
	snprintf(sub, sizeof(sub), "%s.args", key);
	if ((p = yamlutil_get(n, "args")) && langfile_strv(c, p, sub, &out->args) < 0)
		return -EINVAL;
	/* an empty list is "no arguments", never "the step's" */
	if (p && !out->args)
		out->args = strv_new();
	if (p && langstep_check_args(c, p, l, key, out->args, &has_flags) < 0)
		return -EINVAL;
	return 0;
}

/*
 * How Piston's scripts differ from the steps: read after the steps,
 * which they refer to.
 */
int langapi_parse_piston_steps(struct lctx *c, const struct yamlutil_node *root, struct lang *l)
{
	const struct yamlutil_node *v = yamlutil_get(root, "piston");

	if (!v)
		return 0;
	if (parse_piston_build_keys(c, v, l) < 0 ||
	    parse_piston_cmd(c, v, l, "build", &l->piston_build) < 0 ||
	    parse_piston_cmd(c, v, l, "run", &l->piston_run) < 0)
		return -EINVAL;
	return 0;
}

/*
 * piston: { runtime: NAME, version: "x.y.z", aliases: [...], extension,
 * compiled, build, run } (the last four in langapi_parse_piston_steps)
 */
static int parse_piston(struct lctx *c, const struct yamlutil_node *root, struct lang *l)
{
	static const char *const keys[] = { "runtime", "version", "aliases", "extension",
					    "compiled", "build", "run", NULL };
	const struct yamlutil_node *v = yamlutil_get(root, "piston"), *p;

	if (!v)
		return 0;
	if (langfile_want_map(c, v, "piston") < 0 ||
	    langfile_check_keys(c, v, keys, "piston") < 0)
		return -EINVAL;
	if (langfile_required_str(c, v, "piston", "runtime", &l->piston_runtime, &p) < 0)
		return -EINVAL;
	if (!piston_name(l->piston_runtime))
		return langfile_fail(c, p->line, "piston.runtime: '%s' is not a valid name",
				     l->piston_runtime);
	if (langfile_required_str(c, v, "piston", "version", &l->piston_version, &p) < 0)
		return -EINVAL;
	if (!semver_plain(l->piston_version))
		return langfile_fail(c, p->line, "piston.version: '%s' is not x.y.z",
				     l->piston_version);
	if ((p = yamlutil_get(v, "aliases"))) {
		if (langfile_strv(c, p, "piston.aliases", &l->piston_aliases) < 0)
			return -EINVAL;
		for (size_t i = 0; l->piston_aliases[i]; i++)
			if (!piston_name(l->piston_aliases[i]))
				return langfile_fail(c, langfile_item_line(p, i),
						     "piston.aliases: '%s' is not a valid name",
						     l->piston_aliases[i]);
	}
	return 0;
}

int langapi_parse(struct lctx *c, const struct yamlutil_node *root, struct lang *l)
{
	if (parse_codize(c, root, l) < 0 || parse_judge0(c, root, l) < 0 ||
	    parse_piston(c, root, l) < 0)
		return -EINVAL;
	return 0;
}
