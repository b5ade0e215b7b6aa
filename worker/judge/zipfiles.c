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

/* ---- the end records, read before libzip ---------------------------- */

/*
 * libzip 1.7 opens an archive by parsing every central record the end
 * record leads it to (and, when the count there is too small, every one
 * after it: Info-ZIP's count modulo 65536), and it does so for every end
 * record in the last 64 KiB, copying each one's comment. The count is
 * only compared with max_files after that: 219,000 records of an archive
 * that fits a request took the loop a second and 134 MiB. So the end
 * records, and the records they lead to, are read here first, as libzip
 * will read them, and never more than max_files + 1 records of them.
 */
#define EOCD_MAGIC 0x06054b50u
#define EOCD64_MAGIC 0x06064b50u
#define LOC64_MAGIC 0x07064b50u   /* the zip64 end record's locator */
#define CEN_MAGIC 0x02014b50u     /* a central record */
#define LOC_MAGIC 0x04034b50u     /* a local header */
#define EOCD64_LEN 56
#define LOC64_LEN 20
#define CEN_LEN 46
#define LOC_LEN 30
/* Where libzip looks for end records: a comment's most, the record, the locator. */
#define TAIL_LEN (65535 + EOCD_LEN + LOC64_LEN)
/* End records libzip would take a directory from: one, and a few more for
 * archives stored inside (their own end records may sit in the tail). */
#define MAX_ENDS 8

static uint32_t le16(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static uint32_t le32(const unsigned char *p)
{
	return le16(p) | le16(p + 2) << 16;
}

static uint64_t le64(const unsigned char *p)
{
	return le32(p) | (uint64_t)le32(p + 4) << 32;
}

/* The central directory an end record names. */
struct zipdir {
	uint64_t entries, offset, size;
	bool read;      /* libzip goes on to read its records */
};

/* The zip64 end record its locator at loc names, as libzip reads it:
 * false where libzip gives up on it before it allocates its entries. */
static bool read_end64(const unsigned char *z, size_t loc, struct zipdir *d)
{
	uint64_t at = le64(z + loc + 8);
	const unsigned char *p;

	if (at > loc || loc - at < EOCD64_LEN)
		return false;
	p = z + at;
	if (le32(p) != EOCD64_MAGIC || le64(p + 24) != le64(p + 32))
		return false;
	d->entries = le64(p + 32);
	d->size = le64(p + 40);
	d->offset = le64(p + 48);
	return d->entries <= d->size / CEN_LEN;
}

/*
 * The end record at at, as libzip reads it: false where libzip gives up on
 * it before it allocates (and fills) its entries: another disk, counts
 * that differ, a directory that does not end before its end record. It
 * reads the records too (d->read) when the comment is no longer than
 * what follows. Any doubt counts as true: a record taken here that libzip
 * refuses costs a refusal at worst, never a bypass.
 */
static bool read_end(const unsigned char *z, size_t len, size_t at, struct zipdir *d)
{
	const unsigned char *p = z + at;

	if (at >= LOC64_LEN && le32(p - LOC64_LEN) == LOC64_MAGIC) {
		if (!read_end64(z, at - LOC64_LEN, d))
			return false;
	} else {
		if (le32(p + 4) != 0 || le16(p + 8) != le16(p + 10))
			return false;
		d->entries = le16(p + 10);
		d->size = le32(p + 12);
		d->offset = le32(p + 16);
		if (d->offset > at || d->size > at - d->offset)
			return false;
	}
	d->read = d->offset <= at && d->size <= at - d->offset &&
		  le16(p + 20) <= len - at - EOCD_LEN;
	return true;
}

/* Where a central record's local header is: its own field, or its zip64
 * extra field when that says 0xffffffff; UINT64_MAX when neither says. */
static uint64_t local_offset(const unsigned char *rec, size_t xlen)
{
	const unsigned char *x = rec + CEN_LEN + le16(rec + 28);
	size_t skip = 0;

	if (le32(rec + 42) != UINT32_MAX)
		return le32(rec + 42);
	/* the zip64 field holds the 8-byte values in order, only those
	 * whose own field is 0xffffffff: sizes first */
	skip += le32(rec + 24) == UINT32_MAX ? 8 : 0;
	skip += le32(rec + 20) == UINT32_MAX ? 8 : 0;
	for (size_t i = 0; i + 4 <= xlen; i += 4 + le16(x + i + 2))
		if (le16(x + i) == 0x0001 && le16(x + i + 2) >= skip + 8 &&
		    i + 4 + skip + 8 <= xlen)
			return le64(x + i + 4 + skip);
	return UINT64_MAX;
}

/* An entry named by bytes that need not end in NUL, refused for n bytes
 * of extra fields (where: "" or " in its local header"). */
static int refuse_extra(char *err, size_t errlen, const unsigned char *name, size_t len,
			size_t n, const char *where)
{
	char shown[NAME_SHOWN + 2];

	len = len < sizeof(shown) - 1 ? len : sizeof(shown) - 1;
	memcpy(shown, name, len);
	shown[len] = '\0';
	return refuse(err, errlen, shown, "%zu bytes of extra fields%s, more than %d", n, where,
		      ZIPFILES_MAX_EXTRA);
}

/*
 * The extra fields of the central record at rec (avail bytes of the
 * archive from it) and of its entry's local header, held to
 * ZIPFILES_MAX_EXTRA. A local header that is not there is libzip's to
 * refuse, when the entry is read.
 */
static int check_extra(const unsigned char *z, size_t len, size_t at, char *err, size_t errlen)
{
	const unsigned char *rec = z + at;
	size_t avail = len - at, nlen = le16(rec + 28), xlen = le16(rec + 30);
	size_t shown = nlen < avail - CEN_LEN ? nlen : avail - CEN_LEN;
	uint64_t loc;

	if (xlen > ZIPFILES_MAX_EXTRA)
		return refuse_extra(err, errlen, rec + CEN_LEN, shown, xlen, "");
	if (CEN_LEN + nlen + xlen > avail)
		return 0;
	loc = local_offset(rec, xlen);
	if (loc >= len || len - loc < LOC_LEN || le32(z + loc) != LOC_MAGIC)
		return 0;
	if (le16(z + loc + 28) > ZIPFILES_MAX_EXTRA)
		return refuse_extra(err, errlen, rec + CEN_LEN, shown, le16(z + loc + 28),
				    " in its local header");
	return 0;
}

/*
 * The central records from d's offset on, as libzip will parse them:
 * every record that follows counts, not only those its size or its count
 * takes in (an Info-ZIP count is modulo 65536, and a record that overruns
 * the size is read whole). Their number goes into *found.
 */
static int walk_directory(const unsigned char *z, size_t len, const struct zipdir *d,
			  const struct zipfiles_bounds *b, size_t *found, char *err,
			  size_t errlen)
{
	uint64_t at = d->offset;
	size_t n = 0;
	int r;

	while (at < len && len - at >= CEN_LEN && le32(z + at) == CEN_MAGIC) {
		if (++n > b->max_files) {
			snprintf(err, errlen, "more than %zu files", b->max_files);
			return -EINVAL;
		}
		if ((r = check_extra(z, len, (size_t)at, err, errlen)) < 0)
			return r;
		at += CEN_LEN + (uint64_t)le16(z + at + 28) + le16(z + at + 30) +
		      le16(z + at + 32);
	}
	*found = n;
	return 0;
}

/*
 * Every end record libzip would take a directory from, and the records
 * that directory leads to, within the bounds: what libzip will then parse
 * is at most max_files records, once.
 */
static int check_ends(const unsigned char *z, size_t len, const struct zipfiles_bounds *b,
		      char *err, size_t errlen)
{
	size_t at = len > TAIL_LEN ? len - TAIL_LEN : 0, ends = 0, dirs = 0;
	const unsigned char magic[4] = { 'P', 'K', 5, 6 };
	const unsigned char *hit;

	while ((hit = memmem(z + at, len - EOCD_LEN + 4 - at, magic, sizeof(magic)))) {
		struct zipdir d;
		size_t found = 0;
		int r;

		at = (size_t)(hit - z) + 1;
		if (!read_end(z, len, at - 1, &d))
			continue;
		if (d.entries > b->max_files) {
			snprintf(err, errlen, "more than %zu files (its end record lists %llu)",
				 b->max_files, (unsigned long long)d.entries);
			return -EINVAL;
		}
		if (++ends > MAX_ENDS) {
			snprintf(err, errlen, "more than %d end of central directory records",
				 MAX_ENDS);
			return -EINVAL;
		}
		if (d.read && (r = walk_directory(z, len, &d, b, &found, err, errlen)) < 0)
			return r;
		/* two directories over records: what one tool shows, another
		 * need not */
		if (found && ++dirs > 1) {
			snprintf(err, errlen, "more than one central directory");
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * Not ZIP_CHECKCONS: libzip 1.7's comparison of local and central headers
 * refuses what Info-ZIP's zip writes to a pipe and macOS's Archive
 * Utility writes (a data descriptor, with some sizes in the local header
 * too). What that check guards against is caught here anyway: only the
 * central directory is believed, every read is capped by it and ends in
 * libzip's CRC and size checks, and duplicate names are looked for.
 */
static int open_archive(const void *data, size_t len, const struct zipfiles_bounds *b,
			zip_t **out, char *err, size_t errlen)
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
	if ((r = check_ends(data, len, b, err, errlen)) < 0)
		return r;
	r = -EINVAL;
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

	r = open_archive(data, len, b, &za, err, errlen);
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
