#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hash.h"
#include "rules/jsonpos.h"

/* jansson refuses nesting deeper than 2048; stop well before the stack
 * would matter even if it ever accepted more. */
#define SCAN_MAX_NESTING 4096

struct scan {
	const char *s;
	size_t len, i;
	int line, col;
	struct jsonpos *ix;
	char *path;      /* the key path of the value being scanned */
	size_t path_len, path_cap;
	char *key;       /* the decoded key just read */
	size_t key_len, key_cap;
};

static int scan_peek(const struct scan *sc)
{
	return sc->i < sc->len ? (unsigned char)sc->s[sc->i] : -1;
}

/* Columns count characters, not bytes: UTF-8 continuation bytes do not
 * move the column, as in jansson's own error positions. */
static void scan_next(struct scan *sc)
{
	unsigned char c;

	if (sc->i >= sc->len)
		return;
	c = (unsigned char)sc->s[sc->i++];
	if (c == '\n') {
		sc->line++;
		sc->col = 1;
	} else if ((c & 0xC0) != 0x80) {
		sc->col++;
	}
}

static void scan_ws(struct scan *sc)
{
	while (sc->i < sc->len) {
		char c = sc->s[sc->i];

		if (c == ' ' || c == '\t' || c == '\r') {
			sc->col++;
		} else if (c == '\n') {
			sc->line++;
			sc->col = 1;
		} else {
			break;
		}
		sc->i++;
	}
}

static int buf_reserve(char **buf, size_t *cap, size_t need)
{
	size_t ncap;
	char *nb;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : 64;
	while (ncap < need)
		ncap *= 2;
	nb = realloc(*buf, ncap);
	if (!nb)
		return -1;
	*buf = nb;
	*cap = ncap;
	return 0;
}

static inline int buf_put(char **buf, size_t *len, size_t *cap, const char *p, size_t n)
{
	if (*len + n + 1 > *cap && buf_reserve(buf, cap, *len + n + 1) < 0)
		return -1;
	memcpy(*buf + *len, p, n);
	*len += n;
	(*buf)[*len] = '\0';
	return 0;
}

static uint32_t kp_hash(const char *s, size_t n)
{
	return (uint32_t)hash_fnv1a(s, n);
}

static int scan_record(struct scan *sc, int line, int col, int key_line, int key_col)
{
	struct jsonpos *ix = sc->ix;
	struct jsonpos_entry *e;
	/* A key with an escaped NUL ends the path there, as a C string. */
	size_t n = strlen(sc->path);

	if (ix->n == ix->cap) {
		size_t ncap = ix->cap ? ix->cap * 2 : 64;
		struct jsonpos_entry *nv = realloc(ix->v, ncap * sizeof(*nv));

		if (!nv)
			return -1;
		ix->v = nv;
		ix->cap = ncap;
	}
	e = &ix->v[ix->n];
	e->keypath = ix->arena_len;
	if (buf_put(&ix->arena, &ix->arena_len, &ix->arena_cap, sc->path, n) < 0)
		return -1;
	ix->arena_len++; /* keep the NUL */
	e->hash = kp_hash(sc->path, n);
	e->line = line;
	e->col = col;
	e->key_line = key_line;
	e->key_col = key_col;
	ix->n++;
	return 0;
}

static void utf8_put(char *out, size_t *n, uint32_t cp)
{
	if (cp < 0x80) {
		out[(*n)++] = (char)cp;
	} else if (cp < 0x800) {
		out[(*n)++] = (char)(0xC0 | (cp >> 6));
		out[(*n)++] = (char)(0x80 | (cp & 0x3F));
	} else if (cp < 0x10000) {
		out[(*n)++] = (char)(0xE0 | (cp >> 12));
		out[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
		out[(*n)++] = (char)(0x80 | (cp & 0x3F));
	} else {
		out[(*n)++] = (char)(0xF0 | (cp >> 18));
		out[(*n)++] = (char)(0x80 | ((cp >> 12) & 0x3F));
		out[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
		out[(*n)++] = (char)(0x80 | (cp & 0x3F));
	}
}

static int hex4(const char *p, size_t avail, uint32_t *out)
{
	uint32_t v = 0;

	if (avail < 4)
		return -1;
	for (int k = 0; k < 4; k++) {
		char c = p[k];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (uint32_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (uint32_t)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (uint32_t)(c - 'A' + 10);
		else
			return -1;
	}
	*out = v;
	return 0;
}

/* A string at sc->i (the opening quote); decoded into sc->key when
 * decode is set, so that keys compare as jansson sees them. */
static int scan_string(struct scan *sc, int decode)
{
	sc->key_len = 0;
	if (decode && buf_put(&sc->key, &sc->key_len, &sc->key_cap, "", 0) < 0)
		return -1;
	scan_next(sc); /* '"' */
	for (;;) {
		int c = scan_peek(sc);
		char out[8];
		size_t n = 0;

		if (c < 0)
			return -1;
		if (c == '"') {
			scan_next(sc);
			return 0;
		}
		if (c != '\\') {
			/* A run of plain characters at once: jansson accepted
			 * the text, so it holds no raw control character (no
			 * newline) and the column moves by its lead bytes. */
			size_t start = sc->i, j = start;

			while (j < sc->len && sc->s[j] != '"' && sc->s[j] != '\\') {
				sc->col += ((unsigned char)sc->s[j] & 0xC0) != 0x80;
				if (sc->s[j] == '\n') { /* not JSON; count it as scan_next would */
					sc->line++;
					sc->col = 1;
				}
				j++;
			}
			sc->i = j;
			if (decode && buf_put(&sc->key, &sc->key_len, &sc->key_cap, sc->s + start,
					      j - start) < 0)
				return -1;
			continue;
		}
		scan_next(sc);
		c = scan_peek(sc);
		if (c < 0)
			return -1;
		if (c == 'u') {
			uint32_t cp, lo;

			scan_next(sc);
			if (hex4(sc->s + sc->i, sc->len - sc->i, &cp) < 0)
				return -1;
			for (int k = 0; k < 4; k++)
				scan_next(sc);
			if (cp >= 0xD800 && cp < 0xDC00 && sc->i + 6 <= sc->len &&
			    sc->s[sc->i] == '\\' && sc->s[sc->i + 1] == 'u' &&
			    hex4(sc->s + sc->i + 2, sc->len - sc->i - 2, &lo) == 0 &&
			    lo >= 0xDC00 && lo < 0xE000) {
				for (int k = 0; k < 6; k++)
					scan_next(sc);
				cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
			}
			utf8_put(out, &n, cp);
		} else {
			switch (c) {
			case 'b': out[n++] = '\b'; break;
			case 'f': out[n++] = '\f'; break;
			case 'n': out[n++] = '\n'; break;
			case 'r': out[n++] = '\r'; break;
			case 't': out[n++] = '\t'; break;
			default: out[n++] = (char)c; break;
			}
			scan_next(sc);
		}
		if (decode && buf_put(&sc->key, &sc->key_len, &sc->key_cap, out, n) < 0)
			return -1;
	}
}

static int scan_value(struct scan *sc, int depth, int key_line, int key_col);

/* "[INDEX]" without printf. */
static size_t index_text(char *out, size_t index)
{
	char digits[24];
	size_t n = 0, k = 0;

	do {
		digits[n++] = (char)('0' + index % 10);
		index /= 10;
	} while (index);
	out[k++] = '[';
	while (n)
		out[k++] = digits[--n];
	out[k++] = ']';
	return k;
}

static int scan_members(struct scan *sc, int depth, int object)
{
	size_t index = 0;
	size_t saved = sc->path_len;

	scan_next(sc); /* '{' or '[' */
	scan_ws(sc);
	if (scan_peek(sc) == (object ? '}' : ']')) {
		scan_next(sc);
		return 0;
	}
	for (;;) {
		int key_line, key_col, c;
		int indexed = depth < JSONPOS_MAX_DEPTH;

		scan_ws(sc);
		key_line = sc->line;
		key_col = sc->col;
		if (object) {
			if (scan_peek(sc) != '"' || scan_string(sc, indexed) < 0)
				return -1;
			scan_ws(sc);
			if (scan_peek(sc) != ':')
				return -1;
			scan_next(sc);
			if (indexed) {
				if (saved && buf_put(&sc->path, &sc->path_len, &sc->path_cap, ".", 1) < 0)
					return -1;
				if (buf_put(&sc->path, &sc->path_len, &sc->path_cap, sc->key, sc->key_len) < 0)
					return -1;
			}
		} else if (indexed) {
			char num[32];
			size_t n = index_text(num, index);

			if (buf_put(&sc->path, &sc->path_len, &sc->path_cap, num, n) < 0)
				return -1;
		}
		scan_ws(sc);
		if (!object) {
			key_line = sc->line;
			key_col = sc->col;
		}
		if (scan_value(sc, depth + 1, key_line, key_col) < 0)
			return -1;
		sc->path_len = saved;
		sc->path[saved] = '\0';
		index++;
		scan_ws(sc);
		c = scan_peek(sc);
		if (c == ',') {
			scan_next(sc);
			continue;
		}
		if (c == (object ? '}' : ']')) {
			scan_next(sc);
			return 0;
		}
		return -1;
	}
}

static int scan_value(struct scan *sc, int depth, int key_line, int key_col)
{
	int c;

	if (depth > SCAN_MAX_NESTING)
		return -1;
	scan_ws(sc);
	if (depth <= JSONPOS_MAX_DEPTH &&
	    scan_record(sc, sc->line, sc->col, key_line ? key_line : sc->line,
			key_line ? key_col : sc->col) < 0)
		return -1;
	c = scan_peek(sc);
	if (c == '{' || c == '[')
		return scan_members(sc, depth, c == '{');
	if (c == '"')
		return scan_string(sc, 0);
	if (c < 0)
		return -1;
	/* A number, true, false or null: ASCII up to a delimiter. */
	while (sc->i < sc->len) {
		c = (unsigned char)sc->s[sc->i];
		if (c == ',' || c == ']' || c == '}' || c == ' ' || c == '\t' || c == '\r' ||
		    c == '\n')
			break;
		scan_next(sc);
	}
	return 0;
}

static const char *entry_path(const struct jsonpos *ix, const struct jsonpos_entry *e)
{
	return ix->arena + e->keypath;
}

static int entry_cmp(const void *a, const void *b, void *arena)
{
	const struct jsonpos_entry *x = a, *y = b;

	return strcmp((const char *)arena + x->keypath, (const char *)arena + y->keypath);
}

/* The hash table over the entries; a repeated key path switches the index
 * to a sorted array (see struct jsonpos). */
static int index_finish(struct jsonpos *ix)
{
	size_t mask;

	if (!ix->n)
		return 0;
	ix->n_slots = 64;
	while (ix->n_slots < ix->n * 2)
		ix->n_slots *= 2;
	ix->slots = calloc(ix->n_slots, sizeof(*ix->slots));
	if (!ix->slots) {
		ix->n_slots = 0;
		goto sorted;
	}
	mask = ix->n_slots - 1;
	for (size_t i = 0; i < ix->n; i++) {
		const struct jsonpos_entry *e = &ix->v[i];
		size_t s = e->hash & mask;

		for (; ix->slots[s]; s = (s + 1) & mask) {
			const struct jsonpos_entry *o = &ix->v[ix->slots[s] - 1];

			if (o->hash == e->hash && !strcmp(entry_path(ix, o), entry_path(ix, e)))
				goto sorted;
		}
		ix->slots[s] = (uint32_t)(i + 1);
	}
	return 0;
sorted:
	free(ix->slots);
	ix->slots = NULL;
	ix->n_slots = 0;
	ix->sorted = true;
	qsort_r(ix->v, ix->n, sizeof(*ix->v), entry_cmp, ix->arena);
	return 0;
}

int jsonpos_index(struct jsonpos *ix, const char *text, size_t len)
{
	struct scan sc = { .s = text, .len = len, .line = 1, .col = 1, .ix = ix };
	int rc;

	memset(ix, 0, sizeof(*ix));
	rc = buf_put(&sc.path, &sc.path_len, &sc.path_cap, "", 0);
	if (rc == 0)
		rc = scan_value(&sc, 0, 0, 0);
	free(sc.path);
	free(sc.key);
	index_finish(ix);
	return rc;
}

static int lookup_cmp(const void *key, const void *elem, void *arena)
{
	const struct jsonpos_entry *y = elem;

	return strcmp(key, (const char *)arena + y->keypath);
}

/* bsearch() with an argument, as glibc's bsearch probes: the same entry
 * among equal ones as the sorted index always found. */
static const struct jsonpos_entry *sorted_lookup(const struct jsonpos *ix, const char *keypath)
{
	size_t l = 0, u = ix->n;

	while (l < u) {
		size_t idx = (l + u) / 2;
		int c = lookup_cmp(keypath, &ix->v[idx], ix->arena);

		if (c < 0)
			u = idx;
		else if (c > 0)
			l = idx + 1;
		else
			return &ix->v[idx];
	}
	return NULL;
}

static const struct jsonpos_entry *jsonpos_lookup(const struct jsonpos *ix, const char *keypath)
{
	uint32_t h;
	size_t mask;

	if (!ix->n)
		return NULL;
	if (ix->sorted)
		return sorted_lookup(ix, keypath);
	h = kp_hash(keypath, strlen(keypath));
	mask = ix->n_slots - 1;
	for (size_t s = h & mask; ix->slots[s]; s = (s + 1) & mask) {
		const struct jsonpos_entry *e = &ix->v[ix->slots[s] - 1];

		if (e->hash == h && !strcmp(entry_path(ix, e), keypath))
			return e;
	}
	return NULL;
}

bool jsonpos_find(const struct jsonpos *ix, const char *keypath, bool want_key,
		  int *line, int *col)
{
	const struct jsonpos_entry *e = jsonpos_lookup(ix, keypath);
	char *parent;
	size_t n;

	if (e) {
		*line = want_key ? e->key_line : e->line;
		*col = want_key ? e->key_col : e->col;
		return true;
	}
	*line = 1;
	*col = 1;
	parent = strdup(keypath);
	if (!parent)
		return false;
	/* Fall back to the closest ancestor that the index holds. */
	while ((n = strlen(parent)) > 0) {
		char *cut = NULL;

		if (parent[n - 1] == ']')
			cut = strrchr(parent, '[');
		if (!cut)
			cut = strrchr(parent, '.');
		if (!cut)
			cut = parent;
		*cut = '\0';
		e = jsonpos_lookup(ix, parent);
		if (e) {
			*line = e->line;
			*col = e->col;
			break;
		}
	}
	free(parent);
	return false;
}

void jsonpos_free(struct jsonpos *ix)
{
	free(ix->v);
	free(ix->arena);
	free(ix->slots);
	memset(ix, 0, sizeof(*ix));
}
