#include "autoconf.h"

/*
 * A language's build and run steps as its file gives them: the command
 * and its arguments (templates, checked here once so that expansion at a
 * request cannot fail on them), the environment, the limits under the
 * server's maximum, the flags a request may add (langstep.h).
 */
#include "common/lang/langstep.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/lang/langfile.h"
#include "common/lang/placeholder.h"
#include "common/strv.h"
#include "common/util.h"
#include "common/yamlutil.h"

void langstep_clear(struct lang_step *s)
{
	free(s->cmd);
	strv_free(s->args);
	strv_free(s->env);
	strv_free(s->flag_allow);
	strv_free(s->default_flags);
	memset(s, 0, sizeof(*s));
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

static int parse_time(struct lctx *c, const struct yamlutil_node *n, const char *key, uint32_t cap,
		      uint32_t *out)
{
	uint64_t v;

	if (yamlutil_seconds_ms(n, c->file, key, cap ? cap : UINT32_MAX, &v, c->err,
			     c->errlen) < 0)
		return -EINVAL;
	if (v == 0)
		return langfile_fail(c, n->line, "%s: must be above 0", key);
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
		if (langfile_want_map(c, n, where) < 0 ||
		    langfile_check_keys(c, n, keys, where) < 0)
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
	if (langfile_is_empty(n))
		n = NULL;
	if (n && langfile_want_map(c, n, where) < 0)
		return -EINVAL;
	*out = strv_new();
	for (size_t i = 0; n && i < n->n; i++) {
		char why[256], *val = NULL, *entry;

		if (!valid_env_name(n->keys[i]))
			return langfile_fail(c, n->key_lines[i],
					     "%s: '%s' is not a valid variable name", where,
					     n->keys[i]);
		if (langfile_str(c, n->items[i], where, &val) < 0)
			return -EINVAL;
		if (placeholder_check(val, PH_IN_ENV, why, sizeof(why)) < 0) {
			free(val);
			return langfile_fail(c, n->items[i]->line, "%s.%s: %s", where, n->keys[i],
					     why);
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
int langstep_check_cmd(struct lctx *c, int line, const struct lang *l, const char *step,
		       const char *cmd)
{
	char why[256];

	if (!cmd[0])
		return langfile_fail(c, line, "%s.cmd: must not be empty", step);
	if (placeholder_check(cmd, PH_IN_CMD, why, sizeof(why)) < 0)
		return langfile_fail(c, line, "%s.cmd: %s", step, why);
	if (!cmd_located(cmd))
		return langfile_fail(c, line,
				     "%s.cmd: '%s' must be an absolute path or start with ./ (the job directory)",
				     step, cmd);
	if (!l->artifact && placeholder_uses(cmd, "artifact"))
		return langfile_fail(c, line,
				     "%s.cmd: {{artifact}} used but the language has no artifact",
				     step);
	return 0;
}

/* A step's args; *has_flags: one is "{{flags}}". */
int langstep_check_args(struct lctx *c, const struct yamlutil_node *n, const struct lang *l,
			const char *step, char *const *args, bool *has_flags)
{
	char why[256];

	*has_flags = false;
	for (size_t i = 0; args && args[i]; i++) {
		const char *a = args[i];

		if (placeholder_check(a, PH_IN_ARG, why, sizeof(why)) < 0)
			return langfile_fail(c, langfile_item_line(n, i), "%s.args: %s", step, why);
		if (!l->artifact && placeholder_uses(a, "artifact"))
			return langfile_fail(c, langfile_item_line(n, i),
					     "%s.args: {{artifact}} used but the language has no artifact",
					     step);
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

	if (langstep_check_cmd(c, yamlutil_get(n, "cmd")->line, l, step, s->cmd) < 0 ||
	    langstep_check_args(c, args, l, step, s->args, &has_flags) < 0)
		return -EINVAL;
	for (size_t i = 0; s->env[i]; i++) {
		if (!l->artifact && placeholder_uses(s->env[i], "artifact"))
			return langfile_fail(c, env->items[i]->line,
					     "%s.env: {{artifact}} used but the language has no artifact",
					     step);
	}
	if (!has_flags && (strv_len(s->flag_allow) || strv_len(s->default_flags))) {
		const char *key = strv_len(s->flag_allow) ? "flag_allowlist" : "default_flags";

		return langfile_fail(c, yamlutil_get(n, key)->line,
				     "%s.%s: given, but %s.args has no \"{{flags}}\" argument",
				     step, key, step);
	}
	return 0;
}

int langstep_parse(struct lctx *c, const struct yamlutil_node *root, const struct lang *l,
		   const char *step, struct lang_step *s)
{
	const struct yamlutil_node *n = yamlutil_get(root, step);
	static const char *const keys[] = { "cmd", "args", "env", "limits", "flag_allowlist",
					    "default_flags", "open_files", NULL };
	const struct yamlutil_node *v;
	uint64_t nofile;
	char key[48];

	if (langfile_want_map(c, n, step) < 0 || langfile_check_keys(c, n, keys, step) < 0)
		return -EINVAL;
	if (!(v = yamlutil_get(n, "cmd")))
		return langfile_fail(c, langfile_key_line(root, step),
				     "%s: missing required key 'cmd'", step);
	snprintf(key, sizeof(key), "%s.cmd", step);
	if (langfile_str(c, v, key, &s->cmd) < 0)
		return -EINVAL;
	snprintf(key, sizeof(key), "%s.args", step);
	if ((v = yamlutil_get(n, "args")) && langfile_strv(c, v, key, &s->args) < 0)
		return -EINVAL;
	if (parse_env(c, yamlutil_get(n, "env"), step, &s->env) < 0)
		return -EINVAL;
	if (parse_limits(c, yamlutil_get(n, "limits"), step, &s->limits) < 0)
		return -EINVAL;
	snprintf(key, sizeof(key), "%s.flag_allowlist", step);
	if ((v = yamlutil_get(n, "flag_allowlist")) && langfile_strv(c, v, key, &s->flag_allow) < 0)
		return -EINVAL;
	for (size_t i = 0; s->flag_allow && s->flag_allow[i]; i++)
		if (!s->flag_allow[i][0])
			return langfile_fail(c, langfile_item_line(v, i), "%s: empty pattern", key);
	snprintf(key, sizeof(key), "%s.default_flags", step);
	if ((v = yamlutil_get(n, "default_flags")) &&
	    langfile_strv(c, v, key, &s->default_flags) < 0)
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
