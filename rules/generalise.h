/* From an event that happened to the policy text that admits it: the one
 * generaliser behind a record's "suggest" (rules/suggest.h) and
 * `agenttrace-policy learn` (tools/learn.c).  Paths are written the way a
 * policy writes them: under ${ROOT}, ${TMPDIR} or ${HOME} when they lie
 * there, with '$' doubled and glob characters escaped, so that the text
 * means exactly the path it came from.  Part of librules.a (malloc). */
#ifndef AGENTTRACE_RULES_GENERALISE_H
#define AGENTTRACE_RULES_GENERALISE_H

#include <stdbool.h>

#include "rules/rules.h"

enum rules_anchor { RULES_ANCHOR_ROOT, RULES_ANCHOR_TMPDIR, RULES_ANCHOR_HOME, RULES_ANCHORS };

/* The directories the policy variables stand for in this run; NULL when
 * unknown.  Normalised: absolute, no trailing '/', never "/" itself (an
 * anchor "/" would swallow every path). */
struct rules_anchors {
	char *dir[RULES_ANCHORS];
};

/* Sets A from the three directories (each may be NULL).  0 or -ENOMEM. */
int rules_anchors_set(struct rules_anchors *a, const char *root, const char *tmpdir,
		      const char *home);
void rules_anchors_free(struct rules_anchors *a);

/* "${ROOT}", "${TMPDIR}", "${HOME}". */
const char *rules_anchor_var(enum rules_anchor k);

/* True when PATH is DIR or lies beneath it. */
bool rules_path_under(const char *path, const char *dir);

/* The deepest anchor PATH lies under, or -1. */
int rules_anchor_of(const struct rules_anchors *a, const char *path);

/* PREFIX followed by S as a literal of a policy pattern: '$' doubled
 * (the loader's variable syntax) and, with GLOB, glob characters (with
 * ALT also '|') backslash-escaped.  Malloc'ed; NULL when out of memory. */
char *rules_literal(const char *prefix, const char *s, bool glob, bool alt);

/* PATH as a policy writes it: "${VAR}/rest" under an anchor, else the
 * literal path.  Malloc'ed; NULL when out of memory. */
char *rules_path_literal(const struct rules_anchors *a, const char *path, bool glob);

/* An exec's program as the program element of an exec pattern: under an
 * anchor as "${VAR}/rest", glob characters and '|' escaped.  Malloc'ed;
 * NULL when out of memory. */
char *rules_exec_literal(const struct rules_anchors *a, const char *exe);

/* The pattern (rule text) that admits event EV of KIND, generalised as
 * far as that stays safe: a write beneath a cache or build directory is
 * admitted for the directory one level below it (their contents are
 * regenerated at will); a destination by the host name it was resolved
 * from; every other object as it is.  Malloc'ed; NULL when no rule can
 * name the event (an unnamed socket, an address of another family) or
 * out of memory. */
char *rules_generalise(const struct rules_anchors *a, enum rules_kind kind,
		       const struct rules_event *ev);

/* The pattern that admits exactly EV's object: its path, program or
 * address and port (not a host name, which is the program's own word).
 * Malloc'ed; NULL as for rules_generalise(). */
char *rules_exact(const struct rules_anchors *a, enum rules_kind kind,
		  const struct rules_event *ev);

#endif
