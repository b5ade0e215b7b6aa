#include "autoconf.h"

#include "worker/sandbox/seccomp.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "worker/sandbox/policy.h"

struct seccomp_set {
	/* the denylist, installed by goboxd-init in each program: [0] for a
	 * job without a network, [1] for one with (policy_network_families) */
	void *bpf[2];
	size_t bpf_len[2];
	void *base;             /* the baseline, for the jail's launcher (build_baseline) */
	size_t base_len;
	struct sock_fprog base_prog;
};

static uint32_t policy_action(enum policy_sys_action a)
{
	switch (a) {
	case POLICY_SYSCALL_ENOSYS:
		return SCMP_ACT_ERRNO(ENOSYS);
	case POLICY_SYSCALL_EPERM:
		return SCMP_ACT_ERRNO(EPERM);
	case POLICY_SYSCALL_KILL:
		break;
	}
	return SCMP_ACT_KILL_PROCESS;
}

/* A call libseccomp does not know: the policy's own number, or -1. */
static int fallback_nr(const char *name)
{
	for (size_t i = 0; i < policy_syscall_nrs_count; i++)
		if (strcmp(policy_syscall_nrs[i].name, name) == 0)
			return policy_syscall_nrs[i].nr;
	return -1;
}

/* Each call of a policy table, whatever its arguments. */
static int add_calls(scmp_filter_ctx ctx, const struct policy_syscall *table, size_t n,
		     char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		const struct policy_syscall *p = &table[i];
		int nr = seccomp_syscall_resolve_name(p->name);
		int rc;

		if (nr == __NR_SCMP_ERROR)
			nr = fallback_nr(p->name);
		if (nr < 0)
			continue;
		rc = seccomp_rule_add(ctx, policy_action(p->action), nr, 0);
		if (rc < 0) {
			snprintf(err, errlen, "seccomp_rule_add(%s): %s", p->name, strerror(-rc));
			return rc;
		}
	}
	return 0;
}

/* The programs' own: their calls, and clone with a namespace flag. */
static int add_denylist(scmp_filter_ctx ctx, char *err, size_t errlen)
{
	int rc = add_calls(ctx, policy_denied_syscalls, policy_denied_syscalls_count, err, errlen);

	for (size_t i = 0; rc == 0 && i < policy_clone_ns_flags_count; i++) {
		unsigned long f = policy_clone_ns_flags[i];

		rc = seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, SCMP_SYS(clone), 1,
				      SCMP_A0(SCMP_CMP_MASKED_EQ, f, f));
		if (rc < 0)
			snprintf(err, errlen, "seccomp_rule_add(clone): %s", strerror(-rc));
	}
	return rc;
}

/* One argument's low 32 bits equal to v: a pid_t or an int, as the
 * kernel reads it, whatever the high bits hold. */
static struct scmp_arg_cmp arg_is(unsigned arg, int v)
{
	struct scmp_arg_cmp c = { arg, SCMP_CMP_MASKED_EQ, 0xffffffffu, (uint32_t)v };

	return c;
}

/* policy_init_guards: EPERM for a call that names the init, a process
 * group or a uid. */
static int add_init_guards(scmp_filter_ctx ctx, char *err, size_t errlen)
{
	for (size_t i = 0; i < policy_init_guards_count; i++) {
		const struct policy_init_guard *g = &policy_init_guards[i];
		int nr = seccomp_syscall_resolve_name(g->name);
		int rc;

		if (nr == __NR_SCMP_ERROR)
			continue;
		if (g->which_arg < 0) {
			rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1,
					      arg_is(g->pid_arg, POLICY_INIT_PID));
		} else {
			unsigned w = (unsigned)g->which_arg;

			rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 2,
					      arg_is(w, g->which_process),
					      arg_is(g->pid_arg, POLICY_INIT_PID));
			for (size_t k = 0; rc == 0 && k < ARRAY_SIZE(g->which_many); k++)
				rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1,
						      arg_is(w, g->which_many[k]));
		}
		if (rc < 0) {
			snprintf(err, errlen, "seccomp_rule_add(%s): %s", g->name, strerror(-rc));
			return rc;
		}
	}
	return 0;
}

/*
 * libseccomp 2.5 only exports to a file descriptor: go through a memfd.
 */
static int export_bpf(scmp_filter_ctx ctx, void **out, size_t *len, char *err, size_t errlen)
{
	int fd = memfd_create("goboxd-seccomp", MFD_CLOEXEC);
	struct stat st;
	void *mem = NULL;
	int rc;

	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "memfd_create: %s", strerror(errno));
		return rc;
	}
	rc = seccomp_export_bpf(ctx, fd);
	if (rc < 0) {
		snprintf(err, errlen, "seccomp_export_bpf: %s", strerror(-rc));
		goto out;
	}
	if (fstat(fd, &st) < 0 || st.st_size <= 0 ||
	    st.st_size % (off_t)sizeof(struct sock_filter) != 0) {
		rc = -EINVAL;
		snprintf(err, errlen, "seccomp_export_bpf: bad program size");
		goto out;
	}
	mem = xcalloc(1, (size_t)st.st_size);
	if (pread(fd, mem, (size_t)st.st_size, 0) != st.st_size) {
		rc = -EIO;
		snprintf(err, errlen, "pread(seccomp memfd): short read");
		free(mem);
		goto out;
	}
	*out = mem;
	*len = (size_t)st.st_size;
	rc = 0;
out:
	close(fd);
	return rc;
}

/*
 * The rules on an int argument, written by hand in front of libseccomp's
 * program: the kernel reads socket(2)'s family and ioctl(2)'s request as
 * 32-bit values, so only the argument's low 32 bits may be compared
 * (AF_UNIX with high bits set is AF_UNIX, and must pass; TIOCSTI with
 * high bits set is TIOCSTI, and must not), and libseccomp 2.5 compares
 * all 64 and refuses a second condition on one argument. A call on the
 * native ABI to socket(2) whose family is not one of the policy's, to
 * socketpair(2) with another family than AF_UNIX, or to ioctl(2) with a
 * request the policy refuses, fails here; everything else, those calls
 * included, goes on to libseccomp's program, which follows this one (its
 * own ABI checks first). With network, socket(2) takes the internet
 * families as well. Returns the number of instructions written, or
 * -errno.
 */
#define PREFIX_MAX 48

/* The low half of an argument. */
static uint32_t low_half(unsigned arg)
{
	return (uint32_t)(offsetof(struct seccomp_data, args[0]) + arg * sizeof(uint64_t) +
			  (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ? 4 : 0));
}

static struct sock_filter load(uint32_t at)
{
	return (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, at);
}

/* At k: if the value is v go to yes, else to no (both after k). */
static struct sock_filter jeq(size_t k, uint32_t v, size_t yes, size_t no)
{
	return (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, v, (uint8_t)(yes - k - 1),
					    (uint8_t)(no - k - 1));
}

/* At k: socket(2)'s families, each a jump to `end`; the last test's
 * "no" goes on to k + 1, the refusal. */
static size_t family_tests(struct sock_filter *p, size_t k, const int *fam, size_t n,
			   size_t end)
{
	for (size_t i = 0; i < n; i++, k++)
		p[k] = jeq(k, (uint32_t)fam[i], end, k + 1);
	return k;
}

static int args_prefix(struct sock_filter *p, bool network, char *err, size_t errlen)
{
	const size_t nfam = policy_socket_families_count +
			    (network ? policy_network_families_count : 0);
	const size_t ncmd = policy_denied_ioctls_count;
	int nr_socket = seccomp_syscall_resolve_name("socket");
	int nr_pair = seccomp_syscall_resolve_name("socketpair");
	int nr_ioctl = seccomp_syscall_resolve_name("ioctl");
	uint32_t deny_socket = SECCOMP_RET_ERRNO | (POLICY_SOCKET_ERRNO & SECCOMP_RET_DATA);
	uint32_t deny_ioctl = SECCOMP_RET_ERRNO | (POLICY_IOCTL_ERRNO & SECCOMP_RET_DATA);
	/* where each part starts: the dispatch (6), socket's load, tests and
	 * return, socketpair's load, test and return, ioctl's load and
	 * tests, its return; then the end, libseccomp's program */
	const size_t sock = 6, pair = sock + 1 + nfam + 1, ioc = pair + 3;
	const size_t refuse = ioc + 1 + ncmd, end = refuse + 1;
	size_t k = 0;

	/* Where socketcall(2) exists, the family is in memory, out of a
	 * filter's reach: refuse to start rather than hold a rule that does
	 * not (docs/security.md). */
	if (nr_socket < 0 || nr_pair < 0 || nr_ioctl < 0 || policy_socket_families_count == 0 ||
	    ncmd == 0 || end > PREFIX_MAX || seccomp_syscall_resolve_name("socketcall") >= 0) {
		snprintf(err, errlen, "seccomp: no socket rule for this architecture");
		return -ENOTSUP;
	}
	p[k++] = load(offsetof(struct seccomp_data, arch));
	p[k] = jeq(k, seccomp_arch_native(), k + 1, end);
	k++;
	p[k++] = load(offsetof(struct seccomp_data, nr));
	p[k] = jeq(k, (uint32_t)nr_socket, sock, k + 1);
	k++;
	p[k] = jeq(k, (uint32_t)nr_pair, pair, k + 1);
	k++;
	p[k] = jeq(k, (uint32_t)nr_ioctl, ioc, end);
	k++;
	p[k++] = load(low_half(0));
	k = family_tests(p, k, policy_socket_families, policy_socket_families_count, end);
	if (network)
		k = family_tests(p, k, policy_network_families, policy_network_families_count,
				 end);
	p[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, deny_socket);
	p[k++] = load(low_half(0));
	p[k] = jeq(k, (uint32_t)POLICY_SOCKETPAIR_FAMILY, end, k + 1);
	k++;
	p[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, deny_socket);
	p[k++] = load(low_half(1));
	for (size_t i = 0; i < ncmd; i++, k++)
		p[k] = jeq(k, policy_denied_ioctls[i], refuse, i + 1 < ncmd ? k + 1 : end);
	p[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, deny_ioctl);
	return (int)k;
}

/* libseccomp's program (body, len bytes) behind a prefix of our own
 * (args_prefix). */
static int with_prefix(const void *body, size_t len, bool network, void **out, size_t *out_len,
		       char *err, size_t errlen)
{
	struct sock_filter prefix[PREFIX_MAX];
	int n = args_prefix(prefix, network, err, errlen);
	size_t head;

	if (n < 0)
		return n;
	head = (size_t)n * sizeof(struct sock_filter);
	*out = xcalloc(1, head + len);
	memcpy(*out, prefix, head);
	memcpy((char *)*out + head, body, len);
	*out_len = head + len;
	return 0;
}

/* A denylist: everything allowed but what the rules name. */
static scmp_filter_ctx new_denylist(char *err, size_t errlen)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int rc;

	if (!ctx) {
		snprintf(err, errlen, "seccomp_init failed");
		return NULL;
	}
	/* Other ABIs are not added to the filter: libseccomp makes their
	 * calls (and x32 numbers) hit the bad-arch action, a kill. */
	rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	if (rc < 0) {
		snprintf(err, errlen, "seccomp_attr_set(BADARCH): %s", strerror(-rc));
		seccomp_release(ctx);
		return NULL;
	}
	/*
	 * A binary tree of syscall numbers, not libseccomp's default list:
	 * the kernel runs the filter once for every syscall number when a
	 * program installs it (its action cache, under the program's signal
	 * lock), and a list walks every rule for each number that none
	 * names. The tree takes a few steps (docs/benchmarks.md).
	 */
	rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	if (rc < 0) {
		snprintf(err, errlen, "seccomp_attr_set(OPTIMIZE): %s", strerror(-rc));
		seccomp_release(ctx);
		return NULL;
	}
	return ctx;
}

/*
 * The baseline, under the jail binary, the init and every program: other
 * ABIs (i386 through int 0x80, x32 numbers) kill, and so do the calls
 * none of them makes (policy_denied_everywhere). Installed once a jail,
 * where each program installs its own filter: what is here is off every
 * program's start.
 */
static int build_baseline(void **out, size_t *len, char *err, size_t errlen)
{
	scmp_filter_ctx ctx = new_denylist(err, errlen);
	int rc;

	if (!ctx)
		return -ENOMEM;
	rc = add_calls(ctx, policy_denied_everywhere, policy_denied_everywhere_count, err,
		       errlen);
	if (rc == 0)
		rc = export_bpf(ctx, out, len, err, errlen);
	seccomp_release(ctx);
	return rc;
}

static int build_bpf(struct seccomp_set *s, char *err, size_t errlen)
{
	scmp_filter_ctx ctx = new_denylist(err, errlen);
	void *body = NULL;
	size_t len = 0;
	int rc;

	if (!ctx)
		return -ENOMEM;
	rc = add_denylist(ctx, err, errlen);
	if (rc == 0)
		rc = add_init_guards(ctx, err, errlen);
	if (rc == 0)
		rc = export_bpf(ctx, &body, &len, err, errlen);
	for (int network = 0; rc == 0 && body && network < 2; network++)
		rc = with_prefix(body, len, network, &s->bpf[network], &s->bpf_len[network], err,
				 errlen);
	free(body);
	seccomp_release(ctx);
	return rc;
}

int seccomp_set_build(struct seccomp_set **out, char *err, size_t errlen)
{
	struct seccomp_set *s = xcalloc(1, sizeof(*s));
	int rc;

	rc = build_bpf(s, err, errlen);
	if (rc == 0)
		rc = build_baseline(&s->base, &s->base_len, err, errlen);
	if (rc < 0) {
		seccomp_set_free(s);
		return rc;
	}
	s->base_prog.len = (unsigned short)(s->base_len / sizeof(struct sock_filter));
	s->base_prog.filter = s->base;
	*out = s;
	return 0;
}

void seccomp_set_free(struct seccomp_set *s)
{
	if (!s)
		return;
	free(s->bpf[0]);
	free(s->bpf[1]);
	free(s->base);
	free(s);
}

const void *seccomp_set_bpf(const struct seccomp_set *s, bool network, size_t *len)
{
	*len = s->bpf_len[network];
	return s->bpf[network];
}

int seccomp_set_apply_baseline(const struct seccomp_set *s)
{
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &s->base_prog, 0, 0) < 0)
		return -errno;
	return 0;
}
