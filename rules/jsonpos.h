/* Source positions of JSON values.  jansson keeps none, so error messages
 * and rule origins ("FILE:LINE:COL") come from this small scanner that
 * walks the same text once and records where every value (and the key
 * naming it) starts, by key path ("write.deny[1].path"). */
#ifndef AGENTTRACE_RULES_JSONPOS_H
#define AGENTTRACE_RULES_JSONPOS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Values deeper than this are skipped, not indexed: the policy schema is
 * at most five levels deep, and indexing arbitrarily deep input would cost
 * quadratic memory in the length of the key paths. */
#define JSONPOS_MAX_DEPTH 8

struct jsonpos_entry {
	size_t keypath;  /* offset of the NUL-terminated key path in the arena; "" for the root */
	uint32_t hash;
	int line, col;   /* start of the value, 1-based */
	int key_line, key_col; /* start of the key's string, or the value's */
};

/* Entries in document order, their key paths in one arena, and a hash
 * table over them: loading a policy looks up one origin per rule, and an
 * index built per load must cost less than the parse it follows. */
struct jsonpos {
	struct jsonpos_entry *v;
	size_t n, cap;
	char *arena;
	size_t arena_len, arena_cap;
	uint32_t *slots;  /* entry index + 1, 0 = empty; n_slots is a power of two */
	size_t n_slots;
	/* Two values with one key path ("a.b" as a key and as a path): the
	 * entries are then sorted and searched as a sorted array, so that
	 * which of them a lookup finds stays what it always was. */
	bool sorted;
};

/* Index TEXT (already accepted by jansson).  Returns 0, or -1 on malformed
 * text or out of memory (ix is then valid but partial). */
int jsonpos_index(struct jsonpos *ix, const char *text, size_t len);

/* The position of the value at KEYPATH (or of its key when want_key).
 * False when the path is not in the index; *line and *col are then 1, 1
 * for the root and the closest indexed ancestor otherwise. */
bool jsonpos_find(const struct jsonpos *ix, const char *keypath, bool want_key,
		  int *line, int *col);

void jsonpos_free(struct jsonpos *ix);

#endif
