/* The event loop: wait for a stop, classify it, act, resume with
 * PTRACE_CONT (never PTRACE_SYSCALL: only seccomp stops cost anything).
 *
 * Stop kinds (ptrace(2), with PTRACE_SEIZE):
 *   status>>16 == PTRACE_EVENT_SECCOMP   the filter asked: decode, decide
 *   PTRACE_EVENT_FORK/VFORK/CLONE        a new task (table entry)
 *   PTRACE_EVENT_EXEC                    a new program (tid may change)
 *   PTRACE_EVENT_STOP + stop signal      group-stop: PTRACE_LISTEN
 *   PTRACE_EVENT_STOP + SIGTRAP          a new task's first stop, or the
 *                                        wake-up after LISTEN: resume
 *   no event                             signal-delivery-stop: re-inject
 * Any ptrace call may fail with ESRCH: the tracee was killed meanwhile;
 * its exit is reported by waitpid later and handled there.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <linux/kcmp.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/xalloc.h"
#include "tracer/signals.h"
#include "tracer/syscall/arch.h"
#include "tracer/syscall/call.h"
#include "tracer/confine/endpoints.h"
#include "tracer/confine/landlock.h"
#include "tracer/judge.h"
#include "tracer/stop.h"
#include "tracer/syscall/probe.h"
#include "tracer/unotify/emulate.h"
#include "tracer/unotify/exposed.h"
#include "tracer/unotify/listener.h"
#include "tracer/confine/limits.h"
#include "tracer/ptrace/loop.h"
#include "tracer/ptrace/pin-exit.h"
#include "tracer/spawn.h"
#include "tracer/confine/signal-scope.h"
#include "tracer/confine/survive.h"
#include "tracer/shim/channel.h"
#include "tracer/shim/hosts.h"
#include "tracer/shim/resolver.h"
#include "tracer/inspect/creds.h"
#include "tracer/inspect/proc.h"
#include "tracer/inspect/pyframes.h"
#include "tracer/record/record.h"

#ifndef PTRACE_EVENT_STOP
#define PTRACE_EVENT_STOP 128
#endif

/* Tasks that exited before the event announcing them was handled (a
 * child can be killed before its parent's fork event is read): remembered
 * so that the late event does not add a dead task. */
#define LOOP_GONE_RING 64
static pid_t loop_gone[LOOP_GONE_RING];
static unsigned loop_gone_next;

static void loop_gone_add(pid_t pid)
{
	loop_gone[loop_gone_next++ % LOOP_GONE_RING] = pid;
}

static bool loop_gone_take(pid_t pid)
{
	for (unsigned i = 0; i < LOOP_GONE_RING; i++)
		if (loop_gone[i] == pid) {
			loop_gone[i] = 0;
			return true;
		}
	return false;
}

static void loop_resume(pid_t pid, int sig)
{
	if (ptrace(PTRACE_CONT, pid, 0L, (long)sig) < 0 && errno != ESRCH)
		debug_msg("PTRACE_CONT %d: %s", (int)pid, strerror(errno));
}

/* ---- seccomp stops ---- */

/* The ptrace engine's side of a call the filter sent: the shared handling
 * (tracer/stop.h), then its answer carried out in the stopped registers. */
static void loop_seccomp(struct session *s, struct tracee *t)
{
	static const struct stop_engine engine = { .can_cut = true };
	struct stop_answer a;

	stop_handle(s, t, NULL, &engine, &a);
	stop_release_copy(s);
	if (a.how == STOP_RETURN)
		call_skip(t->pid, a.ret);
	else if (a.cut)
		call_set_arg(t->pid, a.cut_arg, a.cut_vlen);
	if (a.how == STOP_RUN && a.race_watch)
		landlock_race_arm(s, t->pid, s->call);
	if (a.how == STOP_RUN)
		pin_exit_arm(t, s->call);
}

/* ---- new tasks ---- */

/* Tgid and PPid of a task from /proc (the real parent, not the tracer).
 * Both lie in the first lines of the status file (Name, Umask, State,
 * Tgid, Ngid, Pid, PPid), far within 512 bytes even with a 64-byte
 * escaped Name. */
static bool loop_task_ids(pid_t pid, pid_t *tgid, pid_t *ppid)
{
	char text[512];
	unsigned long long g, p;

	if (proc_read(pid, "status", text, sizeof(text)) < 0 ||
	    !proc_status_field(text, "\nTgid:", 10, &g) ||
	    !proc_status_field(text, "\nPPid:", 10, &p))
		return false;
	*tgid = (pid_t)g;
	*ppid = (pid_t)p;
	return true;
}

/* What a task runs, read from /proc when no parent told us. */
static struct tracee_info *loop_info_from_proc(pid_t pid)
{
	char path[64], exe[PATH_MAX];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = 0;
	return tracee_info_new(exe, NULL, 0);
}

/* A new process that shares its parent's memory (vfork, clone with
 * CLONE_VM), descriptor table (CLONE_FILES) or working directory
 * (CLONE_FS): either can change what the other's call reads, or where
 * its names lead, after the supervisor has judged it, as threads can
 * (tracee.h struct tracee_share). */
static void loop_note_shared(struct tracee *parent, struct tracee *child, int event)
{
	if (child->tgid == parent->tgid)
		return; /* a thread: its group counts it */
	/* Asked for every kind of child: a clone with SIGCHLD as its exit
	 * signal comes as a fork, whatever it shares. */
	if (event == PTRACE_EVENT_VFORK ||
	    syscall(SYS_kcmp, parent->pid, child->pid, KCMP_VM, 0, 0) == 0 ||
	    syscall(SYS_kcmp, parent->pid, child->pid, KCMP_FILES, 0, 0) == 0)
		tracee_share_mem(parent->group, child->group);
	if (syscall(SYS_kcmp, parent->pid, child->pid, KCMP_FS, 0, 0) == 0)
		tracee_share_fs(parent->group, child->group);
}

/* tracee_foreach(): what task E's process shares with the new process
 * ARG.  Every task, not only the leader: a thread may have a working
 * directory or descriptor table of its own (CLONE_THREAD without
 * CLONE_FS or CLONE_FILES), and the leader may be gone. */
static void loop_note_shared_with(struct tracee *e, void *arg)
{
	struct tracee *child = arg;

	if (e->tgid != child->tgid)
		loop_note_shared(e, child, 0);
}

/* Whether task PID, a tracee in its event stop, is still in it: a ptrace
 * request succeeds only on a tracee in a ptrace stop without a fatal
 * signal pending.  One in its event stop leaves it only when resumed or
 * killed, and never comes back to it dying: found there after a
 * question, it was there throughout. */
static bool loop_task_stopped(pid_t pid)
{
	unsigned long msg;

	return ptrace(PTRACE_GETEVENTMSG, pid, 0L, &msg) == 0;
}

/* Adds task PID, started by task PARENT (NULL when its first stop came
 * before the parent's event) as a thread of TGID, or of a thread group
 * of its own when TGID is PID (0: unknown, /proc tells). */
static struct tracee *loop_add_task(struct session *s, pid_t pid, struct tracee *parent,
				    pid_t tgid_known)
{
	pid_t tgid = pid, ppid = parent ? parent->tgid : 0;
	struct tracee *src = parent, *e;
	struct tracee_info *own = NULL;

	if (tgid_known > 0 && parent)
		tgid = tgid_known;
	else if (!loop_task_ids(pid, &tgid, &ppid) && !parent)
		return NULL; /* gone already */
	if (!src)
		src = tracee_find(&s->tasks, tgid != pid ? tgid : ppid);
	if (tgid != pid) {
		/* A thread: same program, same parent as its process. */
		struct tracee *leader = tracee_find(&s->tasks, tgid);

		if (leader) {
			src = leader;
			ppid = leader->ppid;
		}
	} else if (parent) {
		ppid = parent->tgid;
	}
	if (!src || !src->info)
		own = loop_info_from_proc(pid);
	e = tracee_add(&s->tasks, pid, tgid, ppid, own ? own : src->info);
	tracee_info_unref(own);
	/* A process seen before its parent's event, whose event may never
	 * come (the parent killed before its stop), and whose parent by
	 * /proc may be another (CLONE_PARENT): what it shares with any
	 * process of the session is known before its calls are judged.
	 * It has not run yet (a traced child starts stopped), so no
	 * process it shares with has been taken for alone meanwhile.  The
	 * parent's event, if it comes, adds nothing twice. */
	if (!parent && tgid == pid)
		tracee_foreach(&s->tasks, loop_note_shared_with, e);
	if (tgid == pid)
		s->processes_seen++;
	return e;
}

static void loop_spawned(struct session *s, struct tracee *t, int event)
{
	unsigned long msg = 0;
	struct tracee *c;
	pid_t child;

	tracee_set_spawn_pending(&s->tasks, t, false);
	if (ptrace(PTRACE_GETEVENTMSG, t->pid, 0L, &msg) < 0)
		return;
	child = (pid_t)msg;
	if (child <= 0)
		return;
	c = tracee_find(&s->tasks, child);
	if (!c) {
		unsigned long flags;
		pid_t tgid = 0;

		if (loop_gone_take(child))
			return;
		/* A thread or a process, as the kernel decides it: by
		 * CLONE_THREAD, whatever the event's kind. */
		if (arch_spawn_flags(t->pid, &flags) == 0)
			tgid = flags & CLONE_THREAD ? t->tgid : child;
		c = loop_add_task(s, child, t, tgid);
	}
	if (c) {
		loop_note_shared(t, c, event);
		/* kcmp() tells of the parent only while it waits in its
		 * event stop: killed meanwhile, its memory and directories
		 * are gone, and whoever else shares them with the new
		 * process is asked instead (every task). */
		if (!loop_task_stopped(t->pid))
			tracee_foreach(&s->tasks, loop_note_shared_with, c);
	}
}

/* ---- exec ---- */

/* agenttrace(1): a command about to run as root without --user gets a warning
 * record (in the log; on stderr with -v), once, at its first exec. */
static void loop_warn_root(struct session *s, struct tracee *t)
{
	struct record r = { 0 };

	s->root_warned = true;
	if (s->switch_user ? s->uid != 0 : geteuid() != 0)
		return;
	info_msg("the command runs as root (no --user)");
	r.event = "warning";
	record_who(&r, t);
	r.kind = -1;
	r.port = -1;
	r.rule = "user.root";
	r.why = spawn_root_warning(s); /* names the capabilities it kept */
	record_emit(s, &r);
}

static void loop_exec_race(struct session *s, struct tracee *t, const struct tracee_info *judged)
{
	struct rules_event ev = { .kind = RULES_KIND_EXEC, .exe = judged->exe,
				  .argv = (const char *const *)judged->argv, .argc = judged->argc };
	struct judge_call c = { .syscall = "execve", .events = &ev, .n_events = 1 };
	struct judge_verdict v;
	struct judge_who w;

	kill(t->tgid, SIGKILL);
	judge_own(&v, SESSION_KIND_EXEC, 0, RULES_ACTION_DENY, "race.exec",
		  "the program the kernel loaded is not the file, or runs not with the arguments, "
		  "that were judged (they changed after the check): the process was killed before "
		  "it ran", 0);
	judge_who_of_task(&w, t);
	w.stopped_tid = 0; /* a new program: nothing to unwind */
	judge_record(s, &w, &c, &v);
}

static void loop_exec(struct session *s, struct tracee *t)
{
	unsigned long msg = 0;
	pid_t former = 0;
	struct tracee *src = t;
	struct tracee_info *next;
	struct exec_id judged = { .known = false };
	bool unjudged = false;

	/* ptrace(2) "execve(2) under ptrace": an exec from a non-leader thread
	 * takes over the leader's tid; the event message holds the tid it
	 * had.  A group of one task has no other thread to exec: no need to
	 * ask (tracee_group_tasks() counts the same threads as the kernel). */
	if (tracee_group_tasks(&s->tasks, t->tgid) > 1 &&
	    ptrace(PTRACE_GETEVENTMSG, t->pid, 0L, &msg) == 0 && (pid_t)msg != t->pid) {
		former = (pid_t)msg;
		src = tracee_find(&s->tasks, former);
	}
	next = src ? src->pending_exec : NULL;
	if (src) {
		judged = src->pending_exec_id;
		src->pending_exec = NULL;
		src->pending_exec_id.known = false;
	}
	if (src && src != t)
		tracee_remove(&s->tasks, src->pid);
	if (!next) {
		/* No exec was judged: a call the decoder let the kernel fail
		 * (a path that did not resolve, a bad pointer) that the kernel
		 * ran after all, because another thread fixed its memory in
		 * between. */
		next = loop_info_from_proc(t->pid);
		unjudged = true;
	}
	/* The program replaced stays in the new one's line (rules "under"). */
	tracee_info_link(next, t->info);
	t->info = next;
	tracee_info_unref(t->pending_exec);
	t->pending_exec = NULL;
	/* A new memory and descriptor table (execve(2) unshares the
	 * table): the process that vforked it runs alone again. */
	tracee_unshare_mem(t->group);
	t->pending_exec_id.known = false;

	/* The program the kernel loaded must be the file that was judged: a
	 * path rewritten after the check (another thread), or a file swapped
	 * at the judged path, loads another one.  It has not run an
	 * instruction yet: it is killed here. */
	if (unjudged || !exec_id_matches(t->pid, &judged) ||
	    !exec_argv_matches(t->pid, &judged, (const char *const *)t->info->argv, t->info->argc) ||
	    !exec_env_matches(t->pid, &judged))
		loop_exec_race(s, t, t->info);

	/* A new address space: the unwinder's view of the old one is stale. */
	backtrace_forget(t->pid);
	pyframes_forget(t->pid);
	if (former) {
		backtrace_forget(former);
		pyframes_forget(former);
	}
	/* With --evidence, the exec of a script or of a program the session
	 * wrote is recorded for its copy even without --record. */
	if (s->record_all || (s->evidence.dir_fd >= 0 && t->info &&
			      (t->info->script || evidence_was_written(&s->evidence, t->info->exe)))) {
		struct record r = { 0 };
		struct evidence_file files[2];
		struct elf_facts elf;
		char exe[64];
		int fd;

		r.event = "exec";
		record_who(&r, t);
		r.kind = -1;
		r.port = -1;
		if (t->info) {
			r.loader = t->info->loader;
			r.script_path = t->info->script;
			r.program_name = t->info->name;
		}
		/* /proc/PID/exe names the very file the kernel ran. */
		snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)t->pid);
		fd = open(exe, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			if (elfinfo_read_fd(fd, &elf) == 0)
				r.elf = &elf;
			close(fd);
		}
		record_exec_evidence(s, &r, files);
		record_emit(s, &r);
	}
}

/* ---- exits ---- */

static void loop_exited(struct session *s, pid_t pid, int status)
{
	struct tracee *t = tracee_find(&s->tasks, pid);

	landlock_race_forget(pid);
	if (pid == s->main_pid) {
		s->main_done = true;
		signals_forward_stop();
		s->main_status = status;
		if (t && !s->main_info)
			s->main_info = tracee_info_ref(t->info);
	}
	if (!t) {
		loop_gone_add(pid);
		return;
	}
	if (t->pid == t->tgid && s->record_all) {
		struct record r = { 0 };

		r.event = "exit";
		record_who(&r, t);
		r.no_cwd = true;
		r.kind = -1;
		r.port = -1;
		r.has_exit = true;
		r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
		r.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
		record_emit(s, &r);
	}
	if (t->pid == t->tgid) {
		backtrace_forget(pid);
		pyframes_forget(pid);
	}
	tracee_remove(&s->tasks, pid);
}

/* ---- dispatch ---- */

static void loop_handle(struct session *s, pid_t pid, int status)
{
	struct tracee *t;
	int sig, event;

	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		loop_exited(s, pid, status);
		return;
	}
	if (!WIFSTOPPED(status))
		return;
	sig = WSTOPSIG(status);
	event = (int)((unsigned)status >> 16);
	t = tracee_find(&s->tasks, pid);
	if (!t) {
		/* A new task whose first stop came before its parent's
		 * fork/clone event. */
		t = loop_add_task(s, pid, NULL, 0);
		if (!t) {
			loop_resume(pid, 0);
			return;
		}
	}
	switch (event) {
	case PTRACE_EVENT_SECCOMP:
		loop_seccomp(s, t);
		if (landlock_race_armed(pid) || t->pin_exit) {
			/* The race detector, or the look at a pinned name's
			 * open, wants this call's exit stop. */
			if (ptrace(PTRACE_SYSCALL, pid, 0L, 0L) < 0) {
				landlock_race_forget(pid);
				free(t->pin_exit);
				t->pin_exit = NULL;
				loop_resume(pid, 0);
			}
		} else {
			loop_resume(pid, 0);
		}
		break;
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
	case PTRACE_EVENT_CLONE:
		loop_spawned(s, t, event);
		loop_resume(pid, 0);
		break;
	case PTRACE_EVENT_EXEC:
		loop_exec(s, t);
		loop_resume(pid, 0);
		/* After the resume: the command need not wait for the record
		 * (the first of a session, the costliest to write). */
		if (t->pid == s->main_pid && !s->root_warned) {
			loop_warn_root(s, t);
			endpoints_warn_inherited(s, t);
		}
		break;
	case PTRACE_EVENT_STOP:
		if (stops_is_stop_signal(sig))
			stops_group_stop(pid);
		else
			loop_resume(pid, 0);
		break;
	case 0:
		if (sig == (SIGTRAP | 0x80)) {
			/* An exit stop: the race detector's, or a pinned
			 * name's open's; no other is asked for. */
			landlock_race_exit(s, t);
			pin_exit_check(s, t);
			loop_resume(pid, 0);
		} else
			loop_resume(pid, stops_deliver(s, t, sig));
		break;
	default:
		loop_resume(pid, 0);
		break;
	}
}

/* ---- the notify engine's calls ---- */

/* session.h frames_stop: a task waiting in a notification is in no ptrace
 * stop, and libunwind-ptrace needs one.  PTRACE_INTERRUPT stops it on its
 * way out of the call, its stack as it was.  Where received notifications
 * wait killable (the filter's WAIT_KILLABLE_RECV) the interrupt cannot
 * end the wait: the call is answered here first, then the task stops.
 * Elsewhere the interrupt ends the wait (the kernel withdraws the
 * notification); once resumed, the task makes the call again and
 * loop_notification() answers it without recording it twice. */
static bool loop_frames_stop(struct session *s, pid_t tid)
{
	int status;
	pid_t r;

	if (s->frames_stopped == tid)
		return true;
	/* Not a notification's caller: a task in a ptrace stop (the calls
	 * that come as stops under this engine too, filter.c). */
	if (!s->notif || s->notif->tid != tid)
		return true;
	/* An exec let through runs a new program before the trap: its
	 * record goes without the old one's frames. */
	if (s->notify_killable && s->notif_answer->how == STOP_RUN &&
	    s->call->events[0].kind == RULES_KIND_EXEC && s->call->n_events)
		return false;
	/* A call the engine is to make itself, on what was judged: answered
	 * here it would run as the caller's memory then says (a flip from an
	 * alerted path to a credential), and withdrawn it would be judged
	 * again with its records muted.  Its record goes without frames. */
	if (s->notif_answer->how == STOP_RUN && s->emulate_opens) {
		struct tracee *t = tracee_find(&s->tasks, tid);

		if (t && emulate_needed(s, t, s->call))
			return false;
	}
	if (ptrace(PTRACE_INTERRUPT, tid, 0L, 0L) < 0)
		return false;
	if (s->notify_killable) {
		if (unotify_answer(s, s->notif, s->notif_answer) < 0)
			debug_msg("SECCOMP_IOCTL_NOTIF_SEND %d: %s", (int)tid, strerror(errno));
		s->notif_answered = true;
	}
	for (;;) {
		r = waitpid(tid, &status, __WALL);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return false;
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			s->deferred.pid = tid;
			s->deferred.status = status;
			return false;
		}
		if (WIFSTOPPED(status) && (unsigned)status >> 16 == PTRACE_EVENT_STOP) {
			s->frames_stopped = tid;
			return true;
		}
		/* Nothing else comes before the trap (get_signal() takes job
		 * control traps first); resume whatever it was. */
		loop_resume(tid, 0);
	}
}

/* Whether U is the call withdrawn from T, come again. */
static bool loop_withdrawn_again(struct tracee *t, const struct unotify_call *u)
{
	bool again = t->withdrawn && t->withdrawn_nr == u->st.nr &&
		     memcmp(t->withdrawn_args, u->st.args, sizeof(u->st.args)) == 0;

	t->withdrawn = false;
	return again;
}

/* One notification: the same handling as a ptrace seccomp stop
 * (tracer/stop.h), answered on the listener. */
static void loop_notification(struct session *s)
{
	static const struct stop_engine engine = { .can_cut = false };
	struct unotify_call u;
	struct stop_answer a = { .how = STOP_RUN };
	struct tracee *t;
	int r = unotify_next(s, &u);

	if (r < 0) {
		if (r != -ENOENT && r != -EINTR)
			debug_msg("SECCOMP_IOCTL_NOTIF_RECV: %s", strerror(-r));
		return;
	}
	t = tracee_find(&s->tasks, u.tid);
	if (!t)
		/* A new task whose first call came before its parent's
		 * fork/clone event. */
		t = loop_add_task(s, u.tid, NULL, 0);
	s->notif = &u;
	s->notif_answer = &a;
	s->notif_answered = false;
	if (t) {
		s->mute_records = loop_withdrawn_again(t, &u);
		stop_handle(s, t, &u.st, &engine, &a);
		s->mute_records = false;
	}
	s->notif = NULL;
	s->notif_answer = NULL;
	if (t && s->frames_stopped == u.tid) {
		/* Answered and unwound, or withdrawn to be unwound (the call
		 * then comes again). */
		s->frames_stopped = 0;
		if (!s->notif_answered) {
			t->withdrawn = true;
			t->withdrawn_nr = u.st.nr;
			memcpy(t->withdrawn_args, u.st.args, sizeof(u.st.args));
		}
		loop_resume(u.tid, 0);
		return;
	}
	if (s->notif_answered)
		return;
	/* An allowed call whose path, address or flags another task could
	 * rewrite before the kernel reads them again (an open, a connect,
	 * a bind, a send, a call that changes a name or a file's
	 * attributes): made here, on what was judged
	 * (tracer/unotify/emulate.h). */
	if (t && a.how == STOP_RUN && s->emulate_opens && emulate_needed(s, t, s->call)) {
		if (s->call->is_open && emulate_open(s, &u, s->call, &a) == 1)
			return;
		if (s->call->binds) {
			if (emulate_bind(s, &u, s->call, t->tgid, &a) == 1)
				return;
		} else if (s->call->listens)
			emulate_listen(s, &u, s->call, t->tgid, &a);
		else if (s->call->sockaddr_len && emulate_connect(s, &u, s->call, t->tgid, &a) == 1)
			return;
		else if (emulate_send(s, &u, s->call, t->tgid, &a) == 1)
			return;
		else if (a.how == STOP_RUN &&
			 emulate_path_call(s, &u, s->call, t->tgid, &a) == 1)
			return;
	}
	r = unotify_answer(s, &u, &a);
	if (r < 0 && r != -ENOENT)
		debug_msg("SECCOMP_IOCTL_NOTIF_SEND %d: %s", (int)u.tid, strerror(-r));
	if (s->deferred.pid) {
		pid_t pid = s->deferred.pid;

		s->deferred.pid = 0;
		loop_handle(s, pid, s->deferred.status);
	}
}

/* Waits up to TIMEOUT_MS (-1: no deadline) for something to handle.
 * Under the ptrace engine every stop is a SIGCHLD; under the notify
 * engine the listener is polled beside SIGCHLD's descriptor and its
 * notifications are answered here, without going back to waitpid() until
 * a child event comes: a call then costs a poll, a receive and an
 * answer. */
static void loop_idle(struct session *s, long timeout_ms)
{
	if (s->engine != SESSION_ENGINE_NOTIFY || s->sigchld_fd < 0) {
		signals_wait(timeout_ms);
		return;
	}
	for (;;) {
		struct pollfd pfd[2] = {
			{ .fd = s->sigchld_fd, .events = POLLIN },
			{ .fd = s->listener_hup ? -1 : s->listener_fd, .events = POLLIN },
		};
		int n = poll(pfd, 2, (int)(timeout_ms > INT_MAX ? INT_MAX : timeout_ms));

		if (n <= 0)
			return; /* the deadline, or a forwarded signal's handler */
		if (pfd[1].revents & POLLIN) {
			loop_notification(s);
		} else if (pfd[1].revents & (POLLHUP | POLLERR)) {
			/* No task uses the filter any more. */
			s->listener_hup = true;
		}
		if (pfd[0].revents) {
			struct signalfd_siginfo si[8];

			/* SIGCHLD alone, a standard signal: one is pending at
			 * most, and a read that did not fill the buffer took
			 * all there was, so no second read to see EAGAIN. */
			while (read(s->sigchld_fd, si, sizeof(si)) == (ssize_t)sizeof(si))
				;
			return;
		}
		timeout_ms = limits_next_ms(s);
		if (timeout_ms == 0)
			return;
	}
}

struct loop_left {
	pid_t *v;
	size_t n;
};

static void loop_collect_left(struct tracee *e, void *arg)
{
	struct loop_left *l = arg;

	if (e->pid != e->tgid)
		return;
	l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	l->v[l->n++] = e->pid;
}

/* Handles the stops already queued, without waiting; at most max. */
static void loop_drain(struct session *s, unsigned max)
{
	int status;
	pid_t pid;

	while (max-- > 0) {
		pid = waitpid(-1, &status, __WALL | WNOHANG);
		if (pid < 0 && errno == EINTR)
			continue;
		if (pid <= 0)
			break;
		loop_handle(s, pid, status);
	}
}

/* Handles events until the task table holds no process, no child is left
 * (ECHILD), or deadline_ms (session time) has passed. */
static void loop_settle(struct session *s, uint64_t deadline_ms)
{
	int status;
	pid_t pid;

	for (;;) {
		uint64_t now = session_elapsed_ms(s);

		if (now >= deadline_ms)
			break;
		pid = waitpid(-1, &status, __WALL | WNOHANG);
		if (pid > 0) {
			loop_handle(s, pid, status);
			if (s->tasks.procs == 0)
				break;
			continue;
		}
		if (pid < 0 && errno == EINTR)
			continue;
		if (pid < 0)
			break;
		limits_check(s);
		loop_idle(s, (long)(deadline_ms - now));
	}
}

void loop_run(struct session *s, pid_t **left, size_t *n_left)
{
	struct loop_left l = { NULL, 0 };
	unsigned since_poll = 0;
	int status;
	pid_t pid;

	/* The notify engine's listener comes from the child before its
	 * canary; a child that ended before sending it reports why itself. */
	if (s->engine == SESSION_ENGINE_NOTIFY) {
		int r = unotify_take(s);

		if (r < 0 && r != -ENOENT)
			warn_msg("cannot take the seccomp listener: %s", strerror(-r));
		info_msg("engine notify: seccomp user notification%s",
			 s->notify_sync ? ", sync wake-up" : " (no sync wake-up on this kernel)");
		s->frames_stop = loop_frames_stop;
		s->notify_killable = probe_notify_wait_killable();
		s->emulate_opens = probe_notify_addfd();
		if (s->emulate_opens)
			exposed_note_inherited(s);
	}
	/* Before any call is made for a caller (tracer/inspect/creds.h). */
	creds_init();
	/* The walk of the denied trees ran beside the start; its findings
	 * are needed from the first call judged on. */
	linked_finish(&s->linked);
	if (signals_forward_start(s->main_pid) < 0)
		warn_errno("cannot forward signals to the command");
	limits_start(s);
	resolver_run(s);
	while (!s->main_done) {
		/* Without a deadline, block in waitpid(): one system call per
		 * stop.  With one (or notifications to answer), poll and wait
		 * in loop_idle() until it. */
		long wait_ms = limits_next_ms(s);
		bool block = wait_ms < 0 && s->engine == SESSION_ENGINE_PTRACE;

		pid = waitpid(-1, &status, __WALL | (block ? 0 : WNOHANG));
		if (pid > 0) {
			loop_handle(s, pid, status);
			/* A tracee that never stops for long would starve the
			 * deadline checks: poll them now and then. */
			if (++since_poll >= 256) {
				since_poll = 0;
				limits_check(s);
			} else if (s->term_at_ms || s->kill_at_ms) {
				limits_check(s);
			}
			continue;
		}
		if (pid < 0 && errno == EINTR)
			continue;
		if (pid < 0) {
			/* ECHILD: no tracee left; the main process is gone. */
			if (errno != ECHILD)
				warn_errno("waitpid");
			s->main_done = true;
			signals_forward_stop();
			break;
		}
		limits_check(s);
		loop_idle(s, limits_next_ms(s));
	}
	/* Processes exiting together with the main one are already queued.
	 * After a timeout the others got SIGTERM too: let them end (the
	 * SIGKILL deadline still applies) before calling them left over. */
	loop_drain(s, 10000);
	if (s->tasks.procs && s->kill_at_ms)
		loop_settle(s, s->kill_at_ms + 100);
	tracee_foreach(&s->tasks, loop_collect_left, &l);
	for (size_t i = 0; i < l.n; i++)
		kill(l.v[i], SIGKILL);
	/* agenttrace is their subreaper (spawn.c): reap them, so that no
	 * zombie outlives the session either. */
	if (l.n)
		loop_settle(s, session_elapsed_ms(s) + 2000);
	*left = l.v;
	*n_left = l.n;
}
