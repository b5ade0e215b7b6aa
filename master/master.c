#include "autoconf.h"

#include "master/master.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "common/auth.h"
#include "common/channel.h"
#include "common/log.h"
#include "common/proctitle.h"
#include "common/stats.h"
#include "common/store.h"
#include "common/util.h"
#include "master/from_worker.h"
#include "master/handover.h"
#include "master/master_state.h"
#include "master/prepare.h"
#include "master/queue.h"
#include "master/stored.h"
#include "master/sweeper.h"
#include "worker/cgroup/cgroup.h"
#include "worker/cgroup/cgroup_place.h"
#include "worker/sandbox/host.h"
#include "worker/worker.h"

#define TICK_MS 100
#define PROBE_PERIOD_MS (5 * 60 * 1000)
#define RESPAWN_MAX_DELAY_MS 30000

static char tag_sig;
static volatile sig_atomic_t prober_stop;

static void on_prober_term(int sig)
{
	(void)sig;
	prober_stop = 1;
}

/* ---- workers ------------------------------------------------------- */

static unsigned live_workers(const struct master *m, uint32_t gen)
{
	unsigned n = 0;

	for (size_t i = 0; i < STATS_MAX_WORKERS; i++)
		if (m->slots[i].pid > 0 && m->slots[i].gen == gen)
			n++;
	return n;
}

/*
 * In a child just forked, before anything else: close what only the master
 * may hold. Every fd is CLOEXEC, but these children never exec; a queued
 * client kept by a worker of a new generation (or the prober) would keep
 * the connection open after the master had answered it, and a memfd would
 * keep the request's bytes.
 */
static void child_close_master_fds(struct master *m)
{
	for (size_t i = 0; i < STATS_MAX_WORKERS; i++)
		if (m->slots[i].channel >= 0)
			close(m->slots[i].channel);
	close(m->epfd);
	close(m->sigfd);
	queue_free(&m->q);
	queue_free(&m->later);
	/* the claim is the master's alone: workers open their own connections */
	if (m->store_claim >= 0)
		close(m->store_claim);
	queue_free(&m->subs);
}

/* jobdir_stale's callback: the path goes to the next sweeper. */
static void sweep_later(void *arg, const char *path)
{
	sweeper_add(arg, path);
}

static int spawn_worker(struct master *m, size_t idx)
{
	struct wslot *s = &m->slots[idx];
	int sv[2];
	pid_t pid, master_pid;
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = s };

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		log_error("socketpair: %s", strerror(errno));
		return -errno;
	}
	master_pid = getpid();
	handover_worker_starts(m, s);
	pid = fork();
	if (pid < 0) {
		log_error("fork: %s", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		return -errno;
	}
	if (pid == 0) {
		struct worker_ctx ctx = {
			.index = (unsigned)idx, .master_pid = master_pid, .generation = m->gen,
			.cfg = &m->cfg, .langs = m->langs,
			.stats = m->stats, .probes = m->probes, .auth = m->auth,
			.listen_fd = m->listen_fd,
			.channel_fd = sv[1],
			.store_refused = m->store_refused[0] ? m->store_refused : NULL,
		};
		sigset_t none;

		close(sv[0]);
		child_close_master_fds(m);
		/* a SIGUSR1 sent to every goboxd process must not kill workers;
		 * they follow the master's log reopening by themselves */
		signal(SIGUSR1, SIG_IGN);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		_exit(worker_main(&ctx));
	}
	close(sv[1]);
	set_nonblock(sv[0], true);
	s->pid = pid;
	s->channel = sv[0];
	s->gen = m->gen;
	s->idle = false;
	s->busy = false;
	s->sub = 0;
	s->quitting = false;
	s->config_fail = false;
	s->started_ms = now_ms();
	s->respawn_at = 0;
	epoll_ctl(m->epfd, EPOLL_CTL_ADD, s->channel, &ev);
	log_info("worker %zu started (pid %d, generation %u)", idx, pid, m->gen);
	return 0;
}

static int free_worker_slot(const struct master *m)
{
	for (size_t i = 0; i < STATS_MAX_WORKERS; i++)
		if (m->slots[i].pid == 0 && m->slots[i].respawn_at == 0)
			return (int)i;
	return -1;
}

static void spawn_generation(struct master *m)
{
	for (unsigned i = 0; i < m->cfg.workers; i++) {
		int idx = free_worker_slot(m);

		if (idx < 0) {
			log_error("no free worker slot (max %d)", STATS_MAX_WORKERS);
			return;
		}
		spawn_worker(m, (size_t)idx);
	}
}

/* A message without fds or payload (QUIT). */
static void tell_worker(const struct wslot *s, enum channel_type type)
{
	int rc = channel_send(s->channel, type, NULL, 0, NULL, 0);

	if (rc < 0)
		log_warn("channel_send to worker pid %d: %s", s->pid, strerror(-rc));
}

static void quit_generation(struct master *m, uint32_t gen)
{
	for (size_t i = 0; i < STATS_MAX_WORKERS; i++) {
		struct wslot *s = &m->slots[i];

		if (s->pid > 0 && s->gen == gen && !s->quitting) {
			s->quitting = true;
			s->idle = false;
			tell_worker(s, CHANNEL_QUIT);
		}
		if (s->pid == 0 && s->gen == gen)
			s->respawn_at = 0;
	}
}


/* ---- children ------------------------------------------------------ */

static void start_prober(struct master *m)
{
	pid_t pid;

	if (m->prober > 0) {
		/* Let it finish its current probe; reap_children starts the next. */
		kill(m->prober, SIGTERM);
		m->reprobe = true;
		return;
	}
	m->reprobe = false;
	pid = fork();
	if (pid < 0) {
		log_error("fork (prober): %s", strerror(errno));
		return;
	}
	if (pid == 0) {
		sigset_t none;

		log_set_role("prober");
		prctl(PR_SET_NAME, "goboxd-prober", 0, 0, 0);
		proctitle_set("goboxd: prober");
		prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0);
		child_close_master_fds(m);
		close(m->listen_fd);
		signal(SIGTERM, on_prober_term);
		signal(SIGHUP, SIG_IGN);
		signal(SIGINT, SIG_IGN);
		signal(SIGUSR1, SIG_IGN);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		_exit(probe_run_all(&m->cfg, m->langs, m->gen, m->probes, &prober_stop) == 0 ? 0 : 1);
	}
	m->prober = pid;
	m->next_probe_ms = now_ms() + PROBE_PERIOD_MS;
}

static void on_worker_exit(struct master *m, struct wslot *s, int status)
{
	bool current = s->gen == m->gen && !s->quitting && !m->stopping;
	bool config_fail = WIFEXITED(status) && WEXITSTATUS(status) == WORKER_EXIT_CONFIG;
	uint64_t lived = now_ms() - s->started_ms;

	if (WIFSIGNALED(status))
		log_warn("worker pid %d killed by signal %d", s->pid, WTERMSIG(status));
	else if (WEXITSTATUS(status) != 0 || current)
		log_info("worker pid %d exited with %d", s->pid, WEXITSTATUS(status));
	/*
	 * A worker that hands over a connection may exit right after: its
	 * message (and the client's fd) can still wait in the channel, and
	 * closing the channel unread would drop that client.
	 */
	from_worker_read(m, s);
	/* a stored submission it was running runs again, first (a leased
	 * one, when its lease ends) */
	if (s->busy && s->sub > 0) {
		struct queue_entry e = { .fd = -1, .memfd = -1, .enq_ms = now_ms(), .sub = s->sub };

		log_warn("submission %lld runs again: its worker died", (long long)s->sub);
		if (m->subs.len >= m->subs.cap)
			queue_resize(&m->subs, m->subs.cap ? m->subs.cap * 2 : 64);
		queue_unpop(&m->subs, &e);
	}
	handover_worker_gone(m, s);
	epoll_ctl(m->epfd, EPOLL_CTL_DEL, s->channel, NULL);
	close(s->channel);
	s->channel = -1;
	s->pid = 0;
	s->idle = false;
	atomic_store(&m->stats->workers[s - m->slots].state, WS_EMPTY);
	atomic_store(&m->stats->workers[s - m->slots].pid, 0);
	if (!current)
		return;
	if (config_fail) {
		/* Respawning cannot help: the configuration is wrong. */
		s->config_fail = true;
		log_error("worker %td cannot start for a configuration reason; not respawning",
			  s - m->slots);
		return;
	}
	s->fails = lived < 2000 ? s->fails + 1 : 0;
	{
		uint64_t delay = s->fails ? 100ull << (s->fails < 9 ? s->fails : 9) : 0;

		if (delay > RESPAWN_MAX_DELAY_MS)
			delay = RESPAWN_MAX_DELAY_MS;
		s->respawn_at = now_ms() + delay;
	}
}

static void reap_children(struct master *m)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		if (sweeper_reaped(&m->sweeper, pid, status))
			continue;
		/*
		 * A child that died without cleaning up (a worker killed in the
		 * middle of a job, or with a warm jail) leaves its job
		 * directories unlocked: they go now, not at the next sweep.
		 */
		jobdir_stale(m->cfg.jail_dir, pid, 0, sweep_later, &m->sweeper);
		if (pid == m->prober) {
			m->prober = 0;
			if (m->reprobe && !m->stopping)
				start_prober(m);
			continue;
		}
		for (size_t i = 0; i < STATS_MAX_WORKERS; i++) {
			if (m->slots[i].pid == pid) {
				on_worker_exit(m, &m->slots[i], status);
				break;
			}
		}
	}
}

static void respawn_due(struct master *m)
{
	uint64_t now = now_ms();

	for (size_t i = 0; i < STATS_MAX_WORKERS; i++) {
		struct wslot *s = &m->slots[i];

		if (s->pid == 0 && s->respawn_at && now >= s->respawn_at) {
			s->respawn_at = 0;
			if (s->gen == m->gen && !m->stopping && spawn_worker(m, i) == 0)
				atomic_fetch_add(&m->stats->workers_respawned, 1);
		}
	}
}

/* ---- reload, sweep, stop ------------------------------------------- */

static void reload(struct master *m)
{
	struct config nc;
	struct langtab *new_langs = NULL;
	bool exit_now;
	char err[512];
	uint32_t old = m->gen;

	sd_notify(0, "RELOADING=1");
	log_info("reloading configuration and languages");
	if (config_build(&nc, m->argc, m->argv, m->envp, &exit_now, err, sizeof(err)) < 0 ||
	    langtab_load(nc.languages_dir, &nc.limits_max, &new_langs, err, sizeof(err)) < 0) {
		log_error("reload refused, the previous configuration stays in force: %s", err);
		config_free(&nc);
		sd_notify(0, "READY=1\nSTATUS=reload refused");
		return;
	}
	if (strcmp(nc.listen, m->cfg.listen) != 0 || nc.port != m->cfg.port)
		log_warn("listen address changes take effect on restart only");
	if (strcmp(nc.cgroup_root ? nc.cgroup_root : "", m->cgroup_option ? m->cgroup_option : ""))
		log_warn("cgroup-root changes take effect on restart only");
	if (strcmp(nc.log_file ? nc.log_file : "", m->cfg.log_file ? m->cfg.log_file : "")) {
		log_warn("log-file changes take effect on restart only");
		free(nc.log_file);
		nc.log_file = m->cfg.log_file ? xstrdup(m->cfg.log_file) : NULL;
	}
	if (strcmp(nc.store, m->cfg.store)) {
		/* the master claimed the old one, or leases from it */
		log_warn("store changes take effect on restart only");
		free(nc.store);
		nc.store = xstrdup(m->cfg.store);
	}
	free(nc.cgroup_root);
	nc.cgroup_root = m->cgroup_root ? xstrdup(m->cgroup_root) : NULL;
	config_free(&m->cfg);
	m->cfg = nc;
	/* in force at once, also on the connections the old workers hold */
	auth_shared_publish(m->auth, m->cfg.auth, m->cfg.auth_probes);
	langtab_free(m->langs);
	m->langs = new_langs;
	queue_resize(&m->q, m->cfg.max_queue_size);
	m->gen++;
	atomic_store(&m->stats->generation, m->gen);
	atomic_fetch_add(&m->stats->reloads, 1);
	spawn_generation(m);
	quit_generation(m, old);
	start_prober(m);
	log_info("reloaded: generation %u, %zu languages", m->gen, langtab_count(m->langs));
	sd_notify(0, "READY=1\nSTATUS=reloaded");
}

/* Every --sweep-interval: what crashes left behind, older than --sweep-age. */
static void list_stale_dirs(struct master *m)
{
	int rc = jobdir_stale(m->cfg.jail_dir, 0, m->cfg.sweep_age_s, sweep_later, &m->sweeper);

	if (rc < 0)
		log_warn("sweeping %s: %s", m->cfg.jail_dir, strerror(-rc));
	m->next_sweep_ms = now_ms() + (uint64_t)m->cfg.sweep_interval_s * 1000;
}

static void in_sweeper_child(void *arg)
{
	struct master *m = arg;

	child_close_master_fds(m);
	close(m->listen_fd);
}

/* At most one sweeper at a time; a failed fork is retried a second later. */
static void start_sweeper(struct master *m)
{
	if (now_ms() < m->sweeper_retry_ms)
		return;
	if (sweeper_start(&m->sweeper, in_sweeper_child, m) < 0)
		m->sweeper_retry_ms = now_ms() + 1000;
}

/* Refuse what still waits, tell every worker to finish (or quit now). */
static void stop_workers(struct master *m, bool fast)
{
	struct queue_entry e;

	while (queue_pop(&m->q, &e) == 0)
		handover_refuse(m, &e, "shutting_down", "the server is stopping; retry later");
	handover_publish(m);
	for (size_t i = 0; i < STATS_MAX_WORKERS; i++) {
		struct wslot *s = &m->slots[i];

		s->respawn_at = 0;
		if (s->pid <= 0)
			continue;
		if (fast)
			kill(s->pid, SIGQUIT);
		else if (!s->quitting) {
			s->quitting = true;
			tell_worker(s, CHANNEL_QUIT);
		}
	}
	m->quit_sent = true;
}

/*
 * A graceful stop first lets the queue drain (new jobs are refused with
 * 503 from now on), then tells the workers to finish; all within the
 * deadline. A fast stop does both at once, with SIGQUIT.
 */
static void begin_stop(struct master *m, bool fast)
{
	if (m->stopping && !fast)
		return;
	sd_notify(0, "STOPPING=1");
	log_info("%s stop requested", fast ? "fast" : "graceful");
	m->stopping = true;
	m->fast = fast;
	m->stop_deadline_ms = now_ms() + (fast ? 2000 : (uint64_t)m->cfg.shutdown_timeout_s * 1000);
	for (size_t i = 0; i < STATS_MAX_WORKERS; i++)
		m->slots[i].respawn_at = 0;
	if (fast || m->q.len == 0)
		stop_workers(m, fast);
	if (m->prober > 0)
		kill(m->prober, fast ? SIGKILL : SIGTERM);
}

static bool any_children(const struct master *m)
{
	if (m->prober > 0 || m->sweeper.pid > 0)
		return true;
	for (size_t i = 0; i < STATS_MAX_WORKERS; i++)
		if (m->slots[i].pid > 0)
			return true;
	return false;
}

static void kill_all(struct master *m)
{
	for (size_t i = 0; i < STATS_MAX_WORKERS; i++)
		if (m->slots[i].pid > 0) {
			log_warn("worker pid %d did not stop in time; killing it", m->slots[i].pid);
			kill(m->slots[i].pid, SIGKILL);
		}
	if (m->prober > 0)
		kill(m->prober, SIGKILL);
	if (m->sweeper.pid > 0)
		kill(m->sweeper.pid, SIGKILL);
}

/* After a rotation: the master's line goes to the new file at once. */
static void reopen_log(void)
{
	int rc = log_reopen();

	if (rc == -ENOENT)
		log_info("SIGUSR1: no --log-file to reopen, logging goes to stderr");
	else if (rc < 0)
		log_error("SIGUSR1: reopening the log file: %s; the old file stays", strerror(-rc));
	else
		log_info("log file reopened");
}

static void read_master_signals(struct master *m)
{
	struct signalfd_siginfo si;

	while (read(m->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGCHLD:
			reap_children(m);
			break;
		case SIGHUP:
			if (!m->stopping)
				reload(m);
			break;
		case SIGTERM:
		case SIGINT:
			begin_stop(m, false);
			break;
		case SIGQUIT:
			begin_stop(m, true);
			break;
		case SIGUSR1:
			reopen_log();
			break;
		default:
			break;
		}
	}
}

/* ---- set-up and loop ----------------------------------------------- */

static int prepare_dirs(struct master *m, char *err, size_t errlen)
{
	int rc;

	/* The jails reach their directory also through the store's
	 * (/var/lib/goboxd), which an older goboxd made 0700 and the store
	 * opens only later: opened up first. */
	store_unhide_dir(m->cfg.store);
	rc = prepare_jail_dir(m->cfg.jail_dir, err, errlen);

	if (rc < 0)
		return rc;
	/* The first sweep is due at once; the loop starts it, off start-up's path. */
	m->next_sweep_ms = now_ms();
	return 0;
}

/*
 * The cgroup place is chosen once, here, and handed to every worker and
 * prober through cfg.cgroup_root. Without one goboxd refuses to start,
 * unless the operator asked to run degraded.
 */
static int prepare_cgroups(struct master *m, char *err, size_t errlen)
{
	struct cgroup_place p;
	char why[1536];
	unsigned removed = 0;

	m->cgroup_option = m->cfg.cgroup_root ? xstrdup(m->cfg.cgroup_root) : NULL;
	if (cgroup_place_start(m->cfg.cgroup_root, &p, why, sizeof(why)) < 0) {
		if (!m->cfg.allow_degraded_cgroups) {
			snprintf(err, errlen,
				 "cgroups: %s; remedies: run it in a unit with Delegate=yes, in a container "
				 "with --cgroupns=private, as root on the host, or with "
				 "--cgroup-root=<a delegated cgroup>; --allow-degraded-cgroups "
				 "starts it anyway, refusing every job",
				 why);
			return -ENOTSUP;
		}
		log_error("cgroups: %s; running degraded (--allow-degraded-cgroups), every job will "
			  "be refused", why);
		return 0;
	}
	log_info("cgroups: v%d, %s", (int)p.ver, p.report);
	if (p.root[0]) {
		m->cgroup_root = xstrdup(p.root);
		free(m->cfg.cgroup_root);
		m->cfg.cgroup_root = xstrdup(p.root);
	}
	if (cgroup_sweep(m->cfg.cgroup_root, &removed) == 0 && removed)
		log_info("removed %u stale step cgroups", removed);
	return 0;
}

static int setup(struct master *m, char *err, size_t errlen)
{
	int rc;
	sigset_t mask;
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &tag_sig };

	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGQUIT);
	sigaddset(&mask, SIGUSR1);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	m->sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	m->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (m->sigfd < 0 || m->epfd < 0 ||
	    epoll_ctl(m->epfd, EPOLL_CTL_ADD, m->sigfd, &ev) < 0) {
		int e = errno;

		snprintf(err, errlen, "signalfd/epoll: %s", strerror(e));
		return -e;
	}
	m->stats = stats_map();
	m->probes = probe_table_map();
	m->auth = auth_shared_map();
	if (!m->stats || !m->probes || !m->auth) {
		int e = errno;

		snprintf(err, errlen, "mmap(shared stats): %s", strerror(e));
		return -e;
	}
	auth_shared_publish(m->auth, m->cfg.auth, m->cfg.auth_probes);
	queue_init(&m->q, m->cfg.max_queue_size);
	queue_init(&m->subs, 0);
	queue_init(&m->later, 0);
	if ((rc = prepare_dirs(m, err, errlen)) < 0)
		return rc;
	if ((rc = prepare_cgroups(m, err, errlen)) < 0)
		return rc;
	m->listen_fd = prepare_listen(&m->cfg, err, errlen);
	if (m->listen_fd < 0)
		return m->listen_fd;
	rc = stored_open(m, err, errlen);
	if (rc < 0)
		return rc;
	return 0;
}

static int master_loop(struct master *m)
{
	struct epoll_event evs[64];

	for (;;) {
		int n = epoll_wait(m->epfd, evs, 64, TICK_MS);

		for (int i = 0; i < n; i++) {
			if (evs[i].data.ptr == &tag_sig)
				read_master_signals(m);
			else
				from_worker_read(m, evs[i].data.ptr);
		}
		if (m->stopping) {
			if (!m->quit_sent) {
				handover_expire(m);
				handover_dispatch(m);
				if (m->q.len == 0 || now_ms() >= m->stop_deadline_ms)
					stop_workers(m, false);
				continue;
			}
			/* the directories of workers that died while stopping */
			start_sweeper(m);
			if (!any_children(m))
				return 0;
			if (now_ms() >= m->stop_deadline_ms) {
				kill_all(m);
				m->stop_deadline_ms = now_ms() + 5000;
			}
			continue;
		}
		respawn_due(m);
		handover_expire(m);
		stored_undefer_due(m);
		stored_look(m);
		handover_dispatch(m);
		/* a sweeper at work holds what it removes: list again after it */
		if (now_ms() >= m->next_sweep_ms && m->sweeper.pid == 0)
			list_stale_dirs(m);
		start_sweeper(m);
		if (now_ms() >= m->next_probe_ms && m->prober == 0)
			start_prober(m);
		if (live_workers(m, m->gen) == 0) {
			bool all_config = true;

			for (size_t i = 0; i < STATS_MAX_WORKERS; i++)
				if (m->slots[i].gen == m->gen &&
				    (m->slots[i].respawn_at || !m->slots[i].config_fail))
					all_config = false;
			if (all_config) {
				log_error("every worker failed for a configuration reason; exiting");
				return 1;
			}
		}
	}
}

int master_run(struct config *cfg, struct langtab *langs, int argc, char **argv, char **envp)
{
	struct master *m = xcalloc(1, sizeof(*m));
	char err[2560];
	int rc = 1;

	m->cfg = *cfg;
	memset(cfg, 0, sizeof(*cfg));
	m->langs = langs;
	m->argc = argc;
	m->argv = argv;
	m->envp = envp;
	m->gen = 1;
	m->listen_fd = -1;
	m->store_claim = -1;
	for (size_t i = 0; i < STATS_MAX_WORKERS; i++)
		m->slots[i].channel = -1;
	log_set_role("master");
	prctl(PR_SET_NAME, "goboxd-master", 0, 0, 0);
	proctitle_set("goboxd: master");
	if (setup(m, err, sizeof(err)) < 0) {
		log_error("start-up failed: %s", err);
		goto out;
	}
	atomic_store(&m->stats->generation, m->gen);
	spawn_generation(m);
	start_prober(m);
	{
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "msg", "listening");
		cJSON_AddStringToObject(o, "address", m->cfg.listen);
		cJSON_AddNumberToObject(o, "port", prepare_bound_port(m->listen_fd));
		cJSON_AddNumberToObject(o, "workers", m->cfg.workers);
		cJSON_AddStringToObject(o, "jail", config_jail_name(m->cfg.jail));
		cJSON_AddNumberToObject(o, "languages", (double)langtab_count(m->langs));
		log_json(LOG_INFO, o);
	}
	sd_notify(0, "READY=1");
	rc = master_loop(m);
	log_info("stopped");
out:
	if (m->listen_fd >= 0)
		close(m->listen_fd);
	queue_free(&m->q);
	queue_free(&m->subs);
	queue_free(&m->later);
	if (m->store_claim >= 0)
		close(m->store_claim);
	sweeper_free(&m->sweeper);
	stats_unmap(m->stats);
	probe_table_unmap(m->probes);
	auth_shared_unmap(m->auth);
	langtab_free(m->langs);
	config_free(&m->cfg);
	free(m->cgroup_option);
	free(m->cgroup_root);
	free(m);
	return rc;
}
