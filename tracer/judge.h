/* The one step every backend takes for a call it intercepted: decide the
 * call's policy events, then write the records that verdict calls for.
 *
 *     struct judge_call c = { syscall, events, n_events, ... };
 *     struct judge_verdict v;
 *     judge_decide(s, &c, &v);            // hosts, policy, mode, kernel answers
 *     ... the backend applies v.err (0: the call goes on) ...
 *     judge_record(s, &who, &c, &v);      // alert, or allow under --record
 *
 * The ptrace loop calls both; the preload backend records what the shim
 * already decided in-process (judge_shim_verdict() turns its message into a
 * verdict) and decides the command's own exec here; verdicts of the
 * supervisor's own (a bypass syscall, a write outside the Landlock roots,
 * a race) come from judge_own().  So an event gives the same record
 * whichever backend saw it, but for "backend". */
#ifndef AGENTTRACE_JUDGE_H
#define AGENTTRACE_JUDGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/channel-wire.h"
#include "rules/rules.h"
#include "tracer/inspect/backtrace.h"
#include "tracer/inspect/execid.h"
#include "tracer/inspect/identity.h"

struct session;

/* The calling process, as its records name it. */
struct judge_who {
	pid_t pid;                 /* the process (tgid) */
	pid_t ppid;
	const char *exe;
	const char *const *argv;
	size_t argc;
	const char *cwd;           /* NULL: read /proc/PID/cwd when recording */
	const char *backend;       /* NULL: the session's */
	/* Where in the code: the task in the call, unwound with
	 * libunwind-ptrace (in its ptrace stop, or the one the engine brings
	 * it into: session.h frames_stop), or frames the shim took
	 * in-process. */
	pid_t stopped_tid;         /* 0: none */
	const struct bt_frame *frames;
	int n_frames;
};

/* W for task T of the session's table, stopped in a call: the process,
 * not the thread (what ps(1) and the tools show), and what it runs. */
struct tracee;
void judge_who_of_task(struct judge_who *w, const struct tracee *t);

/* One intercepted call and its policy events (RULES_CALL_EVENTS at most:
 * rename, link and symlink have two). */
struct judge_call {
	const char *syscall;
	struct rules_event *events;
	size_t n_events;
	const bool *explicit_deny_only;   /* per event; NULL: none */
	enum channel_source host_source[RULES_CALL_EVENTS]; /* 0: no name known */
	/* A local destination (rules_net_local()) whose endpoint the backend
	 * found to be RULES_ENDPOINT_NONE: the errno the kernel gives there
	 * (tracer/confine/endpoints.h), 0: the call runs.  OUTSIDE: the
	 * inode of the socket there, for the record's listener (0 unknown). */
	int local_answer[RULES_CALL_EVENTS];
	uint64_t listener[RULES_CALL_EVENTS];
	/* A path of the call came through a magic link (/proc/PID/fd/N,
	 * cwd, root): the object it leads to may have no name any more (an
	 * unlinked file), so what a lookup of the name finds is no answer
	 * of the kernel's. */
	bool names_unsure;
	bool has_flags;                   /* an open: its flags go into the record */
	int flags;
	int deny_errno;                   /* what the program sees on a deny */
	/* The ptrace backend records an allowed exec when it happens
	 * (PTRACE_EVENT_EXEC, with the program's ELF facts), not here. */
	bool exec_recorded_later;
	/* An exec (event 0): the program it runs (tracer/inspect/identity.h)
	 * in storage of the caller's; NULL: judged as the event says.
	 * judge_decide() finds it in VIEW_PID's view (paths relative to its
	 * cwd; CALLER: the program VIEW_PID runs, may be NULL), unless
	 * ID_READY: a backend that resolved it itself (the shim). */
	struct identity *id;
	bool id_ready;
	pid_t view_pid;
	const struct identity_caller *caller;
	/* The environment the exec gives the program, for an interpreter
	 * that searches PATH for its script; NULL: not known. */
	const struct identity_env *env;
	/* Decide with the deny rules that judge content set aside: what the
	 * rest of the policy says (tracer/confine/content.h). */
	bool content_aside;
	/* An exec of a "#!" script: the events judge_decide() added after
	 * the exec as called, one per interpreter the kernel runs, and the
	 * entries of their lines as the kernel puts them before the
	 * script's name (struct exec_id lines), by digest. */
	size_t n_script_levels;
	unsigned script_lines;
	char script_lines_sha[65];
	/* An exec judged in the supervisor: the file it loads
	 * (exec_id_of(), read once, here) and its answer; EXEC_ID_READY
	 * false: not looked at. */
	bool exec_id_ready;
	int exec_id_rc;
	struct exec_id exec_id;
};

/* An exec of a "#!" script with more levels than judge_decide() judges. */
#define JUDGE_SCRIPT_LEVELS_RULE "exec.script-levels"

/* Record kinds beyond the policy's four (enum session_kind). */
struct judge_verdict {
	enum rules_action action;       /* the rule's action, mode not applied */
	enum rules_action effective;    /* what happens: allow, alert (let through), deny */
	int kind;                       /* enum session_kind of the record */
	size_t event;                   /* the event that decided (its object is recorded) */
	const struct rules_rule *rule;  /* the policy's rule; NULL: rule_id/why below */
	const char *rule_id;            /* the supervisor's own rules, "engine.error" */
	const char *why;                /* with a rule: said instead of the rule's why */
	/* The name the event's object was judged by, when it is not the
	 * event's own: another name of a denied file (tracer/confine/linked.h)
	 * is judged, and recorded, as that file. */
	const char *object;
	int err;                        /* errno the call fails with; 0: it goes on */
	/* A replacement the supervisor made itself after its bytes passed
	 * this content check (rules_content_name(), tracer/confine/content.h):
	 * recorded, so that a replay or learn decides it as it was. */
	const char *content;
	/* Refused with the kernel's own answer, nothing to record: an exec
	 * of a name that does not exist (execvp's PATH search), an open
	 * without O_CREAT of one (a missing ~/.npmrc), a mkdir of a name
	 * that does (mkdir -p).  Nothing runs or changes either way. */
	bool quiet;
};

/* Host names for the call's inet events that carry none yet: the session's
 * map (names the shim reported, and agenttrace's own lookups of the hosts
 * the policy names), with their source. */
void judge_names(struct session *s, struct judge_call *c);

/* Decide C: judge_names(), an exec's identity (C->id), the policy
 * (rules_decide_call()) on the events as the identity judges them, the
 * mode, the kernel's own answers.  Fills V. */
void judge_decide(struct session *s, struct judge_call *c, struct judge_verdict *v);

/* Decide C again as events that reached the denied file F by another
 * name: what the notify engine found on the descriptor it opened for the
 * caller (tracer/confine/linked.h) when the name judged led elsewhere
 * then, a name changed since judge_decide().  Fills V; its why and
 * object say so.  V->action is allow when F may be reached so too. */
struct linked_file;
void judge_decide_reached(const struct session *s, const struct judge_call *c,
			  const struct linked_file *f, struct judge_verdict *v);

/* The verdict the shim reached in-process for C's events: ACTION and
 * EFFECTIVE as the shim applied them, RULE its index in the block
 * (UINT32_MAX: none), ERR the errno it returned. */
void judge_shim_verdict(const struct session *s, const struct judge_call *c, uint8_t action,
			uint8_t effective, uint32_t rule, int err, struct judge_verdict *v);

/* A verdict of the supervisor's own: deny event EVENT of C (or the call
 * itself, for kind syscall) under RULE_ID, for WHY, with ERR; ACTION
 * alert lets it through. */
void judge_own(struct judge_verdict *v, int kind, size_t event, enum rules_action action,
	       const char *rule_id, const char *why, int err);

/* Write the records V calls for: an "alert" record for anything but an
 * allow (with suggest, script text and ELF facts of an exec, the calling
 * code), an "open"/"write"/"connect"/"exec" record of an allowed event
 * when the session records every event. */
void judge_record(struct session *s, const struct judge_who *w, const struct judge_call *c,
		  const struct judge_verdict *v);

#endif
