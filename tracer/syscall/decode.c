/* call_decode(): one seccomp stop -> struct call, through the syscall
 * table.  Allocation-free: strings land in struct call's own buffers, and
 * the big buffers are not cleared between calls (only the fields that say
 * what they hold are). */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/timex.h>
#include <sys/syscall.h>
#include <sys/un.h>

#include "lib/hash.h"
#include "lib/syscall-rename.h"
#include "tracer/syscall/arch.h"
#include "tracer/syscall/call.h"
#include "tracer/syscall/decode.h"
#include "tracer/syscall/mem.h"
#include "tracer/syscall/path.h"
#include "tracer/syscall/table.h"

#define DECODE_NO_EVENT 1   /* the object needs no decision */
#define DECODE_MMSG_BATCH 16
#define DECODE_UIO_MAXIOV 1024 /* sendmmsg's own cap on vlen */
#define DECODE_OPEN_HOW_VER0 24 /* OPEN_HOW_SIZE_VER0 of linux/openat2.h */
#define DECODE_ARGV_BATCH 64    /* argv pointers (and strings) per read; <= MEM_STRINGS_MAX */
#define DECODE_ARG_GUESS 256    /* bytes tried per argv string in the batched read */

/* What a stop needs besides struct call. */
struct decode {
	pid_t pid;
	const struct call_ctx *ctx;
	const struct syscall_entry *e;
	struct call *c;
};

static void decode_reset(struct call *c)
{
	c->nr = -1;
	c->audit_arch = 0;
	c->x32 = false;
	c->name = NULL;
	memset(c->args, 0, sizeof(c->args));
	c->bypass = false;
	c->bypass_errno = 0;
	c->bypass_id = NULL;
	c->bypass_why = NULL;
	c->n_events = 0;
	memset(c->events, 0, sizeof(c->events));
	c->deny_errno = EACCES;
	memset(c->explicit_deny_only, 0, sizeof(c->explicit_deny_only));
	c->path[0][0] = c->path[1][0] = '\0';
	c->path_proc[0] = c->path_proc[1] = 0;
	c->path_via[0] = c->path_via[1] = 0;
	c->sock_dev = 0;
	c->sock_ino = 0;
	c->path_odd_last[0][0] = c->path_odd_last[1][0] = '\0';
	c->path_by_fd[0] = c->path_by_fd[1] = false;
	c->link_target[0] = '\0';
	c->exe[0] = '\0';
	c->argv[0] = NULL;
	c->argv_truncated = false;
	c->unix_path[0] = '\0';
	c->flags = 0;
	c->dirfd = AT_FDCWD;
	c->spawns = false;
	c->spawns_thread = false;
	c->canary = false;
	c->kernel_errno = 0;
	c->is_open = false;
	c->sockaddr_len = 0;
	c->binds = false;
	c->listens = false;
	c->bind_name = NULL;
	c->open_mode = 0;
	c->is_chmod = false;
	c->chmod_mode = 0;
	c->open_resolve = 0;
	c->cut = false;
	c->cut_vlen = 0;
	c->signal_scope = CALL_SIGNAL_NONE;
	c->signal_pgrp = 0;
	c->signal_group_of = 0;
	c->signal_sig = 0;
	c->why_buf[0] = '\0';
	c->error = 0;
	c->name_buf[0] = '\0';
	c->n_spans = 0;
	c->spans_cut = false;
	c->text_hash = 0;
	c->exe_text[0] = '\0';
	c->removal_in_new_git = false;
}

/* LEN bytes at ADDR were read to decide: noted in c->spans. */
static void decode_note_span(const struct decode *d, unsigned long addr, unsigned long len)
{
	struct call *c = d->c;

	if (c->n_spans == CALL_SPANS) {
		c->spans_cut = true;
		return;
	}
	c->spans[c->n_spans].addr = addr;
	c->spans[c->n_spans].len = len;
	c->n_spans++;
}

/* mem_read() of memory the decision depends on. */
static int decode_read(const struct decode *d, unsigned long addr, void *buf, size_t len)
{
	int rc = mem_read(d->pid, addr, buf, len);

	if (rc == 0)
		decode_note_span(d, addr, len);
	return rc;
}

static unsigned long decode_arg(const struct decode *d, uint8_t role)
{
	return d->c->args[role - 1];
}

void decode_set_bypass(struct call *c, const struct syscall_bypass *b, int err)
{
	c->bypass = true;
	c->bypass_id = b->id;
	c->bypass_why = b->why;
	c->bypass_errno = err;
	c->n_events = 0;
}

/* Map a failure of decoding onto what struct call promises. */
static int decode_fail(struct call *c, int rc)
{
	switch (rc) {
	case -ESRCH:
	case -EFAULT:
		c->n_events = 0;
		c->error = rc;
		return rc;
	case -ELOOP:
	case -ENAMETOOLONG:
		/* Judging a path other than the one the kernel will use
		 * would be a way around the policy: refuse it, with the
		 * errno the kernel would most likely give. */
		decode_set_bypass(c, &syscall_bypass_unresolvable, -rc);
		return 0;
	default:
		/* "" without AT_EMPTY_PATH, a bad dirfd, a dirfd that is no
		 * directory: the kernel's own answer, given here.  Let run,
		 * the call would have the kernel read its arguments again,
		 * which another thread may have made a name by then. */
		c->n_events = 0;
		c->kernel_errno = -rc;
		return 0;
	}
}

static int decode_path_flags(const struct decode *d, const struct syscall_path *sp, int oflags)
{
	switch (sp->follow) {
	case SYSCALL_NOFOLLOW:
		return PATH_NOFOLLOW;
	case SYSCALL_FOLLOW_UNLESS_AT:
		return (d->c->flags & AT_SYMLINK_NOFOLLOW) ? PATH_NOFOLLOW : 0;
	case SYSCALL_FOLLOW_IF_AT:
		return (d->c->flags & AT_SYMLINK_FOLLOW) ? 0 : PATH_NOFOLLOW;
	case SYSCALL_FOLLOW_OPEN:
		return syscall_open_follows(oflags) ? 0 : PATH_NOFOLLOW;
	default:
		return 0;
	}
}

/* Whether NAME (N bytes, as given) ends in "/", "." or "..": then its
 * last component as the kernel acts on it into LAST (PATH_MAX bytes:
 * "name/", ".", "..", "/" for the root)
 * and the rest, the directory it is in, into DIR (PATH_MAX; "." for the
 * starting one), still to be resolved. */
static bool decode_odd_end(const char *name, size_t n, char *dir, char *last)
{
	size_t e = n, b;
	bool slash;

	while (e > 0 && name[e - 1] == '/')
		e--;
	slash = e < n;
	if (e == 0) {
		if (!slash)
			return false;
		strcpy(dir, "/");
		strcpy(last, "/");
		return true;
	}
	for (b = e; b > 0 && name[b - 1] != '/'; b--)
		;
	if (e - b == 1 && name[b] == '.')
		strcpy(last, ".");
	else if (e - b == 2 && name[b] == '.' && name[b + 1] == '.')
		strcpy(last, "..");
	else if (!slash)
		return false;
	else
		snprintf(last, PATH_MAX, "%.*s/", (int)(e - b), name + b);
	if (b == 0) {
		strcpy(dir, ".");
	} else {
		memcpy(dir, name, b);
		dir[b] = '\0';
	}
	return true;
}

/* Resolve path role SP into OUT (PATH_MAX).  PRE >= 0: the name is in OUT
 * already (PRE bytes, read with the call's other strings); else it is read
 * here.  PROC_OF (may be NULL): the process whose /proc entry OUT names as
 * /proc/self, 0: none.  0, DECODE_NO_EVENT, or -errno. */
static int decode_path(const struct decode *d, const struct syscall_path *sp, int oflags,
		       char *out, bool *is_canary, long pre, pid_t *proc_of)
{
	struct call *c = d->c;
	int dirfd = sp->dirfd ? (int)decode_arg(d, sp->dirfd) : AT_FDCWD;
	unsigned long addr;
	long n;
	int rc;

	if (!sp->name || ((addr = decode_arg(d, sp->name)) == 0 && (sp->empty & SYSCALL_EMPTY_NULL)))
		goto by_fd;
	n = pre >= 0 ? pre : mem_read_string(d->pid, addr, out, PATH_MAX);
	if (n < 0)
		return (int)n;
	decode_note_span(d, addr, (unsigned long)n + 1);
	/* Only an open can be of a pinned name (stop_pinned()): no other
	 * call pays for the hash. */
	if (out == c->path[0] && c->is_open && (out[0] == '/' || dirfd == AT_FDCWD))
		c->text_hash = hash_text(out);
	if (out == c->exe) {
		/* As fs/exec.c names the file for the interpreter. */
		if (out[0] == '/' || dirfd == AT_FDCWD)
			memcpy(c->exe_text, out, (size_t)n + 1);
		else if (n > 0)
			snprintf(c->exe_text, sizeof(c->exe_text), "/dev/fd/%d/%s", dirfd, out);
		else
			snprintf(c->exe_text, sizeof(c->exe_text), "/dev/fd/%d", dirfd);
	}
	if (out == c->path[0] || out == c->path[1]) {
		unsigned i = out == c->path[1];

		if (decode_odd_end(out, (size_t)n, c->path_odd_dir[i], c->path_odd_last[i])) {
			rc = path_resolve(d->pid, dirfd, c->path_odd_dir[i], 0, c->path_odd_dir[i],
					  PATH_MAX);
			if (rc == PATH_NOT_FS)
				rc = -ENOTDIR;
			if (rc < 0)
				return rc;
		}
	}
	if (is_canary && strcmp(out, CALL_CANARY_PATH) == 0) {
		*is_canary = true;
		return DECODE_NO_EVENT;
	}
	if (n == 0 && (sp->empty & SYSCALL_EMPTY_AT) && (c->flags & AT_EMPTY_PATH))
		goto by_fd;
	/* path_resolve() copies its input before writing OUT. */
	rc = path_resolve_via(d->pid, dirfd, out, decode_path_flags(d, sp, oflags), out, PATH_MAX,
			      out == c->path[0] || out == c->path[1] ? &c->path_via[out == c->path[1]] :
								       NULL);
	goto done;
by_fd:
	if (out == c->path[0] || out == c->path[1])
		c->path_by_fd[out == c->path[1]] = true;
	rc = path_fd(d->pid, dirfd, out, PATH_MAX);
done:
	if (rc == PATH_NOT_FS)
		return DECODE_NO_EVENT;
	if (rc < 0)
		return rc;
	n = rules_proc_self(out, PATH_MAX, d->pid, d->ctx ? d->ctx->in_session : NULL,
			    d->ctx ? d->ctx->arg : NULL);
	if (proc_of)
		*proc_of = (pid_t)n;
	return 0;
}

static void decode_add_path_event(struct call *c, enum rules_kind kind, const char *path)
{
	struct rules_event *ev = &c->events[c->n_events++];

	memset(ev, 0, sizeof(*ev));
	ev->kind = kind;
	ev->path = path;
}

/* ---- exec ---- */

static int decode_argv(const struct decode *d, unsigned long vec)
{
	struct call *c = d->c;
	size_t used = 0, argc = 0;

	if (vec == 0) {
		c->argv[0] = NULL;
		return 0; /* the kernel accepts a NULL argv (argc 0) */
	}
	while (argc < CALL_MAX_ARGV) {
		uint64_t ptrs[DECODE_ARGV_BATCH];
		char scratch[DECODE_ARGV_BATCH][DECODE_ARG_GUESS];
		unsigned long addrs[DECODE_ARGV_BATCH];
		char *bufs[DECODE_ARGV_BATCH];
		size_t caps[DECODE_ARGV_BATCH], m;
		long lens[DECODE_ARGV_BATCH];
		unsigned long at = vec + argc * sizeof(uint64_t);
		/* Up to the page's end: the array may end right before an
		 * unmapped page. */
		size_t room = (4096 - (at & 4095)) / sizeof(uint64_t);
		size_t batch = room ? room : 1;
		int rc;

		if (batch > DECODE_ARGV_BATCH)
			batch = DECODE_ARGV_BATCH;
		if (batch > CALL_MAX_ARGV - argc)
			batch = CALL_MAX_ARGV - argc;
		rc = mem_read(d->pid, at, ptrs, batch * sizeof(uint64_t));
		if (rc < 0)
			return rc;
		/* The batch's strings in one read where each is short and
		 * within its page; the others are read one by one below. */
		for (m = 0; m < batch && ptrs[m] != 0; m++) {
			addrs[m] = (unsigned long)ptrs[m];
			bufs[m] = scratch[m];
			caps[m] = DECODE_ARG_GUESS;
		}
		rc = mem_read_strings(d->pid, m, addrs, bufs, caps, lens);
		if (rc < 0)
			return rc;
		for (size_t i = 0; i < batch; i++) {
			long n;

			if (ptrs[i] == 0) {
				c->argv[argc] = NULL;
				return 0;
			}
			if (used >= sizeof(c->argv_buf)) {
				c->argv_truncated = true;
				c->argv[argc] = NULL;
				return 0;
			}
			if (lens[i] >= 0 && used + (size_t)lens[i] + 1 <= sizeof(c->argv_buf)) {
				n = lens[i];
				memcpy(c->argv_buf + used, scratch[i], (size_t)n + 1);
			} else {
				n = mem_read_string(d->pid, ptrs[i], c->argv_buf + used,
						    sizeof(c->argv_buf) - used);
			}
			if (n == -ENAMETOOLONG) {
				c->argv[argc++] = c->argv_buf + used;
				c->argv_truncated = true;
				c->argv[argc] = NULL;
				return 0;
			}
			if (n < 0)
				return (int)n;
			c->argv[argc++] = c->argv_buf + used;
			used += (size_t)n + 1;
		}
	}
	/* More than CALL_MAX_ARGV elements: is there one more? */
	{
		uint64_t next = 0;

		if (mem_read(d->pid, vec + argc * sizeof(uint64_t), &next, sizeof(next)) < 0 ||
		    next != 0)
			c->argv_truncated = true;
	}
	c->argv[argc] = NULL;
	return 0;
}

static int decode_exec(const struct decode *d)
{
	struct call *c = d->c;
	const struct syscall_entry *e = d->e;
	struct rules_event *ev;
	size_t argc = 0;
	int rc;

	rc = decode_path(d, &e->paths[0], 0, c->exe, NULL, -1, NULL);
	if (rc == DECODE_NO_EVENT) {
		/* exec of an fd that is no file: keep its text as the exe */
		rc = 0;
	}
	if (rc < 0)
		return decode_fail(c, rc);
	rc = decode_argv(d, decode_arg(d, e->argv));
	if (rc < 0)
		return decode_fail(c, rc);
	if (c->argv_truncated) {
		decode_set_bypass(c, &syscall_bypass_argv_too_long, E2BIG);
		return 0;
	}
	while (c->argv[argc])
		argc++;
	ev = &c->events[c->n_events++];
	memset(ev, 0, sizeof(*ev));
	ev->kind = RULES_KIND_EXEC;
	ev->exe = c->exe;
	ev->argv = c->argv;
	ev->argc = argc;
	return 0;
}

/* ---- open ---- */

static int decode_open(const struct decode *d)
{
	struct call *c = d->c;
	const struct syscall_entry *e = d->e;
	int oflags, rc;
	bool canary = false;

	c->is_open = true;
	if (e->opts & SYSCALL_OPT_CREAT) {
		c->flags = O_CREAT | O_WRONLY | O_TRUNC;
		c->open_mode = (unsigned)c->args[1];
	} else if (e->opts & SYSCALL_OPT_OPENAT2) {
		struct open_how how;

		if (c->args[3] < DECODE_OPEN_HOW_VER0)
			return 0; /* EINVAL from the kernel */
		rc = decode_read(d, c->args[2], &how, sizeof(how));
		if (rc < 0)
			return decode_fail(c, rc);
		c->flags = (int)how.flags;
		c->open_mode = (unsigned)how.mode;
		c->open_resolve = how.resolve;
		if (how.resolve & RESOLVE_IN_ROOT) {
			/* Absolute names and symlinks would resolve below the
			 * dirfd, a view this decoder does not model. */
			decode_set_bypass(c, &syscall_bypass_unresolvable, EPERM);
			return 0;
		}
	} else if (e->flags) {
		c->open_mode = (unsigned)c->args[e->flags]; /* the argument after the flags */
	}
	oflags = c->flags;
	if (e->paths[0].dirfd)
		c->dirfd = (int)decode_arg(d, e->paths[0].dirfd);
	rc = decode_path(d, &e->paths[0], oflags, c->path[0], &canary, -1, &c->path_proc[0]);
	if (canary) {
		c->canary = true;
		c->deny_errno = CALL_CANARY_ERRNO;
		return 0;
	}
	if (rc == DECODE_NO_EVENT)
		return 0;
	if (rc < 0)
		return decode_fail(c, rc);
	if (strcmp(c->path[0], "/dev/userfaultfd") == 0) {
		decode_set_bypass(c, &syscall_bypass_userfaultfd_dev, EPERM);
		return 0;
	}
	switch (syscall_open_kind(oflags)) {
	case SYSCALL_OPEN_WRITE:
		decode_add_path_event(c, RULES_KIND_WRITE, c->path[0]);
		if (syscall_open_write_reads(oflags))
			c->n_events = rules_add_name_reads(c->events, c->n_events, RULES_READS_PATH,
							   c->path[0], NULL);
		break;
	case SYSCALL_OPEN_READ:
		decode_add_path_event(c, RULES_KIND_READ, c->path[0]);
		break;
	case SYSCALL_OPEN_NONE:
		/* Reopening such a descriptor through /proc/self/fd/N, or an
		 * open relative to it, is an open of its own. */
		break;
	}
	return 0;
}

/* ---- writes ---- */

static int decode_write(const struct decode *d)
{
	struct call *c = d->c;
	const struct syscall_entry *e = d->e;
	bool ok[2] = {false, false};
	long pre[2] = {-1, -1};
	int rc;

	if (e->paths[0].dirfd)
		c->dirfd = (int)decode_arg(d, e->paths[0].dirfd);
	if (e->n_paths == 2 && e->paths[0].name && e->paths[1].name) {
		/* rename, link, symlink: both names in one read */
		const unsigned long addrs[2] = {decode_arg(d, e->paths[0].name),
						decode_arg(d, e->paths[1].name)};
		char *const bufs[2] = {c->path[0], c->path[1]};
		const size_t caps[2] = {PATH_MAX, PATH_MAX};

		rc = mem_read_strings(d->pid, 2, addrs, bufs, caps, pre);
		if (rc < 0)
			return decode_fail(c, rc);
	}
	for (unsigned i = 0; i < e->n_paths; i++) {
		if (i == 1 && (e->opts & SYSCALL_OPT_SYMLINK)) {
			/* The target, as the link will lead to it: relative
			 * to the link's directory. */
			char base[PATH_MAX];
			char *slash;
			long n = pre[1] >= 0 ? pre[1]
					     : mem_read_string(d->pid, decode_arg(d, e->paths[1].name),
							       c->path[1], PATH_MAX);

			if (n < 0)
				return decode_fail(c, (int)n);
			if (n == 0)
				return decode_fail(c, -ENOENT);
			decode_note_span(d, decode_arg(d, e->paths[1].name), (unsigned long)n + 1);
			memcpy(c->link_target, c->path[1], (size_t)n + 1);
			if (!ok[0])
				continue;
			memcpy(base, c->path[0], strlen(c->path[0]) + 1);
			slash = strrchr(base, '/');
			if (slash)
				slash[slash == base ? 1 : 0] = '\0';
			c->explicit_deny_only[1] = true;
			rc = path_resolve_from(d->pid, base, c->path[1], 0, c->path[1], PATH_MAX);
			if (rc == 0)
				c->path_proc[1] = rules_proc_self(c->path[1], PATH_MAX, d->pid,
								  d->ctx ? d->ctx->in_session : NULL,
								  d->ctx ? d->ctx->arg : NULL);
			else if (rc == PATH_NOT_FS)
				rc = DECODE_NO_EVENT;
		} else {
			rc = decode_path(d, &e->paths[i], 0, c->path[i], NULL, pre[i], &c->path_proc[i]);
		}
		if (rc < 0)
			return decode_fail(c, rc);
		ok[i] = rc == 0;
	}
	for (unsigned i = 0; i < e->n_paths; i++)
		if (ok[i])
			decode_add_path_event(c, RULES_KIND_WRITE, c->path[i]);
	/* A file that gets a new name is read by it: a link of .env read
	 * as n2 is a read of .env. */
	if (e->opts & SYSCALL_OPT_NEW_NAME)
		c->n_events = rules_add_name_reads(
			c->events, c->n_events,
			RULES_READS_PATH | (syscall_exchanges(e->name, c->flags) ? RULES_READS_PATH2 : 0),
			ok[0] ? c->path[0] : NULL, ok[1] ? c->path[1] : NULL);
	return 0;
}

/* ---- network ---- */

/* The sockaddr at ADDR (LEN bytes) into EV, with PATHBUF (PATH_MAX) for
 * the text of a UNIX address and RAW (when not NULL) for sun_path as given.
 * 0, DECODE_NO_EVENT, -errno.  BIND makes a UNIX path a write event; other
 * families need no event. */
static int decode_sockaddr(const struct decode *d, unsigned long addr, unsigned long len,
			   bool bind, struct rules_event *ev, char *pathbuf, char *raw_out,
			   struct sockaddr_storage *judged)
{
	struct sockaddr_storage ss;
	int rc;

	if (addr == 0 || len < sizeof(sa_family_t))
		return DECODE_NO_EVENT;
	if (len > sizeof(ss))
		return DECODE_NO_EVENT; /* EINVAL from the kernel */
	memset(&ss, 0, sizeof(ss));
	rc = decode_read(d, addr, &ss, len);
	if (rc < 0)
		return rc;
	if (judged)
		*judged = ss; /* the bytes judged, for an engine that makes the call */
	memset(ev, 0, sizeof(*ev));
	/* A datagram named AF_UNSPEC goes where its address says on an IPv4
	 * socket (udp_sendmsg() takes it for AF_INET, as BSD did), and to
	 * the connected peer on an IPv6 one: judged as IPv4 in a send. */
	if (ss.ss_family == AF_UNSPEC && !bind && d->e->net != SYSCALL_NET_CONNECT &&
	    len >= sizeof(struct sockaddr_in))
		ss.ss_family = AF_INET;
	switch (ss.ss_family) {
	case AF_INET: {
		const struct sockaddr_in *in = (const struct sockaddr_in *)&ss;

		if (len < sizeof(*in))
			return DECODE_NO_EVENT;
		ev->kind = RULES_KIND_NET;
		ev->family = AF_INET;
		ev->bind = bind; /* the address a socket takes connections on */
		memcpy(ev->addr, &in->sin_addr, 4);
		ev->port = ntohs(in->sin_port);
		return 0;
	}
	case AF_INET6: {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&ss;

		if (len < 24) /* SIN6_LEN_RFC2133: without sin6_scope_id */
			return DECODE_NO_EVENT;
		ev->kind = RULES_KIND_NET;
		ev->family = AF_INET6;
		ev->bind = bind;
		memcpy(ev->addr, &in6->sin6_addr, 16);
		ev->port = ntohs(in6->sin6_port);
		return 0;
	}
	case AF_UNIX: {
		const struct sockaddr_un *un = (const struct sockaddr_un *)&ss;
		size_t n = len - offsetof(struct sockaddr_un, sun_path);
		char raw[sizeof(un->sun_path) + 1];
		size_t rl;

		if (n == 0)
			return DECODE_NO_EVENT; /* unnamed (autobind) */
		if (un->sun_path[0] == '\0') {
			rules_unix_abstract_text((const unsigned char *)un->sun_path + 1, n - 1,
						 pathbuf, PATH_MAX);
			if (bind)
				return DECODE_NO_EVENT; /* no file is made; the name is kept */
			ev->kind = RULES_KIND_NET;
			ev->family = AF_UNIX;
			ev->unix_path = pathbuf;
			return 0;
		}
		rl = strnlen(un->sun_path, n);
		memcpy(raw, un->sun_path, rl);
		raw[rl] = '\0';
		if (raw_out)
			memcpy(raw_out, raw, rl + 1);
		/* Resolved like any path: the socket file is what counts, and
		 * bind() makes it without following a final symlink. */
		rc = path_resolve(d->pid, AT_FDCWD, raw, bind ? PATH_NOFOLLOW : 0, pathbuf,
				  PATH_MAX);
		if (rc == PATH_NOT_FS)
			return DECODE_NO_EVENT;
		if (rc < 0)
			return rc;
		rules_proc_self(pathbuf, PATH_MAX, d->pid, d->ctx ? d->ctx->in_session : NULL,
			       d->ctx ? d->ctx->arg : NULL);
		if (bind) {
			ev->kind = RULES_KIND_WRITE;
			ev->path = pathbuf;
			return 0;
		}
		ev->kind = RULES_KIND_NET;
		ev->family = AF_UNIX;
		ev->unix_path = pathbuf;
		return 0;
	}
	default:
		/* AF_UNSPEC (dissolves an association), AF_NETLINK, ...:
		 * not a destination the policy speaks of. */
		return DECODE_NO_EVENT;
	}
}

static bool decode_same_dest(const struct rules_event *a, const struct rules_event *b)
{
	if (a->kind != b->kind || a->family != b->family)
		return false;
	if (a->family == AF_UNIX)
		return strcmp(a->unix_path, b->unix_path) == 0;
	return a->port == b->port && memcmp(a->addr, b->addr, sizeof(a->addr)) == 0;
}

/* ---- control messages ---- */

#define DECODE_CONTROL_MAX (16 * 1024)

/* What a message's control data says of where it goes.  An IPv6 routing
 * header (IPV6_RTHDR, RFC 2292's) sends it to its segments: refused, as
 * setsockopt's (table.c).  The IPv4 source that IP_PKTINFO, or a
 * v4-mapped IPV6_PKTINFO, sets is where a datagram to 0.0.0.0 goes (the
 * kernel sends it to its own source): the destination EV is judged as
 * that address.  0, or -errno (the message unreadable), or 1 when C was
 * made a bypass. */
static int decode_control(const struct decode *d, const struct msghdr *mh,
			  struct rules_event *ev, bool have_event)
{
	static const unsigned char zero4[4], mapped_zero[16] = { [10] = 0xff, [11] = 0xff };
	unsigned char buf[DECODE_CONTROL_MAX];
	struct msghdr m = { .msg_control = buf, .msg_controllen = mh->msg_controllen };
	uint32_t source = 0;
	int rc;

	if (!mh->msg_control || mh->msg_controllen < sizeof(struct cmsghdr))
		return 0;
	if (mh->msg_controllen > sizeof(buf)) {
		decode_set_bypass(d->c, &syscall_bypass_control_size, ENOBUFS);
		return 1;
	}
	rc = decode_read(d, (unsigned long)mh->msg_control, buf, mh->msg_controllen);
	if (rc < 0)
		return rc;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm)) {
		size_t data = cm->cmsg_len >= CMSG_LEN(0) ? cm->cmsg_len - CMSG_LEN(0) : 0;

		if ((unsigned char *)CMSG_DATA(cm) + data > buf + mh->msg_controllen)
			break; /* the kernel refuses it (EINVAL) */
		if (cm->cmsg_level == IPPROTO_IPV6 &&
		    (cm->cmsg_type == IPV6_RTHDR || cm->cmsg_type == IPV6_2292RTHDR)) {
			decode_set_bypass(d->c, &syscall_bypass_routing_header, EPERM);
			return 1;
		}
		if (cm->cmsg_level == IPPROTO_IP && cm->cmsg_type == IP_PKTINFO &&
		    data >= sizeof(struct in_pktinfo)) {
			struct in_pktinfo pi;

			memcpy(&pi, CMSG_DATA(cm), sizeof(pi));
			source = pi.ipi_spec_dst.s_addr;
		}
		if (cm->cmsg_level == IPPROTO_IPV6 && cm->cmsg_type == IPV6_PKTINFO &&
		    data >= sizeof(struct in6_pktinfo)) {
			struct in6_pktinfo pi;

			memcpy(&pi, CMSG_DATA(cm), sizeof(pi));
			if (IN6_IS_ADDR_V4MAPPED(&pi.ipi6_addr))
				memcpy(&source, &pi.ipi6_addr.s6_addr[12], 4);
		}
	}
	if (!have_event || !source || ev->kind != RULES_KIND_NET)
		return 0;
	if (ev->family == AF_INET && !memcmp(ev->addr, zero4, 4))
		memcpy(ev->addr, &source, 4);
	else if (ev->family == AF_INET6 && !memcmp(ev->addr, mapped_zero, 16))
		memcpy(ev->addr + 12, &source, 4);
	return 0;
}

/* Whether a name of LEN bytes at ADDR is read (decode_sockaddr()): the
 * bytes an engine that makes the call itself passes on, event or not. */
static bool decode_named(unsigned long addr, unsigned long len)
{
	return addr && len >= sizeof(sa_family_t) && len <= sizeof(struct sockaddr_storage);
}

/* A message's name length as the kernel takes it (__copy_msghdr()): one
 * longer than a sockaddr_storage is cut to that size, not refused as
 * connect's, bind's and sendto's are, so the address in its first bytes
 * is where the message goes; a negative one is refused (no event). */
static unsigned long decode_msg_namelen(socklen_t len)
{
	if ((int)len < 0)
		return 0;
	return len > sizeof(struct sockaddr_storage) ? sizeof(struct sockaddr_storage) : len;
}

/* sendmmsg: one event per distinct destination.  struct call has room for
 * two; when the vector names more, the call is cut to the messages before
 * the third destination (vlen is an argument: sendmmsg(2) then sends
 * those and returns their count, and the caller sends the rest again,
 * which stops here again). */
static int decode_sendmmsg(const struct decode *d)
{
	struct call *c = d->c;
	unsigned long vec = decode_arg(d, d->e->addr);
	unsigned long vlen = decode_arg(d, d->e->addrlen) & 0xffffffffUL;
	unsigned long i = 0;
	int rc = 0;

	if (vlen > DECODE_UIO_MAXIOV)
		vlen = DECODE_UIO_MAXIOV;
	while (i < vlen) {
		struct mmsghdr batch[DECODE_MMSG_BATCH];
		unsigned long nb = vlen - i < DECODE_MMSG_BATCH ? vlen - i : DECODE_MMSG_BATCH;
		rc = decode_read(d, vec + i * sizeof(struct mmsghdr), batch,
				 nb * sizeof(struct mmsghdr));
		if (rc < 0)
			goto cut;
		for (unsigned long j = 0; j < nb; j++, i++) {
			struct rules_event ev;
			char text[PATH_MAX];
			bool dup = false;
			int cr;
			unsigned long nl = decode_msg_namelen(batch[j].msg_hdr.msg_namelen);
			unsigned long na = (unsigned long)batch[j].msg_hdr.msg_name;

			/* The first message's name, for an engine that sends
			 * that message itself. */
			rc = decode_sockaddr(d, na, nl, false, &ev, text,
					     c->n_events == 0 ? c->unix_path : NULL,
					     i == 0 ? &c->sockaddr : NULL);
			if (rc < 0)
				goto cut;
			if (i == 0 && decode_named(na, nl))
				c->sockaddr_len = (unsigned)nl;
			cr = decode_control(d, &batch[j].msg_hdr, &ev, rc == 0);
			if (cr == 1)
				return 0;
			if (cr < 0) {
				rc = cr;
				goto cut;
			}
			if (rc == DECODE_NO_EVENT)
				continue;
			for (size_t k = 0; k < c->n_events; k++)
				dup = dup || decode_same_dest(&ev, &c->events[k]);
			if (dup)
				continue;
			if (c->n_events == 2)
				goto cut;
			if (ev.unix_path) {
				memcpy(c->path[c->n_events], text, strlen(text) + 1);
				ev.unix_path = c->path[c->n_events];
			}
			c->events[c->n_events++] = ev;
		}
	}
	return 0;
cut:
	/* A bad message past the first: the kernel sends the ones before
	 * it and reports their count, so a cut there changes nothing. */
	if (rc == -ESRCH || i == 0)
		return decode_fail(c, rc < 0 ? rc : -EFAULT);
	c->cut = true;
	c->cut_arg = (unsigned)(d->e->addrlen - 1);
	c->cut_vlen = i;
	c->args[d->e->addrlen - 1] = i;
	return 0;
}

static int decode_net(const struct decode *d)
{
	struct call *c = d->c;
	const struct syscall_entry *e = d->e;
	struct msghdr mh = { 0 };
	unsigned long addr, len;
	int rc;

	switch (e->net) {
	case SYSCALL_NET_CONNECT:
	case SYSCALL_NET_SENDTO:
	case SYSCALL_NET_BIND:
		addr = decode_arg(d, e->addr);
		len = decode_arg(d, e->addrlen) & 0xffffffffUL;
		break;
	case SYSCALL_NET_SENDMSG:
		rc = decode_read(d, decode_arg(d, e->addr), &mh, sizeof(mh));
		if (rc < 0)
			return decode_fail(c, rc);
		addr = (unsigned long)mh.msg_name;
		len = decode_msg_namelen(mh.msg_namelen);
		break;
	case SYSCALL_NET_SENDMMSG:
		return decode_sendmmsg(d);
	case SYSCALL_NET_LISTEN:
		c->listens = true;
		return 0;
	default:
		return 0;
	}
	c->path[0][0] = '\0';
	rc = decode_sockaddr(d, addr, len, e->net == SYSCALL_NET_BIND, &c->events[0], c->path[0],
			     c->unix_path, &c->sockaddr);
	if (rc < 0)
		return decode_fail(c, rc);
	if (rc == 0)
		c->n_events = 1;
	if (e->net == SYSCALL_NET_SENDMSG) {
		int cr = decode_control(d, &mh, &c->events[0], rc == 0);

		if (cr == 1)
			return 0;
		if (cr < 0)
			return decode_fail(c, cr);
	}
	if (e->net == SYSCALL_NET_BIND) {
		c->binds = true;
		c->bind_name = c->path[0][0] ? c->path[0] : NULL;
	}
	if (rc >= 0 && decode_named(addr, len))
		c->sockaddr_len = (unsigned)len;
	return 0;
}

/* ---- bypasses ---- */

/* Every test of B holds for the call's registers (table.h). */
static bool decode_bypass_holds(const struct decode *d, const struct syscall_bypass *b)
{
	for (unsigned i = 0; i < SYSCALL_BYPASS_TESTS; i++) {
		const struct syscall_test *t = &b->test[i];

		if (t->arg && !syscall_test_holds(t, decode_arg(d, t->arg)))
			return false;
	}
	return true;
}

/* adjtimex(2), clock_adjtime(2): 1 when the struct timex's modes set
 * something, 0 when the call only reads the clock's state (modes 0, or
 * ADJ_OFFSET_SS_READ, which the kernel lets anyone do), -errno.  A bad
 * pointer is left to the kernel (EFAULT).  The modes are in memory: a
 * thread could change them after this read; the dropped CAP_SYS_TIME
 * (spawn.c) is the backstop. */
static int decode_timex_sets(const struct decode *d)
{
	unsigned int modes;
	int rc = mem_read(d->pid, decode_arg(d, d->e->addr), &modes, sizeof(modes));

	if (rc == -ESRCH)
		return rc;
	if (rc < 0)
		return 0;
	return modes != 0 && modes != ADJ_OFFSET_SS_READ;
}

/* ---- the entry point ---- */

static const char *decode_unknown_name(struct call *c)
{
	snprintf(c->name_buf, sizeof(c->name_buf), "syscall_%ld", c->nr);
	return c->name_buf;
}

int call_decode(pid_t pid, const struct call_ctx *ctx, struct call *c)
{
	struct arch_stop st;
	int rc = arch_stop_read(pid, &st);

	if (rc < 0) {
		decode_reset(c);
		c->error = rc;
		return rc;
	}
	return call_decode_at(pid, ctx, &st, c);
}

int call_decode_at(pid_t pid, const struct call_ctx *ctx, const struct arch_stop *stp,
		   struct call *c)
{
	const struct arch_stop st = *stp;
	struct decode d = {.pid = pid, .ctx = ctx, .c = c};
	const struct syscall_entry *e;
	int rc;

	decode_reset(c);
	c->nr = st.nr;
	c->audit_arch = st.audit_arch;
	c->x32 = st.x32;
	memcpy(c->args, st.args, sizeof(c->args));

	if (st.audit_arch != arch_native() || st.x32) {
		c->name = decode_unknown_name(c);
		decode_set_bypass(c, &syscall_bypass_abi, ENOSYS);
		return 0;
	}
	e = syscall_lookup(st.nr);
	if (!e) {
		/* Not ours (a tracee's own filter can ask for TRACE too). */
		c->name = decode_unknown_name(c);
		return 0;
	}
	d.e = e;
	c->name = e->name;
	if (e->flags)
		c->flags = (int)decode_arg(&d, e->flags);
	if (e->mode) {
		c->is_chmod = true;
		c->chmod_mode = (unsigned)decode_arg(&d, e->mode);
	}
	for (unsigned i = 0; i < sizeof(e->bypass) / sizeof(e->bypass[0]); i++) {
		const struct syscall_bypass *b = &e->bypass[i];

		if (!b->id || !decode_bypass_holds(&d, b))
			continue;
		if (e->opts & SYSCALL_OPT_TIMEX) {
			rc = decode_timex_sets(&d);
			if (rc < 0)
				return decode_fail(c, rc);
			if (rc == 0)
				break; /* reads the clock's state */
		}
		if ((e->opts & SYSCALL_OPT_OWNER) &&
		    strcmp(b->id, syscall_bypass_signal_outside.id) == 0) {
			rc = decode_owner_outside(pid, ctx, c);
			if (rc < 0)
				return decode_fail(c, rc);
			if (rc == 0)
				break; /* an owner of the session's */
			return 0;
		}
		decode_set_bypass(c, b, b->err ? b->err : EPERM);
		return 0;
	}
	switch (e->cls) {
	case SYSCALL_EXEC:
		rc = decode_exec(&d);
		break;
	case SYSCALL_OPEN:
		rc = decode_open(&d);
		break;
	case SYSCALL_WRITE:
		rc = decode_write(&d);
		break;
	case SYSCALL_NET:
		rc = decode_net(&d);
		break;
	case SYSCALL_SIGNAL:
		rc = decode_signal(pid, ctx, e, c);
		break;
	case SYSCALL_SPAWN:
		c->spawns = true;
		c->spawns_thread = st.nr == __NR_clone && (c->flags & CLONE_THREAD);
		c->deny_errno = EAGAIN;
		rc = 0;
		break;
	default:
		rc = 0; /* a bypass class call whose condition does not hold */
		break;
	}
	return rc < 0 ? rc : c->error;
}
