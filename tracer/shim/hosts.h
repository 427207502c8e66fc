/* The address -> host name map of a session: fed by the shims' HOSTS
 * messages (the names programs resolved through libc) and by agenttrace's
 * own lookups of the host names in the policy's allow rules (for programs
 * without the shim: static, Go).  At a connect the supervisor asks it for
 * the name of the address, so that "net" rules written with host names
 * (and "*." wildcards) match, and records carry "host".
 *
 * A bounded ring: the most recent answers win (an address may serve many
 * names, e.g. a CDN; the name a program asked for last is the best guess
 * for its next connect). */
#ifndef AGENTTRACE_HOSTS_H
#define AGENTTRACE_HOSTS_H

#include <stdint.h>

#include "tracer/shim/channel.h"

#define HOSTS_CAPACITY 1024
#define HOSTS_REFRESH_MS 60000 /* getaddrinfo gives no TTL: re-resolve this often */
#define HOSTS_FIRST_WAIT_MS 500 /* how long the first lookups may delay the start */

struct hosts;
struct session;

struct hosts *hosts_new(void);
void hosts_free(struct hosts *h);

/* Remember that NAME resolved to ADDR (family AF_INET or AF_INET6). */
void hosts_add(struct hosts *h, const char *name, int family, const uint8_t addr[16],
	       enum channel_source source);

/* The most recent name for ADDR (an IPv4-mapped IPv6 address is looked up
 * as IPv4 too), or NULL; *source tells where it came from.  The string
 * lives until the next hosts_add(). */
const char *hosts_lookup(const struct hosts *h, int family, const uint8_t addr[16],
			 enum channel_source *source);

/* Resolve the policy's allow rules that name a host (no wildcard) in a
 * child process of agenttrace, whose answers arrive as HOSTS messages on
 * the channel: a slow or dead resolver never delays the command or the
 * supervisor.  Does it again when HOSTS_REFRESH_MS have passed since the
 * last time (call it at net stops).  Returns the number of names. */
int hosts_resolve(struct session *s);

#endif
