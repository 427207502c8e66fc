/* The notify engine makes a call itself when the kernel must not read the
 * caller's arguments a second time: an open whose path another thread (or
 * a process sharing the memory) could rewrite between the supervisor's
 * check and the kernel's own read.  The supervisor opens the path it
 * checked, as the caller (its fs uid, gid, groups and umask), without
 * following a symlink that appeared since, and installs the descriptor in
 * the caller (SECCOMP_IOCTL_NOTIF_ADDFD): what the caller gets is the
 * object that was judged.  A connect likewise, on a copy of the caller's
 * socket, to the address that was judged.  doc/INTERNALS.md, "The notify engine", says
 * what is made this way and what runs as it is. */
#ifndef AGENTTRACE_UNOTIFY_EMULATE_H
#define AGENTTRACE_UNOTIFY_EMULATE_H

#include <stdbool.h>
#include <sys/types.h>

struct call;
struct session;
struct stop_answer;
struct tracee;
struct unotify_call;

/* Whether task T's call C is one the engine makes itself here: a call
 * it can make (below) whose arguments can change under the supervisor
 * (tracer/unotify/exposed.h). */
bool emulate_needed(struct session *s, const struct tracee *t, const struct call *c);

/* The open C of notification U (allowed; the decoder resolved its path),
 * made here.  1: answered (the caller has its descriptor); 0: A holds the
 * answer to send (the errno the kernel would have given); -ENOTSUP: not
 * made here, the kernel is to run it (a path that names no file).  An
 * openat2 with resolve flags is answered ENOSYS; /dev/tty is opened as
 * the caller's own terminal, and no terminal becomes the caller's
 * controlling one by this open. */
int emulate_open(struct session *s, const struct unotify_call *u, const struct call *c,
		 struct stop_answer *a);

/* The connect C of notification U by a task of process TGID (allowed):
 * made on a copy of its socket to the address that was judged, by a
 * thread of its own (a connect may wait); a UNIX path in the directory
 * judged, opened exactly.  Returns as emulate_open(). */
int emulate_connect(struct session *s, const struct unotify_call *u, const struct call *c,
		    pid_t tgid, struct stop_answer *a);

/* The sendto, sendmsg or sendmmsg (its first message) C of notification U
 * by a task of process TGID, allowed, on an inet socket: sent on a copy
 * of its socket to the name that was judged, with the bytes and control
 * messages the caller gave, here or (when it must wait) by a thread of
 * its own.  Returns as emulate_open(). */
int emulate_send(struct session *s, const struct unotify_call *u, const struct call *c,
		 pid_t tgid, struct stop_answer *a);

/* The rename, link, symlink, unlink, rmdir, mkdir, mknod, chmod or
 * truncate C of notification U by a task of process TGID (allowed), made
 * on the paths the decoder resolved, each directory opened exactly in the
 * caller's view, as the caller (its fs uid, gid, groups, capabilities,
 * umask, and for a truncate its RLIMIT_FSIZE).  Returns as emulate_open():
 * 1 when a thread answers (a truncate that waits on another process's
 * lease), -ENOTSUP when C is none of these.  Nothing else is left to
 * the kernel: a name that ended in "/", "." or ".." is made on that
 * ending, an open file linked by descriptor from the caller's own, and
 * what cannot be made is answered (EINVAL for flags the kernel refuses,
 * EPERM for a name that names no file). */
int emulate_path_call(struct session *s, const struct unotify_call *u, const struct call *c,
		      pid_t tgid, struct stop_answer *a);

/* The bind C (allowed) of an inet socket of process TGID, made on a copy
 * of it to the address that was judged (the kernel's own check of a
 * privileged port made for the caller), or the listen C, made on a copy
 * that is still the socket judged.  Returns as emulate_open(); both are
 * answered at once (0: A holds the answer), but for the bind of a UNIX
 * socket, made by a thread in the directory judged, as the caller (1). */
int emulate_bind(struct session *s, const struct unotify_call *u, const struct call *c,
		 pid_t tgid, struct stop_answer *a);
int emulate_listen(struct session *s, const struct unotify_call *u, const struct call *c,
		   pid_t tgid, struct stop_answer *a);

#endif
