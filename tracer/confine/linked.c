/* Denied files with other names (linked.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/fullio.h"
#include "lib/log.h"
#include "lib/testknob.h"
#include "lib/xalloc.h"
#include "tracer/confine/linked.h"

/* What the walker sends for each file it found: this, then LEN bytes of
 * the name.  Its last message has LEN 0 and carries the walk's counts. */
struct linked_wire {
	uint64_t dev;
	uint64_t ino;
	uint32_t len;
	uint32_t listed;
	uint8_t truncated;
};

static void linked_add(struct linked *l, dev_t dev, ino_t ino, const char *path)
{
	if (linked_find(l, dev, ino))
		return;
	if (l->n >= LINKED_MAX) {
		l->truncated = true;
		return;
	}
	l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	l->v[l->n++] = (struct linked_file){ dev, ino, xstrdup(path) };
}

void linked_note(struct linked *l, const char *path, const struct stat *st)
{
	if (S_ISREG(st->st_mode) && st->st_nlink >= 2)
		linked_add(l, st->st_dev, st->st_ino, path);
}

/* The directory entries of DFD, read with getdents64(2) itself: a
 * directory stream would cost an fstat and two fcntl per directory, and
 * the trees (all of /etc under the default policy) have hundreds.  Each
 * entry's type saves the lstat of a directory: it is opened refusing
 * symlinks and non-directories, as an lstat would have told. */
static void linked_walk(struct linked *l, int dfd, const char *dir, unsigned depth)
{
	char buf[16384];
	long got;

	while ((got = getdents64(dfd, buf, sizeof(buf))) > 0) {
		for (long at = 0; at < got;) {
			struct dirent64 *e = (struct dirent64 *)(buf + at);
			char path[PATH_MAX];
			struct stat st;
			bool is_dir = e->d_type == DT_DIR;
			int fd;

			at += e->d_reclen;
			if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
				continue;
			if (++l->listed > LINKED_MAX_LISTED) {
				l->truncated = true;
				goto out;
			}
			if (e->d_type != DT_UNKNOWN && e->d_type != DT_REG && !is_dir)
				continue;
			if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= sizeof(path))
				continue;
			if (!is_dir) {
				if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
					continue;
				if (S_ISREG(st.st_mode)) {
					linked_note(l, path, &st);
					continue;
				}
				if (!S_ISDIR(st.st_mode))
					continue;
			}
			if (depth + 1 >= LINKED_MAX_DEPTH) {
				l->truncated = true;
				continue;
			}
			fd = openat(dfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (fd >= 0)
				linked_walk(l, fd, path, depth + 1);
		}
	}
out:
	close(dfd);
}

static void linked_walk_trees(struct linked *l)
{
	for (size_t i = 0; i < l->n_trees; i++) {
		int fd = open(l->trees[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		if (fd >= 0)
			linked_walk(l, fd, l->trees[i], 0);
	}
}

void linked_want_tree(struct linked *l, const char *dir)
{
	for (size_t i = 0; i < l->n_trees; i++)
		if (strcmp(l->trees[i], dir) == 0)
			return;
	l->trees = xrealloc(l->trees, (l->n_trees + 1) * sizeof(*l->trees));
	l->trees[l->n_trees++] = xstrdup(dir);
}

/* The walker: a copy of the supervisor that walks the trees and sends
 * what it found.  Never returns. */
static void linked_walker(struct linked *l, int fd)
{
	struct linked_wire w = { 0 };
	bool ok = true;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	l->n = 0; /* the parent has the files noted so far */
	linked_walk_trees(l);
	for (size_t i = 0; ok && i < l->n; i++) {
		w = (struct linked_wire){ .dev = l->v[i].dev, .ino = l->v[i].ino,
					  .len = (uint32_t)strlen(l->v[i].path) };
		ok = write_full(fd, &w, sizeof(w)) == 0 && write_full(fd, l->v[i].path, w.len) == 0;
		if (test_knob_set("LINKED_WALKER_FAIL"))
			_exit(1); /* after the first file, before the end */
	}
	w = (struct linked_wire){ .listed = l->listed, .truncated = l->truncated };
	_exit(ok && write_full(fd, &w, sizeof(w)) == 0 ? 0 : 1);
}

void linked_start(struct linked *l)
{
	int fds[2];
	pid_t pid;

	if (!l->n_trees || l->walker > 0)
		return;
	if (pipe2(fds, O_CLOEXEC) < 0) {
		debug_msg("denied trees: no pipe (%s); walked here", strerror(errno));
		return;
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		linked_walker(l, fds[1]);
	}
	close(fds[1]);
	if (pid < 0) {
		debug_msg("denied trees: no walker (%s); walked here", strerror(errno));
		close(fds[0]);
		return;
	}
	l->walker = pid;
	l->walker_fd = fds[0];
}

/* The walker's findings into L; false when they did not all come. */
static bool linked_take(struct linked *l)
{
	struct linked_wire w;
	char path[PATH_MAX];

	for (;;) {
		if (read_full(l->walker_fd, &w, sizeof(w)) < 0)
			return false;
		if (w.len == 0) {
			l->listed += w.listed;
			l->truncated |= w.truncated != 0;
			return true;
		}
		if (w.len >= sizeof(path) || read_full(l->walker_fd, path, w.len) < 0)
			return false;
		path[w.len] = '\0';
		linked_add(l, (dev_t)w.dev, (ino_t)w.ino, path);
	}
}

static void linked_reap(struct linked *l, int sig, int *status)
{
	if (sig)
		kill(l->walker, sig);
	while (waitpid(l->walker, status, 0) < 0 && errno == EINTR)
		;
	close(l->walker_fd);
	l->walker = 0;
	l->walker_fd = -1;
}

void linked_finish(struct linked *l)
{
	int status = 0;

	if (l->finished)
		return;
	l->finished = true;
	if (l->walker > 0) {
		bool took = linked_take(l);

		linked_reap(l, took ? 0 : SIGKILL, &status);
		if (!took || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			/* Whatever it sent is kept; what it did not is looked
			 * for here, as if there had been no walker. */
			debug_msg("denied trees: the walker failed; walked here");
			linked_walk_trees(l);
		}
	} else {
		linked_walk_trees(l);
	}
	for (size_t i = 0; i < l->n_trees; i++)
		free(l->trees[i]);
	free(l->trees);
	l->trees = NULL;
	l->n_trees = 0;
	for (size_t i = 0; i < l->n; i++)
		info_msg("denied file with another name: %s (known by device and inode)",
			 l->v[i].path);
	if (l->truncated)
		info_msg("denied files with other names: the look reached its bounds "
			 "(doc/INTERNALS.md, \"Masks\")");
}

const struct linked_file *linked_find(const struct linked *l, dev_t dev, ino_t ino)
{
	for (size_t i = 0; l && i < l->n; i++)
		if (l->v[i].ino == ino && l->v[i].dev == dev)
			return &l->v[i];
	return NULL;
}

const struct linked_file *linked_other_name(const struct linked *l, const char *path)
{
	const struct linked_file *f;
	struct stat st;

	if (!linked_any(l) || !path || path[0] != '/' || lstat(path, &st) < 0 ||
	    !S_ISREG(st.st_mode) || st.st_nlink < 2)
		return NULL;
	f = linked_find(l, st.st_dev, st.st_ino);
	return f && strcmp(f->path, path) != 0 ? f : NULL;
}

void linked_free(struct linked *l)
{
	if (!l)
		return;
	if (l->walker > 0)
		linked_reap(l, SIGKILL, NULL);
	for (size_t i = 0; i < l->n_trees; i++)
		free(l->trees[i]);
	free(l->trees);
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].path);
	free(l->v);
	memset(l, 0, sizeof(*l));
}
