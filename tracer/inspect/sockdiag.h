/* Which socket is at a local address, asked of the kernel's socket
 * monitoring interface (sock_diag(7), NETLINK_SOCK_DIAG): the answers the
 * kernel's own lookups give, without touching the sockets.  The
 * supervisor shares the session's network namespace (new namespaces are
 * refused), so its view is the session's.
 *
 * Costs: an inet lookup and a UNIX lookup by inode are one request and
 * one answer, a lookup in the kernel's hash tables; finding which UNIX
 * socket is bound to a name walks every UNIX socket of the namespace
 * (a dump), and is asked only where a denial is to be written. */
#ifndef AGENTTRACE_SOCKDIAG_H
#define AGENTTRACE_SOCKDIAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The socket that would take a new connection (PROTOCOL IPPROTO_TCP: the
 * listener, of a SO_REUSEPORT group the one the kernel picks) or a
 * datagram (IPPROTO_UDP) sent to ADDR:PORT (FAMILY AF_INET or AF_INET6,
 * network order, IPv4 in the first 4 bytes; an IPv4-mapped address is
 * asked as IPv4, the unspecified address as loopback, as a connect takes
 * them).  0 and its inode in *INO, -ENOENT when there is none, or
 * -errno. */
int sockdiag_inet_receiver(int protocol, int family, const uint8_t addr[16], uint16_t port,
			   uint64_t *ino);

/* What a UNIX socket is, by its inode. */
struct sockdiag_unix {
	int type;                /* SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET */
	int state;               /* TCP_LISTEN, TCP_CLOSE, TCP_ESTABLISHED */
	bool has_vfs;            /* bound to a file: its device and inode */
	dev_t vfs_dev;
	uint32_t vfs_ino;        /* as the kernel reports it: the low 32 bits */
	size_t name_len;         /* the bound address: sun_path's bytes, a NUL
				  * first for an abstract name; 0 unbound */
	char name[108];
};

/* The UNIX socket of inode INO into *OUT: 0, -ENOENT when it is gone, or
 * -errno. */
int sockdiag_unix_of(uint64_t ino, struct sockdiag_unix *out);

/* The UNIX socket that takes connections or datagrams at a name: bound to
 * the file of device DEV, inode INO (a path), or to the abstract NAME
 * (N bytes after the leading NUL) when NAME is not NULL, listening or
 * able to receive (not connected).  TYPE: only sockets of that type (0:
 * any).  0 and its inode in *OUT, -ENOENT when there is none, -errno.
 * A dump of every UNIX socket: denial paths only. */
int sockdiag_unix_bound(dev_t dev, uint64_t ino, const unsigned char *name, size_t n, int type,
			uint64_t *out);

#endif
