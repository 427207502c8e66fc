/* Shared between the loader's files (load.c schema.c vars.c compile.c
 * explain.c error.c); nothing here is API. */
#ifndef AGENTTRACE_RULES_LOAD_INTERNAL_H
#define AGENTTRACE_RULES_LOAD_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "rules/jsonpos.h"
#include "rules/load.h"

/* Enough for any honest policy; a bound so that a hostile file cannot make
 * `agenttrace-policy check` print without end. */
#define LOAD_MAX_ERRORS 200
/* extends chains deeper than this are surely a mistake. */
#define LOAD_MAX_DEPTH 16

/* One JSON file (or shipped policy) of the layering. */
struct load_layer {
	char *label;   /* as named: "default", "./extra.json" (for "layers") */
	char *display; /* in errors and origins: "<builtin:default>", "sub/base.json" */
	char *dir;     /* directory for relative extends, "" = cwd; NULL when shipped */
	char *ident;   /* "file:DEV:INO" or "builtin:NAME": detects cycles and repeats */
	char *text;
	size_t len;
	json_t *root;
	struct jsonpos pos;
};

struct load_errors {
	struct rules_error *v;
	size_t n, cap;
	bool overflow; /* LOAD_MAX_ERRORS reached; later errors dropped */
};

struct load_ctx {
	const struct rules_vars *vars;
	struct load_errors errs;
	struct load_layer **layers; /* merge order: an extended layer first */
	size_t n_layers;
	const char *stack[LOAD_MAX_DEPTH]; /* idents being loaded (cycle check) */
	size_t depth;
};

/* ---- error.c ---- */
void error_set(struct rules_error *e, const char *file, int line, int col,
	       const char *keypath, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
void error_push(struct load_errors *errs, const struct rules_error *e);
/* An error about the value at KEYPATH of LAYER (or its key, when
 * want_key), located by the layer's position index. */
void error_at(struct load_ctx *ctx, const struct load_layer *layer, const char *keypath,
	      bool want_key, const char *fmt, ...) __attribute__((format(printf, 5, 6)));
void error_free(struct load_errors *errs);
/* snprintf for key paths and messages that may be cut short on purpose
 * (a bounded field of struct rules_error). */
void error_fmt(char *out, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Key paths without printf: append S (N bytes), a string, a number or "[INDEX]"
 * at offset AT of OUT (SIZE bytes, AT < SIZE, NUL-terminated), cut short
 * as snprintf() would.  Return the new length.  Start with AT = 0. */
size_t error_kp_put(char *out, size_t size, size_t at, const char *s, size_t n);
size_t error_kp_str(char *out, size_t size, size_t at, const char *s);
size_t error_kp_num(char *out, size_t size, size_t at, size_t num);
size_t error_kp_index(char *out, size_t size, size_t at, size_t index);

/* ---- schema.c ---- */
/* Check the structure and types of one parsed layer against the policy
 * language; every problem is pushed to ctx->errs.  Returns the number of
 * problems found. */
size_t schema_check(struct load_ctx *ctx, const struct load_layer *layer);
/* A JSON type's name for messages: "a string", "an array", ... */
const char *schema_type_name(const json_t *v);
/* The shape an exec rule's "script" names; RULES_SCRIPT_NONE when NAME
 * (may be NULL) is none this build knows. */
enum rules_script schema_script(const char *name);
/* The check a write rule's "content" names; RULES_CONTENT_NONE when NAME
 * (may be NULL) names none. */
enum rules_content schema_content(const char *name);

/* ---- vars.c ---- */
enum {
	VARS_ESCAPE_GLOB = 1, /* escape \ * ? [ ] in values: they are literal text */
	VARS_ESCAPE_ALT = 2,  /* escape | too (argv elements) */
	VARS_RESOLVERS = 4,   /* ${RESOLVERS} allowed */
};

struct vars_result {
	char **v;            /* expanded strings; n == 0: dropped */
	size_t n;
	const char *dropped; /* the unset variable that dropped the pattern */
};

/* Expand the variables of S.  Returns 0 (res filled; free with
 * vars_result_free) or -1 with a message in msg. */
int vars_expand(const struct rules_vars *vars, const char *s, unsigned flags,
		struct vars_result *res, char *msg, size_t msg_size);
void vars_result_free(struct vars_result *res);
/* Fold "//" and "/./", resolve ".." lexically and drop a trailing "/" of
 * an absolute path, in place.  Returns 0, or -1 when ".." would climb over
 * a glob component (the result could not mean what was written). */
int vars_normalize(char *path);

/* ---- compile.c ---- */
/* Merge ctx->layers plus the extras into one block (*out, malloc'ed).
 * Returns 0, or -1 with errors pushed to ctx->errs. */
int compile_policy(struct load_ctx *ctx, const struct rules_extra *extras, size_t n_extras,
		   struct rules_policy **out);
/* Run every layer's "tests" against the block; failures pushed to
 * ctx->errs.  Returns the number of failures.  With extra_hit, P holds
 * command-line rules (origin "<command line>") and the tests are meant
 * for the block without them: *extra_hit is set, and the run stopped,
 * as soon as a test event matches one of them, since only then could
 * the outcome differ (the caller then compiles without them and runs
 * the tests again). */
size_t compile_run_tests(struct load_ctx *ctx, const struct rules_policy *p, bool *extra_hit);

/* The "dropped" patterns (removed because a variable was unset) are kept
 * in the block's string table after the env.drop globs, four strings
 * each: id, pattern as written, origin, unset variable.  Their count is
 * what the table holds after env.drop, so no header field is needed. */
#define COMPILE_DROPPED_FIELDS 4

#endif
