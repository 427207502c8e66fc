#include <stdio.h>
#include <stdlib.h>

#include "lib/testknob.h"

static const char *test_knob_value(const char *name)
{
	char var[64];

	if ((size_t)snprintf(var, sizeof(var), "AGENTTRACE_TEST_%s", name) >= sizeof(var))
		return NULL;
	return getenv(var);
}

long test_knob(const char *name, long dflt, long min, long max)
{
	const char *v = test_knob_value(name);
	char *end;
	long n;

	if (!v || !*v)
		return dflt;
	n = strtol(v, &end, 10);
	return *end || n < min || n > max ? dflt : n;
}

bool test_knob_set(const char *name)
{
	const char *v = test_knob_value(name);

	return v && *v;
}

const char *test_knob_text(const char *name)
{
	const char *v = test_knob_value(name);

	return v && *v ? v : NULL;
}
