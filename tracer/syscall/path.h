/* Path resolution in a tracee's view, as the kernel's namei would do it:
 * relative to /proc/PID/cwd or the dirfd's /proc/PID/fd/N, ".", ".." and
 * "//" folded, every symlink of an existing component followed (the final
 * one unless PATH_NOFOLLOW), /proc/self and /proc/thread-self read as the
 * tracee's, /proc/PID/{fd/N,cwd,root,exe} magic links replaced by what they
 * refer to.  A path that does not exist (yet) is its resolved existing
 * prefix plus the rest folded as text.
 *
 * The tracee's root and mount namespace are taken to be the supervisor's:
 * chroot, pivot_root, mount, unshare and setns are denied by the syscall
 * table, so a session cannot change them (doc/SYSCALLS.md).  The
 * command's masks (tracer/confine/mask.h) give it a mount namespace of
 * its own, made before the filter, which differs from the supervisor's
 * only on what the policy denies as a whole.
 *
 * No allocation: the stack holds two PATH_MAX-sized work buffers. */
#ifndef AGENTTRACE_PATH_H
#define AGENTTRACE_PATH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define PATH_NOFOLLOW 0x1 /* do not follow a final symlink */

/* Return value (besides -errno): the name is a /proc fd link to something
 * that is not a file-system object (pipe:[..], socket:[..], anon_inode:..);
 * OUT holds that text.  Reopening such a link cannot create or change a
 * path, so the decoder makes no event of it. */
#define PATH_NOT_FS 1

#define PATH_MAX_SYMLINKS 40 /* the kernel's MAXSYMLINKS */

/* Resolve PATH as tracee PID passed it, relative to DIRFD (AT_FDCWD for
 * the cwd).  OUT gets the absolute result (OUTSZ bytes, PATH_MAX is
 * enough).  Returns 0, PATH_NOT_FS, or -errno: -ENOENT for "", -ELOOP,
 * -ENAMETOOLONG (result longer than OUTSZ), -ENOTDIR (DIRFD is not a
 * directory), -EBADF (no such fd), -ESRCH (the tracee is gone). */
int path_resolve(pid_t pid, int dirfd, const char *path, int flags, char *out, size_t outsz);

/* path_resolve(), and into VIA the pid of the last /proc/PID magic link
 * (fd/N, cwd, root, exe) the walk followed, 0 for none: what such a
 * link leads to, process PID can change without any name changing. */
int path_resolve_via(pid_t pid, int dirfd, const char *path, int flags, char *out, size_t outsz,
		     pid_t *via);

/* The same with an already-resolved absolute directory BASE for relative
 * paths (a symlink's target is relative to the link's directory). */
int path_resolve_from(pid_t pid, const char *base, const char *path, int flags, char *out,
		      size_t outsz);

/* What fd FD of PID refers to (AT_FDCWD: the cwd).  0, PATH_NOT_FS, -errno. */
int path_fd(pid_t pid, int fd, char *out, size_t outsz);

/* The canonical name of the object the supervisor's own descriptor FD
 * refers to (the kernel's d_path), into OUT; 0, or 1 when the text is not
 * a plain reachable path or names something under /proc (where the
 * supervisor's own /proc/self would have stood in for the tracee's). */
int path_fd_name(int fd, char *out, size_t outsz);

/* Test hook: resolve by the component walk alone (the reference that the
 * openat2(2) shortcuts must agree with). */
void path_force_walk(bool on);

#endif
