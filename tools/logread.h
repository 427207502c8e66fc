/* The JSON Lines reader shared by agenttrace-report and agenttrace-policy
 * learn / replay.  A log may be cut short (a killed run), hold lines from
 * another program, or be appended to while it is read: every line that is
 * not a record (doc/RECORDS.md: a JSON object with "v": 1 and an "event") is
 * counted and passed to the caller's report callback, then skipped.  A
 * line longer than LOGREAD_MAX_LINE is skipped without being held in
 * memory.  Nothing here exits or prints. */
#ifndef AGENTTRACE_TOOLS_LOGREAD_H
#define AGENTTRACE_TOOLS_LOGREAD_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Records carry argv (64 KiB of strings), a script (4 KiB) and a
 * backtrace; escaping can quadruple them.  Anything far beyond is not a
 * record of ours. */
#define LOGREAD_MAX_LINE (4u * 1024 * 1024)

/* One record.  Strings are borrowed from json and NULL when the key is
 * absent or not a string; numbers are -1 when absent. */
struct logrec {
	json_t *json;            /* the whole record */
	size_t line;             /* 1-based line number in the log */
	const char *event;       /* never NULL */
	const char *time;
	int64_t time_ms;         /* time as ms since the epoch, -1 when unreadable */
	const char *session;
	int64_t seq;
	long pid;
	long ppid;
	const char *exe;
	const json_t *argv;      /* array or NULL */
	const char *cwd;
	const char *action;
	const char *mode;
	const char *kind;
	const char *syscall;
	const char *path;
	const char *path2;
	const char *flags;
	const char *addr;
	long port;
	const char *family;
	const char *host;
	const char *target;
	const json_t *target_argv; /* array or NULL */
	const char *loader;      /* exec: agenttrace-policy(5), "Exec identity" */
	const char *script_path;
	const char *script_sha256;
	const char *program_sha256;
	const json_t *evidence;  /* array of the copies kept (--evidence), or NULL */
	const char *program_name;
	const char *err;         /* "errno" */
	const char *rule;        /* a string, or the "id" of an object */
	const char *why;
	const char *suggest;
	const char *content;     /* a replacement the supervisor made: the check it passed */
	const char *context;
	const char *backend;
	const char *script;
	const json_t *backtrace; /* array or NULL */
	bool has_exit;           /* an "exit_code" key, even null */
	long exit_code;          /* -1: null (killed) */
	long signal;             /* 0: none */
};

/* Called for each skipped line: why is a short phrase ("not JSON: ...",
 * "line longer than 4194304 bytes", "truncated last line"). */
typedef void (*logread_bad_fn)(const char *name, size_t line, const char *why, void *arg);

struct logread {
	FILE *f;
	bool own;                /* f is ours to close */
	char *name;              /* for messages */
	char *buf;
	size_t cap;
	size_t line;             /* lines read so far */
	size_t records;          /* records returned */
	size_t malformed;        /* lines skipped */
	logread_bad_fn bad;
	void *bad_arg;
	struct logrec rec;
};

/* Open PATH ("-" is standard input).  Returns 0 or -errno. */
int logread_open(struct logread *lr, const char *path);
/* Read from an open stream (not closed by logread_close). */
void logread_init_stream(struct logread *lr, FILE *f, const char *name);

void logread_set_bad(struct logread *lr, logread_bad_fn fn, void *arg);

/* The next record: 1 and *out (valid until the next call), 0 at the end,
 * -errno on a read error. */
int logread_next(struct logread *lr, const struct logrec **out);

void logread_close(struct logread *lr);

/* "2026-11-30T00:54:02.464Z" (RFC 3339, UTC or an offset) -> ms since the
 * epoch; -1 when it is not such a time. */
int64_t logread_time_ms(const char *s);

/* Element i of a JSON array of strings, NULL when absent or not a string. */
const char *logread_argv_at(const json_t *argv, size_t i);

/* The base name of a path ("" stays ""). */
const char *logread_base(const char *path);

#endif
