/* The task table: every traced task (thread or process) by tid, in a hash
 * table so that thousands of processes cost O(1) per stop. */
#ifndef AGENTTRACE_TRACEE_H
#define AGENTTRACE_TRACEE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "rules/rules.h"
#include "tracer/inspect/execid.h"

/* What a process is running: the program and its argv.  Shared (refcounted)
 * by the threads of a process and by fork children until they exec, so that
 * a fork costs no copy.  One allocation holds everything. */
struct tracee_info {
	unsigned refs;
	char *exe;   /* the program run (through the loader: the program it runs) */
	size_t argc;
	char **argv; /* argc entries + NULL, as exec'ed */
	/* What the exec record says besides (agenttrace(1), RECORDS): the
	 * loader, the script an interpreter runs, its package's name; NULL:
	 * none. */
	char *loader;
	char *script;
	size_t script_arg; /* argv[script_arg] named the script */
	char *name;
	/* The files it opens itself by names it was given, to be the
	 * ones judged (execid.h; stop_pin_reached() judges another). */
	struct exec_pin pins[EXEC_PINS_MAX];
	unsigned n_pins;
	/* The program this one replaced, or that the process's parent ran
	 * when it forked it (a reference held); NULL: the session's command,
	 * or CUT: a line longer than RULES_LINEAGE_MAX was not kept above
	 * this one.  DEPTH counts the programs from here up. */
	struct tracee_info *parent;
	unsigned depth;
	bool cut;
};

/* I, which the exec of a process whose program was PREV makes it run,
 * takes over the reference to PREV as its parent. */
void tracee_info_link(struct tracee_info *i, struct tracee_info *prev);

/* The line of programs from I up (rules.h, struct rules_event lineage)
 * as exec events in OUT (MAX of them; pointers into the infos); their
 * number, and in *CUT whether programs above them were not kept. */
size_t tracee_info_lineage(const struct tracee_info *i, struct rules_event *out, size_t max,
			   bool *cut);

/* Processes of the session that use one thing between them: one memory
 * or descriptor table (vfork, CLONE_VM, CLONE_FILES), until each execs or
 * exits; or one working directory and root (CLONE_FS), until each exits.
 * Whatever one of them changes there, the others' calls read or walk
 * after the supervisor has judged them, as a thread's can. */
struct tracee_share {
	unsigned procs;             /* processes in it; counted where into is NULL */
	unsigned refs;              /* groups and merged shares that point here */
	struct tracee_share *into;  /* the share this one was merged into */
};

/* The tasks of one thread group that the table holds: the race detector
 * (landlock.c) asks whether another thread shares a task's memory, and
 * counting here spares it a look at /proc at every write.  What the
 * process shares with other processes is the group's: a thread that
 * started a CLONE_VM child may exit while its siblings go on sharing. */
struct tracee_group {
	pid_t tgid;
	unsigned tasks;
	struct tracee_share *mem; /* NULL: its own */
	struct tracee_share *fs;  /* NULL: its own */
	struct tracee_group *next; /* hash chain */
};

/* CHILD, a new process, uses PARENT's memory or descriptor table (mem)
 * or its working directory (fs). */
void tracee_share_mem(struct tracee_group *parent, struct tracee_group *child);
void tracee_share_fs(struct tracee_group *parent, struct tracee_group *child);
/* G exec'd: a new memory and descriptor table, its own. */
void tracee_unshare_mem(struct tracee_group *g);
/* Whether another process of the session uses G's memory or descriptor
 * table, or its working directory. */
bool tracee_shares(const struct tracee_group *g);

struct tracee {
	pid_t pid;   /* tid */
	pid_t tgid;  /* the process */
	pid_t ppid;  /* the process that started this one (tgid) */
	struct tracee_info *info;
	/* The program of an execve stopped at but not yet done: becomes info at
	 * PTRACE_EVENT_EXEC, dropped when the exec fails and another starts. */
	struct tracee_info *pending_exec;
	/* The file that exec is to load, as judged (execid.h). */
	struct exec_id pending_exec_id;
	/* A fork/clone allowed at its seccomp stop whose new task has not been
	 * seen yet (counts against --max-procs). */
	bool spawn_pending;
	/* notify engine: the call the supervisor withdrew to unwind it for
	 * its record; when it comes again it is answered, not recorded again
	 * (loop.c loop_frames_stop()). */
	bool withdrawn;
	long withdrawn_nr;
	unsigned long withdrawn_args[6];
	/* ptrace engine: an open of a name its program was given to run,
	 * let run, whose exit stop looks at what it reached (owned;
	 * ptrace/pin-exit.h). */
	struct pin_exit *pin_exit;
	struct tracee_group *group; /* never NULL while the entry is in a table */
	struct tracee *next; /* hash chain */
};

struct tracee_table {
	struct tracee **buckets;
	size_t mask;          /* buckets - 1, a power of two minus one */
	size_t tasks;         /* entries */
	size_t procs;         /* entries with pid == tgid: live processes */
	size_t spawn_pending; /* entries with spawn_pending set */
	struct tracee_group **groups; /* hash by tgid, gmask + 1 buckets */
	size_t gmask;
	size_t ngroups;
};

struct tracee_info *tracee_info_new(const char *exe, const char *const *argv, size_t argc);
/* The same with the exec's loader, script and name (each may be NULL). */
struct tracee_info *tracee_info_new_exec(const char *exe, const char *const *argv, size_t argc,
					 const char *loader, const char *script, const char *name);
struct tracee_info *tracee_info_ref(struct tracee_info *i);
void tracee_info_unref(struct tracee_info *i);

void tracee_table_init(struct tracee_table *t);
void tracee_table_free(struct tracee_table *t);

struct tracee *tracee_find(const struct tracee_table *t, pid_t pid);
/* Adds a task; info is borrowed (a reference is taken). */
struct tracee *tracee_add(struct tracee_table *t, pid_t pid, pid_t tgid, pid_t ppid,
			  struct tracee_info *info);
void tracee_remove(struct tracee_table *t, pid_t pid);
void tracee_set_spawn_pending(struct tracee_table *t, struct tracee *e, bool on);

/* Entries of thread group TGID in the table (0 when none).  It counts the
 * same tasks as the kernel's thread count (/proc/TGID/task): a thread is
 * added at its first stop or its creator's clone event, before it runs any
 * code, and removed when waitpid() reaps it, which is also when the
 * kernel releases a traced thread. */
size_t tracee_group_tasks(const struct tracee_table *t, pid_t tgid);

/* Calls fn for every entry; fn must not add or remove entries. */
void tracee_foreach(const struct tracee_table *t, void (*fn)(struct tracee *e, void *arg),
		    void *arg);

#endif
