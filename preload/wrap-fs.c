/* The file calls: open family, fopen family, creat, rename*, link*,
 * symlink*, unlink*, mkdir*, truncate.  Outside preload mode each wrapper
 * only calls through. */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "preload/ask.h"
#include "preload/real.h"
#include "preload/shim.h"
#include "lib/syscall-open.h"
#include "lib/syscall-rename.h"

#define EXPORT __attribute__((visibility("default")))

#ifndef O_TMPFILE
#define O_TMPFILE (020000000 | O_DIRECTORY)
#endif

/* True when the policy cannot say anything about a read: no read rule
 * denies or alerts and nothing is recorded, so the path need not even be
 * resolved (the common case outside the default policy). */
static bool fs_read_free(void)
{
	const struct rules_policy *p = shim.policy;

	return !p->record && !p->span[RULES_KIND_READ][RULES_ACTION_DENY].count &&
	       !p->span[RULES_KIND_READ][RULES_ACTION_ALERT].count &&
	       rules_rule_at(p, p->fallback[RULES_KIND_READ])->action == RULES_ACTION_ALLOW;
}

/* 0 or the errno of a denial. */
static int fs_open_check(int dirfd, const char *path, int flags, const char *name)
{
	char abs[PATH_MAX];
	struct ask_call c = { 0 };
	enum syscall_open_kind kind = syscall_open_kind(flags);
	bool write = kind == SYSCALL_OPEN_WRITE;
	int saved = errno, r;

	/* The supervisor's own answer (lib/syscall-open.h): what an O_PATH or
	 * O_DIRECTORY descriptor leads to is judged on its own. */
	if (!path || kind == SYSCALL_OPEN_NONE || (!write && fs_read_free()))
		return 0;
	r = ask_path(dirfd, path, syscall_open_follows(flags), abs);
	errno = saved;
	if (r < 0 && r != -ENOENT)
		return 0; /* the kernel fails it the same way */
	c.syscall = name;
	c.kind = write ? RULES_KIND_WRITE : RULES_KIND_READ;
	c.path = abs;
	c.flags = flags;
	c.has_flags = true;
	c.changes_file = true;
	if (write && syscall_open_write_reads(flags))
		c.reads = RULES_READS_PATH;
	return ask_decide(&c);
}

/* A write of one or two paths (the second may be NULL, else its last
 * name is not followed); READS: the files read by their new names
 * (rename, link: RULES_READS_*). */
static int fs_write_check(int dirfd, const char *path, bool follow, int dirfd2, const char *path2,
			  uint8_t reads, const char *name)
{
	char abs[PATH_MAX], abs2[PATH_MAX];
	struct ask_call c = { 0 };
	int saved = errno, r;

	if (!path)
		return 0;
	r = ask_path(dirfd, path, follow, abs);
	if (r < 0 && r != -ENOENT) {
		errno = saved;
		return 0;
	}
	if (path2) {
		r = ask_path(dirfd2, path2, false, abs2);
		if (r < 0 && r != -ENOENT) {
			errno = saved;
			return 0;
		}
	}
	errno = saved;
	c.syscall = name;
	c.kind = RULES_KIND_WRITE;
	c.path = abs;
	c.path2 = path2 ? abs2 : NULL;
	c.reads = reads;
	/* Of the calls checked here only truncate follows its one name. */
	c.changes_file = follow && !path2;
	return ask_decide(&c);
}

#define FS_DENY(err, ret) \
	do {                  \
		errno = (err);    \
		return (ret);     \
	} while (0)

static mode_t fs_mode(int flags, va_list ap)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? (mode_t)va_arg(ap, int) : 0;
}

#define FS_OPEN(fn)                                                                      \
	EXPORT int fn(const char *path, int flags, ...)                                    \
	{                                                                                  \
		va_list ap;                                                                \
		mode_t mode;                                                               \
		int err;                                                                   \
                                                                                           \
		va_start(ap, flags);                                                       \
		mode = fs_mode(flags, ap);                                                 \
		va_end(ap);                                                                \
		if (shim_deciding() && (err = fs_open_check(AT_FDCWD, path, flags, #fn)))  \
			FS_DENY(err, -1);                                                  \
		return REAL(fn, int (*)(const char *, int, ...))(path, flags, mode);      \
	}

#define FS_OPENAT(fn)                                                                    \
	EXPORT int fn(int dirfd, const char *path, int flags, ...)                         \
	{                                                                                  \
		va_list ap;                                                                \
		mode_t mode;                                                               \
		int err;                                                                   \
                                                                                           \
		va_start(ap, flags);                                                       \
		mode = fs_mode(flags, ap);                                                 \
		va_end(ap);                                                                \
		if (shim_deciding() && (err = fs_open_check(dirfd, path, flags, #fn)))     \
			FS_DENY(err, -1);                                                  \
		return REAL(fn, int (*)(int, const char *, int, ...))(dirfd, path, flags, mode); \
	}

FS_OPEN(open)
FS_OPEN(open64)
FS_OPENAT(openat)
FS_OPENAT(openat64)

/* _FORTIFY_SOURCE's checked variants (no mode argument); glibc declares
 * them only for fortified builds. */
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);

#define FS_OPEN2(fn, real_open)                                                          \
	EXPORT int fn(const char *path, int flags)                                         \
	{                                                                                  \
		int (*f)(const char *, int) = REAL(fn, int (*)(const char *, int));       \
		int err;                                                                   \
                                                                                           \
		if (shim_deciding() && (err = fs_open_check(AT_FDCWD, path, flags, #real_open))) \
			FS_DENY(err, -1);                                                  \
		if (!f)                                                                    \
			return REAL(real_open, int (*)(const char *, int, ...))(path, flags); \
		return f(path, flags);                                                     \
	}

#define FS_OPENAT2(fn, real_open)                                                        \
	EXPORT int fn(int dirfd, const char *path, int flags)                              \
	{                                                                                  \
		int (*f)(int, const char *, int) = REAL(fn, int (*)(int, const char *, int)); \
		int err;                                                                   \
                                                                                           \
		if (shim_deciding() && (err = fs_open_check(dirfd, path, flags, #real_open))) \
			FS_DENY(err, -1);                                                  \
		if (!f)                                                                    \
			return REAL(real_open, int (*)(int, const char *, int, ...))(dirfd, path, flags); \
		return f(dirfd, path, flags);                                              \
	}

FS_OPEN2(__open_2, open)
FS_OPEN2(__open64_2, open64)
FS_OPENAT2(__openat_2, openat)
FS_OPENAT2(__openat64_2, openat64)

#define FS_CREAT(fn)                                                                     \
	EXPORT int fn(const char *path, mode_t mode)                                       \
	{                                                                                  \
		int err;                                                                   \
                                                                                           \
		if (shim_deciding() &&                                                     \
		    (err = fs_open_check(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, #fn))) \
			FS_DENY(err, -1);                                                  \
		return REAL(fn, int (*)(const char *, mode_t))(path, mode);               \
	}

FS_CREAT(creat)
FS_CREAT(creat64)

/* fopen(3) mode string -> open flags. */
static int fs_fopen_flags(const char *mode)
{
	int flags;

	if (!mode)
		return O_RDONLY;
	switch (mode[0]) {
	case 'w': flags = O_WRONLY | O_CREAT | O_TRUNC; break;
	case 'a': flags = O_WRONLY | O_CREAT | O_APPEND; break;
	default: flags = O_RDONLY; break;
	}
	for (const char *m = mode + 1; *m && *m != ','; m++) {
		if (*m == '+')
			flags = (flags & ~O_ACCMODE) | O_RDWR;
		else if (*m == 'x')
			flags |= O_EXCL;
		else if (*m == 'e')
			flags |= O_CLOEXEC;
	}
	return flags;
}

#define FS_FOPEN(fn)                                                                     \
	EXPORT FILE *fn(const char *path, const char *mode)                                \
	{                                                                                  \
		int err;                                                                   \
                                                                                           \
		if (shim_deciding() &&                                                     \
		    (err = fs_open_check(AT_FDCWD, path, fs_fopen_flags(mode), #fn)))      \
			FS_DENY(err, NULL);                                                \
		return REAL(fn, FILE *(*)(const char *, const char *))(path, mode);       \
	}

FS_FOPEN(fopen)
FS_FOPEN(fopen64)

#define FS_FREOPEN(fn)                                                                   \
	EXPORT FILE *fn(const char *path, const char *mode, FILE *stream)                  \
	{                                                                                  \
		int err;                                                                   \
                                                                                           \
		if (shim_deciding() && path &&                                             \
		    (err = fs_open_check(AT_FDCWD, path, fs_fopen_flags(mode), #fn)))      \
			FS_DENY(err, NULL);                                                \
		return REAL(fn, FILE *(*)(const char *, const char *, FILE *))(path, mode, stream); \
	}

FS_FREOPEN(freopen)
FS_FREOPEN(freopen64)

EXPORT int rename(const char *from, const char *to)
{
	int err;

	if (shim_deciding() &&
	    (err = fs_write_check(AT_FDCWD, from, false, AT_FDCWD, to, RULES_READS_PATH, "rename")))
		FS_DENY(err, -1);
	return REAL(rename, int (*)(const char *, const char *))(from, to);
}

EXPORT int renameat(int fd1, const char *from, int fd2, const char *to)
{
	int err;

	if (shim_deciding() &&
	    (err = fs_write_check(fd1, from, false, fd2, to, RULES_READS_PATH, "renameat")))
		FS_DENY(err, -1);
	return REAL(renameat, int (*)(int, const char *, int, const char *))(fd1, from, fd2, to);
}

EXPORT int renameat2(int fd1, const char *from, int fd2, const char *to, unsigned flags)
{
	int err;

	if (shim_deciding() &&
	    (err = fs_write_check(fd1, from, false, fd2, to,
				  RULES_READS_PATH | (syscall_exchanges("renameat2", flags) ? RULES_READS_PATH2 : 0),
				  "renameat2")))
		FS_DENY(err, -1);
	return REAL(renameat2, int (*)(int, const char *, int, const char *, unsigned))(
		fd1, from, fd2, to, flags);
}

EXPORT int link(const char *from, const char *to)
{
	int err;

	if (shim_deciding() &&
	    (err = fs_write_check(AT_FDCWD, from, false, AT_FDCWD, to, RULES_READS_PATH, "link")))
		FS_DENY(err, -1);
	return REAL(link, int (*)(const char *, const char *))(from, to);
}

EXPORT int linkat(int fd1, const char *from, int fd2, const char *to, int flags)
{
	int err;

	if (shim_deciding() &&
	    (err = fs_write_check(fd1, from, (flags & AT_SYMLINK_FOLLOW) != 0, fd2, to,
				  RULES_READS_PATH, "linkat")))
		FS_DENY(err, -1);
	return REAL(linkat, int (*)(int, const char *, int, const char *, int))(fd1, from, fd2, to,
										 flags);
}

/* symlink(TARGET, LINK): the link is written, and the target is checked
 * as the link will lead to it (relative to the link's directory), as the
 * ptrace backend does. */
static int fs_symlink_check(const char *target, int dirfd, const char *linkpath, const char *name)
{
	char link_abs[PATH_MAX], target_abs[PATH_MAX], joined[PATH_MAX];
	struct ask_call c = { 0 };
	int saved = errno, r;
	char *slash;

	if (!target || !linkpath)
		return 0;
	r = ask_path(dirfd, linkpath, false, link_abs);
	if (r < 0) {
		errno = saved;
		return 0;
	}
	if (target[0] == '/') {
		r = ask_path(AT_FDCWD, target, true, target_abs);
	} else {
		slash = strrchr(link_abs, '/');
		if (!slash || (size_t)(slash - link_abs) + 1 + strlen(target) + 1 > sizeof(joined)) {
			errno = saved;
			return 0;
		}
		memcpy(joined, link_abs, (size_t)(slash - link_abs) + 1);
		strcpy(joined + (slash - link_abs) + 1, target);
		r = ask_path(AT_FDCWD, joined, true, target_abs);
	}
	errno = saved;
	if (r < 0 && r != -ENOENT)
		return 0;
	c.syscall = name;
	c.kind = RULES_KIND_WRITE;
	c.path = link_abs;
	c.path2 = target_abs;
	c.path2_explicit_deny_only = true;
	return ask_decide(&c);
}

EXPORT int symlink(const char *target, const char *linkpath)
{
	int err;

	if (shim_deciding() && (err = fs_symlink_check(target, AT_FDCWD, linkpath, "symlink")))
		FS_DENY(err, -1);
	return REAL(symlink, int (*)(const char *, const char *))(target, linkpath);
}

EXPORT int symlinkat(const char *target, int dirfd, const char *linkpath)
{
	int err;

	if (shim_deciding() && (err = fs_symlink_check(target, dirfd, linkpath, "symlinkat")))
		FS_DENY(err, -1);
	return REAL(symlinkat, int (*)(const char *, int, const char *))(target, dirfd, linkpath);
}

EXPORT int unlink(const char *path)
{
	int err;

	if (shim_deciding() && (err = fs_write_check(AT_FDCWD, path, false, 0, NULL, 0, "unlink")))
		FS_DENY(err, -1);
	return REAL(unlink, int (*)(const char *))(path);
}

EXPORT int unlinkat(int dirfd, const char *path, int flags)
{
	int err;

	if (shim_deciding() && (err = fs_write_check(dirfd, path, false, 0, NULL, 0, "unlinkat")))
		FS_DENY(err, -1);
	return REAL(unlinkat, int (*)(int, const char *, int))(dirfd, path, flags);
}

EXPORT int mkdir(const char *path, mode_t mode)
{
	int err;

	if (shim_deciding() && (err = fs_write_check(AT_FDCWD, path, false, 0, NULL, 0, "mkdir")))
		FS_DENY(err, -1);
	return REAL(mkdir, int (*)(const char *, mode_t))(path, mode);
}

EXPORT int mkdirat(int dirfd, const char *path, mode_t mode)
{
	int err;

	if (shim_deciding() && (err = fs_write_check(dirfd, path, false, 0, NULL, 0, "mkdirat")))
		FS_DENY(err, -1);
	return REAL(mkdirat, int (*)(int, const char *, mode_t))(dirfd, path, mode);
}

EXPORT int truncate(const char *path, off_t len)
{
	int err;

	if (shim_deciding() && (err = fs_write_check(AT_FDCWD, path, true, 0, NULL, 0, "truncate")))
		FS_DENY(err, -1);
	return REAL(truncate, int (*)(const char *, off_t))(path, len);
}

EXPORT int truncate64(const char *path, off_t len)
{
	int err;

	if (shim_deciding() && (err = fs_write_check(AT_FDCWD, path, true, 0, NULL, 0, "truncate64")))
		FS_DENY(err, -1);
	return REAL(truncate64, int (*)(const char *, off_t))(path, len);
}

/* A spawn's file action opens in the child, inside libc, where no
 * wrapper sees it: judged when it is added, as the open it will be.
 * The refusal is the function's own answer (an error number). */
EXPORT int posix_spawn_file_actions_addopen(posix_spawn_file_actions_t *fa, int fd,
					    const char *path, int flags, mode_t mode)
{
	int err;

	if (shim_deciding() &&
	    (err = fs_open_check(AT_FDCWD, path, flags, "posix_spawn_file_actions_addopen")))
		return err;
	return REAL(posix_spawn_file_actions_addopen,
		    int (*)(posix_spawn_file_actions_t *, int, const char *, int, mode_t))(
		fa, fd, path, flags, mode);
}
