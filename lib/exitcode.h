/* Exit codes are API (SPEC §3): one enum, one test each. */
#ifndef AGENTTRACE_EXITCODE_H
#define AGENTTRACE_EXITCODE_H

enum at_exit {
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
