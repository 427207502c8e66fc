/* The calls that change a name or a file's attributes, made by the notify
 * engine for a caller that can race (tracer/unotify/emulate.h): on the
 * paths the decoder resolved, each directory opened exactly (no symlink
 * followed, in the caller's view), as the caller. */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tracer/confine/mask.h"
#include "tracer/inspect/creds.h"
#include "tracer/session.h"
#include "tracer/stop.h"
#include "tracer/syscall/call.h"
#include "tracer/unotify/emulate-internal.h"
#include "tracer/unotify/emulate.h"
#include "tracer/unotify/listener.h"

enum emulate_path_op emulate_path_op_of(const struct call *c)
{
	static const struct {
		const char *name;
		enum emulate_path_op op;
	} ops[] = {
		{ "rename", EMULATE_RENAME },   { "renameat", EMULATE_RENAME },
		{ "renameat2", EMULATE_RENAME }, { "link", EMULATE_LINK },
		{ "linkat", EMULATE_LINK },     { "unlink", EMULATE_UNLINK },
		{ "unlinkat", EMULATE_UNLINK }, { "rmdir", EMULATE_RMDIR },
		{ "mkdir", EMULATE_MKDIR },     { "mkdirat", EMULATE_MKDIR },
		{ "chmod", EMULATE_CHMOD },     { "fchmodat", EMULATE_CHMOD },
		{ "fchmodat2", EMULATE_CHMOD }, { "truncate", EMULATE_TRUNCATE },
		{ "mknod", EMULATE_MKNOD },     { "mknodat", EMULATE_MKNOD },
		{ "symlink", EMULATE_SYMLINK }, { "symlinkat", EMULATE_SYMLINK },
	};

	if (!c->name)
		return EMULATE_PATH_NONE;
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (strcmp(c->name, ops[i].name) == 0)
			return ops[i].op;
	return EMULATE_PATH_NONE;
}

/* PATH's directory, opened exactly in VIEW, and its last component into
 * BASE (NAME_MAX + 1 bytes).  The descriptor, or -errno. */
static int emulate_parent(int view, pid_t tid, const char *path, char *base)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	size_t n;

	if (!slash || !slash[1] || strlen(slash + 1) > NAME_MAX)
		return -ENAMETOOLONG;
	n = (size_t)(slash - path);
	memcpy(dir, path, n);
	dir[n] = '\0';
	strcpy(base, slash + 1);
	return emulate_path_fd(view, tid, n ? dir : "/", O_DIRECTORY);
}

/* The object at PATH itself (the decoder followed every symlink to it),
 * for a chmod or a truncate: an O_PATH descriptor, or -errno (ELOOP: a
 * symlink is there now, which was not when it was judged). */
static int emulate_object(int view, pid_t tid, const char *path, struct stat *st)
{
	int fd = emulate_path_fd(view, tid, path, O_NOFOLLOW);

	if (fd < 0)
		return fd;
	if (fstat(fd, st) < 0 || S_ISLNK(st->st_mode)) {
		int e = S_ISLNK(st->st_mode) ? -ELOOP : -errno;

		close(fd);
		return e;
	}
	return fd;
}

static int emulate_chmod(int view, pid_t tid, const char *path, mode_t mode)
{
	struct stat st;
	char link[32];
	int fd = emulate_object(view, tid, path, &st), r;

	if (fd < 0)
		return fd;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	r = chmod(link, mode) < 0 ? -errno : 0;
	close(fd);
	return r;
}

/* 0 or -errno; 1: handed to a thread with the descriptor (another
 * process's lease on the file makes its open wait). */
static int emulate_truncate(struct session *s, const struct unotify_call *u, int view,
			    const char *path, off_t length, const struct creds *cr)
{
	struct stat st;
	int fd0 = emulate_object(view, u->tid, path, &st), fd, r;

	if (fd0 < 0)
		return fd0;
	if (S_ISDIR(st.st_mode)) {
		close(fd0);
		return -EISDIR;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd0);
		return -EINVAL; /* a FIFO is never opened, so never waited on */
	}
	fd = emulate_reopen_nowait(fd0, O_WRONLY);
	if (fd == -EWOULDBLOCK) {
		r = emulate_in_thread(s, u->id, fd0, O_WRONLY, cr, true, length);
		return r == 1 ? 1 : -EAGAIN;
	}
	close(fd0);
	if (fd < 0)
		return fd;
	r = ftruncate(fd, length) < 0 ? -errno : 0;
	close(fd);
	return r;
}

/* The kernel's own answer to a truncate past the caller's RLIMIT_FSIZE,
 * which the supervisor's limit would not give: EFBIG and SIGXFSZ. */
static bool emulate_truncate_too_big(const struct unotify_call *u, pid_t tgid, off_t length)
{
	struct rlimit rl;

	if (prlimit(tgid, RLIMIT_FSIZE, NULL, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY ||
	    length < 0 || (rlim_t)length <= rl.rlim_cur)
		return false;
	syscall(SYS_tgkill, tgid, u->tid, SIGXFSZ);
	return true;
}

int emulate_path_call(struct session *s, const struct unotify_call *u, const struct call *c,
		      pid_t tgid, struct stop_answer *a)
{
	enum emulate_path_op op = emulate_path_op_of(c);
	/* The paths made here (a symlink's target is text, not a path). */
	unsigned n = op == EMULATE_RENAME || op == EMULATE_LINK ? 2 : 1;
	int dfd[2] = { -1, -1 }, view, r = 0, flags = 0;
	char base[2][NAME_MAX + 1];
	struct creds cr, saved;
	const char *name = c->name;

	if (op == EMULATE_PATH_NONE || c->n_events < n ||
	    (op == EMULATE_SYMLINK && !c->link_target[0]))
		return -ENOTSUP;
	if (strcmp(name, "unlinkat") == 0 && (c->flags & AT_REMOVEDIR))
		op = EMULATE_RMDIR;
	if (strcmp(name, "renameat2") == 0)
		flags = c->flags;
	/* An open file linked by descriptor (AT_EMPTY_PATH: an O_TMPFILE
	 * given a name), a chmod of a symlink itself, and flags the kernel
	 * refuses (EINVAL): the kernel's, as they are. */
	if ((strcmp(name, "linkat") == 0 && (c->flags & ~AT_SYMLINK_FOLLOW)) ||
	    (strcmp(name, "unlinkat") == 0 && (c->flags & ~AT_REMOVEDIR)) ||
	    (strcmp(name, "fchmodat2") == 0 && c->flags))
		return -ENOTSUP;
	for (unsigned i = 0; i < n; i++)
		if (c->path[i][0] != '/' || c->path_proc[i] || c->path_odd_end[i])
			return -ENOTSUP;
	view = mask_view_fd(s, u->tid);
	if (view < 0 && view != AT_FDCWD)
		return -ENOTSUP;
	if (creds_of_task(u->tid, &cr) < 0)
		return -ENOTSUP;
	creds_become(&cr, &saved);
	if (op != EMULATE_CHMOD && op != EMULATE_TRUNCATE)
		for (unsigned i = 0; i < n && r >= 0; i++)
			r = dfd[i] = emulate_parent(view, u->tid, c->path[i], base[i]);
	if (r >= 0) {
		r = 0;
		switch (op) {
		case EMULATE_RENAME:
			if (syscall(SYS_renameat2, dfd[0], base[0], dfd[1], base[1], flags) < 0)
				r = -errno;
			break;
		case EMULATE_LINK:
			/* The decoder followed the old name where the call
			 * would (AT_SYMLINK_FOLLOW): the object is linked. */
			if (linkat(dfd[0], base[0], dfd[1], base[1], 0) < 0)
				r = -errno;
			break;
		case EMULATE_UNLINK:
		case EMULATE_RMDIR:
			if (unlinkat(dfd[0], base[0], op == EMULATE_RMDIR ? AT_REMOVEDIR : 0) < 0)
				r = -errno;
			break;
		case EMULATE_MKDIR: {
			mode_t old = umask(cr.umask);

			if (mkdirat(dfd[0], base[0],
				    (mode_t)c->args[strcmp(name, "mkdirat") == 0 ? 2 : 1]) < 0)
				r = -errno;
			umask(old);
			break;
		}
		case EMULATE_MKNOD: {
			/* A FIFO, a socket or a regular file: a device node is
			 * refused before this (syscall.mknod). */
			bool at = strcmp(name, "mknodat") == 0;
			mode_t old = umask(cr.umask);

			if (mknodat(dfd[0], base[0], (mode_t)c->args[at ? 2 : 1],
				    (dev_t)c->args[at ? 3 : 2]) < 0)
				r = -errno;
			umask(old);
			break;
		}
		case EMULATE_SYMLINK:
			if (symlinkat(c->link_target, dfd[0], base[0]) < 0)
				r = -errno;
			break;
		case EMULATE_CHMOD:
			r = emulate_chmod(view, u->tid, c->path[0], (mode_t)c->chmod_mode);
			break;
		case EMULATE_TRUNCATE:
			if (emulate_truncate_too_big(u, tgid, (off_t)c->args[1]))
				r = -EFBIG;
			else
				r = emulate_truncate(s, u, view, c->path[0], (off_t)c->args[1], &cr);
			break;
		default:
			break;
		}
	}
	creds_restore(&saved);
	for (unsigned i = 0; i < 2; i++)
		if (dfd[i] >= 0)
			close(dfd[i]);
	if (r == 1)
		return 1; /* a thread answers */
	a->how = STOP_RETURN;
	a->ret = r;
	return 0;
}
