/* floor-tracer: the cheapest possible ptrace + seccomp supervisor, as the
 * floor that agenttrace's overhead is compared against in bench/run.
 *
 *     floor-tracer [-c] [-u] [-s] [-n] [-x] [-e SYSCALL[,SYSCALL...]] [--] COMMAND [ARG...]
 *
 * It forks COMMAND with a seccomp filter that returns SECCOMP_RET_TRACE for
 * the given syscalls (names from the table below, or numbers) and ALLOW for
 * everything else, follows fork/vfork/clone/exec, and resumes every stop
 * with PTRACE_CONT without looking at anything.  What agenttrace spends
 * beyond this floor is its own work (decoding, path resolution, decisions,
 * records); what the floor spends beyond native is the price of a stop.
 * With -c it counts the seccomp stops and the processes and prints them to
 * standard error at the end, so that bench/run can give a cost per stop.
 *
 * With -u the set goes to the tracer by seccomp user notification
 * (SECCOMP_RET_USER_NOTIF) instead of a ptrace stop: a second thread
 * receives each notification and answers "continue"
 * (SECCOMP_USER_NOTIF_FLAG_CONTINUE), while ptrace still follows fork,
 * clone and exec, as a supervisor built that way would.
 *
 * With -s (implies -u) the listener asks the kernel to wake the caller on
 * the answering CPU (SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP, Linux 6.6), as
 * agenttrace's notify engine does; with -n (implies -u) nothing is traced
 * at all: the filter alone follows every process, which is the floor of a
 * supervisor that needs no ptrace.  With -x (implies -u) ptrace follows
 * the execs alone: an exec notification seizes its caller, whose exec
 * event is the only stop, and the task is let go there; forks are not
 * followed at all.  That is the floor of a supervisor that checks at
 * each exec event which file the kernel loaded.
 *
 * clone3 answers ENOSYS, as under agenttrace, so that libc falls back to
 * clone and thread creation costs the same stop in both.
 *
 * Exit status: COMMAND's, 128+N when it was killed by signal N, 125 when
 * the tracer itself failed, 126/127 when COMMAND could not be executed. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <stdint.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/exitcode.h"
#include "lib/log.h"

#define FLOOR_MAX_NRS 128

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

/* The fallback set of bench/run, by name; any other syscall can be given
 * by number (bench/run translates names with the C preprocessor). */
static const struct {
	const char *name;
	int nr;
} floor_names[] = {
	{"execve", __NR_execve}, {"execveat", __NR_execveat},
	{"open", __NR_open}, {"openat", __NR_openat},
	{"openat2", __NR_openat2}, {"creat", __NR_creat},
	{"truncate", __NR_truncate}, {"rename", __NR_rename},
	{"renameat", __NR_renameat}, {"renameat2", __NR_renameat2},
	{"link", __NR_link}, {"linkat", __NR_linkat},
	{"symlink", __NR_symlink}, {"symlinkat", __NR_symlinkat},
	{"unlink", __NR_unlink}, {"unlinkat", __NR_unlinkat},
	{"rmdir", __NR_rmdir}, {"mkdir", __NR_mkdir},
	{"mkdirat", __NR_mkdirat}, {"mknod", __NR_mknod},
	{"mknodat", __NR_mknodat}, {"chmod", __NR_chmod},
	{"fchmodat", __NR_fchmodat}, {"chown", __NR_chown},
	{"lchown", __NR_lchown}, {"fchownat", __NR_fchownat},
	{"utimensat", __NR_utimensat}, {"connect", __NR_connect},
	{"sendto", __NR_sendto}, {"sendmsg", __NR_sendmsg},
	{"sendmmsg", __NR_sendmmsg}, {"bind", __NR_bind},
	{"fork", __NR_fork}, {"vfork", __NR_vfork}, {"clone", __NR_clone},
};

static const char floor_default_set[] =
	"execve,execveat,open,openat,openat2,creat,truncate,rename,renameat,"
	"renameat2,link,linkat,symlink,symlinkat,unlink,unlinkat,rmdir,mkdir,"
	"mkdirat,mknod,mknodat,chmod,fchmodat,chown,lchown,fchownat,utimensat,"
	"connect,sendto,sendmsg,sendmmsg,bind,fork,vfork,clone";

/* Returns the syscall number of NAME (a table name or a decimal number),
 * or -1. */
static int floor_lookup(const char *name)
{
	char *end;
	long nr;

	for (size_t i = 0; i < sizeof(floor_names) / sizeof(floor_names[0]); i++)
		if (strcmp(floor_names[i].name, name) == 0)
			return floor_names[i].nr;
	errno = 0;
	nr = strtol(name, &end, 10);
	if (errno || end == name || *end || nr < 0 || nr > 4095)
		return -1;
	return (int)nr;
}

/* Parses the comma-separated LIST into NRS; returns the count or -1. */
static int floor_parse_set(const char *list, int *nrs)
{
	char buf[4096];
	char *save = NULL;
	int n = 0;

	if (strlen(list) >= sizeof(buf)) {
		warn_msg("syscall list too long");
		return -1;
	}
	strcpy(buf, list);
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int nr = floor_lookup(tok);

		if (nr < 0) {
			warn_msg("unknown syscall '%s' (give its number)", tok);
			return -1;
		}
		if (n == FLOOR_MAX_NRS) {
			warn_msg("more than %d syscalls", FLOOR_MAX_NRS);
			return -1;
		}
		nrs[n++] = nr;
	}
	return n;
}

/* Runs in the child, just before exec: arch check first (another ABI is
 * killed: the floor does not decode it, and nothing in the benchmark uses
 * one), clone3 -> ENOSYS, the set -> TRACE, the rest -> ALLOW.  Returns 0
 * or -errno. */
static int floor_filter_install(const int *nrs, int n, bool notify)
{
	struct sock_filter prog[FLOOR_MAX_NRS + 8];
	struct sock_fprog fprog;
	int len = 0;

	prog[len++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		offsetof(struct seccomp_data, arch));
	prog[len++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
		AUDIT_ARCH_X86_64, 1, 0);
	prog[len++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
	prog[len++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		offsetof(struct seccomp_data, nr));
	prog[len++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone3, 0, 1);
	prog[len++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS);
	/* Each test jumps to the TRACE return that follows the list. */
	for (int i = 0; i < n; i++)
		prog[len++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
			(unsigned)nrs[i], (unsigned char)(n - i), 0);
	prog[len++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	prog[len++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
		notify ? SECCOMP_RET_USER_NOTIF : SECCOMP_RET_TRACE);

	fprog.len = (unsigned short)len;
	fprog.filter = prog;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	/* With NEW_LISTENER the result is the listener's descriptor. */
	long r = syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER,
			 notify ? SECCOMP_FILTER_FLAG_NEW_LISTENER : 0, &fprog);
	return r < 0 ? -errno : (int)r;
}

/* -u: the child's listener descriptor number travels through NOTIFY_PIPE;
 * the parent takes a copy with pidfd_getfd() and then releases the child
 * (one byte on GO_PIPE), which must not exec before: the descriptor is
 * close-on-exec. */
struct floor_notify {
	int fd_pipe[2];
	int go_pipe[2];
	int listener;
	pid_t child;
	bool sync_wake_up;
	unsigned long stops;
};

/* The child: wait to be seized, install the filter, exec.  Exec failures
 * are reported with the shell's codes, as agenttrace does. */
static void __attribute__((noreturn)) floor_child(char **argv, const int *nrs, int n,
						   struct floor_notify *un, bool seized)
{
	sigset_t chld;
	int err;
	char b;

	/* -x blocks SIGCHLD in the tracer; the command gets its own mask. */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_UNBLOCK, &chld, NULL);
	/* Stop until the tracer has seized us, so that the very first exec is
	 * already traced (strace's startup_child does the same). */
	if (seized && kill(getpid(), SIGSTOP) < 0)
		_exit(AT_EXIT_FAILURE);
	err = floor_filter_install(nrs, n, un != NULL);
	if (err < 0) {
		errno = -err;
		warn_errno("cannot install the seccomp filter");
		_exit(AT_EXIT_FAILURE);
	}
	if (un && (write(un->fd_pipe[1], &err, sizeof(err)) != sizeof(err) ||
		   read(un->go_pipe[0], &b, 1) != 1))
		_exit(AT_EXIT_FAILURE);
	execvp(argv[0], argv);
	err = errno;
	warn_errno("cannot run %s", argv[0]);
	_exit(err == ENOENT ? AT_EXIT_NOTFOUND : AT_EXIT_NOEXEC);
}

struct floor_counts {
	unsigned long stops;     /* PTRACE_EVENT_SECCOMP stops */
	unsigned long processes; /* the command and every fork, vfork, clone */
};

/* Resumes every stop until no tracee is left; returns the exit status of
 * CHILD in the shell's convention. */
static int floor_loop(pid_t child, struct floor_counts *counts)
{
	int result = AT_EXIT_FAILURE;

	for (;;) {
		int status, sig;
		pid_t pid = waitpid(-1, &status, __WALL);

		if (pid < 0) {
			if (errno == EINTR)
				continue;
			if (errno != ECHILD)
				warn_errno("waitpid");
			break;
		}
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			if (pid == child)
				result = WIFEXITED(status) ? WEXITSTATUS(status)
							   : AT_EXIT_SIGNAL_BASE + WTERMSIG(status);
			continue;
		}
		if (!WIFSTOPPED(status))
			continue;
		/* PTRACE_SEIZE semantics (ptrace(2), "Stopped states"): an event
		 * stop (seccomp, fork, clone, exec, a new child's first stop, a
		 * group-stop) carries the event in bits 16..23 and is resumed
		 * without a signal; anything else is a signal-delivery stop,
		 * whose signal is re-injected. */
		switch (status >> 16) {
		case PTRACE_EVENT_SECCOMP:
			counts->stops++;
			break;
		case PTRACE_EVENT_FORK:
		case PTRACE_EVENT_VFORK:
		case PTRACE_EVENT_CLONE:
			counts->processes++;
			break;
		}
		sig = (status >> 16) ? 0 : WSTOPSIG(status);
		if (ptrace(PTRACE_CONT, pid, 0, (void *)(long)sig) < 0 && errno != ESRCH)
			warn_errno("PTRACE_CONT %d", (int)pid);
	}
	return result;
}

/* Takes the child's listener with pidfd_getfd() and releases the child. */
static void floor_notify_take(struct floor_notify *un)
{
	int pidfd, fd;
	char b = 1;

	if (read(un->fd_pipe[0], &fd, sizeof(fd)) != sizeof(fd))
		die("the child did not install its filter");
	pidfd = (int)syscall(SYS_pidfd_open, un->child, 0);
	if (pidfd < 0)
		die_errno("pidfd_open");
	un->listener = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
	if (un->listener < 0)
		die_errno("pidfd_getfd");
	close(pidfd);
	if (un->sync_wake_up) {
		uint64_t flags = SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP;

		if (ioctl(un->listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, flags, 0) < 0)
			die_errno("SECCOMP_IOCTL_NOTIF_SET_FLAGS (sync wake-up needs Linux 6.6)");
	}
	if (write(un->go_pipe[1], &b, 1) != 1)
		die_errno("write");
}

/* The -u thread (the main one runs the ptrace loop meanwhile, which the
 * child's first stops need): every notification is answered "continue
 * as if allowed", the user-notification twin of a bare PTRACE_CONT.
 * Ends when the last process using the filter is gone (POLLHUP). */
static void *floor_notify_loop(void *arg)
{
	struct floor_notify *un = arg;
	struct seccomp_notif req;
	struct seccomp_notif_resp resp;

	floor_notify_take(un);
	for (;;) {
		struct pollfd pfd = { .fd = un->listener, .events = POLLIN };

		if (poll(&pfd, 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (!(pfd.revents & POLLIN))
			break;
		memset(&req, 0, sizeof(req));
		if (ioctl(un->listener, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0) {
			if (errno == EINTR || errno == ENOENT)
				continue;
			break;
		}
		un->stops++;
		memset(&resp, 0, sizeof(resp));
		resp.id = req.id;
		resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		/* ENOENT: the caller was killed meanwhile. */
		if (ioctl(un->listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && errno != ENOENT)
			warn_errno("SECCOMP_IOCTL_NOTIF_SEND");
	}
	return NULL;
}

/* -x: the processes are followed only where an exec must be: each exec
 * notification seizes its caller (PTRACE_O_TRACEEXEC alone, no stop
 * until the exec event, the one moment a supervisor has to compare the
 * loaded file with the judged one), which is let go again at that event.
 * Forks are not followed.  One thread does it all: ptrace requests come
 * from the thread that seized.  SIGCHLD (blocked) is read from a signalfd
 * beside the listener. */
static int floor_exec_follow(struct floor_notify *un, pid_t child, bool count)
{
	struct seccomp_notif req;
	struct seccomp_notif_resp resp;
	unsigned long execs = 0;
	bool child_done = false, hup = false;
	int result = AT_EXIT_FAILURE;
	sigset_t chld;
	int sfd;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0)
		die_errno("signalfd");
	un->child = child;
	floor_notify_take(un);
	while (!child_done || !hup) {
		struct pollfd pfd[2] = {
			{ .fd = hup ? -1 : un->listener, .events = POLLIN },
			{ .fd = sfd, .events = POLLIN },
		};
		struct signalfd_siginfo si[8];
		int status;
		pid_t pid;

		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			die_errno("poll");
		}
		if (pfd[0].revents & POLLIN) {
			memset(&req, 0, sizeof(req));
			if (ioctl(un->listener, SECCOMP_IOCTL_NOTIF_RECV, &req) == 0) {
				un->stops++;
				/* EPERM: seized already, by an exec that failed. */
				if ((req.data.nr == __NR_execve || req.data.nr == __NR_execveat) &&
				    ptrace(PTRACE_SEIZE, req.pid, 0, (void *)(long)(PTRACE_O_TRACEEXEC |
					   PTRACE_O_EXITKILL)) < 0 && errno != EPERM)
					warn_errno("PTRACE_SEIZE %d", (int)req.pid);
				memset(&resp, 0, sizeof(resp));
				resp.id = req.id;
				resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
				if (ioctl(un->listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 &&
				    errno != ENOENT)
					warn_errno("SECCOMP_IOCTL_NOTIF_SEND");
			}
		} else if (pfd[0].revents & (POLLHUP | POLLERR)) {
			hup = true;
		}
		if (!(pfd[1].revents & POLLIN))
			continue;
		while (read(sfd, si, sizeof(si)) > 0)
			;
		while ((pid = waitpid(-1, &status, __WALL | WNOHANG)) > 0) {
			if (WIFEXITED(status) || WIFSIGNALED(status)) {
				if (pid == child) {
					child_done = true;
					result = WIFEXITED(status) ? WEXITSTATUS(status)
						 : AT_EXIT_SIGNAL_BASE + WTERMSIG(status);
				}
				continue;
			}
			if (!WIFSTOPPED(status))
				continue;
			if (status >> 16 == PTRACE_EVENT_EXEC) {
				execs++;
				if (ptrace(PTRACE_DETACH, pid, 0, 0) < 0 && errno != ESRCH)
					warn_errno("PTRACE_DETACH %d", (int)pid);
				continue;
			}
			/* A seized task whose exec failed: its signals and
			 * group-stops pass as in floor_loop(). */
			if (ptrace(PTRACE_CONT, pid, 0,
				   (void *)(long)((status >> 16) ? 0 : WSTOPSIG(status))) < 0 &&
			    errno != ESRCH)
				warn_errno("PTRACE_CONT %d", (int)pid);
		}
	}
	if (count)
		fprintf(stderr, "floor-tracer: %lu seccomp stops, %lu exec events\n", un->stops, execs);
	return result;
}

/* -n: no tracer; the listener thread answers while the main one waits
 * for the command.  Processes are not counted: nothing follows them. */
static int floor_notify_only(struct floor_notify *un, pid_t child, bool count)
{
	pthread_t thread;
	int status;

	un->child = child;
	errno = pthread_create(&thread, NULL, floor_notify_loop, un);
	if (errno)
		die_errno("pthread_create");
	while (waitpid(child, &status, 0) < 0)
		if (errno != EINTR)
			die_errno("waitpid");
	/* The command's descendants may still use the filter. */
	pthread_join(thread, NULL);
	if (count)
		fprintf(stderr, "floor-tracer: %lu seccomp stops, 0 processes\n", un->stops);
	return WIFEXITED(status) ? WEXITSTATUS(status) : AT_EXIT_SIGNAL_BASE + WTERMSIG(status);
}

static void __attribute__((noreturn)) floor_usage(int code)
{
	fprintf(code ? stderr : stdout,
		"usage: floor-tracer [-c] [-u] [-s] [-n] [-x] [-e SYSCALL[,SYSCALL...]] [--] COMMAND [ARG...]\n"
		"Runs COMMAND under a ptrace + seccomp supervisor that stops on the\n"
		"given syscalls (default: %s)\nand only resumes.  -c: print the number of stops at the end.\n"
		"-u: seccomp user notification instead of ptrace stops for the syscalls.\n"
		"-s: -u with the caller woken on the answering CPU (Linux 6.6).\n"
		"-n: -u without ptrace: only the filter follows the processes.\n"
		"-x: -u with ptrace at each exec alone (seized at the exec, let go at its event).\n",
		floor_default_set);
	exit(code);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *set = floor_default_set;
	struct floor_counts counts = {0, 1};
	bool count = false, notify = false, no_ptrace = false, exec_only = false;
	struct floor_notify un = { .listener = -1 };
	pthread_t thread;
	int nrs[FLOOR_MAX_NRS];
	int n, opt, status, result;
	pid_t child;

	log_set_program("floor-tracer");
	while ((opt = getopt_long(argc, argv, "+cusnxe:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			count = true;
			break;
		case 'e':
			set = optarg;
			break;
		case 'u':
			notify = true;
			break;
		case 's':
			notify = un.sync_wake_up = true;
			break;
		case 'n':
			notify = no_ptrace = true;
			break;
		case 'x':
			notify = no_ptrace = exec_only = true;
			break;
		case 'h':
			floor_usage(0);
		default:
			floor_usage(AT_EXIT_FAILURE);
		}
	}
	if (optind >= argc)
		floor_usage(AT_EXIT_FAILURE);
	n = floor_parse_set(set, nrs);
	if (n < 0)
		return AT_EXIT_FAILURE;

	if (exec_only) {
		sigset_t chld;

		/* Before the fork: a SIGCHLD before the signalfd exists waits. */
		sigemptyset(&chld);
		sigaddset(&chld, SIGCHLD);
		sigprocmask(SIG_BLOCK, &chld, NULL);
	}
	if (notify && (pipe2(un.fd_pipe, O_CLOEXEC) < 0 || pipe2(un.go_pipe, O_CLOEXEC) < 0))
		die_errno("pipe");
	child = fork();
	if (child < 0)
		die_errno("fork");
	if (child == 0)
		floor_child(argv + optind, nrs, n, notify ? &un : NULL, !no_ptrace);

	if (exec_only)
		return floor_exec_follow(&un, child, count);
	if (no_ptrace)
		return floor_notify_only(&un, child, count);
	if (waitpid(child, &status, WSTOPPED) < 0)
		die_errno("waitpid");
	if (!WIFSTOPPED(status))
		die("child ended before it could be traced");
	if (ptrace(PTRACE_SEIZE, child, 0, (void *)(long)(PTRACE_O_TRACESECCOMP |
			PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE |
			PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL)) < 0) {
		int err = errno;

		kill(child, SIGKILL);
		errno = err;
		die_errno("PTRACE_SEIZE");
	}
	if (kill(child, SIGCONT) < 0)
		die_errno("SIGCONT");
	if (notify) {
		un.child = child;
		errno = pthread_create(&thread, NULL, floor_notify_loop, &un);
		if (errno)
			die_errno("pthread_create");
	}
	result = floor_loop(child, &counts);
	if (notify) {
		/* Every user of the filter is gone: the thread sees POLLHUP. */
		pthread_join(thread, NULL);
		counts.stops = un.stops;
	}
	if (count)
		fprintf(stderr, "floor-tracer: %lu seccomp stops, %lu processes\n",
			counts.stops, counts.processes);
	return result;
}
