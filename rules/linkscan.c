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

/* Where a link leads to the system's own files, read by every program
 * (a virtual environment's python, the CA bundle, /dev/null): no
 * credential kept elsewhere, and a twin there would refuse them to all. */
static const char *const linkscan_system[] = {
	"/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/boot",
	"/nix/store", "/gnu/store", "/snap", "/proc", "/sys", "/dev",
};

/* One directory to walk: its name, how deep, whether a link was
 * followed on the way (every name below then differs from its
 * object's), and the object a twin covers as a whole above it. */
struct scan_dir {
	char *name;
	char *covered; /* NULL: none */
	unsigned depth;
	bool linked;
};

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
	struct scan_dir *q; /* breadth first: the shallow names before a deep cache */
	size_t q_head, q_n, q_cap;
};

/* Whether PATH is DIR (LEN bytes) or beneath it; a LEN of 1 is "/". */
static bool scan_at_or_below(const char *path, const char *dir, size_t len)
{
	if (len == 1)
		return true;
	return strncmp(path, dir, len) == 0 && (path[len] == '\0' || path[len] == '/');
}

/* Whether directory DIR (LEN bytes) is one of the skipped trees or
 * above one. */
static bool scan_skipped(const struct scan *sc, const char *dir, size_t len)
{
	for (size_t i = 0; i < sc->trees->n_skip; i++) {
		const char *t = sc->trees->skip[i];

		if (t && t[0] == '/' && scan_at_or_below(t, dir, len))
			return true;
	}
	return false;
}

/* Whether directory DIR (LEN bytes) is strictly below one of the trees
 * walked. */
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

static bool scan_system(const char *real)
{
	for (size_t i = 0; i < sizeof(linkscan_system) / sizeof(linkscan_system[0]); i++)
		if (scan_at_or_below(real, linkscan_system[i], strlen(linkscan_system[i])))
			/* /dev/shm is a file system of files: secrets tools
			 * keep theirs there. */
			return !scan_at_or_below(real, "/dev/shm", 8) || strcmp(real, "/dev/shm") == 0;
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

/* Queues directory NAME; COVERED is copied.  False when memory ran out. */
static bool scan_push(struct scan *sc, const char *name, const char *covered, unsigned depth,
		      bool linked)
{
	struct scan_dir *d;

	if (sc->q_head + sc->q_n == sc->q_cap) {
		size_t cap = sc->q_cap ? 2 * sc->q_cap : 16;
		struct scan_dir *nq = realloc(sc->q, cap * sizeof(*nq));

		if (!nq)
			return false;
		sc->q = nq;
		sc->q_cap = cap;
	}
	d = &sc->q[sc->q_head + sc->q_n];
	d->name = strdup(name);
	d->covered = covered ? strdup(covered) : NULL;
	d->depth = depth;
	d->linked = linked;
	if (!d->name || (covered && !d->covered)) {
		free(d->name);
		free(d->covered);
		return false;
	}
	sc->q_n++;
	return true;
}

/* The entries of directory D (DFD open on it). */
static void scan_entries(struct scan *sc, const struct scan_dir *d, int dfd)
{
	DIR *dir = fdopendir(dfd);
	size_t len = strlen(d->name);
	char name[PATH_MAX];
	struct dirent *e;
	unsigned here = 0;

	if (!dir) {
		close(dfd);
		return;
	}
	memcpy(name, d->name, len + 1);
	while (sc->ok && here < LINKSCAN_MAX_DIR && (e = readdir(dir))) {
		size_t el = strlen(e->d_name);
		const char *covered = d->covered;
		char real[PATH_MAX];
		bool link, is_dir, has_real = false;
		struct stat st;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (++sc->listed > LINKSCAN_MAX_ENTRIES || *sc->budget == 0 || len + 1 + el >= PATH_MAX)
			break;
		--*sc->budget;
		here++;
		if (!d->linked && e->d_type != DT_UNKNOWN && e->d_type != DT_LNK && e->d_type != DT_DIR)
			continue; /* a file by its own name: the rule judges it */
		name[len] = '/';
		memcpy(name + len + 1, e->d_name, el + 1);
		if (fstatat(dirfd(dir), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		link = S_ISLNK(st.st_mode);
		if (link && fstatat(dirfd(dir), e->d_name, &st, 0) < 0)
			continue; /* dangling: there is nothing to reach */
		is_dir = S_ISDIR(st.st_mode);
		/* A program (a virtual environment's python, linked to the
		 * user's own build of it): no credential kept elsewhere, and
		 * a twin would refuse it to every session. */
		if (S_ISREG(st.st_mode) && (st.st_mode & 0111))
			continue;
		if (link || d->linked) {
			has_real = realpath(name, real) && strcmp(real, name) != 0;
			if (has_real && scan_system(real))
				continue;
		}
		if (has_real && scan_denied(sc, name) &&
		    !(covered && scan_at_or_below(real, covered, strlen(covered)))) {
			bool whole = is_dir && scan_whole(sc, name, len + 1 + el);

			/* A link to the project, home or temp tree, or above:
			 * a rule over all of it is no one's intent. */
			if (whole && scan_skipped(sc, real, strlen(real)))
				continue;
			sc->ok = sc->found(sc->arg, name, real, whole);
			if (whole)
				covered = real;
		}
		/* Below a directory covered as a whole, its own links still
		 * lead elsewhere (a stow-folded directory of links). */
		if (is_dir && d->depth + 1 < sc->max_depth &&
		    !scan_push(sc, name, covered, d->depth + 1, d->linked || link))
			sc->ok = false;
	}
	closedir(dir);
}

bool linkscan(const char *pattern, const char *const *excluded, size_t n_excluded,
	      const struct linkscan_trees *trees, bool linked, unsigned *budget, linkscan_found found,
	      void *arg)
{
	struct scan sc = { .pattern = pattern, .excluded = excluded, .n_excluded = n_excluded,
			   .trees = trees, .budget = budget, .found = found, .arg = arg, .ok = true };
	size_t lit = strcspn(pattern, "*?[\\"), dir = lit;
	char head[PATH_MAX];

	if (pattern[0] != '/' || !pattern[lit])
		return true;
	while (dir > 0 && pattern[dir - 1] != '/')
		dir--;
	if (dir <= 1 || dir - 1 >= sizeof(head))
		return true;
	dir--; /* the directory, without its '/' */
	if ((!linked && !scan_within(&sc, pattern, dir)) || scan_skipped(&sc, pattern, dir))
		return true;
	if (strstr(pattern + dir, "**")) {
		sc.max_depth = LINKSCAN_MAX_DEPTH;
	} else {
		for (const char *p = pattern + dir; *p; p++)
			sc.max_depth += *p == '/';
	}
	memcpy(head, pattern, dir);
	head[dir] = '\0';
	if (!scan_push(&sc, head, NULL, 0, false))
		return false;
	while (sc.ok && sc.q_n > 0) {
		/* A copy: a push may move the queue.  The queue keeps the
		 * strings. */
		struct scan_dir d = sc.q[sc.q_head];
		/* The directory by its own name: when the pattern's own is
		 * a link, the loader's twin for where it leads is walked
		 * instead.  Below it, links are followed. */
		int fd = open(d.name, O_RDONLY | O_DIRECTORY | O_CLOEXEC |
				      (d.depth == 0 ? O_NOFOLLOW : 0));

		if (fd >= 0 && sc.listed < LINKSCAN_MAX_ENTRIES && *sc.budget > 0)
			scan_entries(&sc, &d, fd);
		else if (fd >= 0)
			close(fd);
		sc.q_head++;
		sc.q_n--;
	}
	for (size_t i = 0; i < sc.q_head + sc.q_n; i++) {
		free(sc.q[i].name);
		free(sc.q[i].covered);
	}
	free(sc.q);
	return sc.ok;
}
