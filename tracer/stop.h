/* A call the seccomp filter sent to the supervisor, handled the same way
 * whichever engine delivered it (a ptrace seccomp stop or a seccomp user
 * notification): decode, the canary, bypass calls, signals kept to the
 * session, spawns counted for --max-procs, the policy's events through the
 * shared judge step (judge.h).  The engine then carries out the answer. */
#ifndef AGENTTRACE_STOP_H
#define AGENTTRACE_STOP_H

#include <stdbool.h>
#include <sys/types.h>

struct session;
struct tracee;
struct call;
struct arch_stop;

enum stop_how {
	STOP_RUN = 0,  /* the kernel runs the call */
	STOP_RETURN,   /* it returns ret without running (-errno: it fails) */
};

struct stop_answer {
	enum stop_how how;
	long ret;
	/* ptrace only: run the call with argument cut_arg cut to this count
	 * (call.h cut), and watch its exit for the race detector. */
	bool cut;
	unsigned cut_arg;
	unsigned long cut_vlen;
	bool race_watch;
};

/* What the engine in use can do with a stopped call. */
struct stop_engine {
	bool can_cut;         /* change an argument before the call runs (ptrace) */
};

/* Closes the copy of the caller's socket that the handling of a call kept
 * for its emulation (session.h endpoint_copy).  Called before the call is
 * answered: a copy held past the answer keeps the caller's socket open
 * after the caller has closed it, and a peer waiting for its end waits
 * until the supervisor's next stop, for ever if none comes. */
void stop_release_copy(struct session *s);

/* Handle the call C of task T; ST: its number and arguments as the engine
 * read them (NULL: read them at the ptrace stop).  Fills A, always before
 * the call's records are written (to unwind the caller for a record the
 * notify engine may give the answer first, session.h frames_stop).  The
 * engine answers the caller. */
void stop_handle(struct session *s, struct tracee *t, const struct arch_stop *st,
		 const struct stop_engine *e, struct stop_answer *a);

/* An open the engine makes for task TID of C reached, by a name that
 * changed after C was judged, the denied file F (tracer/confine/linked.h):
 * C decided again as reaching F, into V.  The errno to refuse it with, 0
 * when F may be opened so. */
struct linked_file;
struct judge_verdict;
struct exec_pin;
struct stat;
int stop_reached_linked(struct session *s, const struct call *c, const struct linked_file *f,
			struct judge_verdict *v);

/* The pin (execid.h, struct exec_pin) of C's name when C, a call of task
 * T, opens a name T's program was given to run and opens itself; NULL:
 * none.  The open must reach the file judged at the exec: the notify
 * engine makes it (emulate.c), the ptrace engine looks at its result
 * (ptrace/pin-exit.c); either calls stop_pin_reached() on another. */
struct exec_pin *stop_pinned(const struct tracee *t, const struct call *c);

/* An open (its event of KIND) by task TID of a name its program was
 * given to run (PIN, execid.h) reached the file FD (ST) in place of the
 * one judged at the exec: judged as the program or script it becomes.
 * 0: allowed, and the pin holds it from now on (V an alert to record when
 * only the policy's audit mode let it); else the errno to answer, V the
 * refusal to record (race.exec; WHY: SIZE bytes the verdict points
 * into). */
int stop_pin_reached(struct session *s, pid_t tid, int kind, struct exec_pin *pin, int fd,
		     const struct stat *st, struct judge_verdict *v, char *why, size_t size);

/* C decided again, as a stop decides it, into V (an engine that found
 * what let it through gone when it came to make it).  The errno. */
int stop_decide_again(struct session *s, const struct call *c, struct judge_verdict *v);

/* V's record, when it is one, of task TID's call C: written once the
 * engine is itself again (the caller's identity put back). */
void stop_record_reached(struct session *s, pid_t tid, const struct call *c,
			 const struct judge_verdict *v);

/* Whether PID is a task of the session (struct call_ctx.in_session). */
bool stop_in_session(pid_t pid, void *arg);

#endif
