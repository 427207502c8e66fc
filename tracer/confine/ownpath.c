/* The supervisor's own opens by a name it was given (ownpath.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/xalloc.h"
#include "tracer/confine/ownpath.h"
#include "tracer/syscall/probe.h"

#define OWNPATH_LINKS 40 /* the kernel's bound (fs/namei.c MAXSYMLINKS) */

/* The walk: DFD the directory reached, DONE its canonical name ("" for
 * "/"), REST the text still to walk. */
struct walk {
	int dfd;
	char done[PATH_MAX];
	char rest[2 * PATH_MAX + 2];
	unsigned links;
};

bool ownpath_cwd(char *buf, size_t size)
{
	const char *pwd = getenv("PWD");
	struct stat a, b;

	if (pwd && pwd[0] == '/' && strlen(pwd) < size && stat(pwd, &a) == 0 &&
	    stat(".", &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
		memcpy(buf, pwd, strlen(pwd) + 1);
		return true;
	}
	return getcwd(buf, size) != NULL;
}

/* A relative PATH is walked from the working directory's name as the
 * shell knows it (ownpath_cwd()): a cd through a planted link is walked
 * too. */
static int walk_start(struct walk *w, const char *path)
{
	size_t n = strlen(path), cl = 0;

	if (n == 0)
		return -ENOENT;
	if (path[0] != '/') {
		if (!ownpath_cwd(w->rest, sizeof(w->rest) - 1))
			return -errno;
		cl = strlen(w->rest);
		w->rest[cl++] = '/';
	}
	if (cl + n >= sizeof(w->rest))
		return -ENAMETOOLONG;
	memcpy(w->rest + cl, path, n + 1);
	w->links = 0;
	w->done[0] = '\0';
	w->dfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	return w->dfd < 0 ? -errno : 0;
}

/* DFD becomes FD, a subdirectory named NAME. */
static int walk_enter(struct walk *w, int fd, const char *name)
{
	size_t dl = strlen(w->done), nl = strlen(name);

	if (dl + 1 + nl >= sizeof(w->done)) {
		close(fd);
		return -ENAMETOOLONG;
	}
	w->done[dl] = '/';
	memcpy(w->done + dl + 1, name, nl + 1);
	close(w->dfd);
	w->dfd = fd;
	return 0;
}

static int walk_up(struct walk *w)
{
	int fd = openat(w->dfd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
	char *slash;

	if (fd < 0)
		return -errno;
	close(w->dfd);
	w->dfd = fd;
	slash = strrchr(w->done, '/');
	if (slash)
		*slash = '\0';
	return 0;
}

/* /proc's links (self, fd/N, cwd) jump to objects, not to their text:
 * the kernel follows them. */
static bool walk_in_proc(const struct walk *w)
{
	return strncmp(w->done, "/proc", 5) == 0 && (w->done[5] == '/' || w->done[5] == '\0');
}

/* NAME, a symbolic link in DFD: refused (-ELOOP, its name in LINK) where
 * a session could have made it.  Else followed: a link of /proc by the
 * kernel (into *FD when FINAL, the object itself: OPEN_FLAGS, MODE), any
 * other by putting its text in front of REST. */
static int walk_link(struct walk *w, const struct rules_policy *p, const char *name,
		     bool final, int open_flags, mode_t mode, int *fd, char *link,
		     size_t link_size)
{
	char full[PATH_MAX + NAME_MAX + 2], text[PATH_MAX];
	size_t tl, rl;
	ssize_t n;

	snprintf(full, sizeof(full), "%s/%s", w->done, name);
	if (++w->links > OWNPATH_LINKS)
		return -ELOOP;
	if (rules_write_admits(p, full)) {
		if (link && link_size)
			snprintf(link, link_size, "%s", full);
		return -ELOOP;
	}
	if (walk_in_proc(w)) {
		int nfd = openat(w->dfd, name, final ? open_flags | O_CLOEXEC :
					       O_PATH | O_DIRECTORY | O_CLOEXEC, mode);
		char *real;

		if (nfd < 0)
			return -errno;
		if (final) {
			*fd = nfd;
			return 0;
		}
		real = ownpath_name(nfd);
		if (!real || strlen(real) >= sizeof(w->done)) {
			free(real);
			close(nfd);
			return -ENOTDIR;
		}
		close(w->dfd);
		w->dfd = nfd;
		snprintf(w->done, sizeof(w->done), "%s", strcmp(real, "/") ? real : "");
		free(real);
		return 0;
	}
	n = readlinkat(w->dfd, name, text, sizeof(text) - 1);
	if (n < 0)
		return -errno;
	if (n == 0)
		return -ENOENT;
	text[n] = '\0';
	tl = (size_t)n;
	rl = strlen(w->rest);
	if (tl + 1 + rl >= sizeof(w->rest))
		return -ENAMETOOLONG;
	/* REST is empty or starts with its separator. */
	memmove(w->rest + tl, w->rest, rl + 1);
	memcpy(w->rest, text, tl);
	if (text[0] == '/') {
		int rfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);

		if (rfd < 0)
			return -errno;
		close(w->dfd);
		w->dfd = rfd;
		w->done[0] = '\0';
	}
	return 0;
}

/* Takes the next component of REST into NAME; *FINAL when nothing follows
 * it (not even a separator, which would make it a directory).  0 when
 * REST is used up, 1 for a name, -errno. */
static int walk_next(struct walk *w, char *name, bool *final)
{
	char *c = w->rest;
	size_t n;

	while (*c == '/')
		c++;
	n = strcspn(c, "/");
	if (n == 0)
		return 0;
	if (n > NAME_MAX)
		return -ENAMETOOLONG;
	memcpy(name, c, n);
	name[n] = '\0';
	c += n;
	*final = *c == '\0';
	memmove(w->rest, c, strlen(c) + 1);
	return 1;
}

/* The last component, NAME (no link followed): opened with FLAGS.  The
 * descriptor, -ELOOP for a link, or -errno. */
static int walk_last(struct walk *w, const char *name, int flags, mode_t mode)
{
	struct stat st;
	int fd = openat(w->dfd, name, flags | O_NOFOLLOW | O_CLOEXEC, mode);

	/* A link is ELOOP, or ENOTDIR with O_DIRECTORY. */
	if (fd < 0 && (errno == ELOOP || errno == ENOTDIR))
		return fstatat(w->dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode) ?
		       -ELOOP : -errno;
	if (fd < 0)
		return -errno;
	/* O_PATH | O_NOFOLLOW opens a link itself. */
	if ((flags & O_PATH) && fstat(fd, &st) == 0 && S_ISLNK(st.st_mode)) {
		close(fd);
		return -ELOOP;
	}
	return fd;
}

static bool ownpath_walk_only; /* test hook: ownpath_force_walk() */

void ownpath_force_walk(bool on)
{
	ownpath_walk_only = on;
}

/* MKDIR: the last component is made a directory when it is missing, and
 * opened O_RDONLY | O_DIRECTORY. */
static int ownpath_walk(const struct rules_policy *p, const char *path, int flags, mode_t mode,
			bool mkdir_it, char *link, size_t link_size)
{
	struct walk *w = xmalloc(sizeof(*w));
	char name[NAME_MAX + 1];
	int rc, fd = -1;

	if (link && link_size)
		link[0] = '\0';
	if (mkdir_it)
		flags = O_RDONLY | O_DIRECTORY;
	w->dfd = -1;
	rc = walk_start(w, path);
	/* No link anywhere on the way (most names): the kernel's own lookup,
	 * one call, gives what the walk would (a Landlock root walked one
	 * component at a time cost a start about 350 calls). */
	if (rc == 0 && !mkdir_it && !ownpath_walk_only && probe_openat2()) {
		struct open_how how = { .flags = (unsigned long long)(flags | O_CLOEXEC),
					.mode = (flags & O_CREAT) ? mode : 0,
					.resolve = RESOLVE_NO_SYMLINKS };
		long r = syscall(SYS_openat2, AT_FDCWD, w->rest, &how, sizeof(how));

		if (r >= 0 || errno != ELOOP) {
			close(w->dfd);
			free(w);
			return r >= 0 ? (int)r : -errno;
		}
	}
	while (rc == 0 && fd < 0) {
		struct stat st;
		bool final = false;
		int k = walk_next(w, name, &final);

		if (k < 0) {
			rc = k;
			break;
		}
		if (k == 0) {
			/* Nothing after a "/", "." or "..": that directory. */
			fd = openat(w->dfd, ".", flags | O_DIRECTORY | O_CLOEXEC, mode);
			if (fd < 0)
				rc = -errno;
			break;
		}
		if (strcmp(name, ".") == 0)
			continue;
		if (strcmp(name, "..") == 0) {
			rc = walk_up(w);
			continue;
		}
		if (final) {
			if (mkdir_it && mkdirat(w->dfd, name, mode) < 0 && errno != EEXIST) {
				rc = -errno;
				break;
			}
			rc = walk_last(w, name, flags, mode);
			if (rc >= 0) {
				fd = rc;
				rc = 0;
				break;
			}
			if (rc != -ELOOP)
				break;
			rc = 0;
		} else {
			int dfd = openat(w->dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);

			if (dfd < 0 || fstat(dfd, &st) < 0) {
				rc = -errno;
				if (dfd >= 0)
					close(dfd);
				break;
			}
			if (S_ISDIR(st.st_mode)) {
				rc = walk_enter(w, dfd, name);
				continue;
			}
			close(dfd);
			if (!S_ISLNK(st.st_mode)) {
				rc = -ENOTDIR;
				break;
			}
		}
		rc = walk_link(w, p, name, final, flags, mode, &fd, link, link_size);
	}
	if (w->dfd >= 0)
		close(w->dfd);
	free(w);
	return rc < 0 ? rc : fd;
}

int ownpath_open(const struct rules_policy *p, const char *path, int flags, mode_t mode,
		 char *link, size_t link_size)
{
	return ownpath_walk(p, path, flags, mode, false, link, link_size);
}

int ownpath_mkdir(const struct rules_policy *p, const char *path, mode_t mode, char *link,
		  size_t link_size)
{
	return ownpath_walk(p, path, 0, mode, true, link, link_size);
}

void ownpath_error(const char *what, const char *path, int err, const char *link)
{
	if (err == -ELOOP && link && link[0])
		error_msg("%s %s: %s is a symbolic link where the policy lets a session make "
			  "names; agenttrace does not follow it (an earlier session may have made "
			  "it): give the path it leads to, or remove it", what, path, link);
	else if (err == -EINVAL)
		error_msg("%s %s: not a regular file", what, path);
	else if (err == -ENXIO)
		error_msg("%s %s: a FIFO that no process reads", what, path);
	else
		error_msg("%s %s: %s", what, path, strerror(-err));
}

char *ownpath_name(int fd)
{
	char proc[40], buf[PATH_MAX];
	ssize_t n;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, buf, sizeof(buf) - 1);
	if (n <= 0 || buf[0] != '/')
		return NULL;
	buf[n] = '\0';
	return xstrdup(buf);
}
