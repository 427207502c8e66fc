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

void error_fmt(char *out, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out, size, fmt, ap);
	va_end(ap);
}
