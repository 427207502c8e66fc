/* agenttrace-policy learn and replay, as functions that tools/policy.c
 * dispatches to (libpolicytools.a).  Each takes the subcommand's own
 * argv: argv[0] is the subcommand name ("learn", "replay"), its options
 * and LOG follow, as main() would get them; getopt is reset inside.
 * Each prints its own messages and returns the exit status:
 *
 *   learn_main:  0 policy written, 125 bad usage, unreadable log, or a
 *                log with nothing to learn from (no --record records).
 *   replay_main: 0 no event decided differently, 1 some were (listed on
 *                standard output), 125 bad usage, unreadable log, bad
 *                policy.
 *
 * Documented in agenttrace-policy(1). */
#ifndef AGENTTRACE_TOOLS_LEARN_H
#define AGENTTRACE_TOOLS_LEARN_H

int learn_main(int argc, char **argv);
int replay_main(int argc, char **argv);

/* Shared by both: the project root a recorded run most likely had, the
 * "cwd" of its summary record (agenttrace's own directory, the default
 * ${ROOT}), else the cwd of its first record.  Malloc'ed; NULL when the
 * log names none or cannot be read. */
char *learn_log_root(const char *log);

#endif
