/* Snapshots of the project's dependency files and their diff
 * (tracer/deps/snapshot.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/sha256.h"
#include "lib/readfile.h"
#include "lib/xalloc.h"
#include "tracer/deps/snapshot.h"

struct walk {
	struct depsnap *s;
	const struct depsnap *prev;
	size_t cap;
	size_t entries;
	size_t kept;                /* bytes kept for a later parse */
};

/* Directories that hold installed packages, history or caches, not the
 * project's manifests (a virtual environment and a cache dir are told by
 * the files that mark them, whatever their names). */
static bool skipped_dir(const char *name)
{
	static const char *const names[] = { "node_modules", ".git", ".hg", ".svn", ".venv",
					     "__pycache__", ".tox", ".nox", ".mypy_cache",
					     ".pytest_cache", "site-packages", "vendor" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(name, names[i]) == 0)
			return true;
	return false;
}

static bool marked_dir(int dir)
{
	return faccessat(dir, "pyvenv.cfg", F_OK, AT_SYMLINK_NOFOLLOW) == 0 ||
	       faccessat(dir, "CACHEDIR.TAG", F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

/* Whether PREV has REL of format F with content SHA256: a file the
 * session left as it found it, whose packages need no second parse (a
 * big lockfile's parse is most of a look's cost). */
static bool unchanged(const struct depsnap *prev, const char *rel, enum depfile_format f,
		      const char *sha256)
{
	size_t lo = 0, hi = prev ? prev->n : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(prev->v[mid].rel, rel);

		if (c == 0)
			return prev->v[mid].format == f && strcmp(prev->v[mid].sha256, sha256) == 0;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* A look that failed for want of a resource (descriptors, memory), or
 * was refused: what was not seen is not "removed", the snapshot is
 * incomplete.  A name that is gone or is no directory is an answer. */
static void snap_failed(struct walk *w)
{
	if (errno != ENOENT && errno != ENOTDIR && errno != ELOOP)
		w->s->truncated = true;
}

static void snap_file(struct walk *w, int dir, const char *name, const char *rel,
		      enum depfile_format f)
{
	int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	struct depsnap_file *x;
	struct stat st;
	char *text;
	size_t len;
	int rc;

	if (fd < 0) {
		snap_failed(w);
		return;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return;
	}
	if (w->s->n == DEPSNAP_FILES) {
		w->s->truncated = true;
		close(fd);
		return;
	}
	if (w->s->n == w->cap) {
		w->cap = w->cap ? w->cap * 2 : 16;
		w->s->v = xrealloc(w->s->v, w->cap * sizeof(*w->s->v));
	}
	x = &w->s->v[w->s->n++];
	memset(x, 0, sizeof(*x));
	x->rel = xstrdup(rel);
	x->format = f;
	x->ino = st.st_ino;
	x->size = st.st_size;
	x->ctime = st.st_ctim;
	rc = readfile_fd(fd, DEPFILE_MAX_BYTES, &text, &len, NULL);
	if (rc == -EFBIG) {
		x->parse_rc = -EFBIG;
	} else if (rc < 0) {
		x->parse_rc = -EIO;
	} else {
		struct sha256 h;

		sha256_init(&h);
		sha256_update(&h, text, len);
		sha256_hex(&h, x->sha256);
		if (unchanged(w->prev, rel, f, x->sha256)) {
			x->parse_rc = 0;
		} else if (!w->prev && len <= DEPSNAP_KEEP_BYTES - w->kept) {
			x->parse_rc = DEPSNAP_PENDING;
			x->text = text;
			x->len = len;
			w->kept += len;
			text = NULL;
		} else {
			x->parse_rc = depfile_parse(f, text, len, &x->deps);
		}
		free(text);
	}
	close(fd);
}

static void walk_dir(struct walk *w, int dir, const char *prefix, unsigned depth)
{
	int fd = dup(dir);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;

	if (!d) {
		snap_failed(w);
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(d))) {
		const char *name = e->d_name;
		unsigned char type = e->d_type;
		enum depfile_format f;
		char rel[4096];

		if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
			continue;
		if (++w->entries > DEPSNAP_ENTRIES) {
			w->s->truncated = true;
			break;
		}
		if (type == DT_UNKNOWN) {
			struct stat st;

			if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
				continue;
			type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_LNK;
		}
		if ((size_t)snprintf(rel, sizeof(rel), "%s%s%s", prefix, *prefix ? "/" : "",
				     name) >= sizeof(rel))
			continue;
		if (type == DT_REG && (f = depfile_format_of(name)) != DEPFILE_NONE) {
			snap_file(w, dir, name, rel, f);
		} else if (type == DT_DIR && strcmp(name, "node_modules") == 0) {
			/* Not walked, but what it holds is in its hidden lockfile. */
			int sub = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			char hidden[4096 + 32];

			if (sub < 0) {
				snap_failed(w);
				continue;
			}
			snprintf(hidden, sizeof(hidden), "%s/.package-lock.json", rel);
			snap_file(w, sub, ".package-lock.json", hidden, DEPFILE_NPM_HIDDEN);
			close(sub);
		} else if (type == DT_DIR && depth < DEPSNAP_DEPTH && !skipped_dir(name)) {
			int sub = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (sub < 0) {
				snap_failed(w);
				continue;
			}
			if (!marked_dir(sub))
				walk_dir(w, sub, rel, depth + 1);
			close(sub);
		}
	}
	closedir(d);
}

static int snap_cmp(const void *a, const void *b)
{
	return strcmp(((const struct depsnap_file *)a)->rel, ((const struct depsnap_file *)b)->rel);
}

void depsnap_take(struct depsnap *s, const char *root, const struct depsnap *prev)
{
	struct walk w = { .s = s, .prev = prev };
	int fd;

	memset(s, 0, sizeof(*s));
	fd = root ? open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	if (fd < 0) {
		s->truncated = root && errno != ENOENT && errno != ENOTDIR;
		return;
	}
	s->root = xstrdup(root);
	walk_dir(&w, fd, "", 0);
	close(fd);
	if (s->n)
		qsort(s->v, s->n, sizeof(*s->v), snap_cmp);
}

void depsnap_free(struct depsnap *s)
{
	for (size_t i = 0; s && i < s->n; i++) {
		free(s->v[i].rel);
		free(s->v[i].text);
		deplist_free(&s->v[i].deps);
	}
	if (s) {
		free(s->v);
		free(s->root);
		memset(s, 0, sizeof(*s));
	}
}

static bool same_file(const struct depsnap_file *a, const struct depsnap_file *b)
{
	if (a->format != b->format)
		return false;
	if (a->sha256[0] && b->sha256[0])
		return strcmp(a->sha256, b->sha256) == 0;
	/* Too big to read: the same inode, size and change time. */
	return !a->sha256[0] && !b->sha256[0] && a->ino == b->ino && a->size == b->size &&
	       a->ctime.tv_sec == b->ctime.tv_sec && a->ctime.tv_nsec == b->ctime.tv_nsec;
}

static const struct depsnap_file *snap_find(const struct depsnap *s, const char *rel)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(s->v[mid].rel, rel);

		if (c == 0)
			return &s->v[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

void depsnap_settle(struct depsnap *before, const struct depsnap *after)
{
	for (size_t i = 0; i < before->n; i++) {
		struct depsnap_file *x = &before->v[i];
		const struct depsnap_file *y = snap_find(after, x->rel);

		if (y && same_file(x, y))
			x->same_at_end = true;
		else if (x->parse_rc == DEPSNAP_PENDING)
			x->parse_rc = depfile_parse(x->format, x->text, x->len, &x->deps);
		free(x->text);
		x->text = NULL;
		x->len = 0;
	}
}

static void change_push(struct depsnap_changes *c, size_t *cap, const struct depsnap_file *a,
			const struct depsnap_file *b)
{
	struct depsnap_change *x;
	const struct depsnap_file *any = a ? a : b;

	if (c->n == *cap) {
		*cap = *cap ? *cap * 2 : 8;
		c->v = xrealloc(c->v, *cap * sizeof(*c->v));
	}
	x = &c->v[c->n++];
	memset(x, 0, sizeof(*x));
	x->rel = any->rel;
	x->format = any->format;
	x->status = !a ? "added" : !b ? "removed" : "changed";
	x->parsed = (!a || a->parse_rc == 0) && (!b || b->parse_rc == 0);
	if (x->parsed) {
		depdiff_make(a ? &a->deps : NULL, b ? &b->deps : NULL, &x->diff);
		c->added += x->diff.added;
		c->removed += x->diff.removed;
		c->changed += x->diff.changed;
	}
}

void depsnap_compare(const struct depsnap *before, const struct depsnap *after,
		     struct depsnap_changes *c)
{
	size_t i = 0, j = 0, cap = 0;

	memset(c, 0, sizeof(*c));
	c->root = after->root ? after->root : before->root;
	c->truncated = before->truncated || after->truncated;
	while (i < before->n || j < after->n) {
		int cmp = i == before->n ? 1 : j == after->n ? -1 :
			  strcmp(before->v[i].rel, after->v[j].rel);

		/* npm's hidden lockfiles are what was installed (installed.h),
		 * no manifest of the project. */
		if (cmp <= 0 && before->v[i].format == DEPFILE_NPM_HIDDEN) {
			i += 1;
			j += cmp == 0;
			continue;
		}
		if (cmp > 0 && after->v[j].format == DEPFILE_NPM_HIDDEN) {
			j++;
			continue;
		}
		if (cmp < 0) {
			/* What an incomplete walk did not see at the end is
			 * not known to be gone. */
			if (after->truncated)
				i++;
			else
				change_push(c, &cap, &before->v[i++], NULL);
		} else if (cmp > 0) {
			change_push(c, &cap, NULL, &after->v[j++]);
		} else {
			if (!same_file(&before->v[i], &after->v[j]))
				change_push(c, &cap, &before->v[i], &after->v[j]);
			i++;
			j++;
		}
	}
}

void depsnap_changes_free(struct depsnap_changes *c)
{
	for (size_t i = 0; c && i < c->n; i++)
		depdiff_free(&c->v[i].diff);
	if (c) {
		free(c->v);
		memset(c, 0, sizeof(*c));
	}
}
