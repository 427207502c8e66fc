/* agenttrace-report: one log -> one model (struct report) -> one of five
 * formats.  report.c reads the log and builds the model; each
 * report-FORMAT.c only prints it.  Every string in the model is owned by
 * the model (report_free). */
#ifndef AGENTTRACE_TOOLS_REPORT_H
#define AGENTTRACE_TOOLS_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define REPORT_NONE ((size_t)-1)

/* Record kinds of doc/RECORDS.md, plus one for kinds this build does not know. */
enum report_kind {
	REPORT_KIND_EXEC = 0,
	REPORT_KIND_WRITE,
	REPORT_KIND_READ,
	REPORT_KIND_NET,
	REPORT_KIND_SYSCALL,
	REPORT_KIND_LIMIT,
	REPORT_KIND_OTHER,
	REPORT_KIND_COUNT
};

struct report_frame {
	char *pc;       /* "0x7f..." as recorded (a number is printed in hex) */
	char *sym;      /* may be NULL */
	long long offset; /* -1 none */
	char *object;   /* may be NULL */
};

/* One alert, denial or warning record. */
struct report_alert {
	size_t line;            /* in the log */
	int64_t seq;
	char *time;
	int64_t t_ms;           /* -1 unknown */
	char *event;            /* "alert" or "warning" */
	char *action;           /* "deny", "alert"; NULL for warnings */
	char *mode;
	enum report_kind kind;
	char *kind_name;        /* as recorded ("write"), or "warning" */
	char *syscall;
	char *object;           /* "write /x": never NULL */
	char *path, *path2;     /* write/read: the record's paths; may be NULL */
	char *target;           /* exec: the program run; may be NULL */
	char *host;             /* net: the host name; may be NULL */
	long port;              /* net: -1 none */
	char *rule;             /* never NULL ("?" when the record had none) */
	char *why;
	char *suggest;
	char *err;
	char *script;
	char *context;
	long pid;
	char *exe;
	char *cmdline;          /* argv joined, shell-quoted */
	size_t proc;            /* index into procs, REPORT_NONE */
	struct report_frame *frames;
	size_t n_frames;
};

/* Alerts that are the same (action, rule, object) are one finding. */
struct report_finding {
	size_t first;           /* index into alerts */
	size_t count;
	size_t n_pids;          /* distinct processes (counted loosely: changes of pid) */
};

struct report_exec {
	char *exe;
	char *cmdline;
	int64_t t_ms;
};

struct report_proc {
	long pid, ppid;
	size_t parent;          /* index into procs, REPORT_NONE for a root */
	size_t *children;
	size_t n_children;
	char *exe;              /* the last program it ran */
	char *cmdline;
	struct report_exec *execs; /* from "exec" records (--record logs) */
	size_t n_execs;
	int64_t start_ms, end_ms; /* -1 unknown */
	bool exited;
	long exit_code;         /* -1 killed */
	long signal;
	size_t n_deny, n_alert;
	size_t first_line;
};

/* Per rule: how often it denied, alerted or allowed (allow: --record). */
struct report_rule {
	char *id;
	char *why;              /* the first non-empty why seen */
	enum report_kind kind;
	char *kind_name;
	size_t deny, alert, allow;
	size_t first_alert;     /* index into alerts, REPORT_NONE */
};

/* One destination of the summary's egress (doc/RECORDS.md). */
struct report_dest {
	char *family;           /* "inet", "inet6", "unix", or as recorded */
	char *addr;             /* never NULL */
	char *host;             /* may be NULL */
	long port;              /* -1 none */
	long long allowed, denied;
};

/* One package of a dependency file's diff (the summary's "dependencies"). */
struct report_dep {
	char *name;             /* never NULL */
	char *from, *to;        /* from NULL: added; to NULL: removed */
};

/* One dependency file the session created, removed or changed. */
struct report_depfile {
	char *path;             /* below the project's top; never NULL */
	char *format;           /* never NULL */
	char *status;           /* "added", "removed", "changed"; never NULL */
	bool parsed;            /* false: changed, the packages not known */
	long long added, removed, changed;
	long long cut;          /* packages the summary left out */
	struct report_dep *pkgs;
	size_t n_pkgs;
};

/* One package the session installed (the summary's "installed"). */
struct report_install {
	char *ecosystem, *name, *version, *source; /* never NULL ("" when absent) */
	char *url, *location;   /* may be NULL */
	bool flagged;           /* from a URL, git, or a path outside the project */
	bool install_script;
};

/* One install script that ran. */
struct report_script {
	char *ecosystem;        /* never NULL */
	char *package;          /* may be NULL: a source build */
	char *command;          /* never NULL */
	char *cwd;              /* may be NULL */
};

/* A copy of a script or program the session kept (--evidence), from the
 * exec records and alerts that name it; one entry per copy. */
struct report_evidence {
	char *copy;             /* DIR/SHA256 as recorded */
	char *path;             /* the script or program it is a copy of */
	char *what;             /* "script" or "program" */
	size_t line;            /* the first record naming it */
};

struct report {
	char *log_name;
	size_t lines, records, malformed;
	char *first_bad;        /* "LINE: why" of the first malformed line */
	size_t n_events[8];     /* by enum report_event below */

	struct report_proc *procs;
	size_t n_procs;
	struct report_alert *alerts;
	size_t n_alerts;
	struct report_finding *findings;
	size_t n_findings;
	struct report_rule *rules;
	size_t n_rules;
	size_t counts[REPORT_KIND_COUNT][2]; /* [kind][0 deny, 1 alert] */
	size_t n_warnings;

	char *session;
	int64_t t_first, t_last;  /* ms, -1 unknown */

	/* From the summary record, when the log has one. */
	bool has_summary;
	long exit_code;
	long signal;
	long long duration_ms;
	long long processes;
	long long lost;
	long long left_running;
	char *policy;
	char *mode;
	char *backend;
	char *context;
	char *command;          /* the command line */
	char *cwd;
	char *first_cwd;        /* the first record's cwd (a log without a summary) */
	/* The summary's egress, in its order (denied first, then by count). */
	bool has_egress;
	struct report_dest *egress;
	size_t n_egress;
	long long egress_other_allowed, egress_other_denied;

	struct report_evidence *evidence;
	size_t n_evidence;

	/* The summary's dependencies, when it has them (report-deps.c). */
	bool has_deps;
	char *deps_root;        /* the top the files' paths are below; may be NULL */
	struct report_depfile *depfiles;
	size_t n_depfiles;
	long long deps_added, deps_removed, deps_changed;
	bool deps_truncated;
	/* ... and what it installed. */
	struct report_install *installs;
	size_t n_installs;
	struct report_script *scripts;
	size_t n_scripts;
	long long installs_flagged;

	/* Not from the log: where the SARIF report places results (main). */
	char *workspace;        /* --root, else GITHUB_WORKSPACE, else the run's directory */
	char *workflow;         /* the workflow file of GITHUB_WORKFLOW_REF, relative */
	char *log_abs;          /* the log's absolute path, NULL for standard input */
	char *out_dir;          /* -o FILE's directory, absolute; NULL: standard output */
};

enum report_event {
	REPORT_EV_EXEC = 0,
	REPORT_EV_EXIT,
	REPORT_EV_OPEN,
	REPORT_EV_WRITE,
	REPORT_EV_CONNECT,
	REPORT_EV_ALERT,
	REPORT_EV_WARNING,
	REPORT_EV_OTHER,
};

/* Read LOG into r.  Returns 0, or -errno when the log cannot be read (the
 * message is in err).  Malformed lines are counted, not errors. */
int report_build(struct report *r, const char *log, char *err, size_t err_size);
void report_free(struct report *r);

const char *report_kind_name(enum report_kind k);

/* The summary's "dependencies" into r (report-deps.c); none freed. */
struct json_t;
void report_deps_read(struct report *r, const struct json_t *summary);
void report_deps_free(struct report *r);
/* A package's change: "added", "removed" or "changed". */
const char *report_dep_change(const struct report_dep *d);

/* Output formats: 0, or -1 after a write error (errno set). */
int report_text(const struct report *r, FILE *out);
int report_markdown(const struct report *r, FILE *out);
int report_html(const struct report *r, FILE *out);
int report_sarif(const struct report *r, FILE *out);
int report_junit(const struct report *r, FILE *out);

/* Shared helpers of the formats (report.c). */

/* The finding's lead sentence: "denied write /x" / "alert exec curl ...". */
const char *report_verb(const struct report_alert *a);
/* Processes in tree order (depth-first, roots in log order), with depth. */
size_t report_tree_order(const struct report *r, size_t *order, unsigned *depth);
/* "1 malformed line skipped" / "N malformed lines skipped", or NULL. */
const char *report_malformed_text(const struct report *r, char *buf, size_t size);
/* Milliseconds since the first record, -1 unknown. */
int64_t report_rel_ms(const struct report *r, int64_t t);
/* s cut to at most max bytes (at a UTF-8 boundary) with "..." appended
 * when cut; returns s itself when it fits, else buf. */
const char *report_trunc(const char *s, size_t max, char *buf, size_t size);
/* A destination as one line: "host:443 (192.0.2.1)", "192.0.2.1:443",
 * "[2001:db8::1]:443", "unix:/run/x.sock". */
void report_dest_text(const struct report_dest *d, char *buf, size_t size);
/* Frame i as one line: "#0 0x401136 main+0x16 (/usr/bin/prog)". */
void report_frame_text(const struct report_frame *f, size_t i, char *buf, size_t size);

#endif
