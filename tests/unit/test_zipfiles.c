#include "autoconf.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zip.h>

#include "common/base64.h"
#include "worker/judge/zipfiles.h"

/*
 * Archives are made here with libzip's writer, then some are patched by
 * hand where a lie is wanted that no writer tells. The fixtures at the end
 * come from other writers (python's zipfile, Info-ZIP's zip).
 */

struct ent {
	const char *name;
	const void *data;
	size_t len;
	bool dir;           /* a directory entry (zip_dir_add adds the '/') */
	bool store;         /* no compression: the data sits as it is */
	zip_uint32_t mode;  /* a Unix st_mode for the attributes, 0: libzip's default */
	zip_uint32_t dos;   /* MS-DOS attributes, made by MS-DOS, when mode is 0 */
	bool encrypt;
	zip_uint16_t extra;        /* bytes of one extra field of its own (id 0x6666), 0: none */
	zip_flags_t extra_where;   /* ZIP_FL_CENTRAL, ZIP_FL_LOCAL or both */
};

static const struct zipfiles_bounds roomy = { 64, 1 << 20, 4 << 20 };

/* An archive of the entries, with comment (clen bytes, any) after its end record. */
static char *make_zip_commented(const struct ent *e, size_t n, const char *comment,
				zip_uint16_t clen, size_t *len)
{
	static zip_uint8_t extra[65535];
	zip_error_t ze;
	zip_source_t *src;
	zip_stat_t st;
	zip_t *za;
	char *out;

	zip_error_init(&ze);
	src = zip_source_buffer_create(NULL, 0, 0, &ze);
	cr_assert_not_null(src);
	zip_source_keep(src);
	za = zip_open_from_source(src, ZIP_TRUNCATE, &ze);
	cr_assert_not_null(za, "%s", zip_error_strerror(&ze));
	for (size_t i = 0; i < n; i++) {
		zip_int64_t idx;

		if (e[i].dir) {
			idx = zip_dir_add(za, e[i].name, 0);
		} else {
			zip_source_t *s = zip_source_buffer(za, e[i].data, e[i].len, 0);

			cr_assert_not_null(s);
			idx = zip_file_add(za, e[i].name, s, 0);
		}
		cr_assert_geq(idx, 0, "%s: %s", e[i].name, zip_strerror(za));
		cr_assert_eq(zip_set_file_compression(za, (zip_uint64_t)idx,
						      e[i].store ? ZIP_CM_STORE : ZIP_CM_DEFLATE, 0), 0);
		if (e[i].mode)
			cr_assert_eq(zip_file_set_external_attributes(za, (zip_uint64_t)idx, 0,
								      ZIP_OPSYS_UNIX,
								      e[i].mode << 16), 0);
		else if (e[i].dos)
			cr_assert_eq(zip_file_set_external_attributes(za, (zip_uint64_t)idx, 0,
								      ZIP_OPSYS_DOS, e[i].dos), 0);
		if (e[i].encrypt)
			cr_assert_eq(zip_file_set_encryption(za, (zip_uint64_t)idx,
							     ZIP_EM_AES_256, "secret"), 0);
		if (e[i].extra)
			cr_assert_eq(zip_file_extra_field_set(za, (zip_uint64_t)idx, 0x6666,
							      ZIP_EXTRA_FIELD_NEW, extra,
							      e[i].extra, e[i].extra_where), 0,
				     "%s", zip_strerror(za));
	}
	if (comment) {
		/* libzip takes only a text: its bytes are put in below */
		char *text = malloc(clen);

		cr_assert_not_null(text);
		memset(text, 'c', clen);
		cr_assert_eq(zip_set_archive_comment(za, text, clen), 0, "%s", zip_strerror(za));
		free(text);
	}
	cr_assert_eq(zip_close(za), 0, "%s", zip_strerror(za));

	cr_assert_eq(zip_source_open(src), 0);
	cr_assert_eq(zip_source_stat(src, &st), 0);
	out = malloc(st.size);
	cr_assert_not_null(out);
	cr_assert_eq(zip_source_read(src, out, st.size), (zip_int64_t)st.size);
	zip_source_close(src);
	zip_source_free(src);
	zip_error_fini(&ze);
	*len = st.size;
	if (comment)
		memcpy(out + st.size - clen, comment, clen);
	return out;
}

static char *make_zip(const struct ent *e, size_t n, size_t *len)
{
	return make_zip_commented(e, n, NULL, 0, len);
}

static char *make_one(const char *name, const void *data, size_t len, bool store, size_t *zlen)
{
	struct ent e = { .name = name, .data = data, .len = len, .store = store };

	return make_zip(&e, 1, zlen);
}

static uint32_t get_le32(const char *p)
{
	const unsigned char *u = (const unsigned char *)p;

	return (uint32_t)u[0] | (uint32_t)u[1] << 8 | (uint32_t)u[2] << 16 | (uint32_t)u[3] << 24;
}

static void put_le32(char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (char)(v >> (8 * i));
}

/*
 * The headers of a one-entry archive with no comment: the local header at
 * 0, the central one where the end record (the last 22 bytes) says.
 */
static char *local_hdr(char *z)
{
	cr_assert_eq(get_le32(z), 0x04034b50u);
	return z;
}

static char *central_hdr(char *z, size_t len)
{
	char *eocd = z + len - 22;
	char *c;

	cr_assert_eq(get_le32(eocd), 0x06054b50u);
	c = z + get_le32(eocd + 16);
	cr_assert_eq(get_le32(c), 0x02014b50u);
	return c;
}

/* Say the entry is size bytes uncompressed, in both headers alike. */
static void patch_size(char *z, size_t len, uint32_t size)
{
	put_le32(local_hdr(z) + 22, size);
	put_le32(central_hdr(z, len) + 24, size);
}

static void replace_all(char *z, size_t len, const char *from, const char *to)
{
	size_t n = strlen(from);
	int hits = 0;

	cr_assert_eq(strlen(to), n);
	for (size_t i = 0; i + n <= len; i++)
		if (memcmp(z + i, from, n) == 0) {
			memcpy(z + i, to, n);
			hits++;
		}
	cr_assert_gt(hits, 0);
}

struct unpacked {
	int r;
	struct req_file *files;
	size_t n;
	char err[256];
};

/* files and n start as sentinels, so that a failure must leave them be. */
static struct unpacked unpack(const void *z, size_t len, const struct zipfiles_bounds *b)
{
	struct unpacked u = { .files = (struct req_file *)0x1, .n = 777 };

	u.r = zipfiles_unpack(z, len, b, &u.files, &u.n, u.err, sizeof(u.err));
	return u;
}

static void free_unpacked(struct unpacked *u)
{
	for (size_t i = 0; i < u->n; i++) {
		free(u->files[i].name);
		free(u->files[i].data);
	}
	free(u->files);
}

static void expect_refused(const struct unpacked *u, const char *why)
{
	cr_expect_eq(u->r, -EINVAL, "accepted, wanted: %s", why);
	cr_expect_eq(u->files, (struct req_file *)0x1, "out-parameter touched on failure");
	cr_expect_eq(u->n, 777);
	cr_expect_not_null(strstr(u->err, why), "err \"%s\", wanted \"%s\"", u->err, why);
}

/* Make an archive of one entry, unpack it within roomy bounds, expect why. */
static void refuse_one(const struct ent *e, const char *why)
{
	struct unpacked u;
	size_t len;
	char *z = make_zip(e, 1, &len);

	u = unpack(z, len, &roomy);
	expect_refused(&u, why);
	free(z);
}

Test(zipfiles, two_files_in_order_with_exact_bytes)
{
	static const char bin[] = { 'a', '\0', 'b', '\xff', '\0' };
	const char *text = "int main(void) { return 0; }\n";
	struct ent e[] = {
		{ .name = "main.c", .data = text, .len = strlen(text) },
		{ .name = "data.bin", .data = bin, .len = sizeof(bin), .store = true },
	};
	struct unpacked u;
	size_t len;
	char *z = make_zip(e, 2, &len);

	u = unpack(z, len, &roomy);
	cr_assert_eq(u.r, 0, "%s", u.err);
	cr_assert_eq(u.n, 2);
	cr_expect_str_eq(u.files[0].name, "main.c");
	cr_expect_str_eq(u.files[1].name, "data.bin");
	cr_assert_eq(u.files[0].len, strlen(text));
	cr_expect_eq(memcmp(u.files[0].data, text, strlen(text)), 0);
	cr_assert_eq(u.files[1].len, sizeof(bin));
	cr_expect_eq(memcmp(u.files[1].data, bin, sizeof(bin)), 0);
	free_unpacked(&u);
	free(z);
}

Test(zipfiles, data_is_nul_terminated)
{
	static const char text[] = "no terminator here";
	struct unpacked u;
	size_t len;
	char *z = make_one("t.txt", text, sizeof(text) - 1, false, &len);

	u = unpack(z, len, &roomy);
	cr_assert_eq(u.r, 0, "%s", u.err);
	cr_assert_eq(u.n, 1);
	cr_expect_eq(u.files[0].data[u.files[0].len], '\0');
	cr_expect_str_eq(u.files[0].data, text);
	free_unpacked(&u);
	free(z);
}

Test(zipfiles, empty_file_inside)
{
	struct unpacked u;
	size_t len;
	char *z = make_one("empty", NULL, 0, false, &len);

	u = unpack(z, len, &roomy);
	cr_assert_eq(u.r, 0, "%s", u.err);
	cr_assert_eq(u.n, 1);
	cr_expect_eq(u.files[0].len, 0);
	cr_expect_eq(u.files[0].data[0], '\0');
	free_unpacked(&u);
	free(z);
}

Test(zipfiles, empty_archive_is_no_files)
{
	/* an end of central directory record and nothing else */
	static const char eocd[22] = { 'P', 'K', 5, 6 };
	struct unpacked u = unpack(eocd, sizeof(eocd), &roomy);

	cr_assert_eq(u.r, 0, "%s", u.err);
	cr_expect_eq(u.n, 0);
	cr_expect_null(u.files);
}

Test(zipfiles, not_a_zip)
{
	char junk[1000];
	struct unpacked u;
	uint32_t x = 12345;

	for (size_t i = 0; i < sizeof(junk); i++) {
		x = x * 1103515245u + 12345u;
		junk[i] = (char)(x >> 16);
	}
	u = unpack(junk, sizeof(junk), &roomy);
	expect_refused(&u, "not a zip archive");
	u = unpack("", 0, &roomy);
	expect_refused(&u, "not a zip archive");
	u = unpack("PK\5\6", 4, &roomy);
	expect_refused(&u, "not a zip archive");
}

Test(zipfiles, truncated_archive)
{
	static const char text[] = "some text to keep";
	struct unpacked u;
	size_t len;
	char *z = make_one("t.txt", text, sizeof(text) - 1, false, &len);

	u = unpack(z, len - 1, &roomy);
	cr_expect_eq(u.r, -EINVAL);
	cr_expect_eq(u.n, 777);
	free(z);
}

Test(zipfiles, names_must_be_plain_paths)
{
	/* each name, and the error that must name it */
	static const char *const bad[][2] = {
		{ "../evil", "entry \"../evil\": path part '..': file name must not start with a dot" },
		{ "a/../../evil", "entry \"a/../../evil\": path part '..'" },
		{ "/etc/passwd", "entry \"/etc/passwd\": path has an empty part" },
		{ "a//b", "entry \"a//b\": path has an empty part" },
		{ "..", "entry \"..\": file name must not start with a dot" },
		{ ".hidden", "entry \".hidden\": file name must not start with a dot" },
		{ "dir/.hidden", "entry \"dir/.hidden\": path part '.hidden'" },
		{ "-rf", "entry \"-rf\": file name must not start with '-'" },
		{ "+x", "entry \"+x\": file name must not start with '+'" },
		{ "a b.txt", "entry \"a b.txt\": file name may only contain" },
		{ "caf\xc3\xa9", "entry \"caf\\xc3\\xa9\": file name may only contain" },
		{ "a/b/c/d/e/f/g/h/i", "path is more than 8 names deep" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ent e = { .name = bad[i][0], .data = "x", .len = 1 };

		refuse_one(&e, bad[i][1]);
	}
}

Test(zipfiles, files_in_directories_keep_their_paths)
{
	struct ent e[] = {
		{ .name = "dir1", .dir = true },
		{ .name = "./dir1/dir2/my_file2.txt", .data = "two", .len = 3 },
		{ .name = "my_file.txt", .data = "one", .len = 3 },
		{ .name = "empty", .dir = true },
	};
	struct unpacked u;
	size_t len;
	char *z = make_zip(e, 4, &len);

	u = unpack(z, len, &roomy);
	cr_assert_eq(u.r, 0, "%s", u.err);
	cr_assert_eq(u.n, 2, "directories give no file of their own");
	cr_expect_str_eq(u.files[0].name, "dir1/dir2/my_file2.txt", "\"./\" is nothing, as to unzip");
	cr_expect_str_eq(u.files[0].data, "two");
	cr_expect_str_eq(u.files[1].name, "my_file.txt");
	free_unpacked(&u);
	free(z);
}

Test(zipfiles, a_file_where_a_directory_is_clashes)
{
	struct ent e[] = {
		{ .name = "lib", .data = "x", .len = 1 },
		{ .name = "lib/util.py", .data = "y", .len = 1 },
	};
	struct ent d[] = {
		{ .name = "lib", .dir = true },
		{ .name = "lib", .data = "x", .len = 1 },
	};
	struct unpacked u;
	size_t len;
	char *z = make_zip(e, 2, &len);

	u = unpack(z, len, &roomy);
	expect_refused(&u, "entry \"lib/util.py\": clashes with the entry \"lib\"");
	free(z);
	z = make_zip(d, 2, &len);
	u = unpack(z, len, &roomy);
	expect_refused(&u, "entry \"lib\": clashes with the entry \"lib\"");
	free(z);
}

Test(zipfiles, odd_bytes_of_a_name_are_escaped)
{
	struct ent e = { .name = "a\x01\"b", .data = "x", .len = 1 };

	refuse_one(&e, "entry \"a\\x01\\x22b\":");
}

Test(zipfiles, long_name_is_cut_in_the_message)
{
	char name[300];
	struct ent e = { .name = name, .data = "x", .len = 1 };
	struct unpacked u;
	size_t len;
	char *z;

	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	z = make_zip(&e, 1, &len);
	u = unpack(z, len, &roomy);
	expect_refused(&u, "nnn...\": file name is longer than");
	free(z);
}

Test(zipfiles, directory_entries_are_taken_and_give_no_file)
{
	struct ent by_name = { .name = "sub", .dir = true };
	struct ent by_mode = { .name = "sub", .data = "", .len = 0, .mode = S_IFDIR | 0755 };
	struct ent by_dos = { .name = "SUB", .data = "", .len = 0, .dos = 0x10 };
	const struct ent *each[] = { &by_name, &by_mode, &by_dos };

	for (size_t i = 0; i < 3; i++) {
		struct unpacked u;
		size_t len;
		char *z = make_zip(each[i], 1, &len);

		u = unpack(z, len, &roomy);
		cr_expect_eq(u.r, 0, "%zu: %s", i, u.err);
		cr_expect_eq(u.n, 0);
		cr_expect_null(u.files);
		free(z);
	}
}

Test(zipfiles, a_directory_with_data_is_refused)
{
	struct ent e = { .name = "sub", .data = "data", .len = 4, .mode = S_IFDIR | 0755 };

	refuse_one(&e, "entry \"sub\": is a directory with data");
}

Test(zipfiles, symlink_entry)
{
	struct ent e = { .name = "link", .data = "/etc/passwd", .len = 11,
			 .mode = S_IFLNK | 0777 };

	refuse_one(&e, "entry \"link\": is a symbolic link");
}

Test(zipfiles, fifo_and_device_entries)
{
	struct ent fifo = { .name = "fifo", .data = "", .len = 0, .mode = S_IFIFO | 0644 };
	struct ent dev = { .name = "null", .data = "", .len = 0, .mode = S_IFCHR | 0666 };

	refuse_one(&fifo, "entry \"fifo\": is not a regular file");
	refuse_one(&dev, "entry \"null\": is not a regular file");
}

Test(zipfiles, regular_mode_is_taken)
{
	struct ent e = { .name = "run.sh", .data = "echo\n", .len = 5, .mode = S_IFREG | 0755 };
	struct unpacked u;
	size_t len;
	char *z = make_zip(&e, 1, &len);

	u = unpack(z, len, &roomy);
	cr_expect_eq(u.r, 0, "%s", u.err);
	cr_expect_eq(u.n, 1);
	free_unpacked(&u);
	free(z);
}

Test(zipfiles, compression_method_not_supported)
{
	struct unpacked u;
	size_t len;
	char *z = make_one("old.txt", "imploded?", 9, true, &len);

	/* say "imploded" (6), which libzip cannot read, in both headers */
	local_hdr(z)[8] = ZIP_CM_IMPLODE;
	central_hdr(z, len)[10] = ZIP_CM_IMPLODE;
	u = unpack(z, len, &roomy);
	expect_refused(&u, "entry \"old.txt\": compression method 6 is not supported");
	free(z);
}

Test(zipfiles, encrypted_entry)
{
	struct ent e = { .name = "secret.txt", .data = "hidden", .len = 6, .encrypt = true };

	cr_assert(zip_encryption_method_supported(ZIP_EM_AES_256, 1), "libzip without AES");
	refuse_one(&e, "entry \"secret.txt\": is encrypted");
}

Test(zipfiles, duplicate_names)
{
	struct ent e[] = {
		{ .name = "a.txt", .data = "one", .len = 3 },
		{ .name = "b.txt", .data = "two", .len = 3 },
	};
	struct unpacked u;
	size_t len;
	char *z = make_zip(e, 2, &len);

	/* no writer makes two entries of one name: rename b.txt in its headers */
	replace_all(z, len, "b.txt", "a.txt");
	u = unpack(z, len, &roomy);
	expect_refused(&u, "entry \"a.txt\": clashes with the entry \"a.txt\"");
	free(z);
}

static char *make_n(size_t n, size_t each, size_t *len)
{
	struct ent e[8];
	static char names[8][8];
	static const char data[16] = "0123456789abcdef";

	cr_assert_leq(n, 8);
	for (size_t i = 0; i < n; i++) {
		snprintf(names[i], sizeof(names[i]), "f%zu", i);
		e[i] = (struct ent){ .name = names[i], .data = data, .len = each };
	}
	return make_zip(e, n, len);
}

Test(zipfiles, max_files)
{
	struct zipfiles_bounds b = roomy;
	struct unpacked u;
	size_t len;
	char *z = make_n(3, 1, &len);

	b.max_files = 2;
	u = unpack(z, len, &b);
	expect_refused(&u, "more than 2 files");
	b.max_files = 3;
	u = unpack(z, len, &b);
	cr_expect_eq(u.r, 0, "%s", u.err);
	cr_expect_eq(u.n, 3);
	free_unpacked(&u);
	free(z);
}

Test(zipfiles, max_file)
{
	struct zipfiles_bounds b = roomy;
	struct unpacked u;
	size_t len;
	char *z = make_one("big.bin", "0123456789a", 11, false, &len);

	b.max_file = 10;
	u = unpack(z, len, &b);
	expect_refused(&u, "entry \"big.bin\": larger than 10 bytes");
	b.max_file = 11;
	u = unpack(z, len, &b);
	cr_expect_eq(u.r, 0, "%s", u.err);
	free_unpacked(&u);
	free(z);
}

Test(zipfiles, max_total)
{
	struct zipfiles_bounds b = roomy;
	struct unpacked u;
	size_t len;
	char *z = make_n(2, 6, &len);

	b.max_total = 11;
	u = unpack(z, len, &b);
	expect_refused(&u, "more than 11 bytes in all");
	b.max_total = 12;
	u = unpack(z, len, &b);
	cr_expect_eq(u.r, 0, "%s", u.err);
	cr_expect_eq(u.n, 2);
	free_unpacked(&u);
	free(z);
}

#define BOMB_SIZE (50u << 20)

/* 50 MB of zeros: deflate makes about 50 KB of it */
static char *make_bomb(size_t *len)
{
	char *zeros = calloc(1, BOMB_SIZE);
	char *z;

	cr_assert_not_null(zeros);
	z = make_one("bomb.bin", zeros, BOMB_SIZE, false, len);
	free(zeros);
	cr_assert_lt(*len, 1u << 20, "not a bomb: %zu bytes", *len);
	return z;
}

Test(zipfiles, bomb_refused_by_its_declared_size)
{
	struct unpacked u;
	size_t len;
	char *z = make_bomb(&len);

	u = unpack(z, len, &roomy);
	expect_refused(&u, "entry \"bomb.bin\": larger than 1048576 bytes");
	free(z);
}

Test(zipfiles, bomb_that_says_it_is_small)
{
	struct unpacked u;
	size_t len;
	char *z = make_bomb(&len);

	patch_size(z, len, 1000);
	u = unpack(z, len, &roomy);
	expect_refused(&u, "entry \"bomb.bin\": sizes do not match");
	free(z);
}

Test(zipfiles, declared_size_smaller_than_data)
{
	static const char text[] = "0123456789012345678901234567890123456789";
	struct unpacked u;
	size_t len;
	char *z = make_one("lie.txt", text, sizeof(text) - 1, true, &len);

	patch_size(z, len, 10);
	u = unpack(z, len, &roomy);
	expect_refused(&u, "entry \"lie.txt\": sizes do not match");
	free(z);
}

Test(zipfiles, declared_size_larger_than_data)
{
	static const char text[] = "0123456789";
	struct unpacked u;
	size_t len;
	char *z = make_one("lie.txt", text, sizeof(text) - 1, true, &len);

	patch_size(z, len, 20);
	u = unpack(z, len, &roomy);
	expect_refused(&u, "entry \"lie.txt\": sizes do not match");
	free(z);
}

Test(zipfiles, damaged_data_fails_its_crc)
{
	static const char text[] = "the quick brown fox";
	struct unpacked u;
	size_t len;
	char *z = make_one("fox.txt", text, sizeof(text) - 1, true, &len);

	replace_all(z, len, "quick", "QUICK");
	u = unpack(z, len, &roomy);
	expect_refused(&u, "entry \"fox.txt\": damaged");
	free(z);
}

/*
 * Archives of main.c and in.txt from other writers, base64: python's
 * zipfile to a file, and streamed (data descriptors; its streamed entries
 * carry no file type in their mode), Info-ZIP's zip to a file (one stored
 * entry, one deflated, extra fields) and to a pipe (data descriptors).
 */
static const char main_c[] = "int main(void) { return 0; }\n";

static const char *const other_writers[] = {
	"UEsDBBQAAAAIAJtOfF3xe0NuHwAAAB0AAAAGAAAAbWFpbi5jy8wrUchNzMzTKMvPTNFUqFYo"
	"Si0pLcpTMLBWqOUCAFBLAwQUAAAACAChTnxd3WYsmgkAAACgAAAABgAAAGluLnR4dDNUMOIy"
	"HMQYAFBLAQIUAxQAAAAIAJtOfF3xe0NuHwAAAB0AAAAGAAAAAAAAAAAAAACkgQAAAABtYWlu"
	"LmNQSwECFAMUAAAACAChTnxd3WYsmgkAAACgAAAABgAAAAAAAAAAAAAApIFDAAAAaW4udHh0"
	"UEsFBgAAAAACAAIAaAAAAHAAAAAAAA==",

	"UEsDBBQACAAIAAAAIQAAAAAAAAAAAAAAAAAGAAAAbWFpbi5jy8wrUchNzMzTKMvPTNFUqFYo"
	"Si0pLcpTMLBWqOUCAFBLBwjxe0NuHwAAAB0AAABQSwMEFAAIAAgAAAAhAAAAAAAAAAAAAAAA"
	"AAYAAABpbi50eHQzVDDiMhzEGABQSwcI3WYsmgkAAACgAAAAUEsBAhQDFAAIAAgAAAAhAPF7"
	"Q24fAAAAHQAAAAYAAAAAAAAAAAAAAIABAAAAAG1haW4uY1BLAQIUAxQACAAIAAAAIQDdZiya"
	"CQAAAKAAAAAGAAAAAAAAAAAAAACAAVMAAABpbi50eHRQSwUGAAAAAAIAAgBoAAAAkAAAAAAA",

	"UEsDBAoAAAAAAJxOfF3xe0NuHQAAAB0AAAAGABwAbWFpbi5jVVQJAAN3pAprd6QKa3V4CwAB"
	"BAAAAAAEAAAAAGludCBtYWluKHZvaWQpIHsgcmV0dXJuIDA7IH0KUEsDBBQAAAAIAKJOfF3d"
	"ZiyaCQAAAKAAAAAGABwAaW4udHh0VVQJAAN/pAprf6QKa3V4CwABBAAAAAAEAAAAADNUMOIy"
	"HMQYAFBLAQIeAwoAAAAAAJxOfF3xe0NuHQAAAB0AAAAGABgAAAAAAAEAAACkgQAAAABtYWlu"
	"LmNVVAUAA3ekCmt1eAsAAQQAAAAABAAAAABQSwECHgMUAAAACACiTnxd3WYsmgkAAACgAAAA"
	"BgAYAAAAAAABAAAApIFdAAAAaW4udHh0VVQFAAN/pAprdXgLAAEEAAAAAAQAAAAAUEsFBgAA"
	"AAACAAIAmAAAAKYAAAAAAA==",

	"UEsDBBQACAAIAJxOfF0AAAAAAAAAAB0AAAAGABwAbWFpbi5jVVQJAAN3pAprd6QKa3V4CwAB"
	"BAAAAAAEAAAAAMvMK1HITczM0yjLz0zRVKhWKEotKS3KUzCwVqjlAgBQSwcI8XtDbh8AAAAd"
	"AAAAUEsDBBQACAAIAKJOfF0AAAAAAAAAAKAAAAAGABwAaW4udHh0VVQJAAN/pAprf6QKa3V4"
	"CwABBAAAAAAEAAAAADNUMOIyHMQYAFBLBwjdZiyaCQAAAKAAAABQSwECHgMUAAgACACcTnxd"
	"8XtDbh8AAAAdAAAABgAYAAAAAAABAAAApIEAAAAAbWFpbi5jVVQFAAN3pAprdXgLAAEEAAAA"
	"AAQAAAAAUEsBAh4DFAAIAAgAok58Xd1mLJoJAAAAoAAAAAYAGAAAAAAAAQAAAKSBbwAAAGlu"
	"LnR4dFVUBQADf6QKa3V4CwABBAAAAAAEAAAAAFBLBQYAAAAAAgACAJgAAADIAAAAAAA=",
};

/* Info-ZIP's zip -y: main.c, and link.c a symbolic link to it */
static const char info_zip_symlink[] =
	"UEsDBAoAAAAAAJxOfF3xe0NuHQAAAB0AAAAGABwAbWFpbi5jVVQJAAN3pAprd6QKa3V4CwAB"
	"BAAAAAAEAAAAAGludCBtYWluKHZvaWQpIHsgcmV0dXJuIDA7IH0KUEsDBAoAAAAAAJxOfF23"
	"hCF6BgAAAAYAAAAGABwAbGluay5jVVQJAAN3pAprd6QKa3V4CwABBAAAAAAEAAAAAG1haW4u"
	"Y1BLAQIeAwoAAAAAAJxOfF3xe0NuHQAAAB0AAAAGABgAAAAAAAEAAACkgQAAAABtYWluLmNV"
	"VAUAA3ekCmt1eAsAAQQAAAAABAAAAABQSwECHgMKAAAAAACcTnxdt4QhegYAAAAGAAAABgAY"
	"AAAAAAAAAAAA/6FdAAAAbGluay5jVVQFAAN3pAprdXgLAAEEAAAAAAQAAAAAUEsFBgAAAAAC"
	"AAIAmAAAAKMAAAAAAA==";

Test(zipfiles, archives_of_other_writers)
{
	for (size_t i = 0; i < sizeof(other_writers) / sizeof(other_writers[0]); i++) {
		struct unpacked u;
		char *z;
		size_t len;

		cr_assert_eq(base64_decode(other_writers[i], strlen(other_writers[i]), &z, &len), 0);
		u = unpack(z, len, &roomy);
		cr_assert_eq(u.r, 0, "writer %zu: %s", i, u.err);
		cr_assert_eq(u.n, 2, "writer %zu", i);
		cr_expect_str_eq(u.files[0].name, "main.c");
		cr_expect_str_eq(u.files[0].data, main_c);
		cr_expect_str_eq(u.files[1].name, "in.txt");
		cr_expect_eq(u.files[1].len, 160, "writer %zu", i);
		for (size_t k = 0; k + 4 <= u.files[1].len; k += 4)
			cr_expect_eq(memcmp(u.files[1].data + k, "1 2\n", 4), 0, "writer %zu", i);
		free_unpacked(&u);
		free(z);
	}
}

Test(zipfiles, info_zip_symlink)
{
	struct unpacked u;
	char *z;
	size_t len;

	cr_assert_eq(base64_decode(info_zip_symlink, strlen(info_zip_symlink), &z, &len), 0);
	u = unpack(z, len, &roomy);
	expect_refused(&u, "entry \"link.c\": is a symbolic link");
	free(z);
}

/* ---- what is read before libzip: end records, central records ------- */

static void put16(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
}

static void put32(unsigned char *p, uint32_t v)
{
	put16(p, v & 0xffff);
	put16(p + 2, v >> 16);
}

static void put64(unsigned char *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

#define NO_RECORD ((size_t)-1)

/*
 * n central records alone (no local header, no data: opening an archive,
 * libzip reads only its directory), named f0, f1..., then an end record
 * that lists `listed` entries: modulo 65536 as Info-ZIP writes past 65535,
 * or in a zip64 end record. The record numbered broken (NO_RECORD: none)
 * has a wrong magic, so that libzip, should it parse that far, fails
 * with words of its own.
 */
static unsigned char *central_only(size_t n, uint64_t listed, bool zip64, size_t broken,
				   size_t *len)
{
	size_t cap = n * (46 + 8) + 56 + 20 + 22, at = 0, cd_size;
	unsigned char *z = calloc(1, cap);

	cr_assert_not_null(z);
	for (size_t i = 0; i < n; i++) {
		unsigned char *r = z + at;
		int nlen = snprintf((char *)r + 46, 9, "f%zu", i);

		put32(r, i == broken ? 0x02014b51u : 0x02014b50u);
		put16(r + 4, 0x031e);           /* made by Unix */
		put16(r + 6, 20);
		put16(r + 28, (uint32_t)nlen);
		put32(r + 38, (uint32_t)(S_IFREG | 0644) << 16);
		at += 46 + (size_t)nlen;
	}
	cd_size = at;
	if (zip64) {
		unsigned char *e = z + at, *loc = e + 56;

		put32(e, 0x06064b50u);
		put64(e + 4, 44);
		put16(e + 12, 45);
		put16(e + 14, 45);
		put64(e + 24, listed);
		put64(e + 32, listed);
		put64(e + 40, cd_size);
		put64(e + 48, 0);
		put32(loc, 0x07064b50u);
		put64(loc + 8, at);
		put32(loc + 16, 1);
		at += 56 + 20;
	}
	put32(z + at, 0x06054b50u);
	put16(z + at + 8, zip64 ? 0xffff : (uint32_t)(listed & 0xffff));
	put16(z + at + 10, zip64 ? 0xffff : (uint32_t)(listed & 0xffff));
	put32(z + at + 12, zip64 ? 0xffffffffu : (uint32_t)cd_size);
	put32(z + at + 16, zip64 ? 0xffffffffu : 0);
	*len = at + 22;
	return z;
}

Test(zipfiles, an_end_record_that_lists_too_many_is_refused_before_its_records)
{
	struct unpacked u;
	size_t len;
	unsigned char *z;

	/* record 100 is broken: had libzip read the records, it would say so */
	z = central_only(200, 200, true, 100, &len);
	u = unpack(z, len, &roomy);
	expect_refused(&u, "more than 64 files (its end record lists 200)");
	free(z);
	z = central_only(200, 200, false, 100, &len);
	u = unpack(z, len, &roomy);
	expect_refused(&u, "more than 64 files (its end record lists 200)");
	free(z);
}

Test(zipfiles, records_past_an_info_zip_count_are_counted)
{
	struct unpacked u;
	size_t len;
	/* 65,538 records that the end record lists as 2: libzip reads every
	 * record the directory's size holds, whatever the count says */
	unsigned char *z = central_only(65536 + 2, 65536 + 2, false, 65536 + 1, &len);

	u = unpack(z, len, &roomy);
	expect_refused(&u, "more than 64 files");
	cr_expect_null(strstr(u.err, "lists"), "%s", u.err);
	free(z);
}

Test(zipfiles, zip64_of_200000_entries)
{
	struct unpacked u;
	size_t len;
	unsigned char *z = central_only(200000, 200000, true, 150000, &len);
	struct zipfiles_bounds b = roomy;

	b.max_files = 10;
	u = unpack(z, len, &b);
	expect_refused(&u, "more than 10 files (its end record lists 200000)");
	free(z);
}

/* One entry with an extra field of its own of data bytes (and 4 of header). */
static struct unpacked unpack_extra(zip_uint16_t data, zip_flags_t where)
{
	struct ent e = { .name = "x.txt", .data = "x", .len = 1, .extra = data,
			 .extra_where = where };
	struct unpacked u;
	size_t len;
	char *z = make_zip(&e, 1, &len);

	u = unpack(z, len, &roomy);
	free(z);
	return u;
}

Test(zipfiles, extra_fields_over_1_KiB)
{
	struct unpacked u;

	u = unpack_extra(ZIPFILES_MAX_EXTRA - 4, ZIP_FL_CENTRAL | ZIP_FL_LOCAL);
	cr_expect_eq(u.r, 0, "%s", u.err);
	free_unpacked(&u);
	u = unpack_extra(ZIPFILES_MAX_EXTRA - 3, ZIP_FL_CENTRAL);
	expect_refused(&u, "entry \"x.txt\": 1025 bytes of extra fields, more than 1024");
	u = unpack_extra(60000, ZIP_FL_CENTRAL);
	expect_refused(&u, "entry \"x.txt\": 60004 bytes of extra fields, more than 1024");
	u = unpack_extra(ZIPFILES_MAX_EXTRA - 3, ZIP_FL_LOCAL);
	expect_refused(&u, "entry \"x.txt\": 1025 bytes of extra fields in its local header");
}

/* A valid end record of an empty directory: 22 bytes. */
static void empty_end(unsigned char *p)
{
	memset(p, 0, 22);
	put32(p, 0x06054b50u);
}

Test(zipfiles, end_records_by_the_dozen)
{
	static const char text[] = "x";
	struct ent e = { .name = "x.txt", .data = text, .len = 1 };
	unsigned char comment[9 * 22];
	struct unpacked u;
	size_t len;
	char *z;

	/* libzip takes each of them, and copies each one's comment */
	for (size_t i = 0; i < 9; i++)
		empty_end(comment + 22 * i);
	z = make_zip_commented(&e, 1, (const char *)comment, 7 * 22, &len);
	u = unpack(z, len, &roomy);
	cr_expect_eq(u.r, 0, "8 end records: %s", u.err);
	free_unpacked(&u);
	free(z);
	z = make_zip_commented(&e, 1, (const char *)comment, 8 * 22, &len);
	u = unpack(z, len, &roomy);
	expect_refused(&u, "more than 8 end of central directory records");
	free(z);
}

Test(zipfiles, two_central_directories)
{
	struct ent e[] = {
		{ .name = "a.txt", .data = "a", .len = 1 },
		{ .name = "b.txt", .data = "b", .len = 1 },
	};
	unsigned char second[22];
	struct unpacked u;
	size_t len;
	char *z;

	/* a second end record, in the first one's comment, that names the
	 * same directory without its first record: one tool shows two
	 * files, another one */
	z = make_zip(e, 2, &len);
	memcpy(second, z + len - 22, 22);
	free(z);
	put16(second + 8, 1);
	put16(second + 10, 1);
	put32(second + 12, get_le32((char *)second + 12) - (46 + 5));
	put32(second + 16, get_le32((char *)second + 16) + 46 + 5);
	z = make_zip_commented(e, 2, (const char *)second, sizeof(second), &len);
	u = unpack(z, len, &roomy);
	expect_refused(&u, "more than one central directory");
	free(z);
}

Test(zipfiles, an_archive_stored_inside_is_taken)
{
	struct ent inner[] = {
		{ .name = "a.txt", .data = "a", .len = 1 },
		{ .name = "b.txt", .data = "b", .len = 1 },
	};
	struct ent outer[2] = { { .name = "main.c", .data = main_c, .len = sizeof(main_c) - 1 } };
	struct unpacked u;
	size_t ilen, len;
	char *in = make_zip(inner, 2, &ilen), *z;

	/* stored last: its end record is in the outer one's tail */
	outer[1] = (struct ent){ .name = "fixture.zip", .data = in, .len = ilen, .store = true };
	z = make_zip(outer, 2, &len);
	u = unpack(z, len, &roomy);
	cr_assert_eq(u.r, 0, "%s", u.err);
	cr_expect_eq(u.n, 2);
	cr_expect_eq(u.files[1].len, ilen);
	free_unpacked(&u);
	free(z);
	free(in);
}
