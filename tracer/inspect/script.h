/* What a program run is about to interpret: the script text that an
 * exec record carries. */
#ifndef AGENTTRACE_INSPECT_SCRIPT_H
#define AGENTTRACE_INSPECT_SCRIPT_H

#include <stddef.h>
#include <sys/types.h>

/* The script an interpreter is about to run (sh -c TEXT, python -c TEXT,
 * node -e TEXT, perl -e TEXT, or a script file given to an interpreter or
 * exec'ed through "#!"), capped to size bytes; file paths resolve against
 * CWD (NULL: the process's own).  Returns the length, 0 when there is none. */
size_t script_text(pid_t pid, const char *cwd, const char *exe, const char *const *argv,
		   size_t argc, char *buf, size_t size);

#define SCRIPT_TEXT_MAX 4096

#endif
