/* The preload-only backend's run loop: poll the channel and the signals
 * until the command's main process has exited; one record per EVENT.
 * Nothing is traced here, so there are no stops: the shim has already
 * decided (and denied) in-process by the time its message arrives. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <arpa/inet.h>
#include <unistd.h>

#include "lib/exitcode.h"
#include "lib/log.h"
#include "lib/xalloc.h"
#include "rules/rules.h"
#include "tracer/signals.h"
#include "tracer/inspect/backtrace.h"
#include "tracer/inspect/elfinfo.h"
#include "tracer/shim/hosts.h"
#include "tracer/shim/resolver.h"
#include "tracer/confine/limits.h"
#include "tracer/ptrace/loop.h"
#include "tracer/shim/preload-mode.h"
#include "tracer/inspect/proc.h"
#include "tracer/confine/endpoints.h"
#include "tracer/judge.h"
#include "tracer/record/record.h"

#define PRELOAD_MODE_ARGV_MAX 256

/* "a\0b\0c\0" (len bytes) -> argv[] pointing into it. */
static size_t preload_mode_split(const char *buf, size_t len, uint32_t argc,
				 const char **argv, size_t max)
{
	size_t n = 0, off = 0;

	while (n < argc && n < max && off < len) {
		argv[n++] = buf + off;
		off += strnlen(buf + off, len - off) + 1;
	}
	return n;
}

static void preload_mode_unseen(struct session *s, const char *target)
{
	struct elf_facts f;

	if (elfinfo_read(target, &f) < 0 || !f.is_elf || !f.is_static)
		return;
	for (size_t i = 0; i < s->n_unseen; i++)
		if (strcmp(s->unseen[i], target) == 0)
			return;
	s->unseen = xrealloc(s->unseen, (s->n_unseen + 1) * sizeof(*s->unseen));
	s->unseen[s->n_unseen++] = xstrdup(target);
	info_msg("preload-only: %s is static, the shim cannot see what it does", target);
}

/* Names for the shim's pcs, from the object and offset it found in its
 * own /proc/self/maps. */
static int preload_mode_frames(const struct channel_event *e, struct bt_frame *out)
{
	uint32_t n = e->n_frames < CHANNEL_FRAMES ? e->n_frames : CHANNEL_FRAMES;

	for (uint32_t i = 0; i < n; i++) {
		const struct channel_frame *f = &e->frames[i];
		char obj[CHANNEL_OBJECT];

		memset(&out[i], 0, sizeof(out[i]));
		memcpy(obj, f->object, sizeof(obj));
		obj[sizeof(obj) - 1] = 0;
		out[i].pc = f->pc;
		snprintf(out[i].object, sizeof(out[i].object), "%s", obj);
		if (obj[0] == '/' &&
		    elfinfo_symbol(obj, f->file_offset, out[i].sym, sizeof(out[i].sym),
				   &out[i].offset) < 0) {
			out[i].sym[0] = 0;
			out[i].offset = 0;
		}
	}
	return (int)n;
}

/* ---- --max-procs without a tracer ----
 *
 * The shim asks before fork, vfork and posix_spawn* (preload/wrap-proc.c)
 * and reports the process it made; agenttrace counts the command's main
 * process, the processes so reported while they live (a pidfd each, polled
 * when the next ask comes: agenttrace is not their tracer and not always
 * their parent), and the spawns granted but not reported yet.  Programs
 * without the shim (static ones) and libc-internal spawns (system(3),
 * popen(3)) are not counted: agenttrace(1), BACKENDS.  One session per
 * agenttrace process, so the table is file-local. */

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434 /* the same number on every architecture */
#endif

/* A grant whose DONE never came (its asker was killed in between) stops
 * counting once the asker is gone, or after this long. */
#define PRELOAD_MODE_GRANT_MS 30000

struct preload_mode_proc {
	pid_t pid;
	int pidfd; /* -1: no pidfd (old kernel, fd limit): /proc is asked */
};

struct preload_mode_grant {
	pid_t asker;
	uint32_t token;
	uint64_t at_ms;
};

static struct {
	struct preload_mode_proc *procs;
	size_t n_procs;
	struct preload_mode_grant *grants;
	size_t n_grants;
} preload_mode_tab;

/* Whether PID still runs (a zombie has ended): its /proc stat state. */
static bool preload_mode_alive(pid_t pid)
{
	struct proc_stat st;

	return proc_stat(pid, &st) == 0 && st.state != 'Z' && st.state != 'X';
}

/* Forget the processes that have ended and the grants that went stale. */
static void preload_mode_prune(struct session *s)
{
	struct pollfd *pfd;
	size_t n = 0, w = 0;
	uint64_t now = session_elapsed_ms(s);

	pfd = xcalloc(preload_mode_tab.n_procs + 1, sizeof(*pfd));
	for (size_t i = 0; i < preload_mode_tab.n_procs; i++)
		if (preload_mode_tab.procs[i].pidfd >= 0)
			pfd[n++] = (struct pollfd){ .fd = preload_mode_tab.procs[i].pidfd,
						    .events = POLLIN };
	/* A pidfd is readable once its process has exited (pidfd_open(2)). */
	if (n && poll(pfd, n, 0) < 0)
		memset(pfd, 0, n * sizeof(*pfd));
	n = 0;
	for (size_t i = 0; i < preload_mode_tab.n_procs; i++) {
		struct preload_mode_proc *p = &preload_mode_tab.procs[i];
		bool gone;

		if (p->pidfd >= 0)
			gone = pfd[n++].revents != 0;
		else
			gone = !preload_mode_alive(p->pid);
		if (gone) {
			if (p->pidfd >= 0)
				close(p->pidfd);
			continue;
		}
		preload_mode_tab.procs[w++] = *p;
	}
	preload_mode_tab.n_procs = w;
	free(pfd);

	w = 0;
	for (size_t i = 0; i < preload_mode_tab.n_grants; i++) {
		struct preload_mode_grant *g = &preload_mode_tab.grants[i];

		if (now - g->at_ms > PRELOAD_MODE_GRANT_MS || !preload_mode_alive(g->asker))
			continue;
		preload_mode_tab.grants[w++] = *g;
	}
	preload_mode_tab.n_grants = w;
}

/* The refusal's record: the asker, as /proc shows it (it waits for the
 * answer, so its entries are there), given to limits.c's refusal. */
static void preload_mode_spawn_refused(struct session *s, const struct channel_msg *m)
{
	const char *argv[PRELOAD_MODE_ARGV_MAX];
	char path[64], exe[PATH_MAX], args[CHANNEL_ARGV], sc[33];
	struct record who = { 0 };
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)m->pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = 0;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)m->pid);
	n = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, args, sizeof(args) - 1);
		close(fd);
	}
	if (n < 0)
		n = 0;
	args[n] = 0;
	who.argc = preload_mode_split(args, (size_t)n, PRELOAD_MODE_ARGV_MAX, argv,
				      PRELOAD_MODE_ARGV_MAX);
	memcpy(sc, m->u.spawn.syscall, sizeof(m->u.spawn.syscall));
	sc[sizeof(sc) - 1] = 0;
	who.pid = m->pid;
	who.ppid = m->ppid;
	who.exe = exe[0] ? exe : NULL;
	who.argv = argv;
	who.backend = "preload";
	limits_spawn_refused(s, &who, sc[0] ? sc : "fork");
}

static void preload_mode_spawn_ask(struct session *s, const struct channel_msg *m)
{
	const struct channel_spawn *sp = &m->u.spawn;
	int32_t answer = 0;
	size_t live;

	if (session_counts_spawns(s)) {
		preload_mode_prune(s);
		live = (s->main_done ? 0 : 1) + preload_mode_tab.n_procs + preload_mode_tab.n_grants;
		if (live >= s->max_procs) {
			answer = EAGAIN;
			preload_mode_spawn_refused(s, m);
		} else {
			struct preload_mode_grant *g;

			preload_mode_tab.grants = xrealloc(preload_mode_tab.grants,
							   (preload_mode_tab.n_grants + 1) *
							   sizeof(*preload_mode_tab.grants));
			g = &preload_mode_tab.grants[preload_mode_tab.n_grants++];
			g->asker = m->pid;
			g->token = sp->token;
			g->at_ms = session_elapsed_ms(s);
		}
	}
	/* The asker's own socket, empty: the answer fits (EOF would mean
	 * "go on" too, should it not). */
	if (sp->reply_fd >= 0 &&
	    send(sp->reply_fd, &answer, sizeof(answer), MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		debug_msg("max-procs: cannot answer pid %d: %s", (int)m->pid, strerror(errno));
}

static void preload_mode_spawn_done(struct session *s, const struct channel_msg *m)
{
	const struct channel_spawn *sp = &m->u.spawn;
	struct preload_mode_proc *p;
	int fd;

	(void)s;
	for (size_t i = 0; i < preload_mode_tab.n_grants; i++) {
		struct preload_mode_grant *g = &preload_mode_tab.grants[i];

		if (g->asker == m->pid && g->token == sp->token) {
			*g = preload_mode_tab.grants[--preload_mode_tab.n_grants];
			break;
		}
	}
	if (sp->child <= 0)
		return;
	fd = (int)syscall(SYS_pidfd_open, (pid_t)sp->child, 0);
	if (fd < 0 && errno == ESRCH)
		return; /* already reaped: it counts no more */
	preload_mode_tab.procs = xrealloc(preload_mode_tab.procs,
					  (preload_mode_tab.n_procs + 1) *
					  sizeof(*preload_mode_tab.procs));
	p = &preload_mode_tab.procs[preload_mode_tab.n_procs++];
	p->pid = sp->child;
	p->pidfd = fd >= 0 ? fd : -1;
}

static void preload_mode_spawn_free(void)
{
	for (size_t i = 0; i < preload_mode_tab.n_procs; i++)
		if (preload_mode_tab.procs[i].pidfd >= 0)
			close(preload_mode_tab.procs[i].pidfd);
	free(preload_mode_tab.procs);
	free(preload_mode_tab.grants);
	memset(&preload_mode_tab, 0, sizeof(preload_mode_tab));
}

/* The identity the shim found for an exec (its paths resolved in the
 * caller's view): the program from target_arg0 of ARGV (N elements). */
static void preload_mode_identity(struct identity *id, const struct channel_event *e,
				  const char *const *argv, size_t n)
{
	size_t arg0 = e->target_arg0 < n ? e->target_arg0 : 0;

	identity_of_resolved(id, e->target, argv + arg0, n - arg0,
			     e->path2[0] ? e->path2 : NULL, e->path[0] ? e->path : NULL,
			     e->script_arg);
}

/* One event the shim decided (and applied) in-process: its record. */
static void preload_mode_decided(struct session *s, const struct channel_msg *m)
{
	const struct channel_event *e = &m->u.event;
	const char *argv[PRELOAD_MODE_ARGV_MAX], *targv[PRELOAD_MODE_ARGV_MAX];
	struct bt_frame frames[CHANNEL_FRAMES];
	struct rules_event ev[RULES_CALL_EVENTS] = { { 0 } };
	struct judge_call c = { .syscall = e->syscall, .events = ev, .n_events = 1 };
	static struct identity id;
	struct judge_verdict v;
	struct judge_who w = {
		.pid = m->pid, .ppid = m->ppid, .exe = e->exe, .argv = argv,
		.cwd = e->cwd, .backend = "preload",
	};

	w.argc = preload_mode_split(e->argv, sizeof(e->argv), e->argc, argv, PRELOAD_MODE_ARGV_MAX);
	ev[0].kind = e->kind;
	switch (e->kind) {
	case RULES_KIND_WRITE:
	case RULES_KIND_READ:
		ev[0].path = e->path;
		if (e->path2[0]) {
			ev[1].kind = e->kind;
			ev[1].path = e->path2;
			c.n_events = 2;
		}
		c.n_events = rules_add_name_reads(ev, c.n_events, e->reads, ev[0].path,
						  e->path2[0] ? e->path2 : NULL);
		c.flags = e->flags;
		c.has_flags = e->has_flags;
		break;
	case RULES_KIND_NET:
		ev[0].family = e->family;
		memcpy(ev[0].addr, e->addr, sizeof(ev[0].addr));
		ev[0].port = e->port;
		ev[0].unix_path = e->unix_path[0] ? e->unix_path : NULL;
		ev[0].bind = e->bind != 0;
		ev[0].endpoint = e->endpoint;
		c.listener[0] = e->listener;
		if (e->family != AF_UNIX && e->host[0] && !e->bind) {
			ev[0].host = e->host;
			c.host_source[0] = CHANNEL_SOURCE_SHIM;
		}
		judge_names(s, &c);
		break;
	case RULES_KIND_EXEC:
		ev[0].exe = e->target;
		ev[0].argc = preload_mode_split(e->target_argv, sizeof(e->target_argv), e->target_argc,
						targv, PRELOAD_MODE_ARGV_MAX);
		ev[0].argv = targv;
		preload_mode_identity(&id, e, targv, ev[0].argc);
		c.id = &id;
		c.id_ready = true;
		if (e->effective != RULES_ACTION_DENY && e->target[0])
			preload_mode_unseen(s, e->target);
		break;
	default:
		break;
	}
	judge_shim_verdict(s, &c, e->action, e->effective, e->rule, e->err, &v);
	v.quiet = e->quiet != 0;
	if (v.effective != RULES_ACTION_ALLOW) {
		w.n_frames = preload_mode_frames(e, frames);
		w.frames = w.n_frames ? frames : NULL;
	}
	judge_record(s, &w, &c, &v);
}

/* BIND: the shim saw a socket of the session bound (lib/channel-wire.h). */
static void preload_mode_bind(struct session *s, const struct channel_msg *m)
{
	const struct channel_endpoint *b = &m->u.endpoint;
	char name[sizeof(b->name)];

	memcpy(name, b->name, sizeof(name));
	name[sizeof(name) - 1] = '\0';
	if (s->endpoints && b->ino)
		endpoints_claim(s->endpoints, b->ino, b->family == AF_UNIX ? name : NULL);
}

/* ENDPOINT_ASK: whose is the local destination the shim is to decide. */
static void preload_mode_endpoint(struct session *s, const struct channel_msg *m)
{
	const struct channel_endpoint *q = &m->u.endpoint;
	struct channel_endpoint_answer ans = { .endpoint = RULES_ENDPOINT_OUTSIDE };
	struct rules_event ev = { .kind = RULES_KIND_NET, .family = q->family, .port = q->port };
	struct endpoint_found f = { .copy = -1 };
	char name[sizeof(q->name)];

	memcpy(name, q->name, sizeof(name));
	name[sizeof(name) - 1] = '\0';
	memcpy(ev.addr, q->addr, sizeof(ev.addr));
	if (q->family == AF_UNIX)
		ev.unix_path = name;
	if (s->endpoints && rules_net_local(&ev)) {
		endpoints_find_on(s->endpoints, q->sock_fd, &ev, &f);
		endpoints_note_autobind(s->endpoints, q->sock_fd);
		ans.endpoint = f.endpoint;
		ans.answer = f.answer;
		ans.listener = f.listener;
	}
	if (q->reply_fd >= 0 &&
	    send(q->reply_fd, &ans, sizeof(ans), MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		debug_msg("cannot answer pid %d about a local destination: %s", (int)m->pid,
			  strerror(errno));
}

void preload_mode_event(struct session *s, const struct channel_msg *m)
{
	const struct channel_event *e = &m->u.event;

	if (m->type == CHANNEL_BIND) {
		preload_mode_bind(s, m);
		return;
	}
	if (m->type == CHANNEL_ENDPOINT_ASK) {
		preload_mode_endpoint(s, m);
		return;
	}
	if (m->type == CHANNEL_SPAWN_ASK) {
		preload_mode_spawn_ask(s, m);
		return;
	}
	if (m->type == CHANNEL_SPAWN_DONE) {
		preload_mode_spawn_done(s, m);
		return;
	}
	if (m->type != CHANNEL_EVENT)
		return;
	if (e->kind == CHANNEL_KIND_EXEC_NOTICE) {
		const char *argv[PRELOAD_MODE_ARGV_MAX], *targv[PRELOAD_MODE_ARGV_MAX];
		static struct identity id;
		struct evidence_file files[2];
		struct record r = { 0 };

		if (e->target[0])
			preload_mode_unseen(s, e->target);
		if (!s->record_all)
			return;
		r.event = "exec";
		r.pid = m->pid;
		r.ppid = m->ppid;
		r.exe = e->exe;
		r.argc = preload_mode_split(e->argv, sizeof(e->argv), e->argc, argv,
					    PRELOAD_MODE_ARGV_MAX);
		r.argv = argv;
		r.cwd = e->cwd;
		r.backend = "preload";
		r.port = -1;
		r.syscall = e->syscall;
		r.kind = -1;
		r.target = e->target;
		r.target_argc = preload_mode_split(e->target_argv, sizeof(e->target_argv),
						   e->target_argc, targv, PRELOAD_MODE_ARGV_MAX);
		r.target_argv = targv;
		preload_mode_identity(&id, e, targv, r.target_argc);
		r.loader = id.loader;
		r.script_path = id.script;
		r.program_name = id.script ? id.script_name : id.exe_name;
		record_exec_evidence(s, &r, files);
		record_emit(s, &r);
		return;
	}
	if (e->kind >= RULES_KIND_COUNT)
		return;
	preload_mode_decided(s, m);
}

/* Children of agenttrace other than the command's main process and the
 * host name resolver: processes of the session that outlived it (they
 * were reparented here, agenttrace being their subreaper). */
static void preload_mode_left(struct session *s, pid_t **left, size_t *n_left)
{
	char path[96], buf[4096];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)getpid(), (int)getpid());
	f = fopen(path, "re");
	if (!f)
		return;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	for (char *p = buf, *end; *p; p = end) {
		long pid = strtol(p, &end, 10);
		char exe[64], target[PATH_MAX];
		ssize_t len;

		if (end == p)
			break;
		if (pid <= 0 || pid == s->main_pid)
			continue;
		/* A child still running agenttrace's own code: the resolver. */
		snprintf(exe, sizeof(exe), "/proc/%ld/exe", pid);
		len = readlink(exe, target, sizeof(target) - 1);
		if (len > 0 && s->self_exe && (size_t)len == strlen(s->self_exe) &&
		    memcmp(target, s->self_exe, (size_t)len) == 0)
			continue;
		*left = xrealloc(*left, (*n_left + 1) * sizeof(**left));
		(*left)[(*n_left)++] = (pid_t)pid;
	}
}

static void preload_mode_reap(struct session *s)
{
	int status;
	pid_t pid;

	for (;;) {
		pid = waitpid(-1, &status, WNOHANG);
		if (pid < 0 && errno == EINTR)
			continue;
		if (pid <= 0)
			break;
		if (pid == s->main_pid) {
			s->main_done = true;
			signals_forward_stop();
			s->main_status = status;
		}
	}
}

/* The command itself is started by agenttrace, which carries no shim:
 * whether it is static is learnt here (execvp's PATH search). */
static void preload_mode_check_command(struct session *s)
{
	const char *cmd = s->opt->command ? s->opt->command[0] : NULL;
	const char *path = getenv("PATH");
	char cand[PATH_MAX];

	if (!cmd || !*cmd)
		return;
	if (strchr(cmd, '/')) {
		preload_mode_unseen(s, cmd);
		return;
	}
	for (const char *p = path ? path : "/bin:/usr/bin";; p++) {
		const char *end = strchrnul(p, ':');
		int n = (int)(end - p);

		snprintf(cand, sizeof(cand), "%.*s/%s", n ? n : 1, n ? p : ".", cmd);
		if (access(cand, X_OK) == 0) {
			preload_mode_unseen(s, cand);
			return;
		}
		if (!*end)
			return;
		p = end;
	}
}

/* The command itself is exec'ed by agenttrace, which carries no shim: its
 * exec is decided here, as the shim would decide an exec.  Returns -1 to
 * go on, or the exit status after a denial (126, as for a program that
 * cannot be run; the record and the summary are written). */
int preload_mode_decide_command(struct session *s)
{
	const char *const *argv = (const char *const *)s->opt->command;
	const char *cmd = argv ? argv[0] : NULL;
	const char *path = getenv("PATH");
	char exe[PATH_MAX];
	struct rules_event ev = { .kind = RULES_KIND_EXEC };
	struct judge_call c = { .syscall = "execve", .events = &ev, .n_events = 1,
				.deny_errno = EACCES };
	struct judge_who w = { .pid = getpid(), .ppid = getppid(), .exe = s->self_exe,
			       .backend = "preload" };
	struct judge_verdict v;
	static struct identity id;
	size_t argc = 0;

	if (!cmd || !*cmd)
		return AT_GO_ON;
	while (argv[argc])
		argc++;
	exe[0] = '\0';
	if (strchr(cmd, '/')) {
		if (!realpath(cmd, exe))
			snprintf(exe, sizeof(exe), "%s", cmd);
	} else {
		for (const char *p = path ? path : "/bin:/usr/bin";; p++) {
			const char *end = strchrnul(p, ':');
			int n = (int)(end - p);
			char cand[PATH_MAX];

			snprintf(cand, sizeof(cand), "%.*s/%s", n ? n : 1, n ? p : ".", cmd);
			if (access(cand, X_OK) == 0 && realpath(cand, exe))
				break;
			exe[0] = '\0';
			if (!*end)
				break;
			p = end;
		}
	}
	if (!exe[0])
		return AT_GO_ON; /* not found: execvp reports 127 as usual */
	free(s->command_exe);
	s->command_exe = xstrdup(exe);
	ev.exe = exe;
	ev.argv = argv;
	ev.argc = argc;
	/* agenttrace's cwd is the command's: paths resolve in its view. */
	c.id = &id;
	c.view_pid = getpid();
	judge_decide(s, &c, &v);
	w.argv = argv;
	w.argc = argc;
	judge_record(s, &w, &c, &v);
	if (!v.err)
		return AT_GO_ON;
	error_msg("%s: %s", cmd, strerror(v.err));
	s->command_refused = true;
	return AT_EXIT_NOEXEC;
}

void preload_mode_run(struct session *s, pid_t **left, size_t *n_left)
{
	sigset_t set;
	struct pollfd pfd[2];
	int sfd;

	*left = NULL;
	*n_left = 0;
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	/* Only a wake-up for the exits: forwarded signals interrupt poll()
	 * by themselves (signals.c). */
	sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (signals_forward_start(s->main_pid) < 0)
		warn_errno("cannot forward signals to the command");
	limits_start(s);
	resolver_run(s);
	preload_mode_check_command(s);
	while (!s->main_done) {
		long timeout = limits_next_ms(s);

		pfd[0] = (struct pollfd){ .fd = s->channel_fd, .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		if (timeout < 0 || timeout > 1000)
			timeout = 1000; /* a safety net, as signals_wait() */
		if (poll(pfd, 2, (int)timeout) < 0 && errno != EINTR)
			break;
		channel_drain(s);
		signals_wait(0);
		preload_mode_reap(s);
		limits_check(s);
		resolver_run(s);
	}
	/* Events sent just before the end are queued already. */
	channel_drain(s);
	preload_mode_left(s, left, n_left);
	for (size_t i = 0; i < *n_left; i++)
		kill((*left)[i], SIGKILL);
	for (size_t i = 0; i < *n_left; i++)
		while (waitpid((*left)[i], NULL, 0) < 0 && errno == EINTR)
			;
	preload_mode_reap(s);
	preload_mode_spawn_free();
	if (sfd >= 0)
		close(sfd);
}
