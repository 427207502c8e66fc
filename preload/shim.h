/* The shim's process-wide state, set once by the constructor (shim.c)
 * from the environment agenttrace gave the command, and read-only after. */
#ifndef AGENTTRACE_PRELOAD_SHIM_H
#define AGENTTRACE_PRELOAD_SHIM_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "rules/rules.h"
#include "lib/channel-wire.h"

enum shim_mode {
	SHIM_OFF = 0,    /* no agenttrace environment: call through, nothing else */
	SHIM_HOSTS,      /* ptrace backend: report host names, keep the env in children */
	SHIM_DECIDE,     /* preload backend: decide in-process as well */
};

#define SHIM_ENV_MAX (PATH_MAX + 64)

/* Zero-initialised data that every process writes at start-up: placed in
 * .data, whose page the loader writes anyway, instead of .bss, where each
 * page touched is one more page fault per process (doc/INTERNALS.md, "What a start and an exec cost"). */
#define SHIM_HOT __attribute__((section(".data")))

/* Field order matters: the constructor writes mode, channel and the
 * short env copies, all in the struct's first page, then the starts of
 * env_blob and self, in one more: two page faults per process where the
 * three PATH_MAX-sized copies side by side took four. */
struct shim_state {
	enum shim_mode mode;
	const struct rules_policy *policy; /* SHIM_DECIDE: the mapped blob */
	/* SHIM_DECIDE: the denied files with other names, mapped and
	 * checked (lib/channel-wire.h); NULL: none */
	const struct channel_linked_head *linked;
	unsigned channel_len;
	char channel[108];                 /* sun_path of the channel ("\0agenttrace-..") */
	/* "NAME=value" as agenttrace set them, put back into children; ""
	 * when unset or too long. */
	char env_channel[sizeof(CHANNEL_ENV_CHANNEL "=") + 108];
	char env_backend[sizeof(CHANNEL_ENV_BACKEND "=") + 16];
	char env_blob[SHIM_ENV_MAX];
	char self[PATH_MAX];               /* this library's path */
};

extern struct shim_state shim;

/* Runs the constructor's work if it has not run yet (a wrapper called by
 * another library's constructor first). */
void shim_init(void);

static inline bool shim_deciding(void)
{
	if (__builtin_expect(shim.mode == SHIM_OFF && !shim.self[0], 0))
		shim_init();
	return shim.mode == SHIM_DECIDE;
}

static inline bool shim_active(void)
{
	if (__builtin_expect(shim.mode == SHIM_OFF && !shim.self[0], 0))
		shim_init();
	return shim.mode != SHIM_OFF;
}

/* ---- envfix.c ---- */

/* ENVP, or when it lacks the shim (LD_PRELOAD without this library, or an
 * AGENTTRACE_* variable missing or changed) a copy with them put back,
 * built in the caller's OUT (cap entries) and BUF (size bytes): no malloc,
 * safe in a vfork child.  Returns ENVP when nothing needs fixing or the
 * copy does not fit. */
char *const *envfix(char *const *envp, char **out, size_t cap, char *buf, size_t size);

#define ENVFIX_CAP 2048
#define ENVFIX_BUF (PATH_MAX * 2)

#endif
