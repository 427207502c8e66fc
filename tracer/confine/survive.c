/* What survives the session: a bounded set of changed paths (survive.h).
 * Writes outside ${ROOT} and the temp dirs are rare (caches, the odd
 * dotfile an audit run lets through), so a linear array of SURVIVE_MAX
 * entries is both the simplest and fast enough. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/hash.h"
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
	/* Pseudo files whose writes change no file: devices, the processes'
	 * own entries, and the kernel trace markers (a line in a trace
	 * buffer, which a JavaScriptCore runtime opens at every start). */
	static const char *const always[] = { "/dev", "/proc", "/sys/kernel/tracing/trace_marker",
					      "/sys/kernel/debug/tracing/trace_marker" };
	const size_t n_always = sizeof(always) / sizeof(always[0]);
	struct survive *sv = xcalloc(1, sizeof(*sv));

	sv->exclude = xcalloc(n + n_always, sizeof(char *));
	for (size_t i = 0; i < n + n_always; i++) {
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

bool survive_counts(const struct survive *sv, const char *path)
{
	if (!sv || !path || path[0] != '/')
		return false;
	for (size_t i = 0; i < sv->n_exclude; i++)
		if (survive_beneath_or_at(path, sv->exclude[i]))
			return false;
	return true;
}

void survive_note(struct survive *sv, const char *path)
{
	if (!survive_counts(sv, path))
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

/* Adds H (never 0) to A's set; true when it was new.  Kept at most half
 * full. */
static bool survive_set_add(struct survive_counted *a, uint64_t h)
{
	size_t i;

	if ((a->paths + 1) * 2 > a->cap) {
		struct survive_counted g = { .cap = a->cap ? a->cap * 2 : 64 };

		g.set = xcalloc(g.cap, sizeof(uint64_t));
		for (size_t k = 0; k < a->cap; k++)
			if (a->set[k])
				survive_set_add(&g, a->set[k]);
		free(a->set);
		a->set = g.set;
		a->cap = g.cap;
	}
	for (i = h & (a->cap - 1); a->set[i]; i = (i + 1) & (a->cap - 1))
		if (a->set[i] == h)
			return false;
	a->set[i] = h;
	a->paths++;
	return true;
}

void survive_note_counted(struct survive *sv, enum survive_family f, const char *name, size_t len,
			  const char *path)
{
	struct survive_counted *tab = sv->counted[f], *a = NULL;
	uint64_t h;

	if (!survive_counts(sv, path))
		return;
	for (size_t i = 0; i < sv->n_counted[f] && !a; i++)
		if (strlen(tab[i].name) == len && memcmp(tab[i].name, name, len) == 0)
			a = &tab[i];
	if (!a) {
		if (sv->n_counted[f] == SURVIVE_NAMES) {
			survive_note(sv, path);
			return;
		}
		a = &tab[sv->n_counted[f]++];
		a->name = xstrndup(name, len);
	}
	sv->events++;
	h = hash_fnv1a(path, strlen(path));
	survive_set_add(a, h ? h : 1);
}

size_t survive_n_counted(const struct survive *sv, enum survive_family f)
{
	return sv ? sv->n_counted[f] : 0;
}

const char *survive_counted_name(const struct survive *sv, enum survive_family f, size_t i)
{
	return sv->counted[f][i].name;
}

uint64_t survive_counted_paths(const struct survive *sv, enum survive_family f, size_t i)
{
	return sv->counted[f][i].paths;
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
	for (int f = 0; f < SURVIVE_FAMILIES; f++)
		for (size_t i = 0; i < sv->n_counted[f]; i++) {
			free(sv->counted[f][i].name);
			free(sv->counted[f][i].set);
		}
	free(sv);
}
