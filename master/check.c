#include "autoconf.h"

#include "master/check.h"

#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/strv.h"
#include "worker/cgroup/cgroup_place.h"

static void print_config(const struct config *c, FILE *out)
{
	fprintf(out, "config: %s\n",
		c->config_file ? c->config_file : "built-in defaults, environment and flags");
	fprintf(out, "  listen %s:%u, %u workers, %u jobs at once, queue %u\n", c->listen,
		(unsigned)c->port, c->workers, c->max_concurrency, c->max_queue_size);
	fprintf(out, "  jail dir %s, log %s\n", c->jail_dir, c->log_file ? c->log_file : "stderr");
	/* what a subordinate range (rootless) or a firewall rule must cover */
	fprintf(out, "  sandbox uids and gids %u-%u\n",
		(unsigned)config_sandbox_uid(c, CONFIG_SANDBOX_WORKER, 0),
		(unsigned)config_sandbox_uid(c, CONFIG_SANDBOX_JUDGE, STATS_MAX_WORKERS - 1));
}

static void print_languages(const struct config *c, const struct langtab *langs, FILE *out)
{
	size_t n = langtab_count(langs), built = 0, aliases = 0;

	for (size_t i = 0; i < n; i++) {
		const struct lang *l = langtab_at(langs, i);

		built += l->has_build;
		aliases += strv_len(l->aliases);
	}
	fprintf(out, "languages: %zu from %s (%zu with a build step, %zu without; %zu aliases)\n",
		n, c->languages_dir, built, n - built, aliases);
	if (c->languages_from_source)
		fprintf(out, "  (the source tree's: %s does not exist and this goboxd runs from its "
			"build directory)\n", CONFIG_DEFAULT_LANGUAGES_DIR);
	fputs(" ", out);
	for (size_t i = 0; i < n; i++)
		fprintf(out, " %s", langtab_at(langs, i)->id);
	fputs("\n", out);
}

static bool is_executable(const char *path)
{
	struct stat st;

	return path[0] == '/' && stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	       access(path, X_OK) == 0;
}

/* The same choice the sandbox makes: auto takes nsjail, then bwrap. */
static int check_jail(const struct config *c, FILE *out)
{
	const char *name = NULL, *path = NULL;

	switch (c->jail) {
	case JAIL_KIND_AUTO:
		if (is_executable(c->nsjail_path)) {
			name = "nsjail";
			path = c->nsjail_path;
		} else if (is_executable(c->bwrap_path)) {
			name = "bwrap";
			path = c->bwrap_path;
		}
		break;
	case JAIL_KIND_NSJAIL:
		if (is_executable(c->nsjail_path)) {
			name = "nsjail";
			path = c->nsjail_path;
		}
		break;
	case JAIL_KIND_BWRAP:
		if (is_executable(c->bwrap_path)) {
			name = "bwrap";
			path = c->bwrap_path;
		}
		break;
	}
	if (!path) {
		fprintf(out, "FAILED: jail %s: no executable binary (nsjail %s, bwrap %s)\n",
			config_jail_name(c->jail), c->nsjail_path, c->bwrap_path);
		return CHECK_FAILED;
	}
	fprintf(out, "jail: %s %s (jail: %s)\n", name, path, config_jail_name(c->jail));
	return CHECK_OK;
}

/* The line goboxd says at start: what it found, what it needs, what it takes. */
static int check_cgroups(const struct config *c, FILE *out)
{
	struct cgroup_host h;
	struct cgroup_place p;
	char err[1536];
	int rc;

	if ((rc = cgroup_place_read_host(&h, err, sizeof(err))) == 0) {
		rc = cgroup_place_locate(&h, c->cgroup_root, &p, err, sizeof(err));
		cgroup_place_free_host(&h);
	}
	if (rc != 0 && c->allow_degraded_cgroups) {
		fprintf(out, "cgroups: %s; would run degraded (every job refused)\n", err);
		return CHECK_OK;
	}
	if (rc != 0) {
		fprintf(out, "FAILED: cgroups: %s\n", err);
		return CHECK_FAILED;
	}
	fprintf(out, "cgroups: v%d, %s\n", (int)p.ver, p.report);
	return CHECK_OK;
}

int check_run(const struct config *cfg, const struct langtab *langs,
	      const struct rootless *rootless, FILE *out)
{
	char who[512];
	int rc = CHECK_OK;

	print_config(cfg, out);
	rootless_describe(rootless, who, sizeof(who));
	fprintf(out, "user: %s\n", who);
	print_languages(cfg, langs, out);
	if (check_jail(cfg, out) != CHECK_OK)
		rc = CHECK_FAILED;
	if (check_cgroups(cfg, out) != CHECK_OK)
		rc = CHECK_FAILED;
	fprintf(out, "%s\n", rc == CHECK_OK ? "OK" : "FAILED");
	return rc;
}
