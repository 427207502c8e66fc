/* FNV-1a: for short keys (key paths, a call's path bytes), where anything
 * stronger costs more than it saves.  Header-only: the preload shim links
 * no lib/ code. */
#ifndef AGENTTRACE_LIB_HASH_H
#define AGENTTRACE_LIB_HASH_H

#include <stddef.h>
#include <stdint.h>

static inline uint64_t hash_fnv1a(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < n; i++) {
		h ^= s[i];
		h *= 1099511628211ULL;
	}
	return h;
}

/* A string's hash that is never 0, so that 0 can mean "none". */
static inline uint64_t hash_text(const char *s)
{
	uint64_t h = hash_fnv1a(s, __builtin_strlen(s));

	return h ? h : 1;
}

#endif
