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
};

/* What the BPF filter decides alone. */
enum syscall_bpf {
	SYSCALL_BPF_ALLOW = 0,    /* no stop */
	SYSCALL_BPF_TRACE,        /* always stop */
	SYSCALL_BPF_OPEN_FLAGS,   /* stop when the flags argument has write
				   * intent, or always when the policy has
				   * read rules */
	SYSCALL_BPF_ARG_NONZERO,  /* stop when the bpf_arg argument != 0 (a pointer) */
	SYSCALL_BPF_ARG_BITS,     /* stop when the bpf_arg argument & bpf_mask */
	SYSCALL_BPF_ENOSYS,       /* fail with ENOSYS, no stop */
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

enum syscall_net {
	SYSCALL_NET_NONE = 0,
	SYSCALL_NET_CONNECT,  /* sockaddr at args[addr], length args[addrlen] */
	SYSCALL_NET_SENDTO,   /* the same, when the address is not NULL */
	SYSCALL_NET_SENDMSG,  /* struct msghdr at args[addr]: msg_name */
	SYSCALL_NET_SENDMMSG, /* struct mmsghdr[args[addrlen]] at args[addr] */
	SYSCALL_NET_BIND,     /* AF_UNIX path: a write of that path */
};

/* A call that steps around the supervisor when args[arg] & mask (arg 0:
 * always). */
struct syscall_bypass {
	const char *id;  /* "syscall.io_uring", ... (SPEC §5); NULL: none */
	const char *why;
	uint8_t arg;     /* SYSCALL_ARG */
	uint32_t mask;
};

struct syscall_entry {
	const char *name; /* NULL: not in the table */
	uint8_t cls;      /* enum syscall_class */
	uint8_t bpf;      /* enum syscall_bpf */
	uint8_t bpf_arg;  /* SYSCALL_ARG */
	uint32_t bpf_mask;
	uint8_t flags;    /* SYSCALL_ARG of the call's flags (open, AT_*, clone); 0: none */
	uint8_t opts;     /* SYSCALL_OPT_* */
	uint8_t n_paths;
	struct syscall_path paths[2];
	uint8_t argv;     /* exec: SYSCALL_ARG of argv */
	uint8_t net;      /* enum syscall_net */
	uint8_t addr, addrlen; /* SYSCALL_ARG */
	struct syscall_bypass bypass[2];
};

/* One past the highest native syscall number in the table. */
#define SYSCALL_TABLE_SIZE 480

/* The entry of native syscall NR, or NULL when the table does not know it. */
const struct syscall_entry *syscall_lookup(long nr);

/* The bypass of a call of another ABI (i386, x32): "syscall.abi". */
extern const struct syscall_bypass syscall_bypass_abi;
/* A path the supervisor cannot judge (longer than PATH_MAX once resolved,
 * more than 40 symlinks): denied with the kernel's own errno. */
extern const struct syscall_bypass syscall_bypass_unresolvable;

/* ---- generated from this table (filter.c) ---- */

struct sock_filter;
struct rules_policy;

#define FILTER_MAX_INSNS 1024

/* Write the BPF program for POLICY (NULL: a policy without read rules)
 * into PROG (CAP instructions); COUNT_SPAWNS: fork, vfork and clone stop
 * (a --max-procs ceiling counts them).  Returns the instruction count or
 * -errno. */
long filter_build(const struct rules_policy *policy, bool count_spawns, struct sock_filter *prog,
		  size_t cap);

#endif
