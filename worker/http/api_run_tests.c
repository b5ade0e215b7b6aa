#include "autoconf.h"

/* The tests of goboxd's own request, its groups and its comparison
 * (api_run_tests.h). */
#include "worker/http/api_run_tests.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

/* A test's file name field (input_file, output_file): 0 absent, 1 valid, -EINVAL bad. */
static int test_filename(struct native_ctx *c, const cJSON *o, size_t i, const char *key,
			 char **out)
{
	char path[96];

	snprintf(path, sizeof(path), "tests[%zu].%s", i, key);
	return api_run_read_filename(c, o, key, path, out);
}

static int parse_test(struct native_ctx *c, const cJSON *o, size_t i, struct req_test *t)
{
	static const char *const keys[] = { "stdin", "expected_stdout", "input_file",
					    "output_file", NULL };
	const struct config *cfg = c->cfg;
	char path[96];
	int rc;

	snprintf(path, sizeof(path), "tests[%zu]", i);
	if (api_run_read_object(c, o, path, "invalid_type", keys, KEY_AT_KEY) < 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "tests[%zu].stdin", i);
	rc = api_run_read_string(c, o, "stdin", path, &t->stdin_data, &t->stdin_len);
	if (rc < 0)
		return -EINVAL;
	if (rc == 0)
		t->stdin_data = xstrdup("");
	if (json_body_over_cap(t->stdin_len, cfg->max_test_stdin_bytes)) {
		api_run_read_refuse(c->e, "stdin_too_large", path, "%s is larger than %zu bytes",
				    path, cfg->max_test_stdin_bytes);
		return -EINVAL;
	}
	snprintf(path, sizeof(path), "tests[%zu].expected_stdout", i);
	if (api_run_read_string(c, o, "expected_stdout", path, &t->expected, &t->expected_len) < 0)
		return -EINVAL;
	if (t->expected && json_body_over_cap(t->expected_len, cfg->max_expected_bytes)) {
		api_run_read_refuse(c->e, "expected_output_too_large", path,
				    "%s is larger than %zu bytes", path, cfg->max_expected_bytes);
		return -EINVAL;
	}
	if (test_filename(c, o, i, "input_file", &t->input_file) < 0 ||
	    test_filename(c, o, i, "output_file", &t->output_file) < 0)
		return -EINVAL;
	return 0;
}

/*
 * A test's input and output files are made and read in the job directory:
 * neither may be a file the request or the build owns there (the source,
 * the artifact), and they must differ.
 */
static int check_test_files(struct native_ctx *c)
{
	const struct job_request *r = c->r;
	char path[96];

	for (size_t i = 0; i < r->ntests; i++) {
		const struct req_test *t = &r->tests[i];
		const char *names[2] = { t->input_file, t->output_file };
		const char *keys[2] = { "input_file", "output_file" };

		for (int k = 0; k < 2; k++) {
			if (!names[k])
				continue;
			snprintf(path, sizeof(path), "tests[%zu].%s", i, keys[k]);
			for (size_t f = 0; f < r->nfiles; f++) {
				if (strcmp(names[k], r->files[f].name) == 0) {
					api_run_read_refuse(c->e, "invalid_filename", path,
							    "%s: '%s' is a file of the request",
							    path, names[k]);
					return -EINVAL;
				}
			}
			if (r->artifact && strcmp(names[k], r->artifact) == 0) {
				api_run_read_refuse(c->e, "invalid_filename", path,
						    "%s: '%s' is the build's output", path,
						    names[k]);
				return -EINVAL;
			}
		}
		if (t->input_file && t->output_file && strcmp(t->input_file, t->output_file) == 0) {
			snprintf(path, sizeof(path), "tests[%zu].output_file", i);
			api_run_read_refuse(c->e, "invalid_filename", path,
					    "%s: the same file as input_file", path);
			return -EINVAL;
		}
	}
	return 0;
}

static int parse_tests(struct native_ctx *c, const cJSON *root)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(root, "tests");
	struct job_request *r = c->r;
	const cJSON *v;
	size_t n;

	if (!a) {
		api_run_read_refuse(c->e, "missing_field", "tests", "tests is required");
		return -EINVAL;
	}
	if (!cJSON_IsArray(a)) {
		api_run_read_refuse(c->e, "invalid_type", "tests", "tests must be an array");
		return -EINVAL;
	}
	n = (size_t)cJSON_GetArraySize(a);
	if (n == 0) {
		api_run_read_refuse(c->e, "no_tests", "tests", "at least one test is required");
		return -EINVAL;
	}
	if (json_body_over_cap(n, c->cfg->max_tests)) {
		api_run_read_refuse(c->e, "too_many_tests", "tests", "at most %u tests are allowed",
				    c->cfg->max_tests);
		return -EINVAL;
	}
	r->tests = xcalloc(n, sizeof(*r->tests));
	cJSON_ArrayForEach(v, a) {
		/* counted before parsing so request_free releases a half-done test */
		r->ntests++;
		if (parse_test(c, v, r->ntests - 1, &r->tests[r->ntests - 1]) < 0)
			return -EINVAL;
	}
	return 0;
}

/* A tolerance of "compare": a finite number from 0 to 1. */
static int parse_tolerance(struct native_ctx *c, const cJSON *o, const char *key, double *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!v)
		return 0;
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0 ||
	    v->valuedouble > 1) {
		api_run_read_refuse(c->e, "invalid_compare", "compare",
				    "compare.%s must be a number from 0 to 1", key);
		return -EINVAL;
	}
	*out = v->valuedouble;
	return 0;
}

/*
 * "compare": "exact" (the default), "tokens", "float", or an object
 * {"mode": ..., "absolute_tolerance": x, "relative_tolerance": y}, the
 * tolerances for "float" only.
 */
static int parse_compare(struct native_ctx *c, const cJSON *root, struct compare_spec *spec)
{
	static const char *const keys[] = { "mode", "absolute_tolerance", "relative_tolerance",
					    NULL };
	static const struct { const char *name; enum compare_mode mode; } modes[] = {
		{ "exact", COMPARE_EXACT }, { "tokens", COMPARE_TOKENS }, { "float", COMPARE_FLOAT },
	};
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "compare");
	const cJSON *mode = v;
	bool found = false;

	spec->mode = COMPARE_EXACT;
	spec->abs_tol = spec->rel_tol = COMPARE_FLOAT_DEFAULT_TOL;
	if (!v)
		return 0;
	if (cJSON_IsObject(v)) {
		if (api_run_read_object(c, v, "compare", "invalid_type", keys, KEY_AT_OBJECT) < 0)
			return -EINVAL;
		mode = cJSON_GetObjectItemCaseSensitive(v, "mode");
		if (!mode) {
			api_run_read_refuse(c->e, "missing_field", "compare.mode",
					    "compare.mode is required");
			return -EINVAL;
		}
	}
	if (!cJSON_IsString(mode)) {
		api_run_read_refuse(c->e, "invalid_type", "compare",
				    "compare must be a string or an object with a mode");
		return -EINVAL;
	}
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		if (strcmp(mode->valuestring, modes[i].name) == 0) {
			spec->mode = modes[i].mode;
			found = true;
		}
	}
	if (!found) {
		api_run_read_refuse(c->e, "invalid_compare", "compare",
				    "unknown comparison '%.32s' (exact, tokens or float)",
				    mode->valuestring);
		return -EINVAL;
	}
	if (!cJSON_IsObject(v))
		return 0;
	if (spec->mode != COMPARE_FLOAT &&
	    (cJSON_GetObjectItemCaseSensitive(v, "absolute_tolerance") ||
	     cJSON_GetObjectItemCaseSensitive(v, "relative_tolerance"))) {
		api_run_read_refuse(c->e, "invalid_compare", "compare",
				    "tolerances apply to the float comparison only");
		return -EINVAL;
	}
	if (parse_tolerance(c, v, "absolute_tolerance", &spec->abs_tol) < 0 ||
	    parse_tolerance(c, v, "relative_tolerance", &spec->rel_tol) < 0)
		return -EINVAL;
	return 0;
}

/* A group's "tests": indexes of the request's tests, each once. */
static int parse_group_tests(struct native_ctx *c, const cJSON *o, size_t gi,
			     struct req_group *g)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "tests");
	size_t ntests = c->r->ntests;
	bool *seen;
	const cJSON *v;
	char path[96];

	snprintf(path, sizeof(path), "groups[%zu].tests", gi);
	if (!a) {
		api_run_read_refuse(c->e, "missing_field", path, "%s is required", path);
		return -EINVAL;
	}
	if (!cJSON_IsArray(a)) {
		api_run_read_refuse(c->e, "invalid_type", path,
				    "%s must be an array of test indexes", path);
		return -EINVAL;
	}
	if (cJSON_GetArraySize(a) == 0) {
		api_run_read_refuse(c->e, "invalid_groups", path, "%s must name at least one test",
				    path);
		return -EINVAL;
	}
	/* no more entries than tests: a longer list repeats one */
	if ((size_t)cJSON_GetArraySize(a) > ntests) {
		api_run_read_refuse(c->e, "invalid_groups", path,
				    "%s names more tests than the request has (%zu)", path, ntests);
		return -EINVAL;
	}
	g->tests = xcalloc((size_t)cJSON_GetArraySize(a), sizeof(*g->tests));
	seen = xcalloc(ntests, sizeof(*seen));
	cJSON_ArrayForEach(v, a) {
		double x = v->valuedouble;

		snprintf(path, sizeof(path), "groups[%zu].tests[%zu]", gi, g->ntests);
		if (!cJSON_IsNumber(v)) {
			api_run_read_refuse(c->e, "invalid_type", path,
					    "%s must be an integer test index", path);
			goto bad;
		}
		if (!(x >= 0 && x < (double)ntests)) {
			api_run_read_refuse(c->e, "invalid_groups", path,
					    "%s: there is no test %.6g (indexes go from 0 to %zu)",
					    path, x, ntests - 1);
			goto bad;
		}
		if (x != floor(x)) {
			api_run_read_refuse(c->e, "invalid_type", path,
					    "%s must be an integer test index", path);
			goto bad;
		}
		if (seen[(size_t)x]) {
			api_run_read_refuse(c->e, "invalid_groups", path,
					    "%s: test %zu is already in the group", path,
					    (size_t)x);
			goto bad;
		}
		seen[(size_t)x] = true;
		g->tests[g->ntests++] = (size_t)x;
	}
	free(seen);
	return 0;
bad:
	free(seen);
	return -EINVAL;
}

static int parse_group(struct native_ctx *c, const cJSON *o, size_t gi, struct req_group *g)
{
	static const char *const keys[] = { "tests", "stop_on_failure", "points", NULL };
	const cJSON *v;
	char path[96];

	snprintf(path, sizeof(path), "groups[%zu]", gi);
	if (api_run_read_object(c, o, path, "invalid_type", keys, KEY_AT_KEY) < 0)
		return -EINVAL;
	if (parse_group_tests(c, o, gi, g) < 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "groups[%zu].stop_on_failure", gi);
	if (api_run_read_bool(c, o, "stop_on_failure", path, &g->stop_on_failure) < 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "groups[%zu].points", gi);
	v = cJSON_GetObjectItemCaseSensitive(o, "points");
	if (v && !cJSON_IsNumber(v)) {
		api_run_read_refuse(c->e, "invalid_type", path, "%s must be a number", path);
		return -EINVAL;
	}
	if (v && !(v->valuedouble >= 0 && v->valuedouble <= REQ_MAX_POINTS)) {
		api_run_read_refuse(c->e, "invalid_groups", path,
				    "%s must be a number from 0 to %.0f", path, REQ_MAX_POINTS);
		return -EINVAL;
	}
	g->points = v ? v->valuedouble : 0;
	return 0;
}

/*
 * "stop_on_failure" and "groups" (after the tests, whose indexes the
 * groups name).
 */
static int parse_groups(struct native_ctx *c, const cJSON *root)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(root, "groups");
	struct job_request *r = c->r;
	const cJSON *v;
	size_t n;

	if (api_run_read_bool(c, root, "stop_on_failure", "stop_on_failure",
			      &r->stop_on_failure) < 0)
		return -EINVAL;
	if (!a)
		return 0;
	if (!cJSON_IsArray(a)) {
		api_run_read_refuse(c->e, "invalid_type", "groups", "groups must be an array");
		return -EINVAL;
	}
	n = (size_t)cJSON_GetArraySize(a);
	if (n > REQ_MAX_GROUPS) {
		api_run_read_refuse(c->e, "too_many_groups", "groups",
				    "at most %d groups are allowed", REQ_MAX_GROUPS);
		return -EINVAL;
	}
	r->has_groups = true;
	/* one slot at least: the walk below need not know n */
	r->groups = xcalloc(n ? n : 1, sizeof(*r->groups));
	cJSON_ArrayForEach(v, a) {
		/* counted first, so request_free releases a half-done group */
		r->ngroups++;
		if (parse_group(c, v, r->ngroups - 1, &r->groups[r->ngroups - 1]) < 0)
			return -EINVAL;
	}
	return 0;
}

int api_run_tests_parse(struct native_ctx *c, const cJSON *root)
{
	if (parse_tests(c, root) < 0 || check_test_files(c) < 0 || parse_groups(c, root) < 0 ||
	    parse_compare(c, root, &c->r->compare) < 0)
		return -EINVAL;
	return 0;
}
