/* --private-tmp (privtmp.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/exitcode.h"
#include "lib/log.h"
#include "lib/xalloc.h"
#include "tracer/confine/privtmp.h"
#include "tracer/syscall/probe.h"

/* Deeper trees are left (and reported): every level holds a descriptor. */
#define PRIVTMP_MAX_DEPTH 256

int privtmp_create(struct session *s)
{
	const char *base = getenv("TMPDIR");
	struct privtmp *p;
	char *tmpl, *real, *slash, *parent;

	if (!base || base[0] != '/')
		base = "/tmp";
	/* Made as root, then maybe given to --user: not where a symbolic
	 * link an earlier session could have put in TMPDIR's place leads
	 * (the policy, which would tell such links apart, is not loaded
	 * yet: every link is refused). */
	if (probe_openat2()) {
		struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
					.resolve = RESOLVE_NO_SYMLINKS };
		long fd = syscall(SYS_openat2, AT_FDCWD, base, &how, sizeof(how));

		if (fd < 0 && errno == ELOOP) {
			error_msg("--private-tmp: TMPDIR %s leads through a symbolic link: give the "
				  "path it leads to", base);
			return AT_EXIT_FAILURE;
		}
		if (fd >= 0)
			close((int)fd);
	}
	tmpl = xasprintf("%s/agenttrace-tmp.XXXXXX", base);
	if (!mkdtemp(tmpl)) {
		error_msg("--private-tmp: cannot create %s: %s", tmpl,
			strerror(errno));
		free(tmpl);
		return AT_EXIT_FAILURE;
	}
	/* ${TMPDIR} must name the directory as the supervisor resolves
	 * paths: no symlink in it. */
	real = realpath(tmpl, NULL);
	p = xcalloc(1, sizeof(*p));
	p->dir = real ? real : xstrdup(tmpl);
	free(tmpl);
	slash = strrchr(p->dir, '/');
	p->name = xstrdup(slash + 1);
	parent = slash == p->dir ? xstrdup("/") : xstrndup(p->dir, (size_t)(slash - p->dir));
	p->parent_fd = open(parent, O_PATH | O_DIRECTORY | O_CLOEXEC);
	free(parent);
	s->privtmp = p;
	s->private_tmp = xstrdup(p->dir);
	if (p->parent_fd < 0) {
		error_msg("--private-tmp: cannot open the parent of %s: %s",
			p->dir, strerror(errno));
		return AT_EXIT_FAILURE;
	}
	if (s->switch_user && chown(p->dir, s->uid, s->gid) < 0) {
		error_msg("--private-tmp: cannot give %s to the user: %s",
			p->dir, strerror(errno));
		return AT_EXIT_FAILURE;
	}
	setenv("TMPDIR", p->dir, 1);
	return AT_GO_ON;
}

static bool privtmp_beneath(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return path && strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == 0);
}

/* mkdir -p of DIR (beneath /tmp, inside the new tmpfs); the leaf 0700 and
 * the user's, the levels above 0755 so that the user can reach it. */
static int privtmp_mkdirs(struct session *s, const char *dir)
{
	char *copy = xstrdup(dir);
	int ret = 0;

	for (char *q = copy + 1;; q++) {
		bool leaf = *q == 0;

		if (*q != '/' && !leaf)
			continue;
		*q = 0;
		if (mkdir(copy, leaf ? 0700 : 0755) < 0 && errno != EEXIST) {
			ret = -errno;
			break;
		}
		if (leaf) {
			if (s->switch_user && chown(copy, s->uid, s->gid) < 0)
				ret = -errno;
			break;
		}
		*q = '/';
	}
	free(copy);
	return ret;
}

void privtmp_isolate(struct session *s)
{
	struct privtmp *p = s->privtmp;
	char *tmp_real = realpath("/tmp", NULL);
	const char *why = NULL;
	int e, dir_fd = -1;

	if (!p)
		goto out;
	if (!tmp_real || strcmp(tmp_real, "/tmp") != 0)
		why = "/tmp is a symlink";
	else if (geteuid() != 0)
		why = "a private /tmp needs agenttrace to run as root";
	else if (privtmp_beneath(s->cwd, "/tmp") ||
		 (s->opt->root && privtmp_beneath(s->opt->root, "/tmp")))
		why = "the project lies under /tmp";
	if (why) {
		info_msg("private TMPDIR %s; /tmp stays shared (%s)", p->dir, why);
		goto out;
	}
	/* The TMPDIR itself stays the directory on disk (the preload's run
	 * dir and blob live in it): when it lies under /tmp it is bound again
	 * at the same path inside the private /tmp, from a descriptor taken
	 * before the tmpfs hides it. */
	if (privtmp_beneath(p->dir, "/tmp"))
		dir_fd = open(p->dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (privtmp_beneath(p->dir, "/tmp") && dir_fd < 0) {
		info_msg("private TMPDIR %s; /tmp stays shared (%s)", p->dir, strerror(errno));
		goto out;
	}
	if (unshare(CLONE_NEWNS) < 0) {
		info_msg("private TMPDIR %s; /tmp stays shared (cannot create a mount namespace: %s)",
			 p->dir, strerror(errno));
		goto out;
	}
	/* Nothing mounted here may propagate back to the host's namespace
	 * (systemd makes / shared). */
	if (mount("none", "/", "none", MS_REC | MS_SLAVE, NULL) < 0 ||
	    mount("agenttrace-tmp", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") < 0) {
		e = errno;
		/* The namespace is ours alone; a failed mount leaves the view
		 * as it was. */
		info_msg("private TMPDIR %s; /tmp stays shared (mount: %s)", p->dir, strerror(e));
		goto out;
	}
	p->private_ns = true;
	if (dir_fd >= 0) {
		char src[64];

		snprintf(src, sizeof(src), "/proc/self/fd/%d", dir_fd);
		e = privtmp_mkdirs(s, p->dir);
		if (e == 0 && mount(src, p->dir, "none", MS_BIND, NULL) < 0)
			e = -errno;
		if (e < 0)
			warn_msg("--private-tmp: cannot make %s visible in the private /tmp: %s",
				 p->dir, strerror(-e));
	}
	info_msg("private TMPDIR %s and a private /tmp (tmpfs, gone with the session)", p->dir);
out:
	if (dir_fd >= 0)
		close(dir_fd);
	free(tmp_real);
}

static int privtmp_rm_depth(int dfd, const char *name, dev_t dev, int depth);

/* Empties the directory open at FD.  Entries removed while readdir runs
 * may shift the others: passes repeat until one removes nothing. */
static int privtmp_empty(int fd, dev_t dev, int depth)
{
	int ret = 0;

	for (;;) {
		int dup_fd = dup(fd);
		DIR *d;
		struct dirent *de;
		unsigned removed = 0, failed = 0;

		if (dup_fd < 0)
			return -errno;
		d = fdopendir(dup_fd);
		if (!d) {
			ret = -errno;
			close(dup_fd);
			return ret;
		}
		rewinddir(d);
		while ((de = readdir(d))) {
			int e;

			if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
				continue;
			e = privtmp_rm_depth(fd, de->d_name, dev, depth + 1);
			if (e < 0) {
				failed++;
				if (!ret)
					ret = e;
			} else {
				removed++;
			}
		}
		closedir(d);
		if (!removed || !failed)
			return failed ? ret : 0;
		ret = 0;
	}
}

static int privtmp_rm_depth(int dfd, const char *name, dev_t dev, int depth)
{
	struct stat st;
	int fd, e;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(dfd, name, 0) < 0 && errno != ENOENT ? -errno : 0;
	if (st.st_dev != dev)
		return -EXDEV; /* a mount point: never descend into it */
	if (depth > PRIVTMP_MAX_DEPTH)
		return -ELOOP;
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == EACCES) {
		/* A directory the command made unreadable (not root). */
		if (fchmodat(dfd, name, 0700, 0) == 0)
			fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	/* Removing entries needs write and search permission here. */
	if ((st.st_mode & 0300) != 0300)
		(void)fchmod(fd, st.st_mode | 0700);
	e = privtmp_empty(fd, dev, depth);
	close(fd);
	if (unlinkat(dfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT && !e)
		e = -errno;
	return e;
}

int privtmp_rm_at(int dfd, const char *name)
{
	struct stat st;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	return privtmp_rm_depth(dfd, name, st.st_dev, 0);
}

int privtmp_remove(struct privtmp *p)
{
	int e = 0;

	if (!p)
		return 0;
	if (p->parent_fd >= 0) {
		e = privtmp_rm_at(p->parent_fd, p->name);
		if (e < 0)
			warn_msg("--private-tmp: could not remove all of %s: %s", p->dir,
				 strerror(-e));
		close(p->parent_fd);
	}
	free(p->dir);
	free(p->name);
	free(p);
	return e;
}
