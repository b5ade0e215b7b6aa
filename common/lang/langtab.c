#include "autoconf.h"

#include "common/lang/langtab.h"

#include "common/lang/entry.h"
#include "common/lang/langapi.h"
#include "common/lang/langfile.h"
#include "common/lang/langstep.h"
#include "common/lang/placeholder.h"
#include "common/strv.h"
#include "common/util.h"
#include "common/lang/validate.h"
#include "common/yamlutil.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A directory with more files than this is a mistake, not a language set. */
#define LANG_MAX_FILES 1024

struct langtab {
	struct lang *langs;
	size_t n;
};

/* The first n compiled pairs of entry patterns, and their arrays. */
static void entry_res_free(struct lang *l, size_t n)
{
	for (size_t i = 0; i < n; i++)
		entry_free(&l->entry_res[i], &l->entry_locate[i]);
	free(l->entry_res);
	free(l->entry_locate);
	l->entry_res = l->entry_locate = NULL;
}

static void lang_clear(struct lang *l)
{
	free(l->id);
	free(l->name);
	free(l->version_hint);
	free(l->source_filename);
	free(l->source_default);
	free(l->artifact);
	langstep_clear(&l->build);
	langstep_clear(&l->run);
	strv_free(l->aliases);
	strv_free(l->probe);
	strv_free(l->ro_mounts);
	entry_res_free(l, l->entry_res ? strv_len(l->entry_patterns) : 0);
	strv_free(l->entry_patterns);
	free(l->entry_default);
	free(l->entry_suffix);
	free(l->codize_runtime);
	strv_free(l->codize_refused);
	free(l->judge0_name);
	free(l->judge0_older);
	free(l->judge0_listed);
	free(l->piston_runtime);
	free(l->piston_version);
	strv_free(l->piston_aliases);
	free(l->piston_extension);
	free(l->piston_build.cmd);
	strv_free(l->piston_build.args);
	free(l->piston_run.cmd);
	strv_free(l->piston_run.args);
	strv_free(l->debian_packages);
	strv_free(l->npm_packages);
	free(l->file);
	memset(l, 0, sizeof(*l));
}

/* The rule of a /run file name, so that what a language names itself
 * could also have come from a request. */
static bool plain_file_name(const char *s)
{
	char bad;

	return validate_filename_check(&validate_filename_native, s, strlen(s), &bad) ==
	       VALIDATE_FILENAME_OK;
}

/* An entry's source file name, the entry and then the suffix: a plain one. */
static bool plain_with_suffix(const char *entry, const char *suffix)
{
	char file[FILENAME_MAX_LEN + 64];

	snprintf(file, sizeof(file), "%s%s", entry, suffix);
	return plain_file_name(file);
}

/*
 * Mounts end up on the jail's command line, where ':' and ',' separate
 * fields: only plain, normalised absolute paths pass.
 */
static const char *mount_problem(const char *p)
{
	size_t len = strlen(p);

	if (p[0] != '/')
		return "must be an absolute path";
	if (!strcmp(p, "/"))
		return "must not be the host's root";
	if (len > 1024)
		return "is too long";
	for (const char *q = p; *q; q++) {
		if (*q == ':' || *q == ',' || (unsigned char)*q <= ' ' || *q == 0x7f)
			return "must not contain ':', ',', blanks or control characters";
	}
	if (strstr(p, "//") || p[len - 1] == '/')
		return "must not contain '//' or end with '/'";
	/* the tails are compared only where the path is long enough: "/e" has
	 * no three last bytes */
	if (strstr(p, "/../") || strstr(p, "/./") || (len >= 3 && !strcmp(p + len - 3, "/..")) ||
	    !strcmp(p + len - 2, "/."))
		return "must not contain '.' or '..' components";
	return NULL;
}

/* Package names reach the set-up script's apt-get and npm command lines. */
static bool valid_package(const char *s, bool npm)
{
	const char *ok = npm ? "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@/._~^=<>-"
			     : "abcdefghijklmnopqrstuvwxyz0123456789+.-=:~ABCDEFGHIJKLMNOPQRSTUVWXYZ";

	if (!*s || *s == '-' || strlen(s) > 214)
		return false;
	if (!npm && !((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9')))
		return false;
	return strspn(s, ok) == strlen(s);
}

/* A list the file left out is empty: no vector of a loaded language is NULL. */
static void fill_empty(char ***v)
{
	if (!*v)
		*v = strv_new();
}

static int parse_name_fields(struct lctx *c, const struct yamlutil_node *root, struct lang *l)
{
	const struct yamlutil_node *v;

	if (langfile_required_str(c, root, NULL, "id", &l->id, &v) < 0)
		return -EINVAL;
	if (!langfile_valid_id(l->id))
		return langfile_fail(c, v->line,
				     "id: '%s' is not a valid id ([a-z0-9][a-z0-9_+.-]*, at most %d characters)",
				     l->id, LANG_ID_MAX);
	if (langfile_required_str(c, root, NULL, "name", &l->name, &v) < 0)
		return -EINVAL;
	if (!l->name[0])
		return langfile_fail(c, v->line, "name: must not be empty");
	if ((v = yamlutil_get(root, "version")) &&
	    langfile_str(c, v, "version", &l->version_hint) < 0)
		return -EINVAL;
	if ((v = yamlutil_get(root, "aliases"))) {
		if (langfile_strv(c, v, "aliases", &l->aliases) < 0)
			return -EINVAL;
		for (size_t i = 0; l->aliases[i]; i++)
			if (!langfile_valid_id(l->aliases[i]))
				return langfile_fail(c, langfile_item_line(v, i),
						     "aliases: '%s' is not a valid id",
						     l->aliases[i]);
	}
	return 0;
}

static int parse_file_fields(struct lctx *c, const struct yamlutil_node *root, struct lang *l)
{
	const struct yamlutil_node *v;

	if (langfile_required_str(c, root, NULL, "source_filename", &l->source_filename, &v) < 0)
		return -EINVAL;
	if (!strcmp(l->source_filename, LANG_FROM_REQUEST)) {
		free(l->source_filename);
		l->source_filename = NULL;
		l->source_from_request = true;
	} else if (!plain_file_name(l->source_filename)) {
		return langfile_fail(c, v->line,
				     "source_filename: '%s' is not a plain file name ([A-Za-z0-9_.+-], not starting with '.', '-' or '+')",
				     l->source_filename);
	}
	if ((v = yamlutil_get(root, "source_filename_default"))) {
		if (!l->source_from_request)
			return langfile_fail(c, v->line,
					     "source_filename_default: only with source_filename: "
					     LANG_FROM_REQUEST " (a fixed name needs no default)");
		if (langfile_str(c, v, "source_filename_default", &l->source_default) < 0)
			return -EINVAL;
		if (!plain_file_name(l->source_default))
			return langfile_fail(c, v->line,
					     "source_filename_default: '%s' is not a plain file name ([A-Za-z0-9_.+-], not starting with '.', '-' or '+')",
					     l->source_default);
	}
	if ((v = yamlutil_get(root, "artifact"))) {
		if (langfile_str(c, v, "artifact", &l->artifact) < 0)
			return -EINVAL;
		if (!strcmp(l->artifact, LANG_FROM_REQUEST))
			l->artifact_from_request = true;
		else if (!plain_file_name(l->artifact))
			return langfile_fail(c, v->line,
					     "artifact: '%s' is not a plain file name ([A-Za-z0-9_.+-], not starting with '.', '-' or '+')",
					     l->artifact);
	}
	return 0;
}

static int parse_host_fields(struct lctx *c, const struct yamlutil_node *root, struct lang *l)
{
	static const char *const ikeys[] = { "debian", "npm", NULL };
	const struct yamlutil_node *v, *p;

	if ((v = yamlutil_get(root, "tmp_exec")) &&
	    yamlutil_bool(v, c->file, "tmp_exec", &l->tmp_exec, c->err, c->errlen) < 0)
		return -EINVAL;
	if ((v = yamlutil_get(root, "network")) &&
	    yamlutil_bool(v, c->file, "network", &l->network, c->err, c->errlen) < 0)
		return -EINVAL;
	if ((v = yamlutil_get(root, "mounts"))) {
		if (langfile_strv(c, v, "mounts", &l->ro_mounts) < 0)
			return -EINVAL;
		for (size_t i = 0; l->ro_mounts[i]; i++) {
			const char *why = mount_problem(l->ro_mounts[i]);

			if (why)
				return langfile_fail(c, langfile_item_line(v, i), "mounts: '%s' %s",
						     l->ro_mounts[i], why);
		}
	}
	if ((v = yamlutil_get(root, "install")) && !langfile_is_empty(v)) {
		if (langfile_want_map(c, v, "install") < 0 ||
		    langfile_check_keys(c, v, ikeys, "install") < 0)
			return -EINVAL;
		if ((p = yamlutil_get(v, "debian")) &&
		    langfile_strv(c, p, "install.debian", &l->debian_packages) < 0)
			return -EINVAL;
		for (size_t i = 0; l->debian_packages && l->debian_packages[i]; i++)
			if (!valid_package(l->debian_packages[i], false))
				return langfile_fail(c, langfile_item_line(p, i),
						     "install.debian: '%s' is not a Debian package name",
						     l->debian_packages[i]);
		if ((p = yamlutil_get(v, "npm")) &&
		    langfile_strv(c, p, "install.npm", &l->npm_packages) < 0)
			return -EINVAL;
		for (size_t i = 0; l->npm_packages && l->npm_packages[i]; i++)
			if (!valid_package(l->npm_packages[i], true))
				return langfile_fail(c, langfile_item_line(p, i),
						     "install.npm: '%s' is not an npm package name",
						     l->npm_packages[i]);
	}
	if (!(v = yamlutil_get(root, "probe")))
		return langfile_fail(c, root->line, "missing required key 'probe'");
	if (langfile_strv(c, v, "probe", &l->probe) < 0)
		return -EINVAL;
	if (!l->probe[0])
		return langfile_fail(c, v->line, "probe: must name at least the command to run");
	if (l->probe[0][0] != '/')
		return langfile_fail(c, langfile_item_line(v, 0),
				     "probe: '%s' must be an absolute path", l->probe[0]);
	for (size_t i = 0; l->probe[i]; i++)
		if (strstr(l->probe[i], "{{"))
			return langfile_fail(c, langfile_item_line(v, i),
					     "probe: placeholders are not expanded here");
	return 0;
}

static int compile_entry_patterns(struct lctx *c, const struct yamlutil_node *p, struct lang *l)
{
	size_t n = strv_len(l->entry_patterns);

	l->entry_res = xcalloc(n, sizeof(*l->entry_res));
	l->entry_locate = xcalloc(n, sizeof(*l->entry_locate));
	for (size_t i = 0; i < n; i++) {
		char why[400];

		/* on failure the pairs compiled before i are freed, and no more */
		if (entry_compile(l->entry_patterns[i], &l->entry_res[i], &l->entry_locate[i], why,
				  sizeof(why)) < 0) {
			entry_res_free(l, i);
			return langfile_fail(c, langfile_item_line(p, i), "entry.patterns: %s",
					     why);
		}
	}
	return 0;
}

/*
 * entry.default, plus the suffix, must give a plain file name. It may be
 * built from the source file name ({{stem}}, {{stem_class}}: Kotlin's
 * MainKt for Main.kt) unless the source file is named after the entry,
 * which would be circular; it is checked with the name a request that
 * names nothing gets.
 */
static int check_entry_default(struct lctx *c, const struct yamlutil_node *p, struct lang *l)
{
	const char *d = l->entry_default;
	const char *src = l->source_from_request ? l->source_default : l->source_filename;
	struct expand_ctx ctx = { .source = src };
	char why[256], name[FILENAME_MAX_LEN + 64];
	const char *q = d;
	bool ok;
	char *e;

	if (placeholder_check(d, PH_IN_ENV, why, sizeof(why)) < 0)
		return langfile_fail(c, p->line, "entry.default: %s", why);
	/* every "{{" left is a valid placeholder; only these two mean anything here */
	while ((q = strstr(q, "{{"))) {
		q += 2;
		if (strncmp(q, "stem}}", 6) != 0 && strncmp(q, "stem_class}}", 12) != 0)
			return langfile_fail(c, p->line,
					     "entry.default: only {{stem}} and {{stem_class}} "
					     "are expanded here");
	}
	if (strstr(d, "{{") && !src)
		return langfile_fail(c, p->line,
				     "entry.default: {{stem}} and {{stem_class}} need the source's name, and "
				     "this language names its source after the entry (give "
				     "source_filename_default)");
	e = placeholder_expand_one(d, &ctx);
	if (!e)
		return langfile_fail(c, p->line, "entry.default: cannot expand '%s'", d);
	snprintf(name, sizeof(name), "%s%s", e, l->entry_suffix);
	ok = plain_file_name(e) && plain_file_name(name);
	free(e);
	if (!ok)
		return langfile_fail(c, p->line, "entry: '%s' is not a plain file name", name);
	return 0;
}

/* entry: { patterns: [...], default: NAME, suffix: .EXT } */
static int parse_entry(struct lctx *c, const struct yamlutil_node *root, struct lang *l)
{
	static const char *const keys[] = { "patterns", "default", "suffix", NULL };
	const struct yamlutil_node *v = yamlutil_get(root, "entry"), *p, *dn;

	if (!v)
		return 0;
	if (langfile_want_map(c, v, "entry") < 0 ||
	    langfile_check_keys(c, v, keys, "entry") < 0)
		return -EINVAL;
	if (!(dn = yamlutil_get(v, "default")))
		return langfile_fail(c, v->line, "entry: missing required key 'default'");
	if (langfile_str(c, dn, "entry.default", &l->entry_default) < 0)
		return -EINVAL;
	if ((p = yamlutil_get(v, "suffix"))) {
		if (langfile_str(c, p, "entry.suffix", &l->entry_suffix) < 0)
			return -EINVAL;
	} else {
		l->entry_suffix = xstrdup("");
	}
	if (check_entry_default(c, dn, l) < 0)
		return -EINVAL;
	if (!(p = yamlutil_get(v, "patterns")))
		return langfile_fail(c, v->line, "entry: missing required key 'patterns'");
	if (langfile_strv(c, p, "entry.patterns", &l->entry_patterns) < 0)
		return -EINVAL;
	if (!l->entry_patterns[0])
		return langfile_fail(c, p->line, "entry.patterns: at least one pattern");
	return compile_entry_patterns(c, p, l);
}

char *langtab_infer_entry(const struct lang *l, const char *src, const char *name)
{
	struct expand_ctx ctx = { .source = name };
	char *e;

	if (!l->entry_res)
		return NULL;
	for (size_t i = 0; src && l->entry_patterns[i]; i++) {
		e = entry_find(&l->entry_res[i], &l->entry_locate[i], src);
		if (e && plain_with_suffix(e, l->entry_suffix))
			return e;
		free(e);
	}
	e = placeholder_expand_one(l->entry_default, &ctx);
	if (!e)
		return NULL;
	if (!plain_file_name(e) || !plain_with_suffix(e, l->entry_suffix)) {
		free(e);
		return NULL;
	}
	return e;
}

static int parse_lang(struct lctx *c, const struct yamlutil_node *root, struct lang *l)
{
	static const char *const keys[] = { "id", "name", "version", "aliases",
					    "source_filename", "source_filename_default", "artifact",
					    "mounts", "tmp_exec", "network",
					    "install", "build", "run", "probe", "codize", "entry",
					    "judge0", "piston", NULL };

	if (root->type != YAMLUTIL_MAP)
		return langfile_fail(c, root->line,
				     "the top level must be a mapping (one language)");
	if (!root->n)
		return langfile_fail(c, root->line, "empty file: no language defined");
	if (langfile_check_keys(c, root, keys, NULL) < 0)
		return -EINVAL;
	l->line = root->line;
	if (parse_name_fields(c, root, l) < 0 || parse_file_fields(c, root, l) < 0 ||
	    parse_host_fields(c, root, l) < 0 || langapi_parse(c, root, l) < 0 ||
	    parse_entry(c, root, l) < 0)
		return -EINVAL;
	if (yamlutil_get(root, "build")) {
		if (langstep_parse(c, root, l, "build", &l->build) < 0)
			return -EINVAL;
		l->has_build = true;
	}
	if (!yamlutil_get(root, "run"))
		return langfile_fail(c, root->line, "missing required key 'run'");
	if (langstep_parse(c, root, l, "run", &l->run) < 0 ||
	    langapi_parse_piston_steps(c, root, l) < 0)
		return -EINVAL;
	fill_empty(&l->build.args);
	fill_empty(&l->build.env);
	fill_empty(&l->build.flag_allow);
	fill_empty(&l->build.default_flags);
	fill_empty(&l->run.args);
	fill_empty(&l->run.env);
	fill_empty(&l->run.flag_allow);
	fill_empty(&l->run.default_flags);
	fill_empty(&l->aliases);
	fill_empty(&l->ro_mounts);
	fill_empty(&l->codize_refused);
	fill_empty(&l->piston_aliases);
	fill_empty(&l->entry_patterns);
	fill_empty(&l->debian_packages);
	fill_empty(&l->npm_packages);
	return 0;
}

/* The owner of name among the languages loaded so far, or NULL. */
static const struct lang *name_owner(const struct langtab *t, const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < t->n; i++) {
		const struct lang *o = &t->langs[i];

		if (o->id && !strcmp(o->id, name))
			return o;
		if (strv_contains(o->aliases, name))
			return o;
	}
	return NULL;
}

/*
 * Judge0 ids (a language's own and its older ones) and Piston names
 * (runtimes and aliases) are two more name spaces, each one language's.
 */
static int check_unique_api_names(struct lctx *c, const struct langtab *t, const struct lang *l,
				  const struct yamlutil_node *root)
{
	const struct yamlutil_node *j = yamlutil_get(root, "judge0");
	const struct yamlutil_node *p = yamlutil_get(root, "piston");
	const struct lang *o;

	if (l->judge0_id) {
		size_t n = 1;
		unsigned *ids;

		for (size_t k = 0; l->judge0_listed[k]; k++)
			n++;
		for (size_t k = 0; l->judge0_older[k]; k++)
			n++;
		ids = xcalloc(n, sizeof(unsigned));
		n = 0;
		ids[n++] = l->judge0_id;
		for (size_t k = 0; l->judge0_listed[k]; k++)
			ids[n++] = l->judge0_listed[k];
		for (size_t k = 0; l->judge0_older[k]; k++)
			ids[n++] = l->judge0_older[k];
		for (size_t i = 0; i < n; i++) {
			int rc = 0;

			o = langtab_find_judge0(t, ids[i]);
			if (o)
				rc = langfile_fail(c, j->line,
						   "judge0 id %u is already used by language '%s' (%s:%d)",
						   ids[i], o->id, o->file, o->line);
			for (size_t k = i + 1; k < n && !rc; k++)
				if (ids[k] == ids[i])
					rc = langfile_fail(c, j->line,
							   "judge0 id %u is listed twice", ids[i]);
			if (rc) {
				free(ids);
				return rc;
			}
		}
		free(ids);
	}
	for (size_t i = 0; l->piston_runtime && (i == 0 || l->piston_aliases[i - 1]); i++) {
		const char *name = i == 0 ? l->piston_runtime : l->piston_aliases[i - 1];

		o = langtab_find_piston(t, name);
		if (o)
			return langfile_fail(c, p->line,
					     "piston name '%s' is already used by language '%s' (%s:%d)",
					     name, o->id, o->file, o->line);
		/* Piston lists some runtimes among their own aliases (clojure) */
		for (size_t k = 0; i > 0 && l->piston_aliases[k]; k++)
			if (!strcmp(l->piston_aliases[k], name) && k + 1 != i)
				return langfile_fail(c, p->line, "piston name '%s' is listed twice",
						     name);
	}
	return 0;
}

/* Ids and aliases share one name space: a request's "language" may be any. */
static int check_unique(struct lctx *c, const struct langtab *t, const struct lang *l,
			const struct yamlutil_node *root)
{
	const struct yamlutil_node *al = yamlutil_get(root, "aliases");
	const struct lang *o = name_owner(t, l->id);

	if (o)
		return langfile_fail(c, yamlutil_get(root, "id")->line,
				     "id '%s' is already used by language '%s' (%s:%d)", l->id,
				     o->id, o->file, o->line);
	for (size_t i = 0; l->aliases && l->aliases[i]; i++) {
		const char *a = l->aliases[i];

		o = name_owner(t, a);
		if (o)
			return langfile_fail(c, langfile_item_line(al, i),
					     "alias '%s' is already used by language '%s' (%s:%d)",
					     a, o->id, o->file, o->line);
		if (!strcmp(a, l->id))
			return langfile_fail(c, langfile_item_line(al, i),
					     "alias '%s' repeats the id", a);
		for (size_t k = 0; k < i; k++)
			if (!strcmp(a, l->aliases[k]))
				return langfile_fail(c, langfile_item_line(al, i),
						     "alias '%s' is listed twice", a);
	}
	/* Codize runtime names are a name space of their own. */
	o = langtab_find_runtime(t, l->codize_runtime);
	if (o)
		return langfile_fail(c, yamlutil_get(yamlutil_get(root, "codize"), "runtime")->line,
				     "codize runtime '%s' is already served by language '%s' (%s:%d)",
				     l->codize_runtime, o->id, o->file, o->line);
	return check_unique_api_names(c, t, l, root);
}

static int load_one(struct langtab *t, const char *path, const struct limits *max, char *err,
		    size_t errlen)
{
	struct lctx c = { .file = path, .max = max, .err = err, .errlen = errlen };
	struct yamlutil_node *root = NULL;
	struct lang l = { 0 };
	int rc = -EINVAL;

	if (yamlutil_load_file(path, &root, err, errlen) < 0)
		return -EINVAL;
	l.file = xstrdup(path);
	if (parse_lang(&c, root, &l) < 0 || check_unique(&c, t, &l, root) < 0)
		goto out;
	t->langs = xreallocarray(t->langs, t->n + 1, sizeof(*t->langs));
	t->langs[t->n++] = l;
	memset(&l, 0, sizeof(l));
	rc = 0;
out:
	lang_clear(&l);
	yamlutil_free(root);
	return rc;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool is_lang_file(const char *name)
{
	size_t len = strlen(name);

	return name[0] != '.' && len > 5 && !strcmp(name + len - 5, ".yaml");
}

/* The language file names of dir, sorted byte-wise so that the order does
 * not depend on the locale. */
static int list_dir(const char *dir, char ***out, size_t *count, char *err, size_t errlen)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **names = NULL;
	size_t n = 0;
	int rc = -EINVAL;

	if (!d) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", dir, strerror(-rc));
		return rc;
	}
	while ((errno = 0, de = readdir(d))) {
		if (!is_lang_file(de->d_name))
			continue;
		if (n >= LANG_MAX_FILES) {
			snprintf(err, errlen, "%s: more than %d language files", dir, LANG_MAX_FILES);
			goto out;
		}
		names = xreallocarray(names, n + 2, sizeof(*names));
		names[n] = xstrdup(de->d_name);
		names[++n] = NULL;
	}
	if (errno) {
		snprintf(err, errlen, "%s: readdir: %s", dir, strerror(errno));
		goto out;
	}
	if (!n) {
		snprintf(err, errlen, "%s: no language files (*.yaml)", dir);
		goto out;
	}
	qsort(names, n, sizeof(*names), cmp_names);
	*out = names;
	*count = n;
	names = NULL;
	rc = 0;
out:
	strv_free(names);
	closedir(d);
	return rc;
}

int langtab_load(const char *dir, const struct limits *max, struct langtab **out, char *err,
		 size_t errlen)
{
	struct langtab *t;
	char **names = NULL, *path = NULL;
	size_t n = 0;
	int rc = -EINVAL;

	t = xcalloc(1, sizeof(*t));
	if ((rc = list_dir(dir, &names, &n, err, errlen)) < 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		free(path);
		path = xasprintf("%s/%s", dir, names[i]);
		if ((rc = load_one(t, path, max, err, errlen)) < 0)
			goto out;
	}
	*out = t;
	t = NULL;
	rc = 0;
out:
	free(path);
	strv_free(names);
	langtab_free(t);
	return rc;
}

void langtab_free(struct langtab *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++)
		lang_clear(&t->langs[i]);
	free(t->langs);
	free(t);
}

size_t langtab_count(const struct langtab *t)
{
	return t ? t->n : 0;
}

const char **langtab_mounts(const struct langtab *t)
{
	size_t n = 0, k = 0;
	const char **v;

	for (size_t i = 0; i < langtab_count(t); i++)
		n += strv_len(langtab_at(t, i)->ro_mounts);
	v = xcalloc(n + 1, sizeof(*v));
	for (size_t i = 0; i < langtab_count(t); i++) {
		char *const *m = langtab_at(t, i)->ro_mounts;

		for (size_t j = 0; m[j]; j++)
			v[k++] = m[j];
	}
	return v;
}

const struct lang *langtab_at(const struct langtab *t, size_t i)
{
	return t && i < t->n ? &t->langs[i] : NULL;
}

const struct lang *langtab_find(const struct langtab *t, const char *id)
{
	if (!t || !id)
		return NULL;
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->langs[i].id, id))
			return &t->langs[i];
	for (size_t i = 0; i < t->n; i++)
		if (strv_contains(t->langs[i].aliases, id))
			return &t->langs[i];
	return NULL;
}

const struct lang *langtab_find_runtime(const struct langtab *t, const char *runtime)
{
	if (!t || !runtime)
		return NULL;
	for (size_t i = 0; i < t->n; i++)
		if (t->langs[i].codize_runtime && !strcmp(t->langs[i].codize_runtime, runtime))
			return &t->langs[i];
	return NULL;
}

size_t langtab_runtime_list(const struct langtab *t, char *buf, size_t n)
{
	const char **names;
	size_t k = 0, len = 0;

	if (n)
		buf[0] = '\0';
	if (!t || !n)
		return 0;
	names = xcalloc(t->n + 1, sizeof(*names));
	for (size_t i = 0; i < t->n; i++)
		if (t->langs[i].codize_runtime)
			names[k++] = t->langs[i].codize_runtime;
	qsort(names, k, sizeof(*names), cmp_names);
	for (size_t i = 0; i < k && len < n - 1; i++) {
		int w = snprintf(buf + len, n - len, "%s\"%s\"", i ? ", " : "", names[i]);

		if (w < 0)
			break;
		len += (size_t)w < n - len ? (size_t)w : n - 1 - len;
	}
	free(names);
	return len;
}

const struct lang *langtab_find_judge0(const struct langtab *t, unsigned id)
{
	if (!t || !id)
		return NULL;
	for (size_t i = 0; i < t->n; i++) {
		const struct lang *l = &t->langs[i];

		if (l->judge0_id == id)
			return l;
		for (size_t k = 0; l->judge0_listed && l->judge0_listed[k]; k++)
			if (l->judge0_listed[k] == id)
				return l;
		for (size_t k = 0; l->judge0_older && l->judge0_older[k]; k++)
			if (l->judge0_older[k] == id)
				return l;
	}
	return NULL;
}

const struct lang *langtab_find_piston(const struct langtab *t, const char *name)
{
	if (!t || !name)
		return NULL;
	for (size_t i = 0; i < t->n; i++)
		if (t->langs[i].piston_runtime && !strcmp(t->langs[i].piston_runtime, name))
			return &t->langs[i];
	for (size_t i = 0; i < t->n; i++)
		if (strv_contains(t->langs[i].piston_aliases, name))
			return &t->langs[i];
	return NULL;
}

void langtab_step_cmdline(const struct lang_step *step, const struct lang_piston_cmd *instead,
			  const char **cmd, char *const **args)
{
	*cmd = instead && instead->cmd ? instead->cmd : step->cmd;
	*args = instead && instead->args ? instead->args : step->args;
}
