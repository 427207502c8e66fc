/* The policy loader: shipped names and files -> one compiled block.
 * Programs only (uses jansson and malloc); never linked into the preload. */
#ifndef AGENTTRACE_RULES_LOAD_H
#define AGENTTRACE_RULES_LOAD_H

#include <stddef.h>

#include "rules/rules.h"

/* Where an error is.  Printed by rules_error_format() as
 *   FILE:LINE:COL: key.path[i]: what is wrong
 * (line and column 1-based; keypath empty for a syntax error, then the
 * form is "FILE:LINE:COL: what is wrong"). */
struct rules_error {
	char file[512];
	int line;
	int column;
	char keypath[256];
	char text[512];
};

/* Writes the one-line form into buf (always NUL-terminated). */
void rules_error_format(const struct rules_error *e, char *buf, size_t size);

/* The values of ${ROOT} ${HOME} ${TMPDIR} ${CWD} ${SSH_AUTH_SOCK}, and the
 * resolver list behind ${RESOLVERS}.  Absolute, without a trailing slash.
 * NULL means unset:
 *   ROOT   -> CWD;  HOME -> the passwd entry's directory, else an error
 *   naming the variable if a rule uses it; TMPDIR -> "/tmp";
 *   SSH_AUTH_SOCK -> every pattern using it is dropped (listed by
 *   --explain as dropped), since an unset socket cannot be reached;
 *   resolv_conf -> "/etc/resolv.conf" (${RESOLVERS} expands to one
 *   pattern per nameserver line; none -> the pattern is dropped). */
/* SSH_AUTH_SOCK, and the files through which a GitHub Actions step
 * passes variables, paths, outputs and state to later steps. */
enum { RULES_ENV_SSH_AUTH_SOCK, RULES_ENV_GITHUB_ENV, RULES_ENV_GITHUB_PATH,
       RULES_ENV_GITHUB_OUTPUT, RULES_ENV_GITHUB_STATE, RULES_ENV_PATHS };
extern const char *const rules_env_path_names[RULES_ENV_PATHS];

struct rules_vars {
	const char *root;
	const char *home;
	const char *tmpdir;
	const char *cwd;
	/* CLAUDE_CODE_SSE_PORT: the loopback port of the IDE extension a
	 * coding agent's CLI talks to, digits of 1-65535; NULL when unset or
	 * anything else (every pattern using it is dropped, as for
	 * SSH_AUTH_SOCK).  Valid in net patterns only. */
	const char *ide_port;
	const char *resolv_conf;
	/* Paths from the environment that a rule may name, dropped where
	 * unset: rules_env_path_names[i] is env_path[i]. */
	const char *env_path[RULES_ENV_PATHS];
};

/* Fill vars from the process environment and --root (may be NULL). */
void rules_vars_from_env(struct rules_vars *vars, const char *root);

/* A rule added by the program rather than a policy file: --allow-net,
 * --allow-write, --allow-exec (action allow), and the supervisor's own
 * protection of its policy, log and binary (action deny, with id and
 * why).  pattern is in policy syntax (exec: a program glob, matched with
 * any arguments).  id NULL -> generated; origin "<command line>". */
struct rules_extra {
	enum rules_kind kind;
	enum rules_action action;
	const char *pattern;
	const char *id;
	const char *why;
};

/* Load and layer policies in order.  Each of names[] is a shipped policy
 * name ("default", "strict", "ci", "audit", "agent") or a path to a JSON
 * file (a name containing '/' or ending in ".json" is a path).  With
 * n == 0 the shipped "default" is used.  extras are appended as the last
 * layer.  Every policy's "tests" are run against the final block.
 *
 * On success *out is one malloc'ed block (free() it) and 0 is returned.
 * On failure -1 is returned and err says where and what. */
int rules_load(const char *const *names, size_t n,
	       const struct rules_extra *extras, size_t n_extras,
	       const struct rules_vars *vars,
	       struct rules_policy **out, struct rules_error *err);

/* Check one file on its own (agenttrace-policy check): every error found,
 * not only the first, passed to report() in file order.  Returns the
 * number of errors (0 = valid). */
int rules_check_file(const char *path, const struct rules_vars *vars,
		     void (*report)(const struct rules_error *e, void *arg), void *arg);

/* Shipped policies, embedded at build time from rules/NAME.json. */
const char *rules_builtin(const char *name, size_t *len); /* NULL if unknown */
extern const char *const rules_builtin_names[];            /* NULL-terminated */

/* The effective policy as pretty JSON text (malloc'ed, ends in "\n"):
 * name, layers, mode, every rule of every section with id, why, action,
 * pattern and origin, env, limits. */
char *rules_explain(const struct rules_policy *p);

/* A memory ceiling: plain bytes, a K/M/G/T size (powers of 1024) or a
 * share of the machine's memory, "1%" to "100%".  Sets *BYTES (a share:
 * 0) and *PERCENT (a size: 0); 0, or -EINVAL / -ERANGE. */
int rules_parse_memory(const char *s, uint64_t *bytes, uint32_t *percent);

/* A process ceiling: a number, or a share of the kernel's task limit,
 * "1%" to "100%".  Sets *COUNT (a share: 0) and *PERCENT (a number: 0);
 * 0, or -EINVAL / -ERANGE. */
int rules_parse_procs(const char *s, uint64_t *count, uint32_t *percent);

#endif
