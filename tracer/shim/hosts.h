/* The address -> host name map of a session: fed by the shims' HOSTS
 * messages (the names programs resolved through libc) and by agenttrace's
 * own lookups of the host names in the policy's allow rules (resolver.h;
 * for programs without the shim: static, Go).  At a connect the supervisor asks it for
 * the name of the address, so that "net" rules written with host names
 * (and "*." wildcards) match, and records carry "host".
 *
 * A bounded ring: the most recent answers win (an address may serve many
 * names, e.g. a CDN; the name a program asked for last is the best guess
 * for its next connect). */
#ifndef AGENTTRACE_HOSTS_H
#define AGENTTRACE_HOSTS_H

#include <stdint.h>

#include "lib/channel-wire.h"

#define HOSTS_CAPACITY 1024

struct hosts;

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


#endif
