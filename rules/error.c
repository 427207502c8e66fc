#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules/load-internal.h"

static void copy_str(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src ? src : "");
}

void rules_error_format(const struct rules_error *e, char *buf, size_t size)
{
	char where[600];

	if (!size)
		return;
	/* line 0: not in a file's text (a missing file, a command-line rule). */
	if (e->line > 0)
		snprintf(where, sizeof(where), "%s:%d:%d", e->file, e->line, e->column);
	else
		snprintf(where, sizeof(where), "%s", e->file);
	if (e->keypath[0])
		snprintf(buf, size, "%s: %s: %s", where, e->keypath, e->text);
	else
		snprintf(buf, size, "%s: %s", where, e->text);
}

static void error_vset(struct rules_error *e, const char *file, int line, int col,
		       const char *keypath, const char *fmt, va_list ap)
	__attribute__((format(printf, 6, 0)));

static void error_vset(struct rules_error *e, const char *file, int line, int col,
		       const char *keypath, const char *fmt, va_list ap)
{
	memset(e, 0, sizeof(*e));
	copy_str(e->file, sizeof(e->file), file);
	e->line = line;
	e->column = col;
	copy_str(e->keypath, sizeof(e->keypath), keypath);
	vsnprintf(e->text, sizeof(e->text), fmt, ap);
}

void error_set(struct rules_error *e, const char *file, int line, int col,
	       const char *keypath, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	error_vset(e, file, line, col, keypath, fmt, ap);
	va_end(ap);
}

void error_push(struct load_errors *errs, const struct rules_error *e)
{
	if (errs->n >= LOAD_MAX_ERRORS) {
		errs->overflow = true;
		return;
	}
	if (errs->n == errs->cap) {
		size_t ncap = errs->cap ? errs->cap * 2 : 8;
		struct rules_error *nv = realloc(errs->v, ncap * sizeof(*nv));

		/* Out of memory: keep what we have; the caller still sees
		 * at least one error because the first push sized it. */
		if (!nv) {
			errs->overflow = true;
			return;
		}
		errs->v = nv;
		errs->cap = ncap;
	}
	errs->v[errs->n++] = *e;
}

void error_at(struct load_ctx *ctx, const struct load_layer *layer, const char *keypath,
	      bool want_key, const char *fmt, ...)
{
	struct rules_error e;
	int line = 0, col = 0;
	va_list ap;

	jsonpos_find(&layer->pos, keypath, want_key, &line, &col);
	va_start(ap, fmt);
	error_vset(&e, layer->display, line, col, keypath, fmt, ap);
	va_end(ap);
	error_push(&ctx->errs, &e);
}

void error_free(struct load_errors *errs)
{
	free(errs->v);
	memset(errs, 0, sizeof(*errs));
}

/* Appends of key paths for the load path, where every rule builds a few
 * and vsnprintf() was most of the cost.  Cut short like snprintf(). */
size_t error_kp_put(char *out, size_t size, size_t at, const char *s, size_t n)
{
	if (at + 1 >= size)
		return at;
	if (n > size - 1 - at)
		n = size - 1 - at;
	memcpy(out + at, s, n);
	out[at + n] = '\0';
	return at + n;
}

size_t error_kp_str(char *out, size_t size, size_t at, const char *s)
{
	return error_kp_put(out, size, at, s, strlen(s));
}

size_t error_kp_num(char *out, size_t size, size_t at, size_t num)
{
	char text[24];
	size_t n = sizeof(text);

	do {
		text[--n] = (char)('0' + num % 10);
		num /= 10;
	} while (num);
	return error_kp_put(out, size, at, text + n, sizeof(text) - n);
}

size_t error_kp_index(char *out, size_t size, size_t at, size_t index)
{
	return error_kp_put(out, size, error_kp_num(out, size, error_kp_put(out, size, at, "[", 1),
						    index), "]", 1);
}

void error_fmt(char *out, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out, size, fmt, ap);
	va_end(ap);
}
