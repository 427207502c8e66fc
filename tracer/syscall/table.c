/* The x86_64 syscall table (doc/SYSCALLS.md says why each row is there).
 * Numbers come from <asm/unistd_64.h>; the few that Debian 12's kernel
 * headers (6.1) predate are spelled out below from the kernel's
 * arch/x86/entry/syscalls/syscall_64.tbl. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <linux/netlink.h>
#include <linux/userfaultfd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "tracer/syscall/table.h"

#ifndef IPV6_FLOWLABEL_MGR
#define IPV6_FLOWLABEL_MGR 32 /* linux/in6.h, which clashes with netinet/in.h */
#endif

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
#define WHY_AIO "Linux AIO writes what it reads into the caller's memory while its calls are judged"
#define WHY_PTRACE "a tracee tracing another process could change its calls after the supervisor's checks"
#define WHY_VM_WRITEV "writing another process's memory changes its calls' arguments after the checks"
#define WHY_BPF "BPF programs run in the kernel and can observe or change what the supervisor relies on"
#define WHY_MOUNT "mounts, chroot and pivot_root change the file-system view that paths are judged in"
#define WHY_NAMESPACE "new namespaces change what paths, addresses and processes mean to the supervisor"
#define WHY_HANDLE "open_by_handle_at opens files by inode handle, with no path to check"
#define WHY_UNTRACED "CLONE_UNTRACED starts a process the supervisor would not trace"
#define WHY_LISTENER "a seccomp user-notification listener would outrank the supervisor's filter"
#define WHY_OWNER "the owner of a file's I/O signals is signalled by the kernel later: signals reach only the session's own processes"
#define WHY_TTY "TIOCSTI and TIOCLINUX type into a terminal: the user's shell would run the text after the session"
#define WHY_ROUTING_HEADER "an IPv6 routing header sends a packet to its segments, not to the address the net rules judged"
#define WHY_SOCKET_RAW "a packet or raw IP socket writes its own headers: its packets go past every net rule"
#define WHY_NETLINK_USERSOCK "netlink's NETLINK_USERSOCK carries messages between processes, to any outside the session, past every net rule"
#define WHY_SOCKET_FAMILY "a socket of a family the policy cannot judge (only unix, inet, inet6 and netlink are)"
#define WHY_DEVICE "a device node reaches the hardware or the file system underneath, past every path rule"
#define WHY_USERFAULTFD "userfaultfd lets a process hold the supervisor's read of its memory, and show it one value and the kernel another"
#define WHY_HOSTNAME "the host name and NIS domain name are the machine's, not the session's"
#define WHY_REBOOT "reboot and kexec end or replace the running kernel"
#define WHY_MODULE "kernel modules run code in the kernel"
#define WHY_SWAP "swap areas are the machine's"
#define WHY_CLOCK "the system clock is the machine's"
#define WHY_ACCT "process accounting is the machine's"
#define WHY_IOPORT "I/O port access reaches the hardware directly"
#define WHY_MEMFD_SECRET "memory no other process can read: the supervisor could not read the paths and addresses the calls name"

/* Tests of one argument (table.h): bits, or one of N values, of args[a] & m. */
#define TEST_BITS(a, m) { A(a), SYSCALL_TEST_BITS, 0, (m), { 0 } }
#define TEST_IN(a, m, n, ...) { A(a), SYSCALL_TEST_IN, (n), (m), { __VA_ARGS__ } }
#define TEST_NOT_IN(a, m, n, ...) { A(a), SYSCALL_TEST_NOT_IN, (n), (m), { __VA_ARGS__ } }
#define ALL_BITS 0xffffffffu

#ifndef USERFAULTFD_IOC_NEW
#define USERFAULTFD_IOC_NEW _IO(0xAA, 0x00) /* Linux 6.1 */
#endif

#define BYPASS(name_, id_, why_) \
	[__NR_##name_] = { .name = #name_, .cls = SYSCALL_BYPASS, .bpf = SYSCALL_BPF_TRACE, \
			   .bypass = {{ .id = id_, .why = why_ }} }

#define SIGNAL(name_, how_) \
	[__NR_##name_] = { .name = #name_, .cls = SYSCALL_SIGNAL, .bpf = SYSCALL_BPF_TRACE, \
			   .signal = SYSCALL_SIGNAL_##how_ }

/* mknod/mknodat of a block or character device (FIFOs, sockets and
 * regular files stay writes like any other). */
#define DEVICE_NODE(a) \
	{ { .id = "syscall.device-node", .why = WHY_DEVICE, \
	    .test = { TEST_IN(a, S_IFMT, 2, S_IFCHR, S_IFBLK) } } }

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
			  .opts = SYSCALL_OPT_NAMES, .n_paths = 1, .paths = { CWD_PATH(0, NOFOLLOW) } },
	[__NR_unlinkat] = { .name = "unlinkat", .cls = SYSCALL_WRITE, .bpf = SYSCALL_BPF_TRACE,
			    .opts = SYSCALL_OPT_NAMES, .flags = A(2), .n_paths = 1, .paths = { AT_PATH(0, 1, NOFOLLOW) } },
	[__NR_rmdir] = { .name = "rmdir", .cls = SYSCALL_WRITE, .bpf = SYSCALL_BPF_TRACE,
			 .opts = SYSCALL_OPT_NAMES, .n_paths = 1, .paths = { CWD_PATH(0, NOFOLLOW) } },
	[__NR_mkdir] = { .name = "mkdir", .cls = SYSCALL_WRITE, .bpf = SYSCALL_BPF_TRACE,
			 .opts = SYSCALL_OPT_NAMES, .n_paths = 1, .paths = { CWD_PATH(0, NOFOLLOW) } },
	[__NR_mkdirat] = { .name = "mkdirat", .cls = SYSCALL_WRITE, .bpf = SYSCALL_BPF_TRACE,
			   .opts = SYSCALL_OPT_NAMES, .n_paths = 1, .paths = { AT_PATH(0, 1, NOFOLLOW) } },
	[__NR_mknod] = { .name = "mknod", .cls = SYSCALL_WRITE, .bpf = SYSCALL_BPF_TRACE,
			 .opts = SYSCALL_OPT_NAMES, .n_paths = 1, .paths = { CWD_PATH(0, NOFOLLOW) },
			 .bypass = DEVICE_NODE(1) },
	[__NR_mknodat] = { .name = "mknodat", .cls = SYSCALL_WRITE, .bpf = SYSCALL_BPF_TRACE,
			   .opts = SYSCALL_OPT_NAMES, .n_paths = 1, .paths = { AT_PATH(0, 1, NOFOLLOW) },
			   .bypass = DEVICE_NODE(2) },

	/* metadata writes */
	[__NR_chmod] = { .name = "chmod", .cls = SYSCALL_WRITE, .bpf = SYSCALL_BPF_TRACE,
			 .mode = A(1), .n_paths = 1, .paths = { CWD_PATH(0, FOLLOW) } },
	[__NR_fchmod] = { .name = "fchmod", .cls = SYSCALL_WRITE, .bpf = SYSCALL_BPF_TRACE,
			  .mode = A(1), .n_paths = 1, .paths = { FD_OBJECT(0) } },
	/* fchmodat(2) the syscall has no flags argument (glibc emulates them). */
	[__NR_fchmodat] = { .name = "fchmodat", .cls = SYSCALL_WRITE, .bpf = SYSCALL_BPF_TRACE,
			    .mode = A(2), .n_paths = 1, .paths = { AT_PATH(0, 1, FOLLOW) } },
	[__NR_fchmodat2] = { .name = "fchmodat2", .cls = SYSCALL_WRITE, .bpf = SYSCALL_BPF_TRACE,
			     .flags = A(3), .mode = A(2), .n_paths = 1,
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
			  .opts = SYSCALL_OPT_NEW_NAME | SYSCALL_OPT_NAMES, .n_paths = 2, .paths = { CWD_PATH(0, NOFOLLOW), CWD_PATH(1, NOFOLLOW) } },
	[__NR_renameat] = { .name = "renameat", .cls = SYSCALL_WRITE, .bpf = SYSCALL_BPF_TRACE,
			    .opts = SYSCALL_OPT_NEW_NAME | SYSCALL_OPT_NAMES, .n_paths = 2,
			    .paths = { AT_PATH(0, 1, NOFOLLOW), AT_PATH(2, 3, NOFOLLOW) } },
	[__NR_renameat2] = { .name = "renameat2", .cls = SYSCALL_WRITE, .bpf = SYSCALL_BPF_TRACE,
			     .flags = A(4), .opts = SYSCALL_OPT_NEW_NAME | SYSCALL_OPT_NAMES, .n_paths = 2,
			     .paths = { AT_PATH(0, 1, NOFOLLOW), AT_PATH(2, 3, NOFOLLOW) } },
	[__NR_link] = { .name = "link", .cls = SYSCALL_WRITE, .bpf = SYSCALL_BPF_TRACE,
			.opts = SYSCALL_OPT_NEW_NAME | SYSCALL_OPT_NAMES, .n_paths = 2, .paths = { CWD_PATH(0, NOFOLLOW), CWD_PATH(1, NOFOLLOW) } },
	[__NR_linkat] = { .name = "linkat", .cls = SYSCALL_WRITE, .bpf = SYSCALL_BPF_TRACE,
			  .flags = A(4), .opts = SYSCALL_OPT_NEW_NAME | SYSCALL_OPT_NAMES, .n_paths = 2,
			  .paths = { AT_PATH_EMPTY(0, 1, FOLLOW_IF_AT, SYSCALL_EMPTY_AT),
				     AT_PATH(2, 3, NOFOLLOW) } },
	/* symlink(target, linkpath): paths[0] is the link, paths[1] the target */
	[__NR_symlink] = { .name = "symlink", .cls = SYSCALL_WRITE, .bpf = SYSCALL_BPF_TRACE,
			   .opts = SYSCALL_OPT_SYMLINK | SYSCALL_OPT_NAMES, .n_paths = 2,
			   .paths = { CWD_PATH(1, NOFOLLOW), CWD_PATH(0, FOLLOW) } },
	[__NR_symlinkat] = { .name = "symlinkat", .cls = SYSCALL_WRITE, .bpf = SYSCALL_BPF_TRACE,
			     .opts = SYSCALL_OPT_SYMLINK | SYSCALL_OPT_NAMES, .n_paths = 2,
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
	/* The socket options that route a socket's packets past the
	 * address of each send: an IPv6 routing header (type 4 needs no
	 * capability), also inside RFC 2292 packet options, or a flow
	 * label request with options appended (a struct in6_flowlabel_req
	 * is 32 bytes).  IPv4 source routes need CAP_NET_RAW, which a root
	 * command does not keep unless --keep-caps says so. */
	[__NR_setsockopt] = { .name = "setsockopt", .cls = SYSCALL_BYPASS,
			      .bpf = SYSCALL_BPF_BYPASS,
			      .bypass = { { "syscall.routing-header", WHY_ROUTING_HEADER,
					    { TEST_IN(1, ALL_BITS, 1, IPPROTO_IPV6),
					      TEST_IN(2, ALL_BITS, 3, IPV6_2292RTHDR,
						      IPV6_2292PKTOPTIONS, IPV6_RTHDR) }, 0 },
					  { "syscall.routing-header", WHY_ROUTING_HEADER,
					    { TEST_IN(1, ALL_BITS, 1, IPPROTO_IPV6),
					      TEST_IN(2, ALL_BITS, 1, IPV6_FLOWLABEL_MGR),
					      TEST_NOT_IN(4, ALL_BITS, 1, 32) }, 0 } } },
	[__NR_bind] = { .name = "bind", .cls = SYSCALL_NET, .bpf = SYSCALL_BPF_TRACE,
			.net = SYSCALL_NET_BIND, .addr = A(1), .addrlen = A(2) },
	[__NR_listen] = { .name = "listen", .cls = SYSCALL_NET, .bpf = SYSCALL_BPF_TRACE,
			  .net = SYSCALL_NET_LISTEN },

	/* processes */
	[__NR_fork] = { .name = "fork", .cls = SYSCALL_SPAWN, .bpf = SYSCALL_BPF_TRACE },
	[__NR_vfork] = { .name = "vfork", .cls = SYSCALL_SPAWN, .bpf = SYSCALL_BPF_TRACE },
	[__NR_clone] = { .name = "clone", .cls = SYSCALL_SPAWN, .bpf = SYSCALL_BPF_TRACE,
			 .flags = A(0),
			 .bypass = { { "syscall.clone_untraced", WHY_UNTRACED,
				       { TEST_BITS(0, CLONE_UNTRACED) }, 0 },
				     { "syscall.namespace", WHY_NAMESPACE,
				       { TEST_BITS(0, NS_FLAGS_CLONE) }, 0 } } },
	/* clone3 passes its flags in memory, out of BPF's reach: ENOSYS makes
	 * libc fall back to clone(), which the filter can read. */
	[__NR_clone3] = { .name = "clone3", .cls = SYSCALL_SPAWN, .bpf = SYSCALL_BPF_ENOSYS },

	/* around the supervisor */
	BYPASS(io_uring_setup, "syscall.io_uring", WHY_IO_URING),
	BYPASS(io_uring_enter, "syscall.io_uring", WHY_IO_URING),
	BYPASS(io_uring_register, "syscall.io_uring", WHY_IO_URING),
	/* Without a context no submission is taken; the contexts die with
	 * the memory they belong to (fork does not copy them, exec drops
	 * them), and the command starts with none. */
	BYPASS(io_setup, "syscall.aio", WHY_AIO),
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
	[__NR_unshare] = { .name = "unshare", .cls = SYSCALL_BYPASS, .bpf = SYSCALL_BPF_BYPASS,
			   .flags = A(0),
			   .bypass = { { "syscall.namespace", WHY_NAMESPACE,
					 { TEST_BITS(0, NS_FLAGS_UNSHARE) }, 0 } } },
	BYPASS(open_by_handle_at, "syscall.open_by_handle", WHY_HANDLE),
	[__NR_seccomp] = { .name = "seccomp", .cls = SYSCALL_BYPASS, .bpf = SYSCALL_BPF_BYPASS,
			   .flags = A(1),
			   .bypass = { { "syscall.seccomp_listener", WHY_LISTENER,
					 { TEST_BITS(1, SECCOMP_FILTER_FLAG_NEW_LISTENER) }, 0 } } },

	/* the kernel and the machine: what registers show, refused in BPF's
	 * terms (only the refused combinations stop, to be recorded) */
	[__NR_ioctl] = { .name = "ioctl", .cls = SYSCALL_BYPASS, .bpf = SYSCALL_BPF_BYPASS,
			 .opts = SYSCALL_OPT_OWNER,
			 .bypass = { { "syscall.tty-inject", WHY_TTY,
				       { TEST_IN(1, ALL_BITS, 2, TIOCSTI, TIOCLINUX) }, 0 },
				     { "syscall.signal-outside", WHY_OWNER,
				       { TEST_IN(1, ALL_BITS, 2, FIOSETOWN, SIOCSPGRP) }, 0 },
				     /* whatever way the descriptor came: inherited,
				      * received, or opened by a name that changed
				      * after its check */
				     { "syscall.userfaultfd", WHY_USERFAULTFD,
				       { TEST_IN(1, ALL_BITS, 1, USERFAULTFD_IOC_NEW) }, 0 } } },
	/* The owner of a file's I/O signals (SIGIO, or F_SETSIG's, SIGKILL
	 * too), which the kernel sends later with the caller's credentials:
	 * only the calls that name one stop, and refused only when it is
	 * outside the session. */
	[__NR_fcntl] = { .name = "fcntl", .cls = SYSCALL_BYPASS, .bpf = SYSCALL_BPF_BYPASS,
			 .opts = SYSCALL_OPT_OWNER,
			 .bypass = { { "syscall.signal-outside", WHY_OWNER,
				       { TEST_IN(1, ALL_BITS, 2, F_SETOWN, F_SETOWN_EX) }, 0 } } },
	/* socket(2) families: unix, inet and inet6 are judged by the net
	 * rules, netlink talks to the local kernel only (ip(8), glibc's
	 * getaddrinfo with AI_ADDRCONFIG).  The type's low 4 bits are the
	 * kind (SOCK_NONBLOCK and SOCK_CLOEXEC lie above); inet with the
	 * obsolete SOCK_PACKET is made a packet socket by the kernel. */
	[__NR_socket] = { .name = "socket", .cls = SYSCALL_BYPASS, .bpf = SYSCALL_BPF_BYPASS,
			  .bypass = {
				  { "syscall.socket-raw", WHY_SOCKET_RAW,
				    { TEST_IN(0, ALL_BITS, 1, AF_PACKET) }, 0 },
				  { "syscall.socket-raw", WHY_SOCKET_RAW,
				    { TEST_IN(0, ALL_BITS, 2, AF_INET, AF_INET6),
				      TEST_IN(1, 0xf, 2, SOCK_RAW, SOCK_PACKET) }, 0 },
				  { "syscall.socket-family", WHY_SOCKET_FAMILY,
				    { TEST_NOT_IN(0, ALL_BITS, 4, AF_UNIX, AF_INET, AF_INET6,
						  AF_NETLINK) }, EAFNOSUPPORT },
				  { "syscall.socket-family", WHY_NETLINK_USERSOCK,
				    { TEST_IN(0, ALL_BITS, 1, AF_NETLINK),
				      TEST_IN(2, ALL_BITS, 1, NETLINK_USERSOCK) }, EPROTONOSUPPORT } } },
	BYPASS(userfaultfd, "syscall.userfaultfd", WHY_USERFAULTFD),
	BYPASS(sethostname, "syscall.hostname", WHY_HOSTNAME),
	BYPASS(setdomainname, "syscall.hostname", WHY_HOSTNAME),
	BYPASS(reboot, "syscall.reboot", WHY_REBOOT),
	BYPASS(kexec_load, "syscall.reboot", WHY_REBOOT),
	BYPASS(kexec_file_load, "syscall.reboot", WHY_REBOOT),
	BYPASS(init_module, "syscall.module", WHY_MODULE),
	BYPASS(finit_module, "syscall.module", WHY_MODULE),
	BYPASS(delete_module, "syscall.module", WHY_MODULE),
	BYPASS(swapon, "syscall.swap", WHY_SWAP),
	BYPASS(swapoff, "syscall.swap", WHY_SWAP),
	BYPASS(clock_settime, "syscall.clock", WHY_CLOCK),
	BYPASS(settimeofday, "syscall.clock", WHY_CLOCK),
	/* Reading the clock's state (modes 0) is ordinary (ntp_gettime(3),
	 * adjtime(3) with a NULL delta); the modes are in memory. */
	[__NR_adjtimex] = { .name = "adjtimex", .cls = SYSCALL_BYPASS, .bpf = SYSCALL_BPF_TRACE,
			    .opts = SYSCALL_OPT_TIMEX, .addr = A(0),
			    .bypass = {{ .id = "syscall.clock", .why = WHY_CLOCK }} },
	[__NR_clock_adjtime] = { .name = "clock_adjtime", .cls = SYSCALL_BYPASS,
				 .bpf = SYSCALL_BPF_TRACE, .opts = SYSCALL_OPT_TIMEX, .addr = A(1),
				 .bypass = {{ .id = "syscall.clock", .why = WHY_CLOCK }} },
	BYPASS(acct, "syscall.acct", WHY_ACCT),
	BYPASS(iopl, "syscall.ioport", WHY_IOPORT),
	BYPASS(ioperm, "syscall.ioport", WHY_IOPORT),
	/* ENOSYS, as where the kernel has no secret memory (secretmem
	 * disabled): programs fall back on ordinary memory. */
	[__NR_memfd_secret] = { .name = "memfd_secret", .cls = SYSCALL_BYPASS,
				.bpf = SYSCALL_BPF_TRACE,
				.bypass = { { .id = "syscall.memfd_secret", .why = WHY_MEMFD_SECRET,
					      .err = ENOSYS } } },

	/* signals and reaching into a process: the session's own only */
	SIGNAL(kill, KILL),
	SIGNAL(tkill, TKILL),
	SIGNAL(tgkill, TGKILL),
	SIGNAL(rt_sigqueueinfo, SIGQUEUE),
	SIGNAL(rt_tgsigqueueinfo, TGKILL),
	SIGNAL(pidfd_send_signal, PIDFD_SEND),
	SIGNAL(pidfd_open, PIDFD_OPEN),
	SIGNAL(pidfd_getfd, PIDFD_GETFD),
	/* A process's own limits (pid 0, glibc's getrlimit and setrlimit)
	 * are no other's: only a pid stops. */
	[__NR_prlimit64] = { .name = "prlimit64", .cls = SYSCALL_SIGNAL,
			     .bpf = SYSCALL_BPF_ARG_NONZERO, .bpf_arg = A(0),
			     .signal = SYSCALL_SIGNAL_PRLIMIT },
	SIGNAL(process_vm_readv, VM_READ),
};

const struct syscall_bypass syscall_bypass_abi = {
	.id = "syscall.abi",
	.why = "32-bit and x32 system calls use another numbering that the filter does not judge",
};

/* The same, by its device (Linux 6.1). */
const struct syscall_bypass syscall_bypass_userfaultfd_dev = {
	.id = "syscall.userfaultfd",
	.why = WHY_USERFAULTFD,
};

const struct syscall_bypass syscall_bypass_unresolvable = {
	.id = "syscall.unresolvable",
	.why = "the path could not be resolved as the kernel would (too long, or too many symlinks)",
};

const struct syscall_bypass syscall_bypass_argv_too_long = {
	.id = "syscall.argv-too-long",
	.why = "the exec's arguments are more than agenttrace judges (65,536 of them or 2 MiB): "
	       "what was not judged would run; E2BIG, as for a list too long for the kernel",
};

const struct syscall_bypass syscall_bypass_routing_header = {
	.id = "syscall.routing-header",
	.why = WHY_ROUTING_HEADER,
};

const struct syscall_bypass syscall_bypass_control_size = {
	.id = "syscall.net-control",
	.why = "a message's control data is longer than agenttrace reads to judge it (16 KiB)",
};

const struct syscall_bypass syscall_bypass_signal_outside = {
	.id = "syscall.signal-outside",
	.why = "signals reach only the session's own processes",
};

const struct syscall_bypass syscall_bypass_pidfd_outside = {
	.id = "syscall.pidfd-outside",
	.why = "pidfds reach only the session's own processes",
	.reach = "a pidfd of",
};

const struct syscall_bypass syscall_bypass_prlimit_outside = {
	.id = "syscall.prlimit-outside",
	.why = "limits can kill a process or have it dump its memory: only the session's own are set",
	.reach = "new resource limits for",
};

const struct syscall_bypass syscall_bypass_vm_read_outside = {
	.id = "syscall.vm-read-outside",
	.why = "memory holds what the session was not given: only the session's own is read",
	.reach = "a read of the memory of",
};

const struct syscall_entry *syscall_lookup(long nr)
{
	if (nr < 0 || nr >= SYSCALL_TABLE_SIZE || !syscall_table[nr].name)
		return NULL;
	return &syscall_table[nr];
}

/* The table's entries by name, for syscall_lookup_name(): made once. */
static const struct syscall_entry *by_name[SYSCALL_TABLE_SIZE];
static size_t n_by_name;
static pthread_once_t by_name_once = PTHREAD_ONCE_INIT;

static int by_name_cmp(const void *a, const void *b)
{
	return strcmp((*(const struct syscall_entry *const *)a)->name,
		      (*(const struct syscall_entry *const *)b)->name);
}

static void by_name_index(void)
{
	for (long nr = 0; nr < SYSCALL_TABLE_SIZE; nr++)
		if (syscall_table[nr].name)
			by_name[n_by_name++] = &syscall_table[nr];
	qsort(by_name, n_by_name, sizeof(by_name[0]), by_name_cmp);
}

const struct syscall_entry *syscall_lookup_name(const char *name)
{
	struct syscall_entry key = { .name = name };
	const struct syscall_entry *k = &key, *const *e;

	if (!name || pthread_once(&by_name_once, by_name_index) != 0)
		return NULL;
	e = bsearch(&k, by_name, n_by_name, sizeof(by_name[0]), by_name_cmp);
	return e ? *e : NULL;
}
