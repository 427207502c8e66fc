/* net patterns against one connect/sendto event.
 *
 *  ANY     any family and address; the port range applies to IP and
 *          host-only events.  A unix socket has no port, so it matches
 *          only when the pattern's range is the whole 0..65535: "*"
 *          covers unix sockets, "*:443" does not.
 *  IP      CIDR of the pattern's family; an AF_INET6 event holding an
 *          IPv4-mapped address (::ffff:a.b.c.d) also meets IPv4 patterns,
 *          since that is how a dual-stack socket reaches an IPv4 peer.
 *  HOST    case-insensitive glob over the name known for the address; a
 *          trailing dot (the DNS root) is ignored on both sides.
 *  UNIX_*  AF_UNIX only; unix patterns ignore ports.  A named socket path
 *          meets UNIX_PATH (match_path, or a plain glob when the pattern
 *          is not absolute, so that "unix:*" covers every named socket),
 *          an abstract "@name" meets UNIX_ABSTRACT (glob after the '@').
 *  SESSION a local destination (rules_net_local()) that the backend found
 *          to be an endpoint of the session (struct rules_event endpoint).
 * An event with family 0 carries only a host name: HOST and ANY only.
 * A "bind:" pattern matches bind events only, any other pattern the
 * destinations only: a rule that admits egress to "*:443" says nothing
 * of a socket that takes connections on 443. */
#include <string.h>
#include <sys/socket.h>

#include "rules/match-internal.h"
#include "rules/rules.h"

static bool net_port(const struct rules_pattern *pat, uint16_t port)
{
	return port >= pat->port_lo && port <= pat->port_hi;
}

static bool net_prefix(const uint8_t *a, const uint8_t *b, unsigned bits)
{
	unsigned bytes = bits / 8, rest = bits % 8;

	if (memcmp(a, b, bytes) != 0)
		return false;
	if (rest) {
		uint8_t mask = (uint8_t)(0xffu << (8 - rest));
		if ((a[bytes] ^ b[bytes]) & mask)
			return false;
	}
	return true;
}

static bool net_v4mapped(const uint8_t *a)
{
	static const uint8_t head[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	return memcmp(a, head, sizeof(head)) == 0;
}

static bool net_ip(const struct rules_pattern *pat, const struct rules_event *ev)
{
	if (pat->family == AF_INET) {
		const uint8_t *a;

		if (pat->prefix > 32)
			return false;
		if (ev->family == AF_INET)
			a = ev->addr;
		else if (ev->family == AF_INET6 && net_v4mapped(ev->addr))
			a = ev->addr + 12;
		else
			return false;
		return net_prefix(pat->addr, a, pat->prefix);
	}
	if (pat->family == AF_INET6 && ev->family == AF_INET6 && pat->prefix <= 128)
		return net_prefix(pat->addr, ev->addr, pat->prefix);
	return false;
}

static bool net_host(const struct rules_policy *p, const struct rules_pattern *pat,
		     const struct match_subject *m)
{
	const char *g = rules_string(p, pat->text);
	size_t gn = strlen(g);

	if (!m->host)
		return false;
	if (gn > 1 && g[gn - 1] == '.' && g[gn - 2] != '\\')
		gn--;
	return match_glob_n(g, gn, m->host, m->host_len, MATCH_CASEFOLD);
}

bool match_net(const struct rules_policy *p, const struct rules_pattern *pat,
	       const struct match_subject *m)
{
	const struct rules_event *ev = m->ev;
	bool is_unix = ev->family == AF_UNIX;
	bool is_ip = ev->family == AF_INET || ev->family == AF_INET6;
	const char *u = ev->unix_path;

	if ((pat->bind != 0) != ev->bind)
		return false;
	switch (pat->net_type) {
	case RULES_NET_ANY:
		if (is_unix)
			return pat->port_lo == 0 && pat->port_hi == 65535;
		return net_port(pat, ev->port);
	case RULES_NET_IP:
		return is_ip && net_ip(pat, ev) && net_port(pat, ev->port);
	case RULES_NET_HOST:
		return (is_ip || ev->family == 0) && net_port(pat, ev->port) && net_host(p, pat, m);
	case RULES_NET_UNIX_PATH: {
		const char *g = rules_string(p, pat->text);

		if (!is_unix || !u || u[0] == '@' || !m->path)
			return false;
		if (g[0] != '/')
			return match_glob_n(g, strlen(g), m->path, m->path_len, 0);
		return match_path_norm(g, strlen(g), m->path, m->path_len);
	}
	case RULES_NET_UNIX_ABSTRACT:
		if (!is_unix || !u || u[0] != '@')
			return false;
		return match_glob(rules_string(p, pat->text), u + 1);
	case RULES_NET_SESSION:
		return ev->endpoint == RULES_ENDPOINT_SESSION && rules_net_local(ev);
	default:
		return false;
	}
}

/* 127.0.0.0/8 (LOOPBACK) or 0.0.0.0 (ANY) in A, IPv4 (4 bytes). */
static bool net_v4_local(const uint8_t *a, bool any)
{
	return a[0] == 127 || (any && !a[0] && !a[1] && !a[2] && !a[3]);
}

/* ::1, or :: when ANY; IPv4-mapped addresses as IPv4. */
static bool net_v6_local(const uint8_t *a, bool any)
{
	static const uint8_t zero[15] = { 0 };

	if (net_v4mapped(a))
		return net_v4_local(a + 12, any);
	return memcmp(a, zero, 15) == 0 && (a[15] == 1 || (any && a[15] == 0));
}

bool rules_net_local(const struct rules_event *ev)
{
	if (ev->kind != RULES_KIND_NET || ev->bind)
		return false;
	if (ev->family == AF_UNIX)
		return ev->unix_path != NULL;
	if (ev->family == AF_INET)
		return net_v4_local(ev->addr, true);
	if (ev->family == AF_INET6)
		return net_v6_local(ev->addr, true);
	return false;
}

bool rules_net_bind_loopback(const struct rules_event *ev)
{
	if (ev->kind != RULES_KIND_NET || !ev->bind)
		return false;
	if (ev->family == AF_INET)
		return net_v4_local(ev->addr, false);
	if (ev->family == AF_INET6)
		return net_v6_local(ev->addr, false);
	return false;
}

void rules_unix_abstract_text(const unsigned char *name, size_t n, char *out, size_t size)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	out[o++] = '@';
	for (size_t i = 0; i < n && o + 5 < size; i++) {
		unsigned char ch = name[i];

		if (ch > 0x20 && ch < 0x7f && ch != '\\') {
			out[o++] = (char)ch;
		} else {
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[ch >> 4];
			out[o++] = hex[ch & 15];
		}
	}
	out[o] = '\0';
}
