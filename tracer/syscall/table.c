/* The x86_64 syscall table (doc/SYSCALLS.md says why each row is there).
 * Numbers come from <asm/unistd_64.h>; the few that Debian 12's kernel
 * headers (6.1) predate are spelled out below from the kernel's
 * arch/x86/entry/syscalls/syscall_64.tbl. */
#include "config.h"

#include <fcntl.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/syscall.h>

#include "tracer/syscall/table.h"

#ifndef __NR_fchmodat2
#define __NR_fchmodat2 452
#endif
#ifndef __NR_setxattrat
#define __NR_setxattrat 463
#endif
#ifndef __NR_removexattrat
#define __NR_removexattrat 466
#endif
#ifndef __NR_open_tree_attr
#define __NR_open_tree_attr 467
#endif
#ifndef __NR_file_setattr
#define __NR_file_setattr 469
#endif
#ifndef SECCOMP_FILTER_FLAG_NEW_LISTENER
#define SECCOMP_FILTER_FLAG_NEW_LISTENER (1UL << 3)
#endif
#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

_Static_assert(__NR_file_setattr < SYSCALL_TABLE_SIZE, "table too small");

/* clone() cannot take CLONE_NEWTIME (its bit is in the exit signal byte). */
#define NS_FLAGS_CLONE \
	(CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | \
	 CLONE_NEWPID | CLONE_NEWNET)
#define NS_FLAGS_UNSHARE (NS_FLAGS_CLONE | CLONE_NEWTIME)

#define A SYSCALL_ARG

/* Path roles. */
#define CWD_PATH(n, f) {0, A(n), SYSCALL_##f, 0}
#define AT_PATH(d, n, f) {A(d), A(n), SYSCALL_##f, 0}
#define AT_PATH_EMPTY(d, n, f, e) {A(d), A(n), SYSCALL_##f, (e)}
#define FD_OBJECT(d) {A(d), 0, SYSCALL_FOLLOW, 0}

/* Bypass reasons, one place. */
#define WHY_IO_URING "io_uring performs file and network I/O in the kernel, out of sight of the supervisor"
#define WHY_PTRACE "a tracee tracing another process could change its calls after the supervisor's checks"
#define WHY_VM_WRITEV "writing another process's memory changes its calls' arguments after the checks"
#define WHY_BPF "BPF programs run in the kernel and can observe or change what the supervisor relies on"
#define WHY_MOUNT "mounts, chroot and pivot_root change the file-system view that paths are judged in"
#define WHY_NAMESPACE "new namespaces change what paths, addresses and processes mean to the supervisor"
#define WHY_HANDLE "open_by_handle_at opens files by inode handle, with no path to check"
#define WHY_UNTRACED "CLONE_UNTRACED starts a process the supervisor would not trace"
#define WHY_LISTENER "a seccomp user-notification listener would outrank the supervisor's filter"

#define BYPASS(name_, id_, why_) \
	[__NR_##name_] = { .name = #name_, .cls = SYSCALL_BYPASS, .bpf = SYSCALL_BPF_TRACE, \
			   .bypass = {{ id_, why_, 0, 0 }} }

static const struct syscall_entry syscall_table[SYSCALL_TABLE_SIZE] = {
	/* exec */
	[__NR_execve] = { .name = "execve", .cls = SYSCALL_EXEC, .bpf = SYSCALL_BPF_TRACE,
			  .n_paths = 1, .paths = { CWD_PATH(0, FOLLOW) }, .argv = A(1) },
	[__NR_execveat] = { .name = "execveat", .cls = SYSCALL_EXEC, .bpf = SYSCALL_BPF_TRACE,
			    .flags = A(4), .n_paths = 1,
			    .paths = { AT_PATH_EMPTY(0, 1, FOLLOW_UNLESS_AT, SYSCALL_EMPTY_AT) },
			    .argv = A(2) },

	/* opens: a write with write intent, else a read */
	[__NR_open] = { .name = "open", .cls = SYSCALL_OPEN, .bpf = SYSCALL_BPF_OPEN_FLAGS,
			.bpf_arg = A(1), .flags = A(1), .n_paths = 1,
			.paths = { CWD_PATH(0, FOLLOW_OPEN) } },
	[__NR_openat] = { .name = "openat", .cls = SYSCALL_OPEN, .bpf = SYSCALL_BPF_OPEN_FLAGS,
			  .bpf_arg = A(2), .flags = A(2), .n_paths = 1,
			  .paths = { AT_PATH(0, 1, FOLLOW_OPEN) } },
	[__NR_openat2] = { .name = "openat2", .cls = SYSCALL_OPEN, .bpf = SYSCALL_BPF_TRACE,
			   .opts = SYSCALL_OPT_OPENAT2, .n_paths = 1,
			   .paths = { AT_PATH(0, 1, FOLLOW_OPEN) } },
	[__NR_creat] = { .name = "creat", .cls = SYSCALL_OPEN, .bpf = SYSCALL_BPF_TRACE,
			 .opts = SYSCALL_OPT_CREAT, .n_paths = 1,
			 .paths = { CWD_PATH(0, FOLLOW_OPEN) } },

	/* writes of one path */
	[__NR_truncate] = { .name = "truncate", .cls = SYSCALL_WRITE, .bpf = SYSCALL_BPF_TRACE,
			    .n_paths = 1, .paths = { CWD_PATH(0, FOLLOW) } },
	[__NR_unlink] = { .name = "unlink", .cls = SYSCALL_WRITE, .bpf = SYSCALL_BPF_TRACE,
			  .n_paths = 1, .paths = { CWD_PATH(0, NOFOLLOW) } },
	[__NR_unlinkat] = { .name = "unlinkat", .cls = SYSCALL_WRITE, .bpf = SYSCALL_BPF_TRACE,
			    .flags = A(2), .n_paths = 1, .paths = { AT_PATH(0, 1, NOFOLLOW) } },
	[__NR_rmdir] = { .name = "rmdir", .cls = SYSCALL_WRITE, .bpf = SYSCALL_BPF_TRACE,
			 .n_paths = 1, .paths = { CWD_PATH(0, NOFOLLOW) } },
	[__NR_mkdir] = { .name = "mkdir", .cls = SYSCALL_WRITE, .bpf = SYSCALL_BPF_TRACE,
			 .n_paths = 1, .paths = { CWD_PATH(0, NOFOLLOW) } },
	[__NR_mkdirat] = { .name = "mkdirat", .cls = SYSCALL_WRITE, .bpf = SYSCALL_BPF_TRACE,
			   .n_paths = 1, .paths = { AT_PATH(0, 1, NOFOLLOW) } },
	[__NR_mknod] = { .name = "mknod", .cls = SYSCALL_WRITE, .bpf = SYSCALL_BPF_TRACE,
			 .n_paths = 1, .paths = { CWD_PATH(0, NOFOLLOW) } },
	[__NR_mknodat] = { .name = "mknodat", .cls = SYSCALL_WRITE, .bpf = SYSCALL_BPF_TRACE,
			   .n_paths = 1, .paths = { AT_PATH(0, 1, NOFOLLOW) } },

	/* metadata writes */
	[__NR_chmod] = { .name = "chmod", .cls = SYSCALL_WRITE, .bpf = SYSCALL_BPF_TRACE,
			 .n_paths = 1, .paths = { CWD_PATH(0, FOLLOW) } },
	[__NR_fchmod] = { .name = "fchmod", .cls = SYSCALL_WRITE, .bpf = SYSCALL_BPF_TRACE,
			  .n_paths = 1, .paths = { FD_OBJECT(0) } },
	/* fchmodat(2) the syscall has no flags argument (glibc emulates them). */
	[__NR_fchmodat] = { .name = "fchmodat", .cls = SYSCALL_WRITE, .bpf = SYSCALL_BPF_TRACE,
			    .n_paths = 1, .paths = { AT_PATH(0, 1, FOLLOW) } },
	[__NR_fchmodat2] = { .name = "fchmodat2", .cls = SYSCALL_WRITE, .bpf = SYSCALL_BPF_TRACE,
			     .flags = A(3), .n_paths = 1,
			     .paths = { AT_PATH_EMPTY(0, 1, FOLLOW_UNLESS_AT, SYSCALL_EMPTY_AT) } },
	[__NR_chown] = { .name = "chown", .cls = SYSCALL_WRITE, .bpf = SYSCALL_BPF_TRACE,
			 .n_paths = 1, .paths = { CWD_PATH(0, FOLLOW) } },
	[__NR_lchown] = { .name = "lchown", .cls = SYSCALL_WRITE, .bpf = SYSCALL_BPF_TRACE,
			  .n_paths = 1, .paths = { CWD_PATH(0, NOFOLLOW) } },
	[__NR_fchown] = { .name = "fchown", .cls = SYSCALL_WRITE, .bpf = SYSCALL_BPF_TRACE,
			  .n_paths = 1, .paths = { FD_OBJECT(0) } },
	[__NR_fchownat] = { .name = "fchownat", .cls = SYSCALL_WRITE, .bpf = SYSCALL_BPF_TRACE,
			    .flags = A(4), .n_paths = 1,
			    .paths = { AT_PATH_EMPTY(0, 1, FOLLOW_UNLESS_AT, SYSCALL_EMPTY_AT) } },
	[__NR_utime] = { .name = "utime", .cls = SYSCALL_WRITE, .bpf = SYSCALL_BPF_TRACE,
			 .n_paths = 1, .paths = { CWD_PATH(0, FOLLOW) } },
	[__NR_utimes] = { .name = "utimes", .cls = SYSCALL_WRITE, .bpf = SYSCALL_BPF_TRACE,
			  .n_paths = 1, .paths = { CWD_PATH(0, FOLLOW) } },
	[__NR_utimensat] = { .name = "utimensat", .cls = SYSCALL_WRITE, .bpf = SYSCALL_BPF_TRACE,
			     .flags = A(3), .n_paths = 1,
			     .paths = { AT_PATH_EMPTY(0, 1, FOLLOW_UNLESS_AT,
						      SYSCALL_EMPTY_AT | SYSCALL_EMPTY_NULL) } },
	[__NR_futimesat] = { .name = "futimesat", .cls = SYSCALL_WRITE, .bpf = SYSCALL_BPF_TRACE,
			     .n_paths = 1,
			     .paths = { AT_PATH_EMPTY(0, 1, FOLLOW, SYSCALL_EMPTY_NULL) } },
	[__NR_setxattr] = { .name = "setxattr", .cls = SYSCALL_WRITE, .bpf = SYSCALL_BPF_TRACE,
			    .n_paths = 1, .paths = { CWD_PATH(0, FOLLOW) } },
	[__NR_lsetxattr] = { .name = "lsetxattr", .cls = SYSCALL_WRITE, .bpf = SYSCALL_BPF_TRACE,
			     .n_paths = 1, .paths = { CWD_PATH(0, NOFOLLOW) } },
	[__NR_fsetxattr] = { .name = "fsetxattr", .cls = SYSCALL_WRITE, .bpf = SYSCALL_BPF_TRACE,
			     .n_paths = 1, .paths = { FD_OBJECT(0) } },
	[__NR_removexattr] = { .name = "removexattr", .cls = SYSCALL_WRITE,
			       .bpf = SYSCALL_BPF_TRACE, .n_paths = 1,
			       .paths = { CWD_PATH(0, FOLLOW) } },
	[__NR_lremovexattr] = { .name = "lremovexattr", .cls = SYSCALL_WRITE,
				.bpf = SYSCALL_BPF_TRACE, .n_paths = 1,
				.paths = { CWD_PATH(0, NOFOLLOW) } },
	[__NR_fremovexattr] = { .name = "fremovexattr", .cls = SYSCALL_WRITE,
				.bpf = SYSCALL_BPF_TRACE, .n_paths = 1,
				.paths = { FD_OBJECT(0) } },
	[__NR_setxattrat] = { .name = "setxattrat", .cls = SYSCALL_WRITE, .bpf = SYSCALL_BPF_TRACE,
			      .flags = A(2), .n_paths = 1,
			      .paths = { AT_PATH_EMPTY(0, 1, FOLLOW_UNLESS_AT, SYSCALL_EMPTY_AT) } },
	[__NR_removexattrat] = { .name = "removexattrat", .cls = SYSCALL_WRITE,
				 .bpf = SYSCALL_BPF_TRACE, .flags = A(2), .n_paths = 1,
				 .paths = { AT_PATH_EMPTY(0, 1, FOLLOW_UNLESS_AT,
							  SYSCALL_EMPTY_AT) } },
	[__NR_file_setattr] = { .name = "file_setattr", .cls = SYSCALL_WRITE,
				.bpf = SYSCALL_BPF_TRACE, .flags = A(4), .n_paths = 1,
				.paths = { AT_PATH_EMPTY(0, 1, FOLLOW_UNLESS_AT,
							 SYSCALL_EMPTY_AT) } },

	/* writes of two paths */
	[__NR_rename] = { .name = "rename", .cls = SYSCALL_WRITE, .bpf = SYSCALL_BPF_TRACE,
			  .n_paths = 2, .paths = { CWD_PATH(0, NOFOLLOW), CWD_PATH(1, NOFOLLOW) } },
	[__NR_renameat] = { .name = "renameat", .cls = SYSCALL_WRITE, .bpf = SYSCALL_BPF_TRACE,
			    .n_paths = 2,
			    .paths = { AT_PATH(0, 1, NOFOLLOW), AT_PATH(2, 3, NOFOLLOW) } },
	[__NR_renameat2] = { .name = "renameat2", .cls = SYSCALL_WRITE, .bpf = SYSCALL_BPF_TRACE,
			     .flags = A(4), .n_paths = 2,
			     .paths = { AT_PATH(0, 1, NOFOLLOW), AT_PATH(2, 3, NOFOLLOW) } },
	[__NR_link] = { .name = "link", .cls = SYSCALL_WRITE, .bpf = SYSCALL_BPF_TRACE,
			.n_paths = 2, .paths = { CWD_PATH(0, NOFOLLOW), CWD_PATH(1, NOFOLLOW) } },
	[__NR_linkat] = { .name = "linkat", .cls = SYSCALL_WRITE, .bpf = SYSCALL_BPF_TRACE,
			  .flags = A(4), .n_paths = 2,
			  .paths = { AT_PATH_EMPTY(0, 1, FOLLOW_IF_AT, SYSCALL_EMPTY_AT),
				     AT_PATH(2, 3, NOFOLLOW) } },
	/* symlink(target, linkpath): paths[0] is the link, paths[1] the target */
	[__NR_symlink] = { .name = "symlink", .cls = SYSCALL_WRITE, .bpf = SYSCALL_BPF_TRACE,
			   .opts = SYSCALL_OPT_SYMLINK, .n_paths = 2,
			   .paths = { CWD_PATH(1, NOFOLLOW), CWD_PATH(0, FOLLOW) } },
	[__NR_symlinkat] = { .name = "symlinkat", .cls = SYSCALL_WRITE, .bpf = SYSCALL_BPF_TRACE,
			     .opts = SYSCALL_OPT_SYMLINK, .n_paths = 2,
			     .paths = { AT_PATH(1, 2, NOFOLLOW), CWD_PATH(0, FOLLOW) } },

	/* network */
	[__NR_connect] = { .name = "connect", .cls = SYSCALL_NET, .bpf = SYSCALL_BPF_TRACE,
			   .net = SYSCALL_NET_CONNECT, .addr = A(1), .addrlen = A(2) },
	[__NR_sendto] = { .name = "sendto", .cls = SYSCALL_NET, .bpf = SYSCALL_BPF_ARG_NONZERO,
			  .bpf_arg = A(4), .flags = A(3), .net = SYSCALL_NET_SENDTO, .addr = A(4),
			  .addrlen = A(5) },
	[__NR_sendmsg] = { .name = "sendmsg", .cls = SYSCALL_NET, .bpf = SYSCALL_BPF_TRACE,
			   .flags = A(2), .net = SYSCALL_NET_SENDMSG, .addr = A(1) },
	[__NR_sendmmsg] = { .name = "sendmmsg", .cls = SYSCALL_NET, .bpf = SYSCALL_BPF_TRACE,
			    .flags = A(3), .net = SYSCALL_NET_SENDMMSG, .addr = A(1),
			    .addrlen = A(2) },
	[__NR_bind] = { .name = "bind", .cls = SYSCALL_NET, .bpf = SYSCALL_BPF_TRACE,
			.net = SYSCALL_NET_BIND, .addr = A(1), .addrlen = A(2) },

	/* processes */
	[__NR_fork] = { .name = "fork", .cls = SYSCALL_SPAWN, .bpf = SYSCALL_BPF_TRACE },
	[__NR_vfork] = { .name = "vfork", .cls = SYSCALL_SPAWN, .bpf = SYSCALL_BPF_TRACE },
	[__NR_clone] = { .name = "clone", .cls = SYSCALL_SPAWN, .bpf = SYSCALL_BPF_TRACE,
			 .flags = A(0),
			 .bypass = { { "syscall.clone_untraced", WHY_UNTRACED, A(0), CLONE_UNTRACED },
				     { "syscall.namespace", WHY_NAMESPACE, A(0), NS_FLAGS_CLONE } } },
	/* clone3 passes its flags in memory, out of BPF's reach: ENOSYS makes
	 * libc fall back to clone(), which the filter can read. */
	[__NR_clone3] = { .name = "clone3", .cls = SYSCALL_SPAWN, .bpf = SYSCALL_BPF_ENOSYS },

	/* around the supervisor */
	BYPASS(io_uring_setup, "syscall.io_uring", WHY_IO_URING),
	BYPASS(io_uring_enter, "syscall.io_uring", WHY_IO_URING),
	BYPASS(io_uring_register, "syscall.io_uring", WHY_IO_URING),
	BYPASS(ptrace, "syscall.ptrace", WHY_PTRACE),
	BYPASS(process_vm_writev, "syscall.process_vm_writev", WHY_VM_WRITEV),
	BYPASS(bpf, "syscall.bpf", WHY_BPF),
	BYPASS(mount, "syscall.mount", WHY_MOUNT),
	BYPASS(umount2, "syscall.mount", WHY_MOUNT),
	BYPASS(move_mount, "syscall.mount", WHY_MOUNT),
	BYPASS(fsopen, "syscall.mount", WHY_MOUNT),
	BYPASS(fsconfig, "syscall.mount", WHY_MOUNT),
	BYPASS(fsmount, "syscall.mount", WHY_MOUNT),
	BYPASS(fspick, "syscall.mount", WHY_MOUNT),
	BYPASS(open_tree, "syscall.mount", WHY_MOUNT),
	BYPASS(open_tree_attr, "syscall.mount", WHY_MOUNT),
	BYPASS(mount_setattr, "syscall.mount", WHY_MOUNT),
	BYPASS(pivot_root, "syscall.mount", WHY_MOUNT),
	BYPASS(chroot, "syscall.mount", WHY_MOUNT),
	BYPASS(setns, "syscall.namespace", WHY_NAMESPACE),
	[__NR_unshare] = { .name = "unshare", .cls = SYSCALL_BYPASS, .bpf = SYSCALL_BPF_ARG_BITS,
			   .bpf_arg = A(0), .bpf_mask = NS_FLAGS_UNSHARE, .flags = A(0),
			   .bypass = { { "syscall.namespace", WHY_NAMESPACE, A(0),
					 NS_FLAGS_UNSHARE } } },
	BYPASS(open_by_handle_at, "syscall.open_by_handle", WHY_HANDLE),
	[__NR_seccomp] = { .name = "seccomp", .cls = SYSCALL_BYPASS, .bpf = SYSCALL_BPF_ARG_BITS,
			   .bpf_arg = A(1), .bpf_mask = SECCOMP_FILTER_FLAG_NEW_LISTENER,
			   .flags = A(1),
			   .bypass = { { "syscall.seccomp_listener", WHY_LISTENER, A(1),
					 SECCOMP_FILTER_FLAG_NEW_LISTENER } } },
};

const struct syscall_bypass syscall_bypass_abi = {
	"syscall.abi",
	"32-bit and x32 system calls use another numbering that the filter does not judge",
	0, 0,
};

const struct syscall_bypass syscall_bypass_unresolvable = {
	"syscall.unresolvable",
	"the path could not be resolved as the kernel would (too long, or too many symlinks)",
	0, 0,
};

const struct syscall_entry *syscall_lookup(long nr)
{
	if (nr < 0 || nr >= SYSCALL_TABLE_SIZE || !syscall_table[nr].name)
		return NULL;
	return &syscall_table[nr];
}
