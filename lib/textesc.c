/* Untrusted bytes made safe for a line a human reads (lib/textesc.h). */
#include <stdbool.h>
#include <string.h>

#include "lib/textesc.h"
#include "lib/utf8.h"

/* Is the valid UTF-8 sequence P (N bytes) one of the code points shown
 * escaped? */
static bool textesc_hidden(const unsigned char *p, size_t n, unsigned flags)
{
	if (n == 1)
		return p[0] < 0x20 ? !(p[0] == '\t' && (flags & TEXTESC_KEEP_TAB)) : p[0] == 0x7f;
	if (n == 2)
		return p[0] == 0xc2 && p[1] < 0xa0; /* U+0080-U+009F */
	if (n == 3 && p[0] == 0xe2 && p[1] == 0x80)
		return p[2] >= 0xa8 && p[2] <= 0xae; /* U+2028-U+202E */
	if (n == 3 && p[0] == 0xe2 && p[1] == 0x81)
		return p[2] >= 0xa6 && p[2] <= 0xa9; /* U+2066-U+2069 */
	return false;
}

static const char textesc_hex[] = "0123456789ABCDEF";

size_t textesc(const char *s, size_t len, unsigned flags, char *out, size_t size)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;
	size_t w = 0;

	if (size == 0)
		return 0;
	while (p < end) {
		size_t n = utf8_len(p, end), esc;

		if (n && !textesc_hidden(p, n, flags) &&
		    !(p == (const unsigned char *)s && *p == ':' && (flags & TEXTESC_LINE))) {
			if (w + n >= size)
				break;
			memcpy(out + w, p, n);
			w += n;
			p += n;
			continue;
		}
		/* An invalid byte alone; a hidden character byte by byte. */
		esc = n ? n : 1;
		if (w + 4 * esc >= size)
			break;
		for (size_t i = 0; i < esc; i++) {
			out[w++] = '\\';
			out[w++] = 'x';
			out[w++] = textesc_hex[p[i] >> 4];
			out[w++] = textesc_hex[p[i] & 15];
		}
		p += esc;
	}
	out[w] = '\0';
	return w;
}

#define TEXTESC_PIECE 256

/* How much of S (LEN bytes) the next piece takes: at most TEXTESC_PIECE
 * bytes, not ending inside a UTF-8 sequence (a stray continuation byte is
 * escaped alone wherever it falls). */
static size_t textesc_piece(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t in = len < TEXTESC_PIECE ? len : TEXTESC_PIECE;

	for (int back = 0; back < 3 && in < len && in > 1 && (p[in] & 0xc0) == 0x80; back++)
		in--;
	return in;
}

void textesc_fput(FILE *f, const char *s, size_t len, unsigned flags)
{
	char buf[4 * TEXTESC_PIECE + 1];

	while (len) {
		size_t in = textesc_piece(s, len), n = textesc(s, in, flags, buf, sizeof(buf));

		fwrite(buf, 1, n, f);
		flags &= ~TEXTESC_LINE; /* a leading ':' is only the first piece's */
		s += in;
		len -= in;
	}
}

void textesc_fputs(FILE *f, const char *s, unsigned flags)
{
	if (s)
		textesc_fput(f, s, strlen(s), flags);
}

/* Markdown's and HTML's characters as references: named where HTML has
 * a name every reader knows, numbered otherwise. */
static void textesc_md_char(FILE *f, char c)
{
	switch (c) {
	case '&': fputs("&amp;", f); break;
	case '<': fputs("&lt;", f); break;
	case '>': fputs("&gt;", f); break;
	case '"': fputs("&quot;", f); break;
	case '|': case '\\': case '`': case '*': case '_': case '$': case '~': case '[': case ']':
		fprintf(f, "&#%d;", (unsigned char)c);
		break;
	default:
		fputc(c, f);
	}
}

void textesc_markdown(FILE *f, const char *s)
{
	char buf[4 * TEXTESC_PIECE + 1];
	size_t len = s ? strlen(s) : 0;

	while (len) {
		size_t in = textesc_piece(s, len), n = textesc(s, in, 0, buf, sizeof(buf));

		for (size_t i = 0; i < n; i++)
			textesc_md_char(f, buf[i]);
		s += in;
		len -= in;
	}
}
