/* Puts the shim back into the environment of a child whose program
 * dropped it (env -i, execve with a fresh envp, clearenv()).  Runs in
 * vfork children and between fork and exec: the copy lives in the
 * caller's stack buffers, nothing is allocated, nothing is locked. */
#include <string.h>

#include "preload/shim.h"

static bool envfix_has_name(const char *entry, const char *name_eq, size_t n)
{
	return strncmp(entry, name_eq, n) == 0;
}

/* True when the LD_PRELOAD value (after "=") lists this library. */
static bool envfix_preload_has_self(const char *value)
{
	size_t self = strlen(shim.self);
	const char *p = value;

	while (*p) {
		size_t n = strcspn(p, ": ");

		if (n == self && memcmp(p, shim.self, n) == 0)
			return true;
		p += n;
		if (*p)
			p++;
	}
	return false;
}

/* Which of the four entries ENVP lacks or has wrong. */
struct envfix_need {
	bool preload, channel, backend, blob;
	const char *old_preload; /* the entry to extend, or NULL */
};

static bool envfix_check(char *const *envp, struct envfix_need *need)
{
	bool seen_preload = false, seen_channel = false, seen_backend = false, seen_blob = false;

	memset(need, 0, sizeof(*need));
	for (char *const *e = envp; e && *e; e++) {
		if (envfix_has_name(*e, "LD_PRELOAD=", 11)) {
			seen_preload = true;
			if (!envfix_preload_has_self(*e + 11)) {
				need->preload = true;
				need->old_preload = *e;
			}
		} else if (envfix_has_name(*e, "AGENTTRACE_", 11)) {
			if (shim.env_channel[0] && envfix_has_name(*e, "AGENTTRACE_CHANNEL=", 19)) {
				seen_channel = true;
				need->channel |= strcmp(*e, shim.env_channel) != 0;
			} else if (shim.env_backend[0] && envfix_has_name(*e, "AGENTTRACE_BACKEND=", 19)) {
				seen_backend = true;
				need->backend |= strcmp(*e, shim.env_backend) != 0;
			} else if (shim.env_blob[0] &&
				   envfix_has_name(*e, "AGENTTRACE_POLICY_BLOB=", 23)) {
				seen_blob = true;
				need->blob |= strcmp(*e, shim.env_blob) != 0;
			}
		}
	}
	need->preload |= !seen_preload;
	need->channel |= shim.env_channel[0] && !seen_channel;
	need->backend |= shim.env_backend[0] && !seen_backend;
	need->blob |= shim.env_blob[0] && !seen_blob;
	return need->preload || need->channel || need->backend || need->blob;
}

char *const *envfix(char *const *envp, char **out, size_t cap, char *buf, size_t size)
{
	struct envfix_need need;
	size_t n = 0, used;

	if (shim.mode == SHIM_OFF || !envfix_check(envp, &need))
		return envp;
	/* "LD_PRELOAD=" self [":" old value] */
	used = 11 + strlen(shim.self) + 1;
	if (need.old_preload)
		used += strlen(need.old_preload + 11) + 1;
	if (used > size)
		return envp;
	memcpy(buf, "LD_PRELOAD=", 11);
	strcpy(buf + 11, shim.self);
	if (need.old_preload && need.old_preload[11]) {
		strcat(buf, ":");
		strcat(buf, need.old_preload + 11);
	}
	for (char *const *e = envp; e && *e; e++) {
		if ((need.preload && envfix_has_name(*e, "LD_PRELOAD=", 11)) ||
		    (need.channel && envfix_has_name(*e, "AGENTTRACE_CHANNEL=", 19)) ||
		    (need.backend && envfix_has_name(*e, "AGENTTRACE_BACKEND=", 19)) ||
		    (need.blob && envfix_has_name(*e, "AGENTTRACE_POLICY_BLOB=", 23)))
			continue;
		if (n + 5 >= cap)
			return envp;
		out[n++] = *e;
	}
	if (need.preload)
		out[n++] = buf;
	if (need.channel)
		out[n++] = shim.env_channel;
	if (need.backend)
		out[n++] = shim.env_backend;
	if (need.blob)
		out[n++] = shim.env_blob;
	out[n] = NULL;
	return out;
}
