/* What the files of the notify engine's own calls share (emulate.c,
 * emulate-path.c); not for the rest of the supervisor. */
#ifndef AGENTTRACE_UNOTIFY_EMULATE_INTERNAL_H
#define AGENTTRACE_UNOTIFY_EMULATE_INTERNAL_H

struct call;

/* PATH (absolute, resolved) opened O_PATH in VIEW (the caller's root, or
 * AT_FDCWD) with EXTRA flags, no symlink followed on the way: a symlink
 * that appeared since the check is ELOOP.  The descriptor or -errno. */
int emulate_path_fd(int view, const char *path, int extra);

/* FD0 (O_PATH) opened again with FLAGS through /proc/self/fd, with an
 * open's permission checks.  The descriptor or -errno. */
int emulate_reopen(int fd0, int flags);

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
};

/* C's operation among them, by its name; EMULATE_PATH_NONE for others. */
enum emulate_path_op emulate_path_op_of(const struct call *c);

#endif
