/* The supervisor's own signals (signals.c): what is blocked, what is
 * passed on to the command, how the loops wait.  Both backends. */
#ifndef AGENTTRACE_SIGNALS_H
#define AGENTTRACE_SIGNALS_H

#include <sys/types.h>

/* Blocks SIGCHLD and the signals agenttrace forwards (INT TERM HUP QUIT),
 * and SIGPIPE (a closed stderr must not kill the supervisor), keeping the
 * original mask for the child.  Call before spawn_command(). */
void signals_setup(void);

/* Once the command runs: a handler passes the forwarded signals that a
 * process sent to agenttrace on to MAIN_PID, and they are unblocked (those
 * that came meanwhile are passed on now).  Returns 0 or -errno. */
int signals_forward_start(pid_t main_pid);

/* The main process is gone: forward nothing more. */
void signals_forward_stop(void);

/* In the child before exec: the mask the user gave agenttrace. */
void signals_child_reset(void);

/* Waits up to timeout_ms (-1: no deadline; at most 1 s) for SIGCHLD or a
 * forwarded signal's handler.  Returns when something may be ready. */
void signals_wait(long timeout_ms);

#endif
