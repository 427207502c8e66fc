/* Calls the notify engine makes itself (tracer/unotify/emulate.h). */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/xalloc.h"
#include "tracer/confine/endpoints.h"
#include "tracer/confine/mask.h"
#include "tracer/inspect/creds.h"
#include "tracer/inspect/proc.h"
#include "tracer/ptrace/tracee.h"
#include "tracer/session.h"
#include "tracer/stop.h"
#include "tracer/syscall/call.h"
#include "tracer/unotify/emulate.h"
#include "tracer/unotify/listener.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

bool emulate_needed(const struct session *s, const struct tracee *t)
{
	(void)s;
	return t->shares_mm || (t->group && t->group->tasks > 1);
}

/* PATH, exactly: no symlink on the way (one there now appeared after the
 * check: ELOOP), as an O_PATH descriptor.  Looked up in the caller's view
 * (VIEW, its root: mask_view_fd()), so that the command's masks hold for
 * what the supervisor opens for it too; AT_FDCWD: the views are one. */
static int emulate_path_fd(int view, const char *path, int extra)
{
	struct open_how how = { .flags = (unsigned long long)(O_PATH | O_CLOEXEC | extra),
				.resolve = RESOLVE_NO_SYMLINKS };
	long fd;

	if (view != AT_FDCWD) {
		while (*path == '/')
			path++;
		if (!*path)
			path = ".";
	}
	fd = syscall(SYS_openat2, view, path, &how, sizeof(how));

	return fd < 0 ? -errno : (int)fd;
}

/* Opens FD0 (an O_PATH descriptor) again with FLAGS, as the kernel opens
 * a /proc/self/fd link: the same inode, with the permission checks of an
 * open.  Never a controlling terminal for the supervisor. */
static int emulate_reopen(int fd0, int flags)
{
	char link[32];
	int fd;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd0);
	fd = open(link, (flags & ~(O_CREAT | O_EXCL | O_NOFOLLOW | O_DIRECTORY)) | O_NOCTTY |
			O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* The descriptor into the caller, as the call's result. */
static int emulate_hand_over(struct session *s, uint64_t id, int fd, int flags)
{
	struct seccomp_notif_addfd add = {
		.id = id,
		.flags = SECCOMP_ADDFD_FLAG_SEND,
		.srcfd = (uint32_t)fd,
		.newfd_flags = (uint32_t)(flags & O_CLOEXEC),
	};
	int r = ioctl(s->listener_fd, SECCOMP_IOCTL_NOTIF_ADDFD, &add);

	return r < 0 ? -errno : 0;
}

/* A FIFO's open waits for the other end: made by a thread of its own, so
 * that the one that answers everyone never waits on it. */
struct emulate_fifo_job {
	int listener;
	uint64_t id;
	int fd0;
	int flags;
	struct creds creds;
};

static void *emulate_fifo_thread(void *arg)
{
	struct emulate_fifo_job *j = arg;
	struct creds saved;
	struct seccomp_notif_resp resp = { .id = j->id };
	int fd;

	creds_become(&j->creds, &saved);
	fd = emulate_reopen(j->fd0, j->flags);
	close(j->fd0);
	if (fd >= 0) {
		struct seccomp_notif_addfd add = {
			.id = j->id,
			.flags = SECCOMP_ADDFD_FLAG_SEND,
			.srcfd = (uint32_t)fd,
			.newfd_flags = (uint32_t)(j->flags & O_CLOEXEC),
		};

		if (ioctl(j->listener, SECCOMP_IOCTL_NOTIF_ADDFD, &add) < 0 && errno != ENOENT)
			debug_msg("ADDFD of a FIFO: %s", strerror(errno));
		close(fd);
	} else {
		resp.error = fd;
		if (ioctl(j->listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && errno != ENOENT)
			debug_msg("answering a FIFO's open: %s", strerror(errno));
	}
	free(j);
	return NULL;
}

static int emulate_fifo(struct session *s, const struct unotify_call *u, int fd0, int flags,
			const struct creds *cr)
{
	struct emulate_fifo_job *j = xmalloc(sizeof(*j));
	pthread_attr_t attr;
	pthread_t th;
	int r;

	*j = (struct emulate_fifo_job){ .listener = s->listener_fd, .id = u->id, .fd0 = fd0,
					 .flags = flags, .creds = *cr };
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	r = pthread_create(&th, &attr, emulate_fifo_thread, j);
	pthread_attr_destroy(&attr);
	if (r != 0) {
		close(fd0);
		free(j);
		return -r;
	}
	return 1;
}

/* The terminal a process names /dev/tty is its own controlling one, and
 * opening a terminal without O_NOCTTY can make it that: both are the
 * caller's business, which the supervisor cannot do for it. */
static bool emulate_terminal_of_caller(const struct stat *st, int flags)
{
	unsigned maj = major(st->st_rdev);

	if (!S_ISCHR(st->st_mode))
		return false;
	if (maj == 5 && minor(st->st_rdev) == 0)
		return true; /* /dev/tty */
	/* Terminals (4), the console and ptmx (5), pty slaves (136-143). */
	return !(flags & O_NOCTTY) && (maj == 4 || maj == 5 || (maj >= 136 && maj <= 143));
}

int emulate_open(struct session *s, const struct unotify_call *u, const struct call *c,
		 struct stop_answer *a)
{
	struct creds cr, saved;
	const char *path = c->path[0];
	char proc[PATH_MAX];
	int flags = c->flags, fd0, fd = -1, r, view;
	struct stat st;

	if (!c->is_open || c->n_events == 0 || !path[0] || c->open_resolve ||
	    (flags & O_PATH))
		return -ENOTSUP;
	/* A session process's own /proc entry, judged as /proc/self: its
	 * entry, not the supervisor's (and "self" is a symlink, which the
	 * exact open below refuses). */
	if (c->path_proc[0] > 0 && strncmp(path, "/proc/self", 10) == 0) {
		int n = snprintf(proc, sizeof(proc), "/proc/%d%s", (int)c->path_proc[0],
				 path + 10);

		if (n < 0 || (size_t)n >= sizeof(proc))
			return -ENOTSUP;
		path = proc;
	}
	/* Without the caller's view the kernel's own walk, which the masks
	 * govern, is better than one in the supervisor's. */
	view = mask_view_fd(s, u->tid);
	if (view < 0 && view != AT_FDCWD)
		return -ENOTSUP;
	r = creds_of_task(u->tid, &cr);
	if (r < 0)
		return -ENOTSUP;
	creds_become(&cr, &saved);
	fd0 = emulate_path_fd(view, path, (flags & O_NOFOLLOW) ? O_NOFOLLOW : 0);
	if (fd0 >= 0) {
		if (fstat(fd0, &st) < 0) {
			r = -errno;
		} else if ((flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL)) {
			r = -EEXIST;
		} else if (S_ISLNK(st.st_mode)) {
			r = -ELOOP; /* O_NOFOLLOW on a symlink */
		} else if ((flags & O_DIRECTORY) && !S_ISDIR(st.st_mode) &&
			   (flags & O_TMPFILE) != O_TMPFILE) {
			r = -ENOTDIR;
		} else if (emulate_terminal_of_caller(&st, flags)) {
			r = -ENOTSUP;
		} else if (S_ISFIFO(st.st_mode) && !(flags & O_NONBLOCK)) {
			creds_restore(&saved);
			return emulate_fifo(s, u, fd0, flags, &cr);
		} else if ((flags & O_TMPFILE) == O_TMPFILE) {
			mode_t old = umask(cr.umask);

			fd = openat(fd0, ".", flags | O_CLOEXEC, c->open_mode);
			r = fd < 0 ? -errno : 0;
			umask(old);
		} else {
			fd = emulate_reopen(fd0, flags);
			r = fd < 0 ? fd : 0;
		}
		close(fd0);
	} else if (fd0 == -ENOENT && (flags & O_CREAT)) {
		/* A new name: its directory exactly, the name not followed. */
		char dir[PATH_MAX];
		const char *slash = strrchr(path, '/');
		mode_t old;
		int dfd;

		if (!slash || (size_t)(slash - path) >= sizeof(dir)) {
			r = -ENAMETOOLONG;
		} else {
			memcpy(dir, path, (size_t)(slash - path));
			dir[slash - path] = '\0';
			dfd = emulate_path_fd(view, dir[0] ? dir : "/", O_DIRECTORY);
			if (dfd < 0) {
				r = dfd;
			} else {
				old = umask(cr.umask);
				fd = openat(dfd, slash + 1, flags | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC,
					    c->open_mode);
				r = fd < 0 ? -errno : 0;
				umask(old);
				close(dfd);
			}
		}
	} else {
		r = fd0;
	}
	creds_restore(&saved);
	if (r == -ENOTSUP)
		return -ENOTSUP;
	if (r < 0) {
		a->how = STOP_RETURN;
		a->ret = r;
		return 0;
	}
	r = emulate_hand_over(s, u->id, fd, flags);
	close(fd);
	if (r < 0 && r != -ENOENT) {
		a->how = STOP_RETURN;
		a->ret = r;
		return 0;
	}
	return 1;
}

/* ---- connect ---- */

/* A connect may wait (a TCP handshake, a full listen queue): made by a
 * thread of its own, on a copy of the caller's descriptor (the same open
 * socket: pidfd_getfd(2)), to the address that was judged. */
struct emulate_connect_job {
	int listener;
	uint64_t id;
	int fd;
	struct sockaddr_storage addr;
	socklen_t len;
	struct creds creds;
};

static void *emulate_connect_thread(void *arg)
{
	struct emulate_connect_job *j = arg;
	struct creds saved;
	struct seccomp_notif_resp resp = { .id = j->id };
	int r;

	/* A UNIX socket's connect checks write permission on its file, as
	 * the caller. */
	creds_become(&j->creds, &saved);
	do
		r = connect(j->fd, (const struct sockaddr *)&j->addr, j->len);
	while (r < 0 && errno == EINTR);
	resp.error = r < 0 ? -errno : 0;
	close(j->fd);
	if (ioctl(j->listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && errno != ENOENT)
		debug_msg("answering a connect: %s", strerror(errno));
	free(j);
	return NULL;
}

int emulate_connect(struct session *s, const struct unotify_call *u, const struct call *c,
		    pid_t tgid, struct stop_answer *a)
{
	struct emulate_connect_job *j;
	pthread_attr_t attr;
	pthread_t th;
	int pidfd, fd, r;

	if (!c->name || strcmp(c->name, "connect") != 0 || c->sockaddr_len == 0 ||
	    c->sockaddr_len > sizeof(c->sockaddr))
		return -ENOTSUP;
	j = xmalloc(sizeof(*j));
	if (creds_of_task(u->tid, &j->creds) < 0) {
		free(j);
		return -ENOTSUP;
	}
	if (s->endpoint_copy >= 0) {
		/* The socket whose local destination was judged
		 * (endpoints.h): the caller's descriptor may name another by
		 * now. */
		fd = s->endpoint_copy;
		s->endpoint_copy = -1;
		r = 0;
	} else {
		pidfd = (int)syscall(SYS_pidfd_open, tgid, 0);
		fd = pidfd < 0 ? -1 : (int)syscall(SYS_pidfd_getfd, pidfd, (int)c->args[0], 0);
		r = errno;
		if (pidfd >= 0)
			close(pidfd);
	}
	if (fd < 0) {
		free(j);
		/* EBADF and the like: the kernel's own answer to the caller. */
		a->how = STOP_RETURN;
		a->ret = r == EBADF || r == ENOTSOCK ? -r : -EBADF;
		return 0;
	}
	j->listener = s->listener_fd;
	j->id = u->id;
	j->fd = fd;
	j->addr = c->sockaddr;
	j->len = (socklen_t)c->sockaddr_len;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	r = pthread_create(&th, &attr, emulate_connect_thread, j);
	pthread_attr_destroy(&attr);
	if (r != 0) {
		close(fd);
		free(j);
		return -ENOTSUP;
	}
	return 1;
}

/* ---- bind, listen ---- */

/* Whether the caller (thread TID) may bind PORT: the kernel asks
 * CAP_NET_BIND_SERVICE below ip_unprivileged_port_start, of the task
 * that binds, which here would be the supervisor. */
static bool emulate_may_bind_port(pid_t tid, unsigned port)
{
	char text[16384], start[32];
	unsigned long long eff = 0;
	long first = 1024;
	ssize_t n;
	int fd;

	if (port == 0)
		return true;
	fd = open("/proc/sys/net/ipv4/ip_unprivileged_port_start", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, start, sizeof(start) - 1);
		if (n > 0) {
			start[n] = '\0';
			first = strtol(start, NULL, 10);
		}
		close(fd);
	}
	if ((long)port >= first)
		return true;
	if (proc_read(tid, "status", text, sizeof(text)) < 0 ||
	    !proc_status_field(text, "\nCapEff:", 16, &eff))
		return false;
	return (eff >> 10) & 1; /* CAP_NET_BIND_SERVICE */
}

int emulate_bind(struct session *s, const struct unotify_call *u, const struct call *c,
		 pid_t tgid, struct stop_answer *a)
{
	const struct rules_event *ev = &c->events[0];
	int fd;

	(void)s;
	if (!c->binds || c->n_events != 1 || ev->kind != RULES_KIND_NET || !ev->bind ||
	    c->sockaddr_len == 0 || c->sockaddr_len > sizeof(c->sockaddr))
		return -ENOTSUP; /* a UNIX socket: its file is made as the kernel makes it */
	a->how = STOP_RETURN;
	if (!emulate_may_bind_port(u->tid, ev->port)) {
		a->ret = -EACCES;
		return 0;
	}
	fd = endpoints_copy(tgid, (int)c->args[0]);
	if (fd < 0) {
		a->ret = fd == -EBADF ? -EBADF : -ENOTSOCK;
		return 0;
	}
	a->ret = bind(fd, (const struct sockaddr *)&c->sockaddr, (socklen_t)c->sockaddr_len) < 0 ?
			 -errno : 0;
	close(fd);
	return 0;
}

int emulate_listen(struct session *s, const struct unotify_call *u, const struct call *c,
		   pid_t tgid, struct stop_answer *a)
{
	const struct rules_event *judged = &c->events[0];
	struct rules_event now;
	int fd, r;

	(void)s;
	(void)u;
	if (!c->listens)
		return -ENOTSUP;
	a->how = STOP_RETURN;
	fd = endpoints_copy(tgid, (int)c->args[0]);
	if (fd < 0) {
		a->ret = fd == -EBADF ? -EBADF : -ENOTSOCK;
		return 0;
	}
	r = endpoints_listen_event(fd, &now);
	/* Another socket, or another address, than the one judged (the
	 * descriptor was replaced, or another thread bound it meanwhile):
	 * refused rather than listened on unjudged. */
	if (r < 0)
		a->ret = r;
	else if ((r == 1) != (c->n_events == 1) ||
		 (r == 1 && (now.family != judged->family || now.port != judged->port ||
			     memcmp(now.addr, judged->addr, sizeof(now.addr)) != 0)))
		a->ret = -EACCES;
	else
		a->ret = listen(fd, (int)c->args[1]) < 0 ? -errno : 0;
	close(fd);
	return 0;
}
