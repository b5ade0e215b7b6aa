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
