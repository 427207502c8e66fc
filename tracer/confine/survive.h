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
#include <sys/types.h>
#include <time.h>

#define SURVIVE_MAX 64

/* What a path was when the session first wrote to it (lstat before the
 * call ran), to tell at the end whether it changed. */
struct survive_state {
	bool exists;
	mode_t mode;
	dev_t dev;
	ino_t ino;
	uid_t uid;
	gid_t gid;
	off_t size;
	struct timespec mtime, ctime;
};

struct survive_entry {
	char *path;
	bool dir;        /* collapsed: something beneath path */
	struct survive_state before;
};

/* Writes counted apart, not listed: the distinct paths written (a set of
 * their hashes) under each name of a family.  An agent's own state (the
 * policy's write.agent-state.NAME rules), keyed by NAME; the caches (its
 * write.cache and write.cache.NAME rules), keyed by the rule id: a build
 * filling a cache is churn the policy allows, not something that
 * survives by accident. */
enum survive_family { SURVIVE_AGENT_STATE, SURVIVE_CACHE, SURVIVE_FAMILIES };

#define SURVIVE_NAMES 16 /* per family; past them, listed as survive_note() would */

struct survive_counted {
	char *name;
	uint64_t *set;   /* open addressing, 0: empty slot */
	size_t cap, paths;
};

struct survive {
	char **exclude;  /* directories whose content does not count */
	size_t n_exclude;
	struct survive_entry v[SURVIVE_MAX];
	size_t n;
	uint64_t events; /* allowed write events outside the excluded dirs */
	bool collapsed;
	struct survive_counted counted[SURVIVE_FAMILIES][SURVIVE_NAMES];
	size_t n_counted[SURVIVE_FAMILIES];
};

/* A set that ignores paths beneath the given directories (resolved where
 * they exist), beneath /dev and /proc, the kernel trace markers, and the
 * directories themselves. */
struct survive *survive_new(const char *const *exclude, size_t n);

/* Whether a write of PATH would count: outside the excluded dirs. */
bool survive_counts(const struct survive *sv, const char *path);

/* One allowed write of PATH (resolved, absolute), before it runs. */
void survive_note(struct survive *sv, const char *path);

/* One allowed write of PATH under NAME (its first LEN bytes) of family F:
 * counted there, kept out of the list. */
void survive_note_counted(struct survive *sv, enum survive_family f, const char *name, size_t len,
			  const char *path);

/* The names of family F written under, in the order first seen: their
 * number, and each one's name and count of distinct paths. */
size_t survive_n_counted(const struct survive *sv, enum survive_family f);
const char *survive_counted_name(const struct survive *sv, enum survive_family f, size_t i);
uint64_t survive_counted_paths(const struct survive *sv, enum survive_family f, size_t i);

/* The entries that changed, sorted, collapsed directories with a trailing
 * '/'; a malloc'ed array of malloc'ed strings (*n entries), freed with
 * survive_list_free.  An entry changed when what is at its path now
 * differs from what was there at its first write: it was created,
 * removed or replaced, a file's size or times moved, a directory's owner
 * or mode.  A directory's times are not compared: others may add to a
 * shared one, and what the session added there has entries of its own. */
char **survive_list(const struct survive *sv, size_t *n);
void survive_list_free(char **list, size_t n);

/* Whether entries were collapsed into their directories (false for NULL). */
bool survive_collapsed(const struct survive *sv);

void survive_free(struct survive *sv);

#endif
