#include "autoconf.h"

#include <criterion/criterion.h>

#include "common/limits.h"

static const struct limits max = {
	.wall_ms = 20000, .cpu_ms = 15000, .memory_kb = 2097152,
	.max_processes = 256, .fsize_kb = 65536, .output_kb = 1024,
};
static const struct limits lang = {
	.wall_ms = 3000, .cpu_ms = 2000, .memory_kb = 524288,
	.max_processes = 64, .fsize_kb = 1024, .output_kb = 64,
};

Test(limits, no_request_keeps_language_default)
{
	struct limits req = { 0 }, out;

	limits_merge(&out, &lang, &req, &max);
	cr_expect_eq(out.wall_ms, 3000);
	cr_expect_eq(out.cpu_ms, 2000);
	cr_expect_eq(out.memory_kb, 524288);
	cr_expect_eq(out.max_processes, 64);
	cr_expect_eq(out.fsize_kb, 1024);
	cr_expect_eq(out.output_kb, 64);
}

Test(limits, request_fields_override_one_by_one)
{
	struct limits req = { .wall_ms = 500, .max_processes = 1 }, out;

	limits_merge(&out, &lang, &req, &max);
	cr_expect_eq(out.wall_ms, 500);
	cr_expect_eq(out.max_processes, 1);
	cr_expect_eq(out.cpu_ms, 2000);
	cr_expect_eq(out.memory_kb, 524288);
}

Test(limits, request_above_max_is_clamped)
{
	struct limits req = {
		.wall_ms = 999999, .cpu_ms = 999999, .memory_kb = 1ull << 40,
		.max_processes = 100000, .fsize_kb = 1ull << 30, .output_kb = 1ull << 30,
	}, out;

	limits_merge(&out, &lang, &req, &max);
	cr_expect_eq(out.wall_ms, max.wall_ms);
	cr_expect_eq(out.cpu_ms, max.cpu_ms);
	cr_expect_eq(out.memory_kb, max.memory_kb);
	cr_expect_eq(out.max_processes, max.max_processes);
	cr_expect_eq(out.fsize_kb, max.fsize_kb);
	cr_expect_eq(out.output_kb, max.output_kb);
}

Test(limits, language_default_above_max_is_clamped)
{
	struct limits big = lang, out;

	big.memory_kb = 1ull << 32;
	limits_merge(&out, &big, NULL, &max);
	cr_expect_eq(out.memory_kb, max.memory_kb);
}

Test(limits, unset_field_takes_the_maximum_never_zero)
{
	struct limits partial = { .wall_ms = 1000 }, out;

	limits_merge(&out, &partial, NULL, &max);
	cr_expect_eq(out.wall_ms, 1000);
	cr_expect_eq(out.cpu_ms, max.cpu_ms);
	cr_expect_eq(out.memory_kb, max.memory_kb);
	cr_expect_eq(out.output_kb, max.output_kb);
}

Test(limits, zero_maximum_is_no_cap)
{
	struct limits nomax = { 0 }, req = { .memory_kb = 1ull << 40 }, out;

	limits_merge(&out, &lang, &req, &nomax);
	cr_expect_eq(out.memory_kb, 1ull << 40);
	cr_expect_eq(out.wall_ms, 3000);
}

Test(limits, out_may_alias_an_input)
{
	struct limits l = lang;
	struct limits req = { .wall_ms = 100000 };

	limits_merge(&l, &l, &req, &max);
	cr_expect_eq(l.wall_ms, max.wall_ms);
	cr_expect_eq(l.cpu_ms, 2000);
}

/* (memory_kb, --tmpfs-size in KiB, file cap) -> /tmp's bytes and files */
static const struct {
	uint64_t memory_kb, tmpfs_kb, max_files, bytes, files;
} tmp_cases[] = {
	/* a quarter of the memory: Codize's 64 MiB beside 256 MiB */
	{ 262144, 262144, 16384, 64ULL << 20, 32768 },
	/* the operator's size when it is the smaller one */
	{ 4194304, 262144, 16384, 256ULL << 20, 131072 },
	/* the operator's file cap when it is above twice the pages */
	{ 262144, 262144, 100000, 64ULL << 20, 100000 },
	/* no file cap stays none */
	{ 262144, 262144, 0, 64ULL << 20, 0 },
	/* whole pages only */
	{ 1001, 262144, 10, 62 * 4096, 124 },
	/* never below the floor: size=0 would mean no cap */
	{ 16, 262144, 1, LIMITS_TMP_MIN_BYTES, 32 },
	/* no memory limit: the operator's size */
	{ 0, 65536, 16384, 64ULL << 20, 32768 },
};

Test(limits, tmp_is_a_quarter_of_memory_with_files_to_spare)
{
	for (size_t i = 0; i < sizeof(tmp_cases) / sizeof(tmp_cases[0]); i++) {
		struct limits l = { .memory_kb = tmp_cases[i].memory_kb };
		struct tmp_size t;

		limits_tmp(&l, tmp_cases[i].tmpfs_kb, tmp_cases[i].max_files, &t);
		cr_expect_eq(t.bytes, tmp_cases[i].bytes, "case %zu: bytes %llu", i,
			     (unsigned long long)t.bytes);
		cr_expect_eq(t.files, tmp_cases[i].files, "case %zu: files %llu", i,
			     (unsigned long long)t.files);
	}
}
