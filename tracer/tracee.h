/* The task table: every traced task (thread or process) by tid, in a hash
 * table so that thousands of processes cost O(1) per stop. */
#ifndef AGENTTRACE_TRACEE_H
#define AGENTTRACE_TRACEE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* What a process is running: the program and its argv.  Shared (refcounted)
 * by the threads of a process and by fork children until they exec, so that
 * a fork costs no copy.  One allocation holds everything. */
struct tracee_info {
	unsigned refs;
	char *exe;
	size_t argc;
	char **argv; /* argc entries + NULL */
};

struct tracee {
	pid_t pid;   /* tid */
	pid_t tgid;  /* the process */
	pid_t ppid;  /* the process that started this one (tgid) */
	struct tracee_info *info;
	/* The program of an execve stopped at but not yet done: becomes info at
	 * PTRACE_EVENT_EXEC, dropped when the exec fails and another starts. */
	struct tracee_info *pending_exec;
	/* A fork/clone allowed at its seccomp stop whose new task has not been
	 * seen yet (counts against --max-procs). */
	bool spawn_pending;
	struct tracee *next; /* hash chain */
};

struct tracee_table {
	struct tracee **buckets;
	size_t mask;          /* buckets - 1, a power of two minus one */
	size_t tasks;         /* entries */
	size_t procs;         /* entries with pid == tgid: live processes */
	size_t spawn_pending; /* entries with spawn_pending set */
};

struct tracee_info *tracee_info_new(const char *exe, const char *const *argv, size_t argc);
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
/* Moves a task to a new tid (exec from a non-leader thread takes over the
 * leader's tid).  Any entry already at new_pid is removed first. */
void tracee_rekey(struct tracee_table *t, struct tracee *e, pid_t new_pid);

/* Calls fn for every entry; fn must not add or remove entries. */
void tracee_foreach(const struct tracee_table *t, void (*fn)(struct tracee *e, void *arg),
		    void *arg);

#endif
