/* What the files of the notify engine's own calls share (emulate.c,
 * emulate-path.c); not for the rest of the supervisor. */
#ifndef AGENTTRACE_UNOTIFY_EMULATE_INTERNAL_H
#define AGENTTRACE_UNOTIFY_EMULATE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct call;
struct session;

/* PATH (absolute, resolved) opened O_PATH in VIEW (the caller's root, or
 * AT_FDCWD) with EXTRA flags, no symlink followed on the way: a symlink
 * that appeared since the check is ELOOP; below task TID's working
 * directory, from there when the root's walk may not search.  The
 * descriptor or -errno. */
int emulate_path_fd(int view, pid_t tid, const char *path, int extra);

/* Where a call that makes or changes a name acts for path I of C (PATH,
 * as emulate_path_of() gives it): the directory, opened exactly in VIEW,
 * and the name in it into BASE (PATH_MAX bytes).  A name that ended
 * in "/", "." or ".." keeps that ending, so that the kernel gives the
 * call its own meaning (ENOTDIR for a file named "f/", EINVAL for rmdir
 * of "d/.", EISDIR for an O_CREAT open of "d/").  The descriptor, or
 * -errno. */
int emulate_where(int view, pid_t tid, const struct call *c, unsigned i, const char *path,
		  char *base);

/* The denied file with other names (tracer/confine/linked.h) that the
 * object ST, opened for call C, is, when C's judged path 0 is not its
 * own name: a name that may have led elsewhere when it was judged (one
 * swapped since), so the call is decided again as reaching it
 * (stop_reached_linked()).  NULL: none. */
struct linked_file;
struct stat;
const struct linked_file *emulate_reached(const struct session *s, const struct call *c,
					  const struct stat *st);

/* Path I of C as the supervisor reaches it: a session process's own
 * /proc entry, which the policy judged as /proc/self, is /proc/PID (and
 * "self" is a symlink, which an exact open refuses).  BUF: PATH_MAX
 * bytes.  NULL when it does not fit. */
const char *emulate_path_of(const struct call *c, unsigned i, char *buf);

/* The caller's descriptor FD, copied from process TGID (pidfd_getfd(2)),
 * or -errno. */
int emulate_caller_fd(pid_t tgid, int fd);

/* FD0 (O_PATH) opened again with FLAGS through /proc/self/fd, with an
 * open's permission checks.  The descriptor or -errno. */
int emulate_reopen(int fd0, int flags);

/* FD0 (O_PATH) opened again like emulate_reopen() without waiting: a
 * regular file another process holds a lease on is -EWOULDBLOCK rather
 * than an open that waits for the lease's break. */
int emulate_reopen_nowait(int fd0, int flags);

/* The open of FD0 with FLAGS that waits, or a truncate of it to LENGTH
 * (TRUNCATE), made as CR by a thread of its own, which answers
 * notification ID; FD0 is its to close.  1, or -errno of the thread's
 * start (FD0 closed). */
struct creds;
int emulate_in_thread(struct session *s, uint64_t id, int fd0, int flags, const struct creds *cr,
		      bool truncate, off_t length);

/* The name-changing and attribute calls made here (emulate-path.c). */
enum emulate_path_op {
	EMULATE_PATH_NONE = 0,
	EMULATE_RENAME,
	EMULATE_LINK,
	EMULATE_UNLINK,
	EMULATE_RMDIR,
	EMULATE_MKDIR,
	EMULATE_MKNOD,
	EMULATE_SYMLINK,
	EMULATE_CHMOD,
	EMULATE_TRUNCATE,
	EMULATE_CHOWN,
	EMULATE_SETXATTR,
	EMULATE_REMOVEXATTR,
	EMULATE_UTIMES,
	/* Calls newer than their older forms (setxattrat, removexattrat,
	 * file_setattr), which a racing caller is told do not exist: it
	 * falls back on those. */
	EMULATE_OLDER_FORM,
};

/* C's operation among them, by its name; EMULATE_PATH_NONE for others. */
enum emulate_path_op emulate_path_op_of(const struct call *c);

#endif
