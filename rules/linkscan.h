/* Protected names that are symbolic links below a glob: a
 * ~/.aws/credentials kept elsewhere and linked into ~/.aws, a ~/.gnupg
 * whose private-keys-v1.d is a link.  The paths the policy judges are
 * where links lead (tracer/syscall/path.h), so a rule naming everything
 * in ~/.aws would miss the file itself; the loader gives such a
 * rule a twin for each object its linked names lead to, found here by
 * a bounded walk of the rule's literal directory when the policy is
 * loaded (rules/compile.c, comp_twins()), breadth first, so that the
 * names near the top are seen before a deep cache.  Links to the
 * system's own files (/usr, /etc, /dev but /dev/shm, the Nix store, ...)
 * and to programs (a file with an execute bit) are no credentials kept
 * elsewhere and get no twin: a virtual environment in ~/.config/gcloud
 * would otherwise refuse every session its python. */
#ifndef AGENTTRACE_RULES_LINKSCAN_H
#define AGENTTRACE_RULES_LINKSCAN_H

#include <stdbool.h>
#include <stddef.h>

#define LINKSCAN_MAX_DIR 128      /* entries looked at in one directory: a
				   * cache's thousands leave its siblings be */
#define LINKSCAN_MAX_ENTRIES 1024 /* directory entries looked at, per pattern */
#define LINKSCAN_MAX_LOAD 16384   /* and for all the patterns of one load */
#define LINKSCAN_MAX_DEPTH 4     /* levels below the directory, for a "**" */

/* Called for each name NAME that PATTERN matches, no exception excludes,
 * and that leads to the other object REAL (resolved, absolute): WHOLE
 * when REAL is a directory whose every entry the pattern would match by
 * NAME.  False stops the walk (memory ran out). */
typedef bool (*linkscan_found)(void *arg, const char *name, const char *real, bool whole);

/* The trees linkscan() is about: links in WITHIN's directories are the
 * user's (a dotfiles manager's, a secrets manager's), where those of a
 * system tree are its packages' (/etc/alternatives); SKIP's are too
 * large to walk (the project, home and temp trees themselves). */
struct linkscan_trees {
	const char *const *within;
	size_t n_within;
	const char *const *skip;
	size_t n_skip;
};

/* Walk PATTERN's literal directory (absolute, normalized; nothing when
 * the pattern is wholly literal, has no such directory, or it is at or
 * above one of TREES's SKIP, or, unless LINKED (it is where a link of
 * the user's led: the loader's twin of a linked head), it is not
 * strictly below one of its WITHIN) and call FOUND for each linked name, EXCLUDED's N_EXCLUDED
 * patterns (the rule's exceptions) set aside.  *BUDGET is what is left
 * of the load's LINKSCAN_MAX_LOAD entries.  False when FOUND said so. */
bool linkscan(const char *pattern, const char *const *excluded, size_t n_excluded,
	      const struct linkscan_trees *trees, bool linked, unsigned *budget, linkscan_found found,
	      void *arg);

#endif
