/* Denied files with other names (linked.h). */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/xalloc.h"
#include "tracer/confine/linked.h"

void linked_note(struct linked *l, const char *path, const struct stat *st)
{
	if (!S_ISREG(st->st_mode) || st->st_nlink < 2 || linked_find(l, st->st_dev, st->st_ino))
		return;
	if (l->n >= LINKED_MAX) {
		l->truncated = true;
		return;
	}
	l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	l->v[l->n++] = (struct linked_file){ st->st_dev, st->st_ino, xstrdup(path) };
}

static void linked_walk(struct linked *l, int dfd, const char *dir, unsigned depth)
{
	DIR *d = fdopendir(dfd);
	struct dirent *e;

	if (!d) {
		close(dfd);
		return;
	}
	while ((e = readdir(d))) {
		char path[PATH_MAX];
		struct stat st;
		int fd;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (++l->listed > LINKED_MAX_LISTED) {
			l->truncated = true;
			break;
		}
		if (e->d_type != DT_UNKNOWN && e->d_type != DT_REG && e->d_type != DT_DIR)
			continue;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    (size_t)snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= sizeof(path))
			continue;
		if (S_ISREG(st.st_mode)) {
			linked_note(l, path, &st);
		} else if (S_ISDIR(st.st_mode)) {
			if (depth + 1 >= LINKED_MAX_DEPTH) {
				l->truncated = true;
				continue;
			}
			fd = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (fd >= 0)
				linked_walk(l, fd, path, depth + 1);
		}
	}
	closedir(d);
}

void linked_note_tree(struct linked *l, const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd >= 0)
		linked_walk(l, fd, dir, 0);
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
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].path);
	free(l->v);
	memset(l, 0, sizeof(*l));
}
