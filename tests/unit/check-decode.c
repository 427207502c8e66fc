/* call_decode() / call_deny() / filter_install() / filter_canary() end to
 * end: a child installs the filter, .count_spawns = is traced by the test, and makes real
 * calls; the test (the tracer }) checks the decoded struct call and denies
 * some; the child checks the errno it saw and reports through its exit
 * status (0: as expected, N: check N failed). */
#include "config.h"

#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tracer/syscall/arch.h"
#include "tracer/syscall/call.h"
#include "tracer/syscall/mem.h"
#include "tracer/syscall/path.h"
#include "tracer/syscall/table.h"

static char T[PATH_MAX]; /* temp dir under the build dir */
static struct rules_policy pol_plain;
static struct rules_policy pol_read = {
	.span = {[RULES_KIND_READ] = {[RULES_ACTION_DENY] = {.first = 0, .count = 1}}},
};

static struct call C; /* one per test process; big */
static int n_stops;

typedef int (*child_fn)(void);
/* Called at each seccomp stop with the decoded call; returns the errno to
 * deny with, or 0 to let the call run. */
typedef int (*stop_fn)(struct call *c, int i);

static const char *tp(const char *name)
{
	static char buf[4][PATH_MAX + 64];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", T, name);
	return buf[i];
}

static void setup(void)
{
	char tmpl[] = "tmp-check-decode-XXXXXX";

	ck_assert_ptr_nonnull(mkdtemp(tmpl));
	ck_assert_ptr_nonnull(realpath(tmpl, T));
	n_stops = 0;
	arch_force_fallback(false);
	mem_force_procmem(false);
}

static void teardown(void)
{
	char cmd[PATH_MAX + 32];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", T);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", T);
}

/* Fork a traced, filtered child running FN; be its tracer; return its exit
 * status (128+N for signal N). */
static int run_traced(const struct rules_policy *pol, child_fn fn, stop_fn on_stop)
{
	int st;
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
			_exit(90);
		raise(SIGSTOP);
		if (filter_install(&(struct filter_spec){ .policy = pol, .count_spawns = true }) < 0)
			_exit(91);
		_exit(fn());
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP);
	ck_assert_int_eq(ptrace(PTRACE_SETOPTIONS, pid, NULL,
				(void *)(long)(PTRACE_O_TRACESECCOMP | PTRACE_O_EXITKILL)), 0);
	ck_assert_int_eq(ptrace(PTRACE_CONT, pid, NULL, NULL), 0);
	for (;;) {
		int sig = 0;

		ck_assert_int_eq(waitpid(pid, &st, __WALL), pid);
		if (WIFEXITED(st))
			return WEXITSTATUS(st);
		if (WIFSIGNALED(st))
			return 128 + WTERMSIG(st);
		if (st >> 8 == (SIGTRAP | (PTRACE_EVENT_SECCOMP << 8))) {
			int rc = call_decode(pid, NULL, &C);
			int err;

			ck_assert_int_eq(rc, C.error);
			err = on_stop(&C, n_stops++);
			if (err)
				ck_assert_int_eq(call_deny(pid, err), 0);
			else if (C.cut)
				/* What the ptrace engine does with a cut call. */
				ck_assert_int_eq(call_set_arg(pid, C.cut_arg, C.cut_vlen), 0);
		} else if (WIFSTOPPED(st)) {
			sig = WSTOPSIG(st);
		}
		ptrace(PTRACE_CONT, pid, NULL, (void *)(long)sig);
	}
}

/* ---- openat ---- */

static int child_openat_write(void)
{
	int fd = openat(AT_FDCWD, tp("out.txt"), O_WRONLY | O_CREAT, 0600);

	if (fd != -1 || errno != EACCES)
		return 1;
	/* read-only: no stop without read rules, and it works */
	fd = open("/dev/null", O_RDONLY);
	if (fd < 0)
		return 2;
	close(fd);
	return 0;
}

static int stop_openat_write(struct call *c, int i)
{
	ck_assert_int_eq(i, 0);
	ck_assert_str_eq(c->name, "openat");
	ck_assert_int_eq(c->audit_arch, AUDIT_ARCH_X86_64);
	ck_assert(!c->bypass && !c->canary && !c->spawns);
	ck_assert_int_eq(c->n_events, 1);
	ck_assert_int_eq(c->events[0].kind, RULES_KIND_WRITE);
	ck_assert_str_eq(c->events[0].path, tp("out.txt"));
	ck_assert(c->flags & O_CREAT);
	ck_assert_int_eq(c->dirfd, AT_FDCWD);
	ck_assert_int_eq(c->deny_errno, EACCES);
	return EACCES;
}

START_TEST(openat_write)
{
	ck_assert_int_eq(run_traced(&pol_plain, child_openat_write, stop_openat_write), 0);
	ck_assert_int_eq(n_stops, 1);
	ck_assert_int_eq(access(tp("out.txt"), F_OK), -1);
}
END_TEST

START_TEST(openat_write_regs_fallback)
{
	arch_force_fallback(true);
	mem_force_procmem(true);
	ck_assert_int_eq(run_traced(&pol_plain, child_openat_write, stop_openat_write), 0);
	ck_assert_int_eq(n_stops, 1);
}
END_TEST

static int child_open_read(void)
{
	int fd = open("/dev/null", O_RDONLY);

	if (fd != -1 || errno != EACCES)
		return 1;
	/* No stop: a read-only O_PATH open is let through by the filter (an
	 * O_PATH descriptor reads nothing; the decoder made no event of it). */
	fd = open("/dev/null", O_RDONLY | O_PATH);
	if (fd < 0)
		return 2;
	return 0;
}

static int stop_open_read(struct call *c, int i)
{
	ck_assert_str_eq(c->name, "openat");
	if (i == 0) {
		ck_assert_int_eq(c->n_events, 1);
		ck_assert_int_eq(c->events[0].kind, RULES_KIND_READ);
		ck_assert_str_eq(c->events[0].path, "/dev/null");
		return EACCES;
	}
	ck_assert_int_eq(c->n_events, 0);
	return 0;
}

START_TEST(open_read_rules)
{
	ck_assert_int_eq(run_traced(&pol_read, child_open_read, stop_open_read), 0);
	ck_assert_int_eq(n_stops, 1);
}
END_TEST

/* An open for writing that reads the file too is judged as a write and
 * a read of it; one that empties or only makes its file is a write. */
static const int open_rdwr_flags[] = {
	O_RDWR, O_RDWR | O_APPEND | O_CREAT, O_RDONLY | O_CREAT, /* write and read */
	O_RDWR | O_TRUNC, O_RDWR | O_CREAT | O_EXCL, O_WRONLY | O_APPEND, /* write only */
};
#define OPEN_RDWR_N (sizeof(open_rdwr_flags) / sizeof(open_rdwr_flags[0]))

static int child_open_rdwr(void)
{
	for (size_t i = 0; i < OPEN_RDWR_N; i++) {
		int fd;

		unlink(tp("rw"));
		if (!(open_rdwr_flags[i] & O_EXCL) && (fd = creat(tp("rw"), 0600)) >= 0)
			close(fd);
		fd = open(tp("rw"), open_rdwr_flags[i], 0600);
		if (fd < 0)
			return 10 + (int)i;
		close(fd);
	}
	return 0;
}

static int n_rdwr_opens;

static int stop_open_rdwr(struct call *c, int i)
{
	size_t k = 0;

	(void)i;
	if (strcmp(c->name, "openat") != 0)
		return 0; /* the unlink and the creat of each round */
	while (k < OPEN_RDWR_N && open_rdwr_flags[k] != c->flags)
		k++;
	ck_assert_uint_lt(k, OPEN_RDWR_N);
	n_rdwr_opens++;
	ck_assert_int_eq(c->events[0].kind, RULES_KIND_WRITE);
	ck_assert_str_eq(c->events[0].path, tp("rw"));
	if (k < 3) {
		ck_assert_int_eq(c->n_events, 2);
		ck_assert_int_eq(c->events[1].kind, RULES_KIND_READ);
		ck_assert_str_eq(c->events[1].path, tp("rw"));
	} else {
		ck_assert_int_eq(c->n_events, 1);
	}
	return 0;
}

START_TEST(open_rdwr_reads)
{
	ck_assert_int_eq(run_traced(&pol_plain, child_open_rdwr, stop_open_rdwr), 0);
	ck_assert_int_eq(n_rdwr_opens, (int)OPEN_RDWR_N);
}
END_TEST

/* ---- rename, symlink, mkdirat ---- */

static int child_rename(void)
{
	int fd = creat(tp("a"), 0600);

	if (fd < 0)
		return 1;
	close(fd);
	if (rename(tp("a"), tp("b")) != 0)
		return 2;
	if (access(tp("b"), F_OK) != 0)
		return 3;
	if ((fd = creat(tp("c"), 0600)) < 0)
		return 4;
	close(fd);
	if (renameat2(AT_FDCWD, tp("b"), AT_FDCWD, tp("c"), RENAME_EXCHANGE) != 0)
		return 5;
	return 0;
}

/* Both names written, then each file that gets a new name read. */
static int stop_rename(struct call *c, int i)
{
	if (i == 0 || i == 2) {
		ck_assert_int_eq(c->n_events, 1);
		ck_assert_int_eq(c->events[0].kind, RULES_KIND_WRITE);
		return 0;
	}
	ck_assert_str_eq(c->name, i == 1 ? "rename" : "renameat2");
	ck_assert_int_eq(c->n_events, i == 1 ? 3 : 4);
	ck_assert_int_eq(c->events[0].kind, RULES_KIND_WRITE);
	ck_assert_int_eq(c->events[1].kind, RULES_KIND_WRITE);
	ck_assert_int_eq(c->events[2].kind, RULES_KIND_READ);
	ck_assert_str_eq(c->events[0].path, tp(i == 1 ? "a" : "b"));
	ck_assert_str_eq(c->events[1].path, tp(i == 1 ? "b" : "c"));
	ck_assert_str_eq(c->events[2].path, tp(i == 1 ? "a" : "b"));
	if (i == 3) {
		ck_assert_int_eq(c->events[3].kind, RULES_KIND_READ);
		ck_assert_str_eq(c->events[3].path, tp("c"));
	}
	return 0;
}

START_TEST(rename_two_paths)
{
	ck_assert_int_eq(run_traced(&pol_plain, child_rename, stop_rename), 0);
	ck_assert_int_eq(n_stops, 4);
}
END_TEST

static int child_symlink(void)
{
	if (mkdir(tp("dir"), 0700) != 0)
		return 1;
	if (symlink("../target", tp("dir/lnk")) != -1 || errno != EACCES)
		return 2;
	if (symlink("/etc/./passwd", tp("dir/abs")) != -1 || errno != EACCES)
		return 3;
	return 0;
}

static int stop_symlink(struct call *c, int i)
{
	if (i == 0) {
		ck_assert_str_eq(c->name, "mkdir");
		ck_assert_str_eq(c->events[0].path, tp("dir"));
		return 0;
	}
	ck_assert_str_eq(c->name, "symlink");
	ck_assert_int_eq(c->n_events, 2);
	ck_assert_str_eq(c->events[0].path, tp(i == 1 ? "dir/lnk" : "dir/abs"));
	ck_assert_str_eq(c->events[1].path, i == 1 ? tp("target") : "/etc/passwd");
	return EACCES;
}

START_TEST(symlink_link_and_target)
{
	ck_assert_int_eq(run_traced(&pol_plain, child_symlink, stop_symlink), 0);
	ck_assert_int_eq(n_stops, 3);
}
END_TEST

static int child_raw_mkdirat(void)
{
	if (syscall(SYS_mkdirat, AT_FDCWD, tp("rawdir"), 0700) != 0)
		return 1;
	return access(tp("rawdir"), F_OK) == 0 ? 0 : 2;
}

static int stop_allow_mkdirat(struct call *c, int i)
{
	ck_assert_str_eq(c->name, "mkdirat");
	ck_assert_int_eq(c->n_events, 1);
	ck_assert_str_eq(c->events[0].path, tp("rawdir"));
	return 0;
}

START_TEST(raw_syscall)
{
	ck_assert_int_eq(run_traced(&pol_plain, child_raw_mkdirat, stop_allow_mkdirat), 0);
	ck_assert_int_eq(n_stops, 1);
}
END_TEST

/* ---- network ---- */

static int child_connect(void)
{
	struct sockaddr_in in = {.sin_family = AF_INET, .sin_port = htons(9)};
	struct sockaddr_un un = {.sun_family = AF_UNIX};
	struct sockaddr sa = {.sa_family = AF_UNSPEC};
	int s = socket(AF_INET, SOCK_STREAM, 0);
	int u = socket(AF_UNIX, SOCK_STREAM, 0);
	int d = socket(AF_INET, SOCK_DGRAM, 0);

	if (s < 0 || u < 0 || d < 0)
		return 1;
	in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(s, (struct sockaddr *)&in, sizeof(in)) != -1 || errno != EACCES)
		return 2;
	memcpy(un.sun_path, "\0ab\x01", 4);
	if (connect(u, (struct sockaddr *)&un, offsetof(struct sockaddr_un, sun_path) + 4) != -1 ||
	    errno != EACCES)
		return 3;
	if (connect(d, &sa, sizeof(sa)) != 0) /* stops, no event, allowed */
		return 4;
	/* sendto without an address: no stop at all */
	if (sendto(d, "x", 1, MSG_DONTWAIT, NULL, 0) != -1 && errno != EDESTADDRREQ)
		return 5;
	if (sendto(d, "x", 1, 0, (struct sockaddr *)&in, sizeof(in)) != -1 || errno != EACCES)
		return 6;
	return 0;
}

static int stop_connect(struct call *c, int i)
{
	static const uint8_t lo[4] = {127, 0, 0, 1};

	switch (i) {
	case 0:
		ck_assert_str_eq(c->name, "connect");
		ck_assert_int_eq(c->n_events, 1);
		ck_assert_int_eq(c->events[0].kind, RULES_KIND_NET);
		ck_assert_int_eq(c->events[0].family, AF_INET);
		ck_assert_int_eq(c->events[0].port, 9);
		ck_assert_mem_eq(c->events[0].addr, lo, 4);
		return EACCES;
	case 1:
		ck_assert_int_eq(c->n_events, 1);
		ck_assert_int_eq(c->events[0].family, AF_UNIX);
		ck_assert_str_eq(c->events[0].unix_path, "@ab\\x01");
		return EACCES;
	case 2:
		ck_assert_str_eq(c->name, "connect");
		ck_assert_int_eq(c->n_events, 0);
		return 0;
	default:
		ck_assert_str_eq(c->name, "sendto");
		ck_assert_int_eq(c->n_events, 1);
		ck_assert_int_eq(c->events[0].port, 9);
		return EACCES;
	}
}

START_TEST(connect_inet_unix_unspec)
{
	ck_assert_int_eq(run_traced(&pol_plain, child_connect, stop_connect), 0);
	ck_assert_int_eq(n_stops, 4);
}
END_TEST

static int child_sendmmsg(void)
{
	struct sockaddr_in to[3];
	struct mmsghdr m[4];
	struct iovec iov = {.iov_base = (void *)"x", .iov_len = 1};
	int d = socket(AF_INET, SOCK_DGRAM, 0);
	int n;

	memset(m, 0, sizeof(m));
	for (int i = 0; i < 3; i++) {
		memset(&to[i], 0, sizeof(to[i]));
		to[i].sin_family = AF_INET;
		to[i].sin_port = htons((uint16_t)(40000 + i));
		to[i].sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	}
	/* destinations 0, 0, 1, 2: the third distinct one is cut */
	for (int i = 0; i < 4; i++) {
		m[i].msg_hdr.msg_name = &to[i == 0 ? 0 : i - 1];
		m[i].msg_hdr.msg_namelen = sizeof(to[0]);
		m[i].msg_hdr.msg_iov = &iov;
		m[i].msg_hdr.msg_iovlen = 1;
	}
	n = sendmmsg(d, m, 4, 0);
	return n == 3 ? 0 : 1;
}

static int stop_sendmmsg(struct call *c, int i)
{
	ck_assert_str_eq(c->name, "sendmmsg");
	ck_assert_int_eq(c->n_events, 2);
	ck_assert_int_eq(c->events[0].port, 40000);
	ck_assert_int_eq(c->events[1].port, 40001);
	ck_assert_int_eq(c->args[2], 3);
	return 0;
}

START_TEST(sendmmsg_each_name)
{
	ck_assert_int_eq(run_traced(&pol_plain, child_sendmmsg, stop_sendmmsg), 0);
}
END_TEST

/* ---- exec ---- */

static int child_execve(void)
{
	char *argv[] = {"not-true", "a1", "a\xff", NULL};
	char *envp[] = {NULL};

	execve("/bin/true", argv, envp);
	return errno == EACCES ? 0 : 1;
}

static int stop_execve(struct call *c, int i)
{
	char want[PATH_MAX];

	ck_assert_str_eq(c->name, "execve");
	ck_assert_int_eq(c->n_events, 1);
	ck_assert_int_eq(c->events[0].kind, RULES_KIND_EXEC);
	ck_assert_ptr_nonnull(realpath("/bin/true", want));
	ck_assert_str_eq(c->events[0].exe, want);
	ck_assert_int_eq(c->events[0].argc, 3);
	ck_assert_str_eq(c->events[0].argv[0], "not-true");
	ck_assert_str_eq(c->events[0].argv[2], "a\xff");
	ck_assert_ptr_null(c->events[0].argv[3]);
	ck_assert(!c->argv_truncated);
	return EACCES;
}

START_TEST(execve_exe_and_argv)
{
	ck_assert_int_eq(run_traced(&pol_plain, child_execve, stop_execve), 0);
}
END_TEST

static int child_execveat_memfd(void)
{
	char *argv[] = {"x", NULL};
	char *envp[] = {NULL};
	int fd = (int)syscall(SYS_memfd_create, "x", 0);

	if (fd < 0)
		return 1;
	syscall(SYS_execveat, fd, "", argv, envp, AT_EMPTY_PATH);
	return errno == EACCES ? 0 : 2;
}

static int stop_execveat_memfd(struct call *c, int i)
{
	ck_assert_str_eq(c->name, "execveat");
	ck_assert_int_eq(c->n_events, 1);
	ck_assert_str_eq(c->events[0].exe, "/memfd:x (deleted)");
	return EACCES;
}

START_TEST(execveat_empty_path)
{
	ck_assert_int_eq(run_traced(&pol_plain, child_execveat_memfd, stop_execveat_memfd), 0);
}
END_TEST

static int child_many_argv(void)
{
	static char *argv[CALL_MAX_ARGV + 10];
	char *envp[] = {NULL};

	for (int i = 0; i < CALL_MAX_ARGV + 9; i++)
		argv[i] = "arg";
	argv[CALL_MAX_ARGV + 9] = NULL;
	execve("/bin/true", argv, envp);
	return errno == EACCES ? 0 : 1;
}

/* More arguments than are judged: refused whole (E2BIG), not judged on
 * the first ones while the rest runs. */
static int stop_many_argv(struct call *c, int i)
{
	(void)i;
	ck_assert(c->argv_truncated);
	ck_assert(c->bypass);
	ck_assert_int_eq(c->bypass_errno, E2BIG);
	ck_assert_str_eq(c->bypass_id, "syscall.argv-too-long");
	return EACCES;
}

START_TEST(execve_argv_cap)
{
	ck_assert_int_eq(run_traced(&pol_plain, child_many_argv, stop_many_argv), 0);
}
END_TEST

/* ---- other ABIs ---- */

static long int80(long nr)
{
	long ret;

	__asm__ volatile("int $0x80"
			 : "=a"(ret)
			 : "a"(nr), "b"(0), "c"(0), "d"(0)
			 : "memory", "r8", "r9", "r10", "r11");
	return ret;
}

static int child_i386(void)
{
	return int80(20 /* i386 getpid */) == -ENOSYS ? 0 : 1;
}

static int stop_abi(struct call *c, int i)
{
	ck_assert(c->bypass);
	ck_assert_str_eq(c->bypass_id, "syscall.abi");
	ck_assert_ptr_nonnull(c->bypass_why);
	ck_assert_int_eq(c->bypass_errno, ENOSYS);
	ck_assert_int_eq(c->n_events, 0);
	return ENOSYS;
}

static int stop_i386(struct call *c, int i)
{
	ck_assert_int_eq(c->audit_arch, AUDIT_ARCH_I386);
	ck_assert_int_eq(c->nr, 20);
	ck_assert_str_eq(c->name, "syscall_20");
	return stop_abi(c, i);
}

/* Some kernels run with ia32 emulation off (ia32_emulation=0, or
 * hypervisor-specific kernels): `int $0x80` then faults before any
 * syscall entry, and there is nothing to supervise. */
static bool int80_available(void)
{
	int st;
	pid_t pid = fork();

	if (pid == 0) {
		signal(SIGSEGV, SIG_DFL); /* quietly, also under ASan */
		int80(20);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return false;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

START_TEST(i386_int80)
{
	if (!int80_available()) {
		fprintf(stderr, "check-decode: int $0x80 faults on this kernel, i386 case skipped\n");
		return;
	}
	ck_assert_int_eq(run_traced(&pol_plain, child_i386, stop_i386), 0);
	ck_assert_int_eq(n_stops, 1);
}
END_TEST

START_TEST(i386_int80_regs_fallback)
{
	if (!int80_available())
		return;
	arch_force_fallback(true);
	ck_assert_int_eq(run_traced(&pol_plain, child_i386, stop_i386), 0);
	ck_assert_int_eq(n_stops, 1);
}
END_TEST

static int child_x32(void)
{
	return syscall(0x40000000L | 39) == -1 && errno == ENOSYS ? 0 : 1;
}

static int stop_x32(struct call *c, int i)
{
	ck_assert(c->x32);
	ck_assert_int_eq(c->audit_arch, AUDIT_ARCH_X86_64);
	return stop_abi(c, i);
}

START_TEST(x32_call)
{
	ck_assert_int_eq(run_traced(&pol_plain, child_x32, stop_x32), 0);
	ck_assert_int_eq(n_stops, 1);
}
END_TEST

/* ---- bypass calls, spawns ---- */

static int child_io_uring(void)
{
	char params[120] = {0};

	if (syscall(SYS_io_uring_setup, 1, params) != -1 || errno != EPERM)
		return 1;
	/* unshare without namespaces: no stop; with one: denied */
	if (unshare(CLONE_FILES) != 0)
		return 2;
	if (unshare(CLONE_NEWUSER) != -1 || errno != EPERM)
		return 3;
	return 0;
}

static int stop_io_uring(struct call *c, int i)
{
	ck_assert(c->bypass);
	ck_assert_int_eq(c->bypass_errno, EPERM);
	ck_assert_str_eq(c->bypass_id, i == 0 ? "syscall.io_uring" : "syscall.namespace");
	return c->bypass_errno;
}

START_TEST(io_uring_and_unshare)
{
	ck_assert_int_eq(run_traced(&pol_plain, child_io_uring, stop_io_uring), 0);
	ck_assert_int_eq(n_stops, 2);
}
END_TEST

static int child_clone_untraced(void)
{
	long r = syscall(SYS_clone, CLONE_UNTRACED | SIGCHLD, 0, 0, 0, 0);

	if (r == 0)
		_exit(0);
	if (r != -1 || errno != EPERM)
		return 1;
	/* clone3 answers ENOSYS in BPF, without a stop */
	if (syscall(SYS_clone3, NULL, 0) != -1 || errno != ENOSYS)
		return 2;
	r = fork();
	if (r == 0)
		_exit(0);
	return r == -1 && errno == EAGAIN ? 0 : 3;
}

static int stop_clone_untraced(struct call *c, int i)
{
	ck_assert_str_eq(c->name, "clone");
	if (i == 0) {
		ck_assert(c->bypass);
		ck_assert_str_eq(c->bypass_id, "syscall.clone_untraced");
		ck_assert(c->flags & CLONE_UNTRACED);
		return c->bypass_errno;
	}
	/* glibc's fork() is clone(SIGCHLD|CLONE_CHILD_*) */
	ck_assert(!c->bypass);
	ck_assert(c->spawns && !c->spawns_thread);
	ck_assert_int_eq(c->deny_errno, EAGAIN);
	return EAGAIN; /* as --max-procs would */
}

START_TEST(clone_untraced)
{
	ck_assert_int_eq(run_traced(&pol_plain, child_clone_untraced, stop_clone_untraced), 0);
	ck_assert_int_eq(n_stops, 2);
}
END_TEST

/* ---- canary ---- */

static int child_canary(void)
{
	return filter_canary() == 0 ? 0 : 1;
}

static int stop_canary(struct call *c, int i)
{
	ck_assert(c->canary);
	ck_assert_int_eq(c->n_events, 0);
	return CALL_CANARY_ERRNO;
}

START_TEST(canary_refused)
{
	ck_assert_int_eq(run_traced(&pol_plain, child_canary, stop_canary), 0);
	ck_assert_int_eq(n_stops, 1);
}
END_TEST

static int stop_allow(struct call *c, int i)
{
	return 0;
}

START_TEST(canary_allowed_fails)
{
	/* a supervisor that lets it through: the canary reports failure */
	ck_assert_int_eq(run_traced(&pol_plain, child_canary, stop_allow), 1);
}
END_TEST

START_TEST(no_tracer_fails_closed)
{
	int st;
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int fd;

		if (filter_install(&(struct filter_spec){ .policy = &pol_plain,
							   .count_spawns = true }) < 0)
			_exit(1);
		if (filter_canary() != -ENOSYS)
			_exit(2);
		fd = open(tp("untraced"), O_WRONLY | O_CREAT, 0600);
		if (fd != -1 || errno != ENOSYS)
			_exit(3);
		fd = open("/dev/null", O_RDONLY);
		if (fd < 0)
			_exit(4);
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), 0);
}
END_TEST

/* Without a --max-procs ceiling a fork needs no stop: with no tracer a
 * TRACE answer is ENOSYS, so what works here never went to the filter's
 * supervisor, and a clone with a bypass flag still does. */
static int child_spawns(bool count)
{
	long r;
	int st;

	if (filter_install(&(struct filter_spec){ .policy = &pol_plain,
						   .count_spawns = count }) < 0)
		return 1;
	r = fork();
	if (r == 0)
		_exit(0);
	if (count)
		return r == -1 && errno == ENOSYS ? 0 : 2;
	if (r < 0 || waitpid((pid_t)r, &st, 0) != r)
		return 3;
	r = syscall(SYS_clone, CLONE_UNTRACED | SIGCHLD, 0, 0, 0, 0);
	if (r == 0)
		_exit(0);
	if (r != -1 || errno != ENOSYS)
		return 4;
	r = syscall(SYS_clone, CLONE_NEWUTS | SIGCHLD, 0, 0, 0, 0);
	if (r == 0)
		_exit(0);
	return r == -1 && errno == ENOSYS ? 0 : 5;
}

START_TEST(spawn_stops_only_when_counted)
{
	for (int count = 0; count < 2; count++) {
		int st;
		pid_t pid = fork();

		ck_assert_int_ge(pid, 0);
		if (pid == 0)
			_exit(child_spawns(count));
		ck_assert_int_eq(waitpid(pid, &st, 0), pid);
		ck_assert(WIFEXITED(st));
		ck_assert_int_eq(WEXITSTATUS(st), 0);
	}
}
END_TEST

/* ---- the generated program ---- */

START_TEST(filter_shape)
{
	struct sock_filter *prog = calloc(FILTER_MAX_INSNS, 8);
	long plain = filter_build(&(struct filter_spec){ .count_spawns = true }, prog,
				  FILTER_MAX_INSNS);
	long read = filter_build(&(struct filter_spec){ .policy = &pol_read, .count_spawns = true },
				 prog, FILTER_MAX_INSNS);

	ck_assert_int_gt(plain, 10);
	ck_assert_int_gt(read, 10);
	ck_assert_int_lt(plain, 400);
	ck_assert_int_eq(filter_build(&(struct filter_spec){ .count_spawns = true }, prog, 5), -E2BIG);
	free(prog);
	ck_assert_ptr_null(syscall_lookup(SYS_read));
	ck_assert_ptr_null(syscall_lookup(-1));
	ck_assert_str_eq(syscall_lookup(SYS_openat)->name, "openat");
}
END_TEST

/* The generated program, run on seccomp_data by a classic BPF
 * interpreter of the instructions filter.c emits. */
static uint32_t bpf_run(const struct sock_filter *prog, long n, const struct seccomp_data *d)
{
	uint32_t a = 0;

	for (long pc = 0; pc < n; pc++) {
		const struct sock_filter *f = &prog[pc];

		switch (f->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			memcpy(&a, (const char *)d + f->k, 4);
			break;
		case BPF_ALU | BPF_AND | BPF_K:
			a &= f->k;
			break;
		case BPF_JMP | BPF_JA:
			pc += f->k;
			break;
		case BPF_JMP | BPF_JEQ | BPF_K:
			pc += a == f->k ? f->jt : f->jf;
			break;
		case BPF_JMP | BPF_JGE | BPF_K:
			pc += a >= f->k ? f->jt : f->jf;
			break;
		case BPF_JMP | BPF_JSET | BPF_K:
			pc += (a & f->k) ? f->jt : f->jf;
			break;
		case BPF_RET | BPF_K:
			return f->k;
		default:
			ck_abort_msg("instruction %ld: code %#x not interpreted", pc, f->code);
		}
	}
	ck_abort_msg("the program ran off its end");
	return 0;
}

/* SYSCALL_BPF_BYPASS: the filter stops exactly the argument combinations
 * the decoder calls a bypass (the same tests, table.h), and lets the rest
 * run without a stop. */
START_TEST(filter_bypass_tests_agree)
{
	static const struct {
		long nr;
		unsigned long a0, a1;
		bool stops;
	} cases[] = {
		{ SYS_ioctl, 0, TIOCSTI, true },
		{ SYS_ioctl, 0, TIOCLINUX, true },
		{ SYS_ioctl, 0, TCGETS, false },
		{ SYS_ioctl, 0, 0xffffffff00000000ul | TCGETS, false },
		{ SYS_socket, AF_PACKET, SOCK_RAW, true },
		{ SYS_socket, AF_INET, SOCK_RAW | SOCK_CLOEXEC, true },
		{ SYS_socket, AF_INET6, SOCK_RAW, true },
		{ SYS_socket, AF_INET, SOCK_PACKET, true },
		{ SYS_socket, AF_INET, SOCK_STREAM | SOCK_NONBLOCK, false },
		{ SYS_socket, AF_INET6, SOCK_DGRAM, false },
		{ SYS_socket, AF_UNIX, SOCK_DGRAM, false },
		{ SYS_socket, AF_NETLINK, SOCK_RAW, false },
		{ SYS_socket, AF_VSOCK, SOCK_STREAM, true },
		{ SYS_socket, AF_ALG, SOCK_SEQPACKET, true },
		{ SYS_unshare, CLONE_NEWNET, 0, true },
		{ SYS_unshare, CLONE_FILES, 0, false },
		{ SYS_clone, CLONE_UNTRACED, 0, true },
		{ SYS_clone, CLONE_VM | CLONE_THREAD, 0, false },
	};
	struct sock_filter *prog = calloc(FILTER_MAX_INSNS, sizeof(*prog));
	long n = filter_build(&(struct filter_spec){ .count_spawns = false }, prog, FILTER_MAX_INSNS);

	ck_assert_int_gt(n, 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct seccomp_data d = { .nr = (int)cases[i].nr, .arch = AUDIT_ARCH_X86_64 };
		const struct syscall_entry *e = syscall_lookup(cases[i].nr);
		bool holds = false;
		uint32_t ret;

		d.args[0] = cases[i].a0;
		d.args[1] = cases[i].a1;
		ret = bpf_run(prog, n, &d);
		ck_assert_msg(((ret & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_TRACE) == cases[i].stops,
			      "case %zu (%s): BPF %#x", i, e->name, ret);
		for (size_t b = 0; b < 3; b++) {
			bool all = e->bypass[b].id != NULL;

			for (size_t t = 0; all && t < SYSCALL_BYPASS_TESTS; t++) {
				const struct syscall_test *st = &e->bypass[b].test[t];

				all = !st->arg || syscall_test_holds(st, st->arg == 1 ? d.args[0] : d.args[1]);
			}
			holds = holds || all;
		}
		ck_assert_msg(holds == cases[i].stops, "case %zu (%s): decoder", i, e->name);
	}
	{
		/* mknod of a device stops as every mknod; the decoder refuses it. */
		const struct syscall_entry *e = syscall_lookup(SYS_mknodat);

		ck_assert(syscall_test_holds(&e->bypass[0].test[0], S_IFBLK | 0600));
		ck_assert(syscall_test_holds(&e->bypass[0].test[0], S_IFCHR));
		ck_assert(!syscall_test_holds(&e->bypass[0].test[0], S_IFIFO | 0600));
		ck_assert(!syscall_test_holds(&e->bypass[0].test[0], S_IFSOCK));
		ck_assert(!syscall_test_holds(&e->bypass[0].test[0], S_IFREG));
	}
	free(prog);
}
END_TEST

/* Every named entry is found by its name (the index is sorted), and the
 * calls that change names only say so, no other. */
START_TEST(lookup_by_name)
{
	static const char *const names_only[] = { "unlink", "unlinkat", "rmdir", "rename",
						  "renameat", "renameat2", "link", "linkat",
						  "symlink", "symlinkat", "mkdir", "mkdirat",
						  "mknod", "mknodat" };
	size_t n_names = 0;

	for (long nr = 0; nr < SYSCALL_TABLE_SIZE; nr++) {
		const struct syscall_entry *e = syscall_lookup(nr);
		bool listed = false;

		if (!e)
			continue;
		ck_assert_ptr_eq(syscall_lookup_name(e->name), e);
		for (size_t i = 0; i < sizeof(names_only) / sizeof(names_only[0]); i++)
			listed = listed || strcmp(e->name, names_only[i]) == 0;
		ck_assert_msg(listed == !!(e->opts & SYSCALL_OPT_NAMES), "%s", e->name);
		n_names += listed;
	}
	ck_assert_uint_eq(n_names, sizeof(names_only) / sizeof(names_only[0]));
	ck_assert_ptr_null(syscall_lookup_name("fopen"));
	ck_assert_ptr_null(syscall_lookup_name(""));
	ck_assert_ptr_null(syscall_lookup_name(NULL));
	ck_assert_ptr_null(syscall_lookup_name("zzzz"));
}
END_TEST

/* ---- tracee memory ---- */

START_TEST(mem_cross_page)
{
	long page = sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	char buf[PATH_MAX];
	pid_t pid;
	int st;

	ck_assert(m != MAP_FAILED);
	ck_assert_int_eq(munmap(m + page, (size_t)page), 0);
	memcpy(m + page - 6, "hello", 6);        /* ends right at the hole */
	memset(m, 'z', (size_t)page - 6);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		pause();
		_exit(0);
	}
	for (int procmem = 0; procmem < 2; procmem++) {
		mem_force_procmem(procmem);
		ck_assert_int_eq(mem_read_string(pid, (unsigned long)(m + page - 6), buf, sizeof(buf)),
				 5);
		ck_assert_str_eq(buf, "hello");
		/* no NUL before the hole */
		m[page - 1] = 'x';
		ck_assert_int_eq(mem_read_string(pid, (unsigned long)(m + page - 6), buf, sizeof(buf)),
				 5); /* the child's copy still has the NUL */
		m[page - 1] = '\0';
		ck_assert_int_eq(mem_read_string(pid, (unsigned long)(m + page), buf, sizeof(buf)),
				 -EFAULT);
		ck_assert_int_eq(mem_read_string(pid, (unsigned long)m, buf, 100), -ENAMETOOLONG);
		ck_assert_int_eq(mem_read(pid, (unsigned long)(m + page - 4), buf, 8), -EFAULT);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	ck_assert_int_eq(mem_read_string(pid, (unsigned long)m, buf, 100), -ESRCH);
	mem_force_procmem(false);
	munmap(m, (size_t)page);
}
END_TEST

static Suite *decode_suite(void)
{
	Suite *s = suite_create("decode");
	TCase *tc = tcase_create("traced");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, openat_write);
	tcase_add_test(tc, openat_write_regs_fallback);
	tcase_add_test(tc, open_read_rules);
	tcase_add_test(tc, open_rdwr_reads);
	tcase_add_test(tc, rename_two_paths);
	tcase_add_test(tc, symlink_link_and_target);
	tcase_add_test(tc, raw_syscall);
	tcase_add_test(tc, connect_inet_unix_unspec);
	tcase_add_test(tc, sendmmsg_each_name);
	tcase_add_test(tc, execve_exe_and_argv);
	tcase_add_test(tc, execveat_empty_path);
	tcase_add_test(tc, execve_argv_cap);
	tcase_add_test(tc, i386_int80);
	tcase_add_test(tc, i386_int80_regs_fallback);
	tcase_add_test(tc, x32_call);
	tcase_add_test(tc, io_uring_and_unshare);
	tcase_add_test(tc, clone_untraced);
	tcase_add_test(tc, canary_refused);
	tcase_add_test(tc, canary_allowed_fails);
	tcase_add_test(tc, no_tracer_fails_closed);
	tcase_add_test(tc, spawn_stops_only_when_counted);
	tcase_add_test(tc, filter_shape);
	tcase_add_test(tc, filter_bypass_tests_agree);
	tcase_add_test(tc, lookup_by_name);
	tcase_add_test(tc, mem_cross_page);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(decode_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
