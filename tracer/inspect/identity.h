/* Which program an exec runs, in the calling process's view
 * (agenttrace-policy(5), "Exec identity"): the program the dynamic loader
 * runs (ld.so [OPTIONS] PROG ARGS), the script an interpreter runs, and
 * the names node's package.json "bin" gives them.  The supervisor's half:
 * rules/identity.c reads the command line, this resolves the paths and
 * reads package.json; the preload shim does the same without package.json
 * (preload/wrap-exec.c).  judge_decide() fills the rules_event from it. */
#ifndef AGENTTRACE_INSPECT_IDENTITY_H
#define AGENTTRACE_INSPECT_IDENTITY_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "rules/rules.h"

#define IDENTITY_NAME_MAX 256
/* ld.so ld.so ... PROG: as many loaders as this are looked through. */
#define IDENTITY_LOADER_DEPTH 4
#define IDENTITY_OPENS (IDENTITY_LOADER_DEPTH + 1)

struct identity {
	/* What is judged: the program and the argv it gets (from PROG on
	 * when the loader runs it); pointers into the exec's own argv or
	 * the buffers below. */
	const char *exe;
	const char *const *argv;
	size_t argc;
	const char *loader;      /* the loader that runs exe; NULL: none */
	const char *script;      /* the script file exe interprets; NULL: none */
	size_t script_arg;       /* argv[script_arg] named it */
	const char *exe_name;    /* package.json names: NULL when none */
	const char *script_name;
	/* The caller is the "#!" script itself, its interpreter started
	 * through env (#!/usr/bin/env node): the script was judged, with
	 * the same arguments, at the caller's own exec.  Recorded, not
	 * judged again (one npm install, one alert). */
	bool script_judged;
	/* The files the program run opens itself by names it was given
	 * (execid.h, struct exec_pin): each loader's program and the
	 * interpreter's script (the last, when SCRIPT is set), each as given
	 * and as resolved. */
	const char *opens_text[IDENTITY_OPENS];
	unsigned n_opens;
	char opens_path[IDENTITY_OPENS][PATH_MAX];
	/* The interpreter searches for its script (rules_interp_lookup()):
	 * the digest of the environment entries the search read, which the
	 * exec must start with (execid.h, exec_env_matches()). */
	bool env_searched;
	char env_sha[65];

	char exe_buf[PATH_MAX];
	char loader_buf[PATH_MAX];
	char script_buf[PATH_MAX];
	char search_buf[PATH_MAX]; /* the name a search found, as opened */
	char exe_name_buf[IDENTITY_NAME_MAX];
	char script_name_buf[IDENTITY_NAME_MAX];
};

/* The program who runs the caller, for script_judged; all NULL/0 when
 * unknown. */
struct identity_caller {
	const char *exe;
	const char *const *argv;
	size_t argc;
};

/* The environment an exec gives the program: the array of pointers at
 * ENVP in the caller's memory (0: not known, no search is judged). */
struct identity_env {
	unsigned long envp;
};

/* The identity of an exec of EXE (resolved) with ARGV by process PID
 * (paths relative to its working directory, resolved in its view) into
 * ID.  CALLER and ENV may be NULL. */
void identity_of_exec(struct identity *id, pid_t pid, const char *exe, const char *const *argv,
		      size_t argc, const struct identity_caller *caller,
		      const struct identity_env *env);

/* An identity whose paths a backend resolved itself (the preload shim):
 * EXE already the program run, LOADER and SCRIPT absolute or NULL,
 * SCRIPT_ARG its index in ARGV.  Only the package names are looked up. */
void identity_of_resolved(struct identity *id, const char *exe, const char *const *argv,
			  size_t argc, const char *loader, const char *script, size_t script_arg);

/* EV (an exec event) as ID judges it: its program, argv and names. */
void identity_apply(const struct identity *id, struct rules_event *ev);

/* The name node's package.json "bin" gives FILE (absolute), into OUT
 * (IDENTITY_NAME_MAX bytes): the nearest package.json above a file named
 * *.js, *.cjs, *.mjs or lying below a node_modules directory, at most
 * four directories up and never above a node_modules package's own
 * directory.  False when there is none, or it is FILE's own base name. */
bool identity_package_bin(const char *file, char *out);

/* The dynamic loader's resolved path: /bin/sh's ELF interpreter, read
 * once; "" when there is none. */
const char *identity_system_loader(void);

#endif
