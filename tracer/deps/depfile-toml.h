/* A reader of the TOML that dependency files use (pyproject.toml,
 * Cargo.toml, Cargo.lock, poetry.lock, uv.lock): tables, array tables,
 * "key = value" with strings (all four kinds), arrays and inline tables
 * (given raw, with helpers to pick strings out of them), other values
 * skipped.  Not a validator: what it cannot read makes the walk fail
 * (-EINVAL), never read past the text. */
#ifndef AGENTTRACE_DEPS_DEPFILE_TOML_H
#define AGENTTRACE_DEPS_DEPFILE_TOML_H

#include <stdbool.h>
#include <stddef.h>

enum toml_type {
	TOML_STRING,
	TOML_ARRAY,
	TOML_INLINE_TABLE,
	TOML_OTHER,             /* numbers, booleans, dates */
};

struct toml_value {
	enum toml_type type;
	const char *text;       /* TOML_STRING: decoded, NUL-terminated (cut at 1 KiB) */
	const char *span, *span_end; /* arrays, inline tables: the raw text, brackets included */
};

/* Called with KEY NULL at each table header (TABLE its dotted name,
 * quotes and blanks removed; ARRAY_TABLE for [[x]]), then for each key
 * of the table (a dotted key as written, "a.b"). */
typedef void toml_cb(void *arg, const char *table, bool array_table, const char *key,
		     const struct toml_value *v);

int toml_walk(const char *text, size_t len, toml_cb *cb, void *arg);

/* The string value of KEY in inline table V, into OUT (cut to SIZE). */
bool toml_inline_get(const struct toml_value *v, const char *key, char *out, size_t size);

/* The next string of array V from *AT (0 at first) into OUT; false at
 * its end.  Inline tables and nested arrays in it are skipped. */
bool toml_array_next_string(const struct toml_value *v, size_t *at, char *out, size_t size);

#endif
