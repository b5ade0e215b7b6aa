#include "autoconf.h"

#include "common/lang/langtab.h"

#include "common/lang/entry.h"
#include "common/lang/placeholder.h"
#include "common/strv.h"
#include "common/util.h"
#include "common/lang/validate.h"
#include "common/yamlutil.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define LANG_ID_MAX 32
/* A directory with more files than this is a mistake, not a language set. */
#define LANG_MAX_FILES 1024

struct langtab {
	struct lang *langs;
	size_t n;
};

/* Where we are while parsing one file. */
struct lctx {
	const char *file;
	const struct limits *max;
	char *err;
	size_t errlen;
};

static int lfail(struct lctx *c, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int lfail(struct lctx *c, int line, const char *fmt, ...)
{
	char why[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	snprintf(c->err, c->errlen, "%s:%d: %s", c->file, line, why);
	return -EINVAL;
}

/* The first n compiled pairs of entry patterns, and their arrays. */
static void entry_res_free(struct lang *l, size_t n)
{
	for (size_t i = 0; i < n; i++)
		entry_free(&l->entry_res[i], &l->entry_locate[i]);
	free(l->entry_res);
	free(l->entry_locate);
	l->entry_res = l->entry_locate = NULL;
}

static void step_clear(struct lang_step *s)
{
	free(s->cmd);
	strv_free(s->args);
	strv_free(s->env);
	strv_free(s->flag_allow);
	strv_free(s->default_flags);
	memset(s, 0, sizeof(*s));
}

static void lang_clear(struct lang *l)
{
	free(l->id);
	free(l->name);
	free(l->version_hint);
	free(l->source_filename);
	free(l->source_default);
	free(l->artifact);
	step_clear(&l->build);
	step_clear(&l->run);
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

/* Reject keys the schema does not know, so that typos fail loudly. */
static int check_keys(struct lctx *c, const struct yamlutil_node *map, const char *const *allowed,
		      const char *where)
{
	for (size_t i = 0; i < map->n; i++) {
		size_t k;

		for (k = 0; allowed[k]; k++)
			if (!strcmp(map->keys[i], allowed[k]))
				break;
		if (allowed[k])
			continue;
		if (!where && !strcmp(map->keys[i], "languages"))
			return lfail(c, map->key_lines[i],
				     "unknown key 'languages': a file holds one language, "
				     "whose keys are the top level of the file");
		return lfail(c, map->key_lines[i], "unknown key '%s'%s%s", map->keys[i],
			     where ? " in " : "", where ? where : "");
	}
	return 0;
}

/* "key:" with nothing after it, "~" or "null". */
static bool is_empty_value(const struct yamlutil_node *n)
{
	return n && n->type == YAMLUTIL_SCALAR && !n->quoted &&
	       (!n->scalar[0] || !strcmp(n->scalar, "~") || !strcasecmp(n->scalar, "null"));
}

static int want_map(struct lctx *c, const struct yamlutil_node *n, const char *key)
{
	if (n->type == YAMLUTIL_MAP)
		return 0;
	return lfail(c, n->line, "%s: expected a mapping", key);
}

static int get_str(struct lctx *c, const struct yamlutil_node *n, const char *key, char **out)
{
	return yamlutil_str(n, c->file, key, out, c->err, c->errlen);
}

static int get_strv(struct lctx *c, const struct yamlutil_node *n, const char *key, char ***out)
{
	return yamlutil_strv(n, c->file, key, out, c->err, c->errlen);
}

/*
 * The string under a required key of map, and its node (for later
 * messages). section: the map's own key ("codize"), NULL at the top.
 */
static int required_str(struct lctx *c, const struct yamlutil_node *map, const char *section,
			const char *key, char **out, const struct yamlutil_node **node)
{
	const struct yamlutil_node *v = yamlutil_get(map, key);
	char full[64];
	char *s = NULL;

	*node = map;
	if (!v) {
		lfail(c, map->line, "%s%smissing required key '%s'", section ? section : "",
		      section ? ": " : "", key);
		return -EINVAL;
	}
	snprintf(full, sizeof(full), "%s%s%s", section ? section : "", section ? "." : "", key);
	if (get_str(c, v, full, &s) < 0 || !s)
		return -EINVAL;
	*out = s;
	*node = v;
	return 0;
}

/* Line of item i of a list node; a null node (empty list) has no items. */
static int item_line(const struct yamlutil_node *n, size_t i)
{
	if (!n)
		return 0;
	return n->type == YAMLUTIL_SEQ && i < n->n ? n->items[i]->line : n->line;
}

static bool valid_id(const char *s)
{
	size_t len = strlen(s);

	if (len == 0 || len > LANG_ID_MAX)
		return false;
	if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= '0' && s[0] <= '9')))
		return false;
	for (size_t i = 1; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
		      strchr("_+.-", s[i])))
			return false;
	return true;
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

static bool valid_env_name(const char *s)
{
	if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
		return false;
	for (s++; *s; s++)
		if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
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

static int parse_time(struct lctx *c, const struct yamlutil_node *n, const char *key, uint32_t cap,
		      uint32_t *out)
{
	uint64_t v;

	if (yamlutil_seconds_ms(n, c->file, key, cap ? cap : UINT32_MAX, &v, c->err,
			     c->errlen) < 0)
		return -EINVAL;
	if (v == 0)
		return lfail(c, n->line, "%s: must be above 0", key);
	*out = (uint32_t)v;
	return 0;
}

static int parse_num(struct lctx *c, const struct yamlutil_node *n, const char *key, uint64_t cap,
		     uint64_t type_max, uint64_t *out)
{
	return yamlutil_u64(n, c->file, key, 1, cap && cap < type_max ? cap : type_max, out, c->err,
			 c->errlen);
}

static uint64_t clamp(uint64_t v, uint64_t max)
{
	return max && v > max ? max : v;
}

static void limits_defaults(struct limits *l, const struct limits *max)
{
	static const struct limits none;

	if (!max)
		max = &none;
	l->wall_ms = (uint32_t)clamp(LANG_DEFAULT_WALL_MS, max->wall_ms);
	l->cpu_ms = 0;
	l->memory_kb = clamp(LANG_DEFAULT_MEMORY_KB, max->memory_kb);
	l->max_processes = (uint32_t)clamp(LANG_DEFAULT_MAX_PROCESSES, max->max_processes);
	l->fsize_kb = clamp(LANG_DEFAULT_FSIZE_KB, max->fsize_kb);
	l->output_kb = clamp(LANG_DEFAULT_OUTPUT_KB, max->output_kb);
}

static int parse_limits(struct lctx *c, const struct yamlutil_node *n, const char *step,
			struct limits *out)
{
	static const char *const keys[] = { "wall_time_s", "cpu_time_s", "memory_kb",
					    "max_processes", "file_size_kb", "output_kb", NULL };
	static const struct limits none;
	const struct limits *max = c->max ? c->max : &none;
	const struct yamlutil_node *v;
	struct limits l;
	char where[32], key[64];
	uint64_t u;

	limits_defaults(&l, c->max);
	snprintf(where, sizeof(where), "%s.limits", step);
	if (n) {
		if (want_map(c, n, where) < 0 || check_keys(c, n, keys, where) < 0)
			return -EINVAL;
#define KEY(k) (snprintf(key, sizeof(key), "%s.%s", where, k), key)
		if ((v = yamlutil_get(n, "wall_time_s")) &&
		    parse_time(c, v, KEY("wall_time_s"), max->wall_ms, &l.wall_ms) < 0)
			return -EINVAL;
		if ((v = yamlutil_get(n, "cpu_time_s")) &&
		    parse_time(c, v, KEY("cpu_time_s"), max->cpu_ms, &l.cpu_ms) < 0)
			return -EINVAL;
		if ((v = yamlutil_get(n, "memory_kb"))) {
			if (parse_num(c, v, KEY("memory_kb"), max->memory_kb, UINT64_MAX, &u) < 0)
				return -EINVAL;
			l.memory_kb = u;
		}
		if ((v = yamlutil_get(n, "max_processes"))) {
			if (parse_num(c, v, KEY("max_processes"), max->max_processes, UINT32_MAX,
				      &u) < 0)
				return -EINVAL;
			l.max_processes = (uint32_t)u;
		}
		if ((v = yamlutil_get(n, "file_size_kb"))) {
			if (parse_num(c, v, KEY("file_size_kb"), max->fsize_kb, UINT64_MAX, &u) < 0)
				return -EINVAL;
			l.fsize_kb = u;
		}
		if ((v = yamlutil_get(n, "output_kb"))) {
			if (parse_num(c, v, KEY("output_kb"), max->output_kb, UINT64_MAX, &u) < 0)
				return -EINVAL;
			l.output_kb = u;
		}
#undef KEY
	}
	/* CPU time can only exceed wall time with threads; the wall limit is
	 * the natural default. */
	if (!l.cpu_ms)
		l.cpu_ms = (uint32_t)clamp(l.wall_ms, max->cpu_ms);
	*out = l;
	return 0;
}

static int parse_env(struct lctx *c, const struct yamlutil_node *n, const char *step, char ***out)
{
	char where[32];

	snprintf(where, sizeof(where), "%s.env", step);
	if (is_empty_value(n))
		n = NULL;
	if (n && want_map(c, n, where) < 0)
		return -EINVAL;
	*out = strv_new();
	for (size_t i = 0; n && i < n->n; i++) {
		char why[256], *val = NULL, *entry;

		if (!valid_env_name(n->keys[i]))
			return lfail(c, n->key_lines[i], "%s: '%s' is not a valid variable name",
				     where, n->keys[i]);
		if (get_str(c, n->items[i], where, &val) < 0)
			return -EINVAL;
		if (placeholder_check(val, PH_IN_ENV, why, sizeof(why)) < 0) {
			free(val);
			return lfail(c, n->items[i]->line, "%s.%s: %s", where, n->keys[i], why);
		}
		entry = xasprintf("%s=%s", n->keys[i], val);
		free(val);
		strv_push(out, entry);
	}
	return 0;
}

/* A relative cmd would be looked up by the jail's exec in its own cwd or
 * PATH, which differ between nsjail and bubblewrap: insist on a definite
 * location. */
static bool cmd_located(const char *cmd)
{
	return cmd[0] == '/' || !strncmp(cmd, "./", 2) || !strncmp(cmd, "{{box}}/", 8) ||
	       !strncmp(cmd, "{{tmp}}/", 8);
}

/* A step's cmd (or piston.build's...): step names it in messages. */
static int check_cmd_template(struct lctx *c, int line, const struct lang *l, const char *step,
			      const char *cmd)
{
	char why[256];

	if (!cmd[0])
		return lfail(c, line, "%s.cmd: must not be empty", step);
	if (placeholder_check(cmd, PH_IN_CMD, why, sizeof(why)) < 0)
		return lfail(c, line, "%s.cmd: %s", step, why);
	if (!cmd_located(cmd))
		return lfail(c, line,
			     "%s.cmd: '%s' must be an absolute path or start with ./ (the job directory)",
			     step, cmd);
	if (!l->artifact && placeholder_uses(cmd, "artifact"))
		return lfail(c, line, "%s.cmd: {{artifact}} used but the language has no artifact",
			     step);
	return 0;
}

/* A step's args; *has_flags: one is "{{flags}}". */
static int check_arg_templates(struct lctx *c, const struct yamlutil_node *n, const struct lang *l,
			       const char *step, char *const *args, bool *has_flags)
{
	char why[256];

	*has_flags = false;
	for (size_t i = 0; args && args[i]; i++) {
		const char *a = args[i];

		if (placeholder_check(a, PH_IN_ARG, why, sizeof(why)) < 0)
			return lfail(c, item_line(n, i), "%s.args: %s", step, why);
		if (!l->artifact && placeholder_uses(a, "artifact"))
			return lfail(c, item_line(n, i),
				     "%s.args: {{artifact}} used but the language has no artifact", step);
		if (!strcmp(a, "{{flags}}"))
			*has_flags = true;
	}
	return 0;
}

static int check_step_templates(struct lctx *c, const struct yamlutil_node *n, const struct lang *l,
				const char *step, struct lang_step *s)
{
	const struct yamlutil_node *args = yamlutil_get(n, "args"), *env = yamlutil_get(n, "env");
	bool has_flags = false;

	if (check_cmd_template(c, yamlutil_get(n, "cmd")->line, l, step, s->cmd) < 0 ||
	    check_arg_templates(c, args, l, step, s->args, &has_flags) < 0)
		return -EINVAL;
	for (size_t i = 0; s->env[i]; i++) {
		if (!l->artifact && placeholder_uses(s->env[i], "artifact"))
			return lfail(c, env->items[i]->line,
				     "%s.env: {{artifact}} used but the language has no artifact", step);
	}
	if (!has_flags && (strv_len(s->flag_allow) || strv_len(s->default_flags))) {
		const char *key = strv_len(s->flag_allow) ? "flag_allowlist" : "default_flags";

		return lfail(c, yamlutil_get(n, key)->line,
			     "%s.%s: given, but %s.args has no \"{{flags}}\" argument", step, key, step);
	}
	return 0;
}

/* The line of "key:" in map, for errors about what its value lacks (a
 * block mapping's own line is that of its first key, one line lower). */
static int key_line(const struct yamlutil_node *map, const char *key)
{
	for (size_t i = 0; i < map->n; i++)
		if (!strcmp(map->keys[i], key))
			return map->key_lines[i];
	return map->line;
}

static int parse_step(struct lctx *c, const struct yamlutil_node *root, const struct lang *l,
		      const char *step, struct lang_step *s)
{
	const struct yamlutil_node *n = yamlutil_get(root, step);
	static const char *const keys[] = { "cmd", "args", "env", "limits", "flag_allowlist",
					    "default_flags", "open_files", NULL };
	const struct yamlutil_node *v;
	uint64_t nofile;
	char key[48];

	if (want_map(c, n, step) < 0 || check_keys(c, n, keys, step) < 0)
		return -EINVAL;
	if (!(v = yamlutil_get(n, "cmd")))
		return lfail(c, key_line(root, step), "%s: missing required key 'cmd'", step);
	snprintf(key, sizeof(key), "%s.cmd", step);
	if (get_str(c, v, key, &s->cmd) < 0)
		return -EINVAL;
	snprintf(key, sizeof(key), "%s.args", step);
	if ((v = yamlutil_get(n, "args")) && get_strv(c, v, key, &s->args) < 0)
		return -EINVAL;
	if (parse_env(c, yamlutil_get(n, "env"), step, &s->env) < 0)
		return -EINVAL;
	if (parse_limits(c, yamlutil_get(n, "limits"), step, &s->limits) < 0)
		return -EINVAL;
	snprintf(key, sizeof(key), "%s.flag_allowlist", step);
	if ((v = yamlutil_get(n, "flag_allowlist")) && get_strv(c, v, key, &s->flag_allow) < 0)
		return -EINVAL;
	for (size_t i = 0; s->flag_allow && s->flag_allow[i]; i++)
		if (!s->flag_allow[i][0])
			return lfail(c, item_line(v, i), "%s: empty pattern", key);
	snprintf(key, sizeof(key), "%s.default_flags", step);
	if ((v = yamlutil_get(n, "default_flags")) && get_strv(c, v, key, &s->default_flags) < 0)
		return -EINVAL;
	/* Compilers open many files at once; a judged program needs a few. */
	s->open_files = strcmp(step, "build") == 0 ? LANG_BUILD_OPEN_FILES : LANG_RUN_OPEN_FILES;
	snprintf(key, sizeof(key), "%s.open_files", step);
	if ((v = yamlutil_get(n, "open_files"))) {
		if (yamlutil_u64(v, c->file, key, 8, 65536, &nofile, c->err, c->errlen) < 0)
			return -EINVAL;
		s->open_files = (unsigned)nofile;
	}
	return check_step_templates(c, n, l, step, s);
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

	if (required_str(c, root, NULL, "id", &l->id, &v) < 0)
		return -EINVAL;
	if (!valid_id(l->id))
		return lfail(c, v->line, "id: '%s' is not a valid id ([a-z0-9][a-z0-9_+.-]*, at most %d characters)",
			     l->id, LANG_ID_MAX);
	if (required_str(c, root, NULL, "name", &l->name, &v) < 0)
		return -EINVAL;
	if (!l->name[0])
		return lfail(c, v->line, "name: must not be empty");
	if ((v = yamlutil_get(root, "version")) && get_str(c, v, "version", &l->version_hint) < 0)
		return -EINVAL;
	if ((v = yamlutil_get(root, "aliases"))) {
		if (get_strv(c, v, "aliases", &l->aliases) < 0)
			return -EINVAL;
		for (size_t i = 0; l->aliases[i]; i++)
			if (!valid_id(l->aliases[i]))
				return lfail(c, item_line(v, i), "aliases: '%s' is not a valid id",
					     l->aliases[i]);
	}
	return 0;
}

static int parse_file_fields(struct lctx *c, const struct yamlutil_node *root, struct lang *l)
{
	const struct yamlutil_node *v;

	if (required_str(c, root, NULL, "source_filename", &l->source_filename, &v) < 0)
		return -EINVAL;
	if (!strcmp(l->source_filename, LANG_FROM_REQUEST)) {
		free(l->source_filename);
		l->source_filename = NULL;
		l->source_from_request = true;
	} else if (!plain_file_name(l->source_filename)) {
		return lfail(c, v->line,
			     "source_filename: '%s' is not a plain file name ([A-Za-z0-9_.+-], not starting with '.', '-' or '+')",
			     l->source_filename);
	}
	if ((v = yamlutil_get(root, "source_filename_default"))) {
		if (!l->source_from_request)
			return lfail(c, v->line, "source_filename_default: only with source_filename: "
				     LANG_FROM_REQUEST " (a fixed name needs no default)");
		if (get_str(c, v, "source_filename_default", &l->source_default) < 0)
			return -EINVAL;
		if (!plain_file_name(l->source_default))
			return lfail(c, v->line,
				     "source_filename_default: '%s' is not a plain file name ([A-Za-z0-9_.+-], not starting with '.', '-' or '+')",
				     l->source_default);
	}
	if ((v = yamlutil_get(root, "artifact"))) {
		if (get_str(c, v, "artifact", &l->artifact) < 0)
			return -EINVAL;
		if (!strcmp(l->artifact, LANG_FROM_REQUEST))
			l->artifact_from_request = true;
		else if (!plain_file_name(l->artifact))
			return lfail(c, v->line,
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
	if ((v = yamlutil_get(root, "mounts"))) {
		if (get_strv(c, v, "mounts", &l->ro_mounts) < 0)
			return -EINVAL;
		for (size_t i = 0; l->ro_mounts[i]; i++) {
			const char *why = mount_problem(l->ro_mounts[i]);

			if (why)
				return lfail(c, item_line(v, i), "mounts: '%s' %s", l->ro_mounts[i],
					     why);
		}
	}
	if ((v = yamlutil_get(root, "install")) && !is_empty_value(v)) {
		if (want_map(c, v, "install") < 0 || check_keys(c, v, ikeys, "install") < 0)
			return -EINVAL;
		if ((p = yamlutil_get(v, "debian")) &&
		    get_strv(c, p, "install.debian", &l->debian_packages) < 0)
			return -EINVAL;
		for (size_t i = 0; l->debian_packages && l->debian_packages[i]; i++)
			if (!valid_package(l->debian_packages[i], false))
				return lfail(c, item_line(p, i), "install.debian: '%s' is not a Debian package name",
					     l->debian_packages[i]);
		if ((p = yamlutil_get(v, "npm")) && get_strv(c, p, "install.npm", &l->npm_packages) < 0)
			return -EINVAL;
		for (size_t i = 0; l->npm_packages && l->npm_packages[i]; i++)
			if (!valid_package(l->npm_packages[i], true))
				return lfail(c, item_line(p, i), "install.npm: '%s' is not an npm package name",
					     l->npm_packages[i]);
	}
	if (!(v = yamlutil_get(root, "probe")))
		return lfail(c, root->line, "missing required key 'probe'");
	if (get_strv(c, v, "probe", &l->probe) < 0)
		return -EINVAL;
	if (!l->probe[0])
		return lfail(c, v->line, "probe: must name at least the command to run");
	if (l->probe[0][0] != '/')
		return lfail(c, item_line(v, 0), "probe: '%s' must be an absolute path", l->probe[0]);
	for (size_t i = 0; l->probe[i]; i++)
		if (strstr(l->probe[i], "{{"))
			return lfail(c, item_line(v, i), "probe: placeholders are not expanded here");
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
			return lfail(c, item_line(p, i), "entry.patterns: %s", why);
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
		return lfail(c, p->line, "entry.default: %s", why);
	/* every "{{" left is a valid placeholder; only these two mean anything here */
	while ((q = strstr(q, "{{"))) {
		q += 2;
		if (strncmp(q, "stem}}", 6) != 0 && strncmp(q, "stem_class}}", 12) != 0)
			return lfail(c, p->line, "entry.default: only {{stem}} and {{stem_class}} "
				     "are expanded here");
	}
	if (strstr(d, "{{") && !src)
		return lfail(c, p->line,
			     "entry.default: {{stem}} and {{stem_class}} need the source's name, and "
			     "this language names its source after the entry (give "
			     "source_filename_default)");
	e = placeholder_expand_one(d, &ctx);
	if (!e)
		return lfail(c, p->line, "entry.default: cannot expand '%s'", d);
	snprintf(name, sizeof(name), "%s%s", e, l->entry_suffix);
	ok = plain_file_name(e) && plain_file_name(name);
	free(e);
	if (!ok)
		return lfail(c, p->line, "entry: '%s' is not a plain file name", name);
	return 0;
}

/* entry: { patterns: [...], default: NAME, suffix: .EXT } */
static int parse_entry(struct lctx *c, const struct yamlutil_node *root, struct lang *l)
{
	static const char *const keys[] = { "patterns", "default", "suffix", NULL };
	const struct yamlutil_node *v = yamlutil_get(root, "entry"), *p, *dn;

	if (!v)
		return 0;
	if (want_map(c, v, "entry") < 0 || check_keys(c, v, keys, "entry") < 0)
		return -EINVAL;
	if (!(dn = yamlutil_get(v, "default")))
		return lfail(c, v->line, "entry: missing required key 'default'");
	if (get_str(c, dn, "entry.default", &l->entry_default) < 0)
		return -EINVAL;
	if ((p = yamlutil_get(v, "suffix"))) {
		if (get_str(c, p, "entry.suffix", &l->entry_suffix) < 0)
			return -EINVAL;
	} else {
		l->entry_suffix = xstrdup("");
	}
	if (check_entry_default(c, dn, l) < 0)
		return -EINVAL;
	if (!(p = yamlutil_get(v, "patterns")))
		return lfail(c, v->line, "entry: missing required key 'patterns'");
	if (get_strv(c, p, "entry.patterns", &l->entry_patterns) < 0)
		return -EINVAL;
	if (!l->entry_patterns[0])
		return lfail(c, p->line, "entry.patterns: at least one pattern");
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
	if (want_map(c, v, "codize") < 0 || check_keys(c, v, keys, "codize") < 0)
		return -EINVAL;
	if (required_str(c, v, "codize", "runtime", &l->codize_runtime, &p) < 0)
		return -EINVAL;
	if (!valid_id(l->codize_runtime))
		return lfail(c, p->line, "codize.runtime: '%s' is not a valid id", l->codize_runtime);
	if ((p = yamlutil_get(v, "refused_files"))) {
		if (get_strv(c, p, "codize.refused_files", &l->codize_refused) < 0)
			return -EINVAL;
		for (size_t i = 0; l->codize_refused[i]; i++) {
			const char *f = l->codize_refused[i];
			const char *why = validate_codize_filename(f, strlen(f));

			if (why)
				return lfail(c, item_line(p, i), "codize.refused_files: '%s': %s", f,
					     why);
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
	if (!p || is_empty_value(p))
		return 0;
	if (p->type != YAMLUTIL_SEQ)
		return lfail(c, p->line, "%s: must be a list of ids", what);
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
	if (want_map(c, v, "judge0") < 0 || check_keys(c, v, keys, "judge0") < 0)
		return -EINVAL;
	p = yamlutil_get(v, "id");
	if (!p)
		return lfail(c, v->line, "judge0: missing required key 'id'");
	if (yamlutil_u64(p, c->file, "judge0.id", 1, JUDGE0_ID_MAX, &id, c->err, c->errlen) < 0)
		return -EINVAL;
	l->judge0_id = (unsigned)id;
	if (required_str(c, v, "judge0", "name", &l->judge0_name, &p) < 0)
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
	ok = valid_id(t);
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
		if (get_str(c, p, "piston.extension", &l->piston_extension) < 0)
			return -EINVAL;
		if (!valid_extension(l->piston_extension))
			return lfail(c, p->line,
				     "piston.extension: '%s' is not a dot and up to 15 of "
				     "[A-Za-z0-9_+-]", l->piston_extension);
	}
	if ((p = yamlutil_get(v, "compiled"))) {
		if (yamlutil_bool(p, c->file, "piston.compiled", &l->piston_compiled, c->err,
				  c->errlen) < 0)
			return -EINVAL;
		if (l->piston_compiled && !l->has_build)
			return lfail(c, p->line, "piston.compiled: true, but the language has no build");
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
	if (want_map(c, n, key) < 0 || check_keys(c, n, keys, key) < 0)
		return -EINVAL;
	if (!strcmp(step, "build") && !l->has_build)
		return lfail(c, n->line, "piston.build: the language has no build");
	if (!n->n)
		return lfail(c, n->line, "%s: give cmd, args or both", key);
	snprintf(sub, sizeof(sub), "%s.cmd", key);
	if ((p = yamlutil_get(n, "cmd")) &&
	    (get_str(c, p, sub, &out->cmd) < 0 ||
	     check_cmd_template(c, p->line, l, key, out->cmd) < 0))
		return -EINVAL;
	snprintf(sub, sizeof(sub), "%s.args", key);
	if ((p = yamlutil_get(n, "args")) && get_strv(c, p, sub, &out->args) < 0)
		return -EINVAL;
	/* an empty list is "no arguments", never "the step's" */
	if (p && !out->args)
		out->args = strv_new();
	if (p && check_arg_templates(c, p, l, key, out->args, &has_flags) < 0)
		return -EINVAL;
	return 0;
}

/*
 * How Piston's scripts differ from the steps: read after the steps,
 * which they refer to.
 */
static int parse_piston_steps(struct lctx *c, const struct yamlutil_node *root, struct lang *l)
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
 * compiled, build, run } (the last four in parse_piston_steps)
 */
static int parse_piston(struct lctx *c, const struct yamlutil_node *root, struct lang *l)
{
	static const char *const keys[] = { "runtime", "version", "aliases", "extension",
					    "compiled", "build", "run", NULL };
	const struct yamlutil_node *v = yamlutil_get(root, "piston"), *p;

	if (!v)
		return 0;
	if (want_map(c, v, "piston") < 0 || check_keys(c, v, keys, "piston") < 0)
		return -EINVAL;
	if (required_str(c, v, "piston", "runtime", &l->piston_runtime, &p) < 0)
		return -EINVAL;
	if (!piston_name(l->piston_runtime))
		return lfail(c, p->line, "piston.runtime: '%s' is not a valid name",
			     l->piston_runtime);
	if (required_str(c, v, "piston", "version", &l->piston_version, &p) < 0)
		return -EINVAL;
	if (!semver_plain(l->piston_version))
		return lfail(c, p->line, "piston.version: '%s' is not x.y.z", l->piston_version);
	if ((p = yamlutil_get(v, "aliases"))) {
		if (get_strv(c, p, "piston.aliases", &l->piston_aliases) < 0)
			return -EINVAL;
		for (size_t i = 0; l->piston_aliases[i]; i++)
			if (!piston_name(l->piston_aliases[i]))
				return lfail(c, item_line(p, i), "piston.aliases: '%s' is not a valid name",
					     l->piston_aliases[i]);
	}
	return 0;
}

static int parse_lang(struct lctx *c, const struct yamlutil_node *root, struct lang *l)
{
	static const char *const keys[] = { "id", "name", "version", "aliases",
					    "source_filename", "source_filename_default", "artifact",
					    "mounts", "tmp_exec",
					    "install", "build", "run", "probe", "codize", "entry",
					    "judge0", "piston", NULL };

	if (root->type != YAMLUTIL_MAP)
		return lfail(c, root->line, "the top level must be a mapping (one language)");
	if (!root->n)
		return lfail(c, root->line, "empty file: no language defined");
	if (check_keys(c, root, keys, NULL) < 0)
		return -EINVAL;
	l->line = root->line;
	if (parse_name_fields(c, root, l) < 0 || parse_file_fields(c, root, l) < 0 ||
	    parse_host_fields(c, root, l) < 0 || parse_codize(c, root, l) < 0 ||
	    parse_judge0(c, root, l) < 0 || parse_piston(c, root, l) < 0 ||
	    parse_entry(c, root, l) < 0)
		return -EINVAL;
	if (yamlutil_get(root, "build")) {
		if (parse_step(c, root, l, "build", &l->build) < 0)
			return -EINVAL;
		l->has_build = true;
	}
	if (!yamlutil_get(root, "run"))
		return lfail(c, root->line, "missing required key 'run'");
	if (parse_step(c, root, l, "run", &l->run) < 0 || parse_piston_steps(c, root, l) < 0)
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
				rc = lfail(c, j->line,
					   "judge0 id %u is already used by language '%s' (%s:%d)",
					   ids[i], o->id, o->file, o->line);
			for (size_t k = i + 1; k < n && !rc; k++)
				if (ids[k] == ids[i])
					rc = lfail(c, j->line, "judge0 id %u is listed twice", ids[i]);
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
			return lfail(c, p->line,
				     "piston name '%s' is already used by language '%s' (%s:%d)", name,
				     o->id, o->file, o->line);
		/* Piston lists some runtimes among their own aliases (clojure) */
		for (size_t k = 0; i > 0 && l->piston_aliases[k]; k++)
			if (!strcmp(l->piston_aliases[k], name) && k + 1 != i)
				return lfail(c, p->line, "piston name '%s' is listed twice", name);
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
		return lfail(c, yamlutil_get(root, "id")->line,
			     "id '%s' is already used by language '%s' (%s:%d)", l->id, o->id,
			     o->file, o->line);
	for (size_t i = 0; l->aliases && l->aliases[i]; i++) {
		const char *a = l->aliases[i];

		o = name_owner(t, a);
		if (o)
			return lfail(c, item_line(al, i),
				     "alias '%s' is already used by language '%s' (%s:%d)", a, o->id,
				     o->file, o->line);
		if (!strcmp(a, l->id))
			return lfail(c, item_line(al, i), "alias '%s' repeats the id", a);
		for (size_t k = 0; k < i; k++)
			if (!strcmp(a, l->aliases[k]))
				return lfail(c, item_line(al, i), "alias '%s' is listed twice", a);
	}
	/* Codize runtime names are a name space of their own. */
	o = langtab_find_runtime(t, l->codize_runtime);
	if (o)
		return lfail(c, yamlutil_get(yamlutil_get(root, "codize"), "runtime")->line,
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
