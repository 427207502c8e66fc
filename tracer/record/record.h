/* The one writer of records (doc/RECORDS.md): JSON Lines to the log (jansson), or
 * one short human line per alert on stderr.  Keys in a fixed order, "v":1
 * first.  Strings that are not valid UTF-8 keep every byte: each invalid
 * byte becomes the four characters "\xHH" (a literal backslash), since
 * JSON text must be UTF-8 and dropping bytes would lose the evidence. */
#ifndef AGENTTRACE_RECORD_H
#define AGENTTRACE_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "tracer/inspect/backtrace.h"
#include "tracer/inspect/pyframes.h"
#include "tracer/inspect/elfinfo.h"
#include "tracer/session.h"

/* One record.  Pointers are borrowed; NULL / -1 fields are left out. */
struct record {
	const char *event;      /* "alert", "exec", "open", "connect", "bind", "exit", "warning" */
	pid_t pid;
	pid_t ppid;
	const char *exe;
	const char *const *argv;
	size_t argc;
	bool no_cwd;            /* the process is gone: "cwd": null */

	const char *action;     /* "deny" "alert" "allow" */
	int kind;               /* enum session_kind, -1 none */
	const char *syscall;
	const char *path;
	const char *path2;
	int flags;              /* open flags, printed symbolically; with has_flags */
	bool has_flags;
	bool exchange;          /* a rename that swaps the two files: SYSCALL_EXCHANGE_TEXT */
	const char *addr;
	int port;               /* -1 none */
	const char *family;     /* "inet" "inet6" "unix" */
	const char *host;
	const char *target;     /* exec: the program run (agenttrace-policy(5), "Exec identity") */
	const char *const *target_argv; /* as exec'ed */
	size_t target_argc;
	const char *loader;     /* exec: the dynamic loader that runs target */
	const char *script_path; /* exec: the script file target interprets */
	const char *program_name; /* exec: its package's name for the script (or target) */
	int err;                /* errno of a denial, 0 none */
	const char *rule;
	const char *why;
	const char *suggest;     /* the policy layer that admits the event (rules/suggest.h) */
	const char *suggest_option; /* the command-line option that does the same */
	const char *content;     /* a replacement the supervisor made: the check it passed */
	const char *script;
	size_t script_len;

	bool has_exit;          /* "exit" records */
	int exit_code;          /* with has_exit; -1 when killed */
	int signal;             /* with has_exit; 0 none */

	const char *detail;     /* human line: object text when no path/addr fits */

	/* The calling code (alerts of the ptrace backend), frames 0..n-1. */
	const struct bt_frame *frames;
	int n_frames;
	/* Its Python-level frames (a CPython caller), 0..n-1. */
	const struct py_frame *py_frames;
	int n_py_frames;
	/* ELF facts of the program run (exec records and exec alerts). */
	const struct elf_facts *elf;

	/* Records of the preload backend (preload-mode.c) and host names. */
	const char *backend;     /* NULL: "ptrace" */
	const char *cwd;         /* the cwd the shim reported; NULL: /proc/PID/cwd */
	const char *host_source; /* net: "shim", "resolver", or "none" ("host": null) */
	/* net, a local destination: "session", "outside", "none"; NULL when
	 * not looked up */
	const char *endpoint;
	bool has_listener;       /* an outside one: who listens there */
	pid_t listener_pid;      /* 0: not found ("listener_pid": null) */
	const char *listener_exe;

	/* exec: the script's size, hash and copy; the program's, when the
	 * session wrote it (evidence.h).  NULL: none. */
	const struct evidence_file *script_file;
	const struct evidence_file *program_file;
};

/* Write one record.  "alert" records are counted into the session
 * counters.  Never fails: a log write that fails is warned about once and
 * counted in s->lost (agenttrace then exits 125 at the end). */
void record_emit(struct session *s, const struct record *r);

/* An exec record's evidence (evidence.h): the facts of R's script_path,
 * and of its program (TARGET, else EXE) when the session wrote it, in
 * FILES; R points at them. */
void record_exec_evidence(struct session *s, struct record *r, struct evidence_file files[2]);

/* R's process fields from T: the process, not the thread (what ps(1) and
 * the tools show), and what it runs when known. */
void record_who(struct record *r, const struct tracee *t);

struct tracee_info;

/* A write refused (an alert in audit mode) when the session ends, its
 * processes gone (cichannel.h, gitfind.h): PATH, RULE, WHY and DETAIL
 * (may be NULL), naming process PID running INFO (the command when PID
 * is 0), with no working directory. */
void record_end_write(struct session *s, pid_t pid, const struct tracee_info *info,
		      const char *path, const char *rule, const char *why, const char *detail,
		      bool audit);

struct alerted_change;

/* What the session's end knows besides the session's own counters. */
struct summary_facts {
	int exit_code;
	int signal;                   /* 0: none */
	const pid_t *left;            /* processes left running, killed */
	size_t n_left;
	char *const *changed_outside; /* what survived outside ROOT and the temp dirs */
	size_t n_changed_outside;
	bool changed_outside_collapsed;
	const struct survive *state;  /* the agents' own state written (survive.h) */
	const struct alerted_change *alerted; /* the files write alerts named (alerted.h) */
	size_t n_alerted;
	uint64_t alerted_other;       /* ... past the ones told apart */
	bool as_root;
	int landlock_abi;             /* 0: no Landlock */
	const char *private_tmp;      /* NULL: none */
	/* The command's masks (tracer/confine/mask.h): wanted (not --mask
	 * off, not audit), the namespace made (NULL: none), how many of each
	 * kind were planned and how many are in force, why none or not all
	 * are (NULL), and the human line when the races stay open (NULL). */
	bool masks_wanted;
	const char *masks_ns;
	unsigned masks_read, masks_write, masks_in_force;
	const char *masks_why;
	const char *masks_note;
	const char *preload_note;     /* preload-only: what the shim cannot see; NULL: ptrace */
	const char *engine;           /* the supervisor's engine: "notify", "ptrace" */
	char *const *unseen;          /* preload-only: static programs run unseen */
	size_t n_unseen;
	struct egress *egress;        /* the destinations judged (egress.h), sorted */
	const char *project_policy;   /* the project's policy in force; NULL: none */
	bool project_policy_trusted;  /* ... with --trust-project-policy */
	const struct evidence *evidence; /* --evidence; NULL: none */
	const struct depsnap_changes *deps; /* the dependency files changed (snapshot.h) */
	const struct install_list *installed; /* the packages installed (installed.h) */
	const struct installs *installs;      /* ... and the install scripts run */
};

/* The last record: counts, exit status, what survived, processes left
 * running. */
void record_summary(struct session *s, const struct summary_facts *f);

/* The address of a net event as text: dotted quad, IPv6 text, or the
 * unix path ("@name" for abstract).  False for other families. */
bool record_addr_text(const struct rules_event *ev, char *buf, size_t size);

/* A record's "family": "inet", "inet6", "unix"; NULL for others. */
const char *record_family_name(int family);


#endif
