/* What an open is, as the kernel and the policy see it: the one answer
 * for the supervisor's seccomp filter and decoder (tracer/syscall/) and
 * for the preload shim (preload/wrap-fs.c), which must never disagree on
 * which opens a write rule, a read rule or neither judges.  Header only:
 * the shim includes it without linking anything of the supervisor. */
#ifndef AGENTTRACE_LIB_SYSCALL_OPEN_H
#define AGENTTRACE_LIB_SYSCALL_OPEN_H

#include <fcntl.h>
#include <stdbool.h>

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

/* Whether an open with FLAGS follows a symlink in its last component:
 * not with O_NOFOLLOW, and not with O_CREAT|O_EXCL, which fails on any
 * existing name, a dangling link included (open(2)). */
static inline bool syscall_open_follows(int flags)
{
	return !(flags & O_NOFOLLOW) && (flags & (O_CREAT | O_EXCL)) != (O_CREAT | O_EXCL);
}

#endif
