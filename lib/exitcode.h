/* Exit codes are API (agenttrace(1), EXIT STATUS): one enum, one test
 * each.
 *
 * The one convention for status returns: a function that may end the run
 * (a start-up stage: options, the session's start, spawning the command)
 * returns AT_GO_ON to go on, or the exit status after it has said why.
 * Every other function returns 0 (or a count, a descriptor) on success
 * and -errno on failure. */
#ifndef AGENTTRACE_EXITCODE_H
#define AGENTTRACE_EXITCODE_H

enum at_exit {
	AT_GO_ON = -1,             /* not an exit status: the run goes on */
	AT_EXIT_OK = 0,
	/* --fail-on-alert: the command exited 0 but something was denied or
	 * alerted.  Chosen below 125 and outside the 128+N signal range. */
	AT_EXIT_ALERT = 124,
	AT_EXIT_FAILURE = 125,     /* agenttrace could not run: bad option, bad policy, cannot trace */
	AT_EXIT_NOEXEC = 126,      /* command found but not executable */
	AT_EXIT_NOTFOUND = 127,    /* command not found */
	AT_EXIT_SIGNAL_BASE = 128, /* + N when the command was killed by signal N */
};

#endif
