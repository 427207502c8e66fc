/* Test-only: a compiled policy block from C arrays, so that unit tests of
 * the matchers and of rules_decide() need no loader and no JSON.
 *
 * Pattern syntax per kind (a small subset of the policy language):
 *   write/read  the path glob as is
 *   exec        argv elements separated by single spaces: "pip|pip3 install **"
 *   net         "*", "*:443", "10.0.0.0/8", "10.0.0.1:80-90", "::1",
 *               "[2001:db8::]/32:443", "*.example.com:443", "unix:/run/x.sock",
 *               "unix:@abstract*", "session", "bind:" and an address form
 * Bad input aborts: this is test scaffolding. */
#ifndef AGENTTRACE_TESTS_BLOCKBUILD_H
#define AGENTTRACE_TESTS_BLOCKBUILD_H

#include <stddef.h>

#include "rules/rules.h"

#define BB_MAX_UNLESS 4

struct bb_rule {
	enum rules_kind kind;
	enum rules_action action;
	const char *pattern;
	const char *id;                      /* NULL: "KIND.N" */
	const char *unless[BB_MAX_UNLESS];   /* NULL-terminated, same kind */
};

struct bb_policy {
	const char *name;                    /* NULL: "test" */
	enum rules_mode mode;
	const struct bb_rule *rules;
	size_t n_rules;
	const char *const *env_drop;
	size_t n_env_drop;
};

/* A malloc'ed block (free() it); *size gets its length when size != NULL.
 * Fallbacks follow agenttrace-policy(5): write and net deny, read allow, exec allow
 * unless there is an exec allow rule. */
struct rules_policy *bb_build(const struct bb_policy *def, size_t *size);

/* One rule of any action (allow), nothing else. */
struct rules_policy *bb_one(enum rules_kind kind, const char *pattern);

#endif
