/* libFuzzer target: both request parsers against the shipped language table. */
#include "autoconf.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/config.h"
#include "common/lang/langtab.h"
#include "worker/http/api.h"
#include "worker/judge/request.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct langtab *table;
static struct config cfg;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct job_request *r = NULL;
	struct req_error e, errs[8];
	size_t n = 0;

	if (!table) {
		char err[512];

		config_defaults(&cfg);
		cfg.network = true; /* "network": true parsed too */
		if (langtab_load(GOBOXD_SRCDIR "/languages", &cfg.limits_max, &table, err,
				 sizeof(err)) < 0) {
			fprintf(stderr, "%s\n", err);
			abort();
		}
	}
	if (api_run_parse((const char *)data, size, table, &cfg, &r, &e) == 0)
		request_free(r);
	r = NULL;
	if (api_codize_parse((const char *)data, size, table, &cfg, &r, errs, 8, &n) == 0)
		request_free(r);
	return 0;
}
