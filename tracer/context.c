#include <stdlib.h>

#include "lib/xalloc.h"
#include "tracer/options.h"

static const char *context_env(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

char *context_default(void)
{
	const char *v, *workflow, *job;

	v = context_env("AGENTTRACE_CONTEXT");
	if (v)
		return xstrdup(v);
	/* CI runners name the step being run; an alert is only useful when
	 * it says which job raised it. */
	if (context_env("GITHUB_ACTIONS")) {
		workflow = context_env("GITHUB_WORKFLOW");
		job = context_env("GITHUB_JOB");
		if (workflow && job)
			return xasprintf("%s/%s", workflow, job);
		if (workflow || job)
			return xstrdup(workflow ? workflow : job);
		return NULL;
	}
	if (context_env("GITLAB_CI")) {
		v = context_env("CI_JOB_NAME");
		return v ? xstrdup(v) : NULL;
	}
	return NULL;
}
