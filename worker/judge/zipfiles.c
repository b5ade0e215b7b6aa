#include "autoconf.h"

#include "worker/judge/zipfiles.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zip.h>

#include "common/lang/validate.h"
#include "common/util.h"

/* The end of central directory record alone is this long: nothing shorter is a zip. */
#define EOCD_LEN 22
/* The MS-DOS attribute byte's directory bit, which every zip tool sets. */
#define DOS_ATTR_DIR 0x10u
/* Bytes of an entry's name shown in a message, and room for them escaped. */
#define NAME_SHOWN 48
#define NAME_SHOWN_SIZE (NAME_SHOWN * 4 + sizeof("..."))

/* The rule of xmalloc holds for libzip's own allocations too. */
static void check_memory(const zip_error_t *ze)
{
	if (zip_error_code_zip(ze) == ZIP_ER_MEMORY)
		abort();
}

/*
 * A refused entry's name goes back to the client, and its bytes may be
 * anything: printable ASCII is shown as it is, any other byte (and '"',
 * '\') as \xNN, and a long name is cut.
 */
static void quote_name(char *out, size_t outlen, const char *name)
{
	size_t o = 0, i;

	for (i = 0; i < NAME_SHOWN && name[i]; i++) {
		unsigned char c = (unsigned char)name[i];

		if (o + 4 + sizeof("...") > outlen)
			break;
		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
			out[o++] = (char)c;
		else
			o += (size_t)snprintf(out + o, outlen - o, "\\x%02x", c);
	}
	if (name[i]) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
}

static int refuse(char *err, size_t errlen, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int refuse(char *err, size_t errlen, const char *name, const char *fmt, ...)
{
	char shown[NAME_SHOWN_SIZE], why[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	quote_name(shown, sizeof(shown), name);
	snprintf(err, errlen, "entry \"%s\": %s", shown, why);
	return -EINVAL;
}

/*
 * Not ZIP_CHECKCONS: libzip 1.7's comparison of local and central headers
 * refuses what Info-ZIP's zip writes to a pipe and macOS's Archive
 * Utility writes (a data descriptor, with some sizes in the local header
 * too). What that check guards against is caught here anyway: only the
 * central directory is believed, every read is capped by it and ends in
 * libzip's CRC and size checks, and duplicate names are looked for.
 */
static int open_archive(const void *data, size_t len, zip_t **out, char *err, size_t errlen)
{
	zip_source_t *src;
	zip_error_t ze;
	zip_t *za;
	int r = -EINVAL;

	/* libzip would take zero bytes for an empty archive */
	if (len < EOCD_LEN) {
		snprintf(err, errlen, "not a zip archive");
		return -EINVAL;
	}
	zip_error_init(&ze);
	src = zip_source_buffer_create(data, len, 0, &ze);
	if (!src) {
		check_memory(&ze);
		snprintf(err, errlen, "zip_source_buffer_create: %s", zip_error_strerror(&ze));
		goto out;
	}
	za = zip_open_from_source(src, ZIP_RDONLY, &ze);
	if (!za) {
		zip_source_free(src);
		check_memory(&ze);
		if (zip_error_code_zip(&ze) == ZIP_ER_NOZIP)
			snprintf(err, errlen, "not a zip archive");
		else
			snprintf(err, errlen, "not a valid zip archive: %s", zip_error_strerror(&ze));
		goto out;
	}
	*out = za;
	r = 0;
out:
	zip_error_fini(&ze);
	return r;
}

/* Whether the entry is anything but a regular file or a directory, by
 * its attributes; *dir says which of the two. */
static const char *entry_type_problem(zip_t *za, zip_uint64_t i, bool *dir)
{
	zip_uint8_t opsys;
	zip_uint32_t attr, mode;

	if (zip_file_get_external_attributes(za, i, 0, &opsys, &attr) < 0)
		return "has no attributes";
	if (opsys == ZIP_OPSYS_UNIX) {
		/* a st_mode in the upper half; a type of 0 means a file */
		mode = (attr >> 16) & S_IFMT;
		if (mode == S_IFLNK)
			return "is a symbolic link";
		*dir |= mode == S_IFDIR;
		if (mode != 0 && mode != S_IFREG && mode != S_IFDIR)
			return "is not a regular file";
	}
	*dir |= (attr & DOS_ATTR_DIR) != 0;
	return NULL;
}

/* An entry as checked: its path in the job directory, and what it is. */
struct entry {
	char *path;        /* "./" and a directory's trailing '/' taken off */
	bool dir;
	size_t size;
};

/*
 * The path an entry's name gives, as unzip takes it: leading "./" are
 * nothing, a trailing '/' says it is a directory. NULL (with the reason)
 * when what is left is not a path validate_path accepts.
 */
static char *entry_path(const char *name, bool *dir, char *why, size_t whylen)
{
	size_t len;
	char *path;

	while (name[0] == '.' && name[1] == '/')
		name += 2;
	len = strlen(name);
	if (len > 0 && name[len - 1] == '/') {
		*dir = true;
		len--;
	}
	if (validate_path(name, len, why, whylen) < 0)
		return NULL;
	path = xmalloc(len + 1);
	memcpy(path, name, len);
	path[len] = '\0';
	return path;
}

/*
 * Everything the central directory says about entry i, checked before any
 * data is read: a bad entry at the end of a big archive costs nothing to
 * refuse. What it is goes into *e, its declared size onto *total.
 */
static int check_entry(zip_t *za, zip_uint64_t i, const struct zipfiles_bounds *b,
		       size_t *total, struct entry *e, char *err, size_t errlen)
{
	const char *name, *problem;
	char why[160];
	zip_stat_t st;

	/* raw: the bytes a file would be named by, not libzip's CP437 guess */
	if (zip_stat_index(za, i, ZIP_FL_ENC_RAW, &st) < 0) {
		snprintf(err, errlen, "entry %llu: %s", (unsigned long long)i, zip_strerror(za));
		return -EINVAL;
	}
	name = st.name;
	problem = entry_type_problem(za, i, &e->dir);
	if (problem)
		return refuse(err, errlen, name, "%s", problem);
	e->path = entry_path(name, &e->dir, why, sizeof(why));
	if (!e->path)
		return refuse(err, errlen, name, "%s", why);
	if ((st.valid & ZIP_STAT_ENCRYPTION_METHOD) && st.encryption_method != ZIP_EM_NONE)
		return refuse(err, errlen, name, "is encrypted");
	if (e->dir) {
		if ((st.valid & ZIP_STAT_SIZE) && st.size > 0)
			return refuse(err, errlen, name, "is a directory with data");
		return 0;
	}
	if ((st.valid & ZIP_STAT_COMP_METHOD) && !zip_compression_method_supported(st.comp_method, 0))
		return refuse(err, errlen, name, "compression method %u is not supported",
			      (unsigned)st.comp_method);
	if (!(st.valid & ZIP_STAT_SIZE))
		return refuse(err, errlen, name, "has no size");
	/* max_file below SIZE_MAX leaves room for the NUL */
	if (st.size > b->max_file || st.size >= SIZE_MAX)
		return refuse(err, errlen, name, "larger than %zu bytes", b->max_file);
	if (st.size > b->max_total - *total) {
		snprintf(err, errlen, "more than %zu bytes in all", b->max_total);
		return -EINVAL;
	}
	*total += (size_t)st.size;
	e->size = (size_t)st.size;
	return 0;
}

/*
 * No two entries may name the same file, nor a file where another puts a
 * directory ("a" and "a/b"); directories may repeat, and hold files.
 */
static int check_clashes(const struct entry *e, size_t n, char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++)
		for (size_t k = i + 1; k < n; k++) {
			if (!validate_paths_clash(e[i].path, e[k].path) || (e[i].dir && e[k].dir))
				continue;
			if (e[i].dir && strlen(e[i].path) < strlen(e[k].path))
				continue; /* a file inside a directory */
			if (e[k].dir && strlen(e[k].path) < strlen(e[i].path))
				continue;
			return refuse(err, errlen, e[k].path, "clashes with the entry \"%.48s\"",
				      e[i].path);
		}
	return 0;
}

/*
 * Read entry i, declared f->len bytes long, into f. At most one byte more
 * than declared is ever inflated, so an archive that lies about its sizes
 * (a bomb whose header says small) costs no more than the bound. A short
 * entry ends in libzip's size check (ZIP_ER_INCONS) or in got < len; a
 * full one is checked against its CRC as libzip meets its end.
 */
static int read_entry(zip_t *za, zip_uint64_t i, const struct entry *e, struct req_file *f,
		      char *err, size_t errlen)
{
	const char *name = e->path;
	char *buf = NULL;
	zip_file_t *zf;
	size_t got = 0;
	int r = -EINVAL;

	f->len = e->size;
	zf = zip_fopen_index(za, i, 0);
	if (!zf) {
		check_memory(zip_get_error(za));
		return refuse(err, errlen, name, "%s", zip_strerror(za));
	}
	buf = xmalloc(f->len + 1);
	while (got <= f->len) {
		zip_int64_t n = zip_fread(zf, buf + got, f->len + 1 - got);

		if (n < 0) {
			const zip_error_t *ze = zip_file_get_error(zf);

			check_memory(ze);
			if (zip_error_code_zip(ze) == ZIP_ER_INCONS)
				refuse(err, errlen, name, "sizes do not match");
			else if (zip_error_code_zip(ze) == ZIP_ER_CRC)
				refuse(err, errlen, name, "damaged (CRC error)");
			else
				refuse(err, errlen, name, "%s", zip_file_strerror(zf));
			goto out;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	if (got != f->len) {
		refuse(err, errlen, name, "sizes do not match");
		goto out;
	}
	buf[got] = '\0';
	f->name = xstrdup(name);
	f->data = buf;
	buf = NULL;
	r = 0;
out:
	free(buf);
	zip_fclose(zf);
	return r;
}

static void free_files(struct req_file *files, size_t n)
{
	if (!files)
		return;
	for (size_t i = 0; i < n; i++) {
		free(files[i].name);
		free(files[i].data);
	}
	free(files);
}

int zipfiles_unpack(const void *data, size_t len, const struct zipfiles_bounds *b,
		    struct req_file **files, size_t *nfiles, char *err, size_t errlen)
{
	struct req_file *out = NULL;
	struct entry *e = NULL;
	zip_int64_t ne;
	size_t n = 0, nout = 0, total = 0;
	zip_t *za;
	int r;

	r = open_archive(data, len, &za, err, errlen);
	if (r < 0)
		return r;
	r = -EINVAL;
	ne = zip_get_num_entries(za, 0);
	if ((zip_uint64_t)ne > b->max_files) {
		snprintf(err, errlen, "more than %zu files", b->max_files);
		goto out;
	}
	n = (size_t)ne;
	e = xcalloc(n + 1, sizeof(*e));
	for (size_t i = 0; i < n; i++)
		if ((r = check_entry(za, i, b, &total, &e[i], err, errlen)) < 0)
			goto out;
	if ((r = check_clashes(e, n, err, errlen)) < 0)
		goto out;
	for (size_t i = 0; i < n; i++)
		nout += !e[i].dir;
	if (nout > 0)
		out = xcalloc(nout, sizeof(*out));
	nout = 0;
	for (size_t i = 0; i < n; i++) {
		if (e[i].dir)
			continue;
		if ((r = read_entry(za, i, &e[i], &out[nout], err, errlen)) < 0)
			goto out;
		nout++;
	}
	*files = out;
	*nfiles = nout;
	out = NULL;
	r = 0;
out:
	free_files(out, nout);
	for (size_t i = 0; i < n; i++)
		free(e[i].path);
	free(e);
	zip_discard(za);
	return r;
}

/* The archive libzip wrote into src, read back whole. */
static int read_source(zip_source_t *src, char **out, size_t *len)
{
	zip_stat_t st;
	zip_int64_t got;
	char *buf;

	if (zip_source_open(src) < 0)
		return -EIO;
	zip_stat_init(&st);
	if (zip_source_stat(src, &st) < 0 || !(st.valid & ZIP_STAT_SIZE)) {
		zip_source_close(src);
		return -EIO;
	}
	buf = xmalloc(st.size ? st.size : 1);
	got = zip_source_read(src, buf, st.size);
	zip_source_close(src);
	if (got < 0 || (zip_uint64_t)got != st.size) {
		free(buf);
		return -EIO;
	}
	*out = buf;
	*len = (size_t)got;
	return 0;
}

int zipfiles_pack(const struct outfiles *f, char **out, size_t *len, char *err,
		  size_t errlen)
{
	zip_source_t *src;
	zip_error_t ze;
	zip_t *za;
	int r = -EIO;

	zip_error_init(&ze);
	src = zip_source_buffer_create(NULL, 0, 0, &ze);
	if (!src) {
		check_memory(&ze);
		snprintf(err, errlen, "zip_source_buffer_create: %s", zip_error_strerror(&ze));
		zip_error_fini(&ze);
		return -EIO;
	}
	/* kept past zip_close, which writes the archive into it */
	zip_source_keep(src);
	za = zip_open_from_source(src, ZIP_TRUNCATE, &ze);
	if (!za) {
		check_memory(&ze);
		snprintf(err, errlen, "zip_open_from_source: %s", zip_error_strerror(&ze));
		goto out;
	}
	for (size_t i = 0; i < f->n; i++) {
		const struct outfile *o = &f->v[i];
		zip_source_t *data = zip_source_buffer(za, o->data, o->len, 0);
		zip_int64_t at = data ? zip_file_add(za, o->path, data, ZIP_FL_ENC_UTF_8) : -1;

		/* once added, the data's source is the archive's to free */
		if (at < 0)
			zip_source_free(data);
		if (at < 0 || zip_file_set_external_attributes(za, (zip_uint64_t)at, 0,
							       ZIP_OPSYS_UNIX,
							       (S_IFREG | o->mode) << 16) < 0) {
			check_memory(zip_get_error(za));
			snprintf(err, errlen, "%s: %s", o->path, zip_strerror(za));
			zip_discard(za);
			goto out;
		}
	}
	if (zip_close(za) < 0) {
		check_memory(zip_get_error(za));
		snprintf(err, errlen, "zip_close: %s", zip_strerror(za));
		zip_discard(za);
		goto out;
	}
	r = read_source(src, out, len);
	if (r < 0)
		snprintf(err, errlen, "reading the archive back: %s",
			 zip_error_strerror(zip_source_error(src)));
out:
	zip_source_free(src);
	zip_error_fini(&ze);
	return r;
}
