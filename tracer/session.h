/* The state of one run: options, policy, log, ceilings, counters, the task
 * table.  One instance, owned by main(). */
#ifndef AGENTTRACE_SESSION_H
#define AGENTTRACE_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "rules/generalise.h"
#include "rules/rules.h"
#include "tracer/confine/cichannel.h"
#include "tracer/confine/gitfind.h"
#include "tracer/confine/linked.h"
#include "tracer/deps/installed.h"
#include "tracer/deps/snapshot.h"
#include "tracer/record/egress.h"
#include "tracer/record/evidence.h"
#include "tracer/record/notify.h"
#include "tracer/options.h"
#include "tracer/ptrace/tracee.h"

struct call;
struct channel_msg;
struct stop_answer;
struct unotify_call;
struct privtmp;
struct landlock;
struct namewatch;
struct mask;
struct survive;
struct alerted;
struct endpoints;

/* Record kinds: the policy's four plus the supervisor's own two. */
enum session_kind {
	SESSION_KIND_EXEC = RULES_KIND_EXEC,
	SESSION_KIND_WRITE = RULES_KIND_WRITE,
	SESSION_KIND_READ = RULES_KIND_READ,
	SESSION_KIND_NET = RULES_KIND_NET,
	SESSION_KIND_SYSCALL,
	SESSION_KIND_LIMIT,
	SESSION_KIND_COUNT
};

const char *session_kind_name(enum session_kind k);

/* How the calls the filter sends reach the supervisor. */
enum session_engine {
	SESSION_ENGINE_PTRACE = 0,  /* ptrace seccomp stops */
	SESSION_ENGINE_NOTIFY,      /* seccomp user notification */
};

const char *session_engine_name(enum session_engine e);

/* Where the child's setup failed, sent over the CLOEXEC pipe (spawn.c). */
enum session_child_stage {
	SESSION_CHILD_OK = 0,
	SESSION_CHILD_SYNC,     /* the supervisor never said "traced" */
	SESSION_CHILD_FILTER,   /* filter_install() failed */
	SESSION_CHILD_CANARY,   /* filter_canary() was not refused */
	SESSION_CHILD_RLIMIT,   /* setrlimit() failed */
	SESSION_CHILD_USER,     /* --user: setgroups/setgid/setuid failed */
	SESSION_CHILD_LANDLOCK, /* landlock_restrict_self() failed */
	SESSION_CHILD_EXEC,     /* execvp() failed */
	SESSION_CHILD_CAPS,     /* a root command's capabilities could not be dropped */
	SESSION_CHILD_CGROUP,   /* the session's cgroup refused the command */
};

struct cgroup_session;

struct exposed;

struct session {
	struct options *opt;
	struct rules_policy *policy;
	struct rules_anchors anchors; /* ${ROOT} ${TMPDIR} ${HOME} of this run, for suggestions */
	char *suggest_base;       /* what a suggested layer extends: the last --policy */
	char *project_policy;     /* ${ROOT}/.agenttrace.json in force (project-policy.h); NULL: none */
	char id[17];              /* random hex, per run */
	char *context;            /* NULL: none */
	char *self_exe;           /* agenttrace's own binary */
	char *cwd;                /* agenttrace's cwd at start */
	bool record_all;          /* --record or the policy's "record" */

	/* --user: the credentials the command runs with. */
	bool switch_user;
	uid_t uid;
	gid_t gid;
	gid_t *groups;
	size_t n_groups;
	/* --private-tmp: the command's TMPDIR, removed at the end. */
	char *private_tmp;
	struct privtmp *privtmp;  /* privtmp.c: its parent fd, private /tmp */
	struct landlock *landlock; /* landlock.c: the backstop, NULL: none */
	struct mask *mask;        /* mask.c: the command's masks, NULL: not wanted */
	/* linked.c: the denied files with other names, noted by the mask
	 * plan whether or not masks are made */
	struct linked linked;
	struct notify notify;     /* GitHub annotations, step summary, syslog */
	struct survive *survive;  /* survive.c: paths changed outside ROOT/temp */
	struct alerted *alerted;  /* alerted.c: the files write alerts named */
	struct endpoints *endpoints; /* endpoints.c: the session's own local sockets */
	/* The copy of the caller's socket its connect was judged on
	 * (endpoints.h), for the notify engine to make the call on; -1. */
	int endpoint_copy;
	struct egress egress;     /* egress.h: the destinations connects and sends were judged for */
	struct evidence evidence; /* evidence.h: --evidence DIR, and what the session wrote */
	struct depsnap deps_before; /* snapshot.h: the project's dependency files at the start */
	struct installs installs; /* installed.h: package dirs written, install scripts run */
	struct cichannels cichannels; /* cichannel.h: $GITHUB_ENV and $GITHUB_PATH at the start */
	struct gitfind gitfind;   /* gitfind.h: where the session wrote names git finds repositories by */

	/* The log (-o): one write() per record, O_APPEND. */
	int log_fd;               /* -1: records are human lines on stderr */
	uint64_t seq;
	uint64_t lost;            /* records that could not be written */
	bool log_warned;

	/* Ceilings in force (command line over policy "limits"). */
	uint64_t max_procs;
	uint32_t max_procs_percent;  /* max_procs is this share of the kernel's task limit */
	uint64_t timeout_ms;
	uint64_t max_memory;
	uint32_t max_memory_percent; /* max_memory is this share of the machine's */
	uint64_t max_cpu;
	struct timespec started;  /* CLOCK_MONOTONIC */
	struct timespec started_real;
	/* CLOCK_REALTIME_COARSE, the clock of files' birth times: what the
	 * session made is born after it (content.c). */
	struct timespec started_coarse;
	uint64_t term_at_ms;      /* 0: no timeout pending; else SIGTERM time */
	uint64_t kill_at_ms;      /* 0: none; else SIGKILL time after SIGTERM */
	bool timed_out;
	unsigned spawn_refusals;  /* --max-procs refusals (first ones recorded) */
	uint64_t cache_code;      /* files made code in a cache (cachecode.h) */
	/* cgroup.c: --max-memory/--max-cpu for the whole session; NULL: per
	 * process rlimits (no usable cgroup). */
	struct cgroup_session *cgroup;
	uint64_t cgroup_poll_at_ms; /* next look at its CPU time and OOM kills */
	uint64_t oom_kills;       /* OOM kills already recorded */
	bool cpu_exceeded;        /* --max-cpu hit: SIGXCPU sent, SIGKILL pending */
	bool procs_exceeded;      /* the task ceiling hit: the session killed */

	/* The command. */
	pid_t main_pid;
	bool main_done;
	int main_status;          /* wait status of the main process */
	int child_pipe;           /* read end of the setup-failure pipe, -1 */
	int stderr_orig;          /* the command's stderr when agenttrace has its own, -1 */
	struct tracee_info *main_info; /* what the main process ran last */
	bool root_warned;
	bool command_refused;     /* the command's own exec was denied: nothing ran */

	/* Tasks. */
	struct tracee_table tasks;
	uint64_t processes_seen;
	uint64_t stops;            /* seccomp stops decided (the summary's "stops") */
	struct call *call;        /* one decode buffer, reused at every stop */

	/* The engine (--engine): how the calls the filter sends reach the
	 * supervisor (tracer/unotify/ for notify; ptrace stops otherwise).
	 * Both engines follow the processes with ptrace. */
	enum session_engine engine;
	bool notify_sync;         /* notify: SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP in force */
	bool notify_killable;     /* notify: received notifications wait killable (5.19) */
	int listener_fd;          /* notify: the filter's listener; -1 */
	int listener_sock;        /* notify: where the child sends it; -1 */
	int sigchld_fd;           /* notify: SIGCHLD as a descriptor to poll; -1 */
	bool listener_hup;        /* notify: no task uses the filter any more */
	bool emulate_opens;       /* notify: racing callers' opens are made here (emulate.h) */
	struct exposed *exposed;  /* notify: which callers can race (exposed.c) */
	struct namewatch *namewatch; /* notify: which calls a changed name can turn (namewatch.c) */
	/* notify: a task in a call is not in a ptrace stop; to unwind its
	 * stack for a record the engine brings it into one (NULL: the
	 * ptrace engine, where it is in one already).  True when it is. */
	bool (*frames_stop)(struct session *s, pid_t tid);
	/* notify: the records of the call being handled were written before
	 * (its first notification was withdrawn to take its backtrace, and
	 * the call came again): it is answered, not recorded twice. */
	bool mute_records;
	pid_t frames_stopped;     /* notify: the task frames_stop() stopped; 0 none */
	/* notify: the notification being handled and its answer, which
	 * frames_stop() gives before unwinding (a received notification
	 * waits killable: an interrupt stops the caller only once its call
	 * is answered). */
	const struct unotify_call *notif;
	const struct stop_answer *notif_answer;
	bool notif_answered;
	struct {                  /* notify: an exit seen while waiting for that stop */
		pid_t pid;
		int status;
	} deferred;

	/* The preload shim (channel.c, hosts.c, preload-mode.c). */
	bool preload_only;        /* no tracing: --backend preload, or auto fell back */
	const char *preload_lib;  /* the shim given to the command; NULL: none */
	char *run_dir;            /* private dir of the policy blob; NULL: none */
	bool run_dir_made;        /* made only when the shim needs the blob */
	char *blob_path;
	char *linked_path; /* beside it: the denied files with other names */
	int channel_fd;           /* -1: no channel */
	/* What becomes of the shim's decided events and spawn questions in a
	 * preload-only session (channel_drain()). */
	void (*channel_handler)(struct session *s, const struct channel_msg *m);
	char channel_name[48];    /* "@agenttrace-<id>" */
	struct hosts *hosts;      /* address -> name (hosts.h) */
	bool resolved;            /* resolver.c: a lookup was started at least once */
	uint64_t resolved_at;     /* ... at this session time (ms) */
	char **unseen;            /* preload-only: static programs run unseen */
	char *command_exe;        /* preload-only: the command's resolved program
				   * (no exec event tells it), NULL: unknown */
	size_t n_unseen;

	/* Counters for the summary. */
	uint64_t counts[SESSION_KIND_COUNT][RULES_ACTION_COUNT];
	uint64_t denials;
	uint64_t alerts;
	bool fail_on_hit;         /* a record --fail-on-alert fails the run on */
	/* A program's own sandbox refused (a new namespace, a seccomp
	 * listener): the calls, and the first program that made one. */
	uint64_t own_sandbox_refused;
	char own_sandbox_by[32];
};

/* One alert record of KIND (enum session_kind) and ACTION under rule id
 * RULE, written or only counted (the ceilings' and the race detector's
 * later refusals): the summary's counters, and --fail-on-alert. */
void session_count(struct session *s, int kind, enum rules_action action, const char *rule);

/* A denial under RULE of a call of program PROG (its base name): when
 * RULE refuses what a program's own sandbox needs (syscall.namespace,
 * syscall.seccomp_listener), counted for the summary's line that says
 * a sandbox cannot nest here. */
void session_note_own_sandbox(struct session *s, const char *rule, const char *prog);

/* The exit status of agenttrace after the command ended (agenttrace(1), EXIT STATUS). */
int session_exit_status(const struct session *s);


/* Milliseconds since the session started (CLOCK_MONOTONIC). */
uint64_t session_elapsed_ms(const struct session *s);

/* 16 random hex digits and a NUL (the session id, the run dir's name);
 * without entropy yet (early boot), from time and pid. */
void session_token(char out[17]);

/* Whether each spawn is counted against --max-procs (a number); a share
 * is the kernel's to keep, in the session's cgroup, with no stop. */
static inline bool session_counts_spawns(const struct session *s)
{
	return s->max_procs && !s->max_procs_percent;
}

#endif
