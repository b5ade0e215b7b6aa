#include "autoconf.h"

#include "worker/cgroup/cgroup.h"
#include "worker/cgroup/cgroup_place.h"
#include "worker/cgroup/cgroupfs.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- pure parsing ---- */

Test(cgroup_parse, mountinfo_v1_comounted)
{
	struct cgroup_mount m;
	const char *l = "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid,nodev,noexec,relatime "
			"shared:12 - cgroup cgroup rw,cpu,cpuacct\n";

	cr_assert_eq(cgroup_place_parse_mountinfo_line(l, &m), 0);
	cr_assert_str_eq(m.root, "/");
	cr_assert_str_eq(m.mount_point, "/sys/fs/cgroup/cpu,cpuacct");
	cr_assert_str_eq(m.fstype, "cgroup");
	cr_assert_str_eq(m.super_opts, "rw,cpu,cpuacct");
	cr_assert(cgroup_place_has_word(m.super_opts, "cpuacct"));
	cr_assert(cgroup_place_has_word(m.super_opts, "cpu"));
	cr_assert_not(cgroup_place_has_word(m.super_opts, "memory"));
}

Test(cgroup_parse, mountinfo_v2_no_optional_fields)
{
	struct cgroup_mount m;
	const char *l = "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw";

	cr_assert_eq(cgroup_place_parse_mountinfo_line(l, &m), 0);
	cr_assert_str_eq(m.mount_point, "/sys/fs/cgroup/unified");
	cr_assert_str_eq(m.fstype, "cgroup2");
	cr_assert_str_eq(m.super_opts, "rw");
}

Test(cgroup_parse, mountinfo_escapes_and_several_optional_fields)
{
	struct cgroup_mount m;
	const char *l = "7 6 0:5 /docker/ab\\040c /mnt/my\\040cg rw shared:3 master:1 - cgroup2 "
			"none rw,nsdelegate,memory_recursiveprot\n";

	cr_assert_eq(cgroup_place_parse_mountinfo_line(l, &m), 0);
	cr_assert_str_eq(m.root, "/docker/ab c");
	cr_assert_str_eq(m.mount_point, "/mnt/my cg");
	cr_assert_str_eq(m.fstype, "cgroup2");
	cr_assert(cgroup_place_has_word(m.super_opts, "nsdelegate"));
}

Test(cgroup_parse, mountinfo_malformed)
{
	struct cgroup_mount m;

	cr_assert_eq(cgroup_place_parse_mountinfo_line("", &m), -EINVAL);
	cr_assert_eq(cgroup_place_parse_mountinfo_line("1 2 0:3 / /x rw shared:1", &m), -EINVAL);
	cr_assert_eq(cgroup_place_parse_mountinfo_line("1 2 0:3 / /x rw - cgroup2", &m), -EINVAL);
}

Test(cgroup_parse, has_word_is_exact)
{
	cr_assert(cgroup_place_has_word("cpuset cpu io memory pids\n", "pids"));
	cr_assert(cgroup_place_has_word("cpuset cpu io memory pids\n", "cpu"));
	cr_assert_not(cgroup_place_has_word("cpuset io memory", "cpu"));
	cr_assert_not(cgroup_place_has_word("rw,name=systemd", "systemd"));
	cr_assert_not(cgroup_place_has_word("", "memory"));
	cr_assert_not(cgroup_place_has_word("memory", ""));
}

static const char proc_cgroup_hybrid[] = "9:name=systemd:/user.slice\n"
					 "8:pids:/user.slice/u\n"
					 "2:cpu,cpuacct:/a:b\n"
					 "4:memory:/process_api/5bba\n"
					 "0::/user.slice/x.scope\n";

Test(cgroup_parse, proc_cgroup_v1_and_v2_lines)
{
	char p[256];

	cr_assert_eq(cgroup_place_parse_proc_cgroup(proc_cgroup_hybrid, "memory", p, sizeof(p)), 0);
	cr_assert_str_eq(p, "/process_api/5bba");
	cr_assert_eq(cgroup_place_parse_proc_cgroup(proc_cgroup_hybrid, "cpuacct", p, sizeof(p)), 0);
	cr_assert_str_eq(p, "/a:b");
	cr_assert_eq(cgroup_place_parse_proc_cgroup(proc_cgroup_hybrid, NULL, p, sizeof(p)), 0);
	cr_assert_str_eq(p, "/user.slice/x.scope");
	cr_assert_eq(cgroup_place_parse_proc_cgroup(proc_cgroup_hybrid, "freezer", p, sizeof(p)), -ENOENT);
	cr_assert_eq(cgroup_place_parse_proc_cgroup(proc_cgroup_hybrid, "memory", p, 5), -ENAMETOOLONG);
}

Test(cgroup_parse, proc_cgroup_v1_only_has_no_v2_line)
{
	char p[64];

	cr_assert_eq(cgroup_place_parse_proc_cgroup("4:memory:/\n3:pids:/\n", NULL, p, sizeof(p)), -ENOENT);
	cr_assert_eq(cgroup_place_parse_proc_cgroup("0::/\n", NULL, p, sizeof(p)), 0);
	cr_assert_str_eq(p, "/");
}

Test(cgroup_parse, v2_base_rel)
{
	char o[256];

	cr_assert_eq(cgroup_place_v2_base_rel("/", "/", o, sizeof(o)), 0);
	cr_assert_str_eq(o, "/");
	cr_assert_eq(cgroup_place_v2_base_rel("/system.slice/goboxd.service", "/", o, sizeof(o)), 0);
	cr_assert_str_eq(o, "/system.slice/goboxd.service");
	/* after cgroup_place_prepare moved the daemon, its workers find the same base */
	cr_assert_eq(cgroup_place_v2_base_rel("/system.slice/goboxd.service/goboxd-daemon", "/", o,
				    sizeof(o)), 0);
	cr_assert_str_eq(o, "/system.slice/goboxd.service");
	cr_assert_eq(cgroup_place_v2_base_rel("/goboxd-daemon", "/", o, sizeof(o)), 0);
	cr_assert_str_eq(o, "/");
	cr_assert_eq(cgroup_place_v2_base_rel("/a/my-goboxd-daemon", "/", o, sizeof(o)), 0);
	cr_assert_str_eq(o, "/a/my-goboxd-daemon");
}

Test(cgroup_parse, v2_base_rel_mount_root)
{
	char o[256];

	cr_assert_eq(cgroup_place_v2_base_rel("/docker/abc/sub", "/docker/abc", o, sizeof(o)), 0);
	cr_assert_str_eq(o, "/sub");
	cr_assert_eq(cgroup_place_v2_base_rel("/docker/abc", "/docker/abc/", o, sizeof(o)), 0);
	cr_assert_str_eq(o, "/");
	cr_assert_eq(cgroup_place_v2_base_rel("/docker/abcd", "/docker/abc", o, sizeof(o)), -ENOENT);
	cr_assert_eq(cgroup_place_v2_base_rel("/other", "/docker/abc", o, sizeof(o)), -ENOENT);
}

Test(cgroup_parse, v2_base_rel_rejects)
{
	char o[8];

	cr_assert_eq(cgroup_place_v2_base_rel("/../..", "/", o, sizeof(o)), -EINVAL);
	cr_assert_eq(cgroup_place_v2_base_rel("/a/../b", "/", o, sizeof(o)), -EINVAL);
	cr_assert_eq(cgroup_place_v2_base_rel("relative", "/", o, sizeof(o)), -EINVAL);
	cr_assert_eq(cgroup_place_v2_base_rel("/a..b", "/", o, sizeof(o)), 0);
	cr_assert_eq(cgroup_place_v2_base_rel("/abcdefghij", "/", o, sizeof(o)), -ENAMETOOLONG);
}

Test(cgroup_parse, kv_files)
{
	const char *events = "low 0\nhigh 0\nmax 17\noom 2\noom_kill 1\noom_group_kill 0\n";
	const char *oomctl = "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n";
	const char *cpustat = "usage_usec 123456\nuser_usec 100000\nsystem_usec 23456";
	uint64_t v;

	cr_assert_eq(cgroupfs_parse_kv(events, "max", &v), 0);
	cr_assert_eq(v, 17);
	cr_assert_eq(cgroupfs_parse_kv(events, "oom", &v), 0);
	cr_assert_eq(v, 2);
	cr_assert_eq(cgroupfs_parse_kv(events, "oom_kill", &v), 0);
	cr_assert_eq(v, 1);
	cr_assert_eq(cgroupfs_parse_kv(oomctl, "oom_kill", &v), 0);
	cr_assert_eq(v, 3);
	cr_assert_eq(cgroupfs_parse_kv(cpustat, "system_usec", &v), 0);
	cr_assert_eq(v, 23456);
	cr_assert_eq(cgroupfs_parse_kv(cpustat, "usage", &v), -ENOENT);
	cr_assert_eq(cgroupfs_parse_kv("oom_kill_disable 0\nunder_oom 0\n", "oom_kill", &v), -ENOENT);
	cr_assert_eq(cgroupfs_parse_kv("max x\n", "max", &v), -EINVAL);
	cr_assert_eq(cgroupfs_parse_kv("max \n", "max", &v), -EINVAL);
	cr_assert_eq(cgroupfs_parse_kv("", "max", &v), -ENOENT);
}

Test(cgroup_parse, pids)
{
	pid_t p[2];

	cr_assert_eq(cgroupfs_parse_pids("", p, 2), 0);
	cr_assert_eq(cgroupfs_parse_pids("12\n345\n", p, 2), 2);
	cr_assert_eq(p[0], 12);
	cr_assert_eq(p[1], 345);
	p[1] = 0;
	cr_assert_eq(cgroupfs_parse_pids("7\n8\n9\n", p, 1), 3);
	cr_assert_eq(p[0], 7);
	cr_assert_eq(p[1], 0);
	cr_assert_eq(cgroupfs_parse_pids("1\n2\n", NULL, 0), 2);
	cr_assert_eq(cgroupfs_parse_pids("1\nx\n", p, 2), -EINVAL);
	cr_assert_eq(cgroupfs_parse_pids("-1\n", p, 2), -EINVAL);
	cr_assert_eq(cgroupfs_parse_pids("0\n", p, 2), -EINVAL);
}

/* ---- choosing a place, on a fake cgroup2 tree in a temp dir ---- */

static char fake_dir[64];
static char fake_mi[8192];

static void fake_write(const char *rel, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s%s", fake_dir, rel);
	f = fopen(path, "w");
	cr_assert_not_null(f, "fopen(%s)", path);
	fputs(text, f);
	fclose(f);
}

static char *fake_read(const char *rel)
{
	static char buf[256];
	char path[PATH_MAX];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s%s", fake_dir, rel);
	f = fopen(path, "r");
	cr_assert_not_null(f, "fopen(%s)", path);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* A cgroup directory "rel" (below the fake mount) offering controllers. */
static void fake_cgroup(const char *rel, const char *controllers)
{
	char path[PATH_MAX], file[PATH_MAX];

	snprintf(path, sizeof(path), "%s%s", fake_dir, rel);
	for (char *p = path + strlen(fake_dir) + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	cr_assert(mkdir(path, 0755) == 0 || errno == EEXIST, "mkdir(%s)", path);
	snprintf(file, sizeof(file), "%s/cgroup.controllers", rel);
	fake_write(file, controllers);
	snprintf(file, sizeof(file), "%s/cgroup.subtree_control", rel);
	fake_write(file, "");
}

/* mountinfo with the fake tree as the cgroup2 mount; mount_root is the
 * hierarchy's directory that is mounted there ("/" on a host), rw "rw"
 * or "ro" */
static void fake_setup_mount_as(const char *mount_root, const char *rw)
{
	snprintf(fake_dir, sizeof(fake_dir), "/tmp/goboxd-cgfake-XXXXXX");
	cr_assert_not_null(mkdtemp(fake_dir));
	snprintf(fake_mi, sizeof(fake_mi),
		 "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
		 "30 22 0:27 %s %s %s,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 "
		 "rw,nsdelegate\n",
		 mount_root, fake_dir, rw);
}

static void fake_setup_mount(const char *mount_root)
{
	fake_setup_mount_as(mount_root, "rw");
}

/* v1 hierarchies in mountinfo, each at <fake tree>/v1/<its controllers>
 * (the directory made or not by the caller): "cpu,cpuacct", "memory",
 * "pids"... */
static void fake_v1_mounts(const char *const *ctrls)
{
	for (int i = 0; ctrls[i]; i++) {
		size_t len = strlen(fake_mi);

		snprintf(fake_mi + len, sizeof(fake_mi) - len,
			 "%d 22 0:%d / %s/v1/%s rw - cgroup cgroup rw,%s\n", 31 + i, 28 + i, fake_dir,
			 ctrls[i], ctrls[i]);
	}
}

static const char *const v1_all[] = { "cpu,cpuacct", "memory", "pids", NULL };

static void fake_setup(void)
{
	fake_setup_mount("/");
}

static void fake_teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fake_dir);
	cr_assert_eq(system(cmd), 0);
}

static int fake_locate(const char *proc_cgroup, bool root, const char *override,
		       struct cgroup_place *p, char *err, size_t errlen)
{
	struct cgroup_host h = { .mountinfo = fake_mi, .proc_cgroup = proc_cgroup, .root = root };

	return cgroup_place_locate(&h, override, p, err, errlen);
}

static char *fake_path(const char *rel)
{
	static char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s%s", fake_dir, rel);
	return path;
}

TestSuite(cgroup_place, .init = fake_setup, .fini = fake_teardown);

Test(cgroup_place, delegated_own_cgroup_is_chosen)
{
	struct cgroup_place p;
	char err[512] = "";

	fake_cgroup("", "cpuset cpu io memory pids");
	fake_cgroup("/system.slice/goboxd.service", "cpu memory pids");
	cr_assert_eq(fake_locate("0::/system.slice/goboxd.service\n", true, NULL, &p, err,
				 sizeof(err)), 0, "%s", err);
	cr_assert_eq(p.ver, CGROUP_V2);
	cr_assert_eq(p.source, CGROUP_SRC_OWN);
	cr_assert_str_eq(p.root, fake_path("/system.slice/goboxd.service"));
	cr_assert_eq(p.ndirs, 1);
	cr_assert_str_eq(p.dirs[0], fake_path("/system.slice/goboxd.service/goboxd"));
}

Test(cgroup_place, daemon_leaf_is_not_the_base)
{
	struct cgroup_place p;
	char err[512] = "";

	fake_cgroup("/system.slice/goboxd.service", "memory pids");
	fake_cgroup("/system.slice/goboxd.service/goboxd-daemon", "memory pids");
	cr_assert_eq(fake_locate("0::/system.slice/goboxd.service/goboxd-daemon\n", true, NULL,
				 &p, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(p.source, CGROUP_SRC_OWN);
	cr_assert_str_eq(p.root, fake_path("/system.slice/goboxd.service"));
}

Test(cgroup_place, undelegated_root_user_falls_back_to_the_cgroup2_root)
{
	struct cgroup_place p;
	char err[512] = "";

	fake_cgroup("", "cpu io memory pids");
	/* the parent delegates only memory: no pids, nothing can run here */
	fake_cgroup("/system.slice/goboxd.service", "memory");
	cr_assert_eq(fake_locate("0::/system.slice/goboxd.service\n", true, NULL, &p, err,
				 sizeof(err)), 0, "%s", err);
	cr_assert_eq(p.ver, CGROUP_V2);
	cr_assert_eq(p.source, CGROUP_SRC_ROOT);
	cr_assert_str_eq(p.root, fake_dir);
	cr_assert_str_eq(p.dirs[0], fake_path("/goboxd"));
}

Test(cgroup_place, undelegated_without_root_is_refused)
{
	struct cgroup_place p = { .ver = 0 };
	char err[512] = "";

	fake_cgroup("", "cpu io memory pids");
	fake_cgroup("/user.slice/u.service", "memory");
	cr_assert_eq(fake_locate("0::/user.slice/u.service\n", false, NULL, &p, err, sizeof(err)),
		     -ENOTSUP);
	cr_assert_eq(p.ver, 0, "the place is set only on success");
	cr_assert(strstr(err, "goboxd's cgroup /user.slice/u.service offers memory but not pids, "
			      "writable; the cgroup2 root is out of reach (not uid 0); ") != NULL,
		  "%s", err);
	cr_assert(strstr(err, "; none usable") != NULL, "%s", err);
}

Test(cgroup_place, a_root_without_pids_is_refused)
{
	struct cgroup_place p;
	char err[512] = "";

	fake_cgroup("", "cpu memory");
	fake_cgroup("/system.slice/goboxd.service", "memory");
	cr_assert_eq(fake_locate("0::/system.slice/goboxd.service\n", true, NULL, &p, err,
				 sizeof(err)), -ENOTSUP);
	cr_assert(strstr(err, "; the cgroup2 root offers memory but not pids, writable;") != NULL,
		  "%s", err);
}

Test(cgroup_place, own_cgroup_without_a_writable_subtree_control_is_not_used)
{
	struct cgroup_place p;
	char err[512] = "";

	fake_cgroup("", "memory pids");
	fake_cgroup("/a", "memory pids");
	cr_assert_eq(unlink(fake_path("/a/cgroup.subtree_control")), 0);
	cr_assert_eq(fake_locate("0::/a\n", true, NULL, &p, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(p.source, CGROUP_SRC_ROOT);
}

Test(cgroup_place, option_wins_and_is_never_second_guessed)
{
	struct cgroup_place p;
	char err[512] = "";

	fake_cgroup("", "memory pids");
	fake_cgroup("/own", "memory pids");
	fake_cgroup("/given", "memory pids");
	fake_cgroup("/poor", "memory");
	cr_assert_eq(fake_locate("0::/own\n", true, fake_path("/given"), &p, err, sizeof(err)), 0,
		     "%s", err);
	cr_assert_eq(p.source, CGROUP_SRC_OPTION);
	cr_assert_str_eq(p.root, fake_path("/given"));
	/* a given cgroup that cannot work is an error, not a reason to look elsewhere */
	cr_assert_eq(fake_locate("0::/own\n", true, fake_path("/poor"), &p, err, sizeof(err)),
		     -ENOTSUP);
	cr_assert(strstr(err, fake_path("/poor")) != NULL, "%s", err);
}

Test(cgroup_place, hybrid_host_uses_v1)
{
	struct cgroup_place p;
	char err[512] = "";

	/* cgroup2 mounted without controllers (they are bound to v1) */
	fake_cgroup("", "");
	fake_cgroup("/v1/cpu,cpuacct", "");
	fake_cgroup("/v1/memory", "");
	fake_cgroup("/v1/pids", "");
	fake_v1_mounts(v1_all);
	cr_assert_eq(fake_locate("4:memory:/x\n0::/\n", true, NULL, &p, err, sizeof(err)), 0,
		     "%s", err);
	cr_assert_eq(p.ver, CGROUP_V1);
	cr_assert_eq(p.source, CGROUP_SRC_V1);
	cr_assert_str_eq(p.root, "");
	cr_assert_eq(p.ndirs, 3);
	cr_assert_str_eq(p.dirs[0], fake_path("/v1/memory/goboxd"));
	cr_assert_str_eq(p.dirs[1], fake_path("/v1/pids/goboxd"));
	cr_assert_str_eq(p.dirs[2], fake_path("/v1/cpu,cpuacct/goboxd"));
	cr_assert(strstr(p.report, "; v1 memory pids cpuacct; ") != NULL, "%s", p.report);
}

Test(cgroup_place, v1_hierarchies_goboxd_cannot_write_are_not_taken)
{
	struct cgroup_place p;
	char err[1024] = "";

	/* listed in mountinfo, but not there to write in */
	fake_cgroup("", "");
	fake_v1_mounts(v1_all);
	cr_assert_eq(fake_locate("0::/\n", true, NULL, &p, err, sizeof(err)), -ENOTSUP);
	cr_assert(strstr(err, "; v1 memory pids cpuacct, not writable (No such file or "
			      "directory); ") != NULL, "%s", err);
}

Test(cgroup_place, no_cgroups_at_all)
{
	struct cgroup_place p;
	char err[512] = "";

	snprintf(fake_mi, sizeof(fake_mi), "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n");
	cr_assert_eq(fake_locate("0::/\n", true, NULL, &p, err, sizeof(err)), -ENOTSUP);
	cr_assert_str_eq(err, "found no cgroup2 mount; no v1 memory, pids or cpuacct; needs memory "
			      "and pids in a writable cgroup2 cgroup, or v1's memory, pids and "
			      "cpuacct; none usable");
}

Test(cgroup_place, prepare_enables_controllers_in_base_and_top)
{
	struct cgroup_place p;
	char err[512] = "";

	fake_cgroup("", "memory pids");
	fake_cgroup("/svc", "memory pids");
	/* on cgroupfs mkdir makes the interface files; here they are made first */
	fake_cgroup("/svc/goboxd", "memory pids");
	cr_assert_eq(fake_locate("0::/svc\n", true, NULL, &p, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(cgroup_place_prepare(&p, err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(fake_read("/svc/cgroup.subtree_control"), "+memory +pids");
	cr_assert_str_eq(fake_read("/svc/goboxd/cgroup.subtree_control"), "+memory +pids");
	/* the cgroup2 root and anything not ours are left alone */
	cr_assert_str_eq(fake_read("/cgroup.subtree_control"), "");
}

Test(cgroup_place, prepare_at_the_root_leaves_enabled_controllers_alone)
{
	struct cgroup_place p;
	char err[512] = "";

	fake_cgroup("", "memory pids");
	fake_write("/cgroup.subtree_control", "memory pids\n");
	fake_cgroup("/goboxd", "memory pids");
	fake_cgroup("/svc", "memory");
	cr_assert_eq(fake_locate("0::/svc\n", true, NULL, &p, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(p.source, CGROUP_SRC_ROOT);
	cr_assert_eq(cgroup_place_prepare(&p, err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(fake_read("/cgroup.subtree_control"), "memory pids\n");
	cr_assert_str_eq(fake_read("/goboxd/cgroup.subtree_control"), "+memory +pids");
	cr_assert_str_eq(fake_read("/svc/cgroup.subtree_control"), "");
}

Test(cgroup_place, prepare_reports_what_it_could_not_write)
{
	struct cgroup_place p;
	char err[512] = "";

	fake_cgroup("", "memory pids");
	fake_cgroup("/svc", "memory pids");
	/* goboxd/ without interface files: the write to it fails */
	cr_assert_eq(fake_locate("0::/svc\n", true, NULL, &p, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(cgroup_place_prepare(&p, err, sizeof(err)), -ENOENT);
	cr_assert(strstr(err, fake_path("/svc/goboxd/cgroup.subtree_control")) != NULL, "%s",
		  err);
}

Test(cgroup_place, container_sharing_the_host_tree_is_refused)
{
	struct cgroup_place p;
	char err[512] = "";

	fake_teardown();
	/* only the container's own subtree of the host hierarchy is mounted */
	fake_setup_mount("/system.slice/docker-1.scope");
	fake_cgroup("", "memory");
	cr_assert_eq(fake_locate("0::/system.slice/docker-1.scope\n", true, NULL, &p, err,
				 sizeof(err)), -ENOTSUP);
	cr_assert(strstr(err, "; the cgroup2 root is out of reach (this mount shows only "
			      "/system.slice/docker-1.scope);") != NULL, "%s", err);
}

Test(cgroup_place, private_namespace_container_uses_its_own_root)
{
	struct cgroup_place p;
	char err[512] = "";

	fake_cgroup("", "cpu memory pids");
	cr_assert_eq(fake_locate("0::/\n", true, NULL, &p, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(p.source, CGROUP_SRC_OWN);
	cr_assert_str_eq(p.root, fake_dir);
}

Test(cgroup_place, a_cgroup2_mount_on_top_of_another_is_the_one_found)
{
	static const char mi[] =
		"22 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
		"30 22 0:27 / /sys/fs/cgroup ro,nosuid - cgroup2 cgroup2 rw\n"
		"31 22 0:27 / /mnt/other rw - cgroup2 cgroup2 rw\n"
		"40 30 0:27 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw\n";
	char where[64];
	bool ro = true;

	/* what a path there reaches: the last mount at the first place */
	cr_assert_eq(cgroup_place_find_v2_mount(mi, where, sizeof(where), &ro), 0);
	cr_assert_str_eq(where, "/sys/fs/cgroup");
	cr_assert_not(ro);
	cr_assert_eq(cgroup_place_find_v2_mount(mi, where, 8, &ro), -ENAMETOOLONG);
	cr_assert_eq(cgroup_place_find_v2_mount("22 1 8:1 / / rw - ext4 /dev/sda1 rw\n", where,
					  sizeof(where), &ro), -ENOENT);
}

/* ---- the line goboxd says at start and in --check ---- */

#define NEEDS "needs memory and pids in a writable cgroup2 cgroup, or v1's memory, pids and " \
	      "cpuacct"

Test(cgroup_place, the_line_says_what_was_found_needed_and_taken)
{
	struct cgroup_place p;
	char err[512] = "", want[2048];

	fake_cgroup("", "cpuset cpu io memory pids");
	fake_cgroup("/system.slice/goboxd.service", "memory pids");
	cr_assert_eq(fake_locate("0::/system.slice/goboxd.service\n", true, NULL, &p, err,
				 sizeof(err)), 0, "%s", err);
	snprintf(want, sizeof(want),
		 "found cgroup2 at %s (read-write); goboxd's cgroup /system.slice/goboxd.service "
		 "offers memory, pids (no cpu), writable; the cgroup2 root offers memory, pids "
		 "and cpu, writable; no v1 memory, pids or cpuacct; " NEEDS "; takes "
		 "%s/system.slice/goboxd.service/goboxd (own cgroup (delegated))",
		 fake_dir, fake_dir);
	cr_assert_str_eq(p.report, want);
}

Test(cgroup_place, a_root_that_delegates_nothing_is_said_and_taken)
{
	struct cgroup_place p;
	char err[512] = "", want[2048];

	fake_cgroup("", "cpu memory pids");
	fake_cgroup("/init.scope", "");
	cr_assert_eq(fake_locate("0::/init.scope\n", true, NULL, &p, err, sizeof(err)), 0, "%s",
		     err);
	snprintf(want, sizeof(want),
		 "found cgroup2 at %s (read-write); goboxd's cgroup /init.scope offers neither "
		 "memory nor pids, writable; the cgroup2 root offers memory, pids and cpu, "
		 "writable; no v1 memory, pids or cpuacct; " NEEDS "; takes %s/goboxd (cgroup2 "
		 "root)",
		 fake_dir, fake_dir);
	cr_assert_str_eq(p.report, want);
	/* without uid 0 the same host gives nothing */
	cr_assert_eq(fake_locate("0::/init.scope\n", false, NULL, &p, err, sizeof(err)),
		     -ENOTSUP);
	cr_assert(strstr(err, "; the cgroup2 root is out of reach (not uid 0); ") != NULL, "%s",
		  err);
}

Test(cgroup_place, a_read_only_cgroupfs_is_refused_and_said)
{
	struct cgroup_place p = { .ver = 0 };
	char err[1024] = "", want[2048];

	fake_teardown();
	fake_setup_mount_as("/", "ro");
	fake_cgroup("", "cpu memory pids");
	fake_cgroup("/system.slice/docker-1.scope", "cpu memory pids");
	cr_assert_eq(fake_locate("0::/system.slice/docker-1.scope\n", true, NULL, &p, err,
				 sizeof(err)), -ENOTSUP);
	snprintf(want, sizeof(want),
		 "found cgroup2 at %s (read-only); goboxd's cgroup /system.slice/docker-1.scope "
		 "offers memory, pids and cpu, read-only; the cgroup2 root offers memory, pids and "
		 "cpu, read-only; no v1 memory, pids or cpuacct; " NEEDS "; none usable",
		 fake_dir);
	cr_assert_str_eq(err, want);
	cr_assert_eq(p.ver, 0);
}

Test(cgroup_place, a_namespace_root_with_memory_only_is_said_once)
{
	struct cgroup_place p;
	char err[1024] = "", want[2048];

	fake_cgroup("", "memory");
	cr_assert_eq(fake_locate("0::/\n", true, NULL, &p, err, sizeof(err)), -ENOTSUP);
	snprintf(want, sizeof(want),
		 "found cgroup2 at %s (read-write); goboxd's cgroup / offers memory but not pids, "
		 "writable; no v1 memory, pids or cpuacct; " NEEDS "; none usable",
		 fake_dir);
	cr_assert_str_eq(err, want);
}

Test(cgroup_place, an_option_is_said_as_given)
{
	struct cgroup_place p;
	char err[1024] = "", want[2048];

	fake_cgroup("", "memory pids");
	fake_cgroup("/given", "memory pids cpu");
	cr_assert_eq(fake_locate("0::/\n", true, fake_path("/given"), &p, err, sizeof(err)), 0,
		     "%s", err);
	snprintf(want, sizeof(want),
		 "found --cgroup-root %s/given, a cgroup2 cgroup that offers memory, pids and cpu, "
		 "writable; " NEEDS "; takes %s/given/goboxd (--cgroup-root)",
		 fake_dir, fake_dir);
	cr_assert_str_eq(p.report, want);
	cr_assert_eq(fake_locate("0::/\n", true, fake_dir, &p, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(fake_locate("0::/\n", true, fake_path("/none"), &p, err, sizeof(err)),
		     -ENOTSUP);
	snprintf(want, sizeof(want),
		 "found --cgroup-root %s/none, not a cgroup2 cgroup; no v1 memory, pids or "
		 "cpuacct in it; " NEEDS "; none usable",
		 fake_dir);
	cr_assert_str_eq(err, want);
}

Test(cgroup_place, a_hybrid_host_missing_a_v1_controller_is_said)
{
	struct cgroup_place p;
	char err[1024] = "";

	fake_cgroup("", "");
	fake_cgroup("/v1/memory", "");
	fake_v1_mounts((const char *const[]){ "memory", NULL });
	cr_assert_eq(fake_locate("0::/\n", true, NULL, &p, err, sizeof(err)), -ENOTSUP);
	cr_assert(strstr(err, "; v1 memory (no pids, no cpuacct); ") != NULL, "%s", err);
}

/* ---- on the real hierarchy (root only) ---- */

static struct cgroup_tree *open_test_tree(char *name, size_t len)
{
	struct cgroup_tree *t = NULL;
	char err[256] = "";
	int rc;

	if (geteuid() != 0)
		cr_skip_test("needs root");
	snprintf(name, len, "%d-test", (int)getpid());
	rc = cgroup_tree_open(NULL, name, &t, err, sizeof(err));
	if (rc == -ENOTSUP || rc == -EROFS || rc == -EACCES || rc == -EPERM)
		cr_skip_test("no writable cgroup hierarchy: %s", err);
	/* v2 with our own cgroup holding processes: only the daemon's master
	 * may evacuate it (cgroup_place_prepare), not a test run from a shell */
	if (rc == -EBUSY)
		cr_skip_test("%s", err);
	cr_assert_eq(rc, 0, "cgroup_tree_open: %s", err);
	return t;
}

/* Is "<controller mount>/goboxd/<name>" still there in a v1 hierarchy? */
static bool tree_left(const char *name)
{
	static const char *const v1[] = { "/sys/fs/cgroup/memory", "/sys/fs/cgroup/pids",
					  "/sys/fs/cgroup/cpuacct" };
	char path[PATH_MAX];

	for (size_t i = 0; i < sizeof(v1) / sizeof(v1[0]); i++) {
		snprintf(path, sizeof(path), "%s/goboxd/%s", v1[i], name);
		if (access(path, F_OK) == 0)
			return true;
	}
	return false;
}

static struct cgroup_step *make_step(struct cgroup_tree *t, uint64_t mem, uint32_t pids)
{
	struct cgroup_limits l = { .memory_bytes = mem, .pids = pids };
	struct cgroup_step *s = NULL;
	char err[256] = "";

	cr_assert_eq(cgroup_step_create(t, &l, &s, err, sizeof(err)), 0, "cgroup_step_create: %s", err);
	return s;
}

/* A program in step s: like a jail's, which has exec'd, it keeps none of
 * its parent's descriptors (a tree's locks among them). */
static pid_t spawn_in(struct cgroup_step *s, void (*body)(void))
{
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		if (close_range(3, ~0U, 0) < 0)
			_exit(99);
		if (cgroup_step_enter(s) < 0)
			_exit(100);
		body();
		_exit(0);
	}
	return pid;
}

static void eat_memory(void)
{
	size_t sz = 200u << 20;
	volatile char *p = malloc(sz);

	if (!p)
		_exit(101);
	for (size_t i = 0; i < sz; i += 4096)
		p[i] = 1;
	_exit(0);
}

Test(cgroup_real, oom_is_detected)
{
	char name[64];
	struct cgroup_tree *t = open_test_tree(name, sizeof(name));
	struct cgroup_step *s = make_step(t, 64u << 20, 8);
	struct cgroup_stats st;
	int status;
	pid_t pid = spawn_in(s, eat_memory);

	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "status %#x", status);
	cr_assert_eq(cgroup_step_stats(s, &st), 0);
	cr_assert(st.oom_killed);
	cr_assert(st.memory_limit_hit);
	cr_assert_geq(st.memory_peak_bytes, 48u << 20);
	cr_assert_leq(st.memory_peak_bytes, 64u << 20);
	cgroup_step_destroy(s);
	cgroup_tree_close(t);
	cr_assert_not(tree_left(name));
}

static void small_job(void)
{
	volatile char *p = malloc(4u << 20);

	if (!p)
		_exit(101);
	for (size_t i = 0; i < (4u << 20); i += 4096)
		p[i] = 1;
	_exit(0);
}

Test(cgroup_real, no_oom_under_the_limit)
{
	char name[64];
	struct cgroup_tree *t = open_test_tree(name, sizeof(name));
	struct cgroup_step *s = make_step(t, 64u << 20, 8);
	struct cgroup_stats st;
	int status;
	pid_t pid = spawn_in(s, small_job);

	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x", status);
	cr_assert_eq(cgroup_step_stats(s, &st), 0);
	cr_assert_not(st.oom_killed);
	cr_assert_not(st.memory_limit_hit);
	cr_assert_geq(st.memory_peak_bytes, 4u << 20);
	cgroup_step_destroy(s);
	cgroup_tree_close(t);
	cr_assert_not(tree_left(name));
}

/* Fork until refused; the exit code says how many forks succeeded. */
static void fork_bomb(void)
{
	int made = 0;

	for (int i = 0; i < 64; i++) {
		pid_t c = fork();

		if (c < 0)
			continue;
		if (c == 0) {
			pause();
			_exit(0);
		}
		made++;
	}
	pause();
	_exit(made);
}

Test(cgroup_real, pids_limit_and_kill)
{
	char name[64];
	struct cgroup_tree *t = open_test_tree(name, sizeof(name));
	struct cgroup_step *s = make_step(t, 0, 8);
	pid_t pids[16];
	int status, n = 0;
	pid_t pid = spawn_in(s, fork_bomb);

	/* wait for the bomb to fill the group */
	for (int i = 0; i < 500 && n < 8; i++) {
		n = cgroup_step_nprocs(s);
		usleep(2000);
	}
	usleep(50000);
	cr_assert_eq(cgroup_step_nprocs(s), 8);
	cr_assert_eq(cgroup_step_pids(s, pids, 16), 8);
	cr_assert_eq(cgroup_step_pids(s, pids, 3), 3);
	cr_assert_eq(cgroup_step_kill(s), 0);
	cr_assert_eq(cgroup_step_nprocs(s), 0);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	cgroup_step_destroy(s);
	cgroup_tree_close(t);
	cr_assert_not(tree_left(name));
}

static void idle(void)
{
	for (;;)
		pause();
}

static void burn_cpu(void)
{
	struct timespec ts;

	do
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	while (ts.tv_sec == 0 && ts.tv_nsec < 300000000);
	_exit(0);
}

Test(cgroup_real, cpu_time_is_counted)
{
	char name[64];
	struct cgroup_tree *t = open_test_tree(name, sizeof(name));
	struct cgroup_step *s = make_step(t, 64u << 20, 8);
	struct cgroup_stats st;
	uint64_t before, after;
	int status;
	pid_t pid;

	cr_assert_eq(cgroup_step_cpu_us(s, &before), 0);
	pid = spawn_in(s, burn_cpu);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	cr_assert_eq(cgroup_step_cpu_us(s, &after), 0);
	cr_assert_geq(after, before + 250000, "cpu %llu -> %llu", (unsigned long long)before,
		      (unsigned long long)after);
	cr_assert_eq(cgroup_step_stats(s, &st), 0);
	cr_assert_eq(st.cpu_us, after);
	cgroup_step_destroy(s);
	cgroup_tree_close(t);
	cr_assert_not(tree_left(name));
}

Test(cgroup_real, tree_close_kills_leftovers)
{
	char name[64];
	struct cgroup_tree *t = open_test_tree(name, sizeof(name));
	struct cgroup_step *s = make_step(t, 0, 0);
	int status;
	pid_t pid = spawn_in(s, idle);

	while (cgroup_step_nprocs(s) < 1)
		usleep(1000);
	/* the worker forgot the step: closing the tree must still clean up */
	free(s);
	cgroup_tree_close(t);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	cr_assert_not(tree_left(name));
}

Test(cgroup_real, reopening_a_name_clears_the_predecessor)
{
	char name[64], err[256] = "";
	struct cgroup_tree *t = open_test_tree(name, sizeof(name));
	struct cgroup_tree *again = NULL;
	struct cgroup_step *s = make_step(t, 0, 4);
	int status;
	pid_t pid = spawn_in(s, idle);

	while (cgroup_step_nprocs(s) < 1)
		usleep(1000);
	/* as if the worker crashed: its tree and step are never closed */
	cr_assert_eq(cgroup_tree_open(NULL, name, &again, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	cr_assert_eq(cgroup_step_nprocs(s), -ENOENT);
	cgroup_step_destroy(s);
	free(t);
	cgroup_tree_close(again);
	cr_assert_not(tree_left(name));
}

/*
 * cgroup_sweep on a private root: symlinks to a scratch cgroup in each real
 * hierarchy, so that the sweep cannot touch other users of goboxd/.
 */
struct sweep_root {
	char dir[PATH_MAX];
	char cg[3][PATH_MAX];
};

static void sweep_root_make(struct sweep_root *r)
{
	static const char *const ctrl[] = { "memory", "pids", "cpuacct" };
	char link[PATH_MAX + 16];

	snprintf(r->dir, sizeof(r->dir), "/tmp/goboxd-cgtest-%d", (int)getpid());
	cr_assert_eq(mkdir(r->dir, 0700), 0);
	for (int i = 0; i < 3; i++) {
		snprintf(r->cg[i], sizeof(r->cg[i]), "/sys/fs/cgroup/%s/goboxd/sweep-%d", ctrl[i],
			 (int)getpid());
		cr_assert_eq(mkdir(r->cg[i], 0755), 0, "mkdir %s: %s", r->cg[i], strerror(errno));
		snprintf(link, sizeof(link), "%s/%s", r->dir, ctrl[i]);
		cr_assert_eq(symlink(r->cg[i], link), 0);
	}
}

static void sweep_root_remove(struct sweep_root *r)
{
	static const char *const ctrl[] = { "memory", "pids", "cpuacct" };
	char path[PATH_MAX + 16];

	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/goboxd", r->cg[i]);
		cr_expect_eq(rmdir(path), 0, "rmdir %s: %s", path, strerror(errno));
		cr_expect_eq(rmdir(r->cg[i]), 0);
		snprintf(path, sizeof(path), "%s/%s", r->dir, ctrl[i]);
		unlink(path);
	}
	rmdir(r->dir);
}

/*
 * A worker that crashes (exits without closing anything) in a child: its
 * tree w1 with two steps, a program idling in the first. The program's
 * pid is returned; the test is its reaper once the worker is gone.
 */
static pid_t crashed_worker(const struct sweep_root *r)
{
	int fds[2];
	pid_t worker, pid = 0;
	int status;

	cr_assert_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	cr_assert_eq(pipe(fds), 0);
	worker = fork();
	cr_assert_geq(worker, 0);
	if (worker == 0) {
		struct cgroup_limits l = { .memory_bytes = 32u << 20, .pids = 4 };
		struct cgroup_tree *w = NULL;
		struct cgroup_step *s1 = NULL, *s2 = NULL;
		char err[256];

		if (cgroup_tree_open(r->dir, "w1", &w, err, sizeof(err)) < 0 ||
		    cgroup_tree_version(w) != CGROUP_V1 ||
		    cgroup_step_create(w, &l, &s1, err, sizeof(err)) < 0 ||
		    cgroup_step_create(w, &l, &s2, err, sizeof(err)) < 0)
			_exit(1);
		pid = spawn_in(s1, idle);
		while (cgroup_step_nprocs(s1) < 1)
			usleep(1000);
		if (write(fds[1], &pid, sizeof(pid)) != (ssize_t)sizeof(pid))
			_exit(2);
		_exit(0);
	}
	close(fds[1]);
	cr_assert_eq(read(fds[0], &pid, sizeof(pid)), (ssize_t)sizeof(pid));
	close(fds[0]);
	cr_assert_eq(waitpid(worker, &status, 0), worker);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return pid;
}

Test(cgroup_real, sweep_removes_a_crashed_workers_leftovers)
{
	char name[64], path[PATH_MAX + 64];
	struct cgroup_tree *t = open_test_tree(name, sizeof(name));
	struct sweep_root r;
	unsigned removed = 0;
	int status;
	pid_t pid;

	if (cgroup_tree_version(t) != CGROUP_V1)
		cr_skip_test("private sweep root is built for v1");
	cgroup_tree_close(t);
	sweep_root_make(&r);
	pid = crashed_worker(&r);

	cr_assert_eq(cgroup_sweep(r.dir, &removed), 0);
	/* w1 and its two steps, in each of the three hierarchies */
	cr_assert_eq(removed, 9);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	snprintf(path, sizeof(path), "%s/goboxd/w1", r.cg[0]);
	cr_assert_neq(access(path, F_OK), 0);
	cr_assert_eq(cgroup_sweep(r.dir, &removed), 0);
	cr_assert_eq(removed, 0);
	sweep_root_remove(&r);
}

/*
 * A tree in use is left alone though its name's pid is no live process
 * here: its owner may be a goboxd in another pid namespace (a container's
 * pid 1), which its open tree tells.
 */
Test(cgroup_real, sweep_leaves_a_tree_in_use_whatever_its_pid)
{
	char name[64], err[256] = "", path[PATH_MAX + 64];
	struct cgroup_tree *t = open_test_tree(name, sizeof(name));
	struct cgroup_limits l = { .memory_bytes = 32u << 20, .pids = 4 };
	struct sweep_root r;
	struct cgroup_tree *w = NULL;
	struct cgroup_step *s = NULL;
	unsigned removed = 1;

	if (cgroup_tree_version(t) != CGROUP_V1)
		cr_skip_test("private sweep root is built for v1");
	cgroup_tree_close(t);
	sweep_root_make(&r);
	/* above any pid_max: no process here has that pid */
	cr_assert_eq(cgroup_tree_open(r.dir, "4194305-w0", &w, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(cgroup_step_create(w, &l, &s, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(cgroup_sweep(r.dir, &removed), 0);
	cr_assert_eq(removed, 0);
	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/goboxd/4194305-w0", r.cg[i]);
		cr_assert_eq(access(path, F_OK), 0, "%s was swept", path);
	}
	cgroup_step_destroy(s);
	cgroup_tree_close(w);
	snprintf(path, sizeof(path), "%s/goboxd/4194305-w0", r.cg[0]);
	cr_assert_neq(access(path, F_OK), 0);
	sweep_root_remove(&r);
}

Test(cgroup_real, unified_without_controllers_is_refused)
{
	struct cgroup_tree *t = NULL;
	char err[256] = "";

	if (access("/sys/fs/cgroup/unified/cgroup.controllers", F_OK) < 0)
		cr_skip_test("no hybrid cgroup2 mount");
	if (geteuid() != 0)
		cr_skip_test("needs root");
	cr_assert_eq(cgroup_tree_open("/sys/fs/cgroup/unified", "x", &t, err, sizeof(err)), -ENOTSUP);
	cr_assert_neq(err[0], '\0');
	cr_assert_null(t);
	cr_assert_neq(access("/sys/fs/cgroup/unified/goboxd", F_OK), 0);
}

Test(cgroup_real, start_is_a_no_op_on_v1)
{
	char name[64], err[256] = "";
	struct cgroup_tree *t = open_test_tree(name, sizeof(name));
	struct cgroup_place p;

	if (cgroup_tree_version(t) != CGROUP_V1) {
		cgroup_tree_close(t);
		cr_skip_test("v1 host only");
	}
	cr_assert_eq(cgroup_place_start(NULL, &p, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(p.ver, CGROUP_V1);
	cr_assert_eq(p.source, CGROUP_SRC_V1);
	cr_assert_str_eq(p.root, "");
	cgroup_tree_close(t);
	cr_assert_not(tree_left(name));
}
