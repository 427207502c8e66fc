/* The supervisor's side of the shim's channel (the wire format is
 * lib/channel-wire.h): the socket, the run dir and the policy blob, the
 * environment the command gets. */
#ifndef AGENTTRACE_CHANNEL_H
#define AGENTTRACE_CHANNEL_H

#include "lib/channel-wire.h"

/* ---- the supervisor side (tracer/shim/channel.c) ---- */

struct session;

/* Whether the command gets the shim, and where it is: the build tree
 * (next to the agenttrace binary, preload/) or $(pkglibdir).  Returns
 * NULL when none is found. */
const char *channel_find_preload(const struct session *s);

/* Called before the policy is loaded: makes the private run dir (0700,
 * owned by the command's user) when the preload backend is used, so that
 * the protection rules can name it. */
int channel_prepare(struct session *s);

/* After the policy is loaded: binds the socket, writes the policy blob
 * (preload backend), and exports the environment above into agenttrace's
 * own environment, which the command inherits.  0 or -errno. */
int channel_open(struct session *s);

/* After the mask plan, in a preload-only session with denied files that
 * have other names: writes them beside the policy blob for the shim
 * (CHANNEL_LINKED_NAME).  0 or -errno. */
int channel_write_linked(struct session *s);

/* --backend auto when ptrace cannot start: hand the shim the policy and
 * make it decide (s->preload_only).  0, or -errno when there is no shim. */
int channel_to_preload(struct session *s);

/* Reads every queued message without blocking: HOSTS go into the hosts
 * map; EVENT, SPAWN_ASK and SPAWN_DONE are the preload backend's records
 * and questions, passed to the session's channel_handler in a
 * preload-only session and dropped under ptrace, which sees those calls
 * itself (an unanswered ASK reads as "go on").  Every caller drains the
 * same way, whatever it waits for.  Returns the number read. */
int channel_drain(struct session *s);

/* True when a net event's unix path names the channel itself (the shim's
 * own messages are neither decided nor recorded). */
int channel_is_self(const struct session *s, const char *unix_path);

/* Close the socket, remove the blob and the run dir. */
void channel_close(struct session *s);

#endif
