/* agenttrace's own lookups of the host names in the policy's allow rules,
 * for programs that carry no shim (static, Go): their answers go into the
 * session's host map (hosts.h) like the shim's. */
#ifndef AGENTTRACE_RESOLVER_H
#define AGENTTRACE_RESOLVER_H

struct session;

#define RESOLVER_REFRESH_MS 60000   /* getaddrinfo gives no TTL: re-resolve this often */
#define RESOLVER_FIRST_WAIT_MS 500  /* how long the first lookups may delay the start */

/* Resolve the policy's allow rules that name a host (no wildcard) in a
 * child process of agenttrace, whose answers arrive as HOSTS messages on
 * the channel: a slow or dead resolver never delays the command or the
 * supervisor.  Does it again when RESOLVER_REFRESH_MS have passed since the
 * last time (call it at net stops).  Returns the number of names. */
int resolver_run(struct session *s);

#endif
