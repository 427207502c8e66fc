/* The TOML subset of dependency files (tracer/deps/depfile-toml.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tracer/deps/depfile-toml.h"

#define TOML_TEXT_MAX 1024

static void put(char *out, size_t size, size_t *w, char c)
{
	if (out && *w + 1 < size)
		out[(*w)++] = c;
}

/* A string at *P (on its opening quote) up to END: decoded into OUT (NULL:
 * only skipped), *P past the closing quote.  False when it does not end
 * (or a one-line string meets a newline). */
static bool scan_string(const char **p, const char *end, char *out, size_t size)
{
	const char *s = *p;
	char q = *s;
	bool multi = end - s >= 3 && s[1] == q && s[2] == q;
	size_t w = 0;

	s += multi ? 3 : 1;
	/* A newline right after the opening quotes is not part of the string. */
	if (multi && s < end && *s == '\n')
		s++;
	while (s < end) {
		if (*s == q && (!multi || (end - s >= 3 && s[1] == q && s[2] == q))) {
			*p = s + (multi ? 3 : 1);
			if (out && size)
				out[w] = 0;
			return true;
		}
		if (*s == '\n' && !multi)
			return false;
		if (*s == '\\' && q == '"') {
			if (++s == end)
				return false;
			switch (*s) {
			case 'n': put(out, size, &w, '\n'); break;
			case 't': put(out, size, &w, '\t'); break;
			case '"': put(out, size, &w, '"'); break;
			case '\\': put(out, size, &w, '\\'); break;
			default:  put(out, size, &w, '\\'); put(out, size, &w, *s); break;
			}
			s++;
			continue;
		}
		put(out, size, &w, *s++);
	}
	return false;
}

static const char *skip_blank(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

static const char *skip_line(const char *p, const char *end)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));

	return nl ? nl + 1 : end;
}

/* An array or inline table at *P: *P past its closing bracket. */
static bool scan_span(const char **p, const char *end)
{
	const char *s = *p;
	unsigned depth = 0;

	while (s < end) {
		switch (*s) {
		case '[':
		case '{':
			if (++depth > 64)
				return false;
			s++;
			break;
		case ']':
		case '}':
			s++;
			if (--depth == 0) {
				*p = s;
				return true;
			}
			break;
		case '"':
		case '\'':
			if (!scan_string(&s, end, NULL, 0))
				return false;
			break;
		case '#':
			s = skip_line(s, end);
			break;
		default:
			s++;
			break;
		}
	}
	return false;
}

/* A key or table name from [b, e): blanks and quotes dropped. */
static void name_of(const char *b, const char *e, char *out, size_t size)
{
	size_t w = 0;

	for (; b < e; b++)
		if (*b != ' ' && *b != '\t' && *b != '"' && *b != '\'')
			put(out, size, &w, *b);
	out[w] = 0;
}

/* A value at *P into V (TEXT its decoded string in BUF). */
static bool scan_value(const char **p, const char *end, struct toml_value *v, char *buf)
{
	const char *s = *p;

	memset(v, 0, sizeof(*v));
	if (s == end)
		return false;
	if (*s == '"' || *s == '\'') {
		v->type = TOML_STRING;
		v->text = buf;
		return scan_string(p, end, buf, TOML_TEXT_MAX);
	}
	if (*s == '[' || *s == '{') {
		v->type = *s == '[' ? TOML_ARRAY : TOML_INLINE_TABLE;
		v->span = s;
		if (!scan_span(p, end))
			return false;
		v->span_end = *p;
		return true;
	}
	v->type = TOML_OTHER;
	while (s < end && *s != '\n' && *s != '#')
		s++;
	*p = s;
	return true;
}

int toml_walk(const char *text, size_t len, toml_cb *cb, void *arg)
{
	const char *p = text, *end = text + len;
	char table[256] = "", key[256], buf[TOML_TEXT_MAX];

	while (p < end) {
		const char *b, *eq, *nl;
		struct toml_value v;

		p = skip_blank(p, end);
		if (p == end)
			break;
		if (*p == '\n' || *p == '\r' || *p == '#') {
			p = skip_line(p, end);
			continue;
		}
		nl = memchr(p, '\n', (size_t)(end - p));
		nl = nl ? nl : end;
		if (*p == '[') {
			bool array = p + 1 < nl && p[1] == '[';
			const char *close;

			b = p + (array ? 2 : 1);
			close = memchr(b, ']', (size_t)(nl - b));
			if (!close || (array && (close + 1 >= nl || close[1] != ']')))
				return -EINVAL;
			name_of(b, close, table, sizeof(table));
			cb(arg, table, array, NULL, NULL);
			p = skip_line(close, end);
			continue;
		}
		/* key = value; a quoted key may hold '=' */
		b = p;
		eq = p;
		while (eq < nl && *eq != '=') {
			if (*eq != '"' && *eq != '\'')
				eq++;
			else if (!scan_string(&eq, nl, NULL, 0))
				return -EINVAL;
		}
		if (eq >= nl)
			return -EINVAL;
		name_of(b, eq, key, sizeof(key));
		p = skip_blank(eq + 1, end);
		if (!scan_value(&p, end, &v, buf))
			return -EINVAL;
		cb(arg, table, false, key, &v);
		p = skip_line(p, end);
	}
	return 0;
}

bool toml_inline_get(const struct toml_value *v, const char *key, char *out, size_t size)
{
	const char *p, *end;
	char k[256], buf[TOML_TEXT_MAX];

	if (v->type != TOML_INLINE_TABLE)
		return false;
	p = v->span + 1;
	end = v->span_end - 1;
	while (p < end) {
		const char *b;
		struct toml_value x;

		while (p < end && (*p == ' ' || *p == '\t' || *p == ',' || *p == '\n' || *p == '\r'))
			p++;
		if (p >= end)
			break;
		b = p;
		while (p < end && *p != '=') {
			if (*p != '"' && *p != '\'')
				p++;
			else if (!scan_string(&p, end, NULL, 0))
				return false;
		}
		if (p >= end)
			return false;
		name_of(b, p, k, sizeof(k));
		p = skip_blank(p + 1, end);
		if (p >= end)
			return false;
		if (*p == '"' || *p == '\'' || *p == '[' || *p == '{') {
			if (!scan_value(&p, end, &x, buf))
				return false;
			if (x.type == TOML_STRING && strcmp(k, key) == 0) {
				snprintf(out, size, "%s", buf);
				return true;
			}
		} else {
			while (p < end && *p != ',')
				p++;
		}
	}
	return false;
}

bool toml_array_next_string(const struct toml_value *v, size_t *at, char *out, size_t size)
{
	const char *p, *end;

	if (v->type != TOML_ARRAY)
		return false;
	p = v->span + (*at ? *at : 1);
	end = v->span_end - 1;
	while (p < end) {
		if (*p == '"' || *p == '\'') {
			if (!scan_string(&p, end, out, size))
				return false;
			*at = (size_t)(p - v->span);
			return true;
		}
		if (*p == '[' || *p == '{') {
			if (!scan_span(&p, end))
				return false;
			continue;
		}
		if (*p == '#') {
			const char *nl = memchr(p, '\n', (size_t)(end - p));

			p = nl ? nl : end;
			continue;
		}
		p++;
	}
	*at = (size_t)(end - v->span);
	return false;
}
