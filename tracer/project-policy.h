/* The project's own policy, ${ROOT}/.agenttrace.json (agenttrace(1),
 * PROJECT POLICY): a layer over the shipped default (or over the
 * --policy layers), found and checked here.
 *
 * The project is untrusted: whoever wrote the repository, or an agent in
 * an earlier session, wrote that file.  Unless the user vouches for it
 * (--trust-project-policy), it may only make the policy stricter: deny and
 * alert rules, env.drop, record, tests.  Anything that could widen what
 * runs (allow rules, overrides, extends, mode, limits, a name) is refused
 * with exit status 125, never dropped silently: a user who thinks the
 * project's restrictions are in force must not run without them. */
#ifndef AGENTTRACE_PROJECT_POLICY_H
#define AGENTTRACE_PROJECT_POLICY_H

#include <stdbool.h>

#define PROJECT_POLICY_NAME ".agenttrace.json"

/* The project policy of ROOT (absolute): 1 and *PATH (malloc'ed) when
 * there is one that may be used (TRUSTED: as written; else only when it
 * restricts), 0 when there is none, or an exit status after the error was
 * printed. */
int project_policy_find(const char *root, bool trusted, char **path);

#endif
