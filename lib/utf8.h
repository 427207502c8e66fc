/* UTF-8, as JSON text needs it: records and policy texts are JSON. */
#ifndef AGENTTRACE_LIB_UTF8_H
#define AGENTTRACE_LIB_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* Length of the valid UTF-8 sequence at p (RFC 3629: no overlongs, no
 * surrogates, nothing above U+10FFFF), 0 when p starts an invalid one. */
static inline size_t utf8_len(const unsigned char *p, const unsigned char *end)
{
	unsigned char c = p[0];
	size_t n;
	unsigned lo = 0x80, hi = 0xBF;

	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		n = 2;
	else if (c >= 0xE0 && c <= 0xEF) {
		n = 3;
		if (c == 0xE0)
			lo = 0xA0;
		else if (c == 0xED)
			hi = 0x9F;
	} else if (c >= 0xF0 && c <= 0xF4) {
		n = 4;
		if (c == 0xF0)
			lo = 0x90;
		else if (c == 0xF4)
			hi = 0x8F;
	} else
		return 0;
	if ((size_t)(end - p) < n)
		return 0;
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xBF)
			return 0;
	return n;
}

#endif
