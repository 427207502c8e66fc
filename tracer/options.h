/* The command line of agenttrace (agenttrace(1)), parsed and validated.  Kept in
 * sync with man/agenttrace.1. */
#ifndef AGENTTRACE_OPTIONS_H
#define AGENTTRACE_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracer/record/fail-on.h"

/* --backend (agenttrace(1)). */
enum options_backend {
	OPTIONS_BACKEND_AUTO = 0,  /* ptrace, with the shim for host names */
	OPTIONS_BACKEND_PTRACE,    /* ptrace alone, no shim */
	OPTIONS_BACKEND_PRELOAD,   /* the shim alone (bypassable) */
};

/* --engine: how the supervisor receives the calls the filter sends it. */
enum options_engine {
	OPTIONS_ENGINE_AUTO = 0,   /* notify where the kernel has the sync wake-up, else ptrace */
	OPTIONS_ENGINE_NOTIFY,     /* seccomp user notification */
	OPTIONS_ENGINE_PTRACE,     /* ptrace seccomp stops */
};

enum options_landlock {
	OPTIONS_LANDLOCK_AUTO = 0,
	OPTIONS_LANDLOCK_ON,
	OPTIONS_LANDLOCK_OFF,
};

/* --mask: the command's own mount namespace (tracer/confine/mask.h). */
enum options_mask {
	OPTIONS_MASK_AUTO = 0,
	OPTIONS_MASK_ON,
	OPTIONS_MASK_OFF,
};

/* One repeatable option's values, in command-line order. */
struct options_list {
	const char **v;
	size_t n;
};

struct options {
	struct options_list policies;    /* -p NAME|FILE */
	int mode;                        /* -1 = from the policy, else enum rules_mode */
	const char *log;                 /* -o FILE */
	bool record;
	struct options_list allow_net;
	struct options_list allow_write;
	struct options_list allow_exec;
	struct options_list allow_read;
	const char *root;
	enum options_backend backend;
	enum options_engine engine;
	struct fail_on fail_on;          /* --fail-on-alert[=LIST] */
	bool syslog;             /* --syslog: alerts to syslog as well */
	uint64_t timeout_ms;             /* 0 = unset */
	uint64_t max_procs;
	uint32_t max_procs_percent; /* --max-procs N%: a share of the kernel's task limit */
	uint64_t max_memory;             /* bytes */
	uint32_t max_memory_percent;     /* of the machine's memory, instead */
	uint64_t max_cpu;                /* seconds */
	const char *user;
	uint64_t keep_caps;              /* --keep-caps: 0 = the default set (caps.h) */
	bool private_tmp;
	enum options_landlock landlock;
	enum options_mask mask;
	bool explain;
	bool doctor;                     /* --doctor: the machine's report, no command */
	bool no_project_policy;          /* --no-project-policy */
	bool trust_project_policy;       /* --trust-project-policy */
	const char *evidence;            /* --evidence DIR; NULL: none */
	const char *context;             /* NULL: context_default() */
	int verbosity;                   /* 0 -q, 1 normal, 2 -v, 3 -vv */
	char **command;                  /* NULL-terminated; NULL with --explain */
};

/* Parse argv into *o.  Returns AT_GO_ON when the program should go on, or
 * an exit status when it is done (0 after --help/--version, 125 after a
 * usage error, which has been printed with a hint). */
int options_parse(int argc, char **argv, struct options *o);

void options_free(struct options *o);

/* The --context default (context.c): $AGENTTRACE_CONTEXT, else the CI job
 * (GitHub Actions: "$GITHUB_WORKFLOW/$GITHUB_JOB", GitLab: "$CI_JOB_NAME"),
 * else NULL.  Returns a malloc'ed string or NULL. */
char *context_default(void);

#endif
