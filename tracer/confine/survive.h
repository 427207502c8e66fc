/* What survives the session: the paths the command created or
 * changed outside ${ROOT} and the temp dirs (caches under $HOME, say),
 * from the write events the supervisor allowed.  A bounded, deduplicated
 * set: past SURVIVE_MAX entries the deepest ones collapse into their
 * directories ("dir/"), so a cache filling thousands of files costs a
 * line, not a megabyte. */
#ifndef AGENTTRACE_SURVIVE_H
#define AGENTTRACE_SURVIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SURVIVE_MAX 64

struct survive_entry {
	char *path;
	bool dir;        /* collapsed: something beneath path */
};

struct survive {
	char **exclude;  /* directories whose content does not count */
	size_t n_exclude;
	struct survive_entry v[SURVIVE_MAX];
	size_t n;
	uint64_t events; /* allowed write events outside the excluded dirs */
	bool collapsed;
};

/* A set that ignores paths beneath the given directories (resolved where
 * they exist), beneath /dev and /proc, the kernel trace markers, and the
 * directories themselves. */
struct survive *survive_new(const char *const *exclude, size_t n);

/* One allowed write of PATH (resolved, absolute). */
void survive_note(struct survive *sv, const char *path);

/* The entries sorted, directories with a trailing '/'; a malloc'ed
 * array of malloc'ed strings (*n entries), freed with survive_list_free. */
char **survive_list(const struct survive *sv, size_t *n);
void survive_list_free(char **list, size_t n);

/* Whether entries were collapsed into their directories (false for NULL). */
bool survive_collapsed(const struct survive *sv);

void survive_free(struct survive *sv);

#endif
