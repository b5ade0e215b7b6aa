#include "autoconf.h"

#include "common/limits.h"

#include <stddef.h>

/*
 * One field: the request wins over the language default when it gave a
 * value, the server maximum caps both, and a field nobody set takes the
 * maximum rather than staying zero, because zero would reach the sandbox
 * as "no limit at all". A zero maximum means the server sets no cap.
 */
static uint64_t merge_field(uint64_t lang, uint64_t req, uint64_t max)
{
	uint64_t v = req ? req : lang;

	if (max && (v == 0 || v > max))
		v = max;
	return v;
}

void limits_merge(struct limits *out, const struct limits *lang_default,
		  const struct limits *request, const struct limits *server_max)
{
	static const struct limits none;
	const struct limits *l = lang_default ? lang_default : &none;
	const struct limits *r = request ? request : &none;
	const struct limits *m = server_max ? server_max : &none;
	struct limits res;

	res.wall_ms = (uint32_t)merge_field(l->wall_ms, r->wall_ms, m->wall_ms);
	res.cpu_ms = (uint32_t)merge_field(l->cpu_ms, r->cpu_ms, m->cpu_ms);
	res.memory_kb = merge_field(l->memory_kb, r->memory_kb, m->memory_kb);
	res.max_processes = (uint32_t)merge_field(l->max_processes, r->max_processes,
						  m->max_processes);
	res.fsize_kb = merge_field(l->fsize_kb, r->fsize_kb, m->fsize_kb);
	res.output_kb = merge_field(l->output_kb, r->output_kb, m->output_kb);
	*out = res;
}

/*
 * tmpfs pages are memory, charged to the program that wrote them: a /tmp
 * as large as the memory limit can never fill, the program is OOM-killed
 * first and never sees the ENOSPC its own code would report. A quarter
 * leaves the rest for the program itself (Codize's 64 MiB beside its
 * 256 MiB). A file that holds data holds at least a page, so with twice
 * as many files as pages a program writing small files runs out of bytes
 * (ENOSPC from write) before it runs out of files (ENOSPC from open), as
 * on any tmpfs; the operator's cap still bounds a program making empty
 * files when it is the larger one.
 */
void limits_tmp(const struct limits *l, uint64_t tmpfs_kb, uint64_t max_files,
		struct tmp_size *out)
{
	uint64_t bytes = tmpfs_kb * 1024;

	if (l->memory_kb && l->memory_kb * 1024 / 4 < bytes)
		bytes = l->memory_kb * 1024 / 4;
	bytes -= bytes % LIMITS_TMP_PAGE;
	/* size=0 would be a tmpfs without a cap */
	if (bytes < LIMITS_TMP_MIN_BYTES)
		bytes = LIMITS_TMP_MIN_BYTES;
	out->bytes = bytes;
	out->files = max_files;
	if (max_files && max_files < 2 * (bytes / LIMITS_TMP_PAGE))
		out->files = 2 * (bytes / LIMITS_TMP_PAGE);
}
