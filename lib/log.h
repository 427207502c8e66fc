/* Diagnostics of the programs: "agenttrace: " prefix, errno text, hints.
 * Library code (rules/) never calls these: it returns errors. */
#ifndef AGENTTRACE_LOG_H
#define AGENTTRACE_LOG_H

#include <stdarg.h>

/* The program name printed before every message; set once by main(). */
void log_set_program(const char *name);
/* 0 quiet, 1 normal, 2 verbose (-v), 3 debug. */
void log_set_level(int level);
int log_level(void);

/* "agenttrace: TEXT" whatever the level: an error (before exit 125, or a
 * call that failed), or a line of agenttrace's own output on stderr (an
 * alert's human line, the summary at -v). */
void error_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void out_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void warn_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void warn_errno(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void info_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void debug_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Exit with AT_EXIT_FAILURE (125) after the message. */
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void die_errno(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* A second line starting "Hint: ", printed after an error. */
void hint_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Gives this process a stderr of its own when stderr is a pipe, a FIFO or
 * a terminal: the same one, reopened, so that a child sharing the
 * original cannot make these lines fail by setting O_NONBLOCK on it.
 * Returns a close-on-exec duplicate of the original, which the child
 * puts back at 2 (dup2()) before it runs its program, or -1 when stderr
 * was left as it was. */
int log_own_stderr(void);

#endif
