/* The files that write alerts named (the agent instruction files of the
 * default policy, CLAUDE.md and its kind): the content of each when the
 * session was first let write to it, compared at the end, so that the
 * summary says how much changed.  The alert itself cannot: it is made
 * before the call runs.  Supervisor backends only (under the preload
 * backend the shim's alert may reach the supervisor after the write). */
#ifndef AGENTTRACE_ALERTED_H
#define AGENTTRACE_ALERTED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ALERTED_MAX 32              /* files told apart; others counted */
#define ALERTED_BYTES (1u << 20)    /* content compared; larger: sizes only */

struct alerted_file {
	char *path;
	char *rule;
	bool existed;      /* a regular file was there at the first write */
	bool measured;     /* its content (within ALERTED_BYTES) was kept */
	char *before;
	size_t before_len;
	uint64_t bytes_before;
};

struct alerted {
	struct alerted_file v[ALERTED_MAX];
	size_t n;
	uint64_t other;    /* distinct files past ALERTED_MAX */
};

/* The effective alert of a write to PATH (absolute) by rule RULE, before
 * the call runs: its first one keeps the file as it is now. */
void alerted_note(struct alerted *a, const char *path, const char *rule);

/* What became of one file, at the end. */
struct alerted_change {
	const char *path, *rule;
	const char *status;          /* "created", "changed", "removed", "unchanged" */
	bool measured;               /* lines_* were counted (both within ALERTED_BYTES) */
	uint64_t lines_added, lines_removed;
	uint64_t bytes_before, bytes_after;
};

/* Compares each file with what is at its path now: OUT (ALERTED_MAX
 * entries), in the order first alerted; returns how many. */
size_t alerted_compare(const struct alerted *a, struct alerted_change *out);

void alerted_free(struct alerted *a);

#endif
