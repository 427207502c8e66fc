/* The seccomp filter, generated from the syscall table.
 *
 * The program, as pseudo-C (seccomp_data d; TRACE(x) = SECCOMP_RET_TRACE
 * with RET_DATA x, see enum arch_trace_data; under the notify engine
 * SECCOMP_RET_USER_NOTIF instead, whose notification carries the arch):
 *
 *     if (d.arch != AUDIT_ARCH_X86_64) return TRACE(FOREIGN); // i386 int $0x80, ...
 *     if (d.nr & __X32_SYSCALL_BIT)     return TRACE(X32);
 *     // a binary search over the table's numbers (jge), then per syscall:
 *     switch (d.nr) {
 *     case execve: ... case rename: ... case connect: ... case fork: ...
 *     case io_uring_setup: ... case ptrace: ...     return TRACE(NATIVE);
 *     case open:   // flags: d.args[1]
 *     case openat: // flags: d.args[2]
 *                  if (flags & WRITE_FLAGS) return TRACE;
 *                  if (read rules && !(flags & (O_PATH|O_DIRECTORY))) return TRACE;
 *                  return ALLOW;
 *                  // WRITE_FLAGS = O_WRONLY|O_RDWR|O_CREAT|O_TRUNC|__O_TMPFILE
 *                  // ("read rules": decided when the program is built; an
 *                  // O_PATH descriptor reads nothing, an O_DIRECTORY one reads
 *                  // no file's bytes, doc/SYSCALLS.md)
 *     case sendto:  if (d.args[4] != 0) return TRACE; return ALLOW;
 *     // SYSCALL_BPF_BYPASS: the entry's bypass tests, each a conjunction of
 *     // argument tests (bits set, one of some values, none of them):
 *     case unshare: if (d.args[0] & CLONE_NEW*) return TRACE; return ALLOW;
 *     case seccomp: if (d.args[1] & SECCOMP_FILTER_FLAG_NEW_LISTENER) return TRACE;
 *                   return ALLOW;
 *     case ioctl:   if (d.args[1] == TIOCSTI || d.args[1] == TIOCLINUX) return TRACE;
 *                   return ALLOW;
 *     case socket:  if (d.args[0] == AF_PACKET) return TRACE;
 *                   if (d.args[0] in {AF_INET, AF_INET6} &&
 *                       (d.args[1] & 0xf) in {SOCK_RAW, SOCK_PACKET}) return TRACE;
 *                   if (d.args[0] not in {AF_UNIX, AF_INET, AF_INET6, AF_NETLINK})
 *                           return TRACE;
 *                   return ALLOW;
 *     case clone3:  return ERRNO(ENOSYS);   // libc falls back to clone()
 *     default:      return ALLOW;
 *     }
 *
 * Flags are ints: the filter reads the low 32 bits of an argument, the
 * kernel's own view of them.  With no tracer attached a TRACE answer fails
 * the call with ENOSYS (seccomp(2)), so a tracee that loses its supervisor
 * cannot do anything that needed a check (and PTRACE_O_EXITKILL kills it). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rules/rules.h"
#include "tracer/syscall/arch.h"
#include "tracer/syscall/call.h"
#include "tracer/syscall/probe.h"
#include "tracer/syscall/table.h"

#define OFF_NR offsetof(struct seccomp_data, nr)

/* Linux 5.19; not in every build machine's headers. */
#define FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#define OFF_ARCH offsetof(struct seccomp_data, arch)
/* x86_64 is little-endian: the low half of args[i] comes first. */
#define OFF_ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i))
#define OFF_ARG_HI(i) (OFF_ARG_LO(i) + 4)

struct filter_gen {
	struct sock_filter *prog;
	size_t n, cap;
	bool read_rules;
	bool count_spawns;
	uint32_t decide; /* SECCOMP_RET_TRACE or SECCOMP_RET_USER_NOTIF */
};

static void filter_emit(struct filter_gen *g, uint16_t code, uint32_t k, uint8_t jt, uint8_t jf)
{
	if (g->n < g->cap)
		g->prog[g->n] = (struct sock_filter){code, jt, jf, k};
	g->n++; /* counted even past cap: the caller reports -E2BIG */
}

static void filter_ret(struct filter_gen *g, uint32_t action)
{
	filter_emit(g, BPF_RET | BPF_K, action, 0, 0);
}

static bool filter_read_rules(const struct rules_policy *p)
{
	return p && (p->span[RULES_KIND_READ][RULES_ACTION_DENY].count > 0 ||
		     p->span[RULES_KIND_READ][RULES_ACTION_ALERT].count > 0);
}

/* An open-flags block under a policy with read rules: every open stops
 * but one that syscall_open_kind() calls SYSCALL_OPEN_NONE (read-only
 * O_PATH or O_DIRECTORY: read rules judge opens of a file's bytes). */
#define FILTER_OPEN_READ 100

/* fork, vfork and clone with no ceiling on processes to keep: only a
 * clone with a bypass flag (CLONE_UNTRACED, a new namespace) stops (its
 * bypass tests, SYSCALL_BPF_BYPASS); the new process is learnt from its
 * PTRACE_EVENT_FORK/VFORK/CLONE all the same.  One stop less per process
 * started. */

/* The effective BPF action of E under this policy. */
static int filter_action(const struct filter_gen *g, const struct syscall_entry *e)
{
	if (e->bpf == SYSCALL_BPF_OPEN_FLAGS && g->read_rules)
		return FILTER_OPEN_READ;
	if (e->cls == SYSCALL_SPAWN && e->bpf == SYSCALL_BPF_TRACE && !g->count_spawns)
		return e->bypass[0].id ? SYSCALL_BPF_BYPASS : SYSCALL_BPF_ALLOW;
	return e->bpf;
}

#define FILTER_N_BYPASS (sizeof(((struct syscall_entry *)0)->bypass) / \
			 sizeof(((struct syscall_entry *)0)->bypass[0]))

/* Instructions of one argument test (no test: none, it holds). */
static size_t filter_test_len(const struct syscall_test *t)
{
	if (!t->arg)
		return 0;
	if (t->op == SYSCALL_TEST_BITS)
		return 2; /* ld, jset */
	return 1 + (t->mask != 0xffffffffu) + t->n; /* ld, [and], jeq per value */
}

/* Instructions of one bypass: its tests, then TRACE. */
static size_t filter_bypass_len(const struct syscall_bypass *b)
{
	size_t n = 1;

	for (size_t i = 0; i < SYSCALL_BYPASS_TESTS; i++)
		n += filter_test_len(&b->test[i]);
	return n;
}

/* Instructions of the per-syscall block (every path ends in a return). */
static size_t filter_block_len(const struct syscall_entry *e, int action)
{
	size_t n = 1;

	switch (action) {
	case SYSCALL_BPF_OPEN_FLAGS:
		return 4;
	case SYSCALL_BPF_ARG_NONZERO:
		return 6;
	case FILTER_OPEN_READ:
		return 5;
	case SYSCALL_BPF_BYPASS:
		for (size_t i = 0; i < FILTER_N_BYPASS; i++)
			if (e->bypass[i].id)
				n += filter_bypass_len(&e->bypass[i]);
		return n; /* ... and ALLOW when none holds */
	default:
		return 1;
	}
}

/* Bypass B as BPF: each test that fails jumps past B's TRACE to what
 * follows (the next bypass, or ALLOW); all holding reach the TRACE.  The
 * tests mean what syscall_test_holds() says, on the low 32 bits. */
static void filter_bypass(struct filter_gen *g, const struct syscall_bypass *b)
{
	const size_t len = filter_bypass_len(b);
	size_t pos = 0;

	for (size_t i = 0; i < SYSCALL_BYPASS_TESTS; i++) {
		const struct syscall_test *t = &b->test[i];

		if (!t->arg)
			continue;
		filter_emit(g, BPF_LD | BPF_W | BPF_ABS, (uint32_t)OFF_ARG_LO(t->arg - 1u), 0, 0);
		pos++;
		if (t->op == SYSCALL_TEST_BITS) {
			filter_emit(g, BPF_JMP | BPF_JSET | BPF_K, t->mask, 0,
				    (uint8_t)(len - pos - 1));
			pos++;
			continue;
		}
		if (t->mask != 0xffffffffu) {
			filter_emit(g, BPF_ALU | BPF_AND | BPF_K, t->mask, 0, 0);
			pos++;
		}
		for (unsigned k = 0; k < t->n; k++) {
			bool last = k + 1 == t->n;

			if (t->op == SYSCALL_TEST_IN)
				/* equal: past the other values, the test holds;
				 * none equal: the bypass does not hold */
				filter_emit(g, BPF_JMP | BPF_JEQ | BPF_K, t->values[k],
					    (uint8_t)(t->n - 1 - k),
					    last ? (uint8_t)(len - pos - 1) : 0);
			else
				filter_emit(g, BPF_JMP | BPF_JEQ | BPF_K, t->values[k],
					    (uint8_t)(len - pos - 1), 0);
			pos++;
		}
	}
	filter_ret(g, g->decide | ARCH_TRACE_NATIVE);
}

/* How entry E's calls reach the supervisor.  Under the notify engine the
 * signal calls still come as ptrace stops: a signal that arrives while a
 * notification waits to be received ends the wait and the call with
 * EINTR, which kill(2) and its kin never return natively (ptrace stops
 * queue signals instead). */
static uint32_t filter_decide(const struct filter_gen *g, const struct syscall_entry *e)
{
	return e->cls == SYSCALL_SIGNAL ? SECCOMP_RET_TRACE : g->decide;
}

static void filter_block(struct filter_gen *g, const struct syscall_entry *e, int action)
{
	const uint32_t trace = filter_decide(g, e) | ARCH_TRACE_NATIVE;
	unsigned arg = e->bpf_arg ? e->bpf_arg - 1u : 0;

	switch (action) {
	case SYSCALL_BPF_TRACE:
		filter_ret(g, trace);
		break;
	case SYSCALL_BPF_ENOSYS:
		filter_ret(g, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA));
		break;
	case SYSCALL_BPF_OPEN_FLAGS:
		filter_emit(g, BPF_LD | BPF_W | BPF_ABS, (uint32_t)OFF_ARG_LO(arg), 0, 0);
		filter_emit(g, BPF_JMP | BPF_JSET | BPF_K, SYSCALL_OPEN_WRITE_FLAGS, 0, 1);
		filter_ret(g, trace);
		filter_ret(g, SECCOMP_RET_ALLOW);
		break;
	case SYSCALL_BPF_BYPASS:
		for (size_t i = 0; i < FILTER_N_BYPASS; i++)
			if (e->bypass[i].id)
				filter_bypass(g, &e->bypass[i]);
		filter_ret(g, SECCOMP_RET_ALLOW);
		break;
	case FILTER_OPEN_READ:
		filter_emit(g, BPF_LD | BPF_W | BPF_ABS, (uint32_t)OFF_ARG_LO(arg), 0, 0);
		filter_emit(g, BPF_JMP | BPF_JSET | BPF_K, SYSCALL_OPEN_WRITE_FLAGS, 1, 0);
		filter_emit(g, BPF_JMP | BPF_JSET | BPF_K, SYSCALL_OPEN_NOREAD_FLAGS, 1, 0);
		filter_ret(g, trace);
		filter_ret(g, SECCOMP_RET_ALLOW);
		break;
	case SYSCALL_BPF_ARG_NONZERO:
		filter_emit(g, BPF_LD | BPF_W | BPF_ABS, (uint32_t)OFF_ARG_LO(arg), 0, 0);
		filter_emit(g, BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 2);
		filter_emit(g, BPF_LD | BPF_W | BPF_ABS, (uint32_t)OFF_ARG_HI(arg), 0, 0);
		filter_emit(g, BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0);
		filter_ret(g, trace);
		filter_ret(g, SECCOMP_RET_ALLOW);
		break;
	default:
		filter_ret(g, SECCOMP_RET_ALLOW);
		break;
	}
}

/* NRS[lo..hi) sorted; the accumulator holds the syscall number. */
static void filter_tree(struct filter_gen *g, const uint16_t *nrs, size_t lo, size_t hi)
{
	if (hi - lo <= 4) {
		for (size_t i = lo; i < hi; i++) {
			const struct syscall_entry *e = syscall_lookup(nrs[i]);
			int action = filter_action(g, e);

			filter_emit(g, BPF_JMP | BPF_JEQ | BPF_K, nrs[i], 0,
				    (uint8_t)filter_block_len(e, action));
			filter_block(g, e, action);
		}
		filter_ret(g, SECCOMP_RET_ALLOW);
		return;
	}
	{
		size_t mid = lo + (hi - lo) / 2, ja;

		/* nr >= nrs[mid]: take the `ja` to the right half; jt/jf
		 * reach only 255 instructions, ja reaches anywhere. */
		filter_emit(g, BPF_JMP | BPF_JGE | BPF_K, nrs[mid], 0, 1);
		ja = g->n;
		filter_emit(g, BPF_JMP | BPF_JA, 0, 0, 0);
		filter_tree(g, nrs, lo, mid);
		if (ja < g->cap)
			g->prog[ja].k = (uint32_t)(g->n - ja - 1);
		filter_tree(g, nrs, mid, hi);
	}
}

long filter_build(const struct filter_spec *f, struct sock_filter *prog, size_t cap)
{
	struct filter_gen g = {.prog = prog, .cap = cap, .read_rules = filter_read_rules(f->policy),
			       .count_spawns = f->count_spawns,
			       .decide = f->notify ? SECCOMP_RET_USER_NOTIF : SECCOMP_RET_TRACE};
	uint16_t nrs[SYSCALL_TABLE_SIZE];
	size_t count = 0;

	for (long nr = 0; nr < SYSCALL_TABLE_SIZE; nr++) {
		const struct syscall_entry *e = syscall_lookup(nr);

		if (e && filter_action(&g, e) != SYSCALL_BPF_ALLOW)
			nrs[count++] = (uint16_t)nr;
	}
	filter_emit(&g, BPF_LD | BPF_W | BPF_ABS, (uint32_t)OFF_ARCH, 0, 0);
	filter_emit(&g, BPF_JMP | BPF_JEQ | BPF_K, arch_native(), 1, 0);
	filter_ret(&g, g.decide | ARCH_TRACE_FOREIGN);
	filter_emit(&g, BPF_LD | BPF_W | BPF_ABS, (uint32_t)OFF_NR, 0, 0);
	filter_emit(&g, BPF_JMP | BPF_JSET | BPF_K, (uint32_t)arch_x32_bit(), 0, 1);
	filter_ret(&g, g.decide | ARCH_TRACE_X32);
	filter_tree(&g, nrs, 0, count);
	if (g.n > cap || g.n > BPF_MAXINSNS)
		return -E2BIG;
	return (long)g.n;
}

int filter_install(const struct filter_spec *f)
{
	struct sock_filter prog[FILTER_MAX_INSNS];
	struct sock_fprog fprog;
	long n = filter_build(f, prog, FILTER_MAX_INSNS), r;

	if (n < 0)
		return (int)n;
	fprog.len = (unsigned short)n;
	fprog.filter = prog;
	/* Idempotent; needed by an unprivileged caller (seccomp(2)). */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	if (f->notify) {
		/* The listener is the result.  Once received, a notification
		 * waits for its answer unless the caller is killed
		 * (WAIT_KILLABLE_RECV, Linux 5.19): a signal then does not end
		 * the call with EINTR, which many calls never return natively.
		 * Older kernels take the filter without it, as the engine
		 * expects (probe_notify_wait_killable()). */
		unsigned long flags = SECCOMP_FILTER_FLAG_NEW_LISTENER;

		if (probe_notify_wait_killable())
			flags |= FILTER_FLAG_WAIT_KILLABLE_RECV;
		r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &fprog);
		return r < 0 ? -errno : (int)r;
	}
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fprog) == 0)
		return 0;
	/* seccomp(2): with flags 0 the prctl form is the same call; some
	 * environments know only it (valgrind 3.19, pre-3.17 kernels). */
	if (errno == ENOSYS &&
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, (unsigned long)&fprog, 0, 0) == 0)
		return 0;
	return -errno;
}

int filter_canary(void)
{
	long fd = syscall(SYS_openat, AT_FDCWD, CALL_CANARY_PATH, O_WRONLY | O_CLOEXEC);

	if (fd >= 0) {
		close((int)fd);
		return -EPERM; /* nobody refused it */
	}
	if (errno == CALL_CANARY_ERRNO)
		return 0;
	return errno ? -errno : -EPERM;
}
