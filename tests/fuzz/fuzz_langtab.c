/*
 * libFuzzer target: the language loader (libyaml, yamlutil.c, langtab.c
 * with langfile.c, langstep.c and langapi.c) on the input as one language
 * file, NAME.yaml in a directory of its own, read the way the daemon reads
 * languages/. A file that loads must then work: a minimal request for it
 * parses, and its steps expand.
 */
#include "autoconf.h"

#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/config.h"
#include "common/lang/langtab.h"
#include "common/lang/placeholder.h"
#include "common/strv.h"
#include "worker/http/api.h"
#include "worker/judge/request.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64];
static char file[96];
static struct config cfg;

static void init(void)
{
	const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";

	config_defaults(&cfg);
	snprintf(dir, sizeof(dir), "%s/goboxd-fuzz-langtab-XXXXXX", base);
	if (!mkdtemp(dir))
		abort();
	snprintf(file, sizeof(file), "%s/lang.yaml", dir);
}

static void put(const uint8_t *data, size_t size)
{
	int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0)
		abort();
	while (size > 0) {
		ssize_t n = write(fd, data, size);

		if (n <= 0)
			abort();
		data += n;
		size -= (size_t)n;
	}
	close(fd);
}

/* Both steps of a parsed request expand, as the job runner expands them. */
static void expand(const struct job_request *r)
{
	const struct lang *l = r->lang;
	const struct lang_step *steps[2] = { l->has_build ? &l->build : NULL, &l->run };
	const char *names[2] = { r->files[0].name, NULL };

	for (int i = 0; i < 2; i++) {
		struct expand_ctx ctx = {
			.source = r->files[0].name,
			.artifact = r->artifact,
			.sources = names,
			.flags = (const char *const *)(i == 0 ? r->build_flags : r->run_flags),
			.memory_mb = 256,
		};
		char **argv = NULL, **envp = NULL;

		if (!steps[i])
			continue;
		ctx.default_flags = (const char *const *)steps[i]->default_flags;
		if (placeholder_expand_argv(steps[i]->cmd, steps[i]->args, &ctx, &argv) < 0 ||
		    placeholder_expand_env(steps[i]->env, &ctx, &envp) < 0)
			abort();
		strv_free(argv);
		strv_free(envp);
	}
}

/* A request that names nothing but the language, or for languages that
 * need a file name, a name with the default's extension. */
static void use(const struct langtab *t, const struct lang *l)
{
	static const char src[] = "public class Main { public static void main(String[] a) {} }\\n"
				  "object Main { @JvmStatic fun main(a: Array<String>) {} }\\n";
	bool needs_name = l->source_from_request && !l->source_default && !l->entry_res;
	const char *ext = l->source_default ? strrchr(l->source_default, '.') : NULL;
	char body[512], list[256];
	struct job_request *r = NULL;
	struct req_error e;
	const char **mounts;
	char *entry;

	snprintf(body, sizeof(body),
		 "{\"language\":\"%s\",\"source\":\"%s\"%s%s%s,\"tests\":[{}]}", l->id, src,
		 needs_name ? ",\"source_filename\":\"Main" : "",
		 needs_name ? (ext ? ext : ".java") : "", needs_name ? "\"" : "");
	if (api_run_parse(body, strlen(body), t, &cfg, &r, &e) < 0) {
		fprintf(stderr, "a loaded language refuses a minimal request: %s %s\n", e.code,
			e.message);
		abort();
	}
	expand(r);
	request_free(r);
	entry = langtab_infer_entry(l, src, l->source_from_request ? l->source_default :
								   l->source_filename);
	free(entry);
	if (l->codize_runtime) {
		size_t n = 0;
		struct req_error errs[4];

		snprintf(body, sizeof(body),
			 "{\"runtime\":\"%s\",\"files\":[{\"name\":\"main\",\"content\":\"x\"}]}",
			 l->codize_runtime);
		r = NULL;
		if (api_codize_parse(body, strlen(body), t, &cfg, &r, errs, 4, &n) == 0) {
			expand(r);
			request_free(r);
		}
	}
	langtab_runtime_list(t, list, 8);
	mounts = langtab_mounts(t);
	free(mounts);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct langtab *t = NULL;
	char err[512];

	if (!dir[0])
		init();
	put(data, size);
	err[0] = '\0';
	if (langtab_load(dir, &cfg.limits_max, &t, err, sizeof(err)) < 0) {
		/* refused: with a reason that names the file */
		if (!memchr(err, '\0', sizeof(err)) || strncmp(err, dir, strlen(dir)) != 0)
			abort();
		return 0;
	}
	for (size_t i = 0; i < langtab_count(t); i++)
		use(t, langtab_at(t, i));
	langtab_free(t);
	return 0;
}
