/*
 * libFuzzer target: the Codize POST /v1/run parser alone, against the
 * shipped language table, with the daemon's caps and with tight ones (so
 * that the size checks and a full error list are reached from small
 * inputs).
 */
#include "autoconf.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "common/lang/langtab.h"
#include "worker/http/api.h"
#include "worker/judge/request.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct langtab *table;
static struct config cfg, tight;

static void init(void)
{
	char err[512];

	config_defaults(&cfg);
	if (langtab_load(GOBOXD_SRCDIR "/languages", &cfg.limits_max, &table, err,
			 sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		abort();
	}
	tight = cfg;
	tight.max_files = 2;
	tight.max_file_bytes = 16;
	tight.max_stdin_bytes = 8;
	tight.max_body_bytes = 4096;
}

/* One parse: a success is a whole request; a failure says why, in bounds. */
static void parse(const uint8_t *data, size_t size, const struct config *c, size_t maxerrs)
{
	struct req_error errs[8];
	struct job_request *r = NULL;
	size_t n = 0;

	memset(errs, 0, sizeof(errs));
	if (api_codize_parse((const char *)data, size, table, c, &r, errs, maxerrs, &n) == 0) {
		if (!r || !r->lang || r->nfiles == 0 || r->ntests != 1 || !r->files[0].name)
			abort();
		request_free(r);
		return;
	}
	if (n == 0 || n > maxerrs)
		abort();
	for (size_t i = 0; i < n; i++)
		if (!memchr(errs[i].code, '\0', sizeof(errs[i].code)) || !errs[i].code[0] ||
		    !memchr(errs[i].message, '\0', sizeof(errs[i].message)) ||
		    !memchr(errs[i].path, '\0', sizeof(errs[i].path)))
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!table)
		init();
	parse(data, size, &cfg, 8);
	parse(data, size, &tight, 1);
	return 0;
}
