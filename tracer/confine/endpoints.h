/* Session endpoints: the local sockets the session's own processes bound,
 * and whose socket a local destination reaches (agenttrace-policy(5),
 * "Local endpoints"; doc/THREAT-MODEL.md).
 *
 * A socket counts as the session's when a process of the session bound
 * it (bind, or listen's implicit bind) while it was not bound yet: its
 * inode is kept, and for UNIX sockets the name it was bound to.  Which
 * socket a connect or a datagram reaches is the kernel's own answer
 * (tracer/inspect/sockdiag.h): the listener of a TCP port, the receiver
 * of a UDP one, the socket bound to a UNIX file or abstract name.  So a
 * port bound to 0 needs no learning of its number, a bind that failed
 * makes nothing the session's, and a port or path the session once had
 * and an outside program took since is not the session's any more.
 *
 * Costs: a bind or listen, a copy of the caller's socket (pidfd_getfd)
 * and two calls on it; a connect or send to a local destination, the
 * copy for its protocol and one sock_diag question.  Finding the process
 * behind an outside socket walks /proc, bounded (endpoints_owner()). */
#ifndef AGENTTRACE_ENDPOINTS_H
#define AGENTTRACE_ENDPOINTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rules/rules.h"

struct endpoints;

struct endpoints *endpoints_new(void);
void endpoints_free(struct endpoints *e);

/* The socket FD of process TGID is about to be bound: to the address of
 * the bind event EV (AF_INET, AF_INET6; NULL otherwise), or to the UNIX
 * NAME (a resolved path, or "@name" text as rules_unix_abstract_text()
 * writes it; NULL for none).  It becomes the session's when it is bound
 * to nothing yet and no socket outside the session holds that address
 * (a SO_REUSEPORT group or a UDP SO_REUSEADDR address shared with an
 * outside program stays the outside one's). */
void endpoints_note_bind(struct endpoints *e, pid_t tgid, int fd, const struct rules_event *ev,
			 const char *name);

/* The socket COPY (a copy of a session process's) is about to connect or
 * send while bound to nothing: the kernel binds an inet socket to a port
 * of its choice then (autobind), and that port is the session's, so that
 * the reply of a session server to a session client (a UDP answer, sent
 * to the client's port) reaches it. */
void endpoints_note_autobind(struct endpoints *e, int copy);

/* Whose is the local destination of the net event EV, sent to through
 * the socket FD of process TGID. */
struct endpoint_found {
	uint8_t endpoint;   /* enum rules_endpoint */
	/* RULES_ENDPOINT_NONE: the errno the kernel gives for it (ENOENT
	 * for a missing socket file, ECONNREFUSED where nothing listens);
	 * 0: the call runs (a datagram to a port nobody has), or the fd's
	 * own error (EBADF, ENOTSOCK) */
	int answer;
	uint64_t listener;  /* RULES_ENDPOINT_OUTSIDE: its socket's inode, 0 unknown */
	/* A UNIX path: the socket file found at it, judged by whose it is;
	 * an engine that makes the call itself must reach that very file.
	 * 0: none. */
	dev_t vfs_dev;
	uint64_t vfs_ino;
	/* The copy of the caller's socket the answer was found on (-1:
	 * none), for an engine that makes the call itself: the socket that
	 * was judged.  The caller closes it. */
	int copy;
};
void endpoints_find(struct endpoints *e, pid_t tgid, int fd, const struct rules_event *ev,
		    struct endpoint_found *out);

/* endpoints_find() on COPY, a socket of the caller's this process holds
 * (-1: none; then only a UNIX path can be told); OUT's copy is left. */
void endpoints_find_on(struct endpoints *e, int copy, const struct rules_event *ev,
		       struct endpoint_found *out);

/* The socket of inode INO is the session's, bound to the UNIX NAME (NULL:
 * none): the preload shim's word, checked in-process (unbound before,
 * bound by the call). */
void endpoints_claim(struct endpoints *e, uint64_t ino, const char *name);

/* The address a listen(2) on the socket COPY takes connections on, as
 * a bind event into EV (RULES_KIND_NET, bind): an inet stream socket's
 * own, or for one bound to nothing every address of its family (0.0.0.0
 * or ::) at a port the kernel picks (0).  1 when it is such a socket, 0
 * when not (a UNIX socket, a datagram one), or -errno.  A bind judged
 * once can have been raced (another thread rewrote the address after
 * the check), so what is listened on is judged again. */
int endpoints_listen_event(int copy, struct rules_event *ev);

/* The process that holds the socket of inode INO: its pid and, in EXE
 * (SIZE bytes), its program.  Bounded: a walk of /proc of at most a few
 * thousand descriptors and some milliseconds, a few dozen walks a
 * session, answers cached.  0, or -ENOENT when not found (another
 * user's, or past the bounds). */
int endpoints_owner(struct endpoints *e, uint64_t ino, pid_t *pid, char *exe, size_t size);

/* The sockets the command's main process T holds at its first exec,
 * inherited from agenttrace's caller (agenttrace's own are close-on-exec):
 * bound or connected outside the session, they are used without any
 * check, so each gets a "warning" record (rule fd.inherited-socket; the
 * first 16).  They are left open: a CI runner or a shell may hand the
 * command what it needs that way. */
struct session;
struct tracee;
void endpoints_warn_inherited(struct session *s, const struct tracee *t);

/* A copy of descriptor FD of process TGID (pidfd_getfd(2)), or -errno. */
int endpoints_copy(pid_t tgid, int fd);

#endif
