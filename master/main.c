#include "autoconf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/config.h"
#include "common/lang/langtab.h"
#include "common/log.h"
#include "common/proctitle.h"
#include "common/util.h"
#include "master/check.h"
#include "master/master.h"
#include "master/rootless.h"

extern char **environ;

/* Seen before in the languages up to and including (li, ki)? */
static bool listed_before(const struct langtab *langs, bool npm, size_t li, size_t ki)
{
	const struct lang *l = langtab_at(langs, li);
	const char *name = (npm ? l->npm_packages : l->debian_packages)[ki];

	for (size_t i = 0; i <= li; i++) {
		const struct lang *o = langtab_at(langs, i);
		char *const *v = npm ? o->npm_packages : o->debian_packages;

		for (size_t k = 0; v[k] && (i < li || k < ki); k++)
			if (strcmp(v[k], name) == 0)
				return true;
	}
	return false;
}

/* The install step: every package the configured languages ask for, once. */
static void list_packages(const struct langtab *langs, bool npm)
{
	for (size_t i = 0; i < langtab_count(langs); i++) {
		const struct lang *l = langtab_at(langs, i);
		char *const *v = npm ? l->npm_packages : l->debian_packages;

		for (size_t k = 0; v[k]; k++)
			if (!listed_before(langs, npm, i, k))
				printf("%s\n", v[k]);
	}
}

/*
 * --try-page serves xterm.js and xterm.css from --try-page-xterm-dir at
 * each request: said at start when they are not there, or when xterm.js
 * is no browser build (Debian 12's libjs-xterm 3.8.1 ships a 288-byte
 * CommonJS stub), the page then standing in with a plain terminal.
 */
static void try_page_say(const struct config *cfg)
{
	static const char *const names[] = { "xterm.js", "xterm.css" };
	char path[4096];
	struct stat st;
	bool ok = true;

	if (!cfg->try_page)
		return;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", cfg->try_page_xterm_dir, names[i]);
		if (stat(path, &st) < 0) {
			log_warn("--try-page: %s: %s: the page at /try has no xterm.js terminal"
				 " (./setup.sh install puts npm's @xterm/xterm there, or give"
				 " --try-page-xterm-dir)",
				 path, strerror(errno));
			ok = false;
		} else if (i == 0 && st.st_size < 4096) {
			log_warn("--try-page: %s has %lld bytes, no browser build of xterm.js:"
				 " the page at /try uses a plain terminal (give --try-page-xterm-dir,"
				 " a directory with xterm.js's browser build)", path,
				 (long long)st.st_size);
			ok = false;
		}
	}
	if (ok)
		log_info("--try-page: GET /try serves a page to try live sessions, its terminal"
			 " xterm.js from %s", cfg->try_page_xterm_dir);
}

int main(int argc, char **argv)
{
	struct config cfg;
	struct langtab *langs = NULL;
	struct rootless rootless = { .active = false };
	char err[1024];
	bool exit_now = false;

	/* from here on argv is a copy: titles overwrite the original strings */
	argv = proctitle_init(argc, argv);
	(void)self_exe(); /* before rootless_enter leaves this mount namespace */
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
	if (cfg.languages_from_source && cfg.action == ACTION_RUN)
		log_info("%s does not exist and this goboxd runs from its build directory: "
			 "languages from the source tree, %s", CONFIG_DEFAULT_LANGUAGES_DIR,
			 cfg.languages_dir);
	if (langtab_load(cfg.languages_dir, &cfg.limits_max, &langs, err, sizeof(err)) < 0) {
		fprintf(stderr, "goboxd: %s\n", err);
		if (access(cfg.languages_dir, F_OK) < 0)
			fprintf(stderr, "goboxd: give --languages-dir DIR (a directory of language "
				"files, such as the repository's languages/), or install them in "
				"%s\n", CONFIG_DEFAULT_LANGUAGES_DIR);
		config_free(&cfg);
		return 2;
	}
	if (cfg.action == ACTION_RUN || cfg.action == ACTION_CHECK) {
		/* an unprivileged user's goboxd is root of a namespace of its own */
		if (rootless_enter(&cfg, &rootless, err, sizeof(err)) < 0) {
			if (cfg.action == ACTION_CHECK)
				printf("FAILED: %s\nFAILED\n", err);
			else
				log_error("start-up failed: %s", err);
			langtab_free(langs);
			config_free(&cfg);
			return 1;
		}
	}
	switch (cfg.action) {
	case ACTION_CHECK: {
		int rc = check_run(&cfg, langs, &rootless, stdout);

		langtab_free(langs);
		config_free(&cfg);
		return rc;
	}
	case ACTION_LIST_DEBIAN:
	case ACTION_LIST_NPM:
		list_packages(langs, cfg.action == ACTION_LIST_NPM);
		langtab_free(langs);
		config_free(&cfg);
		return 0;
	default:
		break;
	}
	if (cfg.log_file) {
		int rc = log_open_file(cfg.log_file);

		if (rc < 0) {
			fprintf(stderr, "goboxd: --log-file %s: %s\n", cfg.log_file, strerror(-rc));
			langtab_free(langs);
			config_free(&cfg);
			return 2;
		}
	}
	if (rootless.active) {
		rootless_describe(&rootless, err, sizeof(err));
		log_info("%s", err);
	}
	try_page_say(&cfg);
	return master_run(&cfg, langs, argc, argv, environ);
}
