/* What a program run is about to interpret: the script text that an
 * exec record carries. */
#ifndef AGENTTRACE_INSPECT_SCRIPT_H
#define AGENTTRACE_INSPECT_SCRIPT_H

#include <stddef.h>

/* The script an interpreter is about to run, capped to SIZE bytes: the
 * file SCRIPT (absolute: the identity's, tracer/inspect/identity.h) when
 * not NULL, else the inline code of sh -c TEXT, python -c TEXT, node -e
 * TEXT, perl -e TEXT, php -r TEXT (rules_interp_script()), else EXE
 * itself when it starts with "#!".  Returns the length, 0 when there is
 * none. */
size_t script_text(const char *exe, const char *const *argv, size_t argc, const char *script,
		   char *buf, size_t size);

#define SCRIPT_TEXT_MAX 4096

#endif
