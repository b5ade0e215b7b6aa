/*
 * A zip archive a client sends with its job (Judge0's additional_files),
 * unpacked in memory with libzip into the job's files, within bounds: a
 * bomb, a path that leaves the job directory, a link, a device or an
 * archive that lies about its sizes is refused, never partly taken.
 */
#ifndef GOBOXD_ZIPFILES_H
#define GOBOXD_ZIPFILES_H

#include <stddef.h>

#include "worker/judge/outfiles.h"
#include "worker/judge/request.h"

/*
 * Bytes of extra fields one entry may carry, in its central record and in
 * its local header alike: libzip parses them into a list at open, four
 * bytes a field, so 64 KiB of them is 16,384 allocations an entry. What
 * zip tools write (timestamps, Unix ids, zip64 sizes, NTFS times) takes
 * under 100 bytes.
 */
#define ZIPFILES_MAX_EXTRA 1024

struct zipfiles_bounds {
	size_t max_files;   /* entries (files and directories) */
	size_t max_file;    /* bytes of one file, uncompressed */
	size_t max_total;   /* bytes of every file together, uncompressed */
};

/*
 * Unpack the len bytes of a zip archive into *files (*nfiles of them, in
 * archive order; each name and data malloc'd, data NUL-terminated beyond
 * len; free each with free() and the array too; an archive without files
 * gives NULL and 0). Every entry must be a regular file or a directory,
 * not encrypted, whose name (less leading "./", as unzip reads it) is a
 * path that validate_path accepts; no two files alike, and no file where
 * another entry puts a directory. Directories count among max_files;
 * they give no file of their own (the files inside them make them).
 * Before libzip reads the archive, its end records are read here: an
 * archive whose end record, or whose chain of central records, lists
 * more than max_files entries, that holds an entry with more than
 * ZIPFILES_MAX_EXTRA bytes of extra fields, more than one central
 * directory or end records by the dozen is refused at once, at a cost of
 * at most max_files records, whatever its size.
 * Every entry is checked before any is inflated, and none is inflated
 * past its declared size plus one byte. Returns 0, or -EINVAL (not a
 * zip, an entry refused, a bound passed, sizes or CRC that do not match
 * what was read) with the reason in err (it names the entry); *files and
 * *nfiles are then untouched. libzip's allocation failures abort, as
 * xmalloc's do.
 */
int zipfiles_unpack(const void *data, size_t len, const struct zipfiles_bounds *b,
		    struct req_file **files, size_t *nfiles, char *err, size_t errlen);

/*
 * A zip archive (deflated, Unix modes kept) of the files in f, into *out
 * (malloc'd, *len bytes). 0, or -EIO when libzip failed (its words in
 * err).
 */
int zipfiles_pack(const struct outfiles *f, char **out, size_t *len, char *err,
		  size_t errlen);

#endif
