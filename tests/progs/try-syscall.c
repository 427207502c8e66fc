/* try-syscall OP ARGS...: perform one operation and exit 0 on success or
 * with the errno value on failure, printing "OP: errno NAME" on stderr.
 *
 * In the spirit of bubblewrap's tests/try-syscall.c: the integration tests
 * judge the supervisor by what a program can observe (exit status = errno),
 * so each op is one small, direct call.  Built without sanitizers because it
 * runs under the seccomp filter and makes raw syscalls (int $0x80, x32). */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/io_uring.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <linux/userfaultfd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/timex.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <arpa/inet.h>
#include <unistd.h>

#ifndef __X32_SYSCALL_BIT
#define __X32_SYSCALL_BIT 0x40000000
#endif

extern char **environ;

/* Written by process_vm_writev into a forked child: the same address in
 * both processes after fork. */
static volatile int try_target = 1;

/* Every op returns 0 or an errno value. */
typedef int (*try_fn)(char **argv);

static int try_errno_of(long ret)
{
	return ret < 0 ? errno : 0;
}

static int try_write_fd(int fd)
{
	int err = 0;

	if (write(fd, "x", 1) != 1)
		err = errno ? errno : EIO;
	close(fd);
	return err;
}

static int op_open_write(char **argv)
{
	int fd = open(argv[0], O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

	return fd < 0 ? errno : try_write_fd(fd);
}

/* open-rdwr PATH: O_RDWR without O_CREAT, as openpty(3) probes /dev/ptyXX. */
static int op_open_rdwr(char **argv)
{
	int fd = open(argv[0], O_RDWR | O_NOCTTY | O_CLOEXEC);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static int op_open_read(char **argv)
{
	char buf[64];
	int fd = open(argv[0], O_RDONLY | O_CLOEXEC);
	int err = 0;

	if (fd < 0)
		return errno;
	if (read(fd, buf, sizeof(buf)) < 0)
		err = errno;
	close(fd);
	return err;
}

static int op_creat(char **argv)
{
	int fd = creat(argv[0], 0644);

	return fd < 0 ? errno : try_write_fd(fd);
}

static int op_openat_dirfd(char **argv)
{
	int dfd = open(argv[0], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int fd, err;

	if (dfd < 0)
		return errno;
	fd = openat(dfd, argv[1], O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	err = fd < 0 ? errno : try_write_fd(fd);
	close(dfd);
	return err;
}

/* The magic-link way in: a harmless O_PATH descriptor, then a write open
 * through /proc/self/fd/N, which the kernel follows to the file itself. */
static int op_proc_fd_write(char **argv)
{
	char link[64];
	int pfd = open(argv[0], O_PATH | O_CLOEXEC);
	int fd, err;

	if (pfd < 0)
		return errno;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", pfd);
	fd = open(link, O_WRONLY | O_CLOEXEC);
	err = fd < 0 ? errno : try_write_fd(fd);
	close(pfd);
	return err;
}

static int op_rename(char **argv) { return try_errno_of(rename(argv[0], argv[1])); }
static int op_link(char **argv) { return try_errno_of(link(argv[0], argv[1])); }
static int op_exchange(char **argv)
{
	return try_errno_of(renameat2(AT_FDCWD, argv[0], AT_FDCWD, argv[1], RENAME_EXCHANGE));
}
static int op_symlink(char **argv) { return try_errno_of(symlink(argv[0], argv[1])); }
static int op_unlink(char **argv) { return try_errno_of(unlink(argv[0])); }
static int op_mkdir(char **argv) { return try_errno_of(mkdir(argv[0], 0755)); }
static int op_chmod(char **argv) { return try_errno_of(chmod(argv[0], 0600)); }
static int op_truncate(char **argv) { return try_errno_of(truncate(argv[0], 0)); }

/* ADDR PORT -> sockaddr of the right family. */
static int try_sockaddr(const char *addr, const char *port,
			struct sockaddr_storage *ss, socklen_t *len)
{
	memset(ss, 0, sizeof(*ss));
	if (strchr(addr, ':')) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)atoi(port));
		if (inet_pton(AF_INET6, addr, &s6->sin6_addr) != 1)
			return EINVAL;
		*len = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)atoi(port));
		if (inet_pton(AF_INET, addr, &s4->sin_addr) != 1)
			return EINVAL;
		*len = sizeof(*s4);
	}
	return 0;
}

static int op_connect(char **argv)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, err;

	err = try_sockaddr(argv[0], argv[1], &ss, &len);
	if (err)
		return err;
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	err = try_errno_of(connect(fd, (struct sockaddr *)&ss, len));
	close(fd);
	return err;
}

static int op_connect_unix(char **argv)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd, err;

	if (strlen(argv[0]) >= sizeof(sun.sun_path))
		return ENAMETOOLONG;
	strcpy(sun.sun_path, argv[0]);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	err = try_errno_of(connect(fd, (struct sockaddr *)&sun, sizeof(sun)));
	close(fd);
	return err;
}

static int op_sendto(char **argv)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, err;

	err = try_sockaddr(argv[0], argv[1], &ss, &len);
	if (err)
		return err;
	fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	err = try_errno_of(sendto(fd, "ping", 4, 0, (struct sockaddr *)&ss, len));
	close(fd);
	return err;
}

/* bind ADDR PORT: a TCP socket bound there and listening. */
static int op_bind(char **argv)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, err;

	err = try_sockaddr(argv[0], argv[1], &ss, &len);
	if (err)
		return err;
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	err = try_errno_of(bind(fd, (struct sockaddr *)&ss, len));
	if (!err)
		err = try_errno_of(listen(fd, 1));
	close(fd);
	return err;
}

/* listen-unbound: listen(2) on a TCP socket bound to nothing, which the
 * kernel binds to 0.0.0.0 at a port of its choice. */
static int op_listen_unbound(char **argv)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), err;

	(void)argv;
	if (fd < 0)
		return errno;
	err = try_errno_of(listen(fd, 1));
	close(fd);
	return err;
}

/* race-bind N: N binds of fresh TCP sockets to an address that another
 * thread flips between 127.0.0.1 and 0.0.0.0 in memory (port 0), each
 * then listening: a supervisor that judged the address it read and let
 * the kernel read it again can be raced into a bind of every interface.
 * Exits 0 when no socket listened on 0.0.0.0, EADDRNOTAVAIL when one did;
 * says on stderr how many got bound there. */
static struct sockaddr_in try_race_addr = { .sin_family = AF_INET };
static volatile int try_race_stop;

static void *try_race_flip(void *arg)
{
	(void)arg;
	while (!try_race_stop) {
		__atomic_store_n(&try_race_addr.sin_addr.s_addr, htonl(INADDR_LOOPBACK),
				 __ATOMIC_RELAXED);
		__atomic_store_n(&try_race_addr.sin_addr.s_addr, htonl(INADDR_ANY),
				 __ATOMIC_RELAXED);
	}
	return NULL;
}

static int op_race_bind(char **argv)
{
	long n = strtol(argv[0], NULL, 10), wild = 0, bound = 0, listening = 0;
	pthread_t t;

	try_race_addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (pthread_create(&t, NULL, try_race_flip, NULL) != 0)
		return EAGAIN;
	for (long i = 0; i < n; i++) {
		struct sockaddr_in got;
		socklen_t len = sizeof(got);
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (fd < 0)
			break;
		if (syscall(SYS_bind, fd, &try_race_addr, sizeof(try_race_addr)) == 0 &&
		    getsockname(fd, (struct sockaddr *)&got, &len) == 0) {
			bound++;
			if (got.sin_addr.s_addr == htonl(INADDR_ANY)) {
				wild++;
				listening += listen(fd, 1) == 0;
			}
		}
		close(fd);
	}
	try_race_stop = 1;
	pthread_join(t, NULL);
	fprintf(stderr, "race-bind: %ld of %ld binds, %ld to 0.0.0.0, %ld listening there\n", bound,
		n, wild, listening);
	return listening ? EADDRNOTAVAIL : 0;
}

/* The syscall itself, not the libc wrapper (which a preload could see). */
static int op_raw_openat(char **argv)
{
	long fd = syscall(SYS_openat, AT_FDCWD, argv[0], O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

	return fd < 0 ? errno : try_write_fd((int)fd);
}

static int op_raw_openat_read(char **argv)
{
	long fd = syscall(SYS_openat, AT_FDCWD, argv[0], O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return errno;
	close((int)fd);
	return 0;
}

/* exec PATH ARGS...: argv[0] of the new program is PATH. */
static int op_exec(char **argv)
{
	execv(argv[0], argv);
	return errno;
}

/* open(2) through the i386 entry point, with the path in the low 4 GiB so
 * that a 32-bit pointer can name it. */
static int op_i386_open(char **argv)
{
	size_t n = strlen(argv[0]) + 1;
	char *low = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	long ret;

	if (low == MAP_FAILED)
		return errno;
	if (n > 4096)
		return ENAMETOOLONG;
	memcpy(low, argv[0], n);
	/* i386: eax = 5 (open), ebx = path, ecx = flags, edx = mode. */
	__asm__ volatile("int $0x80"
			 : "=a"(ret)
			 : "a"(5L), "b"((long)(uintptr_t)low),
			   "c"((long)(O_WRONLY | O_CREAT)), "d"(0644L)
			 : "memory", "r8", "r9", "r10", "r11");
	if (ret < 0 && ret > -4096)
		return (int)-ret;
	close((int)ret);
	return 0;
}

static int op_x32_getpid(char **argv)
{
	return try_errno_of(syscall(__X32_SYSCALL_BIT | SYS_getpid));
}

static int op_userfaultfd(char **argv)
{
	long fd;

	(void)argv;
	fd = syscall(SYS_userfaultfd, O_CLOEXEC);
	if (fd < 0)
		return errno;
	close((int)fd);
	return 0;
}

#ifndef USERFAULTFD_IOC_NEW
#define USERFAULTFD_IOC_NEW _IO(0xAA, 0x00)
#endif

/* uffd-ioctl FD: a userfaultfd made from a descriptor of /dev/userfaultfd
 * that the program got some other way than by opening it (inherited). */
static int op_uffd_ioctl(char **argv)
{
	int fd = ioctl(atoi(argv[0]), USERFAULTFD_IOC_NEW, O_CLOEXEC);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static int op_io_uring_setup(char **argv)
{
	struct io_uring_params p;
	long fd;

	memset(&p, 0, sizeof(p));
	fd = syscall(SYS_io_uring_setup, 4, &p);
	if (fd < 0)
		return errno;
	close((int)fd);
	return 0;
}

/* A Linux AIO context: what io_submit needs. */
static int op_io_setup(char **argv)
{
	unsigned long ctx = 0;

	(void)argv;
	if (syscall(SYS_io_setup, 1, &ctx) < 0)
		return errno;
	syscall(SYS_io_destroy, ctx);
	return 0;
}

/* A child that waits to be acted on: the "sibling" in the same session. */
static pid_t try_spawn_sleeper(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		for (int i = 0; i < 50; i++)
			usleep(100000);
		_exit(0);
	}
	return pid;
}

static void try_reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* ptrace-attach PID|child */
/* The process an argument names: "child" (a sleeper of our own, *own
 * set), "parent", "self", or a number. */
static pid_t try_target_pid(const char *arg, bool *own)
{
	*own = strcmp(arg, "child") == 0;
	if (*own)
		return try_spawn_sleeper();
	if (strcmp(arg, "parent") == 0)
		return getppid();
	if (strcmp(arg, "self") == 0)
		return getpid();
	return (pid_t)atoi(arg);
}

static int op_ptrace_attach(char **argv)
{
	bool own;
	pid_t pid = try_target_pid(argv[0], &own);
	int err;

	if (pid < 0)
		return errno;
	err = try_errno_of(ptrace(PTRACE_ATTACH, pid, NULL, NULL));
	if (!err)
		ptrace(PTRACE_DETACH, pid, NULL, NULL);
	if (own)
		try_reap(pid);
	return err;
}

/* process_vm_writev PID|child: with "child", the variable's address is the
 * same in both processes, so the native call succeeds. */
static int op_process_vm_writev(char **argv)
{
	bool own;
	pid_t pid = try_target_pid(argv[0], &own);
	int val = 2;
	struct iovec local = { .iov_base = &val, .iov_len = sizeof(val) };
	struct iovec remote = { .iov_base = (void *)&try_target, .iov_len = sizeof(val) };
	int err;

	if (pid < 0)
		return errno;
	err = try_errno_of(process_vm_writev(pid, &local, 1, &remote, 1, 0));
	if (own)
		try_reap(pid);
	return err;
}

/* process_vm_readv PID|child|parent|self: a read of try_target there
 * (the same address in a forked child and in this process). */
static int op_process_vm_readv(char **argv)
{
	bool own;
	pid_t pid = try_target_pid(argv[0], &own);
	int val = 0;
	struct iovec local = { .iov_base = &val, .iov_len = sizeof(val) };
	struct iovec remote = { .iov_base = (void *)&try_target, .iov_len = sizeof(val) };
	int err;

	if (pid < 0)
		return errno;
	err = try_errno_of(process_vm_readv(pid, &local, 1, &remote, 1, 0));
	if (own)
		try_reap(pid);
	/* Another program's memory may have nothing there: the call ran. */
	return err == EFAULT ? 0 : err;
}

/* prlimit-same PID|child|parent|self: the core limit of PID set to what
 * it is (a change the kernel judges as any other). */
static int op_prlimit_same(char **argv)
{
	bool own;
	pid_t pid = try_target_pid(argv[0], &own);
	struct rlimit r;
	int err;

	if (pid < 0)
		return errno;
	err = try_errno_of(prlimit(pid, RLIMIT_CORE, NULL, &r));
	if (!err)
		err = try_errno_of(prlimit(pid, RLIMIT_CORE, &r, NULL));
	if (own)
		try_reap(pid);
	return err;
}

/* prlimit-get PID|parent|self: PID's limits read, none set. */
static int op_prlimit_get(char **argv)
{
	bool own;
	pid_t pid = try_target_pid(argv[0], &own);
	struct rlimit r;
	int err;

	if (pid < 0)
		return errno;
	err = try_errno_of(prlimit(pid, RLIMIT_CPU, NULL, &r));
	if (own)
		try_reap(pid);
	return err;
}

static int op_memfd_secret(char **argv)
{
	long fd;

	(void)argv;
	fd = syscall(SYS_memfd_secret, 0);
	if (fd < 0)
		return errno;
	close((int)fd);
	return 0;
}

static int op_unshare_mount(char **argv)
{
	if (unshare(CLONE_NEWNS) < 0)
		return errno;
	return try_errno_of(mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL));
}

/* mount DIR: a tmpfs on DIR (run it in a private mount namespace). */
static int op_mount(char **argv)
{
	return try_errno_of(mount("agenttrace-test", argv[0], "tmpfs", 0, "size=64k"));
}

/* umount PATH: detach what is mounted there (the command's masks). */
static int op_umount(char **argv)
{
	return try_errno_of(umount2(argv[0], MNT_DETACH));
}

/* move-mount PATH: move the mount at PATH away with the new mount API. */
static int op_move_mount(char **argv)
{
	int fd = open_tree(AT_FDCWD, argv[0], OPEN_TREE_CLOEXEC);

	if (fd < 0)
		return errno;
	return try_errno_of(move_mount(fd, "", AT_FDCWD, "/", MOVE_MOUNT_F_EMPTY_PATH));
}

static int op_unshare_net(char **argv)
{
	return try_errno_of(unshare(CLONE_NEWNET));
}

/* What a program's own sandbox does (Codex's helper, a browser's, a test
 * runner's), under the supervisor's: a filter of its own, without a
 * listener, then a Landlock ruleset of its own.  Each then runs PROG. */

/* seccomp-exec PROG ARGS...: a filter that fails mkdir and mkdirat with
 * EPERM (everything else allowed), then exec PROG. */
static int op_seccomp_exec(char **argv)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0 /* offsetof(struct seccomp_data, nr) */),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mkdir, 1, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mkdirat, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return errno;
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
		return errno;
	execv(argv[0], argv);
	return errno;
}

/* seccomp-listener: a filter with a user-notification listener (one that
 * notifies nothing: every call allowed), which agenttrace refuses. */
static int op_seccomp_listener(char **argv)
{
	struct sock_filter f[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
	struct sock_fprog prog = { .len = 1, .filter = f };
	long fd;

	(void)argv;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return errno;
	fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	if (fd < 0)
		return errno;
	close((int)fd);
	return 0;
}

/* landlock-exec DIR PROG ARGS...: a Landlock ruleset (ABI 1's write
 * rights) that lets PROG write beneath DIR only, then exec PROG. */
static int op_landlock_exec(char **argv)
{
	const uint64_t rights = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR |
				LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR |
				LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
				LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO |
				LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM;
	struct landlock_ruleset_attr attr = { .handled_access_fs = rights };
	struct landlock_path_beneath_attr beneath = { .allowed_access = rights };
	int rs, err;

	rs = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (rs < 0)
		return errno;
	beneath.parent_fd = open(argv[0], O_PATH | O_CLOEXEC);
	if (beneath.parent_fd < 0 ||
	    syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &beneath, 0) < 0 ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    syscall(SYS_landlock_restrict_self, rs, 0) < 0) {
		err = errno;
		close(rs);
		return err;
	}
	close(rs);
	close(beneath.parent_fd);
	execv(argv[1], argv + 1);
	return errno;
}

/* A fork whose child the tracer would not follow. */
static int op_clone_untraced(char **argv)
{
	long pid = syscall(SYS_clone, CLONE_UNTRACED | SIGCHLD, 0L, 0L, 0L, 0L);
	int status;

	if (pid < 0)
		return errno;
	if (pid == 0)
		_exit(0);
	if (waitpid((pid_t)pid, &status, 0) < 0)
		return errno;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : ECHILD;
}

static int op_clone3(char **argv)
{
	/* An empty clone_args of the oldest size (64 bytes) acts like fork. */
	uint64_t args[8];
	long pid;

	memset(args, 0, sizeof(args));
	args[4] = SIGCHLD; /* exit_signal */
	pid = syscall(SYS_clone3, args, sizeof(args));
	if (pid < 0)
		return errno;
	if (pid == 0)
		_exit(0);
	waitpid((pid_t)pid, NULL, 0);
	return 0;
}

static void *try_thread_write(void *arg)
{
	char *argv[] = { arg, NULL };

	return (void *)(intptr_t)op_open_write(argv);
}

static int op_thread_write(char **argv)
{
	pthread_t t;
	void *ret;
	int err = pthread_create(&t, NULL, try_thread_write, argv[0]);

	if (err)
		return err;
	pthread_join(t, &ret);
	return (int)(intptr_t)ret;
}

static void *try_thread_exec(void *arg)
{
	char **argv = arg;

	execv(argv[0], argv);
	return (void *)(intptr_t)errno;
}

/* thread-exec PATH ARGS...: execve from a non-leader thread; the kernel
 * makes the thread the leader (the tracer sees the pid change). */
static int op_thread_exec(char **argv)
{
	pthread_t t;
	void *ret;
	int err = pthread_create(&t, NULL, try_thread_exec, argv);

	if (err)
		return err;
	pthread_join(t, &ret);
	return (int)(intptr_t)ret;
}

/* The stack of the thread sigchld-thread-exec makes: it only calls execv. */
static char try_clone_stack[1024 * 1024] __attribute__((aligned(16)));

static int try_clone_exec(void *arg)
{
	char **argv = arg;

	execv(argv[0], argv);
	_exit(errno);
}

/* sigchld-thread-exec PATH ARGS...: as thread-exec, but the thread is made
 * by clone(CLONE_THREAD) with SIGCHLD as its exit signal: a thread, which
 * ptrace(2) reports as a fork event (the event's kind follows the exit
 * signal, not CLONE_THREAD).  The leader waits until the exec takes its
 * place. */
static int op_sigchld_thread_exec(char **argv)
{
	int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
		    CLONE_SYSVSEM | SIGCHLD;

	if (clone(try_clone_exec, try_clone_stack + sizeof(try_clone_stack), flags, argv) < 0)
		return errno;
	for (;;)
		pause();
}

/* Exit status of a child as this program's own result. */
static int try_child_result(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) < 0)
		return errno;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

static int op_vfork_exec(char **argv)
{
	pid_t pid = vfork();

	if (pid < 0)
		return errno;
	if (pid == 0) {
		execv(argv[0], argv);
		_exit(errno);
	}
	return try_child_result(pid);
}

static int op_vfork_write(char **argv)
{
	pid_t pid = vfork();

	if (pid < 0)
		return errno;
	if (pid == 0) {
		/* Only async-signal-safe raw calls in a vfork child. */
		int fd = open(argv[0], O_WRONLY | O_CREAT, 0644);

		_exit(fd < 0 ? errno : 0);
	}
	return try_child_result(pid);
}

static int op_fork_write(char **argv)
{
	pid_t pid = fork();

	if (pid < 0)
		return errno;
	if (pid == 0)
		_exit(op_open_write(argv));
	return try_child_result(pid);
}

/* memfd-exec [PROGRAM]: fileless execution of a copy of PROGRAM
 * (default /bin/true). */
static int op_memfd_exec(char **argv)
{
	const char *src = argv[0] ? argv[0] : "/bin/true";
	char *const args[] = { "memfd-program", NULL };
	char buf[65536];
	ssize_t n;
	int in, mfd;

	in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return errno;
	mfd = (int)syscall(SYS_memfd_create, "agenttrace-test", 0);
	if (mfd < 0) {
		close(in);
		return errno;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(mfd, buf, (size_t)n) != n)
			break;
	close(in);
	syscall(SYS_execveat, mfd, "", args, environ, AT_EMPTY_PATH);
	return errno;
}

static int op_exit(char **argv)
{
	exit(atoi(argv[0]));
}

static int op_kill_self(char **argv)
{
	int sig = atoi(argv[0]);

	signal(sig, SIG_DFL);
	raise(sig);
	return EINTR;
}

static int op_sleep(char **argv)
{
	double s = atof(argv[0]);
	struct timespec ts = { .tv_sec = (time_t)s,
			       .tv_nsec = (long)((s - (double)(time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	return 0;
}

/* ignore-term SEC: a command that does not stop on SIGTERM (or SIGINT). */
static int op_ignore_term(char **argv)
{
	signal(SIGTERM, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	return op_sleep(argv);
}

/* fork-storm N: fork N children that linger a moment; the result is 0 when
 * every fork worked, else the first fork's errno (EAGAIN at a ceiling). */
static int op_fork_storm(char **argv)
{
	int n = atoi(argv[0]);
	int err = 0;

	for (int i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			err = errno;
			break;
		}
		if (pid == 0) {
			usleep(500000);
			_exit(0);
		}
	}
	while (wait(NULL) > 0)
		;
	return err;
}

/* ---- the kernel and the machine: every op is harmless when the call
 * runs (a bad magic number, an invalid clock, a missing file), so that a
 * supervisor that let it through changes nothing ---- */

/* tiocsti TTY TEXT: type TEXT into TTY's input, byte by byte. */
static int op_tiocsti(char **argv)
{
	int fd = open(argv[0], O_RDWR | O_NOCTTY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return errno;
	for (const char *p = argv[1]; *p && !err; p++)
		if (ioctl(fd, TIOCSTI, p) < 0)
			err = errno;
	close(fd);
	return err;
}

/* tioclinux TTY: TIOCLINUX subcode 3 (paste the selection). */
static int op_tioclinux(char **argv)
{
	char sub = 3;
	int fd = open(argv[0], O_RDWR | O_NOCTTY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return errno;
	if (ioctl(fd, TIOCLINUX, &sub) < 0)
		err = errno;
	close(fd);
	return err;
}

/* socket FAMILY TYPE PROTO (numbers; TYPE may add SOCK_CLOEXEC). */
static int op_socket(char **argv)
{
	long fd = syscall(SYS_socket, atoi(argv[0]), atoi(argv[1]), atoi(argv[2]));

	if (fd < 0)
		return errno;
	close((int)fd);
	return 0;
}

/* raw-send ADDR: an IPPROTO_RAW socket connected to 127.0.0.1 sends a
 * header of its own for ADDR (the attack: the connect names loopback,
 * the packet goes elsewhere). */
static int op_raw_send(char **argv)
{
	struct sockaddr_in lo = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	unsigned char pkt[28] = { 0x45, 0, 0, 28, 0, 0, 0, 0, 64, 17 };
	int fd = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW), err = 0;

	if (fd < 0)
		return errno;
	inet_pton(AF_INET, "127.0.0.1", pkt + 12);
	inet_pton(AF_INET, argv[0], pkt + 16);
	if (connect(fd, (struct sockaddr *)&lo, sizeof(lo)) < 0 || send(fd, pkt, sizeof(pkt), 0) < 0)
		err = errno;
	close(fd);
	return err;
}

/* long-name-send sendmsg|sendmmsg ADDR PORT: a UDP datagram to ADDR
 * whose message names it with a msg_namelen of 200, which the kernel cuts
 * to a sockaddr_storage rather than refuse. */
static int op_long_name_send(char **argv)
{
	struct sockaddr_storage ss[2];
	struct sockaddr_in *in = (struct sockaddr_in *)ss;
	char b = 'x';
	struct iovec iov = { &b, 1 };
	struct mmsghdr mm = { .msg_hdr = { .msg_name = ss, .msg_namelen = 200, .msg_iov = &iov,
					   .msg_iovlen = 1 } };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), err = 0;

	memset(ss, 0, sizeof(ss));
	in->sin_family = AF_INET;
	in->sin_port = htons((uint16_t)atoi(argv[2]));
	if (fd < 0 || inet_pton(AF_INET, argv[1], &in->sin_addr) != 1)
		return EINVAL;
	if (strcmp(argv[0], "sendmmsg") == 0 ? sendmmsg(fd, &mm, 1, 0) != 1 :
					       sendmsg(fd, &mm.msg_hdr, 0) != 1)
		err = errno;
	close(fd);
	return err;
}

/* unspec-send ADDR PORT: a UDP datagram by sendto(2) to a sockaddr_in
 * for ADDR whose family is AF_UNSPEC, which an IPv4 socket takes for
 * AF_INET. */
static int op_unspec_send(char **argv)
{
	struct sockaddr_in in = { .sin_family = AF_UNSPEC, .sin_port = htons((uint16_t)atoi(argv[1])) };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), err = 0;

	if (fd < 0 || inet_pton(AF_INET, argv[0], &in.sin_addr) != 1)
		return EINVAL;
	if (sendto(fd, "x", 1, 0, (struct sockaddr *)&in, sizeof(in)) != 1)
		err = errno;
	close(fd);
	return err;
}

/* An IPv6 segment routing header (type 4) of one segment, ADDR. */
struct try_srh {
	unsigned char nexthdr, hdrlen, type, segments_left, first_segment, flags;
	unsigned short tag;
	struct in6_addr seg;
} __attribute__((packed));

/* route-send setsockopt|cmsg|flowlabel ADDR6 PORT: a UDP datagram to
 * [::1]:PORT that a routing header would send to ADDR6 instead: set on the
 * socket, given as a control message, or (flowlabel) appended to a flow
 * label request. */
static int op_route_send(char **argv)
{
	struct try_srh srh = { .hdrlen = 2, .type = 4 };
	struct sockaddr_in6 lo = { .sin6_family = AF_INET6, .sin6_port = htons((uint16_t)atoi(argv[2])),
				   .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	union {
		char buf[CMSG_SPACE(sizeof(struct try_srh))];
		struct cmsghdr align;
	} u;
	char b = 'x', freq[32 + sizeof(srh)];
	struct iovec iov = { &b, 1 };
	struct msghdr mh = { .msg_name = &lo, .msg_namelen = sizeof(lo), .msg_iov = &iov, .msg_iovlen = 1 };
	int fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0), err = 0;

	if (fd < 0 || inet_pton(AF_INET6, argv[1], &srh.seg) != 1)
		return EINVAL;
	memset(&u, 0, sizeof(u));
	memset(freq, 0, sizeof(freq));
	if (!strcmp(argv[0], "setsockopt")) {
		if (setsockopt(fd, IPPROTO_IPV6, IPV6_RTHDR, &srh, sizeof(srh)) < 0)
			err = errno;
	} else if (!strcmp(argv[0], "flowlabel")) {
		memcpy(freq + 32, &srh, sizeof(srh));
		if (setsockopt(fd, IPPROTO_IPV6, 32 /* IPV6_FLOWLABEL_MGR */, freq, sizeof(freq)) < 0)
			err = errno;
	} else {
		struct cmsghdr *cm = (struct cmsghdr *)u.buf;

		cm->cmsg_level = IPPROTO_IPV6;
		cm->cmsg_type = IPV6_RTHDR;
		cm->cmsg_len = CMSG_LEN(sizeof(srh));
		memcpy(CMSG_DATA(cm), &srh, sizeof(srh));
		mh.msg_control = u.buf;
		mh.msg_controllen = sizeof(u.buf);
	}
	if (!err && sendmsg(fd, &mh, 0) != 1)
		err = errno;
	close(fd);
	return err;
}

/* pktinfo-zero SOURCE PORT: a UDP datagram to 0.0.0.0:PORT whose
 * IP_PKTINFO sets SOURCE, where the kernel then delivers it. */
static int op_pktinfo_zero(char **argv)
{
	struct sockaddr_in any = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[1])) };
	union {
		char buf[CMSG_SPACE(sizeof(struct in_pktinfo))];
		struct cmsghdr align;
	} u;
	struct cmsghdr *cm = (struct cmsghdr *)u.buf;
	struct in_pktinfo pi = { 0 };
	char b = 'x';
	struct iovec iov = { &b, 1 };
	struct msghdr mh = { .msg_name = &any, .msg_namelen = sizeof(any), .msg_iov = &iov,
			     .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), err = 0;

	if (fd < 0 || inet_pton(AF_INET, argv[0], &pi.ipi_spec_dst) != 1)
		return EINVAL;
	memset(&u, 0, sizeof(u));
	cm->cmsg_level = IPPROTO_IP;
	cm->cmsg_type = IP_PKTINFO;
	cm->cmsg_len = CMSG_LEN(sizeof(pi));
	memcpy(CMSG_DATA(cm), &pi, sizeof(pi));
	if (sendmsg(fd, &mh, 0) != 1)
		err = errno;
	close(fd);
	return err;
}

/* secret-open PATH: open(2) for writing (O_CREAT) of PATH written in a page
 * of memfd_secret(2) memory, which the kernel reads in the caller's
 * context and no other process can read.  ENOSYS (no memfd_secret here)
 * is told apart by the test. */
static int op_secret_open(char **argv)
{
	long sfd = syscall(447 /* memfd_secret */, 0);
	char *page;
	int fd;

	if (sfd < 0)
		return errno;
	if (ftruncate((int)sfd, 4096) < 0)
		return errno;
	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, (int)sfd, 0);
	if (page == MAP_FAILED)
		return errno;
	snprintf(page, 4096, "%s", argv[0]);
	fd = open(page, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/* mmsg-two FIRST SECOND PORT: one sendmmsg of two UDP datagrams, to
 * FIRST:PORT and then to SECOND:PORT. */
static int op_mmsg_two(char **argv)
{
	struct sockaddr_in a[2];
	struct mmsghdr mm[2];
	char b = 'x';
	struct iovec iov = { &b, 1 };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), err = 0;

	memset(mm, 0, sizeof(mm));
	for (int i = 0; i < 2; i++) {
		a[i] = (struct sockaddr_in){ .sin_family = AF_INET,
					     .sin_port = htons((uint16_t)atoi(argv[2])) };
		if (inet_pton(AF_INET, argv[i], &a[i].sin_addr) != 1)
			return EINVAL;
		mm[i].msg_hdr = (struct msghdr){ .msg_name = &a[i], .msg_namelen = sizeof(a[i]),
						 .msg_iov = &iov, .msg_iovlen = 1 };
	}
	if (fd < 0)
		return EINVAL;
	if (sendmmsg(fd, mm, 2, 0) != 2)
		err = errno;
	close(fd);
	return err;
}

/* mknod PATH b|c|p|s [MAJOR MINOR] */
static int op_mknod(char **argv)
{
	mode_t type = argv[1][0] == 'b' ? S_IFBLK : argv[1][0] == 'c' ? S_IFCHR :
		      argv[1][0] == 'p' ? S_IFIFO : S_IFSOCK;
	dev_t dev = argv[2] && argv[3] ? makedev(atoi(argv[2]), atoi(argv[3])) : 0;

	return try_errno_of(syscall(SYS_mknodat, AT_FDCWD, argv[0], type | 0600, dev));
}

static int op_sethostname(char **argv)
{
	return try_errno_of(syscall(SYS_sethostname, argv[0], strlen(argv[0])));
}

static int op_setdomainname(char **argv)
{
	return try_errno_of(syscall(SYS_setdomainname, argv[0], strlen(argv[0])));
}

/* machine CALL: the machine-wide calls, each made so that it fails
 * natively before it acts (EINVAL, ENOENT, EBADF) or changes nothing. */
static int op_machine(char **argv)
{
	const char *c = argv[0];
	struct timex tx = { .modes = 0x8000 }; /* ADJ_ADJTIME without SINGLESHOT: EINVAL */
	struct timespec ts = { 0, 0 };

	if (!strcmp(c, "reboot"))
		return try_errno_of(syscall(SYS_reboot, 0, 0, 0, NULL)); /* bad magic */
	if (!strcmp(c, "kexec_load"))
		return try_errno_of(syscall(SYS_kexec_load, 0, 0, NULL, 0xffff0000UL));
	if (!strcmp(c, "kexec_file_load"))
		return try_errno_of(syscall(SYS_kexec_file_load, -1, -1, 0, "", 0xfffffff0UL));
	if (!strcmp(c, "init_module"))
		return try_errno_of(syscall(SYS_init_module, NULL, 0, ""));
	if (!strcmp(c, "finit_module"))
		return try_errno_of(syscall(SYS_finit_module, -1, "", 0));
	if (!strcmp(c, "delete_module"))
		return try_errno_of(syscall(SYS_delete_module, "agenttrace_no_such_module",
					    O_NONBLOCK));
	if (!strcmp(c, "swapon"))
		return try_errno_of(syscall(SYS_swapon, "/nonexistent/agenttrace-swap", 0));
	if (!strcmp(c, "swapoff"))
		return try_errno_of(syscall(SYS_swapoff, "/nonexistent/agenttrace-swap"));
	if (!strcmp(c, "clock_settime"))
		return try_errno_of(syscall(SYS_clock_settime, 0x7fffffff, &ts)); /* no such clock */
	if (!strcmp(c, "settimeofday"))
		return try_errno_of(syscall(SYS_settimeofday, NULL, NULL)); /* sets nothing */
	if (!strcmp(c, "adjtimex-set"))
		return try_errno_of(syscall(SYS_adjtimex, &tx));
	if (!strcmp(c, "clock_adjtime-set"))
		return try_errno_of(syscall(SYS_clock_adjtime, CLOCK_REALTIME, &tx));
	if (!strcmp(c, "adjtimex-read")) {
		tx.modes = 0;
		return try_errno_of(syscall(SYS_adjtimex, &tx));
	}
	if (!strcmp(c, "acct"))
		return try_errno_of(syscall(SYS_acct, "/nonexistent/agenttrace-acct"));
	if (!strcmp(c, "iopl"))
		return try_errno_of(syscall(SYS_iopl, 0)); /* the level it has */
	if (!strcmp(c, "ioperm"))
		return try_errno_of(syscall(SYS_ioperm, 0, 0, 0)); /* EINVAL: no range */
	return ENOTSUP;
}

/* ---- signals and pidfds ---- */

/* signal CALL PID [TID] SIG: CALL is kill, tkill, tgkill or sigqueue. */
static int op_signal(char **argv)
{
	const char *c = argv[0];
	int a = atoi(argv[1]), b = argv[2] ? atoi(argv[2]) : 0;
	siginfo_t si = { .si_code = SI_QUEUE };

	si.si_pid = getpid();
	si.si_uid = getuid();
	if (!strcmp(c, "kill"))
		return try_errno_of(syscall(SYS_kill, a, b));
	if (!strcmp(c, "tkill"))
		return try_errno_of(syscall(SYS_tkill, a, b));
	if (!strcmp(c, "tgkill") && argv[2] && argv[3])
		return try_errno_of(syscall(SYS_tgkill, a, b, atoi(argv[3])));
	if (!strcmp(c, "sigqueue")) {
		si.si_signo = b;
		return try_errno_of(syscall(SYS_rt_sigqueueinfo, a, b, &si));
	}
	return ENOTSUP;
}

/* pidfd-open PID */
static int op_pidfd_open(char **argv)
{
	long fd = syscall(SYS_pidfd_open, atoi(argv[0]), 0);

	if (fd < 0)
		return errno;
	close((int)fd);
	return 0;
}

/* pidfd-signal FD SIG: a pidfd this process was given (inherited). */
static int op_pidfd_signal(char **argv)
{
	return try_errno_of(syscall(SYS_pidfd_send_signal, atoi(argv[0]), atoi(argv[1]), NULL, 0));
}

/* pidfd-getfd PIDFD FD: PIDFD a descriptor given, or "parent" for a
 * pidfd_open of the parent (the supervisor, for the command). */
static int op_pidfd_getfd(char **argv)
{
	int pidfd = !strcmp(argv[0], "parent") ? (int)syscall(SYS_pidfd_open, getppid(), 0) :
		    atoi(argv[0]);
	long fd;

	if (pidfd < 0)
		return errno;
	fd = syscall(SYS_pidfd_getfd, pidfd, atoi(argv[1]), 0);
	if (fd < 0)
		return errno;
	close((int)fd);
	return 0;
}

/* kill-all SIG: kill(-1, SIG) (kill(2) spares the caller itself).  Only
 * ever run inside a PID namespace of the test's. */
static int op_kill_all(char **argv)
{
	return try_errno_of(syscall(SYS_kill, -1, atoi(argv[0])));
}

static const struct try_op {
	const char *name;
	int nargs;        /* required arguments; more may follow */
	try_fn fn;
} try_ops[] = {
	{ "open-write", 1, op_open_write },
	{ "open-read", 1, op_open_read },
	{ "open-rdwr", 1, op_open_rdwr },
	{ "creat", 1, op_creat },
	{ "openat-dirfd", 2, op_openat_dirfd },
	{ "proc-fd-write", 1, op_proc_fd_write },
	{ "rename", 2, op_rename },
	{ "link", 2, op_link },
	{ "exchange", 2, op_exchange },
	{ "symlink", 2, op_symlink },
	{ "unlink", 1, op_unlink },
	{ "mkdir", 1, op_mkdir },
	{ "chmod", 1, op_chmod },
	{ "truncate", 1, op_truncate },
	{ "connect", 2, op_connect },
	{ "connect-unix", 1, op_connect_unix },
	{ "sendto", 2, op_sendto },
	{ "bind", 2, op_bind },
	{ "listen-unbound", 0, op_listen_unbound },
	{ "race-bind", 1, op_race_bind },
	{ "exec", 1, op_exec },
	{ "seccomp-exec", 1, op_seccomp_exec },
	{ "seccomp-listener", 0, op_seccomp_listener },
	{ "landlock-exec", 2, op_landlock_exec },
	{ "raw-openat", 1, op_raw_openat },
	{ "raw-openat-read", 1, op_raw_openat_read },
	{ "i386-open", 1, op_i386_open },
	{ "x32-getpid", 0, op_x32_getpid },
	{ "io_uring_setup", 0, op_io_uring_setup },
	{ "io_setup", 0, op_io_setup },
	{ "userfaultfd", 0, op_userfaultfd },
	{ "uffd-ioctl", 1, op_uffd_ioctl },
	{ "ptrace-attach", 1, op_ptrace_attach },
	{ "process_vm_writev", 1, op_process_vm_writev },
	{ "process_vm_readv", 1, op_process_vm_readv },
	{ "prlimit-same", 1, op_prlimit_same },
	{ "prlimit-get", 1, op_prlimit_get },
	{ "memfd_secret", 0, op_memfd_secret },
	{ "unshare-mount", 0, op_unshare_mount },
	{ "unshare-net", 0, op_unshare_net },
	{ "mount", 1, op_mount },
	{ "umount", 1, op_umount },
	{ "move-mount", 1, op_move_mount },
	{ "clone-untraced", 0, op_clone_untraced },
	{ "clone3", 0, op_clone3 },
	{ "thread-write", 1, op_thread_write },
	{ "thread-exec", 1, op_thread_exec },
	{ "sigchld-thread-exec", 1, op_sigchld_thread_exec },
	{ "vfork-exec", 1, op_vfork_exec },
	{ "vfork-write", 1, op_vfork_write },
	{ "fork-write", 1, op_fork_write },
	{ "memfd-exec", 0, op_memfd_exec },
	{ "exit", 1, op_exit },
	{ "kill-self", 1, op_kill_self },
	{ "sleep", 1, op_sleep },
	{ "ignore-term", 1, op_ignore_term },
	{ "fork-storm", 1, op_fork_storm },
	{ "tiocsti", 2, op_tiocsti },
	{ "tioclinux", 1, op_tioclinux },
	{ "socket", 3, op_socket },
	{ "raw-send", 1, op_raw_send },
	{ "long-name-send", 3, op_long_name_send },
	{ "unspec-send", 2, op_unspec_send },
	{ "route-send", 3, op_route_send },
	{ "pktinfo-zero", 2, op_pktinfo_zero },
	{ "mmsg-two", 3, op_mmsg_two },
	{ "secret-open", 1, op_secret_open },
	{ "mknod", 2, op_mknod },
	{ "sethostname", 1, op_sethostname },
	{ "setdomainname", 1, op_setdomainname },
	{ "machine", 1, op_machine },
	{ "signal", 3, op_signal },
	{ "pidfd-open", 1, op_pidfd_open },
	{ "pidfd-signal", 2, op_pidfd_signal },
	{ "pidfd-getfd", 2, op_pidfd_getfd },
	{ "kill-all", 1, op_kill_all },
};

static void try_usage(FILE *f)
{
	fprintf(f, "usage: try-syscall OP ARGS...\nops:");
	for (size_t i = 0; i < sizeof(try_ops) / sizeof(try_ops[0]); i++)
		fprintf(f, " %s", try_ops[i].name);
	fputc('\n', f);
}

int main(int argc, char **argv)
{
	const struct try_op *op = NULL;
	int err;

	if (argc < 2) {
		try_usage(stderr);
		return 255;
	}
	for (size_t i = 0; i < sizeof(try_ops) / sizeof(try_ops[0]); i++)
		if (strcmp(argv[1], try_ops[i].name) == 0)
			op = &try_ops[i];
	if (!op || argc - 2 < op->nargs) {
		try_usage(stderr);
		return 255;
	}
	errno = 0;
	err = op->fn(argv + 2);
	if (err) {
		const char *name = strerrorname_np(err);

		fprintf(stderr, "%s: errno %s\n", op->name, name ? name : "?");
	}
	return err;
}
