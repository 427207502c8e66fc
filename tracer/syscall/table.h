/* THE syscall table: for each syscall the supervisor cares about on the
 * native ABI, what it is (class), where its paths, flags, addresses and
 * argv are, how its paths are looked up, what the seccomp filter does with
 * it alone, and when it steps around the supervisor.  filter.c generates
 * the BPF program from it, decode.c decodes stops with it, doc/SYSCALLS.md
 * explains it.  Nothing else names a syscall argument. */
#ifndef AGENTTRACE_SYSCALLS_H
#define AGENTTRACE_SYSCALLS_H

#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/syscall-open.h"

enum syscall_class {
	SYSCALL_OTHER = 0,
	SYSCALL_EXEC,   /* runs a program: exec event */
	SYSCALL_WRITE,  /* creates, changes, renames, links or removes a path */
	SYSCALL_OPEN,   /* read or write event, by the open flags */
	SYSCALL_NET,    /* connect/send to an address; bind of a UNIX path */
	SYSCALL_SPAWN,  /* a new process or thread */
	SYSCALL_BYPASS, /* would step around the supervisor: denied */
	SYSCALL_SIGNAL, /* signals or reaches into a process: only the session's */
};

/* What the BPF filter decides alone. */
enum syscall_bpf {
	SYSCALL_BPF_ALLOW = 0,    /* no stop */
	SYSCALL_BPF_TRACE,        /* always stop */
	SYSCALL_BPF_OPEN_FLAGS,   /* stop when the flags argument has write
				   * intent, or always when the policy has
				   * read rules */
	SYSCALL_BPF_ARG_NONZERO,  /* stop when the bpf_arg argument != 0 (a pointer) */
	SYSCALL_BPF_ENOSYS,       /* fail with ENOSYS, no stop */
	SYSCALL_BPF_BYPASS,       /* stop exactly when one of the entry's bypass
				   * tests holds: the registers tell the refused
				   * combinations, every other call runs unstopped */
};

/* How the last component of a path is looked up. */
enum syscall_follow {
	SYSCALL_FOLLOW = 0,        /* symlinks followed */
	SYSCALL_NOFOLLOW,          /* the link itself (unlink, rename, lchown, ...) */
	SYSCALL_FOLLOW_UNLESS_AT,  /* followed unless flags have AT_SYMLINK_NOFOLLOW */
	SYSCALL_FOLLOW_IF_AT,      /* followed only with AT_SYMLINK_FOLLOW (linkat) */
	SYSCALL_FOLLOW_OPEN,       /* by the open flags: O_NOFOLLOW, O_CREAT|O_EXCL */
};

/* When the object is the dirfd itself rather than a name. */
#define SYSCALL_EMPTY_AT 0x1   /* "" with AT_EMPTY_PATH in flags */
#define SYSCALL_EMPTY_NULL 0x2 /* a NULL name (utimensat, futimesat) */

/* Argument positions are stored 1-based so that 0 (the default of a
 * designated initializer) means "none": SYSCALL_ARG(0) is args[0]. */
#define SYSCALL_ARG(i) ((i) + 1)

struct syscall_path {
	uint8_t dirfd;  /* SYSCALL_ARG of the dirfd; 0: AT_FDCWD */
	uint8_t name;   /* SYSCALL_ARG of the name; 0: the object is the fd at dirfd */
	uint8_t follow; /* enum syscall_follow */
	uint8_t empty;  /* SYSCALL_EMPTY_* */
};

/* Options of an entry. */
#define SYSCALL_OPT_SYMLINK 0x1 /* paths[1] is a symlink's target text, resolved
				 * from the directory of the link paths[0] */
#define SYSCALL_OPT_OPENAT2 0x2 /* open flags in struct open_how at args[2], size args[3] */
#define SYSCALL_OPT_CREAT 0x4   /* open flags are O_CREAT|O_WRONLY|O_TRUNC */
#define SYSCALL_OPT_TIMEX 0x8   /* a struct timex at args[addr]: the bypass holds only
				 * when its modes set something (adjtimex, clock_adjtime) */
#define SYSCALL_OPT_OWNER 0x10  /* fcntl F_SETOWN, F_SETOWN_EX; ioctl FIOSETOWN, SIOCSPGRP:
				 * the signal-outside bypass holds only when the owner
				 * named is outside the session (decode-signal.c) */
#define SYSCALL_OPT_NEW_NAME 0x20 /* the file at paths[0] gets the name paths[1]
				   * (rename, link): it is read too; both files,
				   * each named by the other, with RENAME_EXCHANGE
				   * (lib/syscall-rename.h) */
#define SYSCALL_OPT_NAMES 0x40  /* the call's writes change names only, never a
				 * file's bytes or attributes (unlink, rmdir,
				 * rename, link, symlink, mkdir, mknod): what
				 * another name of a denied file is, is then no
				 * matter (tracer/confine/linked.h) */

enum syscall_net {
	SYSCALL_NET_NONE = 0,
	SYSCALL_NET_CONNECT,  /* sockaddr at args[addr], length args[addrlen] */
	SYSCALL_NET_SENDTO,   /* the same, when the address is not NULL */
	SYSCALL_NET_SENDMSG,  /* struct msghdr at args[addr]: msg_name */
	SYSCALL_NET_SENDMMSG, /* struct mmsghdr[args[addrlen]] at args[addr] */
	SYSCALL_NET_BIND,     /* AF_UNIX path: a write of that path; inet: a bind event */
	SYSCALL_NET_LISTEN,   /* no address: the socket's own (the supervisor's to read) */
};

/* A test of one argument's low 32 bits (the kernel's view of an int
 * flag, an ioctl number, a mode), shared by the BPF filter and the
 * decoder so that both judge the same bits. */
enum syscall_test_op {
	SYSCALL_TEST_BITS = 0, /* args[arg] & mask is not 0 */
	SYSCALL_TEST_IN,       /* args[arg] & mask is one of values[0..n) */
	SYSCALL_TEST_NOT_IN,   /* args[arg] & mask is none of values[0..n) */
};

#define SYSCALL_TEST_VALUES 4

struct syscall_test {
	uint8_t arg;  /* SYSCALL_ARG; 0: no test (true) */
	uint8_t op;   /* enum syscall_test_op */
	uint8_t n;    /* values used by IN and NOT_IN */
	uint32_t mask;
	uint32_t values[SYSCALL_TEST_VALUES];
};

#define SYSCALL_BYPASS_TESTS 3

/* A call that steps around the supervisor when every one of its tests
 * holds (no test: always). */
struct syscall_bypass {
	const char *id;  /* "syscall.io_uring", ... (doc/SYSCALLS.md); NULL: none */
	const char *why;
	struct syscall_test test[SYSCALL_BYPASS_TESTS];
	int err;         /* errno the caller sees; 0: EPERM */
	/* A refusal of a process outside the session (decode-signal.c):
	 * what the call would have had of it ("a pidfd of"); NULL: a
	 * signal. */
	const char *reach;
};

/* Whether the low 32 bits of V pass test T (the decoder's half; filter.c
 * compiles the same test into BPF). */
static inline bool syscall_test_holds(const struct syscall_test *t, unsigned long v)
{
	uint32_t x = (uint32_t)v & t->mask;
	bool in = false;

	if (!t->arg)
		return true;
	if (t->op == SYSCALL_TEST_BITS)
		return x != 0;
	for (unsigned i = 0; i < t->n && i < SYSCALL_TEST_VALUES; i++)
		in = in || x == t->values[i];
	return t->op == SYSCALL_TEST_IN ? in : !in;
}

/* What a call of class SYSCALL_SIGNAL names (tracer/syscall/decode-signal.c). */
enum syscall_signal {
	SYSCALL_SIGNAL_KILL = 1,    /* kill(pid, sig): >0 a process, 0 and <-1 a group, -1 all */
	SYSCALL_SIGNAL_TKILL,       /* tkill(tid, sig) */
	SYSCALL_SIGNAL_TGKILL,      /* tgkill(tgid, tid, sig), rt_tgsigqueueinfo(tgid, tid, sig, info) */
	SYSCALL_SIGNAL_SIGQUEUE,    /* rt_sigqueueinfo(tgid, sig, info) */
	SYSCALL_SIGNAL_PIDFD_SEND,  /* pidfd_send_signal(pidfd, sig, info, flags) */
	SYSCALL_SIGNAL_PIDFD_OPEN,  /* pidfd_open(pid, flags) */
	SYSCALL_SIGNAL_PIDFD_GETFD, /* pidfd_getfd(pidfd, fd, flags) */
	SYSCALL_SIGNAL_PRLIMIT,     /* prlimit64(pid, resource, new, old): a pid and new limits */
	SYSCALL_SIGNAL_VM_READ,     /* process_vm_readv(pid, ...) */
};

struct syscall_entry {
	const char *name; /* NULL: not in the table */
	uint8_t cls;      /* enum syscall_class */
	uint8_t bpf;      /* enum syscall_bpf */
	uint8_t bpf_arg;  /* SYSCALL_ARG of OPEN_FLAGS and ARG_NONZERO */
	uint8_t flags;    /* SYSCALL_ARG of the call's flags (open, AT_*, clone); 0: none */
	uint8_t mode;     /* SYSCALL_ARG of the mode a chmod sets; 0: none */
	uint8_t opts;     /* SYSCALL_OPT_* */
	uint8_t n_paths;
	struct syscall_path paths[2];
	uint8_t argv;     /* exec: SYSCALL_ARG of argv */
	uint8_t net;      /* enum syscall_net */
	uint8_t addr, addrlen; /* SYSCALL_ARG */
	uint8_t signal;   /* enum syscall_signal (class SYSCALL_SIGNAL) */
	struct syscall_bypass bypass[4];
};

/* One past the highest native syscall number in the table. */
#define SYSCALL_TABLE_SIZE 480

/* The entry of native syscall NR, or NULL when the table does not know it. */
const struct syscall_entry *syscall_lookup(long nr);

/* The entry of the native call NAME ("renameat2"; the preload backend's
 * libc functions of the same name), or NULL.  A binary search of an
 * index of the table made at the first call. */
const struct syscall_entry *syscall_lookup_name(const char *name);

/* The bypass of a call of another ABI (i386, x32): "syscall.abi". */
extern const struct syscall_bypass syscall_bypass_abi;
/* A path the supervisor cannot judge (longer than PATH_MAX once resolved,
 * more than 40 symlinks): denied with the kernel's own errno. */
extern const struct syscall_bypass syscall_bypass_unresolvable;
/* An exec whose arguments are more than the decoder keeps to judge
 * (call.h CALL_MAX_ARGV, CALL_ARGV_BYTES): refused with E2BIG, the
 * kernel's errno for an argument list too long, since what was not
 * judged would run. */
extern const struct syscall_bypass syscall_bypass_argv_too_long;
/* An open of /dev/userfaultfd: "syscall.userfaultfd" by another route. */
extern const struct syscall_bypass syscall_bypass_userfaultfd_dev;
/* A message whose control data routes it past its name (an IPv6
 * routing header), or holds more than the decoder reads. */
extern const struct syscall_bypass syscall_bypass_routing_header;
extern const struct syscall_bypass syscall_bypass_control_size;
/* A signal, a pidfd, new resource limits or a read of memory, of a
 * process outside the session. */
extern const struct syscall_bypass syscall_bypass_signal_outside;
extern const struct syscall_bypass syscall_bypass_pidfd_outside;
extern const struct syscall_bypass syscall_bypass_prlimit_outside;
extern const struct syscall_bypass syscall_bypass_vm_read_outside;

/* ---- generated from this table (filter.c) ---- */

struct sock_filter;
struct filter_spec;

#define FILTER_MAX_INSNS 1024

/* Write the BPF program for POLICY (NULL: a policy without read rules)
 * into PROG (CAP instructions); COUNT_SPAWNS: fork, vfork and clone stop
 * (a --max-procs ceiling counts them).  Returns the instruction count or
 * -errno. */
long filter_build(const struct filter_spec *f, struct sock_filter *prog, size_t cap);

#endif
