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

/* An agent's own state (the policy's write.agent-state.NAME rules): the
 * distinct paths written there, counted (a set of their hashes), not
 * listed. */
#define SURVIVE_AGENTS 16

struct survive_agent {
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
	struct survive_agent agent[SURVIVE_AGENTS];
	size_t n_agents;
};

/* A set that ignores paths beneath the given directories (resolved where
 * they exist), beneath /dev and /proc, the kernel trace markers, and the
 * directories themselves. */
struct survive *survive_new(const char *const *exclude, size_t n);

/* Whether a write of PATH would count: outside the excluded dirs. */
bool survive_counts(const struct survive *sv, const char *path);

/* One allowed write of PATH (resolved, absolute), before it runs. */
void survive_note(struct survive *sv, const char *path);

/* One allowed write of PATH in the state of agent NAME (its first LEN
 * bytes): counted for that agent, kept out of the list.  Past
 * SURVIVE_AGENTS names, listed as survive_note() would. */
void survive_note_state(struct survive *sv, const char *name, size_t len, const char *path);

/* The agents whose state was written, in the order first seen: their
 * number, and each one's name and count of distinct paths. */
size_t survive_n_agents(const struct survive *sv);
const char *survive_agent_name(const struct survive *sv, size_t i);
uint64_t survive_agent_paths(const struct survive *sv, size_t i);

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
