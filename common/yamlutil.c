#include "autoconf.h"

#include "common/yamlutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "common/strv.h"
#include "common/util.h"

/*
 * Config and language files are small and written by hand; the caps keep a
 * hostile or corrupted file from costing more than a few milliseconds and a
 * few hundred KiB at start-up or reload.
 */
#define YAML_MAX_FILE_BYTES (64 * 1024)
#define YAML_MAX_DEPTH 32

struct yparse {
	yaml_parser_t parser;
	const char *name;
	char *err;
	size_t errlen;
};

static struct yamlutil_node *node_new(enum yamlutil_type type, int line)
{
	struct yamlutil_node *n = xcalloc(1, sizeof(*n));

	n->type = type;
	n->line = line;
	return n;
}

void yamlutil_free(struct yamlutil_node *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->n; i++) {
		yamlutil_free(n->items[i]);
		if (n->keys)
			free(n->keys[i]);
	}
	free(n->items);
	free(n->keys);
	free(n->key_lines);
	free(n->scalar);
	free(n);
}

static int mark_line(yaml_mark_t m)
{
	return (int)m.line + 1;
}

static int next_event(struct yparse *y, yaml_event_t *ev)
{
	yaml_parser_t *p = &y->parser;

	if (yaml_parser_parse(p, ev))
		return 0;
	if (p->error == YAML_MEMORY_ERROR)
		abort();   /* libyaml's allocator failed: the rule of xmalloc */
	if (p->context)
		snprintf(y->err, y->errlen, "%s:%d: YAML syntax error: %s (%s at line %d)",
			 y->name, mark_line(p->problem_mark),
			 p->problem ? p->problem : "unknown problem", p->context,
			 mark_line(p->context_mark));
	else
		snprintf(y->err, y->errlen, "%s:%d: YAML syntax error: %s", y->name,
			 mark_line(p->problem_mark), p->problem ? p->problem : "unknown problem");
	return -EINVAL;
}

/* Anchors, aliases and tags buy nothing in these files, and aliases are
 * how "billion laughs" documents blow up; refuse them outright. */
static int check_props(struct yparse *y, const yaml_event_t *ev, const yaml_char_t *anchor,
		       const yaml_char_t *tag, bool implicit_tag)
{
	int line = mark_line(ev->start_mark);

	if (anchor) {
		snprintf(y->err, y->errlen, "%s:%d: YAML anchors (&%s) are not supported",
			 y->name, line, (const char *)anchor);
		return -EINVAL;
	}
	if (tag && !implicit_tag) {
		snprintf(y->err, y->errlen, "%s:%d: YAML tags (%s) are not supported", y->name,
			 line, (const char *)tag);
		return -EINVAL;
	}
	return 0;
}

static void grow(struct yamlutil_node *n, size_t *cap, bool map)
{
	size_t ncap = *cap ? *cap * 2 : 8;

	if (n->n < *cap)
		return;
	n->items = xreallocarray(n->items, ncap, sizeof(struct yamlutil_node *));
	if (map) {
		n->keys = xreallocarray(n->keys, ncap, sizeof(*n->keys));
		n->key_lines = xreallocarray(n->key_lines, ncap, sizeof(*n->key_lines));
	}
	*cap = ncap;
}

static int parse_node(struct yparse *y, yaml_event_t *ev, int depth, struct yamlutil_node **out);

static int parse_scalar(struct yparse *y, yaml_event_t *ev, struct yamlutil_node **out)
{
	int line = mark_line(ev->start_mark);
	const yaml_char_t *val = ev->data.scalar.value;
	size_t len = ev->data.scalar.length;
	struct yamlutil_node *n;

	if (check_props(y, ev, ev->data.scalar.anchor, ev->data.scalar.tag,
			ev->data.scalar.plain_implicit || ev->data.scalar.quoted_implicit) < 0)
		return -EINVAL;
	if (memchr(val, '\0', len)) {
		snprintf(y->err, y->errlen, "%s:%d: a NUL character is not allowed", y->name,
			 line);
		return -EINVAL;
	}
	n = node_new(YAMLUTIL_SCALAR, line);
	n->scalar = xstrndup((const char *)val, len);
	n->quoted = ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
	*out = n;
	return 0;
}

static int parse_seq(struct yparse *y, yaml_event_t *start, int depth, struct yamlutil_node **out)
{
	int line = mark_line(start->start_mark);
	struct yamlutil_node *n;
	size_t cap = 0;
	int rc = -EINVAL;

	if (check_props(y, start, start->data.sequence_start.anchor,
			start->data.sequence_start.tag, start->data.sequence_start.implicit) < 0)
		return -EINVAL;
	n = node_new(YAMLUTIL_SEQ, line);
	for (;;) {
		yaml_event_t ev;
		struct yamlutil_node *item = NULL;

		if (next_event(y, &ev) < 0)
			goto out;
		if (ev.type == YAML_SEQUENCE_END_EVENT) {
			yaml_event_delete(&ev);
			break;
		}
		grow(n, &cap, false);
		rc = parse_node(y, &ev, depth + 1, &item);
		yaml_event_delete(&ev);
		if (rc < 0)
			goto out;
		rc = -EINVAL;
		n->items[n->n++] = item;
	}
	*out = n;
	n = NULL;
	rc = 0;
out:
	yamlutil_free(n);
	return rc;
}

static int find_key(const struct yamlutil_node *map, const char *key)
{
	for (size_t i = 0; i < map->n; i++)
		if (strcmp(map->keys[i], key) == 0)
			return (int)i;
	return -ENOENT;
}

/* One key: value pair; ev is the key's event. */
static int parse_pair(struct yparse *y, struct yamlutil_node *n, yaml_event_t *ev, int depth)
{
	int line = mark_line(ev->start_mark);
	struct yamlutil_node *key = NULL, *val = NULL;
	yaml_event_t vev;
	int dup, rc;

	if (ev->type != YAML_SCALAR_EVENT) {
		snprintf(y->err, y->errlen, "%s:%d: mapping keys must be plain strings", y->name,
			 line);
		return -EINVAL;
	}
	if (parse_scalar(y, ev, &key) < 0)
		return -EINVAL;
	dup = find_key(n, key->scalar);
	if (dup >= 0) {
		snprintf(y->err, y->errlen, "%s:%d: duplicate key '%s' (first at line %d)",
			 y->name, line, key->scalar, n->key_lines[dup]);
		yamlutil_free(key);
		return -EINVAL;
	}
	if (next_event(y, &vev) < 0) {
		yamlutil_free(key);
		return -EINVAL;
	}
	rc = parse_node(y, &vev, depth + 1, &val);
	yaml_event_delete(&vev);
	if (rc < 0) {
		yamlutil_free(key);
		return -EINVAL;
	}
	n->keys[n->n] = key->scalar;
	n->key_lines[n->n] = line;
	n->items[n->n++] = val;
	key->scalar = NULL;
	yamlutil_free(key);
	return 0;
}

static int parse_map(struct yparse *y, yaml_event_t *start, int depth, struct yamlutil_node **out)
{
	int line = mark_line(start->start_mark);
	struct yamlutil_node *n;
	size_t cap = 0;
	int rc = -EINVAL;

	if (check_props(y, start, start->data.mapping_start.anchor,
			start->data.mapping_start.tag, start->data.mapping_start.implicit) < 0)
		return -EINVAL;
	n = node_new(YAMLUTIL_MAP, line);
	for (;;) {
		yaml_event_t ev;

		if (next_event(y, &ev) < 0)
			goto out;
		if (ev.type == YAML_MAPPING_END_EVENT) {
			yaml_event_delete(&ev);
			break;
		}
		grow(n, &cap, true);
		rc = parse_pair(y, n, &ev, depth);
		yaml_event_delete(&ev);
		if (rc < 0)
			goto out;
		rc = -EINVAL;
	}
	*out = n;
	n = NULL;
	rc = 0;
out:
	yamlutil_free(n);
	return rc;
}

static int parse_node(struct yparse *y, yaml_event_t *ev, int depth, struct yamlutil_node **out)
{
	int line = mark_line(ev->start_mark);

	if (depth > YAML_MAX_DEPTH) {
		snprintf(y->err, y->errlen, "%s:%d: nesting deeper than %d levels", y->name, line,
			 YAML_MAX_DEPTH);
		return -EINVAL;
	}
	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		return parse_scalar(y, ev, out);
	case YAML_SEQUENCE_START_EVENT:
		return parse_seq(y, ev, depth, out);
	case YAML_MAPPING_START_EVENT:
		return parse_map(y, ev, depth, out);
	case YAML_ALIAS_EVENT:
		snprintf(y->err, y->errlen, "%s:%d: YAML aliases (*%s) are not supported", y->name,
			 line, (const char *)ev->data.alias.anchor);
		return -EINVAL;
	default:
		snprintf(y->err, y->errlen, "%s:%d: unexpected YAML event", y->name, line);
		return -EINVAL;
	}
}

static bool is_null_scalar(const struct yamlutil_node *n)
{
	return n->type == YAMLUTIL_SCALAR && !n->quoted &&
	       (!n->scalar[0] || !strcmp(n->scalar, "~") || !strcasecmp(n->scalar, "null"));
}

/* Stream: at most one document; none, or an empty one, is an empty map. */
static int parse_stream(struct yparse *y, struct yamlutil_node **out)
{
	struct yamlutil_node *root = NULL;
	yaml_event_t ev;
	int rc = -EINVAL;

	for (;;) {
		if (next_event(y, &ev) < 0)
			goto out;
		if (ev.type == YAML_STREAM_END_EVENT)
			break;
		if (ev.type == YAML_DOCUMENT_START_EVENT && root) {
			snprintf(y->err, y->errlen, "%s:%d: only one YAML document is allowed",
				 y->name, mark_line(ev.start_mark));
			goto out;
		}
		if (ev.type != YAML_STREAM_START_EVENT && ev.type != YAML_DOCUMENT_START_EVENT &&
		    ev.type != YAML_DOCUMENT_END_EVENT) {
			if (parse_node(y, &ev, 0, &root) < 0)
				goto out;
		}
		yaml_event_delete(&ev);
	}
	if (root && is_null_scalar(root)) {
		yamlutil_free(root);
		root = NULL;
	}
	if (!root)
		root = node_new(YAMLUTIL_MAP, 1);
	*out = root;
	root = NULL;
	rc = 0;
out:
	yaml_event_delete(&ev);
	yamlutil_free(root);
	return rc;
}

int yamlutil_load_string(const char *name, const char *text, size_t len, struct yamlutil_node **out,
		     char *err, size_t errlen)
{
	struct yparse y = { .name = name, .err = err, .errlen = errlen };
	int rc;

	if (len > YAML_MAX_FILE_BYTES) {
		snprintf(err, errlen, "%s:1: larger than %d bytes", name, YAML_MAX_FILE_BYTES);
		return -EINVAL;
	}
	if (!yaml_parser_initialize(&y.parser))
		abort();   /* libyaml's allocator failed: the rule of xmalloc */
	yaml_parser_set_input_string(&y.parser, (const unsigned char *)text, len);
	rc = parse_stream(&y, out);
	yaml_parser_delete(&y.parser);
	return rc;
}

int yamlutil_load_file(const char *path, struct yamlutil_node **out, char *err, size_t errlen)
{
	char *text = NULL;
	size_t len = 0;
	struct stat st;
	int fd, rc = -EINVAL;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -EINVAL;
	}
	if (fstat(fd, &st) < 0) {
		snprintf(err, errlen, "%s: fstat: %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		goto out;
	}
	if (st.st_size > YAML_MAX_FILE_BYTES) {
		snprintf(err, errlen, "%s: larger than %d bytes", path, YAML_MAX_FILE_BYTES);
		goto out;
	}
	/* One byte more than the cap, so that a file growing under us is caught. */
	text = xmalloc(YAML_MAX_FILE_BYTES + 1);
	while (len < YAML_MAX_FILE_BYTES + 1) {
		ssize_t n = read(fd, text + len, YAML_MAX_FILE_BYTES + 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(err, errlen, "%s: read: %s", path, strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	rc = yamlutil_load_string(path, text, len, out, err, errlen);
out:
	free(text);
	close(fd);
	return rc;
}

const struct yamlutil_node *yamlutil_get(const struct yamlutil_node *map, const char *key)
{
	int i;

	if (!map || map->type != YAMLUTIL_MAP)
		return NULL;
	i = find_key(map, key);
	return i < 0 ? NULL : map->items[i];
}

/* "file:line: key: " prefix, then the reason. */
static int fail(char *err, size_t errlen, const char *file, const struct yamlutil_node *n,
		const char *key, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static int fail(char *err, size_t errlen, const char *file, const struct yamlutil_node *n,
		const char *key, const char *fmt, ...)
{
	va_list ap;
	int off;

	off = snprintf(err, errlen, "%s:%d: %s%s", file, n ? n->line : 0, key ? key : "",
		       key ? ": " : "");
	if (off < 0 || (size_t)off >= errlen)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(err + off, errlen - (size_t)off, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static const char *type_name(const struct yamlutil_node *n)
{
	if (n->type == YAMLUTIL_MAP)
		return "a mapping";
	if (n->type == YAMLUTIL_SEQ)
		return "a list";
	return is_null_scalar(n) ? "nothing" : "a single value";
}

int yamlutil_str(const struct yamlutil_node *n, const char *file, const char *key, char **out,
	      char *err, size_t errlen)
{
	char *s;

	if (!n || n->type != YAMLUTIL_SCALAR || is_null_scalar(n))
		return fail(err, errlen, file, n, key, "expected a string, found %s",
			    n ? type_name(n) : "nothing");
	s = xstrdup(n->scalar);
	*out = s;
	return 0;
}

static int parse_digits(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return 0;
}

int yamlutil_u64(const struct yamlutil_node *n, const char *file, const char *key, uint64_t min,
	      uint64_t max, uint64_t *out, char *err, size_t errlen)
{
	uint64_t v = 0;
	int rc;

	if (!n || n->type != YAMLUTIL_SCALAR || is_null_scalar(n))
		return fail(err, errlen, file, n, key, "expected a whole number, found %s",
			    n ? type_name(n) : "nothing");
	rc = parse_digits(n->scalar, &v);
	if (rc == -EINVAL)
		return fail(err, errlen, file, n, key, "'%s' is not a whole number", n->scalar);
	if (rc < 0 || v > max)
		return fail(err, errlen, file, n, key, "%s is above the maximum %llu", n->scalar,
			    (unsigned long long)max);
	if (v < min)
		return fail(err, errlen, file, n, key, "%s is below the minimum %llu", n->scalar,
			    (unsigned long long)min);
	*out = v;
	return 0;
}

int yamlutil_seconds_ms(const struct yamlutil_node *n, const char *file, const char *key,
		     uint64_t max_ms, uint64_t *out, char *err, size_t errlen)
{
	char whole[24];
	const char *dot;
	uint64_t sec = 0, ms = 0;
	size_t wlen, flen;

	if (!n || n->type != YAMLUTIL_SCALAR || is_null_scalar(n))
		return fail(err, errlen, file, n, key, "expected seconds, found %s",
			    n ? type_name(n) : "nothing");
	dot = strchr(n->scalar, '.');
	wlen = dot ? (size_t)(dot - n->scalar) : strlen(n->scalar);
	flen = dot ? strlen(dot + 1) : 0;
	if (wlen == 0 || wlen >= sizeof(whole) || (dot && (flen == 0 || flen > 3)))
		goto bad;
	memcpy(whole, n->scalar, wlen);
	whole[wlen] = '\0';
	if (parse_digits(whole, &sec) == -EINVAL)
		goto bad;
	for (size_t i = 0; i < 3; i++) {
		char c = i < flen ? dot[1 + i] : '0';

		if (c < '0' || c > '9')
			goto bad;
		ms = ms * 10 + (uint64_t)(c - '0');
	}
	if (sec > max_ms / 1000 || sec * 1000 + ms > max_ms)
		return fail(err, errlen, file, n, key, "%ss is above the maximum %llu.%03llus",
			    n->scalar, (unsigned long long)(max_ms / 1000),
			    (unsigned long long)(max_ms % 1000));
	*out = sec * 1000 + ms;
	return 0;
bad:
	return fail(err, errlen, file, n, key,
		    "'%s' is not a number of seconds (e.g. 2 or 2.5, at most 3 decimals)",
		    n->scalar);
}

int yamlutil_bool(const struct yamlutil_node *n, const char *file, const char *key, bool *out,
	       char *err, size_t errlen)
{
	static const char *const yes[] = { "true", "yes", "on" };
	static const char *const no[] = { "false", "no", "off" };

	if (n && n->type == YAMLUTIL_SCALAR) {
		for (size_t i = 0; i < 3; i++) {
			if (!strcasecmp(n->scalar, yes[i])) {
				*out = true;
				return 0;
			}
			if (!strcasecmp(n->scalar, no[i])) {
				*out = false;
				return 0;
			}
		}
	}
	if (n && n->type == YAMLUTIL_SCALAR && !is_null_scalar(n))
		return fail(err, errlen, file, n, key, "'%s' is not true or false", n->scalar);
	return fail(err, errlen, file, n, key, "expected true or false, found %s",
		    n ? type_name(n) : "nothing");
}

/* A null value (a key with nothing after it) is an empty list. */
int yamlutil_strv(const struct yamlutil_node *n, const char *file, const char *key, char ***out,
	       char *err, size_t errlen)
{
	size_t len = 0;
	char **v;

	if (n && is_null_scalar(n)) {
		len = 0;
	} else if (!n || n->type != YAMLUTIL_SEQ) {
		return fail(err, errlen, file, n, key, "expected a list, found %s",
			    n ? type_name(n) : "nothing");
	} else {
		len = n->n;
	}
	/* filled in order, so that the vector ends at the first string not read */
	v = xcalloc(len + 1, sizeof(*v));
	for (size_t i = 0; i < len; i++) {
		if (yamlutil_str(n->items[i], file, key, &v[i], err, errlen) < 0) {
			strv_free(v);
			return -EINVAL;
		}
	}
	*out = v;
	return 0;
}
