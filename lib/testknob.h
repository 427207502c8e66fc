/* The AGENTTRACE_TEST_* environment knobs: settings for the test suite
 * only (doc/HOWTO_TEST.md lists every one), never needed by users.  Read
 * here and nowhere else, so that a grep finds every way a test bends the
 * program. */
#ifndef AGENTTRACE_LIB_TESTKNOB_H
#define AGENTTRACE_LIB_TESTKNOB_H

#include <stdbool.h>

/* AGENTTRACE_TEST_<NAME> as a decimal number in [min, max]; DFLT when it
 * is unset, empty or out of range. */
long test_knob(const char *name, long dflt, long min, long max);

/* AGENTTRACE_TEST_<NAME> as text; NULL when unset or empty. */
const char *test_knob_text(const char *name);

/* Whether AGENTTRACE_TEST_<NAME> is set to a non-empty value. */
bool test_knob_set(const char *name);

#endif
