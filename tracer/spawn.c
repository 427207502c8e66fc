/* Starting the command.
 *
 * Handshake (chosen over PTRACE_TRACEME + raise(SIGSTOP) because group-stop
 * handling with PTRACE_LISTEN needs PTRACE_SEIZE, and seizing a running
 * child avoids any stop/continue dance):
 *
 *   parent                               child
 *   fork ------------------------------> the masks' namespace and mounts
 *   read(mask report) <----------------- (when there are masks)
 *                                        blocks in read(sync)
 *   PTRACE_SEIZE(child, options)
 *   write(sync, 1 byte) ---------------> env.drop, NO_NEW_PRIVS,
 *                                        filter_install(), filter_canary()
 *   loop: canary stop -> deny <--------- (a traced openat, refused)
 *                                        rlimits, exec (PATH search)
 *
 * The child reports a failure before exec through a CLOEXEC pipe: a
 * successful exec closes it, so the parent reads either a struct or EOF.
 * If the parent dies first, the child reads EOF on the sync pipe and
 * exits; once seized, PTRACE_O_EXITKILL kills it with the supervisor.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <paths.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/exitcode.h"
#include "lib/log.h"
#include "lib/xalloc.h"
#include "tracer/signals.h"
#include "tracer/syscall/call.h"
#include "tracer/shim/channel.h"
#include "tracer/confine/caps.h"
#include "tracer/confine/landlock.h"
#include "tracer/confine/limits.h"
#include "tracer/confine/mask.h"
#include "tracer/ptrace/loop.h"
#include "tracer/shim/preload-mode.h"
#include "tracer/spawn.h"
#include "tracer/unotify/listener.h"

#define SPAWN_PTRACE_OPTIONS                                                      \
	(PTRACE_O_EXITKILL | PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEEXEC |           \
	 PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE |          \
	 PTRACE_O_TRACESECCOMP)

struct spawn_report {
	int stage; /* enum session_child_stage */
	int err;
};

extern char **environ;

static void spawn_child_fail(int fd, enum session_child_stage stage, int err, int code)
{
	struct spawn_report r = { stage, err };
	ssize_t n;

	do
		n = write(fd, &r, sizeof(r));
	while (n < 0 && errno == EINTR);
	_exit(code);
}

/* env.drop: compact environ in place (no allocation between fork and
 * exec). */
static void spawn_drop_env(const struct rules_policy *p)
{
	char **r, **w;

	if (!p->env_drop_count || !environ)
		return;
	for (r = w = environ; *r; r++) {
		const char *eq = strchr(*r, '=');
		size_t len = eq ? (size_t)(eq - *r) : strlen(*r);

		if (!rules_env_dropped(p, *r, len))
			*w++ = *r;
	}
	*w = NULL;
}

/* execve(PATH) and, when it is no executable the kernel knows
 * (ENOEXEC), /bin/sh with it, as execvp(3) does for scripts without #!. */
static void spawn_exec_one(const char *path, char **argv)
{
	size_t argc = 0;
	char **sh_argv;

	execve(path, argv, environ);
	if (errno != ENOEXEC)
		return;
	while (argv[argc])
		argc++;
	/* agenttrace has one thread: malloc is safe in its forked child. */
	sh_argv = malloc((argc + 2) * sizeof(*sh_argv));
	if (sh_argv) {
		sh_argv[0] = (char *)_PATH_BSHELL;
		sh_argv[1] = (char *)path;
		for (size_t i = 1; i <= argc; i++)
			sh_argv[i + 1] = argv[i];
		execve(_PATH_BSHELL, sh_argv, environ);
		free(sh_argv);
	}
	errno = ENOEXEC;
}

/* execvp(3)'s search (glibc posix/execvpe.c: the same candidates, the
 * same errors that go on to the next one, EACCES remembered), less the
 * execve of every directory that has no such name: each would be a
 * seccomp stop and a path resolution, for an ENOENT the kernel gives
 * anyway (with this machine's PATH, eight of them before /usr/bin/true).
 * stat() is no traced call.  A name that appears between the stat and
 * the exec it would have had is the race of any PATH search. */
static void spawn_exec(char **argv)
{
	const char *file = argv[0], *path = getenv("PATH"), *p, *end;
	size_t fl = strlen(file);
	bool eacces = false;
	char cand[PATH_MAX];
	struct stat st;
	int last = ENOENT;

	if (!fl || fl > NAME_MAX || strchr(file, '/')) {
		execvp(file, argv);
		return;
	}
	if (!path) {
		execvp(file, argv); /* libc's default search path */
		return;
	}
	for (p = path;; p = end + 1) {
		size_t dl;

		end = strchrnul(p, ':');
		dl = (size_t)(end - p);
		/* An empty entry is the current directory (the bare name). */
		if (dl + 1 + fl + 1 > sizeof(cand))
			goto next; /* skipped, as libc does */
		memcpy(cand, p, dl);
		if (dl)
			cand[dl++] = '/';
		memcpy(cand + dl, file, fl + 1);
		if (stat(cand, &st) < 0 && (errno == ENOENT || errno == ENOTDIR)) {
			last = errno;
			goto next;
		}
		spawn_exec_one(cand, argv);
		last = errno;
		switch (errno) {
		case EACCES:
			eacces = true;
			break;
		case ENOENT:
		case ESTALE:
		case ENOTDIR:
		case ENODEV:
		case ETIMEDOUT:
			break;
		default:
			return;
		}
next:
		if (!*end)
			break;
	}
	errno = eacces ? EACCES : last;
}

bool spawn_runs_as_root(const struct session *s)
{
	return s->switch_user ? s->uid == 0 : geteuid() == 0;
}

caps_set spawn_caps_kept(const struct session *s)
{
	return s->opt->keep_caps ? s->opt->keep_caps : caps_default_keep();
}

const char *spawn_root_warning(const struct session *s)
{
	static char why[1024];
	char names[768];

	caps_text(spawn_caps_kept(s), names, sizeof(names));
	snprintf(why, sizeof(why),
		 "the command runs as root, keeping the capabilities %s; "
		 "--user USER would run it unprivileged", names);
	return why;
}

static void spawn_child(struct session *s, int sync_fd, int report_fd, int listener_sock,
			bool in_cgroup)
{
	char **argv = s->opt->command;
	ssize_t n;
	char b;
	int r, e;

	signals_child_reset();
	if (s->stderr_orig >= 0 && dup2(s->stderr_orig, STDERR_FILENO) < 0)
		spawn_child_fail(report_fd, SESSION_CHILD_SYNC, errno, AT_EXIT_FAILURE);
	/* Before the seize, so that the supervisor waits on an untraced
	 * child, and before the filter, which refuses mount and unshare. */
	mask_child_apply(s);
	do
		n = read(sync_fd, &b, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1)
		spawn_child_fail(report_fd, SESSION_CHILD_SYNC, 0, AT_EXIT_FAILURE);
	close(sync_fd);
	/* Before the filter, which would see the write, and before the
	 * command's first instruction, which the ceilings count. */
	if (!in_cgroup && (e = limits_enter(s)) < 0)
		spawn_child_fail(report_fd, SESSION_CHILD_CGROUP, -e, AT_EXIT_FAILURE);

	spawn_drop_env(s->policy);
	/* preload-only: no filter, no tracer; the shim (LD_PRELOAD) decides. */
	if (!s->preload_only && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		spawn_child_fail(report_fd, SESSION_CHILD_FILTER, errno, AT_EXIT_FAILURE);
	if (!s->preload_only) {
		struct filter_spec f = {
			.policy = s->policy,
			.count_spawns = session_counts_spawns(s),
			.notify = s->engine == SESSION_ENGINE_NOTIFY,
		};

		r = filter_install(&f);
		if (r < 0)
			spawn_child_fail(report_fd, SESSION_CHILD_FILTER, -r, AT_EXIT_FAILURE);
		/* The notify engine: the listener to agenttrace, before the
		 * canary that it must answer. */
		if (f.notify) {
			r = unotify_child_send(listener_sock, r);
			if (r < 0)
				spawn_child_fail(report_fd, SESSION_CHILD_FILTER, -r, AT_EXIT_FAILURE);
		}
	}
	/* doc/THREAT-MODEL.md, fails closed: the command runs only once a call that the
	 * filter sends to the supervisor was refused by the supervisor. */
	r = s->preload_only ? 0 : filter_canary();
	if (r != 0)
		spawn_child_fail(report_fd, SESSION_CHILD_CANARY, r < 0 ? -r : EPROTO,
				 AT_EXIT_FAILURE);
	/* The backstop goes on after the canary (which must reach the
	 * supervisor, not Landlock) and before the credentials drop. */
	r = landlock_child_apply(s);
	if (r < 0)
		spawn_child_fail(report_fd, SESSION_CHILD_LANDLOCK, -r, AT_EXIT_FAILURE);
	/* --user last, once the filter and Landlock are in force: nothing
	 * runs as the user unsupervised, and NO_NEW_PRIVS (set above) keeps
	 * the exec from gaining privileges back.  Supplementary groups are
	 * dropped (setgroups needs CAP_SETGID, so before setresgid/uid). */
	if (s->switch_user &&
	    (setgroups(0, NULL) < 0 || setresgid(s->gid, s->gid, s->gid) < 0 ||
	     setresuid(s->uid, s->uid, s->uid) < 0))
		spawn_child_fail(report_fd, SESSION_CHILD_USER, errno, AT_EXIT_FAILURE);
	r = limits_apply_rlimits(s);
	if (r < 0)
		spawn_child_fail(report_fd, SESSION_CHILD_RLIMIT, -r, AT_EXIT_FAILURE);
	/* Root without root's powers, last (the rlimits above may need
	 * CAP_SYS_RESOURCE, the switch of --user CAP_SETUID): the bounding set
	 * keeps the exec as root from giving the dropped ones back, and
	 * NO_NEW_PRIVS the set-id programs the command may run.  A --user
	 * other than root lost every capability in setresuid() already. */
	if (spawn_runs_as_root(s)) {
		r = caps_drop_child(spawn_caps_kept(s));
		if (r < 0)
			spawn_child_fail(report_fd, SESSION_CHILD_CAPS, -r, AT_EXIT_FAILURE);
	}
	spawn_exec(argv);
	e = errno;
	/* As env(1): 127 when the program does not exist, 126 when it exists
	 * but cannot be run (including an exec denied by the policy). */
	spawn_child_fail(report_fd, SESSION_CHILD_EXEC, e,
			 e == ENOENT ? AT_EXIT_NOTFOUND : AT_EXIT_NOEXEC);
}

static pid_t spawn_tracer_of(pid_t pid)
{
	char path[64], line[256];
	FILE *f;
	long tracer = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "TracerPid: %ld", &tracer) == 1)
			break;
	fclose(f);
	return (pid_t)tracer;
}

static void spawn_ptrace_hint(pid_t child, int err)
{
	pid_t tracer = spawn_tracer_of(child);
	pid_t self_tracer = spawn_tracer_of(getpid());

	if (tracer > 0 && tracer != getpid()) {
		hint_msg("the command is already traced by pid %d (agenttrace run under "
			 "strace -f or a debugger that follows forks?); run agenttrace outside it",
			 (int)tracer);
	} else if (err == EPERM) {
		hint_msg("ptrace is forbidden here%s: check /proc/sys/kernel/yama/ptrace_scope "
			 "(0 or 1 needed) or the container's seccomp profile "
			 "(docker: --cap-add SYS_PTRACE or --security-opt seccomp=unconfined)",
			 self_tracer > 0 ? " (agenttrace itself is traced)" : "");
	} else if (err == ENOSYS) {
		hint_msg("this kernel has no ptrace support");
	}
}

int spawn_command(struct session *s)
{
	int sync_fds[2], report_fds[2];
	pid_t pid;
	bool in_cgroup;
	const char *const *argv = (const char *const *)s->opt->command;
	size_t argc = 0;
	struct tracee_info *info;
	char b = 1;
	int e, listener_sock;

	if (s->preload_only) {
		e = preload_mode_decide_command(s);
		if (e != AT_GO_ON)
			return e;
	}
	/* Orphans of the command are reparented to agenttrace rather than to
	 * init, so that what it leaves behind is killed and reaped here
	 * (loop_run()) and never lingers, not even as a zombie. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
		debug_msg("PR_SET_CHILD_SUBREAPER: %s", strerror(errno));
	limits_prepare(s);
	if (pipe2(sync_fds, O_CLOEXEC) < 0 || pipe2(report_fds, O_CLOEXEC) < 0) {
		error_msg("cannot create a pipe: %s", strerror(errno));
		return AT_EXIT_FAILURE;
	}
	listener_sock = -1;
	if (!s->preload_only && s->engine == SESSION_ENGINE_NOTIFY) {
		listener_sock = unotify_prepare(s);
		if (listener_sock < 0) {
			error_msg("cannot create the listener's socket: %s", strerror(-listener_sock));
			close(sync_fds[0]);
			close(sync_fds[1]);
			close(report_fds[0]);
			close(report_fds[1]);
			return AT_EXIT_FAILURE;
		}
	}
	e = mask_spawn_prepare(s);
	if (e < 0) {
		error_msg("cannot create the masks' pipe: %s", strerror(-e));
		close(sync_fds[0]);
		close(sync_fds[1]);
		close(report_fds[0]);
		close(report_fds[1]);
		if (listener_sock >= 0)
			close(listener_sock);
		return AT_EXIT_FAILURE;
	}
	fflush(NULL);
	pid = limits_fork(s, &in_cgroup);
	if (pid < 0) {
		error_msg("cannot fork: %s", strerror(errno));
		close(sync_fds[0]);
		close(sync_fds[1]);
		close(report_fds[0]);
		close(report_fds[1]);
		if (listener_sock >= 0)
			close(listener_sock);
		return AT_EXIT_FAILURE;
	}
	if (pid == 0) {
		close(sync_fds[1]);
		close(report_fds[0]);
		if (s->log_fd >= 0)
			close(s->log_fd);
		spawn_child(s, sync_fds[0], report_fds[1], listener_sock, in_cgroup);
	}
	close(sync_fds[0]);
	close(report_fds[1]);
	if (listener_sock >= 0)
		close(listener_sock);
	s->child_pipe = report_fds[0];

	e = mask_child_report(s);
	if (e != AT_GO_ON) {
		kill(pid, SIGKILL);
		close(sync_fds[1]);
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		close(s->child_pipe);
		s->child_pipe = -1;
		if (e != AT_MASK_RETRY)
			return e;
		unotify_close(s);
		return spawn_command(s);
	}
	if (!s->preload_only && ptrace(PTRACE_SEIZE, pid, 0L, (long)SPAWN_PTRACE_OPTIONS) < 0) {
		bool fallback;

		e = errno;
		/* --backend auto: the shim alone rather than nothing (agenttrace(1)). */
		fallback = s->opt->backend == OPTIONS_BACKEND_AUTO && channel_to_preload(s) == 0;
		if (!fallback) {
			error_msg("cannot trace the command: %s", strerror(e));
			spawn_ptrace_hint(pid, e);
		}
		kill(pid, SIGKILL);
		close(sync_fds[1]);
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		if (!fallback)
			return AT_EXIT_FAILURE;
		warn_msg("cannot trace the command (%s): falling back to the preload backend, "
			 "which static binaries and raw syscalls bypass", strerror(e));
		close(s->child_pipe);
		s->child_pipe = -1;
		unotify_close(s);
		return spawn_command(s);
	}
	s->main_pid = pid;
	while (argv[argc])
		argc++;
	/* Until it execs, the child is a copy of agenttrace; with the preload
	 * backend no exec event comes, and the program it runs is the one
	 * preload_mode_decide_command() resolved. */
	info = tracee_info_new(s->preload_only && s->command_exe ? s->command_exe :
			       s->self_exe ? s->self_exe : "agenttrace", argv, argc);
	tracee_add(&s->tasks, pid, pid, getpid(), info);
	/* What the summary names: loop.c takes it at the exec event. */
	if (s->preload_only && s->command_exe && !s->main_info)
		s->main_info = tracee_info_ref(info);
	tracee_info_unref(info);
	s->processes_seen = 1;
	/* Without --user the command runs as agenttrace's own user, whose
	 * processes may read a dumpable process's memory (/proc/PID/mem,
	 * process_vm_readv) and make it dump core: agenttrace holds what the
	 * command was not given (the environment the policy withheld).  Not
	 * dumpable from here on, once the child (which inherited it
	 * dumpable, to be seized by a supervisor that is not root) is traced
	 * and before it runs anything of the command's; its exec makes it
	 * dumpable as any program. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		warn_errno("PR_SET_DUMPABLE");

	if (write(sync_fds[1], &b, 1) != 1) {
		error_msg("cannot start the command: %s", strerror(errno));
		close(sync_fds[1]);
		return AT_EXIT_FAILURE;
	}
	close(sync_fds[1]);
	return AT_GO_ON;
}

int spawn_outcome(struct session *s)
{
	struct spawn_report r;
	const char *cmd = s->opt->command[0];
	ssize_t n;

	if (s->child_pipe < 0)
		return AT_GO_ON;
	do
		n = read(s->child_pipe, &r, sizeof(r));
	while (n < 0 && errno == EINTR);
	close(s->child_pipe);
	s->child_pipe = -1;
	if (n != (ssize_t)sizeof(r))
		return AT_GO_ON; /* EOF: the exec succeeded */
	switch (r.stage) {
	case SESSION_CHILD_SYNC:
		return AT_EXIT_FAILURE;
	case SESSION_CHILD_FILTER:
		error_msg("cannot install the seccomp filter: %s", strerror(r.err));
		hint_msg("agenttrace needs a kernel with CONFIG_SECCOMP_FILTER and seccomp "
			 "allowed in this container");
		return AT_EXIT_FAILURE;
	case SESSION_CHILD_CANARY:
		error_msg("the supervisor is not in force (the canary call was not refused: %s); "
			 "not running the command unsupervised", strerror(r.err));
		return AT_EXIT_FAILURE;
	case SESSION_CHILD_RLIMIT:
		error_msg("cannot set the resource limits: %s", strerror(r.err));
		return AT_EXIT_FAILURE;
	case SESSION_CHILD_LANDLOCK:
		error_msg("cannot put the Landlock backstop in force: %s", strerror(r.err));
		hint_msg("--landlock off runs without it (the supervisor still enforces the policy)");
		return AT_EXIT_FAILURE;
	case SESSION_CHILD_USER:
		error_msg("--user %s: cannot switch to uid %u gid %u: %s", s->opt->user,
			    (unsigned)s->uid, (unsigned)s->gid, strerror(r.err));
		return AT_EXIT_FAILURE;
	case SESSION_CHILD_CAPS:
		error_msg("cannot drop the capabilities of a root command: %s", strerror(r.err));
		hint_msg("--keep-caps all keeps them all; --user USER runs the command unprivileged");
		return AT_EXIT_FAILURE;
	case SESSION_CHILD_CGROUP:
		error_msg("cannot put the command into the session's cgroup: %s", strerror(r.err));
		return AT_EXIT_FAILURE;
	case SESSION_CHILD_EXEC:
		error_msg("'%s': %s", cmd, strerror(r.err));
		return r.err == ENOENT ? AT_EXIT_NOTFOUND : AT_EXIT_NOEXEC;
	default:
		return AT_EXIT_FAILURE;
	}
}
