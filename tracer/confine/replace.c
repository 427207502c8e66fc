/* The supervisor's replacement of a file whose content is judged
 * (tracer/confine/replace.h). */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/fullio.h"
#include "lib/log.h"
#include "tracer/confine/replace.h"
#include "tracer/inspect/creds.h"

/* DIR exactly: no symbolic link on the way (the decoder resolved it; one
 * there now appeared after), as an O_PATH descriptor. */
static int replace_dir_fd(const char *dir)
{
	struct open_how how = { .flags = (unsigned long long)(O_PATH | O_DIRECTORY | O_CLOEXEC),
				.resolve = RESOLVE_NO_SYMLINKS };
	long fd = syscall(SYS_openat2, AT_FDCWD, dir, &how, sizeof(how));

	return fd < 0 ? -errno : (int)fd;
}

/* NAME in DFD opened for reading when it is a regular file, never
 * following a symbolic link and never opening anything else (a FIFO
 * would wait, a device could act on an open): O_PATH first, then the same
 * inode again.  ST gets what it is.  -errno; -ELOOP: a symbolic link;
 * -EINVAL: no regular file. */
static int replace_open_file(int dfd, const char *name, struct stat *st)
{
	char link[32];
	int fd0, fd;

	fd0 = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd0 < 0)
		return -errno;
	if (fstat(fd0, st) < 0) {
		fd = -errno;
		close(fd0);
		return fd;
	}
	if (S_ISLNK(st->st_mode) || !S_ISREG(st->st_mode)) {
		close(fd0);
		return S_ISLNK(st->st_mode) ? -ELOOP : -EINVAL;
	}
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd0);
	fd = open(link, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	fd = fd < 0 ? -errno : fd;
	close(fd0);
	return fd;
}

/* Up to MAX bytes of FD into a buffer of MAX + 1 (malloc'ed in *OUT);
 * the count, or -errno; MAX + 1 when there is more. */
static ssize_t replace_read(int fd, size_t max, char **out)
{
	char *buf = malloc(max + 1);
	size_t n = 0;

	*out = buf;
	if (!buf)
		return -ENOMEM;
	while (n <= max) {
		ssize_t r = read(fd, buf + n, max + 1 - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		n += (size_t)r;
	}
	return (ssize_t)n;
}

static void replace_bad(struct replace_result *res, const char *why)
{
	res->outcome = REPLACE_BAD_LOCK;
	res->why = why;
}

static void replace_failed(struct replace_result *res, int err)
{
	res->outcome = REPLACE_FAILED;
	res->err = err;
}

/* The current content of TARGET: NULL (and 0) when it does not exist or
 * is nothing the check reads, which the check takes as empty. */
static char *replace_old(int dfd, const char *target, size_t *len)
{
	struct stat st;
	char *buf = NULL;
	ssize_t n;
	int fd = replace_open_file(dfd, target, &st);

	*len = 0;
	if (fd < 0)
		return NULL;
	n = replace_read(fd, GITCONFIG_MAX, &buf);
	close(fd);
	if (n < 0 || (size_t)n > GITCONFIG_MAX) {
		free(buf);
		return NULL;
	}
	*len = (size_t)n;
	return buf;
}

/* The bytes into DFD/TEMP, a file made here with MODE, renamed onto
 * TARGET.  0 or -errno (TEMP removed again). */
static int replace_put(int dfd, const char *temp, const char *target, const char *buf, size_t n,
		       mode_t mode)
{
	int fd = openat(dfd, temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC,
			0600);
	int r;

	if (fd < 0)
		return -errno;
	r = write_full(fd, buf, n);
	/* The mode once written: the file is ours until it has its name. */
	if (r == 0 && fchmod(fd, mode & 0777) < 0)
		r = -errno;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && renameat(dfd, temp, dfd, target) < 0)
		r = -errno;
	if (r < 0 && unlinkat(dfd, temp, 0) < 0)
		debug_msg("cannot remove %s again: %s", temp, strerror(errno));
	return r;
}

void replace_from_lock(pid_t tid, const char *dir, const char *lock, const char *target,
		       const char *temp, bool force, struct replace_result *res)
{
	struct creds cr, saved;
	struct stat st, now;
	char *text = NULL, *old = NULL;
	size_t old_len = 0;
	ssize_t n;
	int dfd, fd, r;

	memset(res, 0, sizeof(*res));
	r = creds_of_task(tid, &cr);
	if (r < 0) {
		replace_failed(res, r == -ESRCH ? ESRCH : EACCES);
		return;
	}
	creds_become(&cr, &saved);
	dfd = replace_dir_fd(dir);
	if (dfd < 0) {
		replace_failed(res, -dfd);
		goto out;
	}
	fd = replace_open_file(dfd, lock, &st);
	if (fd == -ENOENT || fd == -ENOTDIR) {
		replace_failed(res, -fd); /* what the kernel would have said */
		goto out;
	}
	if (fd == -ELOOP) {
		replace_bad(res, "it is a symbolic link");
		goto out;
	}
	if (fd == -EINVAL) {
		replace_bad(res, "it is not a regular file");
		goto out;
	}
	if (fd < 0) {
		replace_bad(res, "the supervisor cannot read it as the caller");
		goto out;
	}
	if (st.st_nlink != 1) {
		close(fd);
		replace_bad(res, "it has another name (a hard link)");
		goto out;
	}
	n = replace_read(fd, GITCONFIG_MAX, &text);
	close(fd);
	if (n < 0) {
		replace_bad(res, "the supervisor cannot read it as the caller");
		goto out;
	}
	if ((size_t)n > GITCONFIG_MAX) {
		replace_bad(res, "it is longer than the check reads (1 MiB)");
		goto out;
	}
	old = replace_old(dfd, target, &old_len);
	gitconfig_judge(text, (size_t)n, old, old_len, &res->check);
	if (res->check.outcome != GITCONFIG_CLEAN && !force) {
		res->outcome = REPLACE_REFUSED;
		goto out;
	}
	r = replace_put(dfd, temp, target, text, (size_t)n, st.st_mode);
	if (r < 0) {
		replace_failed(res, -r);
		goto out;
	}
	/* The lock goes as a rename would take it; a file put there since
	 * (by nothing the supervisor let through meanwhile) stays. */
	if (fstatat(dfd, lock, &now, AT_SYMLINK_NOFOLLOW) == 0 && now.st_dev == st.st_dev &&
	    now.st_ino == st.st_ino) {
		if (unlinkat(dfd, lock, 0) < 0)
			debug_msg("cannot remove %s/%s: %s", dir, lock, strerror(errno));
	}
	res->outcome = REPLACE_DONE;
out:
	if (dfd >= 0)
		close(dfd);
	creds_restore(&saved);
	free(text);
	free(old);
}
