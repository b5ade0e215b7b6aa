#include "autoconf.h"

/*
 * A Piston request's files, laid out as Piston lays them out. job.js
 * writes each file under its own name, path.join'ed into the job's
 * directory (directories made on the way, a path that climbs out
 * refused), an unnamed one as file<index>.code, the later of two files
 * of one name over the earlier; its compile scripts then rename what
 * they build to what the compiler wants (gcc's adds ".c"). goboxd does
 * both here, before anything touches the disk, so that the job model
 * holds the files as the language's commands will find them.
 */
#include "worker/http/api_piston_files.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base64.h"
#include "common/lang/validate.h"
#include "common/util.h"

/* ---- the body, as v2.js reads it ---- */

int api_piston_files_refuse(struct req_error *e, const char *code, const char *fmt, ...)
{
	va_list ap;

	e->http_status = 400;
	snprintf(e->code, sizeof(e->code), "%s", code);
	e->path[0] = '\0';
	va_start(ap, fmt);
	vsnprintf(e->message, sizeof(e->message), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

const cJSON *api_piston_files_field(const cJSON *o, const char *key)
{
	const cJSON *v, *last = NULL;

	if (!cJSON_IsObject(o))
		return NULL;
	cJSON_ArrayForEach(v, o) {
		if (v->string && strcmp(v->string, key) == 0)
			last = v;
	}
	return last && !cJSON_IsNull(last) ? last : NULL;
}

bool api_piston_files_falsy(const cJSON *v)
{
	return !v || cJSON_IsFalse(v) || (cJSON_IsNumber(v) && v->valuedouble == 0) ||
	       (cJSON_IsString(v) && !v->valuestring[0]);
}

enum encoding { ENC_UTF8, ENC_BASE64, ENC_HEX };

/* Unknown encodings are utf8, as Job's constructor makes them. */
static enum encoding encoding_of(const cJSON *f)
{
	const cJSON *v = api_piston_files_field(f, "encoding");

	if (cJSON_IsString(v) && !strcmp(v->valuestring, "base64"))
		return ENC_BASE64;
	if (cJSON_IsString(v) && !strcmp(v->valuestring, "hex"))
		return ENC_HEX;
	return ENC_UTF8;
}

bool api_piston_files_have_code(const cJSON *files)
{
	const cJSON *f;

	cJSON_ArrayForEach(f, files) {
		const cJSON *v = api_piston_files_field(f, "encoding");

		if (api_piston_files_falsy(v) ||
		    (cJSON_IsString(v) && !strcmp(v->valuestring, "utf8")))
			return true;
	}
	return false;
}

/* ---- contents: Node's Buffer.from(content, encoding) ---- */

/* Node reads the URL-safe alphabet's two characters as well. */
static int node_base64_value(unsigned char c)
{
	if (c == '-')
		return 62;
	if (c == '_')
		return 63;
	return base64_value(c);
}

/*
 * Piston never refuses an encoding's content: Node decodes base64 from
 * both alphabets, skipping any other byte and stopping at the first '=',
 * and hex two digits at a time up to the first pair that is not one.
 */
static char *node_base64(const char *s, size_t n, size_t *len)
{
	char *out = xmalloc(n / 4 * 3 + 4);
	uint32_t acc = 0;
	unsigned bits = 0;
	size_t o = 0;

	for (size_t i = 0; i < n && s[i] != '='; i++) {
		int v = node_base64_value((unsigned char)s[i]);

		if (v < 0)
			continue;
		acc = (acc << 6) | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (char)(acc >> bits);
			acc &= (1u << bits) - 1;
		}
	}
	out[o] = '\0';
	*len = o;
	return out;
}

static char *node_hex(const char *s, size_t n, size_t *len)
{
	char *out = xmalloc(n / 2 + 1);
	size_t o = 0;

	for (size_t i = 0; i + 1 < n; i += 2) {
		int hi = hex_digit_value(s[i]), lo = hex_digit_value(s[i + 1]);

		if (hi < 0 || lo < 0)
			break;
		out[o++] = (char)(hi << 4 | lo);
	}
	out[o] = '\0';
	*len = o;
	return out;
}

/* ---- the layout ---- */

/* One file of the request, as it will be written. */
struct pfile {
	char *name;
	char *data;
	size_t len;
	bool code;    /* what Job counts as utf8: what the compile scripts build */
	bool gone;    /* a later file of the same name is written over it */
};

struct layout {
	const struct config *cfg;
	const struct json_body_marker *m;
	struct job_request *r;
	struct req_error *e;
	struct pfile *f;
	size_t n, entry;
};

/* One part of a path, by Codize's byte rule (any byte but '/' and NUL). */
static int check_part(struct layout *y, size_t i, const char *part, size_t len, bool first)
{
	char bad;

	switch (validate_filename_check(&validate_filename_codize, part, len, &bad)) {
	case VALIDATE_FILENAME_TOO_LONG:
		return api_piston_files_refuse(y->e, "invalid_filename",
					       "files[%zu].name is longer than %zu bytes", i,
					       validate_filename_codize.max_len);
	case VALIDATE_FILENAME_BAD_FIRST:
		if (first)
			return api_piston_files_refuse(y->e, "invalid_filename",
						       "files[%zu].name must not start with '%c'", i,
						       bad);
		return api_piston_files_refuse(y->e, "invalid_filename",
					       "files[%zu].name must not hold a directory or file "
					       "name that starts with '%c'", i, bad);
	default:
		return 0;
	}
}

/*
 * path.join(submission_dir, name) made relative again, as job.js does:
 * empty and "." parts dropped, ".." taking the part before it, a leading
 * '/' meaning nothing. What climbs out is refused in the words Piston
 * throws them in (it then answers 500), what names no file too.
 */
static int normalize(struct layout *y, size_t i, const char *name, size_t len, char **out)
{
	size_t cap = len + 1, o = 0, depth = 0, starts[VALIDATE_PATH_MAX_DEPTH + 1];
	char *p = xmalloc(cap);
	const char *s = name, *end = name + len;
	int rc = -EINVAL;

	if (memchr(name, '\0', len)) {
		api_piston_files_refuse(y->e, "invalid_filename",
					"files[%zu].name must not contain a NUL byte", i);
		goto out;
	}
	while (s < end) {
		const char *slash = memchr(s, '/', (size_t)(end - s));
		size_t n = (size_t)((slash ? slash : end) - s);

		if (n == 2 && !memcmp(s, "..", 2)) {
			if (depth == 0) {
				api_piston_files_refuse(y->e, "invalid_filename",
							"File path \"%.200s\" tries to escape parent "
							"directory: ..", name);
				goto out;
			}
			o = starts[--depth];
		} else if (n > 0 && !(n == 1 && *s == '.')) {
			if (depth == VALIDATE_PATH_MAX_DEPTH) {
				api_piston_files_refuse(y->e, "invalid_filename",
							"files[%zu].name is more than %d names deep", i,
							VALIDATE_PATH_MAX_DEPTH);
				goto out;
			}
			if (check_part(y, i, s, n, depth == 0) < 0)
				goto out;
			starts[depth++] = o;
			if (o > 0)
				p[o++] = '/';
			memcpy(p + o, s, n);
			o += n;
		}
		s += n + (slash ? 1 : 0);
	}
	p[o] = '\0';
	if (o == 0)
		api_piston_files_refuse(y->e, "invalid_filename",
					"files[%zu].name '%.200s' names no file", i, name);
	else if (o > VALIDATE_PATH_MAX_LEN)
		api_piston_files_refuse(y->e, "invalid_filename",
					"files[%zu].name is longer than %d bytes", i,
					VALIDATE_PATH_MAX_LEN);
	else
		rc = 0;
out:
	if (rc == 0)
		*out = p;
	else
		free(p);
	return rc;
}

/* File i's name as given and normalized, or Job's file<i>.code. */
static int given_name(struct layout *y, const cJSON *f, size_t i, char **name)
{
	const cJSON *v = api_piston_files_field(f, "name");
	size_t len;
	char *raw;
	int rc;

	if (api_piston_files_falsy(v)) {
		*name = xasprintf("file%zu.code", i);
		return 0;
	}
	if (!cJSON_IsString(v))
		return api_piston_files_refuse(y->e, "invalid_filename",
					       "files[%zu].name must be a string", i);
	raw = json_body_bytes(v, y->m, &len);
	rc = normalize(y, i, raw, len, name);
	free(raw);
	return rc;
}

/*
 * The name a compile script gives a file it builds: its own when it has
 * the extension the compiler wants; Piston's ".code" replaced by it
 * (gcc's D and Fortran); else the extension added (gcc's C, as `rename
 * 's/$/\.c/'`), to the entry always, to another file only when its name
 * has no extension of its own (a header or a text file is not built).
 */
static char *with_extension(char *name, const char *ext, bool entry)
{
	const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
	size_t n = strlen(name), e = strlen(ext);
	char *out;

	if (n > e && !strcmp(name + n - e, ext))
		return name;
	if (n > 5 && !strcmp(name + n - 5, ".code") && name + n - 5 > base) {
		name[n - 5] = '\0';
		out = xasprintf("%s%s", name, ext);
	} else if (entry || !strchr(base, '.')) {
		out = xasprintf("%s%s", name, ext);
	} else {
		return name;
	}
	free(name);
	return out;
}

/*
 * The entry's name where the language's compiler reads something from
 * it: a language with a default name (Kotlin: the class of top-level
 * functions follows it) keeps the request's when it is a /run name with
 * the default's extension, else takes the default; one whose source
 * declares its name (Java's public class) takes what the source
 * declares, whatever the request says. Others keep the request's name.
 */
static char *entry_name(const struct lang *l, char *given, const char *data)
{
	const char *ext = l->source_default ? strrchr(l->source_default, '.') : NULL;
	size_t glen = strlen(given);
	char why[128];
	bool valid = validate_filename(given, glen, why, sizeof(why)) == 0;
	char *name;

	if (!l->source_from_request)
		return given;
	if (l->source_default && valid &&
	    (!ext || ext == l->source_default ||
	     (glen > strlen(ext) && !strcmp(given + glen - strlen(ext), ext))))
		return given;
	name = request_default_source(l, data);
	if (!name && valid)
		return given;
	free(given);
	return name;
}

/* File i's bytes, decoded as Node would, within cap. */
static int content(struct layout *y, const cJSON *f, size_t i, size_t cap, struct pfile *out)
{
	size_t rlen;
	char *raw = json_body_bytes(api_piston_files_field(f, "content"), y->m, &rlen);

	switch (encoding_of(f)) {
	case ENC_BASE64:
		out->data = node_base64(raw, rlen, &out->len);
		free(raw);
		break;
	case ENC_HEX:
		out->data = node_hex(raw, rlen, &out->len);
		free(raw);
		break;
	case ENC_UTF8:
		out->data = raw;
		out->len = rlen;
		out->code = true;
		break;
	}
	if (json_body_over_cap(out->len, cap))
		return api_piston_files_refuse(y->e, "file_too_large",
					       "files[%zu].content cannot exceed the configured "
					       "limit of %zu bytes", i, cap);
	return 0;
}

/* File i: its checked name and its bytes, named as the compile script names it. */
static int read_file(struct layout *y, const cJSON *f, size_t i)
{
	const struct lang *l = y->r->lang;
	struct pfile *p = &y->f[i];
	bool entry = i == y->entry;

	if (given_name(y, f, i, &p->name) < 0 ||
	    content(y, f, i, entry ? y->cfg->max_source_bytes : y->cfg->max_file_bytes, p) < 0)
		return -EINVAL;
	if (p->code && l->piston_extension)
		p->name = with_extension(p->name, l->piston_extension, entry);
	if (entry && !(p->name = entry_name(l, p->name, p->data)))
		return api_piston_files_refuse(y->e, "invalid_filename",
					       "files[%zu].name is required: this runtime cannot "
					       "name its entry file", i);
	return 0;
}

/*
 * Two files of one name: job.js writes the later over the earlier, so
 * the earlier is gone (and the entry, run by its name, runs the later
 * one's bytes). A file where another needs a directory, or one in the
 * build's own output's place, cannot be laid out: Piston fails (500),
 * goboxd refuses.
 */
static int resolve_names(struct layout *y)
{
	const char *artifact = y->r->artifact;

	for (size_t i = 0; i < y->n; i++) {
		const char *a = y->f[i].name;

		if (artifact && validate_paths_clash(a, artifact))
			return api_piston_files_refuse(y->e, "invalid_filename",
						       "files[%zu].name '%.200s' is the name of the "
						       "program this runtime builds", i, a);
		for (size_t k = i + 1; k < y->n && !y->f[i].gone; k++) {
			if (!strcmp(a, y->f[k].name))
				y->f[i].gone = true;
			else if (validate_paths_clash(a, y->f[k].name))
				return api_piston_files_refuse(
					y->e, "invalid_filename",
					"files[%zu].name '%.200s' and files[%zu].name '%.200s' "
					"cannot both be written: one is the other's directory",
					i, a, k, y->f[k].name);
		}
	}
	return 0;
}

/* The last file of the entry's name, which is what the entry runs. */
static size_t entry_bytes(const struct layout *y)
{
	size_t last = y->entry;

	for (size_t k = y->entry + 1; k < y->n; k++)
		if (!strcmp(y->f[k].name, y->f[y->entry].name))
			last = k;
	return last;
}

/* Into the job: the entry first, the others in the request's order. */
static void move_files(struct layout *y)
{
	struct job_request *r = y->r;
	size_t last = entry_bytes(y);

	r->files = xcalloc(y->n, sizeof(*r->files));
	r->files[0] = (struct req_file){ y->f[y->entry].name, y->f[last].data, y->f[last].len };
	y->f[y->entry].name = NULL;
	y->f[last].data = NULL;
	r->nfiles = 1;
	for (size_t i = 0; i < y->n; i++) {
		struct pfile *p = &y->f[i];

		if (p->gone || i == y->entry || !strcmp(p->name, r->files[0].name))
			continue;
		r->files[r->nfiles++] = (struct req_file){ p->name, p->data, p->len };
		p->name = p->data = NULL;
	}
}

/* The first file Job counts as utf8 is the entry. */
static size_t entry_index(const cJSON *files)
{
	const cJSON *f;
	size_t i = 0;

	cJSON_ArrayForEach(f, files) {
		if (encoding_of(f) == ENC_UTF8)
			return i;
		i++;
	}
	return 0;
}

int api_piston_files_layout(const cJSON *files, const struct config *cfg,
			    const struct json_body_marker *m, struct job_request *r,
			    struct req_error *e)
{
	struct layout y = { .cfg = cfg, .m = m, .r = r, .e = e,
			    .n = (size_t)cJSON_GetArraySize(files), .entry = entry_index(files) };
	const struct lang *l = r->lang;
	const cJSON *f;
	size_t i = 0;
	int rc = -EINVAL;

	y.f = xcalloc(y.n ? y.n : 1, sizeof(*y.f));
	cJSON_ArrayForEach(f, files) {
		if (read_file(&y, f, i++) < 0)
			goto out;
	}
	if (l->artifact_from_request) {
		struct req_file src = { y.f[y.entry].name, y.f[y.entry].data, y.f[y.entry].len };

		r->artifact = request_default_artifact(l, &src);
	} else if (l->artifact) {
		r->artifact = xstrdup(l->artifact);
	}
	if (resolve_names(&y) < 0)
		goto out;
	move_files(&y);
	rc = 0;
out:
	for (size_t k = 0; k < y.n; k++) {
		free(y.f[k].name);
		free(y.f[k].data);
	}
	free(y.f);
	return rc;
}
