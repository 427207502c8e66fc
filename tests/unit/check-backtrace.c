/* backtrace_take() against real tracees: tests/progs-inspect/bt-helper runs
 * main -> outer_fn -> inner_fn -> write(-1) under PTRACE_TRACEME and a
 * seccomp filter of this file (TRACE for write on fd -1, ALLOW for the
 * rest), and the test unwinds it at that seccomp stop.  Dynamic, static and
 * stripped builds; names from libunwind and from libelf alone; a thread;
 * a SIGSTOP stop; exec (cache forgotten); a tracee that dies; the cost. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tracer/inspect/backtrace.h"

#define HELPER INSPECT_PROGS "/bt-helper"
#define HELPER_STATIC INSPECT_PROGS "/bt-helper-static"
#define HELPER_STRIPPED INSPECT_PROGS "/bt-helper-stripped"
#define HELPER_STATIC_STRIPPED INSPECT_PROGS "/bt-helper-static-stripped"

/* Correctness cases must not depend on the machine's load (make -j on two
 * cores): a budget no backtrace reaches.  test_bounds checks the budget. */
#define BUDGET 2000000

enum stop_kind { STOP_SECCOMP, STOP_SIGSTOP, STOP_EXEC };

static void child_run(const char *prog, const char *mode, const char *arg)
{
	/* write(-1, ...) stops; everything else (the loader, libc, a
	 * diagnostic on stderr) runs. */
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_write, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0xffffffffU, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRACE),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog fp = { .len = sizeof f / sizeof f[0], .filter = f };

	if (ptrace(PTRACE_TRACEME, 0, 0, 0) != 0 || raise(SIGSTOP) != 0 ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fp) != 0)
		_exit(126);
	execl(prog, prog, mode, arg, (char *)NULL);
	_exit(127);
}

static pid_t spawn(const char *prog, const char *mode, const char *arg)
{
	pid_t pid;
	int st;

	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		child_run(prog, mode, arg);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP, "first stop: %#x", st);
	ck_assert_int_eq(ptrace(PTRACE_SETOPTIONS, pid, 0,
				PTRACE_O_TRACESECCOMP | PTRACE_O_EXITKILL | PTRACE_O_TRACECLONE |
				PTRACE_O_TRACEEXEC),
			 0);
	ck_assert_int_eq(ptrace(PTRACE_CONT, pid, 0, 0), 0);
	return pid;
}

/* Resume everything until a thread of the session is in a stop of KIND;
 * returns its tid.  New threads' initial SIGSTOP and other events are
 * resumed; the first SIGSTOP of the helper is a STOP_SIGSTOP. */
static pid_t wait_for(pid_t pid, enum stop_kind kind)
{
	for (;;) {
		int st, sig, ev;
		pid_t tid = waitpid(-1, &st, __WALL);

		ck_assert_msg(tid > 0, "waitpid: %s", strerror(errno));
		ck_assert_msg(!(tid == pid && (WIFEXITED(st) || WIFSIGNALED(st))),
			      "helper ended (status %#x) before the stop", st);
		if (!WIFSTOPPED(st))
			continue;
		sig = WSTOPSIG(st);
		ev = st >> 16;
		if (ev == PTRACE_EVENT_SECCOMP && kind == STOP_SECCOMP)
			return tid;
		if (ev == PTRACE_EVENT_EXEC && kind == STOP_EXEC)
			return tid;
		if (ev == 0 && sig == SIGSTOP && kind == STOP_SIGSTOP && tid == pid)
			return tid;
		/* Event stops and new threads' SIGSTOP: no signal to deliver. */
		if (ev != 0 || sig == SIGSTOP || sig == SIGTRAP)
			sig = 0;
		ptrace(PTRACE_CONT, tid, 0, sig);
	}
}

static void finish(pid_t pid)
{
	int st;

	kill(pid, SIGKILL);
	while (waitpid(-1, &st, __WALL) > 0)
		;
	backtrace_forget(pid);
}

static void dump(const struct bt_frame *f, int n)
{
	for (int i = 0; i < n; i++)
		fprintf(stderr, "  #%d %#llx %s+%#llx (%s)\n", i, (unsigned long long)f[i].pc,
			f[i].sym[0] ? f[i].sym : "?", (unsigned long long)f[i].offset, f[i].object);
}

static int find_sym(const struct bt_frame *f, int n, const char *sym)
{
	for (int i = 0; i < n; i++)
		if (strcmp(f[i].sym, sym) == 0)
			return i;
	return -1;
}

/* inner_fn, outer_fn, CALLER in that order, in OBJECT, offsets inside. */
static void assert_chain(const struct bt_frame *f, int n, const char *caller, const char *prog)
{
	char object[PATH_MAX];
	int in, out, top;

	ck_assert_ptr_nonnull(realpath(prog, object));
	in = find_sym(f, n, "inner_fn");
	out = find_sym(f, n, "outer_fn");
	top = find_sym(f, n, caller);
	if (in < 0 || out != in + 1 || top != out + 1)
		dump(f, n);
	ck_assert_int_ge(in, 0);
	ck_assert_int_eq(out, in + 1);
	ck_assert_int_eq(top, out + 1);
	for (int i = in; i <= top; i++) {
		ck_assert_str_eq(f[i].object, object);
		ck_assert_uint_ne(f[i].pc, 0);
		ck_assert_uint_gt(f[i].offset, 0);
		ck_assert_uint_lt(f[i].offset, 4096);
	}
}

static bool have(const char *prog)
{
	if (access(prog, X_OK) == 0)
		return true;
	fprintf(stderr, "%s missing: case skipped\n", prog);
	return false;
}

static long elapsed_us(const struct timespec *a)
{
	struct timespec b;

	clock_gettime(CLOCK_MONOTONIC, &b);
	return (b.tv_sec - a->tv_sec) * 1000000L + (b.tv_nsec - a->tv_nsec) / 1000;
}

static void chain_case(const char *prog, enum backtrace_names names)
{
	struct bt_frame f[BACKTRACE_DEPTH];
	pid_t pid;
	int n;

	if (!have(prog))
		return;
	backtrace_set_names(names);
	pid = spawn(prog, "write", NULL);
	ck_assert_int_eq(wait_for(pid, STOP_SECCOMP), pid);
	n = backtrace_take(pid, f, BACKTRACE_DEPTH, BUDGET);
	if (n < 4)
		dump(f, n);
	ck_assert_int_ge(n, 4);
	ck_assert_int_le(n, BACKTRACE_DEPTH);
	assert_chain(f, n, "main", prog);
	/* Frame 0 is the syscall itself: in libc (or the static program). */
	ck_assert_uint_ne(f[0].pc, 0);
	ck_assert_str_ne(f[0].object, "");
	finish(pid);
	backtrace_set_names(BACKTRACE_NAMES_DEFAULT);
}

START_TEST(test_dynamic)
{
	chain_case(HELPER, BACKTRACE_NAMES_DEFAULT);
}
END_TEST

START_TEST(test_dynamic_elf)
{
	chain_case(HELPER, BACKTRACE_NAMES_ELF);
}
END_TEST

START_TEST(test_dynamic_unwind)
{
	chain_case(HELPER, BACKTRACE_NAMES_UNWIND);
}
END_TEST

START_TEST(test_static)
{
	chain_case(HELPER_STATIC, BACKTRACE_NAMES_DEFAULT);
}
END_TEST

START_TEST(test_static_elf)
{
	chain_case(HELPER_STATIC, BACKTRACE_NAMES_ELF);
}
END_TEST

START_TEST(test_static_unwind)
{
	chain_case(HELPER_STATIC, BACKTRACE_NAMES_UNWIND);
}
END_TEST

/* No .symtab: the helper's own frames have no names, but pcs and objects
 * are there, libc's frames keep their .dynsym names, nothing crashes. */
static void stripped_case(const char *prog, enum backtrace_names names)
{
	struct bt_frame f[BACKTRACE_DEPTH];
	char object[PATH_MAX];
	pid_t pid;
	int n, mine = 0;

	if (!have(prog))
		return;
	ck_assert_ptr_nonnull(realpath(prog, object));
	backtrace_set_names(names);
	pid = spawn(prog, "write", NULL);
	ck_assert_int_eq(wait_for(pid, STOP_SECCOMP), pid);
	n = backtrace_take(pid, f, BACKTRACE_DEPTH, BUDGET);
	ck_assert_int_ge(n, 1);
	for (int i = 0; i < n; i++) {
		ck_assert_uint_ne(f[i].pc, 0);
		if (strcmp(f[i].object, object) == 0)
			mine++;
		ck_assert_int_lt(find_sym(f, n, "inner_fn"), 0);
	}
	ck_assert_int_ge(mine, 1);
	finish(pid);
	backtrace_set_names(BACKTRACE_NAMES_DEFAULT);
}

START_TEST(test_stripped)
{
	stripped_case(HELPER_STRIPPED, BACKTRACE_NAMES_DEFAULT);
	stripped_case(HELPER_STRIPPED, BACKTRACE_NAMES_UNWIND);
}
END_TEST

START_TEST(test_static_stripped)
{
	stripped_case(HELPER_STATIC_STRIPPED, BACKTRACE_NAMES_DEFAULT);
	stripped_case(HELPER_STATIC_STRIPPED, BACKTRACE_NAMES_UNWIND);
}
END_TEST

/* A signal-delivery stop inside raise(): the chain is the same. */
START_TEST(test_sigstop)
{
	struct bt_frame f[BACKTRACE_DEPTH];
	pid_t pid;
	int n;

	pid = spawn(HELPER, "stop", NULL);
	ck_assert_int_eq(wait_for(pid, STOP_SIGSTOP), pid);
	n = backtrace_take(pid, f, BACKTRACE_DEPTH, BUDGET);
	ck_assert_int_ge(n, 4);
	assert_chain(f, n, "main", HELPER);
	finish(pid);
}
END_TEST

/* The stop is in a second thread: unwound through its own tid, in the
 * address space of the whole process. */
START_TEST(test_thread)
{
	const char *progs[] = { HELPER, HELPER_STATIC };

	for (size_t i = 0; i < 2; i++) {
		struct bt_frame f[BACKTRACE_DEPTH];
		pid_t pid, tid;
		int n;

		if (!have(progs[i]))
			continue;
		pid = spawn(progs[i], "thread", NULL);
		tid = wait_for(pid, STOP_SECCOMP);
		ck_assert_int_ne(tid, pid);
		n = backtrace_take(tid, f, BACKTRACE_DEPTH, BUDGET);
		ck_assert_int_ge(n, 4);
		assert_chain(f, n, "thread_fn", progs[i]);
		finish(pid);
	}
}
END_TEST

/* Depth and time bounds. */
START_TEST(test_bounds)
{
	struct bt_frame f[BACKTRACE_DEPTH];
	pid_t pid;
	int n;

	pid = spawn(HELPER, "write", NULL);
	ck_assert_int_eq(wait_for(pid, STOP_SECCOMP), pid);
	ck_assert_int_eq(backtrace_take(pid, f, 0, 0), 0);
	ck_assert_int_eq(backtrace_take(pid, f, 2, BUDGET), 2);
	/* A budget spent before the first step still gives the stop's own
	 * frame, and only that one. */
	n = backtrace_take(pid, f, BACKTRACE_DEPTH, 1);
	ck_assert_int_eq(n, 1);
	ck_assert_uint_ne(f[0].pc, 0);
	/* The default budget. */
	n = backtrace_take(pid, f, BACKTRACE_DEPTH, 0);
	ck_assert_int_ge(n, 1);
	ck_assert_int_le(n, BACKTRACE_DEPTH);
	finish(pid);
}
END_TEST

/* At exec the address space is new: forget, then unwind the new program. */
START_TEST(test_exec)
{
	struct bt_frame f[BACKTRACE_DEPTH];
	const char *next = access(HELPER_STATIC, X_OK) == 0 ? HELPER_STATIC : HELPER_STRIPPED;
	char object[PATH_MAX];
	pid_t pid;
	int n;

	pid = spawn(HELPER, "exec", next);
	ck_assert_int_eq(wait_for(pid, STOP_SECCOMP), pid);
	n = backtrace_take(pid, f, BACKTRACE_DEPTH, BUDGET);
	assert_chain(f, n, "main", HELPER);
	ck_assert_int_eq(ptrace(PTRACE_CONT, pid, 0, 0), 0);
	ck_assert_int_eq(wait_for(pid, STOP_EXEC), pid);
	backtrace_forget(pid);
	ck_assert_int_eq(ptrace(PTRACE_CONT, pid, 0, 0), 0);
	ck_assert_int_eq(wait_for(pid, STOP_SECCOMP), pid);
	n = backtrace_take(pid, f, BACKTRACE_DEPTH, BUDGET);
	ck_assert_int_ge(n, 1);
	ck_assert_ptr_nonnull(realpath(next, object));
	if (strcmp(next, HELPER_STATIC) == 0)
		assert_chain(f, n, "main", next);
	else
		ck_assert_str_eq(f[n - 1].object, object);
	finish(pid);
}
END_TEST

/* Gone processes: reaped (no /proc entry), killed but not reaped (a
 * zombie), killed right before the unwind (races the kernel tearing it
 * down), not traced by us at all. */
START_TEST(test_gone)
{
	struct bt_frame f[BACKTRACE_DEPTH];
	siginfo_t info;
	pid_t pid;
	int n;

	pid = spawn(HELPER, "write", NULL);
	ck_assert_int_eq(wait_for(pid, STOP_SECCOMP), pid);
	kill(pid, SIGKILL);
	/* A zombie: SIGKILLed, waited for with WNOWAIT, not reaped. */
	ck_assert_int_eq(waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT | __WALL), 0);
	ck_assert_int_eq(info.si_pid, pid);
	n = backtrace_take(pid, f, BACKTRACE_DEPTH, BUDGET);
	ck_assert_int_lt(n, 0);
	finish(pid);
	n = backtrace_take(pid, f, BACKTRACE_DEPTH, BUDGET);
	ck_assert_int_eq(n, -ESRCH);

	for (int round = 0; round < 20; round++) {
		pid = spawn(HELPER, "write", NULL);
		ck_assert_int_eq(wait_for(pid, STOP_SECCOMP), pid);
		backtrace_take(pid, f, BACKTRACE_DEPTH, BUDGET); /* warm cache */
		kill(pid, SIGKILL);
		n = backtrace_take(pid, f, BACKTRACE_DEPTH, BUDGET);
		ck_assert_int_le(n, BACKTRACE_DEPTH);
		finish(pid);
	}
	ck_assert_int_lt(backtrace_take(getpid(), f, BACKTRACE_DEPTH, BUDGET), 0);
}
END_TEST

/* The cost: first backtrace of a process (cold: maps, unwind tables,
 * symbols) and the following ones (cached). */
START_TEST(test_cost)
{
	const char *progs[] = { HELPER, HELPER_STATIC };
	const int rounds = 50;

	static const char *const names[] = { "default", "libelf", "libunwind", "none" };

	for (size_t i = 0; i < 2; i++) {
		for (int m = 0; m < 4; m++) {
			struct bt_frame f[BACKTRACE_DEPTH];
			struct timespec t0;
			long cold, warm;
			pid_t pid;
			int n = 0;

			if (!have(progs[i]))
				continue;
			backtrace_forget_all();
			backtrace_set_names((enum backtrace_names)m);
			pid = spawn(progs[i], "write", NULL);
			ck_assert_int_eq(wait_for(pid, STOP_SECCOMP), pid);
			clock_gettime(CLOCK_MONOTONIC, &t0);
			n = backtrace_take(pid, f, BACKTRACE_DEPTH, BUDGET);
			cold = elapsed_us(&t0);
			ck_assert_int_ge(n, 4);
			clock_gettime(CLOCK_MONOTONIC, &t0);
			for (int r = 0; r < rounds; r++)
				ck_assert_int_eq(backtrace_take(pid, f, BACKTRACE_DEPTH, BUDGET), n);
			warm = elapsed_us(&t0) / rounds;
			printf("backtrace cost %s, names %s: %d frames, first %ld us, then %ld us each\n",
			       strrchr(progs[i], '/') + 1, names[m], n, cold, warm);
			finish(pid);
			backtrace_set_names(BACKTRACE_NAMES_DEFAULT);
		}
	}
}
END_TEST

static Suite *backtrace_suite(void)
{
	Suite *s = suite_create("backtrace");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_dynamic);
	tcase_add_test(tc, test_dynamic_elf);
	tcase_add_test(tc, test_dynamic_unwind);
	tcase_add_test(tc, test_static);
	tcase_add_test(tc, test_static_elf);
	tcase_add_test(tc, test_static_unwind);
	tcase_add_test(tc, test_stripped);
	tcase_add_test(tc, test_static_stripped);
	tcase_add_test(tc, test_sigstop);
	tcase_add_test(tc, test_thread);
	tcase_add_test(tc, test_bounds);
	tcase_add_test(tc, test_exec);
	tcase_add_test(tc, test_gone);
	tcase_add_test(tc, test_cost);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(backtrace_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	backtrace_forget_all();
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
