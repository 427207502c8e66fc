/* The structure of the policy language (agenttrace-policy(5)):
 * which keys exist where and what type each value has.  Pattern syntax
 * is checked after variable expansion, in compile.c. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules/load-internal.h"

#define KP_SIZE 256

/* "$schema" names the JSON Schema of the language for editors and
 * validators (agenttrace-policy.schema.json); the engine ignores it. */
static const char *const top_keys[] = {
	"$schema", "agenttrace", "name", "description", "extends", "mode", "record",
	"exec", "write", "read", "net", "env", "limits", "tests", NULL,
};
static const char *const section_keys[] = { "allow", "alert", "deny", NULL };
static const char *const env_keys[] = { "drop", NULL };
static const char *const limit_keys[] = { "max_procs", "timeout", "max_memory", "max_cpu", NULL };
static const char *const test_keys[] = { "write", "read", "exec", "connect", "bind", "session",
					 "under", "expect", NULL };

struct schema {
	struct load_ctx *ctx;
	const struct load_layer *layer;
	size_t errors;
};

const char *schema_type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a number";
	case JSON_TRUE:
	case JSON_FALSE: return "a boolean";
	case JSON_NULL: return "null";
	}
	return "a value";
}

static void kp_key(char *out, const char *parent, const char *key)
{
	size_t n = error_kp_str(out, KP_SIZE, 0, parent);

	if (parent[0])
		n = error_kp_put(out, KP_SIZE, n, ".", 1);
	error_kp_str(out, KP_SIZE, n, key);
}

static void kp_index(char *out, const char *parent, size_t i)
{
	error_kp_index(out, KP_SIZE, error_kp_str(out, KP_SIZE, 0, parent), i);
}

#define FAIL(sch, kp, want_key, ...)                                                \
	do {                                                                        \
		(sch)->errors++;                                                    \
		error_at((sch)->ctx, (sch)->layer, (kp), (want_key), __VA_ARGS__); \
	} while (0)

static bool key_allowed(const char *const *allowed, const char *key)
{
	for (; *allowed; allowed++)
		if (!strcmp(*allowed, key))
			return true;
	return false;
}

static void unknown_keys(struct schema *sch, const json_t *obj, const char *kp,
			 const char *const *allowed)
{
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)obj, key, v) {
		char ckp[KP_SIZE];

		if (key_allowed(allowed, key))
			continue;
		kp_key(ckp, kp, key);
		FAIL(sch, ckp, true, "unknown key \"%s\"", key);
	}
}

static bool want_type(struct schema *sch, const json_t *v, const char *kp, json_type t,
		      const char *what)
{
	if (json_typeof(v) == t || (t == JSON_TRUE && json_is_boolean(v)))
		return true;
	FAIL(sch, kp, false, "expected %s, got %s", what, schema_type_name(v));
	return false;
}

static bool want_nonempty_string(struct schema *sch, const json_t *v, const char *kp)
{
	if (!want_type(sch, v, kp, JSON_STRING, "a string"))
		return false;
	if (!json_string_length(v)) {
		FAIL(sch, kp, false, "must not be empty");
		return false;
	}
	if (strlen(json_string_value(v)) != json_string_length(v)) {
		FAIL(sch, kp, false, "must not contain a NUL character");
		return false;
	}
	return true;
}

static void check_id(struct schema *sch, const json_t *v, const char *kp)
{
	const char *s;

	if (!want_nonempty_string(sch, v, kp))
		return;
	s = json_string_value(v);
	if (strlen(s) > 128) {
		FAIL(sch, kp, false, "id longer than 128 characters");
		return;
	}
	for (; *s; s++) {
		if (!isalnum((unsigned char)*s) && !strchr("._-:", *s)) {
			FAIL(sch, kp, false,
			     "invalid id: use letters, digits, '.', '_', '-' and ':'");
			return;
		}
	}
}

static void check_string_list(struct schema *sch, const json_t *v, const char *kp,
			      bool allow_empty_list)
{
	size_t i;
	json_t *el;

	if (!want_type(sch, v, kp, JSON_ARRAY, "an array of strings"))
		return;
	if (!allow_empty_list && !json_array_size(v)) {
		FAIL(sch, kp, false, "must not be empty");
		return;
	}
	json_array_foreach(v, i, el) {
		char ekp[KP_SIZE];

		kp_index(ekp, kp, i);
		want_nonempty_string(sch, el, ekp);
	}
}

/* An argv pattern (rule) or argv (test): a non-empty list of strings;
 * only element 0 (the program) must be non-empty, later ones may match
 * an empty argument. */
static void check_argv(struct schema *sch, const json_t *v, const char *kp)
{
	size_t i;
	json_t *el;

	if (!want_type(sch, v, kp, JSON_ARRAY, "an array of strings"))
		return;
	if (!json_array_size(v)) {
		FAIL(sch, kp, false, "empty argv: the first element names the program");
		return;
	}
	json_array_foreach(v, i, el) {
		char ekp[KP_SIZE];

		kp_index(ekp, kp, i);
		if (i == 0)
			want_nonempty_string(sch, el, ekp);
		else if (want_type(sch, el, ekp, JSON_STRING, "a string") &&
			 strlen(json_string_value(el)) != json_string_length(el))
			FAIL(sch, ekp, false, "must not contain a NUL character");
	}
}

static const char *pattern_key(const char *section)
{
	if (!strcmp(section, "exec"))
		return "argv";
	if (!strcmp(section, "net"))
		return "addr";
	return "path";
}

/* "script": a shape of a shell's -c command string, exec rules only. */
static void check_script(struct schema *sch, const char *section, const json_t *v,
			 const char *kp)
{
	const char *s;

	if (strcmp(section, "exec")) {
		FAIL(sch, kp, true,
		     "\"script\" is only valid in exec rules (it judges a shell's -c command string)");
		return;
	}
	if (!want_type(sch, v, kp, JSON_STRING, "a string"))
		return;
	s = json_string_value(v);
	if (schema_script(s) == RULES_SCRIPT_NONE)
		FAIL(sch, kp, false, "unknown script shape \"%s\" (known: \"%s\")", s,
		     rules_script_name(RULES_SCRIPT_DOWNLOAD_AND_RUN));
}

enum rules_script schema_script(const char *name)
{
	for (int s = RULES_SCRIPT_NONE + 1; s < RULES_SCRIPT_COUNT; s++)
		if (name && !strcmp(name, rules_script_name((enum rules_script)s)))
			return (enum rules_script)s;
	return RULES_SCRIPT_NONE;
}

/* "content": what a write deny rule judges of the replacements of the
 * files it names (agenttrace-policy(5), "Content"). */
static void check_content(struct schema *sch, const char *section, const char *action,
			  const json_t *v, const char *kp)
{
	const char *s;

	if (strcmp(section, "write")) {
		FAIL(sch, kp, true,
		     "\"content\" is only valid in write rules (it judges what a file is replaced with)");
		return;
	}
	if (strcmp(action, "deny")) {
		FAIL(sch, kp, true, "\"content\" belongs to deny rules: it says which replacements "
		     "of a denied file pass, and %s rules deny nothing", action);
		return;
	}
	if (!want_type(sch, v, kp, JSON_STRING, "a string"))
		return;
	s = json_string_value(v);
	if (schema_content(s) == RULES_CONTENT_NONE)
		FAIL(sch, kp, false, "unknown content check \"%s\" (known: \"%s\")", s,
		     rules_content_name(RULES_CONTENT_GIT_CONFIG));
}

enum rules_content schema_content(const char *name)
{
	for (int c = RULES_CONTENT_NONE + 1; c < RULES_CONTENT_COUNT; c++)
		if (name && !strcmp(name, rules_content_name((enum rules_content)c)))
			return (enum rules_content)c;
	return RULES_CONTENT_NONE;
}

/* V is a non-empty array (WHAT says of what). */
static bool want_nonempty_array(struct schema *sch, const json_t *v, const char *kp,
				const char *what)
{
	if (!want_type(sch, v, kp, JSON_ARRAY, what))
		return false;
	if (!json_array_size(v)) {
		FAIL(sch, kp, false, "must not be empty");
		return false;
	}
	return true;
}

/* "overrides": the ids of earlier layers' deny and alert rules an allow
 * rule exempts its pattern from (compile.c checks that they exist). */
static void check_overrides(struct schema *sch, const char *action, const json_t *v,
			    const char *kp)
{
	size_t i;
	json_t *el;

	if (strcmp(action, "allow") != 0) {
		FAIL(sch, kp, true, "\"overrides\" belongs to allow rules: the %s rules of a "
		     "layer exempt nothing", action);
		return;
	}
	if (!want_nonempty_array(sch, v, kp, "an array of rule ids"))
		return;
	json_array_foreach(v, i, el) {
		char ekp[KP_SIZE];

		kp_index(ekp, kp, i);
		check_id(sch, el, ekp);
	}
}

/* "under": the programs a deny or alert rule needs in the event's
 * lineage, each a program glob (any arguments) or an argv pattern. */
static void check_under(struct schema *sch, const char *action, const json_t *v, const char *kp)
{
	size_t i;
	json_t *el;

	if (strcmp(action, "allow") == 0) {
		FAIL(sch, kp, true, "\"under\" belongs to deny and alert rules: the names of "
		     "the programs above a process are partly theirs to choose, and admit nothing");
		return;
	}
	if (!want_nonempty_array(sch, v, kp, "an array of program globs or argv patterns"))
		return;
	json_array_foreach(v, i, el) {
		char ekp[KP_SIZE];

		kp_index(ekp, kp, i);
		if (json_is_array(el))
			check_argv(sch, el, ekp);
		else
			want_nonempty_string(sch, el, ekp);
	}
}

static void check_rule(struct schema *sch, const char *section, const char *action,
		       const json_t *rule, const char *kp)
{
	const char *pkey = pattern_key(section);
	const char *key;
	json_t *v;
	bool have_pattern = false;

	if (json_is_string(rule)) {
		want_nonempty_string(sch, rule, kp);
		return;
	}
	if (!json_is_object(rule)) {
		FAIL(sch, kp, false, "expected a pattern string or a rule object, got %s",
		     schema_type_name(rule));
		return;
	}
	json_object_foreach((json_t *)rule, key, v) {
		char ckp[KP_SIZE];

		kp_key(ckp, kp, key);
		if (!strcmp(key, "id")) {
			check_id(sch, v, ckp);
		} else if (!strcmp(key, "why")) {
			want_nonempty_string(sch, v, ckp);
		} else if (!strcmp(key, "unless")) {
			check_string_list(sch, v, ckp, false);
		} else if (!strcmp(key, "script")) {
			check_script(sch, section, v, ckp);
		} else if (!strcmp(key, "overrides")) {
			check_overrides(sch, action, v, ckp);
		} else if (!strcmp(key, "under")) {
			check_under(sch, action, v, ckp);
		} else if (!strcmp(key, "content")) {
			check_content(sch, section, action, v, ckp);
		} else if (!strcmp(key, pkey)) {
			have_pattern = true;
			if (!strcmp(pkey, "argv"))
				check_argv(sch, v, ckp);
			else
				want_nonempty_string(sch, v, ckp);
		} else if (!strcmp(key, "path") || !strcmp(key, "argv") || !strcmp(key, "addr")) {
			have_pattern = true; /* the wrong one: reported once, here */
			FAIL(sch, ckp, true, "\"%s\" is not a pattern of %s rules (use \"%s\")",
			     key, section, pkey);
		} else {
			FAIL(sch, ckp, true, "unknown key \"%s\"", key);
		}
	}
	if (!have_pattern)
		FAIL(sch, kp, false, "a %s rule object needs \"%s\"", section, pkey);
}

static void check_section(struct schema *sch, const char *section, const json_t *obj,
			  const char *kp)
{
	if (!want_type(sch, obj, kp, JSON_OBJECT, "an object with allow, alert, deny lists"))
		return;
	unknown_keys(sch, obj, kp, section_keys);
	for (const char *const *a = section_keys; *a; a++) {
		json_t *list = json_object_get(obj, *a);
		char lkp[KP_SIZE];
		size_t i;
		json_t *rule;

		if (!list)
			continue;
		kp_key(lkp, kp, *a);
		if (!want_type(sch, list, lkp, JSON_ARRAY, "an array of rules"))
			continue;
		json_array_foreach(list, i, rule) {
			char rkp[KP_SIZE];

			kp_index(rkp, lkp, i);
			check_rule(sch, section, *a, rule, rkp);
		}
	}
}

static void check_limits(struct schema *sch, const json_t *obj, const char *kp)
{
	const char *key;
	json_t *v;

	if (!want_type(sch, obj, kp, JSON_OBJECT, "an object"))
		return;
	unknown_keys(sch, obj, kp, limit_keys);
	json_object_foreach((json_t *)obj, key, v) {
		char ckp[KP_SIZE];
		uint64_t size;
		uint32_t percent;

		if (!key_allowed(limit_keys, key))
			continue;
		kp_key(ckp, kp, key);
		if (!strcmp(key, "max_memory") && json_is_string(v)) {
			if (rules_parse_memory(json_string_value(v), &size, &percent) < 0)
				FAIL(sch, ckp, false,
				     "bad size \"%s\": a positive number of bytes, with K, M, G or T, "
				     "or a share of the machine's memory from 1%% to 100%%",
				     json_string_value(v));
			continue;
		}
		if (!strcmp(key, "max_procs") && json_is_string(v)) {
			if (rules_parse_procs(json_string_value(v), &size, &percent) < 0)
				FAIL(sch, ckp, false,
				     "bad process ceiling \"%s\": a positive number, or a share of "
				     "the kernel's task limit from 1%% to 100%%", json_string_value(v));
			continue;
		}
		if (!json_is_integer(v)) {
			FAIL(sch, ckp, false, "expected a positive integer%s, got %s",
			     !strcmp(key, "max_memory") ? " or a size like \"512M\" or \"75%\"" :
			     !strcmp(key, "max_procs") ? " or a share like \"15%\"" : "",
			     schema_type_name(v));
			continue;
		}
		if (json_integer_value(v) <= 0)
			FAIL(sch, ckp, false, "must be greater than 0");
	}
}

static void check_env(struct schema *sch, const json_t *obj, const char *kp)
{
	json_t *drop;

	if (!want_type(sch, obj, kp, JSON_OBJECT, "an object"))
		return;
	unknown_keys(sch, obj, kp, env_keys);
	drop = json_object_get(obj, "drop");
	if (drop) {
		char dkp[KP_SIZE];

		kp_key(dkp, kp, "drop");
		check_string_list(sch, drop, dkp, true);
	}
}

static void check_test(struct schema *sch, const json_t *t, const char *kp)
{
	const char *key;
	json_t *v;
	int events = 0;

	if (!want_type(sch, t, kp, JSON_OBJECT, "a test object"))
		return;
	unknown_keys(sch, t, kp, test_keys);
	json_object_foreach((json_t *)t, key, v) {
		char ckp[KP_SIZE];

		kp_key(ckp, kp, key);
		if (!strcmp(key, "write") || !strcmp(key, "read") || !strcmp(key, "connect") ||
		    !strcmp(key, "bind")) {
			events++;
			want_nonempty_string(sch, v, ckp);
		} else if (!strcmp(key, "session")) {
			if (want_type(sch, v, ckp, JSON_TRUE, "a boolean") &&
			    !json_object_get(t, "connect"))
				FAIL(sch, ckp, false, "\"session\" goes with a \"connect\" test");
		} else if (!strcmp(key, "exec")) {
			events++;
			check_argv(sch, v, ckp);
		} else if (!strcmp(key, "under")) {
			/* The program the tested event's process runs. */
			check_argv(sch, v, ckp);
		} else if (!strcmp(key, "expect")) {
			if (want_type(sch, v, ckp, JSON_STRING, "a string") &&
			    strcmp(json_string_value(v), "allow") &&
			    strcmp(json_string_value(v), "alert") &&
			    strcmp(json_string_value(v), "deny"))
				FAIL(sch, ckp, false, "must be \"allow\", \"alert\" or \"deny\"");
		}
	}
	if (events != 1)
		FAIL(sch, kp, false, "a test needs exactly one of write, read, exec, connect, bind");
	if (!json_object_get(t, "expect"))
		FAIL(sch, kp, false, "a test needs \"expect\"");
}

size_t schema_check(struct load_ctx *ctx, const struct load_layer *layer)
{
	struct schema sch = { .ctx = ctx, .layer = layer };
	const json_t *root = layer->root;
	const char *key;
	json_t *v;

	if (!json_is_object(root)) {
		FAIL(&sch, "", false, "a policy must be a JSON object, got %s",
		     schema_type_name(root));
		return sch.errors;
	}
	unknown_keys(&sch, root, "", top_keys);
	v = json_object_get(root, "agenttrace");
	if (!v)
		FAIL(&sch, "", false, "missing \"agenttrace\": 1 (the policy format version)");
	json_object_foreach((json_t *)root, key, v) {
		if (!strcmp(key, "agenttrace")) {
			if (!json_is_integer(v) || json_integer_value(v) != 1)
				FAIL(&sch, key, false, "must be 1 (the only policy format version)");
		} else if (!strcmp(key, "name") || !strcmp(key, "extends")) {
			want_nonempty_string(&sch, v, key);
		} else if (!strcmp(key, "description") || !strcmp(key, "$schema")) {
			want_type(&sch, v, key, JSON_STRING, "a string");
		} else if (!strcmp(key, "mode")) {
			if (want_type(&sch, v, key, JSON_STRING, "a string") &&
			    strcmp(json_string_value(v), "enforce") &&
			    strcmp(json_string_value(v), "audit"))
				FAIL(&sch, key, false, "must be \"enforce\" or \"audit\"");
		} else if (!strcmp(key, "record")) {
			want_type(&sch, v, key, JSON_TRUE, "a boolean");
		} else if (!strcmp(key, "exec") || !strcmp(key, "write") ||
			   !strcmp(key, "read") || !strcmp(key, "net")) {
			check_section(&sch, key, v, key);
		} else if (!strcmp(key, "env")) {
			check_env(&sch, v, key);
		} else if (!strcmp(key, "limits")) {
			check_limits(&sch, v, key);
		} else if (!strcmp(key, "tests")) {
			size_t i;
			json_t *t;

			if (!want_type(&sch, v, key, JSON_ARRAY, "an array of tests"))
				continue;
			json_array_foreach(v, i, t) {
				char tkp[KP_SIZE];

				kp_index(tkp, key, i);
				check_test(&sch, t, tkp);
			}
		}
	}
	return sch.errors;
}
