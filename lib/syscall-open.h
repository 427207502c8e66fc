/* What an open is, as the kernel and the policy see it: the one answer
 * for the supervisor's seccomp filter and decoder (tracer/syscall/) and
 * for the preload shim (preload/wrap-fs.c), which must never disagree on
 * which opens a write rule, a read rule or neither judges.  Header only:
 * the shim includes it without linking anything of the supervisor. */
#ifndef AGENTTRACE_LIB_SYSCALL_OPEN_H
#define AGENTTRACE_LIB_SYSCALL_OPEN_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>

/* Open flags that make an open a write: O_WRONLY O_RDWR O_CREAT O_TRUNC
 * and O_TMPFILE's own bit (glibc's O_TMPFILE also has O_DIRECTORY, which
 * alone is no write). */
#define SYSCALL_TMPFILE_BIT 020000000
#define SYSCALL_OPEN_WRITE_FLAGS (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | SYSCALL_TMPFILE_BIT)
/* Without write intent, an open with one of these reads no file's bytes:
 * an O_PATH descriptor reads nothing, an O_DIRECTORY one lists names (a
 * non-directory fails with ENOTDIR).  Read rules do not judge them. */
#define SYSCALL_OPEN_NOREAD_FLAGS (O_PATH | O_DIRECTORY)

enum syscall_open_kind { SYSCALL_OPEN_NONE, SYSCALL_OPEN_READ, SYSCALL_OPEN_WRITE };

/* What an open with FLAGS is to the policy; the one answer for the
 * filter (the same masks), the decoder and the preload shim. */
static inline enum syscall_open_kind syscall_open_kind(int flags)
{
	if (flags & SYSCALL_OPEN_WRITE_FLAGS)
		return SYSCALL_OPEN_WRITE;
	return (flags & SYSCALL_OPEN_NOREAD_FLAGS) ? SYSCALL_OPEN_NONE : SYSCALL_OPEN_READ;
}

/* Whether a write open with FLAGS also reads the file's bytes: O_RDWR,
 * or O_RDONLY with O_CREAT, opens an existing file for reading too, so
 * the read rules judge it as they judge a read-only open (an "r+" or "a+"
 * of .env reads .env).  Not when the open empties the file first
 * (O_TRUNC) or only makes a new one (O_CREAT|O_EXCL, O_TMPFILE): there is
 * nothing to read. */
static inline bool syscall_open_write_reads(int flags)
{
	if ((flags & O_ACCMODE) == O_WRONLY || (flags & (O_TRUNC | SYSCALL_TMPFILE_BIT)) ||
	    (flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL))
		return false;
	return (flags & O_ACCMODE) == O_RDWR || (flags & O_CREAT);
}

/* Whether an open with FLAGS follows a symlink in its last component:
 * not with O_NOFOLLOW, and not with O_CREAT|O_EXCL, which fails on any
 * existing name, a dangling link included (open(2)). */
static inline bool syscall_open_follows(int flags)
{
	return !(flags & O_NOFOLLOW) && (flags & (O_CREAT | O_EXCL)) != (O_CREAT | O_EXCL);
}

/* Whether an open with FLAGS makes its object when it is missing: O_CREAT,
 * or O_TMPFILE (an unnamed file in an existing directory). */
static inline bool syscall_open_creates(int flags)
{
	return (flags & O_CREAT) || (flags & SYSCALL_TMPFILE_BIT);
}

/* What /proc appends to the name of an unlinked file (a descriptor's
 * link, /proc/PID/fd/N), whose open through that link still reaches it. */
#define SYSCALL_UNLINKED_SUFFIX " (deleted)"

/* Whether PATH is such a name ("NAME (deleted)", absolute). */
static inline bool syscall_unlinked(const char *path)
{
	size_t len = path ? strlen(path) : 0, n = sizeof(SYSCALL_UNLINKED_SUFFIX) - 1;

	return len > n + 1 && path[0] == '/' && strcmp(path + len - n, SYSCALL_UNLINKED_SUFFIX) == 0;
}

/* The name an unlinked file at PATH had, into BUF (SIZE bytes), or NULL
 * when PATH is no such name or it does not fit.  Its bytes are what that
 * name held: a read of it is judged as a read of that name (an O_PATH
 * descriptor of a denied file kept, the file unlinked, then opened
 * through the descriptor's link). */
static inline const char *syscall_unlinked_name(const char *path, char *buf, size_t size)
{
	size_t len;

	if (!syscall_unlinked(path) || (len = strlen(path) - (sizeof(SYSCALL_UNLINKED_SUFFIX) - 1)) >= size)
		return NULL;
	memcpy(buf, path, len);
	buf[len] = '\0';
	return buf;
}

/* The kernel's own answer to an open with FLAGS of PATH (absolute,
 * resolved as the call resolves it) when nothing can be opened: a name
 * that does not exist, opened without creating, fails with ENOENT (or
 * ENOTDIR) in the path walk, before any permission check or security
 * hook.  0 when the name exists, or the open may create it.
 *
 * Both backends answer a denied open so, without a record (agenttrace(1),
 * DENIALS): ~/.npmrc looked up by every npm, /dev/ptyXX probed by
 * openpty(3) where no BSD pty exists.  The call is never run; should the
 * name appear between this check and the program's next call, the
 * program saw what it would have seen a moment earlier. */
static inline int syscall_open_missing(int flags, const char *path)
{
	struct stat st;

	/* /proc is whose view? The supervisor's /proc/self is not the
	 * program's: no answer there.  Nor for a name /proc gave an
	 * unlinked file, which is opened through the link, whatever is at
	 * its name. */
	if (syscall_open_creates(flags) || !path || strncmp(path, "/proc/", 6) == 0 ||
	    syscall_unlinked(path) ||
	    fstatat(AT_FDCWD, path, &st, syscall_open_follows(flags) ? 0 : AT_SYMLINK_NOFOLLOW) == 0)
		return 0;
	return errno == ENOENT || errno == ENOTDIR ? errno : 0;
}

#endif
