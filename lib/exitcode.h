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
	/* --fail-on-alert: the command exited 0, but something it did was
	 * denied (or alerted, as the option's LIST chose).  A status no
	 * common CI tool gives with another meaning (agenttrace(1), EXIT
	 * STATUS): not 1 or 2 (most tools' failures, make, grep), 3 to 5
	 * (pytest), 8 (ctest), 64 to 78 (sysexits.h), 77 and 99 (automake's
	 * skip and hard error), 100 (apt), up to 101 (curl; Rust panics),
	 * 124 to 127 (timeout(1), env(1), the shells), 128 + N (signals). */
	AT_EXIT_FAIL_ON = 113,
	AT_EXIT_FAILURE = 125,     /* agenttrace could not run: bad option, bad policy, cannot trace */
	AT_EXIT_NOEXEC = 126,      /* command found but not executable */
	AT_EXIT_NOTFOUND = 127,    /* command not found */
	AT_EXIT_SIGNAL_BASE = 128, /* + N when the command was killed by signal N */
};

#endif
