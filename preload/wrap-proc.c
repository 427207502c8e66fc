/* fork and vfork (posix_spawn* are in wrap-exec.c): --max-procs without a
 * tracer.  In preload mode with a ceiling, each spawn first asks agenttrace
 * (SPAWN_ASK, which carries a socket for the answer) and reports the
 * process it made (SPAWN_DONE); agenttrace counts the live ones
 * (tracer/shim/preload-mode.c) and answers EAGAIN at the ceiling, which the
 * wrapper returns as fork(2) does at RLIMIT_NPROC.
 *
 * Everything here is raw syscalls on the stack: fork may be called from a
 * signal handler, and the answer is awaited in the parent only. */
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "preload/shim.h"
#include "preload/wrap-proc.h"
#include "lib/channel-wire.h"

#define EXPORT __attribute__((visibility("default")))

/* A spawn message: the channel header and its body, nothing more (the
 * receiver reads the rest of struct channel_msg as zeros). */
struct proc_msg {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	int32_t pid;
	int32_t ppid;
	struct channel_spawn spawn;
};
_Static_assert(offsetof(struct proc_msg, spawn) == offsetof(struct channel_msg, u) &&
	       offsetof(struct proc_msg, pid) == offsetof(struct channel_msg, pid) &&
	       offsetof(struct proc_msg, type) == offsetof(struct channel_msg, type),
	       "struct proc_msg is channel_msg's header + channel_spawn");

typedef pid_t (*proc_fork_fn)(void);

/* Resolved by the constructor; read by the vfork trampoline below. */
__attribute__((used)) void *proc_real_vfork;
__attribute__((used)) unsigned char proc_counting_flag;
static void *proc_real_fork;
static uint32_t proc_next_token;

static bool proc_counting(void)
{
	return shim_deciding() && shim.policy && shim.policy->limits.max_procs;
}

static void proc_close(int fd)
{
	if (fd >= 0)
		syscall(SYS_close, fd);
}

static void proc_fill(struct proc_msg *m, uint16_t type, const struct proc_ticket *t,
		      const char *name, pid_t child)
{
	size_t n = name ? strnlen(name, sizeof(m->spawn.syscall) - 1) : 0;

	memset(m, 0, sizeof(*m));
	m->magic = CHANNEL_MAGIC;
	m->version = CHANNEL_VERSION;
	m->type = type;
	m->pid = (int32_t)syscall(SYS_getpid);
	m->ppid = (int32_t)syscall(SYS_getppid);
	m->spawn.token = t->token;
	m->spawn.child = (int32_t)child;
	m->spawn.reply_fd = -1;
	memcpy(m->spawn.syscall, name, n);
}

/* Send M to the channel, with FD attached when >= 0.  Waits for room, as
 * the preload backend's events do (the supervisor reads all the time). */
static int proc_send(int chan, struct proc_msg *m, int fd)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov = { m, sizeof(*m) };
	struct msghdr mh = { .msg_name = &sa, .msg_iov = &iov, .msg_iovlen = 1 };
	long n;

	memcpy(sa.sun_path, shim.channel, shim.channel_len);
	mh.msg_namelen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + shim.channel_len);
	if (fd >= 0) {
		struct cmsghdr *c;

		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = sizeof(ctl.buf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	do
		n = syscall(SYS_sendmsg, chan, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -1 : 0;
}

int proc_ask(const char *name, struct proc_ticket *t)
{
	struct proc_msg m;
	int saved = errno, sv[2] = { -1, -1 }, answer = 0;
	long n;

	t->chan = -1;
	t->granted = false;
	t->token = 0;
	if (!proc_counting())
		return 0;
	/* Any failure to ask means "go on": the preload backend is a best
	 * effort, and a program must not break because agenttrace is gone. */
	t->chan = (int)syscall(SYS_socket, AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (t->chan < 0)
		goto out;
	/* SEQPACKET: the answer, or EOF when agenttrace closes it unanswered
	 * (or dies with the question still queued). */
	if (syscall(SYS_socketpair, AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		goto out;
	t->token = __atomic_add_fetch(&proc_next_token, 1, __ATOMIC_RELAXED);
	proc_fill(&m, CHANNEL_SPAWN_ASK, t, name, 0);
	if (proc_send(t->chan, &m, sv[1]) < 0)
		goto out;
	proc_close(sv[1]);
	sv[1] = -1;
	do
		n = syscall(SYS_recvfrom, sv[0], &answer, sizeof(answer), 0, NULL, NULL);
	while (n < 0 && errno == EINTR);
	if (n != (long)sizeof(answer))
		answer = 0;
	t->granted = answer != EAGAIN;
out:
	proc_close(sv[0]);
	proc_close(sv[1]);
	if (!t->granted) {
		proc_close(t->chan);
		t->chan = -1;
	}
	errno = saved;
	return answer == EAGAIN ? EAGAIN : 0;
}

void proc_done(struct proc_ticket *t, pid_t child)
{
	struct proc_msg m;
	int saved = errno;

	if (t->granted && t->chan >= 0) {
		proc_fill(&m, CHANNEL_SPAWN_DONE, t, NULL, child > 0 ? child : -1);
		proc_send(t->chan, &m, -1);
	}
	proc_close(t->chan);
	t->chan = -1;
	t->granted = false;
	errno = saved;
}

void proc_forget(struct proc_ticket *t)
{
	int saved = errno;

	proc_close(t->chan);
	t->chan = -1;
	t->granted = false;
	errno = saved;
}

static pid_t proc_fork(const char *name)
{
	struct proc_ticket t;
	proc_fork_fn real = (proc_fork_fn)__atomic_load_n(&proc_real_fork, __ATOMIC_RELAXED);
	pid_t pid;
	int err;

	if (!real) {
		/* Before the constructor: early, single-threaded start-up. */
		real = (proc_fork_fn)dlsym(RTLD_NEXT, "fork");
		__atomic_store_n(&proc_real_fork, (void *)real, __ATOMIC_RELAXED);
		if (!real) {
			errno = ENOSYS;
			return -1;
		}
	}
	err = proc_ask(name, &t);
	if (err) {
		errno = err;
		return -1;
	}
	pid = real();
	if (pid == 0)
		proc_forget(&t);
	else
		proc_done(&t, pid);
	return pid;
}

EXPORT pid_t fork(void)
{
	return proc_fork("fork");
}

/* vfork cannot be wrapped by a C function that calls it: the child would
 * return from the wrapper's frame and the parent resume in a frame the
 * child has since overwritten.  The trampoline below therefore jumps
 * straight into libc's vfork (the caller's return address untouched)
 * unless spawns are counted; then, and before the constructor has run,
 * it goes to proc_vfork_fork(), which asks and forks (POSIX lets vfork be
 * fork; it costs a copy of the address space only under --max-procs). */
__attribute__((used)) pid_t proc_vfork_fork(void);
__attribute__((used)) pid_t proc_vfork_fork(void)
{
	return proc_fork("vfork");
}

#if defined(__x86_64__)
#ifdef __CET__
#define PROC_ENDBR "endbr64\n"
#else
#define PROC_ENDBR ""
#endif
__asm__(".text\n"
	".globl vfork\n"
	".type vfork, @function\n"
	"vfork:\n"
	PROC_ENDBR
	"	cmpb $0, proc_counting_flag(%rip)\n"
	"	jne 1f\n"
	"	mov proc_real_vfork(%rip), %rax\n"
	"	test %rax, %rax\n"
	"	jz 1f\n"
	"	jmp *%rax\n"
	"1:	jmp proc_vfork_fork\n"
	".size vfork, .-vfork\n");
#elif defined(__aarch64__)
__asm__(".text\n"
	".globl vfork\n"
	".type vfork, %function\n"
	"vfork:\n"
	"	adrp x16, proc_counting_flag\n"
	"	ldrb w16, [x16, :lo12:proc_counting_flag]\n"
	"	cbnz w16, 1f\n"
	"	adrp x16, proc_real_vfork\n"
	"	ldr x16, [x16, :lo12:proc_real_vfork]\n"
	"	cbz x16, 1f\n"
	"	br x16\n"
	"1:	b proc_vfork_fork\n"
	".size vfork, .-vfork\n");
#else
/* No trampoline for this architecture: vfork is fork, always. */
EXPORT pid_t vfork(void)
{
	return proc_fork("vfork");
}
#endif

__attribute__((constructor)) static void proc_constructor(void)
{
	shim_init();
	__atomic_store_n(&proc_real_fork, dlsym(RTLD_NEXT, "fork"), __ATOMIC_RELAXED);
	__atomic_store_n(&proc_real_vfork, dlsym(RTLD_NEXT, "vfork"), __ATOMIC_RELAXED);
	__atomic_store_n(&proc_counting_flag, proc_counting() ? 1 : 0, __ATOMIC_RELAXED);
}
