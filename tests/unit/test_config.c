#include "autoconf.h"

#include <errno.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/config.h"
#include "common/log.h"

static char err[512];

static char *write_tmp(const char *text)
{
	char *path = strdup("/tmp/goboxd-config-XXXXXX");
	int fd = mkstemp(path);

	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

Test(config, defaults_are_valid)
{
	struct config c;

	config_defaults(&c);
	cr_assert_eq(config_validate(&c, err, sizeof(err)), 0, "%s", err);
	cr_assert(c.workers >= 1);
	cr_assert_eq(c.workers, c.max_concurrency);
	cr_assert_eq(c.port, 8080);
	cr_assert_eq(c.max_tests, 50);
	cr_assert_eq(c.max_source_bytes, 256 * 1024);
	config_free(&c);
}

/* Codize's flags keep Codize's defaults and apply to /v1/run only. */
Test(config, codize_defaults_and_body_caps)
{
	struct config c;
	char *argv[] = { "goboxd", "--max-body-size", "32M", NULL };
	bool exit_now;

	config_defaults(&c);
	cr_expect_eq(c.max_files, 10);
	cr_expect_eq(c.max_file_bytes, 256 * 1024);
	cr_expect_eq(c.max_stdin_bytes, 1024 * 1024);
	cr_expect_eq(c.max_body_bytes, 5 * 1024 * 1024);
	cr_expect_eq(c.output_limit_bytes, 1024 * 1024);
	cr_expect_eq(c.max_run_body_bytes, 16 * 1024 * 1024);
	cr_expect_eq(c.max_test_stdin_bytes, 4 * 1024 * 1024);
	cr_expect_eq(c.http_max_body_bytes, 16 * 1024 * 1024, "the HTTP layer reads the larger cap");
	config_free(&c);
	/* a larger Codize cap raises what the HTTP layer reads, not /run's cap */
	cr_assert_eq(config_build(&c, 3, argv, (char *[]){ NULL }, &exit_now, err, sizeof(err)), 0,
		     "%s", err);
	cr_expect_eq(c.max_body_bytes, 32 * 1024 * 1024);
	cr_expect_eq(c.max_run_body_bytes, 16 * 1024 * 1024);
	cr_expect_eq(c.http_max_body_bytes, 32 * 1024 * 1024);
	config_free(&c);
}

Test(config, file_sets_options_with_units)
{
	char *path = write_tmp("# comment\nport: 9000\nworkers: 3\nqueue_timeout: 2.5s\n"
			       "max_body_size: 4M\ntmpfs_size: 64M\nmetrics: true\n"
			       "jail: bwrap\nsweep_age: 2m\nmax_memory: 2G\n");
	struct config c;

	config_defaults(&c);
	cr_assert_eq(config_load_file(&c, path, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(c.port, 9000);
	cr_assert_eq(c.workers, 3);
	cr_assert_eq(c.queue_timeout_ms, 2500);
	cr_assert_eq(c.max_body_bytes, 4 * 1024 * 1024);
	cr_assert_eq(c.tmpfs_kb, 64 * 1024);
	cr_assert(c.metrics);
	cr_assert_eq(c.jail, JAIL_KIND_BWRAP);
	cr_assert_eq(c.sweep_age_s, 120);
	cr_assert_eq(c.limits_max.memory_kb, 2 * 1024 * 1024);
	config_free(&c);
	unlink(path);
	free(path);
}

Test(config, file_errors_name_file_and_line)
{
	char *path = write_tmp("port: 9000\n\nbogus_option: 1\n");
	struct config c;
	char want[600];

	config_defaults(&c);
	cr_assert_eq(config_load_file(&c, path, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s:3:", path);
	cr_assert(strncmp(err, want, strlen(want)) == 0, "got: %s", err);
	cr_assert(strstr(err, "bogus_option"), "got: %s", err);
	config_free(&c);
	unlink(path);
	free(path);
}

Test(config, file_bad_value_names_line_and_reason)
{
	char *path = write_tmp("workers: 2\nport: 70000\n");
	struct config c;

	config_defaults(&c);
	cr_assert_eq(config_load_file(&c, path, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, ":2:"), "got: %s", err);
	cr_assert(strstr(err, "out of range"), "got: %s", err);
	config_free(&c);
	unlink(path);
	free(path);
}

Test(config, file_syntax_error_is_reported)
{
	char *path = write_tmp("port: [1, 2\n");
	struct config c;

	config_defaults(&c);
	cr_assert_eq(config_load_file(&c, path, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, path), "got: %s", err);
	config_free(&c);
	unlink(path);
	free(path);
}

Test(config, env_reads_port_and_prefixed_names)
{
	char *envp[] = { "PORT=7000", "GOBOXD_MAX_TESTS=9", "GOBOXD_JAIL=nsjail",
			 "UNRELATED=1", NULL };
	struct config c;

	config_defaults(&c);
	cr_assert_eq(config_load_env(&c, envp, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(c.port, 7000);
	cr_assert_eq(c.max_tests, 9);
	cr_assert_eq(c.jail, JAIL_KIND_NSJAIL);
	config_free(&c);
}

Test(config, env_goboxd_port_beats_port)
{
	char *envp[] = { "GOBOXD_PORT=7001", "PORT=7000", NULL };
	struct config c;

	config_defaults(&c);
	cr_assert_eq(config_load_env(&c, envp, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(c.port, 7001);
	config_free(&c);
}

Test(config, env_error_names_variable)
{
	char *envp[] = { "GOBOXD_WORKERS=many", NULL };
	struct config c;

	config_defaults(&c);
	cr_assert_eq(config_load_env(&c, envp, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "GOBOXD_WORKERS"), "got: %s", err);
	config_free(&c);
}

Test(config, precedence_args_over_env_over_file)
{
	char *path = write_tmp("port: 1111\nmax_tests: 11\nworkers: 5\n");
	char *envp[] = { "GOBOXD_MAX_TESTS=22", "GOBOXD_PORT=2222", NULL };
	char *argv[] = { "goboxd", "--config", path, "--port", "3333", NULL };
	struct config c;
	bool exit_now;

	cr_assert_eq(config_build(&c, 5, argv, envp, &exit_now, err, sizeof(err)), 0, "%s",
		     err);
	cr_assert_not(exit_now);
	cr_assert_eq(c.port, 3333);     /* command line */
	cr_assert_eq(c.max_tests, 22);  /* environment over file */
	cr_assert_eq(c.workers, 5);     /* file over default */
	config_free(&c);
	unlink(path);
	free(path);
}

Test(config, config_file_from_env)
{
	char *path = write_tmp("max_files: 7\n");
	char envbuf[300];
	char *envp[] = { envbuf, NULL };
	char *argv[] = { "goboxd", NULL };
	struct config c;
	bool exit_now;

	snprintf(envbuf, sizeof(envbuf), "GOBOXD_CONFIG=%s", path);
	cr_assert_eq(config_build(&c, 1, argv, envp, &exit_now, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(c.max_files, 7);
	config_free(&c);
	unlink(path);
	free(path);
}

Test(config, args_codize_flags_and_errors)
{
	char *argv[] = { "goboxd", "--run-timeout", "500ms", "--compile-timeout", "10",
			 "--output-limit", "64k", "--max-concurrency", "3", "--metrics", NULL };
	char *bad[] = { "goboxd", "--max-tests", "0", NULL };
	char *unknown[] = { "goboxd", "--no-such-flag", NULL };
	char *stray[] = { "goboxd", "stray", NULL };
	struct config c;
	bool exit_now;

	config_defaults(&c);
	cr_assert_eq(config_load_args(&c, 10, argv, &exit_now, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(c.run_timeout_ms, 500);
	cr_assert_eq(c.compile_timeout_ms, 10000);
	cr_assert_eq(c.output_limit_bytes, 64 * 1024);
	cr_assert_eq(c.max_concurrency, 3);
	cr_assert(c.metrics);
	cr_assert_eq(config_load_args(&c, 3, bad, &exit_now, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "--max-tests"), "got: %s", err);
	cr_assert_eq(config_load_args(&c, 2, unknown, &exit_now, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "--no-such-flag"), "got: %s", err);
	cr_assert_eq(config_load_args(&c, 2, stray, &exit_now, err, sizeof(err)), -EINVAL);
	config_free(&c);
}

/* /v1/run is pinned unless told otherwise, /run only with --pin-cpus. */
Test(config, codize_pin_cpus_is_on_until_turned_off)
{
	char *off[] = { "goboxd", "--codize-pin-cpus=false", NULL };
	char *on[] = { "goboxd", "--codize-pin-cpus", NULL };
	struct config c;
	bool exit_now;

	config_defaults(&c);
	cr_assert(c.codize_pin_cpus);
	cr_assert(!c.pin_cpus);
	cr_assert_eq(config_load_args(&c, 2, off, &exit_now, err, sizeof(err)), 0, "%s", err);
	cr_assert(!c.codize_pin_cpus);
	cr_assert_eq(config_load_args(&c, 2, on, &exit_now, err, sizeof(err)), 0, "%s", err);
	cr_assert(c.codize_pin_cpus);
	config_free(&c);
}

/* Workers and their jails are kept on their CPUs unless told otherwise. */
Test(config, pin_workers_is_on_until_turned_off)
{
	char *off[] = { "goboxd", "--pin-workers=false", NULL };
	struct config c;
	bool exit_now;

	config_defaults(&c);
	cr_assert(c.pin_workers);
	cr_assert_eq(config_load_args(&c, 2, off, &exit_now, err, sizeof(err)), 0, "%s", err);
	cr_assert(!c.pin_workers);
	config_free(&c);
}

Test(config, validate_rejects_relative_dirs)
{
	struct config c;

	config_defaults(&c);
	free(c.jail_dir);
	c.jail_dir = strdup("relative/jails");
	cr_assert_eq(config_validate(&c, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "absolute"), "got: %s", err);
	free(c.jail_dir);
	c.jail_dir = strdup("/var/lib/goboxd/jails");
	/* A small body cap (Codize's --max-body-size) simply wins over the source cap. */
	c.max_body_bytes = 64 * 1024;
	cr_assert_eq(config_validate(&c, err, sizeof(err)), 0, "%s", err);
	config_free(&c);
}

Test(config, operations_options_from_every_source)
{
	char *path = write_tmp("log_file: /var/log/goboxd.log\ncgroup_root: /sys/fs/cgroup/x\n");
	char *envp[] = { "GOBOXD_ALLOW_DEGRADED_CGROUPS=true", NULL };
	char *argv[] = { "goboxd", "--config", path, "--log-file", "/tmp/g.log", NULL };
	struct config c;
	bool exit_now;

	config_defaults(&c);
	cr_assert_null(c.log_file);
	cr_assert_not(c.allow_degraded_cgroups);
	config_free(&c);
	cr_assert_eq(config_build(&c, 5, argv, envp, &exit_now, err, sizeof(err)), 0, "%s",
		     err);
	cr_assert_str_eq(c.log_file, "/tmp/g.log");
	cr_assert_str_eq(c.cgroup_root, "/sys/fs/cgroup/x");
	cr_assert(c.allow_degraded_cgroups);
	config_free(&c);
	unlink(path);
	free(path);
}

Test(config, relative_paths_resolve_against_the_working_directory)
{
	struct config c;

	config_defaults(&c);
	free(c.languages_dir);
	c.languages_dir = strdup("languages");
	free(c.jail_dir);
	c.jail_dir = strdup("./jails");
	c.log_file = strdup("goboxd.log");
	cr_assert_eq(config_resolve_paths(&c, "/srv/goboxd", err, sizeof(err)), 0, "%s", err);
	cr_expect_str_eq(c.languages_dir, "/srv/goboxd/languages");
	cr_expect_str_eq(c.jail_dir, "/srv/goboxd/jails");
	cr_expect_str_eq(c.log_file, "/srv/goboxd/goboxd.log");
	/* absolute ones, and an unset one, stay as they are */
	cr_expect_str_eq(c.nsjail_path, "/usr/local/bin/nsjail");
	cr_expect_null(c.init_path);
	cr_assert_eq(config_validate(&c, err, sizeof(err)), 0, "%s", err);
	free(c.jail_dir);
	c.jail_dir = strdup(".");
	cr_assert_eq(config_resolve_paths(&c, "/", err, sizeof(err)), 0, "%s", err);
	cr_expect_str_eq(c.jail_dir, "/");
	free(c.jail_dir);
	c.jail_dir = strdup(".");
	cr_assert_eq(config_resolve_paths(&c, "/srv/goboxd", err, sizeof(err)), 0, "%s", err);
	cr_expect_str_eq(c.jail_dir, "/srv/goboxd");
	config_free(&c);
}

Test(config, the_build_tree_falls_back_to_the_source_tree_s_languages)
{
	struct config c;
	char src[] = "/tmp/goboxd-test-src-XXXXXX", langs[64];

	cr_assert_not_null(mkdtemp(src));
	snprintf(langs, sizeof(langs), "%s/languages", src);
	cr_assert_eq(mkdir(langs, 0755), 0);
	config_defaults(&c);
	/* not from the build tree: the default stays (and fails later, loudly) */
	config_builddir_languages(&c, "/usr/sbin/goboxd", "/home/x/goboxd/build", src);
	cr_expect_str_eq(c.languages_dir, CONFIG_DEFAULT_LANGUAGES_DIR);
	cr_expect_not(c.languages_from_source);
	/* a prefix of the path is not the build directory */
	config_builddir_languages(&c, "/home/x/goboxd/build2/goboxd", "/home/x/goboxd/build",
				  src);
	cr_expect_not(c.languages_from_source);
	config_builddir_languages(&c, "/home/x/goboxd/build/goboxd", "/home/x/goboxd/build",
				  src);
	cr_expect(c.languages_from_source);
	cr_expect_str_eq(c.languages_dir, langs);
	config_free(&c);
	/* a directory the operator named is never replaced */
	config_defaults(&c);
	free(c.languages_dir);
	c.languages_dir = strdup("/nonexistent/languages");
	config_builddir_languages(&c, "/home/x/goboxd/build/goboxd", "/home/x/goboxd/build",
				  src);
	cr_expect_str_eq(c.languages_dir, "/nonexistent/languages");
	config_free(&c);
	/* configured as ../configure: the source tree is named through the
	 * build tree ("SRC/build/.."); the log and --check name it plainly */
	char build[96], dotted[sizeof(build) + 3];
	snprintf(build, sizeof(build), "%s/build", src);
	snprintf(dotted, sizeof(dotted), "%s/..", build);
	cr_assert_eq(mkdir(build, 0755), 0);
	config_defaults(&c);
	config_builddir_languages(&c, "/home/x/goboxd/build/goboxd", "/home/x/goboxd/build",
				  dotted);
	cr_expect(c.languages_from_source);
	cr_expect_str_eq(c.languages_dir, langs);
	config_free(&c);
	rmdir(build);
	rmdir(langs);
	rmdir(src);
}

/* In a test's own process: a user's store is in its own state directory. */
static const char *store_as_user(const char *state_dir, const char *xdg, const char *home)
{
	if (geteuid() == 0)
		cr_assert_eq(setuid(65534), 0);
	unsetenv("STATE_DIRECTORY");
	unsetenv("XDG_STATE_HOME");
	if (state_dir)
		setenv("STATE_DIRECTORY", state_dir, 1);
	if (xdg)
		setenv("XDG_STATE_HOME", xdg, 1);
	setenv("HOME", home, 1);
	return config_default_store();
}

Test(config, a_users_store_is_in_its_state_directory_as_systemd_gives_it)
{
	cr_expect_str_eq(store_as_user("/home/u/.local/state/goboxd:/other", NULL, "/home/u"),
			 "sqlite:/home/u/.local/state/goboxd/submissions.db");
}

Test(config, a_users_store_is_under_xdg_state_home)
{
	cr_expect_str_eq(store_as_user(NULL, "/srv/st", "/home/u"),
			 "sqlite:/srv/st/goboxd/submissions.db");
}

Test(config, a_users_store_is_under_its_home_else)
{
	struct config c;

	cr_expect_str_eq(store_as_user(NULL, NULL, "/home/u"),
			 "sqlite:/home/u/.local/state/goboxd/submissions.db");
	/* and it stays the same, whatever the process becomes later */
	setenv("HOME", "/elsewhere", 1);
	config_defaults(&c);
	cr_expect_str_eq(c.store, "sqlite:/home/u/.local/state/goboxd/submissions.db");
	config_free(&c);
}

/* Each default is written once, in the option table; these are the
 * values goboxd(8) documents, each as the field keeps it. */
Test(config, the_tables_defaults_are_the_documented_ones)
{
	struct config c;

	config_defaults(&c);
	cr_expect_str_eq(c.listen, "0.0.0.0");
	cr_expect_eq(c.port, 8080);
	cr_expect_str_eq(c.jail_dir, "/var/lib/goboxd/jails");
	cr_expect_eq(c.jail, JAIL_KIND_AUTO);
	cr_expect_str_eq(c.nsjail_path, "/usr/local/bin/nsjail");
	cr_expect_str_eq(c.bwrap_path, "/usr/bin/bwrap");
	cr_expect_eq(c.sandbox_uid_base, 60000);
	cr_expect_eq(c.tmpfs_kb, 256 * 1024);
	cr_expect_eq(c.job_disk_kb, 512 * 1024);
	cr_expect_eq(c.job_disk_files, 16384);
	cr_expect_eq(c.jobs_per_jail, 1000);
	cr_expect_eq(c.build_cache_mb, 1024);
	cr_expect_eq(c.store_max_bytes, 1024ull * 1024 * 1024);
	cr_expect_eq(c.store_lease_ms, 30 * 1000);
	cr_expect_eq(c.submission_ttl_s, 24 * 3600);
	cr_expect_eq(c.callback_queue_bytes, 64 * 1024 * 1024);
	cr_expect_eq(c.callback_host_queue_bytes, 16 * 1024 * 1024);
	cr_expect_eq(c.callback_senders, 8);
	cr_expect_eq(c.max_queue_size, 256);
	cr_expect_eq(c.queue_timeout_ms, 60 * 1000);
	cr_expect_eq(c.max_run_body_bytes, 16 * 1024 * 1024);
	cr_expect_eq(c.max_body_bytes, 5 * 1024 * 1024);
	cr_expect_eq(c.http_max_body_bytes, 16 * 1024 * 1024);
	cr_expect_eq(c.max_header_bytes, 16 * 1024);
	cr_expect_eq(c.max_source_bytes, 256 * 1024);
	cr_expect_eq(c.max_tests, 50);
	cr_expect_eq(c.max_test_stdin_bytes, 4 * 1024 * 1024);
	cr_expect_eq(c.max_stdin_bytes, 1024 * 1024);
	cr_expect_eq(c.max_expected_bytes, 4 * 1024 * 1024);
	cr_expect_eq(c.max_files, 10);
	cr_expect_eq(c.max_file_bytes, 256 * 1024);
	cr_expect_eq(c.max_job_output_bytes, 32 * 1024 * 1024);
	cr_expect_eq(c.max_return_files, 64);
	cr_expect_eq(c.max_return_file_bytes, 1024 * 1024);
	cr_expect_eq(c.max_return_total_bytes, 8 * 1024 * 1024);
	cr_expect_eq(c.max_batch_answer_bytes, 32 * 1024 * 1024);
	cr_expect_eq(c.read_timeout_ms, 10 * 1000);
	cr_expect_eq(c.keepalive_timeout_ms, 30 * 1000);
	cr_expect_eq(c.limits_max.wall_ms, 60 * 1000);
	cr_expect_eq(c.limits_max.cpu_ms, 60 * 1000);
	cr_expect_eq(c.limits_max.memory_kb, 4 * 1024 * 1024);
	cr_expect_eq(c.limits_max.max_processes, 256);
	cr_expect_eq(c.limits_max.fsize_kb, 256 * 1024);
	cr_expect_eq(c.limits_max.output_kb, 16 * 1024);
	cr_expect_eq(c.run_timeout_ms, 0);
	cr_expect_eq(c.compile_timeout_ms, 0);
	cr_expect_eq(c.output_limit_bytes, 1024 * 1024);
	cr_expect_eq(c.sweep_age_s, 30 * 60);
	cr_expect_eq(c.sweep_interval_s, 5 * 60);
	cr_expect_eq(c.shutdown_timeout_s, 30);
	cr_expect_not(c.metrics);
	cr_expect(c.codize_pin_cpus);
	cr_expect_not(c.pin_cpus);
	cr_expect_eq(c.log_level, LOG_INFO);
	cr_expect_gt(c.workers, 0);
	cr_expect_eq(c.max_concurrency, c.workers, "both are the CPUs");
	cr_expect_not_null(c.store);
	config_free(&c);
}

/* --network: its stack must be there, and its allow list must parse. */
Test(config, network_needs_slirp4netns_and_a_valid_allow_list)
{
	char *missing[] = { "goboxd", "--network", "--slirp4netns-path", "/nonexistent/slirp4netns",
			    NULL };
	char *bad_net[] = { "goboxd", "--network-allow", "10.1.2.0/33", NULL };
	char *good[] = { "goboxd", "--network-allow", "10.1.2.0/24,fd00::/8", "--network-max-bytes",
			 "1M", "--network-max-connections", "8", NULL };
	char *const envp[] = { NULL };
	struct config c;
	bool exit_now;

	cr_assert_eq(config_build(&c, 4, missing, envp, &exit_now, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "no slirp4netns at /nonexistent/slirp4netns"), "got: %s", err);
	config_free(&c);
	cr_assert_eq(config_build(&c, 3, bad_net, envp, &exit_now, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "--network-allow"), "got: %s", err);
	config_free(&c);
	cr_assert_eq(config_build(&c, 7, good, envp, &exit_now, err, sizeof(err)), 0, "%s", err);
	cr_assert(!c.network, "off unless asked");
	cr_assert_eq(c.network_nets.n, 2);
	cr_assert_eq(c.network_max_bytes, 1024 * 1024);
	cr_assert_eq(c.network_max_connections, 8);
	config_free(&c);
}
