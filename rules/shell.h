/* The shell language, as far as an exec rule's "script" key needs it
 * (agenttrace-policy(5), SCRIPT SHAPES): does a shell's -c command string
 * download code and run it?
 *
 * Part of librules-match.a, so the rules of rules.h hold: no allocation,
 * no locks, no mutable globals, no stdio; every function is
 * async-signal-safe (the preload shim runs it inside arbitrary programs,
 * possibly in a vfork child).  State is fixed-size: the caller lends an
 * arena for word values and nested texts, nesting and text lengths are
 * bounded, and what cannot be parsed within the bounds is reported as
 * SHELL_UNPARSED for the caller to fail closed on.  A parse takes at
 * most about 13 KiB of stack, the 4 KiB arena of match-script.c included
 * (gcc -O2 and -O0, the deepest nestings the bounds allow).
 *
 * Three files: shell-names.c (which command names download, interpret or
 * wrap another command, and the word scan used when parsing fails),
 * shell-command.c (one simple command's words: assignments, wrappers,
 * how an interpreter is told where its program is), shell-parse.c (the
 * grammar: lists, pipelines, compound commands, quoting, substitutions,
 * here-documents, and the pipeline data flow). */
#ifndef AGENTTRACE_RULES_SHELL_H
#define AGENTTRACE_RULES_SHELL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bounds (agenttrace-policy(5) documents them). */
#define SHELL_TEXT_MAX (64 * 1024) /* bytes of one top-level command string */
#define SHELL_MAX_DEPTH 16         /* nested constructs: ( ) { } $( ) if ... */
#define SHELL_MAX_TEXTS 4          /* texts inside texts: sh -c "bash -c '...'" */
#define SHELL_HEREDOCS 8           /* here-documents pending on one line */
#define SHELL_DELIM_MAX 64         /* bytes of a here-document delimiter */
#define SHELL_ARENA_SIZE 4096      /* what match-script.c lends the parser */
#define SHELL_VARS 8               /* variables known to hold a download */
#define SHELL_VAR_NAME_MAX 32      /* bytes of such a variable's name */

/* ---- names (shell-names.c) ---- */

/* What runs a program it is given, by the family of its options. */
enum shell_family {
	SHELL_FAM_NONE = 0,
	SHELL_FAM_SHELL,  /* sh bash dash zsh ksh mksh ash yash fish csh ... */
	SHELL_FAM_PYTHON, /* python python3 python3.12 pypy3 */
	SHELL_FAM_NODE,   /* node nodejs */
	SHELL_FAM_PERL,   /* perl perl5.36 */
	SHELL_FAM_RUBY,   /* ruby ruby3.1 */
	SHELL_FAM_PHP,    /* php php8.2 */
	SHELL_FAM_LUA,    /* lua lua5.4 luajit */
};

/* A command that runs another one given as its operand, and how its
 * options are read. */
struct shell_wrapper {
	const char *name;
	const char *arg_opts;          /* short options that take a value */
	const char *const *long_args;  /* long options that take a value (NULL-terminated) */
	uint8_t operands;              /* operands before the command (timeout's DURATION) */
	uint8_t flags;                 /* SHELL_WRAP_* */
};

enum {
	SHELL_WRAP_ASSIGN = 1, /* NAME=VALUE words before the command (env, sudo) */
	SHELL_WRAP_SUDO = 2,   /* -s/-i alone run a shell; -e -l -v -k -K -V run nothing */
	SHELL_WRAP_LOOKUP = 4, /* -v/-V only look the name up (command) */
	SHELL_WRAP_APPLET = 8, /* the next word is the program (busybox) */
};

/* The base name of a command word (after the last '/'). */
const char *shell_base(const char *s, size_t n, size_t *base_len);
/* By base name: curl, wget, wget2, fetch, aria2c, ... */
bool shell_name_downloads(const char *s, size_t n);
enum shell_family shell_name_family(const char *s, size_t n);
const struct shell_wrapper *shell_name_wrapper(const char *s, size_t n);

/* The fail-closed scan of a text that could not be parsed: the words of
 * TEXT (runs of letters, digits and "_.+-", as the base name of a path)
 * name a downloader (*downloads) and an interpreter (*interprets). */
void shell_scan_words(const char *text, size_t len, bool *downloads, bool *interprets);

/* ---- one simple command (shell-command.c) ---- */

/* Where an interpreter's program comes from, as its options say. */
enum shell_prog {
	SHELL_PROG_UNSET = 0, /* nothing named yet: stdin (or xargs' input) */
	SHELL_PROG_STDIN,     /* "-", -s, /dev/stdin */
	SHELL_PROG_TEXT,      /* -c TEXT, -e CODE, eval ARGS */
	SHELL_PROG_FILE,      /* a script file (or <(...)) */
	SHELL_PROG_MODULE,    /* python -m MODULE */
};

enum shell_kind {
	SHELL_KIND_NONE = 0,   /* no command word (yet) */
	SHELL_KIND_OTHER,      /* runs, but neither downloads nor interprets */
	SHELL_KIND_DOWNLOADER,
	SHELL_KIND_INTERP,     /* family says which */
	SHELL_KIND_EVAL,
	SHELL_KIND_SOURCE,     /* source, . */
	SHELL_KIND_LOOKUP,     /* command -v NAME: runs nothing */
};

/* What a word is to its command. */
enum shell_role {
	SHELL_ROLE_ASSIGN,  /* NAME=VALUE before the command */
	SHELL_ROLE_WRAPPER, /* a wrapper, its options or their values */
	SHELL_ROLE_COMMAND, /* the command word proper */
	SHELL_ROLE_OPTION,  /* an option of the command, or its value */
	SHELL_ROLE_TEXT,    /* a program text: sh -c TEXT, python -c CODE, eval ARG */
	SHELL_ROLE_FILE,    /* the program's file: sh FILE, source FILE */
	SHELL_ROLE_DATA,    /* anything else: arguments are data */
};

struct shell_cmd {
	uint8_t phase;      /* private: shell-command.c */
	uint8_t kind;       /* enum shell_kind */
	uint8_t family;     /* enum shell_family, for SHELL_KIND_INTERP */
	uint8_t prog;       /* enum shell_prog */
	uint8_t skip;       /* option values still to skip */
	uint8_t operands;   /* wrapper operands seen */
	uint8_t next;       /* private: what the next word is */
	bool end_opts;      /* "--" seen */
	bool shell_c;       /* a shell's -c seen: its first operand is the text */
	bool shell_s;       /* a shell's -s seen */
	bool sudo_shell;    /* sudo -s / -i */
	const struct shell_wrapper *wrapper;
};

void shell_cmd_init(struct shell_cmd *c);
/* One word of the command, in order.  VALUE is the word after quote
 * removal, NULL when the word holds an expansion or did not fit (its
 * value is not known before it runs); ASSIGN says that it has the
 * NAME=VALUE form with the '=' unquoted. */
enum shell_role shell_cmd_word(struct shell_cmd *c, const char *value, size_t len, bool assign);
/* At the end of the command's words: settles what the words left open
 * (sudo -s alone runs a shell; a shell with no operand reads stdin). */
void shell_cmd_end(struct shell_cmd *c);
/* The command reads the program it runs from its stdin (or, after
 * xargs, from its input): an interpreter or "source" with no program
 * named (fish's "source" alone), "-", -s, /dev/stdin. */
bool shell_cmd_reads_program(const struct shell_cmd *c);

/* ---- the parser (shell-parse.c) ---- */

enum shell_result {
	SHELL_CLEAN = 0,           /* parsed: no download-and-run */
	SHELL_DOWNLOAD_AND_RUN,    /* parsed: a downloader feeds an interpreter */
	SHELL_UNPARSED,            /* too long, too deep, unbalanced or not shell */
};

struct shell_report {
	enum shell_result result;
	const char *why; /* SHELL_UNPARSED: a static phrase; else NULL */
	size_t at;       /* SHELL_UNPARSED: byte offset in the top-level text */
};

/* Parse TEXT (LEN bytes, a shell's command string) with ARENA (SIZE
 * bytes, at least 256) as scratch space.  Returns the result, also in
 * *out when OUT is not NULL.  A run-time value (a variable, a
 * substitution's output) is never guessed: only what the text says. */
enum shell_result shell_download_and_run(const char *text, size_t len, char *arena, size_t size,
					 struct shell_report *out);

/* The command string of a shell's argv (argv[0] is the shell, or
 * "busybox" followed by the applet when APPLET): the first operand after
 * options that include 'c' (-c, -ec, -o pipefail -c, --norc -c ...).
 * NULL when the shell was given no -c. */
const char *shell_argv_command_string(const char *const *argv, size_t argc, bool applet);

#endif
