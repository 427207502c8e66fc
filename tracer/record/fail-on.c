/* Which alert records fail the run (fail-on.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xalloc.h"
#include "tracer/record/fail-on.h"

/* A rule id is letters, digits, '.', '_', '-' and ':' (agenttrace-policy(5));
 * a selector may add the glob characters. */
static bool fail_on_valid(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++) {
		char c = *s;

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      strchr("._-:*?[]!", c)))
			return false;
	}
	return true;
}

int fail_on_add(struct fail_on *f, const char *list, char *bad, size_t bad_size)
{
	char *copy = xstrdup(list ? list : "deny"), *save = NULL;
	int ret = 0;

	f->any = true;
	/* "deny," or ",,": an empty selector is a typo, not "nothing". */
	if (!*copy || copy[0] == ',' || copy[strlen(copy) - 1] == ',' || strstr(copy, ",,")) {
		snprintf(bad, bad_size, "%s", list ? list : "");
		free(copy);
		return -EINVAL;
	}
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (strcmp(tok, "deny") == 0) {
			f->deny = true;
		} else if (strcmp(tok, "alert") == 0) {
			f->alert = true;
		} else if (fail_on_valid(tok)) {
			f->globs = xrealloc(f->globs, (f->n_globs + 1) * sizeof(*f->globs));
			f->globs[f->n_globs++] = xstrdup(tok);
		} else {
			snprintf(bad, bad_size, "%s", tok);
			ret = -EINVAL;
			break;
		}
	}
	free(copy);
	return ret;
}

bool fail_on_matches(const struct fail_on *f, enum rules_action action, const char *rule)
{
	if (!f->any || (action != RULES_ACTION_DENY && action != RULES_ACTION_ALERT))
		return false;
	if ((action == RULES_ACTION_DENY && f->deny) || (action == RULES_ACTION_ALERT && f->alert))
		return true;
	for (size_t i = 0; rule && i < f->n_globs; i++)
		if (match_glob(f->globs[i], rule))
			return true;
	return false;
}

void fail_on_free(struct fail_on *f)
{
	for (size_t i = 0; i < f->n_globs; i++)
		free(f->globs[i]);
	free(f->globs);
	memset(f, 0, sizeof(*f));
}
