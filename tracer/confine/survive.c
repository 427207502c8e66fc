/* What survives the session: a bounded set of changed paths (survive.h).
 * Writes outside ${ROOT} and the temp dirs are rare (caches, the odd
 * dotfile an audit run lets through), so a linear array of SURVIVE_MAX
 * entries is both the simplest and fast enough. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/xalloc.h"
#include "tracer/confine/survive.h"

static bool survive_beneath_or_at(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (n == 1 && dir[0] == '/')
		return true;
	return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == 0);
}

struct survive *survive_new(const char *const *exclude, size_t n)
{
	static const char *const always[] = { "/dev", "/proc" };
	struct survive *sv = xcalloc(1, sizeof(*sv));

	sv->exclude = xcalloc(n + 2, sizeof(char *));
	for (size_t i = 0; i < n + 2; i++) {
		const char *d = i < n ? exclude[i] : always[i - n];
		char *real;

		if (!d || d[0] != '/')
			continue;
		real = realpath(d, NULL);
		sv->exclude[sv->n_exclude++] = real ? real : xstrdup(d);
	}
	return sv;
}

static size_t survive_depth(const char *p)
{
	size_t d = 0;

	for (; *p; p++)
		d += *p == '/';
	return d;
}

/* Entries at the deepest level become their parent directory, then
 * duplicates and entries beneath a directory entry go. */
static void survive_collapse(struct survive *sv)
{
	size_t max = 0, w = 0;

	for (size_t i = 0; i < sv->n; i++) {
		size_t d = survive_depth(sv->v[i].path);

		if (d > max)
			max = d;
	}
	if (max <= 1)
		return;
	for (size_t i = 0; i < sv->n; i++) {
		char *p = sv->v[i].path, *slash;

		if (survive_depth(p) != max)
			continue;
		slash = strrchr(p, '/');
		if (slash == p)
			slash[1] = 0;
		else
			*slash = 0;
		sv->v[i].dir = true;
	}
	for (size_t i = 0; i < sv->n; i++) {
		bool drop = false;

		for (size_t j = 0; j < sv->n && !drop; j++) {
			if (i == j || !sv->v[j].path)
				continue;
			if (strcmp(sv->v[i].path, sv->v[j].path) == 0)
				drop = j < i || (sv->v[j].dir && !sv->v[i].dir);
			else if (sv->v[j].dir && survive_beneath_or_at(sv->v[i].path, sv->v[j].path))
				drop = true;
		}
		if (drop) {
			free(sv->v[i].path);
			sv->v[i].path = NULL;
		}
	}
	for (size_t i = 0; i < sv->n; i++)
		if (sv->v[i].path)
			sv->v[w++] = sv->v[i];
	sv->n = w;
	sv->collapsed = true;
}

static void survive_state_of(const char *path, struct survive_state *st)
{
	struct stat sb;

	memset(st, 0, sizeof(*st));
	if (lstat(path, &sb) < 0)
		return;
	*st = (struct survive_state){
		.exists = true, .mode = sb.st_mode, .dev = sb.st_dev, .ino = sb.st_ino,
		.uid = sb.st_uid, .gid = sb.st_gid, .size = sb.st_size,
		.mtime = sb.st_mtim, .ctime = sb.st_ctim,
	};
}

static bool survive_same_time(struct timespec a, struct timespec b)
{
	return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

static bool survive_changed(const struct survive_entry *e)
{
	struct survive_state now;
	const struct survive_state *b = &e->before;

	if (e->dir)
		return true;
	survive_state_of(e->path, &now);
	if (now.exists != b->exists)
		return true;
	if (!now.exists)
		return false;
	if (now.dev != b->dev || now.ino != b->ino || now.mode != b->mode ||
	    now.uid != b->uid || now.gid != b->gid)
		return true;
	if (S_ISDIR(now.mode))
		return false;
	return now.size != b->size || !survive_same_time(now.mtime, b->mtime) ||
	       !survive_same_time(now.ctime, b->ctime);
}

void survive_note(struct survive *sv, const char *path)
{
	if (!sv || !path || path[0] != '/')
		return;
	for (size_t i = 0; i < sv->n_exclude; i++)
		if (survive_beneath_or_at(path, sv->exclude[i]))
			return;
	sv->events++;
	for (size_t i = 0; i < sv->n; i++) {
		if (strcmp(sv->v[i].path, path) == 0)
			return;
		if (sv->v[i].dir && survive_beneath_or_at(path, sv->v[i].path))
			return;
	}
	while (sv->n >= SURVIVE_MAX) {
		size_t before = sv->n;

		survive_collapse(sv);
		if (sv->n == before)
			return; /* all at depth 1 and distinct: full, keep what we have */
		for (size_t i = 0; i < sv->n; i++)
			if (sv->v[i].dir && survive_beneath_or_at(path, sv->v[i].path))
				return;
	}
	sv->v[sv->n].path = xstrdup(path);
	sv->v[sv->n].dir = false;
	survive_state_of(path, &sv->v[sv->n].before);
	sv->n++;
}

static int survive_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char **survive_list(const struct survive *sv, size_t *n)
{
	char **out;
	size_t k = 0;

	*n = 0;
	if (!sv || !sv->n)
		return NULL;
	out = xcalloc(sv->n, sizeof(char *));
	for (size_t i = 0; i < sv->n; i++) {
		const char *p = sv->v[i].path;
		bool slash = sv->v[i].dir && strcmp(p, "/") != 0;

		if (!survive_changed(&sv->v[i]))
			continue;
		out[k++] = slash ? xasprintf("%s/", p) : xstrdup(p);
	}
	if (!k) {
		free(out);
		return NULL;
	}
	qsort(out, k, sizeof(char *), survive_cmp);
	*n = k;
	return out;
}

void survive_list_free(char **list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(list[i]);
	free(list);
}

bool survive_collapsed(const struct survive *sv)
{
	return sv && sv->collapsed;
}

void survive_free(struct survive *sv)
{
	if (!sv)
		return;
	for (size_t i = 0; i < sv->n; i++)
		free(sv->v[i].path);
	for (size_t i = 0; i < sv->n_exclude; i++)
		free(sv->exclude[i]);
	free(sv->exclude);
	free(sv);
}
