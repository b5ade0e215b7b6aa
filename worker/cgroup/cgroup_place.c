#include "autoconf.h"

/*
 * Where goboxd's cgroups live, chosen once: what the host offers (its
 * mountinfo, this process's cgroup, v1's controllers), which place is
 * taken, the one line that says so, and on v2 handing the controllers
 * down to goboxd's subtree. Reads cgroupfs files; writes only when
 * preparing the place. Its API is cgroup_place.h: the master's part and
 * the cgroup module's.
 */
#include "worker/cgroup/cgroup_place.h"

#include "worker/cgroup/cgroupfs.h"

#include "common/buf.h"
#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const v1_ctrl[CGROUP_NCTRL] = { "memory", "pids", "cpuacct" };

/* ---- parsing helpers ---- */

bool cgroup_place_has_word(const char *list, const char *word)
{
	size_t wl = strlen(word);
	const char *p = list;

	if (!wl)
		return false;
	while (*p) {
		size_t n = strcspn(p, ", \t\n");

		if (n == wl && memcmp(p, word, wl) == 0)
			return true;
		p += n;
		if (*p)
			p++;
	}
	return false;
}

/* Copy one blank-separated mountinfo field, decoding \ooo escapes. */
static int mi_field(const char **pp, char *out, size_t outlen)
{
	const char *p = *pp;
	size_t o = 0;

	while (*p == ' ')
		p++;
	if (!*p || *p == '\n')
		return -EINVAL;
	while (*p && *p != ' ' && *p != '\n') {
		char c = *p;

		if (c == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' &&
		    p[3] >= '0' && p[3] <= '7') {
			c = (char)(((p[1] - '0') << 6) | ((p[2] - '0') << 3) | (p[3] - '0'));
			p += 4;
		} else {
			p++;
		}
		if (o + 1 >= outlen)
			return -ENAMETOOLONG;
		out[o++] = c;
	}
	out[o] = '\0';
	*pp = p;
	return 0;
}

int cgroup_place_parse_mountinfo_line(const char *line, struct cgroup_mount *out)
{
	struct cgroup_mount m;
	char skip[4096];
	const char *p = line;
	int rc;

	/* mount id, parent id, major:minor */
	for (int i = 0; i < 3; i++)
		if ((rc = mi_field(&p, skip, sizeof(skip))) < 0)
			return rc;
	if ((rc = mi_field(&p, m.root, sizeof(m.root))) < 0 ||
	    (rc = mi_field(&p, m.mount_point, sizeof(m.mount_point))) < 0 ||
	    (rc = mi_field(&p, m.mount_opts, sizeof(m.mount_opts))) < 0)
		return rc;
	/* optional fields ("shared:1", "master:2"...) up to the lone "-" */
	for (;;) {
		if ((rc = mi_field(&p, skip, sizeof(skip))) < 0)
			return rc;
		if (strcmp(skip, "-") == 0)
			break;
	}
	if ((rc = mi_field(&p, m.fstype, sizeof(m.fstype))) < 0 ||
	    (rc = mi_field(&p, skip, sizeof(skip))) < 0 ||
	    (rc = mi_field(&p, m.super_opts, sizeof(m.super_opts))) < 0)
		return rc;
	*out = m;
	return 0;
}

int cgroup_place_parse_proc_cgroup(const char *text, const char *controller, char *out,
				   size_t outlen)
{
	const char *line = text;

	while (line && *line) {
		const char *eol = strchr(line, '\n');
		size_t len = eol ? (size_t)(eol - line) : strlen(line);
		const char *c1 = memchr(line, ':', len);
		const char *c2 = c1 ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - line)) : NULL;

		if (c2) {
			char ctrls[512];
			size_t cl = (size_t)(c2 - c1 - 1);

			if (cl < sizeof(ctrls)) {
				bool match;

				memcpy(ctrls, c1 + 1, cl);
				ctrls[cl] = '\0';
				if (controller)
					match = cgroup_place_has_word(ctrls, controller);
				else
					match = cl == 0 && c1 - line == 1 && line[0] == '0';
				if (match) {
					size_t pl = len - (size_t)(c2 + 1 - line);

					if (pl + 1 > outlen)
						return -ENAMETOOLONG;
					memcpy(out, c2 + 1, pl);
					out[pl] = '\0';
					return 0;
				}
			}
		}
		line = eol ? eol + 1 : NULL;
	}
	return -ENOENT;
}

int cgroup_place_v2_base_rel(const char *cgroup_path, const char *mount_root, char *out,
			     size_t outlen)
{
	const char *rel = cgroup_path;
	size_t rl = strlen(mount_root);
	size_t len;
	const char *last;

	if (cgroup_path[0] != '/' || mount_root[0] != '/')
		return -EINVAL;
	while (rl > 1 && mount_root[rl - 1] == '/')
		rl--;
	if (rl > 1) {
		if (strncmp(cgroup_path, mount_root, rl) != 0 ||
		    (cgroup_path[rl] != '/' && cgroup_path[rl] != '\0'))
			return -ENOENT;
		rel = cgroup_path + rl;
	}
	for (const char *p = rel; (p = strstr(p, "..")) != NULL; p += 2)
		if ((p == rel || p[-1] == '/') && (p[2] == '/' || p[2] == '\0'))
			return -EINVAL;
	len = strlen(rel);
	while (len > 0 && rel[len - 1] == '/')
		len--;
	last = rel + len;
	while (last > rel && last[-1] != '/')
		last--;
	if ((size_t)(rel + len - last) == strlen(CGROUP_DAEMON_LEAF) &&
	    memcmp(last, CGROUP_DAEMON_LEAF, strlen(CGROUP_DAEMON_LEAF)) == 0) {
		len = (size_t)(last - rel);
		while (len > 0 && rel[len - 1] == '/')
			len--;
	}
	if (len == 0) {
		if (outlen < 2)
			return -ENAMETOOLONG;
		memcpy(out, "/", 2);
		return 0;
	}
	if (len + 1 > outlen)
		return -ENAMETOOLONG;
	memcpy(out, rel, len);
	out[len] = '\0';
	return 0;
}

/* ---- discovery ---- */

/* What one v2 cgroup offers goboxd: the controllers it needs, and whether
 * goboxd may build below it. */
struct v2_seen {
	bool memory, pids, cpu;
	int werr;       /* 0: writable; else why not (EROFS: a read-only mount) */
};

/*
 * Everything discovery looks at, once: what locate chooses from, and what
 * the line goboxd says at start and in --check reports.
 */
struct cgroup_survey {
	const char *override;   /* --cgroup-root, or NULL */
	bool v2;                /* a cgroup2 mount, or the override is a v2 cgroup */
	struct cgroup_mount v2m;
	bool v2_ro;
	char own[PATH_MAX];     /* goboxd's own v2 cgroup, or the override ("": none) */
	char own_rel[PATH_MAX]; /* the same, below the mount */
	struct v2_seen own_seen;
	bool root_reach;        /* uid 0, and the whole hierarchy is mounted */
	struct v2_seen root_seen;
	bool v1[CGROUP_NCTRL];
	char v1_mount[CGROUP_NCTRL][PATH_MAX];
	int v1_werr;            /* 0: every v1 mount found is writable; else why not */
};

/* The cgroup mounts named in a mountinfo text: the first cgroup2 mount
 * wins, unless a later one is mounted on top of it (what a path there
 * reaches). */
static void scan_mountinfo(const char *text, struct cgroup_survey *f)
{
	struct cgroup_mount *m = xmalloc(sizeof(*m));
	const char *line = text;

	while (line && *line) {
		const char *eol = strchr(line, '\n');
		size_t len = eol ? (size_t)(eol - line) : strlen(line);
		char *copy = xstrndup(line, len);

		line = eol ? eol + 1 : NULL;
		if (cgroup_place_parse_mountinfo_line(copy, m) < 0) {
			free(copy);
			continue;
		}
		free(copy);
		if (strcmp(m->fstype, "cgroup2") == 0 &&
		    (!f->v2 || strcmp(m->mount_point, f->v2m.mount_point) == 0)) {
			f->v2 = true;
			f->v2m = *m;
			f->v2_ro = cgroup_place_has_word(m->mount_opts, "ro") ||
				   cgroup_place_has_word(m->super_opts, "ro");
		} else if (strcmp(m->fstype, "cgroup") == 0) {
			for (int i = 0; i < CGROUP_NCTRL; i++) {
				if (f->v1[i] || !cgroup_place_has_word(m->super_opts, v1_ctrl[i]))
					continue;
				if (strlen(m->mount_point) >= PATH_MAX)
					continue;
				snprintf(f->v1_mount[i], sizeof(f->v1_mount[i]), "%s", m->mount_point);
				f->v1[i] = true;
			}
		}
	}
	free(m);
}

int cgroup_place_find_v2_mount(const char *mountinfo, char *mount_point, size_t len,
			       bool *read_only)
{
	struct cgroup_survey *f = xcalloc(1, sizeof(*f));
	int rc = -ENOENT;

	scan_mountinfo(mountinfo, f);
	if (f->v2) {
		rc = snprintf(mount_point, len, "%s", f->v2m.mount_point) >= (int)len ? -ENAMETOOLONG
										   : 0;
		*read_only = f->v2_ro;
	}
	free(f);
	return rc;
}

/* Does dir/file (cgroup.controllers or cgroup.subtree_control) list memory and pids? */
static bool v2_lists(const char *dir, const char *file, const char *ctrl)
{
	char buf[512];

	if (cgroupfs_read(dir, file, buf, sizeof(buf)) < 0)
		return false;
	if (ctrl)
		return cgroup_place_has_word(buf, ctrl);
	return cgroup_place_has_word(buf, "memory") && cgroup_place_has_word(buf, "pids");
}

static void v2_look(const char *dir, bool ro, struct v2_seen *s)
{
	char buf[512], path[PATH_MAX];

	memset(s, 0, sizeof(*s));
	if (cgroupfs_read(dir, "cgroup.controllers", buf, sizeof(buf)) == 0) {
		s->memory = cgroup_place_has_word(buf, "memory");
		s->pids = cgroup_place_has_word(buf, "pids");
		s->cpu = cgroup_place_has_word(buf, "cpu");
	}
	if (ro)
		s->werr = EROFS;
	else if (cgroupfs_join(path, sizeof(path), dir, "cgroup.subtree_control") < 0)
		s->werr = ENAMETOOLONG;
	else if (access(path, W_OK) < 0)
		s->werr = errno;
}

/* A v2 cgroup goboxd can build in: offered memory and pids, and writable. */
static bool v2_fit(const struct v2_seen *s)
{
	return s->memory && s->pids && s->werr == 0;
}

/* The process's own v2 cgroup (where goboxd/ goes when it is delegated). */
static int own_v2_base(const struct cgroup_mount *m, const char *proc_cgroup, char *out,
		       size_t outlen, char *rel, size_t rellen)
{
	char path[PATH_MAX];
	int n, rc;

	if ((rc = cgroup_place_parse_proc_cgroup(proc_cgroup, NULL, path, sizeof(path))) < 0)
		return rc;
	if ((rc = cgroup_place_v2_base_rel(path, m->root, rel, rellen)) < 0)
		return rc;
	n = snprintf(out, outlen, "%s%s", m->mount_point, strcmp(rel, "/") ? rel : "");
	return n < 0 || (size_t)n >= outlen ? -ENAMETOOLONG : 0;
}

/* May goboxd build in each v1 hierarchy found? (An unprivileged user may
 * not: v1 delegates nothing.) */
static void v1_look(struct cgroup_survey *f)
{
	for (int i = 0; i < CGROUP_NCTRL && !f->v1_werr; i++)
		if (f->v1[i] && access(f->v1_mount[i], W_OK) < 0)
			f->v1_werr = errno;
}

/* --cgroup-root: a v2 cgroup, or a directory holding v1's memory, pids
 * and cpuacct cgroups (nothing else is looked at). */
static int survey_override(struct cgroup_survey *f)
{
	const char *root = f->override;

	if (strlen(root) >= PATH_MAX)
		return -ENAMETOOLONG;
	if (cgroupfs_exists(root, "cgroup.controllers")) {
		f->v2 = true;
		snprintf(f->own, sizeof(f->own), "%s", root);
		v2_look(root, false, &f->own_seen);
		return 0;
	}
	for (int i = 0; i < CGROUP_NCTRL; i++) {
		if (cgroupfs_join(f->v1_mount[i], PATH_MAX, root, v1_ctrl[i]) < 0)
			return -ENAMETOOLONG;
		f->v1[i] = access(f->v1_mount[i], F_OK) == 0;
	}
	v1_look(f);
	return 0;
}

static int survey(const struct cgroup_host *h, const char *root_override,
		  struct cgroup_survey *f)
{
	memset(f, 0, sizeof(*f));
	if (root_override && *root_override) {
		f->override = root_override;
		return survey_override(f);
	}
	scan_mountinfo(h->mountinfo, f);
	v1_look(f);
	if (!f->v2)
		return 0;
	if (own_v2_base(&f->v2m, h->proc_cgroup, f->own, sizeof(f->own), f->own_rel,
			sizeof(f->own_rel)) == 0)
		v2_look(f->own, f->v2_ro, &f->own_seen);
	else
		f->own[0] = f->own_rel[0] = '\0';
	f->root_reach = h->root && strcmp(f->v2m.root, "/") == 0;
	if (f->root_reach)
		v2_look(f->v2m.mount_point, f->v2_ro, &f->root_seen);
	return 0;
}

static void set_v2(struct cgroup_layout *lay, const char *base)
{
	lay->ver = CGROUP_V2;
	lay->ndirs = 1;
	snprintf(lay->base[0], sizeof(lay->base[0]), "%s", base);
}

/* All three of v1's hierarchies found? */
static bool v1_complete(const struct cgroup_survey *f)
{
	return f->v1[CGROUP_MEM] && f->v1[CGROUP_PIDS] && f->v1[CGROUP_CPU];
}

static void set_v1(struct cgroup_layout *lay, const struct cgroup_survey *f)
{
	lay->ver = CGROUP_V1;
	lay->ndirs = CGROUP_NCTRL;
	for (int i = 0; i < CGROUP_NCTRL; i++)
		snprintf(lay->base[i], sizeof(lay->base[i]), "%s", f->v1_mount[i]);
}

/*
 * In order: the override (nothing else when it is given); the own v2
 * cgroup when it is delegated; the cgroup2 root when we are root and it is
 * writable (a host without delegation, as isolate's service does it); v1's
 * three hierarchies. -ENOTSUP when none will do.
 */
static int choose(const struct cgroup_survey *f, struct cgroup_layout *lay,
		  enum cgroup_source *src)
{
	bool v1 = v1_complete(f) && !f->v1_werr;

	memset(lay, 0, sizeof(*lay));
	if (f->override) {
		*src = CGROUP_SRC_OPTION;
		if (f->v2 && v2_fit(&f->own_seen))
			set_v2(lay, f->own);
		else if (!f->v2 && v1)
			set_v1(lay, f);
		else
			return -ENOTSUP;
		return 0;
	}
	if (f->v2 && f->own[0] && v2_fit(&f->own_seen)) {
		*src = CGROUP_SRC_OWN;
		set_v2(lay, f->own);
	} else if (f->root_reach && v2_fit(&f->root_seen)) {
		*src = CGROUP_SRC_ROOT;
		set_v2(lay, f->v2m.mount_point);
	} else if (v1) {
		*src = CGROUP_SRC_V1;
		set_v1(lay, f);
	} else {
		return -ENOTSUP;
	}
	return 0;
}

/* ---- the line: what was found, what goboxd needs, what it takes ---- */

struct line {
	char *s;
	size_t size, len;
};

static void say(struct line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say(struct line *l, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (l->len + 1 >= l->size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(l->s + l->len, l->size - l->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		l->len = l->len + (size_t)n < l->size ? l->len + (size_t)n : l->size - 1;
}

static void say_seen(struct line *l, const struct v2_seen *s)
{
	if (!s->memory && !s->pids)
		say(l, " offers neither memory nor pids");
	else if (!s->memory || !s->pids)
		say(l, " offers %s but not %s", s->memory ? "memory" : "pids",
		    s->memory ? "pids" : "memory");
	else
		say(l, " offers memory, pids%s", s->cpu ? " and cpu" : " (no cpu)");
	if (s->werr == 0)
		say(l, ", writable");
	else if (s->werr == EROFS)
		say(l, ", read-only");
	else
		say(l, ", not writable (%s)", strerror(s->werr));
}

static void say_v1(struct line *l, const struct cgroup_survey *f, const char *where)
{
	bool any = false;

	for (int i = 0; i < CGROUP_NCTRL; i++)
		any |= f->v1[i];
	if (!any) {
		say(l, "; no v1 memory, pids or cpuacct%s", where);
		return;
	}
	say(l, "; v1");
	for (int i = 0; i < CGROUP_NCTRL; i++)
		if (f->v1[i])
			say(l, " %s", v1_ctrl[i]);
	for (int i = 0, first = 1; i < CGROUP_NCTRL; i++)
		if (!f->v1[i]) {
			say(l, first ? " (no %s" : ", no %s", v1_ctrl[i]);
			first = 0;
		}
	say(l, "%s%s", v1_complete(f) ? "" : ")", where);
	if (f->v1_werr)
		say(l, ", not writable (%s)", strerror(f->v1_werr));
}

static void say_found(struct line *l, const struct cgroup_survey *f, const struct cgroup_host *h)
{
	if (f->override && f->v2) {
		say(l, "found --cgroup-root %s, a cgroup2 cgroup that", f->override);
		say_seen(l, &f->own_seen);
		return;
	}
	if (f->override) {
		say(l, "found --cgroup-root %s, not a cgroup2 cgroup", f->override);
		say_v1(l, f, " in it");
		return;
	}
	if (!f->v2)
		say(l, "found no cgroup2 mount");
	else
		say(l, "found cgroup2 at %s (%s)", f->v2m.mount_point,
		    f->v2_ro ? "read-only" : "read-write");
	if (f->v2 && f->own[0]) {
		say(l, "; goboxd's cgroup %s", f->own_rel);
		say_seen(l, &f->own_seen);
	} else if (f->v2) {
		say(l, "; goboxd's cgroup is not below that mount");
	}
	/* the root, unless it is goboxd's own cgroup, said already */
	if (f->v2 && (strcmp(f->own, f->v2m.mount_point) != 0 || strcmp(f->v2m.root, "/") != 0)) {
		if (f->root_reach) {
			say(l, "; the cgroup2 root");
			say_seen(l, &f->root_seen);
		} else if (strcmp(f->v2m.root, "/") != 0) {
			say(l, "; the cgroup2 root is out of reach (this mount shows only %s)",
			    f->v2m.root);
		} else {
			say(l, "; the cgroup2 root is out of reach (not uid 0)");
		}
	}
	say_v1(l, f, "");
}

static void report(const struct cgroup_survey *f, const struct cgroup_host *h,
		   const struct cgroup_layout *lay, enum cgroup_source src, char *out,
		   size_t outlen)
{
	struct line l = { out, outlen, 0 };

	if (!outlen)
		return;
	out[0] = '\0';
	say_found(&l, f, h);
	say(&l, "; needs memory and pids in a writable cgroup2 cgroup, or v1's memory, pids "
		"and cpuacct");
	if (!lay)
		say(&l, "; none usable");
	else if (lay->ver == CGROUP_V2)
		say(&l, "; takes %s/%s (%s)", lay->base[0], CGROUP_TOP, cgroup_place_source_name(src));
	else
		say(&l, "; takes %s/ in v1's memory, pids and cpuacct (%s)", CGROUP_TOP,
		    cgroup_place_source_name(src));
}

/* survey, choose, and say so in report (the reason when none will do). */
static int locate(const struct cgroup_host *h, const char *root_override, struct cgroup_layout *lay,
		  enum cgroup_source *src, char *report_out, size_t reportlen)
{
	struct cgroup_survey *f = xmalloc(sizeof(*f));
	enum cgroup_source chosen = CGROUP_SRC_OPTION;  /* said only when one is taken */
	int rc;

	if ((rc = survey(h, root_override, f)) < 0) {
		cgroupfs_err(report_out, reportlen, rc, "cgroup root too long");
		free(f);
		return rc;
	}
	rc = choose(f, lay, &chosen);
	if (rc == 0)
		*src = chosen;
	report(f, h, rc == 0 ? lay : NULL, chosen, report_out, reportlen);
	free(f);
	return rc;
}

static char *slurp(const char *path)
{
	char chunk[4096];
	struct buf b;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int rc;

	if (fd < 0)
		return NULL;
	buf_init(&b, 0);
	rc = buf_puts(&b, "");
	while (rc == 0) {
		ssize_t n = read(fd, chunk, sizeof(chunk));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = n < 0 ? -errno : 1;
			break;
		}
		rc = buf_append(&b, chunk, (size_t)n);
	}
	close(fd);
	if (rc < 0) {
		buf_free(&b);
		errno = -rc;
		return NULL;
	}
	return buf_steal(&b, NULL);
}

int cgroup_place_read_host(struct cgroup_host *h, char *err, size_t errlen)
{
	memset(h, 0, sizeof(*h));
	h->root = geteuid() == 0;
	h->mountinfo_buf = slurp("/proc/self/mountinfo");
	if (!h->mountinfo_buf)
		return cgroupfs_err(err, errlen, -errno, "read /proc/self/mountinfo: %s",
			       strerror(errno));
	h->proc_cgroup_buf = slurp("/proc/self/cgroup");
	if (!h->proc_cgroup_buf) {
		int rc = -errno;

		cgroup_place_free_host(h);
		return cgroupfs_err(err, errlen, rc, "read /proc/self/cgroup: %s", strerror(-rc));
	}
	h->mountinfo = h->mountinfo_buf;
	h->proc_cgroup = h->proc_cgroup_buf;
	return 0;
}

void cgroup_place_free_host(struct cgroup_host *h)
{
	free(h->mountinfo_buf);
	free(h->proc_cgroup_buf);
	h->mountinfo_buf = h->proc_cgroup_buf = NULL;
}

/* This process's layout: what cgroup_tree_open and cgroup_sweep work on. */
int cgroup_place_layout(const char *root_override, struct cgroup_layout *lay, char *err,
			size_t errlen)
{
	struct cgroup_host h;
	enum cgroup_source src;
	int rc;

	if (root_override && *root_override) {
		/* nothing of the host is looked at */
		memset(&h, 0, sizeof(h));
		return locate(&h, root_override, lay, &src, err, errlen);
	}
	if ((rc = cgroup_place_read_host(&h, err, errlen)) < 0)
		return rc;
	rc = locate(&h, NULL, lay, &src, err, errlen);
	cgroup_place_free_host(&h);
	return rc;
}

int cgroup_place_locate(const struct cgroup_host *h, const char *root_override,
			struct cgroup_place *out, char *err, size_t errlen)
{
	struct cgroup_layout *lay = xmalloc(sizeof(*lay));
	struct cgroup_place p;
	int rc;

	memset(&p, 0, sizeof(p));
	if ((rc = locate(h, root_override, lay, &p.source, p.report, sizeof(p.report))) < 0) {
		cgroupfs_err(err, errlen, rc, "%s", p.report);
		goto out;
	}
	p.ver = lay->ver;
	/* v2: the base every later call is given; v1: what the operator gave, if anything */
	if (p.ver == CGROUP_V2)
		snprintf(p.root, sizeof(p.root), "%s", lay->base[0]);
	else if (root_override)
		snprintf(p.root, sizeof(p.root), "%s", root_override);
	for (unsigned i = 0; i < lay->ndirs; i++)
		snprintf(p.dirs[i], sizeof(p.dirs[i]), "%s/%s", lay->base[i], CGROUP_TOP);
	p.ndirs = lay->ndirs;
	*out = p;
out:
	free(lay);
	return rc;
}

const char *cgroup_place_source_name(enum cgroup_source s)
{
	switch (s) {
	case CGROUP_SRC_OPTION:
		return "--cgroup-root";
	case CGROUP_SRC_OWN:
		return "own cgroup (delegated)";
	case CGROUP_SRC_ROOT:
		return "cgroup2 root";
	case CGROUP_SRC_V1:
		return "v1 hierarchies";
	}
	return "?";
}

/* ---- v2 delegation ---- */

/* Enable memory and pids (and cpu when offered; its stats need no more). */
int cgroup_place_v2_enable(const char *dir, char *err, size_t errlen)
{
	if (!v2_lists(dir, "cgroup.subtree_control", NULL)) {
		int rc = cgroupfs_write(dir, "cgroup.subtree_control", "+memory +pids");

		if (rc < 0)
			return cgroupfs_err(err, errlen, rc,
				       "write(%s/cgroup.subtree_control, +memory +pids): %s",
				       dir, strerror(-rc));
	}
	if (v2_lists(dir, "cgroup.controllers", "cpu") &&
	    !v2_lists(dir, "cgroup.subtree_control", "cpu"))
		cgroupfs_write(dir, "cgroup.subtree_control", "+cpu");
	return 0;
}

/* Move every process of base into the leaf base/goboxd-daemon. */
static int v2_evacuate(const char *base, char *err, size_t errlen)
{
	char leaf[PATH_MAX], procs[PATH_MAX];
	pid_t pids[256];
	int rc;

	if ((rc = cgroupfs_join(leaf, sizeof(leaf), base, CGROUP_DAEMON_LEAF)) < 0 ||
	    (rc = cgroupfs_join(procs, sizeof(procs), leaf, "cgroup.procs")) < 0)
		return cgroupfs_err(err, errlen, rc, "cgroup path too long");
	if ((rc = cgroupfs_mkdir(leaf)) < 0)
		return cgroupfs_err(err, errlen, rc, "mkdir(%s): %s", leaf, strerror(-rc));
	/* processes may fork meanwhile: repeat until the base is empty */
	for (int round = 0; round < 100; round++) {
		int n = cgroupfs_read_pids(base, pids, ARRAY_SIZE(pids));

		if (n < 0)
			return cgroupfs_err(err, errlen, n, "read %s/cgroup.procs: %s", base,
				       strerror(-n));
		if (n == 0)
			return 0;
		for (int i = 0; i < n && (size_t)i < ARRAY_SIZE(pids); i++) {
			char num[24];

			snprintf(num, sizeof(num), "%d", (int)pids[i]);
			rc = write_file_str(procs, num);
			if (rc < 0 && rc != -ESRCH)
				return cgroupfs_err(err, errlen, rc, "write(%s, %s): %s", procs, num,
					       strerror(-rc));
		}
	}
	return cgroupfs_err(err, errlen, -EBUSY, "%s keeps gaining processes", base);
}

/*
 * v2: a cgroup with member processes cannot hand controllers to its
 * children, so when the base refuses (EBUSY) its processes move into the
 * leaf "<base>/goboxd-daemon" first; the cgroup2 root is exempt from that
 * rule. Then memory/pids (and cpu) are enabled in the base and in
 * "<base>/goboxd". v1: nothing to do.
 */
int cgroup_place_prepare(const struct cgroup_place *p, char *err, size_t errlen)
{
	char top[PATH_MAX];
	int rc;

	if (p->ver != CGROUP_V2)
		return 0;
	rc = cgroup_place_v2_enable(p->root, err, errlen);
	if (rc == -EBUSY) {
		if ((rc = v2_evacuate(p->root, err, errlen)) < 0)
			return rc;
		rc = cgroup_place_v2_enable(p->root, err, errlen);
	}
	if (rc < 0)
		return rc;
	if ((rc = cgroupfs_join(top, sizeof(top), p->root, CGROUP_TOP)) < 0)
		return cgroupfs_err(err, errlen, rc, "cgroup path too long");
	if ((rc = cgroupfs_mkdir(top)) < 0)
		return cgroupfs_err(err, errlen, rc, "mkdir(%s): %s", top, strerror(-rc));
	return cgroup_place_v2_enable(top, err, errlen);
}

int cgroup_place_start(const char *root_override, struct cgroup_place *out, char *err,
		       size_t errlen)
{
	struct cgroup_host h;
	struct cgroup_place p;
	char why[512];
	int rc;

	if ((rc = cgroup_place_read_host(&h, err, errlen)) < 0)
		return rc;
	rc = cgroup_place_locate(&h, root_override, &p, err, errlen);
	cgroup_place_free_host(&h);
	if (rc < 0)
		return rc;
	if ((rc = cgroup_place_prepare(&p, why, sizeof(why))) < 0)
		return cgroupfs_err(err, errlen, rc, "%s, but cannot: %s", p.report, why);
	*out = p;
	return 0;
}
