#include "autoconf.h"

#include "worker/judge/request.h"

#include <stdlib.h>
#include <string.h>

#include "common/strv.h"
#include "common/util.h"

/* "Main.java" -> "Main": the artifact of languages that take it from the name. */
static char *name_stem(const char *name)
{
	const char *dot = strrchr(name, '.');
	size_t n = dot && dot != name ? (size_t)(dot - name) : strlen(name);
	char *s = xcalloc(n + 1, 1);

	memcpy(s, name, n);
	return s;
}

char *request_default_artifact(const struct lang *lang, const struct req_file *src)
{
	char *entry = langtab_infer_entry(lang, src->data, src->name);

	return entry ? entry : name_stem(src->name);
}

char *request_default_source(const struct lang *lang, const char *source)
{
	char *entry, *name;

	if (lang->source_default)
		return xstrdup(lang->source_default);
	if (!lang->entry_res)
		return NULL;
	entry = langtab_infer_entry(lang, source, NULL);
	name = xasprintf("%s%s", entry ? entry : lang->entry_default, lang->entry_suffix);
	free(entry);
	return name;
}

void request_free(struct job_request *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nfiles; i++) {
		free(r->files[i].name);
		free(r->files[i].data);
	}
	free(r->files);
	free(r->artifact);
	if (r->api_free)
		r->api_free(r->api);
	strv_free(r->build_flags);
	strv_free(r->run_flags);
	strv_free(r->run_args);
	for (size_t i = 0; i < r->ntests; i++) {
		free(r->tests[i].stdin_data);
		free(r->tests[i].expected);
		free(r->tests[i].input_file);
		free(r->tests[i].output_file);
	}
	free(r->tests);
	for (size_t i = 0; i < r->ngroups; i++)
		free(r->groups[i].tests);
	free(r->groups);
	strv_free(r->files_out.match);
	request_free(r->interactor);
	request_free(r->checker);
	free(r);
}
