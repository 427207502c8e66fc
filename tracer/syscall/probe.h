/* What this kernel offers the supervisor, probed once each, at first use:
 * the one place where agenttrace asks the kernel which features it has.
 * Each answer has a fallback in its user (doc/INTERNALS.md, "Kernel
 * features"); the test knobs that pretend a feature is missing are read
 * here too. */
#ifndef AGENTTRACE_PROBE_H
#define AGENTTRACE_PROBE_H

#include <stdbool.h>

/* The Landlock ABI version (1 and up), or -errno when Landlock is not
 * available (not built in, disabled at boot: -EOPNOTSUPP).  Test knob
 * LANDLOCK_ABI=N pretends ABI N (0: none). */
int probe_landlock_abi(void);

/* openat2(2) (Linux 5.6): path resolution in one call, else a component
 * walk (tracer/syscall/path.c). */
bool probe_openat2(void);

/* PTRACE_GET_SYSCALL_INFO (Linux 5.3), else the registers by
 * PTRACE_GETREGS.  Test knob REGS_FALLBACK=1: the registers, which
 * valgrind's memcheck understands (tests/valgrind.sh). */
bool probe_syscall_info(void);

/* Seccomp user notification with the CONTINUE answer (Linux 5.5) and
 * pidfd_getfd(2) to take the child's listener (5.6): the notify engine's
 * needs.  Test knob NOTIFY=0: not available. */
bool probe_notify(void);

/* SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (Linux 6.6): a notification wakes the
 * supervisor on the caller's CPU, and the answer wakes the caller on the
 * supervisor's, which makes a round trip about as cheap as a context
 * switch.  The flag is set on the listener once it exists; this tells in
 * advance, from the kernel's release, whether it will be there (the set
 * may still fail: the engine then goes on without it).  Test knob
 * NOTIFY_SYNC=0: not available. */
bool probe_notify_sync(void);


/* SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (Linux 5.19): once the supervisor
 * has received a notification, a signal does not end the caller's wait
 * (and its call, with EINTR).  Test knob NOTIFY_KILLABLE=0: not
 * available. */
bool probe_notify_wait_killable(void);

/* SECCOMP_IOCTL_NOTIF_ADDFD with SECCOMP_ADDFD_FLAG_SEND (Linux 5.14): the
 * notify engine can make an open itself and hand the caller the
 * descriptor as the call's result.  Test knob NOTIFY_ADDFD=0: not
 * available. */
bool probe_notify_addfd(void);

/* Whether --engine auto takes the notify engine: it can make a racing
 * caller's calls itself (ADDFD) and no signal can end a call it is making
 * (the killable wait), so that its decisions hold against such a caller,
 * which the ptrace engine's do not (doc/THREAT-MODEL.md).  The sync
 * wake-up only makes it cheaper. */
bool probe_notify_preferred(void);

/* The PROCMAP_QUERY ioctl of /proc/PID/maps (Linux 6.11): the mapping
 * that holds an address, in one call, else a read of the maps text
 * (tracer/inspect/vma.c).  Test knob PROCMAP_QUERY=0: not available. */
bool probe_procmap_query(void);

/* Whether the command's masks (tracer/confine/mask.h) may try to make
 * their namespace: a mount namespace (USER false: agenttrace is root), or
 * a user namespace with one (USER true).  0, or -errno with *WHY saying
 * why not: the switches of the kernel and the distributions that forbid
 * it (user.max_user_namespaces, Debian's unprivileged_userns_clone,
 * Ubuntu's apparmor_restrict_unprivileged_userns).  What no switch tells
 * (a container's seccomp profile, no CAP_SYS_ADMIN) the child learns by
 * trying, and reports.  Test knob MASK_NS=0: none may be made. */
int probe_mask_namespace(bool user, const char **why);

/* The rest is for agenttrace --doctor (tracer/doctor.c): facts of the
 * machine that the session finds out by doing, told in advance. */

/* The yama LSM's kernel.yama.ptrace_scope (0 to 3), -1 without yama. */
int probe_ptrace_scope(void);

/* Whether this process may trace a child of its own: a child asks
 * PTRACE_TRACEME and stops.  0, or -errno of the refusal (EPERM: a
 * seccomp profile or ptrace_scope 3; the supervisor then cannot start). */
int probe_ptrace_child(void);

/* Whether an unprivileged process may make a user namespace: a child
 * (as nobody when this one is root) tries unshare(CLONE_NEWUSER).  0, or
 * -errno. */
int probe_userns(void);

/* pidfd_open(2) (Linux 5.3). */
bool probe_pidfd(void);

/* The cgroup hierarchy this process is in: 2 (unified; CONTROLLERS gets
 * the controllers of its own cgroup), 1 (v1 only; the enabled
 * controllers of /proc/cgroups), 0 none.  CONTROLLERS holds SIZE bytes,
 * names separated by spaces. */
int probe_cgroup(char *controllers, size_t size);

#endif
