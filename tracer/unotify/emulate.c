/* Calls the notify engine makes itself (tracer/unotify/emulate.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sched.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/syscall-open.h"
#include "lib/syscall-rename.h"
#include "lib/xalloc.h"
#include "tracer/confine/endpoints.h"
#include "tracer/confine/landlock.h"
#include "tracer/confine/mask.h"
#include "tracer/inspect/creds.h"
#include "tracer/inspect/proc.h"
#include "tracer/judge.h"
#include "tracer/ptrace/tracee.h"
#include "tracer/session.h"
#include "tracer/stop.h"
#include "tracer/syscall/call.h"
#include "tracer/syscall/mem.h"
#include "tracer/unotify/emulate-internal.h"
#include "tracer/unotify/emulate.h"
#include "tracer/unotify/exposed.h"
#include "tracer/unotify/listener.h"
#include "tracer/unotify/namewatch.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

/* Whether C is a call the engine can make itself (below). */
static bool emulate_makes(const struct call *c)
{
	return c->is_open || c->binds || c->sockaddr_len ||
	       (c->name && (strcmp(c->name, "sendto") == 0 || strcmp(c->name, "sendmsg") == 0 ||
			    strcmp(c->name, "sendmmsg") == 0)) ||
	       emulate_path_op_of(c) != EMULATE_PATH_NONE;
}

/* Whether C is an open that only reads, its flags in a register (not in
 * openat2's open_how), in a session where the kernel itself keeps the
 * denied reads out of reach, and no read is the supervisor's to record:
 * every credential that existed at the start masked, no object of a
 * read alert rule there (mask_guards_reads()), and Landlock in force,
 * which refuses the /proc files of processes outside the session that
 * need ptrace access (environ, mem).  A thread that rewrites such a path
 * between the check and the kernel's read then reaches nothing a second
 * process swapping a symlink in it would not, and that the masks answer
 * (doc/INTERNALS.md, "Callers that can race"). */
static bool emulate_read_guarded(struct session *s, const struct call *c)
{
	if (!c->is_open || strcmp(c->name, "openat2") == 0)
		return false;
	/* O_PATH: open(2) drops every flag but O_CLOEXEC, O_DIRECTORY and
	 * O_NOFOLLOW. */
	if (!(c->flags & O_PATH) &&
	    ((c->flags & O_ACCMODE) != O_RDONLY ||
	     (c->flags & (O_CREAT | O_TRUNC | (O_TMPFILE & ~O_DIRECTORY)))))
		return false;
	return landlock_abi_in_force(s->landlock) > 0 && mask_guards_reads(s->mask, s->policy);
}

/* The names allowed call C gives files, which the one look for the
 * objects of read alert rules (mask_guards_reads()) may have come too
 * early to see: a .env written after it, and a continued read flipped to
 * it would go with no record.  True when C is a rename to be made here,
 * so that what arrives is looked at once it has (emulate_path_call()):
 * a directory holding a .env moved where the rule applies. */
static bool emulate_note_names(struct session *s, const struct call *c)
{
	enum emulate_path_op op;
	bool reach;

	/* Once a .env is known the reads are never continued: nothing to
	 * note, and no call pays for it. */
	if (!mask_reads_unsettled(s->mask) || c->n_events < 1 ||
	    c->events[0].kind != RULES_KIND_WRITE)
		return false;
	if (c->is_open) {
		if (syscall_open_creates(c->flags))
			mask_reads_named(s->mask, s->policy, c->events[0].path);
		return false;
	}
	op = emulate_path_op_of(c);
	if (op == EMULATE_MKNOD)
		mask_reads_named(s->mask, s->policy, c->events[0].path);
	if ((op != EMULATE_RENAME && op != EMULATE_LINK) || c->n_events < 2 ||
	    c->events[1].kind != RULES_KIND_WRITE)
		return false;
	mask_reads_named(s->mask, s->policy, c->events[1].path);
	if (op != EMULATE_RENAME)
		return false;
	reach = rules_read_alert_reach(s->policy, c->events[1].path) != NULL;
	if (syscall_exchanges(c->name, c->flags)) {
		mask_reads_named(s->mask, s->policy, c->events[0].path);
		reach |= rules_read_alert_reach(s->policy, c->events[0].path) != NULL;
	}
	return reach && mask_reads_unsettled(s->mask);
}

bool emulate_needed(struct session *s, const struct tracee *t, const struct call *c)
{
	bool arrival = emulate_note_names(s, c);
	/* Asked of every call: it notes the names that make protected
	 * trees (namewatch.h). */
	bool exposed = emulate_makes(c) && namewatch_exposed(s, c, t->tgid, t->pid);

	/* A denied file with other names: any open, by any caller, may
	 * reach it by a name swapped after the check, which only the open
	 * made here sees (emulate_reached()). */
	if (arrival || exposed || (c->is_open && linked_any(&s->linked)) ||
	    stop_pinned(t, c) || c->removal_in_new_git)
		return true;
	return emulate_makes(c) && !emulate_read_guarded(s, c) && exposed_can_race(s, t, c);
}

/* FN(ARG) in a detached thread: the calls that may wait.  0, or an error of pthread_create(). */
static int emulate_detach(void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	pthread_t th;
	int r;

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	r = pthread_create(&th, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	return r;
}

/* PATH, exactly: no symlink on the way (one there now appeared after the
 * check: ELOOP), as an O_PATH descriptor.  Looked up in the caller's view
 * (VIEW, its root: mask_view_fd()), so that the command's masks hold for
 * what the supervisor opens for it too; AT_FDCWD: the views are one.  A
 * path below the working directory of task TID that the walk from the
 * root may not search (an ancestor without x for the caller) is looked
 * up from that directory, as the kernel does for a relative name. */
int emulate_path_fd(int view, pid_t tid, const char *path, int extra)
{
	struct open_how how = { .flags = (unsigned long long)(O_PATH | O_CLOEXEC | extra),
				.resolve = RESOLVE_NO_SYMLINKS };
	const char *rel = path;
	char link[64], cwd[PATH_MAX];
	long fd;
	ssize_t n;
	int dfd;

	if (view != AT_FDCWD) {
		while (*rel == '/')
			rel++;
		if (!*rel)
			rel = ".";
	}
	fd = syscall(SYS_openat2, view, rel, &how, sizeof(how));
	if (fd >= 0 || errno != EACCES)
		return fd < 0 ? -errno : (int)fd;
	snprintf(link, sizeof(link), "/proc/%d/cwd", (int)tid);
	n = readlink(link, cwd, sizeof(cwd) - 1);
	if (n <= 0)
		return -EACCES;
	cwd[n] = '\0';
	if (strncmp(path, cwd, (size_t)n) != 0 || (path[n] && path[n] != '/'))
		return -EACCES;
	rel = path[n] ? path + n + 1 : ".";
	dfd = open(link, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -EACCES;
	fd = syscall(SYS_openat2, dfd, rel, &how, sizeof(how));
	fd = fd < 0 ? -errno : fd;
	close(dfd);
	return (int)fd;
}

const char *emulate_path_of(const struct call *c, unsigned i, char *buf)
{
	int n;

	if (c->path_proc[i] <= 0 || strncmp(c->path[i], "/proc/self", 10) != 0)
		return c->path[i];
	n = snprintf(buf, PATH_MAX, "/proc/%d%s", (int)c->path_proc[i], c->path[i] + 10);
	return n < 0 || n >= PATH_MAX ? NULL : buf;
}

int emulate_caller_fd(pid_t tgid, int fd)
{
	int pidfd = (int)syscall(SYS_pidfd_open, tgid, 0), r;

	if (pidfd < 0)
		return -errno;
	r = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
	r = r < 0 ? -errno : r;
	close(pidfd);
	return r;
}

/* Opens FD0 (an O_PATH descriptor) again with FLAGS, as the kernel opens
 * a /proc/self/fd link: the same inode, with the permission checks of an
 * open.  Never a controlling terminal for the supervisor. */
int emulate_reopen(int fd0, int flags)
{
	char link[32];
	int fd;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd0);
	fd = open(link, (flags & ~(O_CREAT | O_EXCL | O_NOFOLLOW | O_DIRECTORY)) | O_NOCTTY |
			O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* An open that waits (a FIFO's other end, the break of another process's
 * lease on the file), and a truncate that opens such a file: made by a
 * thread of its own, so that the one that answers everyone never waits
 * on it. */
struct emulate_wait_job {
	int listener;
	uint64_t id;
	int fd0;
	int flags;
	struct creds creds;
	bool truncate;
	off_t length;
};

static void *emulate_wait_thread(void *arg)
{
	struct emulate_wait_job *j = arg;
	struct creds saved;
	struct seccomp_notif_resp resp = { .id = j->id };
	int fd;

	creds_become(&j->creds, &saved);
	fd = emulate_reopen(j->fd0, j->flags);
	creds_restore(&saved);
	close(j->fd0);
	if (fd >= 0 && !j->truncate) {
		int r = unotify_answer_fd(j->listener, 0, j->id, fd, j->flags);

		if (r < 0 && r != -ENOENT)
			debug_msg("ADDFD of an open that waited: %s", strerror(-r));
		close(fd);
	} else {
		if (fd < 0)
			resp.error = fd;
		else if (ftruncate(fd, j->length) < 0)
			resp.error = -errno;
		if (fd >= 0)
			close(fd);
		if (ioctl(j->listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && errno != ENOENT)
			debug_msg("answering a call that waited: %s", strerror(errno));
	}
	free(j);
	return NULL;
}

int emulate_in_thread(struct session *s, uint64_t id, int fd0, int flags, const struct creds *cr,
		      bool truncate, off_t length)
{
	struct emulate_wait_job *j = xmalloc(sizeof(*j));
	int r;

	*j = (struct emulate_wait_job){ .listener = s->listener_fd, .id = id, .fd0 = fd0,
					 .flags = flags, .creds = *cr, .truncate = truncate,
					 .length = length };
	r = emulate_detach(emulate_wait_thread, j);
	if (r != 0) {
		close(fd0);
		free(j);
		return -r;
	}
	return 1;
}

int emulate_reopen_nowait(int fd0, int flags)
{
	int fd = emulate_reopen(fd0, flags | O_NONBLOCK);

	if (fd >= 0 && !(flags & O_NONBLOCK) && fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
		int e = -errno;

		close(fd);
		return e;
	}
	return fd;
}

/* /dev/tty is the caller's controlling terminal: that terminal, as an
 * O_PATH descriptor, found among the files task TID holds open (a
 * terminal it reaches by no descriptor: its /dev/pts entry in the
 * caller's VIEW).  -ENXIO without one, as the kernel answers.  What the
 * caller gets is that terminal's file, not /dev/tty's: the same
 * terminal, its own device number. */
static int emulate_own_terminal(int view, pid_t tid)
{
	struct proc_stat ps;
	char dir[64], pts[32];
	struct dirent *de;
	struct stat st;
	int fd = -ENXIO;
	DIR *d;

	if (proc_stat(tid, &ps) < 0)
		return -ESRCH;
	if (!ps.tty)
		return -ENXIO;
	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)tid);
	d = opendir(dir);
	while (d && fd < 0 && (de = readdir(d)))
		if (de->d_name[0] != '.' && fstatat(dirfd(d), de->d_name, &st, 0) == 0 &&
		    S_ISCHR(st.st_mode) && st.st_rdev == ps.tty)
			fd = openat(dirfd(d), de->d_name, O_PATH | O_CLOEXEC);
	if (d)
		closedir(d);
	if (fd >= 0 || major(ps.tty) < 136 || major(ps.tty) > 143)
		return fd >= 0 ? fd : -ENXIO;
	snprintf(pts, sizeof(pts), "/dev/pts/%u",
		 (major(ps.tty) - 136) * 256 + minor(ps.tty));
	fd = emulate_path_fd(view, tid, pts, 0);
	if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISCHR(st.st_mode) || st.st_rdev != ps.tty)) {
		close(fd);
		fd = -ENXIO;
	}
	return fd < 0 ? -ENXIO : fd;
}

/* What a /proc fd link that names no file leads to ("pipe:[N]" or
 * "socket:[N]", the decoder's text for it), as an O_PATH descriptor:
 * through a descriptor of task TID's that names the same, and only when
 * what was opened is that pipe or socket, inode N (another thread may
 * have put another file on that descriptor meanwhile).  -ENXIO when it
 * holds none, or for another kind of object (an anonymous inode, whose
 * text names no one). */
static int emulate_link_object(pid_t tid, const char *text)
{
	char dir[64], link[PATH_MAX], kind[8], tail;
	unsigned long long ino;
	struct dirent *de;
	struct stat st;
	int fd = -1;
	DIR *d;

	if (sscanf(text, "%7[a-z]:[%llu%c", kind, &ino, &tail) != 3 || tail != ']' ||
	    (strcmp(kind, "pipe") != 0 && strcmp(kind, "socket") != 0))
		return -ENXIO;
	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)tid);
	d = opendir(dir);
	while (d && fd < 0 && (de = readdir(d))) {
		ssize_t n = readlinkat(dirfd(d), de->d_name, link, sizeof(link) - 1);

		if (n <= 0)
			continue;
		link[n] = '\0';
		if (strcmp(link, text) != 0)
			continue;
		fd = openat(dirfd(d), de->d_name, O_PATH | O_CLOEXEC);
		if (fd >= 0 && (fstat(fd, &st) < 0 || (uint64_t)st.st_ino != ino ||
				!(kind[0] == 'p' ? S_ISFIFO(st.st_mode) : S_ISSOCK(st.st_mode)))) {
			close(fd);
			fd = -1;
		}
	}
	if (d)
		closedir(d);
	return fd < 0 ? -ENXIO : fd;
}

/* emulate_open() of one that waits, by a thread; without one, EAGAIN
 * (continued, it would be raced). */
static int emulate_open_waiting(struct session *s, const struct unotify_call *u, int fd0,
				int flags, const struct creds *cr, struct stop_answer *a)
{
	int r = emulate_in_thread(s, u->id, fd0, flags, cr, false, 0);

	if (r == 1)
		return 1;
	a->how = STOP_RETURN;
	a->ret = -EAGAIN;
	return 0;
}

const struct linked_file *emulate_reached(const struct session *s, const struct call *c,
					  const struct stat *st)
{
	const struct linked_file *f;

	if (!linked_any(&s->linked) || !S_ISREG(st->st_mode) || st->st_nlink < 2 ||
	    !(f = linked_find(&s->linked, st->st_dev, st->st_ino)) ||
	    strcmp(f->path, c->path[0]) == 0)
		return NULL;
	return f;
}

int emulate_open(struct session *s, const struct unotify_call *u, const struct call *c,
		 struct stop_answer *a)
{
	const struct linked_file *reached = NULL;
	struct judge_verdict reached_v = { 0 }, pin_v = { 0 };
	struct exec_pin *pin;
	char pin_why[PATH_MAX + 256];
	struct creds cr, saved;
	const char *path = c->path[0];
	char proc[PATH_MAX];
	int flags = c->flags, fd0, fd = -1, r, view, refused = 0, st_err = 0;
	bool create = (flags & (O_CREAT | O_PATH)) == O_CREAT;
	struct stat st;

	/* An O_PATH open is judged no read or write (it gives no event),
	 * and a /proc link to what is no file (a pipe: /dev/stdin) neither;
	 * but the kernel would read their flags and names again: they are
	 * made here as well. */
	if (!c->is_open || !path[0] || (path[0] == '/' && c->n_events == 0 && !(flags & O_PATH)))
		return -ENOTSUP;
	a->how = STOP_RETURN;
	/* Resolve flags restrict a walk that the exact open below does not
	 * take: such a caller is told openat2 does not exist, as before
	 * Linux 5.6, and falls back on its own walk.  O_PATH with more
	 * flags is openat2's EINVAL. */
	a->ret = -ENOSYS;
	if (c->open_resolve)
		return 0;
	a->ret = -EINVAL;
	if ((flags & O_PATH) && strcmp(c->name, "openat2") == 0 &&
	    (flags & ~(O_PATH | O_CLOEXEC | O_DIRECTORY | O_NOFOLLOW)))
		return 0;
	a->how = STOP_RUN;
	path = emulate_path_of(c, 0, proc);
	if (!path)
		return -ENOTSUP;
	/* Without the caller's view the kernel's own walk, which the masks
	 * govern, is better than one in the supervisor's. */
	view = mask_view_fd(s, u->tid);
	if (view < 0 && view != AT_FDCWD)
		return -ENOTSUP;
	r = creds_of_task(u->tid, &cr);
	if (r < 0)
		return -ENOTSUP;
	creds_become(&cr, &saved);
	/* A name that ends in "/", "." or "..", to be made: the kernel
	 * answers that from the name's directory (EISDIR for "name/",
	 * whether or not "name" exists), as below for a new name. */
	if (create && path[0] == '/' && c->path_odd_last[0][0])
		fd0 = -ENOENT;
	else if (path[0] != '/')
		fd0 = emulate_link_object(u->tid, path);
	else
		fd0 = emulate_path_fd(view, u->tid, path, syscall_open_follows(flags) ? 0 : O_NOFOLLOW);
	if (fd0 >= 0) {
		st_err = fstat(fd0, &st) < 0 ? -errno : 0;
		if (!st_err && !(flags & O_PATH) && S_ISCHR(st.st_mode) &&
		    st.st_rdev == makedev(5, 0)) {
			close(fd0);
			fd0 = emulate_own_terminal(view, u->tid);
			if (fd0 >= 0)
				st_err = fstat(fd0, &st) < 0 ? -errno : 0;
		}
	}
	/* The file a program was given to run, reached by its name: the
	 * one judged, or one judged now (recorded below when refused). */
	if (fd0 >= 0 && !st_err && (pin = stop_pinned(tracee_find(&s->tasks, u->tid), c)) &&
	    (st.st_dev != pin->dev || st.st_ino != pin->ino))
		stop_pin_reached(s, u->tid, c->events[0].kind, pin, fd0, &st, &pin_v, pin_why,
				 sizeof(pin_why));
	if (fd0 >= 0) {
		if (st_err) {
			r = st_err;
		} else if (pin_v.err) {
			r = -pin_v.err;
		} else if (!(flags & O_PATH) && (reached = emulate_reached(s, c, &st)) &&
			   (refused = stop_reached_linked(s, c, reached, &reached_v))) {
			r = -refused;
		} else if (flags & O_PATH) {
			/* The object itself, opened no further: its
			 * descriptor is the caller's. */
			if ((flags & O_DIRECTORY) && !S_ISDIR(st.st_mode)) {
				r = -ENOTDIR;
			} else {
				fd = fd0;
				fd0 = -1;
				r = 0;
			}
		} else if ((flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL)) {
			r = -EEXIST;
		} else if ((flags & O_CREAT) && !(flags & O_DIRECTORY) && S_ISDIR(st.st_mode)) {
			r = -EISDIR; /* the kernel's answer to O_CREAT of a directory */
		} else if (S_ISLNK(st.st_mode)) {
			r = -ELOOP; /* O_NOFOLLOW on a symlink */
		} else if ((flags & O_DIRECTORY) && !S_ISDIR(st.st_mode) &&
			   (flags & O_TMPFILE) != O_TMPFILE) {
			r = -ENOTDIR;
		} else if (S_ISFIFO(st.st_mode) && !(flags & O_NONBLOCK)) {
			creds_restore(&saved);
			return emulate_open_waiting(s, u, fd0, flags, &cr, a);
		} else if ((flags & O_TMPFILE) == O_TMPFILE) {
			mode_t old = umask(cr.umask);

			fd = openat(fd0, ".", flags | O_CLOEXEC, c->open_mode);
			r = fd < 0 ? -errno : 0;
			umask(old);
		} else if (S_ISREG(st.st_mode) && !(flags & O_NONBLOCK)) {
			/* Another process's lease makes the open wait for
			 * its break: then in a thread of its own. */
			fd = emulate_reopen_nowait(fd0, flags);
			if (fd == -EWOULDBLOCK) {
				creds_restore(&saved);
				return emulate_open_waiting(s, u, fd0, flags, &cr, a);
			}
			r = fd < 0 ? fd : 0;
		} else {
			fd = emulate_reopen(fd0, flags);
			r = fd < 0 ? fd : 0;
		}
		if (fd0 >= 0)
			close(fd0);
	} else if (fd0 == -ENOENT && create) {
		/* A new name: its directory exactly, the name not followed. */
		char base[PATH_MAX];
		int dfd = emulate_where(view, u->tid, c, 0, path, base);

		if (dfd < 0) {
			r = dfd;
		} else {
			mode_t old = umask(cr.umask);

			fd = openat(dfd, base, flags | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, c->open_mode);
			r = fd < 0 ? -errno : 0;
			umask(old);
			close(dfd);
			/* Without O_EXCL a file put at the name since the look
			 * is opened: another name of a denied file (a hard link
			 * renamed there) is that file. */
			if (fd >= 0 && linked_any(&s->linked) && fstat(fd, &st) == 0 &&
			    (reached = emulate_reached(s, c, &st)) &&
			    (refused = stop_reached_linked(s, c, reached, &reached_v))) {
				close(fd);
				fd = -1;
				r = -refused;
			}
		}
	} else {
		r = fd0;
	}
	creds_restore(&saved);
	/* Recorded as the supervisor, once the caller's identity is put
	 * back. */
	if (reached)
		stop_record_reached(s, u->tid, c, &reached_v);
	if (pin_v.action != RULES_ACTION_ALLOW)
		stop_record_reached(s, u->tid, c, &pin_v);
	if (r == -ENOTSUP)
		return -ENOTSUP;
	if (r < 0) {
		a->how = STOP_RETURN;
		a->ret = r;
		return 0;
	}
	/* The descriptor into the caller, as the call's result. */
	r = unotify_answer_fd(s->listener_fd, s->notify_killable ? u->tid : 0, u->id, fd, flags);
	close(fd);
	if (r < 0 && r != -ENOENT) {
		a->how = STOP_RETURN;
		a->ret = r;
		return 0;
	}
	return 1;
}

/* ---- sockets ---- */

/* The socket C is about (its args[0]) as the caller has it, or -1 with
 * A holding the kernel's own answer (EBADF, ENOTSOCK).  A copy made while
 * a local destination was judged is taken first (endpoints.h): the
 * caller's descriptor may name another socket by now. */
static int emulate_socket_copy(struct session *s, pid_t tgid, const struct call *c,
			       struct stop_answer *a)
{
	int fd;

	if (s->endpoint_copy >= 0) {
		fd = s->endpoint_copy;
		s->endpoint_copy = -1;
		return fd;
	}
	fd = emulate_caller_fd(tgid, (int)c->args[0]);
	if (fd < 0) {
		a->how = STOP_RETURN;
		a->ret = fd == -ENOTSOCK ? fd : -EBADF;
	}
	return fd;
}

/* ---- connect, and a UNIX socket's bind ---- */

/* A connect may wait (a TCP handshake, a full listen queue): made by a
 * thread of its own, on a copy of the caller's descriptor (the same open
 * socket: pidfd_getfd(2)), to the address that was judged.  So is the
 * bind of a UNIX socket to a path, which makes a file: in the caller's
 * umask, as the caller.  A UNIX path is reached in the directory that
 * was judged, opened exactly (DIR): the thread works there, with a
 * working directory of its own (CLONE_FS), so that a relative name is
 * the caller's and not the supervisor's.  A bind keeps the caller's
 * text (what getsockname(2) gives back) when it still leads to that
 * directory. */
struct emulate_name_job {
	int listener;
	uint64_t id;
	int fd;
	struct sockaddr_storage addr;
	socklen_t len;
	/* The caller's, whose ids the thread takes for good: a server learns
	 * its peer's uid and gid from the connect (SO_PEERCRED), and would
	 * see the supervisor's. */
	struct creds creds;
	/* The socket file judged by whose it is (call.h sock_ino); 0: any. */
	dev_t sock_dev;
	uint64_t sock_ino;
	bool bind;
	int dir;       /* the judged directory of a UNIX path (O_PATH); -1: none */
	int cwd;       /* the caller's working directory then (O_PATH); -1: none */
	char base[sizeof(((struct sockaddr_un *)0)->sun_path)];
};

static void emulate_name_job_free(struct emulate_name_job *j)
{
	if (j->fd >= 0)
		close(j->fd);
	if (j->dir >= 0)
		close(j->dir);
	if (j->cwd >= 0)
		close(j->cwd);
	free(j);
}

/* Whether the directory part of the UNIX name in J, looked up from the
 * thread's working directory, is the directory judged. */
static bool emulate_name_text_holds(const struct emulate_name_job *j)
{
	const struct sockaddr_un *un = (const struct sockaddr_un *)&j->addr;
	char text[sizeof(un->sun_path) + 1], *slash;
	size_t n = (size_t)j->len - offsetof(struct sockaddr_un, sun_path);
	struct stat a, b;
	int fd;

	memcpy(text, un->sun_path, n);
	text[n] = '\0';
	slash = strrchr(text, '/');
	if (slash)
		slash[slash == text ? 1 : 0] = '\0';
	fd = open(slash ? text : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (fstat(fd, &a) < 0 || fstat(j->dir, &b) < 0 || a.st_dev != b.st_dev ||
	    a.st_ino != b.st_ino) {
		close(fd);
		return false;
	}
	close(fd);
	return true;
}

static void *emulate_name_thread(void *arg)
{
	struct emulate_name_job *j = arg;
	struct creds saved;
	struct seccomp_notif_resp resp = { .id = j->id };
	struct sockaddr_un exact = { .sun_family = AF_UNIX };
	const struct sockaddr *to = (const struct sockaddr *)&j->addr;
	socklen_t len = j->len;
	int r = 0, target = -1, listener;
	const char *what;

	/* The caller's ids, for good: the thread ends with the call.  The
	 * groups first, while it may still set them (a root supervisor's own
	 * supplementary groups, as sudo leaves them, are not the caller's). */
	if ((geteuid() == 0 &&
	     syscall(SYS_setgroups, (size_t)j->creds.n_groups, j->creds.groups) < 0) ||
	    syscall(SYS_setresgid, j->creds.gid[0], j->creds.gid[1], j->creds.gid[2]) < 0 ||
	    syscall(SYS_setresuid, j->creds.uid[0], j->creds.uid[1], j->creds.uid[2]) < 0)
		r = -EPERM;
	if (r == 0 && j->dir >= 0) {
		/* A working directory and a umask of this thread's own. */
		if (unshare(CLONE_FS) < 0)
			r = -errno;
		else if (j->bind)
			umask(j->creds.umask);
		if (r == 0 && j->bind && j->cwd >= 0 && fchdir(j->cwd) < 0)
			r = -errno;
		if (r == 0 && !(j->bind && emulate_name_text_holds(j))) {
			if (fchdir(j->dir) < 0)
				r = -errno;
			memcpy(exact.sun_path, j->base, sizeof(exact.sun_path));
			to = (const struct sockaddr *)&exact;
			len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(j->base) + 1);
		}
	}
	/* A UNIX socket's connect checks write permission on its file, as
	 * the caller. */
	creds_become(&j->creds, &saved);
	/* A connect reaches the socket file that was judged, opened in the
	 * judged directory without following a name, through its
	 * /proc/self/fd link: not another one put at the name since. */
	if (r == 0 && !j->bind && j->dir >= 0) {
		struct stat st;

		target = openat(j->dir, j->base, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (target < 0)
			r = -errno;
		else if (fstat(target, &st) < 0 || !S_ISSOCK(st.st_mode))
			r = -ECONNREFUSED;
		else if (j->sock_ino && ((uint64_t)st.st_ino != j->sock_ino || st.st_dev != j->sock_dev))
			r = -EACCES;
		if (r == 0) {
			snprintf(exact.sun_path, sizeof(exact.sun_path), "/proc/self/fd/%d", target);
			to = (const struct sockaddr *)&exact;
			len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
					  strlen(exact.sun_path) + 1);
		}
	}
	if (r == 0) {
		do
			r = j->bind ? bind(j->fd, to, len) : connect(j->fd, to, len);
		while (r < 0 && errno == EINTR);
		r = r < 0 ? -errno : 0;
	}
	resp.error = r;
	if (target >= 0)
		close(target);
	/* The copy goes before the answer (stop.h stop_release_copy()). */
	listener = j->listener;
	what = j->bind ? "bind" : "connect";
	emulate_name_job_free(j);
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && errno != ENOENT)
		debug_msg("answering a %s: %s", what, strerror(errno));
	return NULL;
}

/* J's DIR, CWD and BASE for the UNIX path C judged (its path[0]), opened
 * as the caller in its view.  0; -ENOTSUP for a name that is no file
 * path (abstract, unnamed); another -errno is the call's answer. */
static int emulate_name_where(struct session *s, const struct unotify_call *u,
			      const struct call *c, struct emulate_name_job *j)
{
	const struct sockaddr_un *un = (const struct sockaddr_un *)&c->sockaddr;
	char proc[PATH_MAX], link[64];
	const char *path, *slash;
	struct creds saved;
	int view, r = 0;

	if (c->sockaddr.ss_family != AF_UNIX || c->n_events != 1 ||
	    c->sockaddr_len <= offsetof(struct sockaddr_un, sun_path) || un->sun_path[0] == '\0')
		return -ENOTSUP;
	path = emulate_path_of(c, 0, proc);
	slash = path ? strrchr(path, '/') : NULL;
	if (!slash || !slash[1] || strlen(slash + 1) >= sizeof(j->base))
		return -ENOTSUP;
	strcpy(j->base, slash + 1);
	view = mask_view_fd(s, u->tid);
	if (view < 0 && view != AT_FDCWD)
		return -ENOTSUP;
	snprintf(proc, sizeof(proc), "%.*s", (int)(slash - path), path);
	creds_become(&j->creds, &saved);
	j->dir = emulate_path_fd(view, u->tid, proc[0] ? proc : "/", O_DIRECTORY);
	if (j->dir < 0)
		r = j->dir;
	if (r == 0 && un->sun_path[0] != '/') {
		snprintf(link, sizeof(link), "/proc/%d/cwd", (int)u->tid);
		j->cwd = open(link, O_PATH | O_DIRECTORY | O_CLOEXEC);
	}
	creds_restore(&saved);
	return r;
}

/* Connect or bind C (a connect of any family, the bind of a UNIX
 * socket) by a thread of its own.  Returns as emulate_open(). */
static int emulate_name_call(struct session *s, const struct unotify_call *u,
			     const struct call *c, pid_t tgid, bool bind, struct stop_answer *a)
{
	struct emulate_name_job *j = xcalloc(1, sizeof(*j));
	int r;

	j->dir = j->cwd = -1;
	j->bind = bind;
	if (creds_of_task(u->tid, &j->creds) < 0) {
		free(j);
		return -ENOTSUP;
	}
	j->fd = emulate_socket_copy(s, tgid, c, a);
	if (j->fd < 0) {
		free(j);
		return 0;
	}
	r = emulate_name_where(s, u, c, j);
	if (r == 0) {
		j->sock_dev = c->sock_dev;
		j->sock_ino = c->sock_ino;
	}
	if (r < 0 && r != -ENOTSUP) {
		emulate_name_job_free(j);
		a->how = STOP_RETURN;
		a->ret = r;
		return 0;
	}
	j->listener = s->listener_fd;
	j->id = u->id;
	j->addr = c->sockaddr;
	j->len = (socklen_t)c->sockaddr_len;
	if (emulate_detach(emulate_name_thread, j) != 0) {
		/* Continued, it would be raced: the kernel's answer when it
		 * is short of what a call needs. */
		emulate_name_job_free(j);
		a->how = STOP_RETURN;
		a->ret = -EAGAIN;
		return 0;
	}
	return 1;
}

int emulate_connect(struct session *s, const struct unotify_call *u, const struct call *c,
		    pid_t tgid, struct stop_answer *a)
{
	/* A name of no family the policy speaks of (AF_UNSPEC, which
	 * dissolves an inet socket's association) is connected here too:
	 * let run, the kernel would read a family again that another thread
	 * may have made AF_UNIX meanwhile. */
	if (!c->name || strcmp(c->name, "connect") != 0 || c->sockaddr_len == 0 ||
	    c->sockaddr_len > sizeof(c->sockaddr))
		return -ENOTSUP;
	return emulate_name_call(s, u, c, tgid, false, a);
}

/* ---- sendto, sendmsg, sendmmsg ---- */

/* A datagram's destination is judged on memory the caller can rewrite.
 * The send is made on a copy of the caller's socket, to the address that
 * was judged, with the caller's bytes and control messages read now
 * (they are not judged), in the loop when it cannot wait and by a thread
 * of its own when it must (no room in the socket's buffer).  At most EMULATE_SEND_MAX bytes: more is
 * no datagram the kernel sends (EMSGSIZE), and a stream socket (TCP Fast
 * Open names its peer so) may send less than it was given. */
#define EMULATE_SEND_MAX (256 * 1024)
#define EMULATE_SEND_CONTROL_MAX 4096
#define EMULATE_SEND_MAXIOV 1024 /* UIO_MAXIOV: the kernel's own cap */

struct emulate_send_job {
	int listener;
	uint64_t id;
	int fd;
	pid_t tgid, tid;
	int flags;
	struct sockaddr_storage addr;
	socklen_t len;
	size_t n, control_len;
	char *data, *control;
	/* sendmmsg: where the caller's first mmsghdr takes the bytes sent;
	 * 0: sendto or sendmsg. */
	unsigned long msg_len_at;
	size_t max; /* the most bytes sent: EMULATE_SEND_MAX, or a UNIX socket's buffer */
	/* A UNIX socket's send: the descriptors its SCM_RIGHTS carry, copied
	 * from the caller, and the socket file judged, opened exactly
	 * (ADDR names it as /proc/self/fd/N); -1: none. */
	int *fds;
	size_t n_fds;
	int dest_fd;
};

static void emulate_send_free(struct emulate_send_job *j)
{
	if (j->fd >= 0)
		close(j->fd);
	if (j->dest_fd >= 0)
		close(j->dest_fd);
	for (size_t i = 0; i < j->n_fds; i++)
		close(j->fds[i]);
	free(j->fds);
	free(j->data);
	free(j->control);
	free(j);
}

/* The bytes of IOV[0..N) of task PID, gathered into J (at most J's
 * max).  0 or -errno (EFAULT: what the kernel would say). */
static int emulate_send_gather(pid_t pid, const struct iovec *iov, size_t n,
			       struct emulate_send_job *j)
{
	size_t total = 0;
	int r;

	for (size_t i = 0; i < n; i++)
		total += iov[i].iov_len < j->max - total ? iov[i].iov_len : j->max - total;
	j->data = xmalloc(total ? total : 1);
	for (size_t i = 0; i < n && j->n < total; i++) {
		size_t take = iov[i].iov_len < total - j->n ? iov[i].iov_len : total - j->n;

		r = take ? mem_read(pid, (unsigned long)iov[i].iov_base, j->data + j->n, take) : 0;
		if (r < 0)
			return r;
		j->n += take;
	}
	return 0;
}

/* Whether task TID is in the supervisor's user namespace, where its
 * capabilities mean what they say for what the supervisor does for it. */
static bool emulate_same_userns(pid_t tid)
{
	struct stat mine, its;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)tid);
	return stat("/proc/self/ns/user", &mine) == 0 && stat(path, &its) == 0 &&
	       mine.st_ino == its.st_ino && mine.st_dev == its.st_dev;
}

/* Whether the caller may attach CONTROL: no IPv6 routing header, and the
 * kernel asks CAP_NET_RAW or
 * CAP_NET_ADMIN of the sender for a packet's mark and for a priority
 * above 6, and the sender here would be the supervisor.  Only a caller in
 * the supervisor's own user namespace has its capabilities where the
 * socket's network namespace is owned. */
static bool emulate_send_control_allowed(pid_t tid, const char *control, size_t len)
{
	struct msghdr mh = { .msg_control = (void *)control, .msg_controllen = len };
	char text[16384];
	unsigned long long eff = 0;
	bool needs = false;

	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		uint32_t prio = 0;

		/* Read again since the check: a routing header now is one the
		 * decoder would have refused (decode_control()). */
		if (cm->cmsg_level == IPPROTO_IPV6 &&
		    (cm->cmsg_type == IPV6_RTHDR || cm->cmsg_type == IPV6_2292RTHDR))
			return false;
		if (cm->cmsg_level != SOL_SOCKET)
			continue;
		if (cm->cmsg_type == SO_MARK)
			needs = true;
		/* Within the buffer, whatever its length says: the kernel
		 * refuses one that claims more (EINVAL). */
		if (cm->cmsg_type == SO_PRIORITY && cm->cmsg_len >= CMSG_LEN(sizeof(prio)) &&
		    (const char *)CMSG_DATA(cm) + sizeof(prio) <= control + len) {
			memcpy(&prio, CMSG_DATA(cm), sizeof(prio));
			needs |= prio > 6;
		}
	}
	if (!needs)
		return true;
	if (!emulate_same_userns(tid))
		return false;
	if (proc_read(tid, "status", text, sizeof(text)) < 0 ||
	    !proc_status_field(text, "\nCapEff:", 16, &eff))
		return false;
	return (eff >> 12) & 3; /* CAP_NET_ADMIN, CAP_NET_RAW */
}

/* The iovecs and control messages of MH, a message of task PID, into J.
 * 0 or -errno: what the kernel would say of the message. */
static int emulate_send_read_msg(pid_t pid, const struct msghdr *mh, struct emulate_send_job *j)
{
	struct iovec *iov = NULL;
	size_t n_iov = mh->msg_iovlen;
	int r = 0;

	if (n_iov > EMULATE_SEND_MAXIOV)
		return -EMSGSIZE;
	if (mh->msg_controllen > EMULATE_SEND_CONTROL_MAX)
		return -ENOBUFS;
	if (n_iov) {
		iov = xmalloc(n_iov * sizeof(*iov));
		r = mem_read(pid, (unsigned long)mh->msg_iov, iov, n_iov * sizeof(*iov));
	}
	if (r == 0)
		r = emulate_send_gather(pid, iov, n_iov, j);
	free(iov);
	if (r == 0 && mh->msg_controllen) {
		j->control = xmalloc(mh->msg_controllen);
		j->control_len = mh->msg_controllen;
		r = mem_read(pid, (unsigned long)mh->msg_control, j->control, j->control_len);
		if (r == 0 && !emulate_send_control_allowed(pid, j->control, j->control_len))
			r = -EPERM;
	}
	return r;
}

/* The send of job J, made; the answer for the caller in RESP (a count
 * or an error), its SIGPIPE sent. */
static void emulate_send_make(struct emulate_send_job *j, struct seccomp_notif_resp *resp)
{
	struct iovec iov = { j->data, j->n };
	struct msghdr mh = { .msg_name = j->len ? &j->addr : NULL, .msg_namelen = j->len,
			     .msg_iov = &iov, .msg_iovlen = 1, .msg_control = j->control,
			     .msg_controllen = j->control_len };
	ssize_t r;

	/* No permission of an inet send depends on who sends, but for the
	 * capabilities emulate_send_control_allowed() asks of the caller. */
	do
		r = sendmsg(j->fd, &mh, j->flags | MSG_NOSIGNAL);
	while (r < 0 && errno == EINTR);
	resp->error = r < 0 ? -errno : 0;
	if (r < 0) {
		/* The caller's own SIGPIPE, which the supervisor's thread
		 * would otherwise have taken. */
		if (resp->error == -EPIPE && !(j->flags & MSG_NOSIGNAL))
			syscall(SYS_tgkill, j->tgid, j->tid, SIGPIPE);
	} else if (j->msg_len_at) {
		unsigned int sent = (unsigned int)r;
		struct iovec local = { &sent, sizeof(sent) };
		struct iovec remote = { (void *)j->msg_len_at, sizeof(sent) };

		/* As the kernel does: the count in the message, one message. */
		if (process_vm_writev(j->tid, &local, 1, &remote, 1, 0) != (ssize_t)sizeof(sent))
			resp->error = -EFAULT;
		else
			resp->val = 1;
	} else {
		resp->val = r;
	}
}

static void *emulate_send_thread(void *arg)
{
	struct emulate_send_job *j = arg;
	struct seccomp_notif_resp resp = { .id = j->id };

	int listener = j->listener;

	emulate_send_make(j, &resp);
	/* The copies go before the answer (stop.h stop_release_copy()). */
	emulate_send_free(j);
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && errno != ENOENT)
		debug_msg("answering a send: %s", strerror(errno));
	return NULL;
}

/* A datagram to 0.0.0.0 goes to its own source, which a control message
 * read again may have changed since the check: sent to the address that
 * was judged for it (decode_control()) instead. */
static void emulate_send_unspecified(struct sockaddr_storage *ss, const struct call *c)
{
	static const unsigned char mapped_zero[16] = { [10] = 0xff, [11] = 0xff };
	const struct rules_event *ev = &c->events[0];
	struct sockaddr_in *in = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	if (c->n_events < 1 || ev->kind != RULES_KIND_NET)
		return;
	if ((ss->ss_family == AF_INET || ss->ss_family == AF_UNSPEC) && ev->family == AF_INET &&
	    in->sin_addr.s_addr == 0)
		memcpy(&in->sin_addr, ev->addr, 4);
	else if (ss->ss_family == AF_INET6 && ev->family == AF_INET6 &&
		 !memcmp(&in6->sin6_addr, mapped_zero, 16))
		memcpy(&in6->sin6_addr, ev->addr, 16);
}

/* ---- a UNIX socket's sends ---- */

#define EMULATE_SCM_MAX_FD 253 /* SCM_MAX_FD: the most one message carries */

/* Whether credentials UC may be sent by a task with IDS of process TGID,
 * as the kernel judges them (scm_check_creds()): its own pid but with
 * CAP_SYS_ADMIN, one of its uids but with CAP_SETUID, one of its gids
 * but with CAP_SETGID. */
static bool emulate_ids_admit(const struct creds *ids, pid_t tgid, const struct ucred *uc)
{
	bool pid = uc->pid == tgid || ((ids->cap_eff >> CAP_SYS_ADMIN) & 1);
	bool uid = uc->uid == ids->uid[0] || uc->uid == ids->uid[1] || uc->uid == ids->uid[2] ||
		   ((ids->cap_eff >> CAP_SETUID) & 1);
	bool gid = uc->gid == ids->gid[0] || uc->gid == ids->gid[1] || uc->gid == ids->gid[2] ||
		   ((ids->cap_eff >> CAP_SETGID) & 1);

	return pid && uid && gid;
}

/* Whether the supervisor may send datagrams with another process's
 * credentials (see emulate_ids_admit()), for task TID, which must then
 * be in the supervisor's user namespace for its capabilities to mean
 * what they say.  Without that a receiver asking for credentials
 * (SO_PASSCRED) would learn the supervisor: the send is let run. */
static bool emulate_may_speak_for(pid_t tid)
{
	static int mine = -1;
	struct creds self;

	if (mine < 0)
		mine = creds_of_task((pid_t)syscall(SYS_gettid), &self) == 0 &&
		       ((self.cap_eff >> CAP_SYS_ADMIN) & 1) && ((self.cap_eff >> CAP_SETUID) & 1) &&
		       ((self.cap_eff >> CAP_SETGID) & 1);
	return mine && emulate_same_userns(tid);
}

/* J's control messages, the caller's (task TID of process TGID, IDS),
 * made the supervisor's to send: SCM_RIGHTS' descriptors copied from the
 * caller (EBADF for one it does not hold), SCM_CREDENTIALS checked as the
 * kernel checks the caller's own (EPERM), and when it gave none the
 * caller's credentials added, which a receiver asking for them would
 * otherwise learn as the supervisor's.  0 or -errno. */
static int emulate_unix_control(struct emulate_send_job *j, pid_t tgid,
				const struct creds *ids)
{
	struct msghdr in = { .msg_control = j->control, .msg_controllen = j->control_len };
	size_t cap = CMSG_ALIGN(j->control_len) + CMSG_SPACE(sizeof(struct ucred)), at = 0;
	char *out = xcalloc(1, cap);
	bool creds = false;
	int r = 0;

	for (struct cmsghdr *cm = j->control_len ? CMSG_FIRSTHDR(&in) : NULL; cm && r == 0;
	     cm = CMSG_NXTHDR(&in, cm)) {
		size_t n = cm->cmsg_len;
		struct cmsghdr *o = (struct cmsghdr *)(out + at);

		if (n < sizeof(*cm) || n > j->control_len - (size_t)((char *)cm - j->control)) {
			r = -EINVAL;
			break;
		}
		memcpy(o, cm, n);
		at += CMSG_ALIGN(n);
		if (cm->cmsg_level != SOL_SOCKET)
			continue;
		if (cm->cmsg_type == SCM_RIGHTS) {
			size_t k = (n - CMSG_LEN(0)) / sizeof(int);

			if (k > EMULATE_SCM_MAX_FD) {
				r = -EINVAL;
				break;
			}
			for (size_t i = 0; i < k && r == 0; i++) {
				int theirs, mine;

				memcpy(&theirs, CMSG_DATA(o) + i * sizeof(int), sizeof(int));
				mine = emulate_caller_fd(tgid, theirs);
				if (mine < 0) {
					r = -EBADF;
					break;
				}
				j->fds = xrealloc(j->fds, (j->n_fds + 1) * sizeof(*j->fds));
				j->fds[j->n_fds++] = mine;
				memcpy(CMSG_DATA(o) + i * sizeof(int), &mine, sizeof(int));
			}
		} else if (cm->cmsg_type == SCM_CREDENTIALS) {
			struct ucred uc;

			if (n != CMSG_LEN(sizeof(uc))) {
				r = -EINVAL;
				break;
			}
			memcpy(&uc, CMSG_DATA(o), sizeof(uc));
			if (!emulate_ids_admit(ids, tgid, &uc))
				r = -EPERM;
			creds = true;
		}
	}
	if (r == 0 && !creds) {
		struct cmsghdr *o = (struct cmsghdr *)(out + at);
		struct ucred uc = { .pid = tgid, .uid = (uid_t)ids->uid[0], .gid = (gid_t)ids->gid[0] };

		o->cmsg_len = CMSG_LEN(sizeof(uc));
		o->cmsg_level = SOL_SOCKET;
		o->cmsg_type = SCM_CREDENTIALS;
		memcpy(CMSG_DATA(o), &uc, sizeof(uc));
		at += CMSG_SPACE(sizeof(uc));
	}
	free(j->control);
	j->control = out;
	j->control_len = at;
	return r;
}

/* The destination of a UNIX send C, a socket file's path judged, made
 * exact: that file opened in the caller's view as the caller (who must
 * be allowed to write it, as the kernel asks of a sender), and J's
 * address its /proc/self/fd link, which the kernel follows to that very
 * file.  An abstract name, or none, is sent as judged.  0 or -errno. */
static int emulate_unix_dest(struct session *s, const struct unotify_call *u,
			     const struct call *c, struct emulate_send_job *j)
{
	const struct sockaddr_un *un = (const struct sockaddr_un *)&c->sockaddr;
	struct sockaddr_un *to = (struct sockaddr_un *)&j->addr;
	char proc[PATH_MAX];
	struct creds cr, saved;
	const char *path;
	struct stat st;
	int view, fd, r = 0;

	if (c->sockaddr_len <= offsetof(struct sockaddr_un, sun_path) || un->sun_path[0] == '\0')
		return 0;
	if (c->n_events < 1 || c->events[0].kind != RULES_KIND_NET || !c->events[0].unix_path ||
	    !(path = emulate_path_of(c, 0, proc)))
		return -EPERM;
	view = mask_view_fd(s, u->tid);
	if ((view < 0 && view != AT_FDCWD) || creds_of_task(u->tid, &cr) < 0)
		return -EPERM;
	creds_become(&cr, &saved);
	fd = emulate_path_fd(view, u->tid, path, 0);
	if (fd < 0)
		r = fd;
	else if (fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode))
		r = -ECONNREFUSED;
	else if (c->sock_ino && ((uint64_t)st.st_ino != c->sock_ino || st.st_dev != c->sock_dev))
		r = -EACCES; /* another socket file put at the name since the check */
	else if (faccessat(fd, "", W_OK, AT_EMPTY_PATH | AT_EACCESS) < 0)
		r = -errno;
	creds_restore(&saved);
	if (r < 0) {
		if (fd >= 0)
			close(fd);
		return r;
	}
	j->dest_fd = fd;
	memset(to, 0, sizeof(*to));
	to->sun_family = AF_UNIX;
	snprintf(to->sun_path, sizeof(to->sun_path), "/proc/self/fd/%d", fd);
	j->len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(to->sun_path) + 1);
	return 0;
}

int emulate_send(struct session *s, const struct unotify_call *u, const struct call *c,
		 pid_t tgid, struct stop_answer *a)
{
	bool by_msg = c->name && strcmp(c->name, "sendmsg") == 0;
	bool by_mmsg = c->name && strcmp(c->name, "sendmmsg") == 0;
	struct seccomp_notif_resp resp = { 0 };
	struct emulate_send_job *j;
	socklen_t tl = sizeof(int);
	struct msghdr mh;
	struct creds ids;
	socklen_t dl;
	int fl, r, type = 0, domain = 0;
	bool tried;

	/* sendto: no name judged is one the kernel refuses (EINVAL); a
	 * message's name lives in memory, and is taken as judged, none
	 * included. */
	if (!c->name || (!by_msg && !by_mmsg && strcmp(c->name, "sendto") != 0) ||
	    c->sockaddr_len > sizeof(c->sockaddr) || (!by_msg && !by_mmsg && !c->sockaddr_len))
		return -ENOTSUP;
	if (by_mmsg && c->args[2] == 0)
		return -ENOTSUP; /* nothing to send */
	j = xcalloc(1, sizeof(*j));
	j->dest_fd = -1;
	j->fd = emulate_socket_copy(s, tgid, c, a);
	if (j->fd < 0) {
		free(j);
		return 0;
	}
	dl = sizeof(domain);
	if (getsockopt(j->fd, SOL_SOCKET, SO_DOMAIN, &domain, &dl) < 0 ||
	    (domain != AF_INET && domain != AF_INET6 && domain != AF_UNIX) ||
	    getsockopt(j->fd, SOL_SOCKET, SO_TYPE, &type, &tl) < 0) {
		emulate_send_free(j);
		return -ENOTSUP;
	}
	/* A UNIX socket's receiver may learn who sent (SCM_CREDENTIALS), and
	 * gets the descriptors it carries: made only where the supervisor can
	 * send both as the caller's. */
	if (domain == AF_UNIX && (!emulate_may_speak_for(u->tid) || creds_of_task(u->tid, &ids) < 0)) {
		emulate_send_free(j);
		return -ENOTSUP;
	}
	/* A UNIX datagram may be as long as the socket's buffer, and is sent
	 * whole or not at all: never cut to fit. */
	j->max = EMULATE_SEND_MAX;
	if (domain == AF_UNIX) {
		int buf = 0;
		socklen_t bl = sizeof(buf);

		if (getsockopt(j->fd, SOL_SOCKET, SO_SNDBUF, &buf, &bl) == 0 &&
		    (size_t)buf > j->max)
			j->max = (size_t)buf;
	}
	a->how = STOP_RETURN;
	if (by_msg || by_mmsg) {
		/* sendmmsg: the first message alone.  It may send fewer than
		 * it was given and say how many; the caller sends the rest
		 * again, judged again. */
		j->flags = (int)c->args[by_mmsg ? 3 : 2];
		if (by_mmsg)
			j->msg_len_at = c->args[1] + offsetof(struct mmsghdr, msg_len);
		r = mem_read(u->tid, c->args[1], &mh, sizeof(mh));
		if (r == 0)
			r = emulate_send_read_msg(u->tid, &mh, j);
	} else {
		struct iovec one = { (void *)c->args[1], (size_t)c->args[2] };

		j->flags = (int)c->args[3];
		r = emulate_send_gather(u->tid, &one, 1, j);
	}
	j->addr = c->sockaddr;
	j->len = (socklen_t)c->sockaddr_len;
	if (r == 0 && domain == AF_UNIX) {
		r = emulate_unix_control(j, tgid, &ids);
		if (r == 0)
			r = emulate_unix_dest(s, u, c, j);
	}
	if (r < 0) {
		a->ret = r == -ESRCH ? -EFAULT : r;
		emulate_send_free(j);
		return 0;
	}
	j->listener = s->listener_fd;
	j->id = u->id;
	j->tgid = tgid;
	j->tid = u->tid;
	if (domain != AF_UNIX)
		emulate_send_unspecified(&j->addr, c);
	fl = fcntl(j->fd, F_GETFL);
	/* A send that cannot wait is made and answered here; so is a
	 * datagram that finds room now (all or nothing, either way).  One
	 * that must wait, by a thread of its own. */
	tried = (fl >= 0 && (fl & O_NONBLOCK)) || (j->flags & MSG_DONTWAIT);
	if (tried || type == SOCK_DGRAM) {
		int caller_flags = j->flags;

		j->flags |= MSG_DONTWAIT;
		emulate_send_make(j, &resp);
		j->flags = caller_flags;
		if (tried || resp.error != -EAGAIN) {
			a->ret = resp.error ? resp.error : resp.val;
			emulate_send_free(j);
			return 0;
		}
	}
	if (emulate_detach(emulate_send_thread, j) != 0) {
		/* Continued, it would be raced (as emulate_connect()). */
		emulate_send_free(j);
		a->ret = -EAGAIN;
		return 0;
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

	if (c->binds && c->sockaddr.ss_family == AF_UNIX && c->sockaddr_len > 0 &&
	    c->sockaddr_len <= sizeof(c->sockaddr))
		return emulate_name_call(s, u, c, tgid, true, a);
	if (!c->binds || c->n_events != 1 || ev->kind != RULES_KIND_NET || !ev->bind ||
	    c->sockaddr_len == 0 || c->sockaddr_len > sizeof(c->sockaddr))
		return -ENOTSUP;
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
