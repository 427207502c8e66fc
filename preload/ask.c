#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <dlfcn.h>

/* Only for the names and types: the library itself is opened at the first
 * backtrace (ask_unwinder()), not linked. */
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "preload/ask.h"
#include "preload/real.h"
#include "preload/shim.h"
#include "lib/alternatives.h"
#include "lib/channel-wire.h"
#include "lib/syscall-open.h"

/* ---- small async-signal-safe helpers ---- */

static long ask_sys_open(int dirfd, const char *path, int flags)
{
	return syscall(SYS_openat, dirfd, path, flags | O_CLOEXEC, 0);
}

static void ask_close(int fd)
{
	syscall(SYS_close, fd);
}

/* "/proc/self/fd/" + decimal FD */
static void ask_fd_link(int fd, char *buf)
{
	char digits[16];
	int n = 0;
	unsigned v = (unsigned)fd;

	memcpy(buf, "/proc/self/fd/", 14);
	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (int i = 0; i < n; i++)
		buf[14 + i] = digits[n - 1 - i];
	buf[14 + n] = 0;
}

/* The path an open FD stands for (readlink of its /proc link). */
static int ask_fd_path(int fd, char *out)
{
	char link[32];
	ssize_t n;

	ask_fd_link(fd, link);
	n = readlink(link, out, PATH_MAX - 1);
	if (n <= 0)
		return -errno;
	out[n] = 0;
	return 0;
}

static int ask_cwd(char *out)
{
	long n = syscall(SYS_getcwd, out, PATH_MAX);

	return n > 0 ? 0 : -ENOENT;
}

/* dir + "/" + name into out; -ENAMETOOLONG when it does not fit. */
static int ask_join(char *out, const char *dir, const char *name, size_t name_len)
{
	size_t d = strlen(dir);

	if (d == 1 && dir[0] == '/')
		d = 0;
	if (d + 1 + name_len + 1 > PATH_MAX)
		return -ENAMETOOLONG;
	if (out != dir)
		memmove(out, dir, d);
	out[d] = '/';
	memcpy(out + d + 1, name, name_len);
	out[d + 1 + name_len] = 0;
	return 0;
}

int ask_path(int dirfd, const char *path, bool follow, char *out)
{
	char parent[PATH_MAX];
	size_t len, cut;
	const char *base;
	int fd, r;

	if (!path)
		return -EFAULT;
	len = strlen(path);
	if (len == 0 || len >= PATH_MAX)
		return len ? -ENAMETOOLONG : -ENOENT;
	if (follow) {
		fd = (int)ask_sys_open(dirfd, path, O_PATH);
		if (fd >= 0) {
			r = ask_fd_path(fd, out);
			ask_close(fd);
			if (r == 0)
				return 0;
		}
	}
	/* The parent: everything before the last component (trailing
	 * slashes of a directory name do not make a component). */
	while (len > 1 && path[len - 1] == '/')
		len--;
	cut = len;
	while (cut > 0 && path[cut - 1] != '/')
		cut--;
	base = path + cut;
	if (cut == 0) {
		memcpy(parent, ".", 2);
	} else {
		size_t p = cut;

		while (p > 1 && path[p - 1] == '/')
			p--;
		memcpy(parent, path, p);
		parent[p] = 0;
	}
	fd = (int)ask_sys_open(dirfd, parent, O_PATH | O_DIRECTORY);
	if (fd >= 0) {
		r = ask_fd_path(fd, out);
		ask_close(fd);
		if (r == 0 && (len - cut) > 0)
			r = ask_join(out, out, base, len - cut);
		if (r == 0)
			return follow ? -ENOENT : 0;
	}
	/* Lexical: the engine removes "." and "..". */
	if (path[0] == '/') {
		memcpy(out, path, len);
		out[len] = 0;
	} else {
		r = dirfd == AT_FDCWD ? ask_cwd(out) : ask_fd_path(dirfd, out);
		if (r < 0)
			return r;
		r = ask_join(out, out, path, len);
		if (r < 0)
			return r;
	}
	return follow ? -ENOENT : 0;
}

/* ---- the channel ---- */

/* Our socket: its number and identity.  A program may close any fd, or
 * dup2() its own over ours; the inode check makes sure a message never
 * goes into one of the program's sockets (a connected TCP socket would
 * take it as data). */
static int ask_fd = -1;
static ino_t ask_ino;
static dev_t ask_dev;

static int ask_socket(void)
{
	int fd = __atomic_load_n(&ask_fd, __ATOMIC_ACQUIRE), hi;
	struct stat st;

	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode) &&
	    st.st_ino == __atomic_load_n(&ask_ino, __ATOMIC_RELAXED) &&
	    st.st_dev == __atomic_load_n(&ask_dev, __ATOMIC_RELAXED))
		return fd;
	fd = (int)syscall(SYS_socket, AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	/* Out of the way of programs that expect their fds low (shells
	 * count on 3..9 being theirs). */
	hi = fcntl(fd, F_DUPFD_CLOEXEC, 700);
	if (hi >= 0) {
		ask_close(fd);
		fd = hi;
	}
	if (fstat(fd, &st) < 0) {
		ask_close(fd);
		return -1;
	}
	__atomic_store_n(&ask_ino, st.st_ino, __ATOMIC_RELAXED);
	__atomic_store_n(&ask_dev, st.st_dev, __ATOMIC_RELAXED);
	__atomic_store_n(&ask_fd, fd, __ATOMIC_RELEASE);
	return fd;
}

static void ask_send(struct channel_msg *m, size_t len)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = ask_socket();
	/* ptrace mode: the supervisor drains the queue at the stop of this
	 * very sendto, but never waits for it; if the queue is full anyway,
	 * a host name is lost rather than the program blocked.  Preload
	 * mode: the supervisor reads all the time; wait for room. */
	int flags = MSG_NOSIGNAL | (shim.mode == SHIM_DECIDE ? 0 : MSG_DONTWAIT);
	long n;

	if (fd < 0)
		return;
	m->magic = CHANNEL_MAGIC;
	m->version = CHANNEL_VERSION;
	m->pid = (int32_t)syscall(SYS_getpid);
	m->ppid = (int32_t)syscall(SYS_getppid);
	memcpy(sa.sun_path, shim.channel, shim.channel_len);
	do
		n = syscall(SYS_sendto, fd, m, len, flags, &sa,
			    (socklen_t)(offsetof(struct sockaddr_un, sun_path) + shim.channel_len));
	while (n < 0 && errno == EINTR);
}

/* The process whose constructor ran: the one where dlopen() is safe. */
static pid_t ask_pid SHIM_HOT;

void ask_init(void)
{
	ask_pid = (pid_t)syscall(SYS_getpid);
}

/* ---- the calling process ---- */

static void ask_copy(char *dst, size_t size, const char *src)
{
	size_t n = src ? strnlen(src, size - 1) : 0;

	if (n)
		memcpy(dst, src, n);
	dst[n] = 0;
}

/* argv as "a\0b\0" in BUF (size bytes); returns the count kept. */
static uint32_t ask_pack_argv(char *buf, size_t size, char *const *argv)
{
	size_t off = 0;
	uint32_t n = 0;

	for (; argv && argv[n]; n++) {
		size_t len = strlen(argv[n]) + 1;

		if (off + len > size)
			break;
		memcpy(buf + off, argv[n], len);
		off += len;
	}
	return n;
}

static void ask_self(struct channel_event *e)
{
	ssize_t n;
	long fd;

	n = readlink("/proc/self/exe", e->exe, sizeof(e->exe) - 1);
	e->exe[n > 0 ? n : 0] = 0;
	if (ask_cwd(e->cwd) < 0)
		e->cwd[0] = 0;
	fd = ask_sys_open(AT_FDCWD, "/proc/self/cmdline", O_RDONLY);
	if (fd >= 0) {
		size_t off = 0;

		while (off < sizeof(e->argv) - 1) {
			n = read((int)fd, e->argv + off, sizeof(e->argv) - 1 - off);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			off += (size_t)n;
		}
		ask_close((int)fd);
		e->argv[off] = 0;
		for (size_t i = 0; i < off; i++)
			if (e->argv[i] == 0)
				e->argc++;
		if (off && e->argv[off - 1] != 0)
			e->argc++;
	}
}

/* Where each pc lies, from /proc/self/maps (read with raw syscalls,
 * parsed in place). */
static unsigned long ask_hex(const char **p)
{
	unsigned long v = 0;

	for (;; (*p)++) {
		char c = **p;

		if (c >= '0' && c <= '9')
			v = v * 16 + (unsigned long)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v * 16 + (unsigned long)(c - 'a' + 10);
		else
			return v;
	}
}

static void ask_maps_line(const char *line, struct channel_event *e)
{
	const char *p = line, *path;
	unsigned long start, end, off;

	start = ask_hex(&p);
	if (*p++ != '-')
		return;
	end = ask_hex(&p);
	p = strchr(p, ' ');             /* perms */
	if (!p)
		return;
	p += 6;                         /* " rwxp " */
	off = ask_hex(&p);
	path = strchr(p, '/');
	if (!path)
		path = strchr(p, '[');
	for (uint32_t i = 0; i < e->n_frames; i++) {
		struct channel_frame *f = &e->frames[i];

		if (f->pc >= start && f->pc < end && !f->object[0]) {
			f->file_offset = f->pc - start + off;
			if (path)
				ask_copy(f->object, sizeof(f->object), path);
		}
	}
}

static void ask_maps(struct channel_event *e)
{
	char buf[4096];
	size_t have = 0;
	long fd = ask_sys_open(AT_FDCWD, "/proc/self/maps", O_RDONLY);

	if (fd < 0)
		return;
	for (;;) {
		ssize_t n = read((int)fd, buf + have, sizeof(buf) - 1 - have);
		char *line, *nl;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = 0;
		line = buf;
		while ((nl = strchr(line, '\n'))) {
			*nl = 0;
			ask_maps_line(line, e);
			line = nl + 1;
		}
		have = (size_t)(buf + have - line);
		memmove(buf, line, have);
		if (have == sizeof(buf) - 1)
			have = 0; /* a line longer than the buffer: drop it */
	}
	ask_close((int)fd);
}

/* libunwind is not linked into the shim: every program of an auto-mode
 * session loads the shim, and linking it would map libunwind and liblzma
 * into each of them (two more opens, each a seccomp stop, and their
 * relocations) for backtraces that only preload-mode denials take.  It is
 * opened at the first backtrace instead, and only where dlopen() is safe:
 * in the process whose constructor ran (ask_pid), never in a vfork or
 * clone(CLONE_VM) child, which shares the parent's memory while its other
 * threads run on, nor in a fork child before its exec.  Elsewhere the record
 * goes without a backtrace, unless an earlier one loaded it. */
#ifndef ASK_UNWIND_SONAME
#define ASK_UNWIND_SONAME "libunwind.so.8"
#endif
#define ASK_STR_(x) #x
#define ASK_STR(x) ASK_STR_(x)

enum { ASK_UNW_NONE, ASK_UNW_LOADING, ASK_UNW_READY, ASK_UNW_FAILED };
static int ask_unw_state;
static int (*ask_unw_backtrace)(void **, int);

static bool ask_unwinder(void)
{
	int (*set_caching)(unw_addr_space_t, unw_caching_policy_t);
	unw_addr_space_t *local;
	int expect = ASK_UNW_NONE;
	void *h;

	if (__atomic_load_n(&ask_unw_state, __ATOMIC_ACQUIRE) == ASK_UNW_READY)
		return true;
	if ((pid_t)syscall(SYS_getpid) != ask_pid ||
	    !__atomic_compare_exchange_n(&ask_unw_state, &expect, ASK_UNW_LOADING, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return false; /* unsafe here, failed before, or another thread loads it */
	h = dlopen(ASK_UNWIND_SONAME, RTLD_LAZY | RTLD_LOCAL);
	set_caching = h ? (int (*)(unw_addr_space_t, unw_caching_policy_t))
				  dlsym(h, ASK_STR(unw_set_caching_policy)) : NULL;
	local = h ? dlsym(h, ASK_STR(unw_local_addr_space)) : NULL;
	ask_unw_backtrace = h ? (int (*)(void **, int))dlsym(h, "unw_backtrace") : NULL;
	if (!set_caching || !local || !ask_unw_backtrace) {
		__atomic_store_n(&ask_unw_state, ASK_UNW_FAILED, __ATOMIC_RELEASE);
		return false; /* the handle stays open: closing is not worth a risk */
	}
	/* No cache, so that no lock of libunwind's is ever held when a
	 * process forks.  Its memory validation pipe is opened later, at
	 * the first unwind: a program listing its own fds finds none of ours
	 * unless it was denied something. */
	set_caching(*local, UNW_CACHE_NONE);
	__atomic_store_n(&ask_unw_state, ASK_UNW_READY, __ATOMIC_RELEASE);
	return true;
}

static void ask_backtrace(struct channel_event *e)
{
	void *pcs[CHANNEL_FRAMES];
	uint32_t own = 0;
	int n;

	if (!ask_unwinder())
		return;
	n = ask_unw_backtrace(pcs, CHANNEL_FRAMES);

	for (int i = 0; i < n; i++)
		e->frames[e->n_frames++].pc = (uint64_t)(uintptr_t)pcs[i];
	if (!e->n_frames)
		return;
	ask_maps(e);
	/* The shim's own frames (this one up to the wrapper) say nothing. */
	while (own < e->n_frames && strcmp(e->frames[own].object, shim.self) == 0)
		own++;
	if (own == e->n_frames)
		return;
	memmove(e->frames, e->frames + own, (e->n_frames - own) * sizeof(e->frames[0]));
	memset(e->frames + (e->n_frames - own), 0, own * sizeof(e->frames[0]));
	e->n_frames -= own;
}

/* ---- deciding ---- */

static uint32_t ask_rule_index(const struct rules_policy *p, const struct rules_rule *r)
{
	if (!r)
		return UINT32_MAX;
	return (uint32_t)(r - rules_rule_at(p, 0));
}

/* An exec's program, argv and identity into E (lib/channel-wire.h). */
static void ask_exec_identity(struct channel_event *e, const struct ask_call *c)
{
	ask_copy(e->target, sizeof(e->target), c->target);
	e->target_argc = ask_pack_argv(e->target_argv, sizeof(e->target_argv), c->target_argv);
	if (c->kind != RULES_KIND_EXEC)
		return;
	e->target_arg0 = (uint32_t)c->target_arg0;
	e->script_arg = (uint32_t)c->script_arg;
	ask_copy(e->path, sizeof(e->path), c->script);
	ask_copy(e->path2, sizeof(e->path2), c->loader);
}

/* The message is big (paths, argv, cwd): built only when there is
 * something to say, in its own frame. */
__attribute__((noinline)) static void ask_report(const struct ask_call *c, uint8_t kind,
						 enum rules_action action, enum rules_action eff,
						 uint32_t rule, int err, bool frames)
{
	struct channel_msg m;
	struct channel_event *e = &m.u.event;

	memset(&m, 0, sizeof(m));
	m.type = CHANNEL_EVENT;
	e->kind = kind;
	e->action = (uint8_t)action;
	e->effective = (uint8_t)eff;
	e->rule = rule;
	e->err = err;
	e->flags = c->flags;
	e->has_flags = c->has_flags;
	ask_copy(e->syscall, sizeof(e->syscall), c->syscall);
	ask_copy(e->path, sizeof(e->path), c->path);
	ask_copy(e->path2, sizeof(e->path2), c->path2);
	e->reads = c->reads;
	e->family = c->family;
	memcpy(e->addr, c->addr, sizeof(e->addr));
	e->port = c->port;
	e->bind = c->bind;
	e->endpoint = c->endpoint;
	e->quiet = c->quiet;
	e->listener = c->listener;
	ask_copy(e->unix_path, sizeof(e->unix_path), c->unix_path);
	ask_copy(e->host, sizeof(e->host), c->host);
	ask_exec_identity(e, c);
	ask_self(e);
	if (frames)
		ask_backtrace(e);
	ask_send(&m, sizeof(m));
}

/* The denied file PATH is another name of (tracer/confine/linked.h: a
 * hard link made before the session), or NULL: looked at by lstat, as
 * the judged path is the object. */
static const char *ask_linked_name(const char *path)
{
	const struct channel_linked_head *h = shim.linked;
	const struct channel_linked_file *f = (const struct channel_linked_file *)(h + 1);
	const char *strings = (const char *)(f + h->n);
	struct stat st;

	if (!path || syscall(SYS_newfstatat, AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    !S_ISREG(st.st_mode) || st.st_nlink < 2)
		return NULL;
	for (uint32_t i = 0; i < h->n; i++)
		if (f[i].ino == (uint64_t)st.st_ino && f[i].dev == (uint64_t)st.st_dev)
			return strcmp(strings + f[i].path, path) != 0 ? strings + f[i].path : NULL;
	return NULL;
}

/* PATH with this process's own /proc entries as /proc/self/...
 * (rules_proc_self()): ask_path() has resolved the "self" link to the
 * number.  BUF holds PATH_MAX bytes. */
static const char *ask_proc_self(const char *path, char *buf)
{
	size_t len;

	if (!path || strncmp(path, "/proc/", 6) != 0 || (len = strlen(path)) >= PATH_MAX)
		return path;
	memcpy(buf, path, len + 1);
	rules_proc_self(buf, PATH_MAX, (pid_t)syscall(SYS_getpid), NULL, NULL);
	return buf;
}

/* The kernel's own answer to a call the policy would refuse, when it comes
 * before any permission check and nothing can happen, as the supervisor
 * gives it (tracer/judge.c): refused so, with no record.  An open without
 * O_CREAT of a missing name fails with ENOENT; a mkdir of a name that
 * exists with EEXIST (`mkdir -p` tries every ancestor). */
static int ask_kernel_answer(const struct ask_call *c, int n)
{
	struct stat st;

	if (!c->path || (c->kind != RULES_KIND_READ && c->kind != RULES_KIND_WRITE))
		return 0;
	/* An open's events (a write and a read) name one path. */
	if (c->has_flags)
		return syscall_open_missing(c->flags, c->path);
	if (n != 1)
		return 0;
	if (c->kind == RULES_KIND_WRITE && c->syscall &&
	    (strcmp(c->syscall, "mkdir") == 0 || strcmp(c->syscall, "mkdirat") == 0) &&
	    fstatat(AT_FDCWD, c->path, &st, AT_SYMLINK_NOFOLLOW) == 0)
		return EEXIST;
	return 0;
}

/* The Debian alternative the exec's program was called by, when the link
 * leads to that very program (lib/alternatives.h), as the supervisor
 * finds it (tracer/judge.c): the link's path in LINK, or NULL. */
static const char *ask_exec_alias(const struct ask_call *c, char *link)
{
	char real[PATH_MAX];

	if (!c->target || !c->target_argv || !alternatives_link(c->target_argv[0], link, PATH_MAX) ||
	    ask_path(AT_FDCWD, link, true, real) < 0)
		return NULL;
	return strcmp(real, c->target) == 0 ? link : NULL;
}

/* ---- local destinations (preload mode) ---- */

/* An endpoint message: the channel header and its body, nothing more
 * (the receiver reads the rest of struct channel_msg as zeros). */
struct ask_endpoint_msg {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	int32_t pid;
	int32_t ppid;
	struct channel_endpoint endpoint;
};
_Static_assert(offsetof(struct ask_endpoint_msg, endpoint) == offsetof(struct channel_msg, u) &&
	       offsetof(struct ask_endpoint_msg, pid) == offsetof(struct channel_msg, pid),
	       "struct ask_endpoint_msg is channel_msg's header + channel_endpoint");

static void ask_endpoint_fill(struct ask_endpoint_msg *m, uint16_t type, int family,
			      const char *name)
{
	memset(m, 0, sizeof(*m));
	m->magic = CHANNEL_MAGIC;
	m->version = CHANNEL_VERSION;
	m->type = type;
	m->pid = (int32_t)syscall(SYS_getpid);
	m->ppid = (int32_t)syscall(SYS_getppid);
	m->endpoint.family = family;
	m->endpoint.reply_fd = m->endpoint.sock_fd = -1;
	ask_copy(m->endpoint.name, sizeof(m->endpoint.name), name);
}

/* M to the channel on CHAN, with the descriptors FDS[0..N) attached. */
static int ask_endpoint_send(int chan, struct ask_endpoint_msg *m, const int *fds, size_t n)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(2 * sizeof(int))];
	} ctl;
	struct iovec iov = { m, sizeof(*m) };
	struct msghdr mh = { .msg_name = &sa, .msg_iov = &iov, .msg_iovlen = 1 };
	long r;

	memcpy(sa.sun_path, shim.channel, shim.channel_len);
	mh.msg_namelen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + shim.channel_len);
	if (n) {
		struct cmsghdr *c;

		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = CMSG_SPACE(n * sizeof(int));
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(n * sizeof(int));
		memcpy(CMSG_DATA(c), fds, n * sizeof(int));
	}
	do
		r = syscall(SYS_sendmsg, chan, &mh, MSG_NOSIGNAL);
	while (r < 0 && errno == EINTR);
	return r < 0 ? -1 : 0;
}

void ask_bound(uint64_t ino, int family, const char *name)
{
	struct ask_endpoint_msg m;
	int saved = errno, chan;

	if (shim.mode != SHIM_DECIDE || !ino)
		return;
	ask_endpoint_fill(&m, CHANNEL_BIND, family, name);
	m.endpoint.ino = ino;
	chan = ask_socket();
	if (chan >= 0)
		ask_endpoint_send(chan, &m, NULL, 0);
	errno = saved;
}

/* What the supervisor says of C's local destination (EV), into A; a
 * shim that gets no answer takes it to be outside. */
static void ask_endpoint(const struct ask_call *c, const struct rules_event *ev,
			 struct channel_endpoint_answer *a)
{
	struct ask_endpoint_msg m;
	int sv[2] = { -1, -1 }, chan = -1, fds[2];
	long n;

	memset(a, 0, sizeof(*a));
	a->endpoint = RULES_ENDPOINT_OUTSIDE;
	ask_endpoint_fill(&m, CHANNEL_ENDPOINT_ASK, ev->family,
			  ev->family == AF_UNIX ? ev->unix_path : NULL);
	memcpy(m.endpoint.addr, ev->addr, sizeof(m.endpoint.addr));
	m.endpoint.port = ev->port;
	chan = (int)syscall(SYS_socket, AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (chan < 0 || syscall(SYS_socketpair, AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		goto out;
	fds[0] = sv[1];
	fds[1] = c->sock_fd;
	if (ask_endpoint_send(chan, &m, fds, c->sock_fd >= 0 ? 2 : 1) < 0)
		goto out;
	ask_close(sv[1]);
	sv[1] = -1;
	do
		n = syscall(SYS_recvfrom, sv[0], a, sizeof(*a), 0, NULL, NULL);
	while (n < 0 && errno == EINTR);
	if (n != (long)sizeof(*a)) {
		memset(a, 0, sizeof(*a));
		a->endpoint = RULES_ENDPOINT_OUTSIDE;
	}
out:
	if (sv[0] >= 0)
		ask_close(sv[0]);
	if (sv[1] >= 0)
		ask_close(sv[1]);
	if (chan >= 0)
		ask_close(chan);
}

int ask_decide(const struct ask_call *call)
{
	const struct rules_policy *p = shim.policy;
	struct rules_event ev[RULES_CALL_EVENTS];
	struct rules_call_verdict v;
	struct ask_call self = *call;
	const struct ask_call *c = &self;
	char proc1[PATH_MAX], proc2[PATH_MAX], link[PATH_MAX];
	char unlinked[PATH_MAX];
	bool explicit_deny_only[RULES_CALL_EVENTS] = { false, c->path2_explicit_deny_only };
	int saved = errno, n = c->path2 ? 2 : 1, err = 0, local_answer = 0;

	if (!p)
		return 0;
	self.path = ask_proc_self(call->path, proc1);
	self.path2 = ask_proc_self(call->path2, proc2);
	memset(ev, 0, sizeof(ev));
	for (int i = 0; i < n; i++) {
		ev[i].kind = c->kind;
		ev[i].path = i ? c->path2 : c->path;
		ev[i].exe = c->target;
		ev[i].argv = c->target_argv ? (const char *const *)c->target_argv + c->target_arg0 :
					      NULL;
		for (ev[i].argc = 0; ev[i].argv && ev[i].argv[ev[i].argc]; ev[i].argc++)
			;
		ev[i].loader = c->loader;
		ev[i].script = c->script;
		ev[i].script_arg = c->script_arg;
		ev[i].family = c->family;
		memcpy(ev[i].addr, c->addr, sizeof(ev[i].addr));
		ev[i].port = c->port;
		ev[i].host = c->host;
		ev[i].unix_path = c->unix_path;
		ev[i].bind = c->bind;
	}
	n = (int)rules_add_name_reads(ev, (size_t)n, c->reads, c->path, c->path2);
	/* A read of an unlinked file is a read of the name it had
	 * (lib/syscall-open.h), as the supervisor judges it. */
	if (syscall_unlinked_name(c->path, unlinked, sizeof(unlinked)))
		for (int i = 0; i < n; i++)
			if (ev[i].kind == RULES_KIND_READ && ev[i].path == c->path)
				ev[i].path = unlinked;
	/* Another name of a denied file is that file, as the supervisor
	 * judges it (tracer/judge.c): its reads, and the writes that change
	 * its bytes, not those that change names (an rm of a stray link). */
	for (int i = 0; shim.linked && i < n; i++) {
		const char *name = ev[i].kind == RULES_KIND_READ ||
					   (ev[i].kind == RULES_KIND_WRITE && c->changes_file) ?
				   ask_linked_name(ev[i].path) : NULL;

		if (name)
			ev[i].path = name;
	}
	rules_decide_call(p, ev, (size_t)n, explicit_deny_only, &v);
	/* A local destination: whose it is, from the supervisor, where the
	 * verdict can depend on it (as tracer/stop.c asks). */
	if (c->kind == RULES_KIND_NET && n == 1 && shim.mode == SHIM_DECIDE &&
	    rules_net_local(&ev[0]) &&
	    (rules_endpoint_first(p) ||
	     v.rule == rules_rule_at(p, p->fallback_net[RULES_NET_FB_LOCAL]))) {
		struct channel_endpoint_answer a;

		ask_endpoint(c, &ev[0], &a);
		ev[0].endpoint = a.endpoint;
		self.endpoint = a.endpoint;
		self.listener = a.listener;
		local_answer = a.answer;
		rules_decide_call(p, ev, (size_t)n, explicit_deny_only, &v);
	}
	if (c->kind == RULES_KIND_EXEC && n == 1 &&
	    v.rule == rules_rule_at(p, p->fallback[RULES_KIND_EXEC]))
		rules_decide_exec_alias(p, &ev[0], ask_exec_alias(c, link), &v);
	/* A mkdir on the way to a write root (rules_write_root_ancestor()),
	 * as the supervisor lets it through (tracer/judge.c). */
	if (n == 1 && c->kind == RULES_KIND_WRITE && v.action == RULES_ACTION_DENY &&
	    v.rule == rules_rule_at(p, p->fallback[RULES_KIND_WRITE]) && c->syscall &&
	    (strcmp(c->syscall, "mkdir") == 0 || strcmp(c->syscall, "mkdirat") == 0) &&
	    rules_write_root_ancestor(p, c->path)) {
		errno = saved;
		return 0;
	}
	if (v.action != RULES_ACTION_ALLOW && ev[0].endpoint == RULES_ENDPOINT_NONE &&
	    rules_net_local(&ev[0])) {
		/* Nothing is there: the kernel's own answer, or a datagram
		 * that reaches nobody goes (tracer/judge.c). */
		if (local_answer || v.rule == rules_fallback(p, &ev[0])) {
			err = v.effective == RULES_ACTION_DENY ? local_answer : 0;
			/* Reported all the same: a destination tried counts in
			 * the summary's egress. */
			self.quiet = true;
			ask_report(c, (uint8_t)c->kind, v.action, v.effective,
				   ask_rule_index(p, v.rule), err, false);
			errno = saved;
			return err;
		}
	}
	if (v.action != RULES_ACTION_ALLOW) {
		int answer = ask_kernel_answer(c, n);

		if (answer) {
			errno = saved;
			return v.effective == RULES_ACTION_DENY ? answer : 0;
		}
	}
	if (v.effective == RULES_ACTION_DENY)
		err = EACCES;
	/* An allowed connect or send is reported too: the supervisor counts
	 * every destination for the summary's egress. */
	if (v.effective != RULES_ACTION_ALLOW || p->record || c->kind == RULES_KIND_NET)
		/* Exec: no backtrace, it may run in a vfork child (see
		 * agenttrace(1) BACKENDS on libunwind). */
		ask_report(c, (uint8_t)c->kind, v.action, v.effective, ask_rule_index(p, v.rule), err,
			   v.effective != RULES_ACTION_ALLOW && c->kind != RULES_KIND_EXEC);
	else if (c->kind == RULES_KIND_EXEC)
		ask_exec_notice(c);
	errno = saved;
	return err;
}

__attribute__((noinline)) void ask_exec_notice(const struct ask_call *c)
{
	struct channel_msg m;
	struct channel_event *e = &m.u.event;
	int saved = errno;

	if (shim.mode != SHIM_DECIDE)
		return;
	memset(&m, 0, sizeof(m));
	m.type = CHANNEL_EVENT;
	e->kind = CHANNEL_KIND_EXEC_NOTICE;
	e->rule = UINT32_MAX;
	ask_copy(e->syscall, sizeof(e->syscall), "execve");
	ask_exec_identity(e, c);
	ask_self(e);
	ask_send(&m, sizeof(m));
	errno = saved;
}

/* ---- host names ---- */

/* This process's own answers (preload mode decides connects with them):
 * a small ring, each slot guarded by a sequence count so that readers
 * (connect, possibly in a signal handler) never lock; writers (lookups,
 * which are not async-signal-safe anyway) take a spin flag. */
#define ASK_HOSTS 64

struct ask_host {
	unsigned seq; /* odd while being written */
	uint8_t family;
	uint8_t addr[16];
	char name[CHANNEL_HOST_MAX];
};

static struct ask_host ask_hosts[ASK_HOSTS];
static unsigned ask_hosts_next;
static char ask_hosts_lock;

static void ask_hosts_put(const char *name, const struct channel_addr *a)
{
	struct ask_host *h;

	while (__atomic_test_and_set(&ask_hosts_lock, __ATOMIC_ACQUIRE))
		;
	h = &ask_hosts[ask_hosts_next++ % ASK_HOSTS];
	__atomic_store_n(&h->seq, h->seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	h->family = a->family;
	memcpy(h->addr, a->addr, 16);
	ask_copy(h->name, sizeof(h->name), name);
	__atomic_store_n(&h->seq, h->seq + 1, __ATOMIC_RELEASE);
	__atomic_clear(&ask_hosts_lock, __ATOMIC_RELEASE);
}

const char *ask_host_of(int family, const uint8_t addr[16], char *buf)
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	uint8_t v4[16] = { 0 };
	unsigned next = __atomic_load_n(&ask_hosts_next, __ATOMIC_ACQUIRE);

	if (family == AF_INET6 && memcmp(addr, mapped, 12) == 0) {
		memcpy(v4, addr + 12, 4);
		family = AF_INET;
		addr = v4;
	}
	for (unsigned i = 1; i <= ASK_HOSTS && i <= next; i++) {
		struct ask_host *h = &ask_hosts[(next - i) % ASK_HOSTS];
		unsigned s1 = __atomic_load_n(&h->seq, __ATOMIC_ACQUIRE), s2;
		bool hit;

		if (s1 & 1)
			continue;
		hit = h->family == family && memcmp(h->addr, addr, family == AF_INET ? 4 : 16) == 0;
		if (hit)
			memcpy(buf, h->name, CHANNEL_HOST_MAX);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		s2 = __atomic_load_n(&h->seq, __ATOMIC_RELAXED);
		if (hit && s1 == s2) {
			buf[CHANNEL_HOST_MAX - 1] = 0;
			return buf;
		}
	}
	return NULL;
}

static bool ask_numeric(const char *name)
{
	unsigned char tmp[16];

	return inet_pton(AF_INET, name, tmp) == 1 || inet_pton(AF_INET6, name, tmp) == 1;
}

static void ask_hosts_send(struct channel_msg *m)
{
	struct channel_hosts *h = &m->u.hosts;

	if (!h->n)
		return;
	for (unsigned i = 0; i < h->n; i++)
		ask_hosts_put(h->name, &h->addrs[i]);
	m->type = CHANNEL_HOSTS;
	h->source = CHANNEL_SOURCE_SHIM;
	ask_send(m, CHANNEL_HEADER_SIZE + sizeof(*h));
}

static void ask_hosts_add(struct channel_hosts *h, int family, const void *addr)
{
	struct channel_addr a = { .family = (uint8_t)family };

	memcpy(a.addr, addr, family == AF_INET ? 4 : 16);
	for (unsigned i = 0; i < h->n; i++)
		if (memcmp(&h->addrs[i], &a, sizeof(a)) == 0)
			return;
	if (h->n < CHANNEL_HOST_ADDRS)
		h->addrs[h->n++] = a;
}

void ask_hosts_addrinfo(const char *name, const struct addrinfo *res)
{
	struct channel_msg m;
	int saved = errno;

	if (!name || ask_numeric(name))
		return;
	memset(&m, 0, sizeof(m));
	ask_copy(m.u.hosts.name, sizeof(m.u.hosts.name), name);
	for (const struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		if (ai->ai_family == AF_INET && ai->ai_addr)
			ask_hosts_add(&m.u.hosts, AF_INET,
				      &((const struct sockaddr_in *)ai->ai_addr)->sin_addr);
		else if (ai->ai_family == AF_INET6 && ai->ai_addr)
			ask_hosts_add(&m.u.hosts, AF_INET6,
				      &((const struct sockaddr_in6 *)ai->ai_addr)->sin6_addr);
	}
	ask_hosts_send(&m);
	errno = saved;
}

void ask_hosts_list(const char *name, int family, char **addrs)
{
	struct channel_msg m;
	int saved = errno;

	if (!name || ask_numeric(name) || (family != AF_INET && family != AF_INET6))
		return;
	memset(&m, 0, sizeof(m));
	ask_copy(m.u.hosts.name, sizeof(m.u.hosts.name), name);
	for (size_t i = 0; addrs && addrs[i]; i++)
		ask_hosts_add(&m.u.hosts, family, addrs[i]);
	ask_hosts_send(&m);
	errno = saved;
}
