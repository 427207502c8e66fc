/* The boundary between the supervisor (loop, tracees, records) and the
 * syscall semantics (table, BPF, registers, memory, paths, decoding).
 *
 * The supervisor, at a PTRACE_EVENT_SECCOMP stop of tracee PID:
 *
 *     struct call c;
 *     call_decode(pid, &ctx, &c);          // what is this call about?
 *     if (c.bypass)                         // a call that steps around us
 *             -> record kind "syscall", call_deny(pid, c.bypass_errno)
 *     for each i < c.n_events:              // 1 event, 2 for rename/link
 *             rules_decide(policy, &c.events[i], &v) ...
 *     deny  -> call_deny(pid, c.deny_errno)  // skip the call, set -errno
 *     allow -> PTRACE_CONT
 *
 * Nothing here allocates on the hot path: struct call carries fixed
 * buffers.  Nothing here writes records or knows the policy. */
#ifndef AGENTTRACE_CALL_H
#define AGENTTRACE_CALL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "rules/rules.h"

/* errno a program sees when a call is denied (documented in agenttrace(1)):
 * file calls and exec EACCES, net EACCES, bypass syscalls EPERM,
 * clone3 and other ABIs ENOSYS (libc falls back / the ABI "does not exist"). */

/* The argv an exec is judged on, whole: a longer one is refused (E2BIG),
 * since the rest would run unjudged.  The kernel's own limit is a quarter
 * of the stack's RLIMIT_STACK, 2 MiB by default. */
#define CALL_MAX_ARGV 65536             /* argv elements */
#define CALL_ARGV_BYTES (2 * 1024 * 1024) /* bytes of argv strings */

/* What the decoder may ask of the supervisor. */
struct call_ctx {
	/* True when PID (a process or a thread) is a task of this session:
	 * /proc/PID/... paths of session processes are reported as
	 * /proc/self/... so that read rules on /proc/[0-9]*&#47;environ only hit
	 * processes outside the session, and signals and pidfds reach only
	 * session tasks.  The supervisor, which is no task of the session,
	 * is never in it. */
	bool (*in_session)(pid_t pid, void *arg);
	void *arg;
};

enum call_signal_scope {
	CALL_SIGNAL_NONE = 0,
	CALL_SIGNAL_GROUP,       /* every process of a process group */
	CALL_SIGNAL_ALL,         /* kill(-1): every process the caller may signal */
};

struct call {
	/* The stop itself. */
	long nr;                 /* syscall number as the tracee's ABI numbers it */
	uint32_t audit_arch;     /* AUDIT_ARCH_X86_64, AUDIT_ARCH_I386, ... */
	bool x32;                /* the __X32_SYSCALL_BIT was set */
	const char *name;        /* "openat", or "syscall_NNN" for unknown ones */
	unsigned long args[6];

	/* A call that would step around the supervisor (doc/SYSCALLS.md,
	 * another ABI, clone with CLONE_UNTRACED, seccomp with a listener,
	 * unshare/setns of new namespaces, ...): deny it with bypass_errno,
	 * record kind "syscall" with bypass_id / bypass_why. */
	bool bypass;
	int bypass_errno;
	const char *bypass_id;   /* "syscall.io_uring", "syscall.abi", ... */
	const char *bypass_why;

	/* The policy events of this call, all to be decided; the call is
	 * denied when any of them is.  symlink gives two, rename and link
	 * more (rules/rules.h, RULES_CALL_EVENTS). */
	size_t n_events;
	struct rules_event events[RULES_CALL_EVENTS];
	int deny_errno;          /* errno the program sees on deny: EACCES, EPERM, ... */
	/* Event i is refused only by an explicit deny rule, not by its
	 * section's fallback: a symlink's target is not written by the call,
	 * but a link towards a protected file is how a later write would
	 * reach it (`ln -s /usr/bin/python3 venv/bin/python` must work). */
	bool explicit_deny_only[RULES_CALL_EVENTS];

	/* Storage that events[] point into. */
	char path[2][PATH_MAX];
	/* path[i] names process path_proc[i]'s /proc entry as /proc/self
	 * (rules_proc_self()); 0: it does not.  What an engine that opens
	 * the path itself must open instead. */
	pid_t path_proc[2];
	/* The walk to path[i] followed a magic link of process path_via[i]'s
	 * /proc entry (/proc/PID/fd/N, cwd, root): that process can make it
	 * lead elsewhere without changing a name.  0: none. */
	pid_t path_via[2];
	/* path[i] as given ended in "/", "." or "..", which the resolved
	 * path no longer shows: rmdir("d/.") is EINVAL, rename("f", "g/")
	 * of a file ENOTDIR.  The kernel acts on the last component as
	 * given, path_odd_last[i] ("name/", ".", "..", or "/" for the root
	 * itself; "" when the name did not end so; a name longer than
	 * NAME_MAX too, which the kernel answers for), in the directory
	 * path_odd_dir[i] (resolved): what an engine making the call itself
	 * makes it on. */
	char path_odd_last[2][PATH_MAX];
	char path_odd_dir[2][PATH_MAX];
	/* path[i] is what a descriptor refers to (AT_EMPTY_PATH with an
	 * empty name, or a NULL name): the call acts on that open file. */
	bool path_by_fd[2];
	/* symlink, symlinkat: the target as given, what the link will hold
	 * (path[1] is where it leads, resolved for the policy). */
	char link_target[PATH_MAX];
	char exe[PATH_MAX];
	const char *argv[CALL_MAX_ARGV + 1];
	char argv_buf[CALL_ARGV_BYTES];
	bool argv_truncated;
	char unix_path[110];
	int flags;               /* open flags, AT_* flags, clone flags: as the call has them */
	/* connect, bind, sendto, sendmsg, sendmmsg (its first message): the
	 * name's bytes as read and judged, whatever its family, what an
	 * engine needs to make the call itself; 0 length: no name. */
	struct sockaddr_storage sockaddr;
	unsigned sockaddr_len;
	/* A UNIX path judged by whose socket it leads to (the supervisor's
	 * endpoint lookup): the socket file found then, which an engine that
	 * makes the call itself must reach, and not another put at the name
	 * since.  0: not judged so. */
	dev_t sock_dev;
	uint64_t sock_ino;
	/* An open (open, openat, openat2, creat): its mode, and openat2's
	 * resolve flags; what an engine needs to make the call itself. */
	bool is_open;
	unsigned open_mode;
	/* A chmod: the mode it sets. */
	bool is_chmod;
	unsigned chmod_mode;
	uint64_t open_resolve;
	int dirfd;

	/* bind: the socket (args[0]) is bound to the address of the event
	 * (inet), or to BIND_NAME (UNIX: the resolved path, or "@name" of
	 * an abstract one, which gives no event); listen: a socket bound
	 * to nothing yet gets an address of every interface.  The
	 * supervisor learns the session's endpoints from both
	 * (tracer/confine/endpoints.h). */
	bool binds;
	bool listens;
	const char *bind_name;

	/* fork, vfork, clone (threads included): no policy event; the
	 * supervisor may refuse it with EAGAIN for --max-procs. */
	bool spawns;
	bool spawns_thread;      /* clone with CLONE_THREAD */

	bool canary;             /* the filter_canary() call: deny with CALL_CANARY_ERRNO, no record */

	/* The kernel's own answer, given without running the call and without
	 * a record: a signal to a process that does not exist (ESRCH), a
	 * path the kernel fails ("" without AT_EMPTY_PATH: ENOENT; a bad
	 * dirfd: EBADF, ENOTDIR). */
	int kernel_errno;

	/* sendmmsg naming more destinations than events[] holds: the call may
	 * run with its message count (argument cut_arg) cut to cut_vlen, so
	 * that the kernel sends the ones decided and the caller sends the
	 * rest again.  Only an engine that can change a stopped call's
	 * arguments (ptrace) can do that. */
	bool cut;
	unsigned cut_arg;
	unsigned long cut_vlen;

	/* kill(0, sig), kill(-pgrp, sig), kill(-1, sig) and pidfd_send_signal
	 * to a process group: which processes such a call reaches, and so
	 * whether it stays in the session, is the supervisor's to work out
	 * (tracer/confine/signal-scope.h).  CALL_SIGNAL_NONE for every other
	 * call: a signal to one process or thread, and pidfd_open and
	 * pidfd_getfd, are decided here (a bypass when the target is outside
	 * the session, per call_ctx.in_session). */
	int signal_scope;        /* enum call_signal_scope */
	pid_t signal_pgrp;       /* CALL_SIGNAL_GROUP: the group; 0: signal_group_of's */
	pid_t signal_group_of;   /* CALL_SIGNAL_GROUP with signal_pgrp 0 */
	int signal_sig;
	char why_buf[160];       /* bypass_why naming the target */

	/* The caller's memory the decision was made on (a path, a sockaddr,
	 * a msghdr and its control, an open_how), which the kernel reads
	 * again when the call is let run: what another task could change in
	 * between (tracer/inspect/vma.h).  SPANS_CUT: more than CALL_SPANS
	 * were read, the rest not noted. */
#define CALL_SPANS 8
	struct call_span {
		unsigned long addr;
		unsigned long len;
	} spans[CALL_SPANS];
	unsigned n_spans;
	bool spans_cut;
	/* An open's path as the caller gave it, hash_text()ed, when it
	 * names a file from the root or the working directory (not from
	 * another descriptor); 0 else (and for every other call).  What a program opens by a name
	 * it was given at its exec is compared by it (exec_pin, execid.h). */
	uint64_t text_hash;
	/* An exec's path as the kernel hands it to a "#!" script's
	 * interpreter: as the caller gave it, or /dev/fd/N/NAME (execveat
	 * from a descriptor), /dev/fd/N (AT_EMPTY_PATH). */
	char exe_text[PATH_MAX];
	/* An unlink of a file a git-config content rule protects, left to
	 * the rest of the policy because its repository's .git was made in
	 * the session: checked again on the directory the engine removes it
	 * from (content_removal_holds()). */
	bool removal_in_new_git;

	/* A call the decoder could not read (tracee gone: -ESRCH; bad pointer:
	 * -EFAULT).  With -EFAULT the supervisor answers EFAULT itself, as the
	 * kernel would for a bad pointer: memory it cannot read (secret
	 * memory) is memory the kernel may still read in the caller's
	 * context.  -ESRCH means the tracee died, nothing to do. */
	int error;

	/* Storage for name when the table does not know the call
	 * ("syscall_NNN", in the numbering of the call's ABI). */
	char name_buf[32];
};

struct arch_stop;

/* Decode the call ST of PID (its number and arguments, as a ptrace stop or
 * a seccomp notification gives them: strings, paths resolved in the
 * tracee's view).  Returns 0, or -errno as in c->error. */
int call_decode_at(pid_t pid, const struct call_ctx *ctx, const struct arch_stop *st,
		   struct call *c);

/* call_decode_at() of the call PID is stopped at (ptrace). */
int call_decode(pid_t pid, const struct call_ctx *ctx, struct call *c);

/* At a ptrace seccomp stop: skip the call and make it return RET (a value,
 * or -errno) without running it (nr := -1).  Returns 0 or -errno (ESRCH
 * when the tracee died). */
int call_skip(pid_t pid, long ret);

/* call_skip() of -ERR. */
int call_deny(pid_t pid, int err);

/* At a ptrace seccomp stop: run the call with argument I (0..5) := V. */
int call_set_arg(pid_t pid, unsigned i, unsigned long v);

/* What the seccomp filter sends to the supervisor, and how. */
struct filter_spec {
	const struct rules_policy *policy; /* its read rules; NULL: none */
	bool count_spawns;  /* every fork, vfork and clone stops (--max-procs);
			     * without it only a clone with a bypass flag does */
	bool notify;        /* seccomp user notification (a listener) instead of
			     * a ptrace stop */
};

/* The seccomp filter of F: arch check first, TRACE (or USER_NOTIF) only
 * for the syscalls (and flag combinations) the policy needs, ENOSYS for
 * clone3, ALLOW for the rest.  Installed in the child after
 * PR_SET_NO_NEW_PRIVS, just before exec.  Returns 0, the listener's
 * descriptor (notify), or -errno. */
int filter_install(const struct filter_spec *f);

/* doc/THREAT-MODEL.md: before the command runs, the filter and the supervisor must be
 * proven in force end to end.  The child, after filter_install() and once
 * traced, calls filter_canary(): an openat(AT_FDCWD, CALL_CANARY_PATH,
 * O_WRONLY) that the filter sends to the supervisor; call_decode() sets
 * c->canary, and the supervisor denies it with CALL_CANARY_ERRNO and writes
 * no record.  Returns 0 when refused exactly so; the child exits 125
 * otherwise. */
#define CALL_CANARY_PATH "/proc/self/agenttrace-canary"
#define CALL_CANARY_ERRNO ENOTRECOVERABLE
int filter_canary(void);

#endif
