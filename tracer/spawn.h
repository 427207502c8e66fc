/* Starting the command under the supervisor (spawn.c). */
#ifndef AGENTTRACE_SPAWN_H
#define AGENTTRACE_SPAWN_H

#include <stdbool.h>

#include "tracer/confine/caps.h"
#include "tracer/session.h"

/* The command runs as root: no --user, agenttrace run as root, or
 * --user root. */
bool spawn_runs_as_root(const struct session *s);

/* The capabilities a root command keeps: --keep-caps added to the
 * default set (caps.h). */
caps_set spawn_caps_kept(const struct session *s);

/* The why of the user.root warning: that the command runs as root, with
 * which capabilities.  A static buffer. */
const char *spawn_root_warning(const struct session *s);

/* Fork the command, seize it, and let it go on to install the filter, run
 * the canary and exec.  Returns -1 when the command is started
 * (s->main_pid set, its task in the table), or an exit status after a
 * message (125: ptrace could not start). */
int spawn_command(struct session *s);

/* After the main process ended: -1 when the command really ran, or the
 * exit status of a failure before or at exec (125 setup, 126 not
 * executable, 127 not found), reported from the child through a CLOEXEC
 * pipe and printed here. */
int spawn_outcome(struct session *s);

#endif
