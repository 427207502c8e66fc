/* Protected names that are symbolic links below a glob (linkscan.h). */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rules/linkscan.h"
#include "rules/rules.h"

/* A name no one gives a file: "PATTERN matches everything beneath". */
#define LINKSCAN_PROBE "agenttrace-linkscan-probe"

struct scan {
	const char *pattern;
	const char *const *excluded;
	size_t n_excluded;
	const struct linkscan_trees *trees;
	unsigned max_depth;
	unsigned listed, *budget;
	linkscan_found found;
	void *arg;
	bool ok;
};

/* Whether directory DIR (LEN bytes) is PATH or above it. */
static bool scan_above(const char *dir, size_t len, const char *path)
{
	if (!path || path[0] != '/')
		return false;
	if (len == 1)
		return true;
	return strncmp(path, dir, len) == 0 && (path[len] == '\0' || path[len] == '/');
}

/* Whether directory DIR is one of the skipped trees or above one. */
static bool scan_skipped(const struct scan *sc, const char *dir, size_t len)
{
	for (size_t i = 0; i < sc->trees->n_skip; i++)
		if (scan_above(dir, len, sc->trees->skip[i]))
			return true;
	return false;
}

/* Whether directory DIR is strictly below one of the trees walked. */
static bool scan_within(const struct scan *sc, const char *dir, size_t len)
{
	for (size_t i = 0; i < sc->trees->n_within; i++) {
		const char *w = sc->trees->within[i];
		size_t wl = w ? strlen(w) : 0;

		if (wl > 1 && w[0] == '/' && len > wl && strncmp(dir, w, wl) == 0 && dir[wl] == '/')
			return true;
	}
	return false;
}

static bool scan_denied(const struct scan *sc, const char *name)
{
	if (!match_path(sc->pattern, name))
		return false;
	for (size_t i = 0; i < sc->n_excluded; i++)
		if (sc->excluded[i] && match_path(sc->excluded[i], name))
			return false;
	return true;
}

/* Whether the pattern would match every entry of directory NAME (LEN
 * bytes in a PATH_MAX buffer). */
static bool scan_whole(const struct scan *sc, char *name, size_t len)
{
	bool whole;

	if (len + sizeof("/" LINKSCAN_PROBE) > PATH_MAX)
		return false;
	memcpy(name + len, "/" LINKSCAN_PROBE, sizeof("/" LINKSCAN_PROBE));
	whole = scan_denied(sc, name);
	name[len] = '\0';
	return whole;
}

/* The entries of directory DFD, named NAME (LEN bytes, PATH_MAX buffer),
 * DEPTH levels below the pattern's directory; LINKED: a link was
 * followed on the way, so every name below differs from its object's. */
static void scan_dir(struct scan *sc, int dfd, char *name, size_t len, unsigned depth, bool linked)
{
	DIR *d = fdopendir(dfd);
	struct dirent *e;

	if (!d) {
		close(dfd);
		return;
	}
	while (sc->ok && (e = readdir(d))) {
		size_t el = strlen(e->d_name);
		struct stat st;
		bool link, dir;
		int fd;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (++sc->listed > LINKSCAN_MAX_ENTRIES || *sc->budget == 0 || len + 1 + el >= PATH_MAX)
			break;
		--*sc->budget;
		if (!linked && e->d_type != DT_UNKNOWN && e->d_type != DT_LNK && e->d_type != DT_DIR)
			continue; /* a file by its own name: the rule judges it */
		name[len] = '/';
		memcpy(name + len + 1, e->d_name, el + 1);
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			goto next;
		link = S_ISLNK(st.st_mode);
		if (link && fstatat(dirfd(d), e->d_name, &st, 0) < 0)
			goto next; /* dangling: there is nothing to reach */
		dir = S_ISDIR(st.st_mode);
		if ((link || linked) && scan_denied(sc, name)) {
			char real[PATH_MAX];
			bool whole = dir && scan_whole(sc, name, len + 1 + el);

			if (realpath(name, real) && strcmp(real, name) != 0) {
				/* A link to the project, home or temp tree, or
				 * above: a rule over all of it is no one's intent. */
				if (whole && scan_skipped(sc, real, strlen(real)))
					goto next;
				sc->ok = sc->found(sc->arg, name, real, whole);
				if (whole || !dir)
					goto next;
			}
		}
		if (dir && depth + 1 < sc->max_depth) {
			fd = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (fd >= 0)
				scan_dir(sc, fd, name, len + 1 + el, depth + 1, linked || link);
		}
next:
		name[len] = '\0';
	}
	closedir(d);
}

bool linkscan(const char *pattern, const char *const *excluded, size_t n_excluded,
	      const struct linkscan_trees *trees, bool linked, unsigned *budget, linkscan_found found,
	      void *arg)
{
	struct scan sc = { .pattern = pattern, .excluded = excluded, .n_excluded = n_excluded,
			   .budget = budget, .found = found, .arg = arg, .ok = true };
	size_t lit = strcspn(pattern, "*?[\\"), dir = lit;
	char name[PATH_MAX];
	int fd;

	if (pattern[0] != '/' || !pattern[lit])
		return true;
	while (dir > 0 && pattern[dir - 1] != '/')
		dir--;
	if (dir <= 1 || dir - 1 >= sizeof(name))
		return true;
	dir--; /* the directory, without its '/' */
	sc.trees = trees;
	if ((!linked && !scan_within(&sc, pattern, dir)) || scan_skipped(&sc, pattern, dir))
		return true;
	if (strstr(pattern + dir, "**")) {
		sc.max_depth = LINKSCAN_MAX_DEPTH;
	} else {
		for (const char *p = pattern + dir; *p; p++)
			sc.max_depth += *p == '/';
	}
	memcpy(name, pattern, dir);
	name[dir] = '\0';
	/* The directory by its own name: when it is a link, the loader's
	 * twin for where it leads is walked instead. */
	fd = open(name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return true;
	scan_dir(&sc, fd, name, dir, 0, false);
	return sc.ok;
}
