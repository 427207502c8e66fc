/* The calls that change a name or a file's attributes (mode, size,
 * owner, times, extended attributes), made by the notify engine for a caller
 * that can race (tracer/unotify/emulate.h): on the paths the decoder
 * resolved, each directory opened exactly (no symlink followed, in the
 * caller's view), as the caller. */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <utime.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <linux/limits.h>
#include <unistd.h>

#include "lib/syscall-rename.h"
#include "lib/xalloc.h"
#include "tracer/confine/mask.h"
#include "tracer/inspect/creds.h"
#include "tracer/confine/content.h"
#include "tracer/judge.h"
#include "tracer/session.h"
#include "tracer/stop.h"
#include "tracer/syscall/call.h"
#include "tracer/syscall/mem.h"
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
		{ "chown", EMULATE_CHOWN },     { "lchown", EMULATE_CHOWN },
		{ "fchownat", EMULATE_CHOWN },  { "setxattr", EMULATE_SETXATTR },
		{ "lsetxattr", EMULATE_SETXATTR }, { "removexattr", EMULATE_REMOVEXATTR },
		{ "lremovexattr", EMULATE_REMOVEXATTR }, { "setxattrat", EMULATE_OLDER_FORM },
		{ "removexattrat", EMULATE_OLDER_FORM }, { "file_setattr", EMULATE_OLDER_FORM },
		{ "utime", EMULATE_UTIMES },    { "utimes", EMULATE_UTIMES },
		{ "futimesat", EMULATE_UTIMES }, { "utimensat", EMULATE_UTIMES },
	};

	if (!c->name)
		return EMULATE_PATH_NONE;
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (strcmp(c->name, ops[i].name) == 0)
			return ops[i].op;
	return EMULATE_PATH_NONE;
}

/* PATH's directory, opened exactly in VIEW, and its last component into
 * BASE (PATH_MAX bytes; one longer than NAME_MAX is the kernel's to
 * refuse, after the directory's own errors).  The descriptor, or -errno. */
static int emulate_parent(int view, pid_t tid, const char *path, char *base)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	size_t n;

	if (!slash || !slash[1])
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

int emulate_where(int view, pid_t tid, const struct call *c, unsigned i, const char *path,
		  char *base)
{
	if (!c->path_odd_last[i][0])
		return emulate_parent(view, tid, path, base);
	strcpy(base, c->path_odd_last[i]);
	return emulate_path_fd(view, tid, c->path_odd_dir[i], O_DIRECTORY);
}

/* A call that changes a file, made here: the session, and the denied
 * file with other names it found it would change by a name swapped since
 * the check (emulate_reached()), recorded once the caller's identity is
 * put back. */
struct emulate_reach {
	struct session *s;
	const struct linked_file *f;
	struct judge_verdict v;
};

static int emulate_target_of(int view, pid_t tid, pid_t tgid, const struct call *c,
			     const char *path, bool follow, struct stat *st);

/* The object of a chmod or a truncate, path 0 of C (PATH): an O_PATH descriptor
 * (or the caller's own open file), ST its status; -errno.  FOLLOW: the
 * decoder followed a final symlink.  A name that ended in "/" names a
 * directory.  A denied file reached by a name swapped since the check is
 * the errno the call decided again as reaching it gets (RCH->f then
 * that file). */
static int emulate_target(struct emulate_reach *rch, int view, pid_t tid, pid_t tgid,
			  const struct call *c, const char *path, bool follow, struct stat *st)
{
	const struct linked_file *f;
	int fd = emulate_target_of(view, tid, tgid, c, path, follow, st), err;

	if (fd >= 0 && (f = emulate_reached(rch->s, c, st)) &&
	    (err = stop_reached_linked(rch->s, c, f, &rch->v))) {
		rch->f = f;
		close(fd);
		return -err;
	}
	return fd;
}

static int emulate_target_of(int view, pid_t tid, pid_t tgid, const struct call *c,
			     const char *path, bool follow, struct stat *st)
{
	int fd;

	if (c->path_by_fd[0]) {
		fd = emulate_caller_fd(tgid, (int)c->args[0]); /* linkat's, fchmodat2's dirfd */
		if (fd >= 0 && fstat(fd, st) < 0) {
			close(fd);
			fd = -errno;
		}
		return fd == -EBADF || fd >= 0 ? fd : -EBADF;
	}
	fd = follow ? emulate_object(view, tid, path, st)
		    : emulate_path_fd(view, tid, path, O_NOFOLLOW);
	if (fd >= 0 && !follow && fstat(fd, st) < 0) {
		close(fd);
		return -errno;
	}
	if (fd >= 0 && c->path_odd_last[0][0] && !S_ISDIR(st->st_mode)) {
		close(fd);
		return -ENOTDIR;
	}
	return fd;
}

/* chmod, fchmodat and fchmodat2 (FLAGS: AT_SYMLINK_NOFOLLOW, whose
 * symlink the kernel refuses with EOPNOTSUPP) of path 0 of C (PATH). */
static int emulate_chmod(struct emulate_reach *rch, int view, pid_t tid, pid_t tgid, const struct call *c,
			 const char *path, int flags)
{
	bool follow = !(flags & AT_SYMLINK_NOFOLLOW);
	struct stat st;
	char link[32];
	int fd = emulate_target(rch, view, tid, tgid, c, path, follow, &st), r;

	if (fd < 0)
		return fd;
	if (S_ISLNK(st.st_mode)) {
		close(fd);
		return -EOPNOTSUPP;
	}
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	r = chmod(link, (mode_t)c->chmod_mode) < 0 ? -errno : 0;
	close(fd);
	return r;
}

/* 0 or -errno; 1: handed to a thread with the descriptor (another
 * process's lease on the file makes its open wait). */
static int emulate_truncate(struct emulate_reach *rch, const struct unotify_call *u, int view,
			    pid_t tgid, const struct call *c, const char *path, off_t length,
			    const struct creds *cr)
{
	struct stat st;
	int fd0 = emulate_target(rch, view, u->tid, tgid, c, path, true, &st), fd, r;

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
		r = emulate_in_thread(rch->s, u->id, fd0, O_WRONLY, cr, true, length);
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

/* chown, lchown, fchownat (FOLLOW: the decoder followed a final
 * symlink) of path 0 of C (PATH), on the object itself. */
static int emulate_chown(struct emulate_reach *rch, int view, pid_t tid, pid_t tgid, const struct call *c, const char *path,
			 bool follow)
{
	bool at = strcmp(c->name, "fchownat") == 0;
	struct stat st;
	int fd = emulate_target(rch, view, tid, tgid, c, path, follow, &st), r;

	if (fd < 0)
		return fd;
	r = fchownat(fd, "", (uid_t)c->args[at ? 2 : 1], (gid_t)c->args[at ? 3 : 2],
		     AT_EMPTY_PATH) < 0 ? -errno : 0;
	close(fd);
	return r;
}

/* setxattr, lsetxattr (SET), removexattr, lremovexattr of path 0 of C
 * (PATH), with the name and value the caller gives now (they are not
 * judged).  A symlink's own attributes: EPERM, as the kernel answers for
 * the user namespace of names, the only one the session may write. */
static int emulate_xattr(struct emulate_reach *rch, int view, pid_t tid, pid_t tgid, const struct call *c, const char *path,
			 bool follow, bool set)
{
	char name[XATTR_NAME_MAX + 1], link[32];
	size_t size = set ? (size_t)c->args[3] : 0;
	void *value = NULL;
	struct stat st;
	long n = mem_read_string(tid, c->args[1], name, sizeof(name));
	int fd, r;

	if (n < 0)
		return n == -ENAMETOOLONG ? -ERANGE : n == -ESRCH ? -EFAULT : (int)n;
	if (n == 0)
		return -ERANGE;
	if (size > XATTR_SIZE_MAX)
		return -E2BIG;
	if (size) {
		value = xmalloc(size);
		r = mem_read(tid, c->args[2], value, size);
		if (r < 0) {
			free(value);
			return -EFAULT;
		}
	}
	fd = emulate_target(rch, view, tid, tgid, c, path, follow, &st);
	if (fd < 0) {
		free(value);
		return fd;
	}
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	if (S_ISLNK(st.st_mode))
		r = -EPERM;
	else if (set)
		r = setxattr(link, name, value, size, (int)c->args[4]) < 0 ? -errno : 0;
	else
		r = removexattr(link, name) < 0 ? -errno : 0;
	close(fd);
	free(value);
	return r;
}

/* The times of C, a utime, utimes, futimesat or utimensat, read now from
 * the caller TID (they are not judged) as utimensat(2) takes them into
 * TS; *NOW when none was given (the current time).  0 or -errno. */
static int emulate_times_of(pid_t tid, const struct call *c, struct timespec ts[2], bool *now)
{
	bool tv = strcmp(c->name, "utimes") == 0 || strcmp(c->name, "futimesat") == 0;
	bool ub = strcmp(c->name, "utime") == 0;
	unsigned long at = c->args[ub || strcmp(c->name, "utimes") == 0 ? 1 : 2];

	*now = at == 0;
	if (*now)
		return 0;
	if (ub) {
		struct utimbuf b;

		if (mem_read(tid, at, &b, sizeof(b)) < 0)
			return -EFAULT;
		ts[0] = (struct timespec){ .tv_sec = b.actime };
		ts[1] = (struct timespec){ .tv_sec = b.modtime };
	} else if (tv) {
		struct timeval v[2];

		if (mem_read(tid, at, v, sizeof(v)) < 0)
			return -EFAULT;
		for (int i = 0; i < 2; i++) {
			if (v[i].tv_usec < 0 || v[i].tv_usec >= 1000000)
				return -EINVAL;
			ts[i] = (struct timespec){ .tv_sec = v[i].tv_sec,
						   .tv_nsec = v[i].tv_usec * 1000 };
		}
	} else if (mem_read(tid, at, ts, 2 * sizeof(*ts)) < 0) {
		return -EFAULT;
	}
	return 0;
}

/* The utime family of path 0 of C (PATH), on the object itself. */
static int emulate_utimes(struct emulate_reach *rch, int view, pid_t tid, pid_t tgid, const struct call *c, const char *path)
{
	bool follow = !(strcmp(c->name, "utimensat") == 0 && (c->flags & AT_SYMLINK_NOFOLLOW));
	struct timespec ts[2];
	struct stat st;
	bool now;
	int fd, r = emulate_times_of(tid, c, ts, &now);

	if (r < 0)
		return r;
	fd = emulate_target(rch, view, tid, tgid, c, path, follow, &st);
	if (fd < 0)
		return fd;
	r = utimensat(fd, "", now ? NULL : ts, AT_EMPTY_PATH) < 0 ? -errno : 0;
	close(fd);
	return r;
}

/* Whether NAME in directory DFD (opened in the caller's view) is a mount
 * point there.  The kernel refuses to rename or remove one with EBUSY,
 * but asks the namespace of the task that makes the call: made from the
 * supervisor's, a rename would carry a mask of the caller's away (the
 * pin on .github, say) and let the tree be made again unmasked. */
static bool emulate_mountpoint(int dfd, const char *name)
{
	struct statx dir, obj;

	if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return false;
	if (statx(dfd, "", AT_EMPTY_PATH, STATX_MNT_ID, &dir) < 0 ||
	    statx(dfd, name, AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &obj) < 0)
		return false; /* the call's own answer (ENOENT) follows */
	return (dir.stx_mask & STATX_MNT_ID) && (obj.stx_mask & STATX_MNT_ID) &&
	       dir.stx_mnt_id != obj.stx_mnt_id;
}

int emulate_path_call(struct session *s, const struct unotify_call *u, const struct call *c,
		      pid_t tgid, struct stop_answer *a)
{
	enum emulate_path_op op = emulate_path_op_of(c);
	/* The paths made here (a symlink's target is text, not a path). */
	unsigned n = op == EMULATE_RENAME || op == EMULATE_LINK ? 2 : 1;
	int dfd[2] = { -1, -1 }, view, r = 0, flags = 0;
	char base[2][PATH_MAX], proc[2][PATH_MAX];
	const char *path[2] = { NULL, NULL };
	struct creds cr, saved;
	const char *name = c->name;
	struct emulate_reach rch = { .s = s };
	bool git_refused = false;

	if (op == EMULATE_PATH_NONE)
		return -ENOTSUP;
	if (strcmp(name, "unlinkat") == 0 && (c->flags & AT_REMOVEDIR))
		op = EMULATE_RMDIR;
	if (strcmp(name, "renameat2") == 0 || strcmp(name, "fchmodat2") == 0)
		flags = c->flags;
	a->how = STOP_RETURN;
	/* Whatever is not made here is answered here: let run, the call
	 * would have the kernel read its names again.  Flags the kernel
	 * refuses, and a symlink to nothing, get its own answer; a name
	 * that gave the policy nothing to judge (a /proc link to a pipe)
	 * or a caller the supervisor cannot act as (it is gone) EPERM. */
	a->ret = -EINVAL;
	if ((strcmp(name, "linkat") == 0 && (c->flags & ~(AT_SYMLINK_FOLLOW | AT_EMPTY_PATH))) ||
	    (strcmp(name, "unlinkat") == 0 && (c->flags & ~AT_REMOVEDIR)) ||
	    (strcmp(name, "fchmodat2") == 0 && (c->flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))))
		return 0;
	a->ret = -ENOENT;
	if (op == EMULATE_SYMLINK && !c->link_target[0])
		return 0;
	a->ret = -ENOSYS;
	if (op == EMULATE_OLDER_FORM)
		return 0;
	a->ret = -EINVAL;
	if ((strcmp(name, "fchownat") == 0 || strcmp(name, "utimensat") == 0) &&
	    (c->flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH)))
		return 0;
	a->ret = -EPERM;
	if (c->n_events < n)
		return 0;
	for (unsigned i = 0; i < n; i++)
		if (c->path[i][0] != '/' || (c->path_by_fd[i] && i > 0) ||
		    !(path[i] = emulate_path_of(c, i, proc[i])))
			return 0;
	view = mask_view_fd(s, u->tid);
	if ((view < 0 && view != AT_FDCWD) || creds_of_task(u->tid, &cr) < 0)
		return 0;
	creds_become(&cr, &saved);
	if (op != EMULATE_CHMOD && op != EMULATE_TRUNCATE && op != EMULATE_CHOWN &&
	    op != EMULATE_SETXATTR && op != EMULATE_REMOVEXATTR && op != EMULATE_UTIMES)
		for (unsigned i = 0; i < n && r >= 0; i++)
			r = dfd[i] = c->path_by_fd[i] ? emulate_caller_fd(tgid, (int)c->args[0])
						      : emulate_where(view, u->tid, c, i, path[i], base[i]);
	if (r >= 0 && (op == EMULATE_RENAME || op == EMULATE_UNLINK || op == EMULATE_RMDIR)) {
		for (unsigned i = 0; i < n && r >= 0; i++)
			if (emulate_mountpoint(dfd[i], base[i]))
				r = -EBUSY;
	}
	if (r >= 0) {
		r = 0;
		switch (op) {
		case EMULATE_RENAME:
			if (syscall(SYS_renameat2, dfd[0], base[0], dfd[1], base[1], flags) < 0) {
				r = -errno;
				break;
			}
			/* What arrived, now that it has (emulate.c,
			 * emulate_note_names()). */
			mask_reads_arrived(s->mask, s->policy, c->path[1]);
			if (syscall_exchanges(c->name, c->flags))
				mask_reads_arrived(s->mask, s->policy, c->path[0]);
			break;
		case EMULATE_LINK:
			/* The decoder followed the old name where the call
			 * would (AT_SYMLINK_FOLLOW): the object is linked.  An
			 * open file given a name (AT_EMPTY_PATH) is linked from
			 * the caller's own descriptor, copied, through its
			 * /proc/self/fd link: since Linux 6.10 the kernel lets
			 * AT_EMPTY_PATH link a file without CAP_DAC_READ_SEARCH
			 * only for the credentials that opened it, which a copy
			 * in another process never has; the link needs none,
			 * and the caller could take it as well. */
			if (c->path_by_fd[0]) {
				char self[64];

				snprintf(self, sizeof(self), "/proc/self/fd/%d", dfd[0]);
				if (linkat(AT_FDCWD, self, dfd[1], base[1], AT_SYMLINK_FOLLOW) < 0)
					r = -errno;
			} else if (linkat(dfd[0], base[0], dfd[1], base[1], 0) < 0) {
				r = -errno;
			}
			break;
		case EMULATE_UNLINK:
		case EMULATE_RMDIR:
			if (c->removal_in_new_git && !content_removal_holds(s, c, dfd[0])) {
				git_refused = true;
				r = -EACCES;
				break;
			}
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
			 * refused before this (syscall.device-node). */
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
			r = emulate_chmod(&rch, view, u->tid, tgid, c, path[0], flags);
			break;
		case EMULATE_CHOWN:
		case EMULATE_SETXATTR:
		case EMULATE_REMOVEXATTR: {
			bool follow = name[0] != 'l' &&
				      !(strcmp(name, "fchownat") == 0 &&
					(c->flags & AT_SYMLINK_NOFOLLOW));

			r = op == EMULATE_CHOWN
				    ? emulate_chown(&rch, view, u->tid, tgid, c, path[0], follow)
				    : emulate_xattr(&rch, view, u->tid, tgid, c, path[0], follow,
						    op == EMULATE_SETXATTR);
			break;
		}
		case EMULATE_UTIMES:
			r = emulate_utimes(&rch, view, u->tid, tgid, c, path[0]);
			break;
		case EMULATE_TRUNCATE:
			if (emulate_truncate_too_big(u, tgid, (off_t)c->args[1]))
				r = -EFBIG;
			else
				r = emulate_truncate(&rch, u, view, tgid, c, path[0], (off_t)c->args[1],
						     &cr);
			break;
		default:
			break;
		}
	}
	creds_restore(&saved);
	if (rch.f)
		stop_record_reached(s, u->tid, c, &rch.v);
	if (git_refused) {
		struct judge_verdict v;

		stop_decide_again(s, c, &v);
		stop_record_reached(s, u->tid, c, &v);
	}
	for (unsigned i = 0; i < 2; i++)
		if (dfd[i] >= 0)
			close(dfd[i]);
	if (r == 1)
		return 1; /* a thread answers */
	a->how = STOP_RETURN;
	a->ret = r;
	return 0;
}
