/* The project's own policy (tracer/project-policy.h). */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/exitcode.h"
#include "lib/log.h"
#include "lib/xalloc.h"
#include "tracer/project-policy.h"

/* What an untrusted project policy may hold.  Each of these can only
 * refuse or report more, or check the policy: a deny or alert rule beats
 * every allow, env.drop takes variables away, record logs more, a failing
 * test stops the run. */
static const char *const project_top_keys[] = {
	"agenttrace", "$schema", "description", "exec", "write", "read", "net", "env", "record",
	"tests",
};
static const char *const project_section_keys[] = { "deny", "alert" };

static bool project_in(const char *key, const char *const *set, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(key, set[i]) == 0)
			return true;
	return false;
}

/* The first key of ROOT an untrusted layer may not hold, as
 * "section.key" in WHERE; false when there is none. */
static bool project_widens(json_t *root, char *where, size_t size)
{
	const char *key;
	json_t *v;

	json_object_foreach(root, key, v) {
		const char *sub;
		json_t *w;

		if (!project_in(key, project_top_keys, sizeof(project_top_keys) / sizeof(*project_top_keys))) {
			snprintf(where, size, "%s", key);
			return true;
		}
		if (strcmp(key, "record") == 0 && !json_is_true(v)) {
			/* record: false widens nothing but says something
			 * untrue of a layer that sets it: only true. */
			snprintf(where, size, "record: false");
			return true;
		}
		if (!json_is_object(v) || strcmp(key, "env") == 0)
			continue;
		json_object_foreach(v, sub, w) {
			if (!project_in(sub, project_section_keys, 2)) {
				snprintf(where, size, "%s.%s", key, sub);
				return true;
			}
		}
	}
	return false;
}

/* Whether PATH leads to a file beneath directory ROOT, both resolved. */
static bool project_policy_inside(const char *path, const char *root)
{
	char *real = realpath(path, NULL), *rroot = realpath(root, NULL);
	size_t n = rroot ? strlen(rroot) : 0;
	bool in = real && rroot &&
		  (strcmp(rroot, "/") == 0 ||
		   (strncmp(real, rroot, n) == 0 && real[n] == '/'));

	free(real);
	free(rroot);
	return in;
}

int project_policy_find(const char *root, bool trusted, char **path)
{
	char *p = xasprintf("%s/%s", strcmp(root, "/") == 0 ? "" : root, PROJECT_POLICY_NAME);
	char where[256];
	struct stat st, lst;
	json_error_t jerr;
	json_t *j;

	*path = NULL;
	if (lstat(p, &lst) < 0) {
		if (errno == ENOENT) {
			free(p);
			return 0;
		}
		error_msg("project policy %s: %s", p, strerror(errno));
		free(p);
		return AT_EXIT_FAILURE;
	}
	/* Followed if it is a link, but only to a regular file: a FIFO or
	 * a device would hang or feed the loader without end. */
	if (stat(p, &st) < 0 || !S_ISREG(st.st_mode)) {
		error_msg("project policy %s: %s", p,
			  S_ISLNK(lst.st_mode) ? strerror(errno) : "not a regular file");
		hint_msg("--no-project-policy runs without it");
		free(p);
		return AT_EXIT_FAILURE;
	}
	/* And only to a file of the project: a repository can ship the
	 * link, and agenttrace, as root, would read what it names (a key,
	 * a token) and quote it in the loader's error on a public CI log. */
	if (S_ISLNK(lst.st_mode) && !project_policy_inside(p, root)) {
		error_msg("project policy %s: a symbolic link to a file outside the project; "
			  "agenttrace does not read it", p);
		hint_msg("--no-project-policy runs without it, --policy FILE names a policy file");
		free(p);
		return AT_EXIT_FAILURE;
	}
	if (!trusted) {
		j = json_load_file(p, JSON_REJECT_DUPLICATES, &jerr);
		/* Not JSON: the loader says where, with the line and column. */
		if (j && json_is_object(j) && project_widens(j, where, sizeof(where))) {
			error_msg("project policy %s: \"%s\" could widen what the session allows; a "
				  "project's policy may only add deny and alert rules (and env.drop, "
				  "record, tests) unless you vouch for it", p, where);
			hint_msg("read it, then run with --trust-project-policy to use it as written, "
				 "or with --no-project-policy to ignore it");
			json_decref(j);
			free(p);
			return AT_EXIT_FAILURE;
		}
		json_decref(j);
	}
	*path = p;
	return 1;
}
