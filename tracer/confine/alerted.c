/* Files the write alerts named, and how much they changed (alerted.h).
 * "Lines added" and "removed" compare the two versions as multisets of
 * lines: a line moved counts as neither, which is what a reviewer's
 * question ("how much text did the session put in there?") wants, and
 * takes a sort instead of a diff's quadratic table. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/readfile.h"
#include "lib/xalloc.h"
#include "tracer/confine/alerted.h"

struct alerted_line {
	const char *p;
	size_t n;
};

void alerted_note(struct alerted *a, const char *path, const char *rule)
{
	struct alerted_file *f;
	struct stat st;
	int rc;

	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->v[i].path, path) == 0)
			return;
	if (a->n == ALERTED_MAX) {
		a->other++;
		return;
	}
	f = &a->v[a->n++];
	memset(f, 0, sizeof(*f));
	f->path = xstrdup(path);
	f->rule = xstrdup(rule ? rule : "");
	rc = readfile_at(AT_FDCWD, path, ALERTED_BYTES, &f->before, &f->before_len, &st);
	f->existed = rc == 0 || (rc == -EFBIG && S_ISREG(st.st_mode));
	f->measured = rc == 0;
	f->bytes_before = rc == 0 ? f->before_len : f->existed ? (uint64_t)st.st_size : 0;
}

static int alerted_line_cmp(const void *x, const void *y)
{
	const struct alerted_line *a = x, *b = y;
	int c = memcmp(a->p, b->p, a->n < b->n ? a->n : b->n);

	return c ? c : (a->n > b->n) - (a->n < b->n);
}

/* TEXT's lines, sorted; *N of them (a last line without '\n' counts). */
static struct alerted_line *alerted_lines(const char *text, size_t len, size_t *n)
{
	struct alerted_line *v;
	size_t k = 0, cap = 1;

	for (size_t i = 0; i < len; i++)
		cap += text[i] == '\n';
	v = xmalloc(cap * sizeof(*v));
	for (const char *p = text, *end = text + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);

		v[k].p = p;
		v[k++].n = l;
		p += l + (nl != NULL);
	}
	qsort(v, k, sizeof(*v), alerted_line_cmp);
	*n = k;
	return v;
}

static void alerted_count(const char *before, size_t before_len, const char *after,
			  size_t after_len, uint64_t *added, uint64_t *removed)
{
	size_t nb, na, i = 0, j = 0, common = 0;
	struct alerted_line *b = alerted_lines(before, before_len, &nb);
	struct alerted_line *a = alerted_lines(after, after_len, &na);

	while (i < nb && j < na) {
		int c = alerted_line_cmp(&b[i], &a[j]);

		if (c == 0) {
			common++;
			i++;
			j++;
		} else if (c < 0) {
			i++;
		} else {
			j++;
		}
	}
	*added = na - common;
	*removed = nb - common;
	free(b);
	free(a);
}

size_t alerted_compare(const struct alerted *a, struct alerted_change *out)
{
	for (size_t i = 0; i < a->n; i++) {
		const struct alerted_file *f = &a->v[i];
		struct alerted_change *c = &out[i];
		char *now = NULL;
		size_t len = 0;
		struct stat st;
		int rc = readfile_at(AT_FDCWD, f->path, ALERTED_BYTES, &now, &len, &st);
		bool exists = rc == 0 || (rc == -EFBIG && S_ISREG(st.st_mode));

		memset(c, 0, sizeof(*c));
		c->path = f->path;
		c->rule = f->rule;
		c->bytes_before = f->bytes_before;
		c->bytes_after = rc == 0 ? len : exists ? (uint64_t)st.st_size : 0;
		c->measured = (f->measured || !f->existed) && (rc == 0 || !exists);
		if (c->measured)
			alerted_count(f->before ? f->before : "", f->before_len, now ? now : "", len,
				      &c->lines_added, &c->lines_removed);
		if (!f->existed)
			c->status = exists ? "created" : "unchanged";
		else if (!exists)
			c->status = "removed";
		else if (c->measured && f->before_len == len && memcmp(f->before, now, len) == 0)
			c->status = "unchanged";
		else /* past the bound, not compared: said changed */
			c->status = "changed";
		free(now);
	}
	return a->n;
}

void alerted_free(struct alerted *a)
{
	for (size_t i = 0; i < a->n; i++) {
		free(a->v[i].path);
		free(a->v[i].rule);
		free(a->v[i].before);
	}
	memset(a, 0, sizeof(*a));
}
