#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/config.h"
#include "common/langtab.h"
#include "common/log.h"
#include "master/master.h"

extern char **environ;

/* The install step: every package the configured languages ask for. */
static void list_packages(const struct langtab *lt, bool npm)
{
	for (size_t i = 0; i < langtab_count(lt); i++) {
		const struct lang *l = langtab_at(lt, i);
		const struct strv *v = npm ? &l->npm_packages : &l->debian_packages;

		for (size_t k = 0; k < v->n; k++)
			printf("%s\n", v->v[k]);
	}
}

int main(int argc, char **argv)
{
	struct config cfg;
	struct langtab *lt = NULL;
	char err[1024];
	bool exit_now = false;

	log_init("master", LOG_INFO);
	if (config_build(&cfg, argc, argv, environ, &exit_now, err, sizeof(err)) < 0) {
		fprintf(stderr, "goboxd: %s\n", err);
		config_free(&cfg);
		return 2;
	}
	if (exit_now) {
		config_free(&cfg);
		return 0;
	}
	log_init("master", (enum log_level)cfg.log_level);
	if (langtab_load(cfg.languages_dir, &cfg.limits_max, &lt, err, sizeof(err)) < 0) {
		fprintf(stderr, "goboxd: %s\n", err);
		config_free(&cfg);
		return 2;
	}
	switch (cfg.action) {
	case ACTION_CHECK:
		printf("configuration OK, %zu languages\n", langtab_count(lt));
		langtab_free(lt);
		config_free(&cfg);
		return 0;
	case ACTION_LIST_DEBIAN:
	case ACTION_LIST_NPM:
		list_packages(lt, cfg.action == ACTION_LIST_NPM);
		langtab_free(lt);
		config_free(&cfg);
		return 0;
	default:
		break;
	}
	return master_run(&cfg, lt, argc, argv, environ);
}
