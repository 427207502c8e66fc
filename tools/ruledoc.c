/* The descriptions of rule ids for the reports (tools/ruledoc.h).
 *
 * One table, searched in order, first match wins: exact ids first, then
 * prefixes from the most to the least specific.  An entry with "about"
 * is one of the supervisor's own ids (no policy describes it); an entry
 * without it only places a policy rule in an area, and the rule's own
 * "why" says what it protects.
 *
 * Severities follow GitHub's security-severity scale (9.0 and up
 * critical, 7.0 high, 4.0 medium, below that low): what could follow if
 * the refused call had run.  Precision says how well the rule's match
 * stands for what it names: syscall ids are exact, path and address
 * rules match resolved paths and addresses, rules that name programs can
 * be dodged by a renamed copy (agenttrace-policy(5)). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xalloc.h"
#include "tools/ruledoc.h"

/* What a category means: one sentence shared by every rule in it. */
struct ruledoc_category {
	const char *tag;
	const char *risk;
};

static const struct ruledoc_category ruledoc_categories[] = {
	{ "persistence",
	  "Files and programs of this kind run commands later, outside any supervision: a change "
	  "to them lets unreviewed code outlive the session." },
	{ "credential-access",
	  "Secrets read by unreviewed code can be sent anywhere the session can reach." },
	{ "command-and-control",
	  "A program wired to the network hands control of the machine to whoever is at the "
	  "other end." },
	{ "execution", "Code run this way was never reviewed." },
	{ "privilege-escalation",
	  "The step leaves the supervised user, or reaches a service that acts with more rights "
	  "than the session has." },
	{ "defense-evasion",
	  "Programs run from memory or dropped in temporary directories leave little to inspect "
	  "and are the usual second stage of an attack." },
	{ "supply-chain",
	  "Package installs run the packages' own build and install scripts with the user's "
	  "rights." },
	{ "exfiltration",
	  "A connection outside the allow-list can carry the project's data or secrets away." },
	{ "tampering",
	  "Writes outside the project's areas change the system or the user's environment." },
	{ "supervisor-escape",
	  "The call would step around the supervisor; it is refused in every mode, audit "
	  "included, because letting it run would end the supervision." },
	{ "supervisor-integrity",
	  "agenttrace's own log, policy, binary and run files are write-protected from the "
	  "command, so that it cannot rewrite its rules or the evidence of what it did." },
	{ "race",
	  "A path changed between the supervisor's check and the kernel's use of it: a program "
	  "raced the supervisor (time of check to time of use)." },
	{ "resource-limit", "A ceiling set for the session (an option or the policy's limits) was reached." },
	{ "hardening", "The command ran with more rights than it needs." },
};

/* How to allow what a rule refused: the forms the entries name. */
enum ruledoc_allow {
	ALLOW_BY_KIND = 0,   /* a policy rule: by its kind and action */
	ALLOW_FALLBACK,      /* a section's fallback: add an allow rule */
	ALLOW_NEVER_SYSCALL, /* refused in every mode */
	ALLOW_NEVER_SELF,    /* agenttrace's own files */
	ALLOW_NOTHING,       /* allowed calls that were reported */
	ALLOW_TEXT,          /* the entry's own text */
};

struct ruledoc_entry {
	const char *id;       /* exact id, or a prefix when it ends in '.' or '-' */
	const char *category; /* a tag of ruledoc_categories */
	const char *severity;
	const char *precision;
	const char *about;    /* the supervisor's own ids: what it is; NULL: the rule's why */
	enum ruledoc_allow allow;
	const char *allow_text; /* ALLOW_TEXT */
};

static const struct ruledoc_entry ruledoc_table[] = {
	/* The supervisor's refusals of calls that would step around it. */
	{ "syscall.io_uring", "supervisor-escape", "9.0", "very-high",
	  "io_uring performs file and network I/O in the kernel, out of sight of the supervisor",
	  ALLOW_NEVER_SYSCALL, NULL },
	{ "syscall.aio", "supervisor-escape", "9.0", "very-high",
	  "Linux AIO writes what it reads into the caller's memory while its calls are judged, "
	  "as a second thread would",
	  ALLOW_NEVER_SYSCALL, NULL },
	{ "syscall.userfaultfd", "supervisor-escape", "9.0", "very-high",
	  "userfaultfd lets a process hold the supervisor's read of its memory and show it one "
	  "value and the kernel another",
	  ALLOW_NEVER_SYSCALL, NULL },
	{ "syscall.ptrace", "supervisor-escape", "9.0", "very-high",
	  "a process tracing another could change its calls after the supervisor's checks",
	  ALLOW_NEVER_SYSCALL, NULL },
	{ "syscall.process_vm_writev", "supervisor-escape", "9.0", "very-high",
	  "writing another process's memory changes its calls' arguments after the checks",
	  ALLOW_NEVER_SYSCALL, NULL },
	{ "syscall.bpf", "supervisor-escape", "9.0", "very-high",
	  "BPF programs run in the kernel and can observe or change what the supervisor relies on",
	  ALLOW_NEVER_SYSCALL, NULL },
	{ "syscall.mount", "supervisor-escape", "9.0", "very-high",
	  "mounts, chroot and pivot_root change the file-system view that paths are judged in",
	  ALLOW_NEVER_SYSCALL, NULL },
	{ "syscall.namespace", "supervisor-escape", "9.0", "very-high",
	  "new namespaces change what paths, addresses and processes mean to the supervisor",
	  ALLOW_NEVER_SYSCALL, NULL },
	{ "syscall.open_by_handle", "supervisor-escape", "9.0", "very-high",
	  "open_by_handle_at opens files by inode handle, with no path to check",
	  ALLOW_NEVER_SYSCALL, NULL },
	{ "syscall.clone_untraced", "supervisor-escape", "9.0", "very-high",
	  "CLONE_UNTRACED starts a process the supervisor would not trace",
	  ALLOW_NEVER_SYSCALL, NULL },
	{ "syscall.seccomp_listener", "supervisor-escape", "9.0", "very-high",
	  "a seccomp user-notification listener would outrank the supervisor's filter",
	  ALLOW_NEVER_SYSCALL, NULL },
	{ "syscall.abi", "supervisor-escape", "9.0", "very-high",
	  "32-bit and x32 system calls use another numbering that the filter does not judge",
	  ALLOW_NEVER_SYSCALL, NULL },
	{ "syscall.unresolvable", "supervisor-escape", "7.0", "high",
	  "the path could not be resolved as the kernel would (too long, or too many symlinks)",
	  ALLOW_NEVER_SYSCALL, NULL },
	{ "syscall.", "supervisor-escape", "9.0", "very-high",
	  "a system call that would step around the supervisor", ALLOW_NEVER_SYSCALL, NULL },

	/* The kernel backstop and the races it catches. */
	{ "landlock.outside-roots", "tampering", "6.0", "high",
	  "a write beneath a write root that did not exist when the session started: Landlock "
	  "binds to existing directories, so the supervisor refuses what the kernel could not cover",
	  ALLOW_TEXT,
	  "Create the directory before the run, so that the backstop covers it from the start, "
	  "or run with `--landlock off` (the supervisor's own check stays)." },
	{ "landlock.race", "race", "8.5", "high",
	  "Landlock refused a write the supervisor had allowed: the path changed after the check",
	  ALLOW_NOTHING, NULL },
	{ "race.toctou", "race", "8.5", "high",
	  "an allowed write reached a path the policy denies: the path changed after the check",
	  ALLOW_NOTHING, NULL },

	/* Ceilings. */
	{ "limit.timeout-kill", "resource-limit", "2.0", "very-high",
	  "the session outlived --timeout and its processes were killed", ALLOW_TEXT,
	  "Give the session more time with `--timeout SEC` or the policy's `limits.timeout`." },
	{ "limit.timeout", "resource-limit", "2.0", "very-high",
	  "the session reached --timeout and its processes were told to stop", ALLOW_TEXT,
	  "Give the session more time with `--timeout SEC` or the policy's `limits.timeout`." },
	{ "limit.max-procs", "resource-limit", "3.0", "very-high",
	  "a process creation over --max-procs failed with EAGAIN (a fork storm is stopped here)",
	  ALLOW_TEXT, "Raise the ceiling with `--max-procs N` or the policy's `limits.max_procs`." },
	{ "limit.max-memory", "resource-limit", "3.0", "very-high",
	  "the session reached --max-memory and the kernel ended one of its processes",
	  ALLOW_TEXT, "Raise the ceiling with `--max-memory SIZE` or the policy's `limits.max_memory`." },
	{ "limit.max-cpu-kill", "resource-limit", "3.0", "very-high",
	  "the session used more CPU time than --max-cpu and its processes were killed",
	  ALLOW_TEXT, "Raise the ceiling with `--max-cpu SEC` or the policy's `limits.max_cpu`." },
	{ "limit.max-cpu", "resource-limit", "3.0", "very-high",
	  "the session reached --max-cpu and its processes were sent SIGXCPU",
	  ALLOW_TEXT, "Raise the ceiling with `--max-cpu SEC` or the policy's `limits.max_cpu`." },
	{ "limit.", "resource-limit", "3.0", "very-high", "a ceiling of the session was reached",
	  ALLOW_TEXT, "Raise the ceiling with its option or in the policy's `limits`." },

	{ "user.root", "hardening", "4.0", "very-high",
	  "the command ran as root, with every right on the machine", ALLOW_TEXT,
	  "Run the command unprivileged with `--user USER` (agenttrace itself runs as root)." },

	/* agenttrace's own files. */
	{ "write.agenttrace-", "supervisor-integrity", "9.0", "very-high",
	  "a write to agenttrace's own log, policy, binary, run directory or preload shim",
	  ALLOW_NEVER_SELF, NULL },

	/* The sections' fallbacks (agenttrace-policy(5), DECISIONS). */
	{ "write.fallback", "tampering", "6.0", "high",
	  "a write outside every allowed write root of the policy", ALLOW_FALLBACK, NULL },
	{ "net.fallback", "exfiltration", "7.0", "high",
	  "a connection to a destination outside the policy's egress allow-list", ALLOW_FALLBACK, NULL },
	{ "exec.not-allowed", "execution", "6.0", "medium",
	  "a program outside the policy's exec allow-list", ALLOW_FALLBACK, NULL },
	{ "read.fallback", "credential-access", "5.0", "high",
	  "a read that no rule of the policy allowed", ALLOW_FALLBACK, NULL },
	{ "exec.fallback", "execution", "5.0", "medium",
	  "a program that no rule of the policy named", ALLOW_FALLBACK, NULL },

	/* Areas of the shipped policies' rules (the why is the rule's own). */
	{ "exec.reverse-shell", "command-and-control", "9.5", "high", NULL, ALLOW_BY_KIND, NULL },
	{ "exec.netcat-exec", "command-and-control", "9.5", "high", NULL, ALLOW_BY_KIND, NULL },
	{ "exec.socat-exec", "command-and-control", "9.5", "high", NULL, ALLOW_BY_KIND, NULL },
	{ "exec.download-and-run", "execution", "8.5", "high", NULL, ALLOW_BY_KIND, NULL },
	{ "exec.privilege", "privilege-escalation", "8.0", "high", NULL, ALLOW_BY_KIND, NULL },
	{ "exec.persistence.", "persistence", "8.0", "high", NULL, ALLOW_BY_KIND, NULL },
	{ "exec.fileless.", "defense-evasion", "8.5", "high", NULL, ALLOW_BY_KIND, NULL },
	{ "exec.temp-program.", "defense-evasion", "7.5", "medium", NULL, ALLOW_BY_KIND, NULL },
	{ "exec.install.", "supply-chain", "4.0", "medium", NULL, ALLOW_BY_KIND, NULL },
	{ "exec.", "execution", NULL, "medium", NULL, ALLOW_BY_KIND, NULL },
	{ "write.git-hooks", "persistence", "8.5", "high", NULL, ALLOW_BY_KIND, NULL },
	{ "write.git-config", "persistence", "8.0", "high", NULL, ALLOW_BY_KIND, NULL },
	{ "write.gitmodules", "persistence", "7.5", "high", NULL, ALLOW_BY_KIND, NULL },
	{ "write.hooks.", "persistence", "8.0", "high", NULL, ALLOW_BY_KIND, NULL },
	{ "write.ci-definitions.", "persistence", "8.5", "high", NULL, ALLOW_BY_KIND, NULL },
	{ "write.editor-config.", "persistence", "7.5", "high", NULL, ALLOW_BY_KIND, NULL },
	{ "write.agent-config.", "persistence", "8.0", "high", NULL, ALLOW_BY_KIND, NULL },
	{ "write.home.", "persistence", "8.0", "high", NULL, ALLOW_BY_KIND, NULL },
	{ "write.crontab", "persistence", "8.0", "high", NULL, ALLOW_BY_KIND, NULL },
	{ "write.etc", "tampering", "7.5", "high", NULL, ALLOW_BY_KIND, NULL },
	{ "write.", "tampering", NULL, "high", NULL, ALLOW_BY_KIND, NULL },
	{ "read.proc-mem", "credential-access", "8.5", "high", NULL, ALLOW_BY_KIND, NULL },
	{ "read.", "credential-access", "8.0", "high", NULL, ALLOW_BY_KIND, NULL },
	{ "net.cloud-metadata", "credential-access", "9.0", "very-high", NULL, ALLOW_BY_KIND, NULL },
	{ "net.docker", "privilege-escalation", "8.5", "very-high", NULL, ALLOW_BY_KIND, NULL },
	{ "net.containerd", "privilege-escalation", "8.5", "very-high", NULL, ALLOW_BY_KIND, NULL },
	{ "net.podman", "privilege-escalation", "8.5", "very-high", NULL, ALLOW_BY_KIND, NULL },
	{ "net.ssh-agent", "credential-access", "8.0", "very-high", NULL, ALLOW_BY_KIND, NULL },
	{ "net.local-outside", "supervisor-escape", "8.5", "high",
	  "a connection to a local server (a UNIX socket, a loopback port) that a program outside "
	  "the session made: what it is sent runs outside supervision",
	  ALLOW_TEXT,
	  "The record names the server's process where it could be found. If talking to it is "
	  "expected, name it in a policy layer (`{\"agenttrace\": 1, \"extends\": \"default\", "
	  "\"net\": {\"allow\": [\"unix:PATH\"]}}`, or `\"127.0.0.1:PORT\"`), or allow it for one "
	  "run with `--allow-net unix:PATH`." },
	{ "net.inbound", "command-and-control", "8.5", "high",
	  "a socket bound to an address other than loopback takes connections from other machines "
	  "(a bind shell)",
	  ALLOW_TEXT,
	  "Bind to 127.0.0.1 or ::1 if only this machine needs it. Otherwise allow the address in a "
	  "policy layer (`\"bind:0.0.0.0:PORT\"`) or for one run with `--allow-net "
	  "'bind:0.0.0.0:PORT'`." },
	{ "net.", "exfiltration", NULL, "high", NULL, ALLOW_BY_KIND, NULL },
};

/* A rule of no known area (a project's own policy with its own ids). */
static const struct ruledoc_entry ruledoc_unknown = {
	"", NULL, NULL, "medium", NULL, ALLOW_BY_KIND, NULL,
};

static bool ruledoc_matches(const struct ruledoc_entry *e, const char *id)
{
	size_t n = strlen(e->id);

	if (n && (e->id[n - 1] == '.' || e->id[n - 1] == '-'))
		return strncmp(id, e->id, n) == 0;
	/* "net.cloud-metadata" also covers "net.cloud-metadata-v6". */
	return strncmp(id, e->id, n) == 0 && (id[n] == '\0' || id[n] == '-');
}

static const struct ruledoc_entry *ruledoc_lookup(const char *id)
{
	for (size_t i = 0; i < sizeof(ruledoc_table) / sizeof(ruledoc_table[0]); i++)
		if (ruledoc_matches(&ruledoc_table[i], id))
			return &ruledoc_table[i];
	return &ruledoc_unknown;
}

static const char *ruledoc_risk(const char *tag)
{
	for (size_t i = 0; tag && i < sizeof(ruledoc_categories) / sizeof(ruledoc_categories[0]); i++)
		if (strcmp(ruledoc_categories[i].tag, tag) == 0)
			return ruledoc_categories[i].risk;
	return NULL;
}

static bool ruledoc_is(const char *a, const char *b)
{
	return a && strcmp(a, b) == 0;
}

/* How to allow it, with `code` marks (kept as they are in the text form,
 * where they read as quotes). */
static const char *ruledoc_allow_text(const struct ruledoc_entry *e, const char *kind,
				      const char *action)
{
	switch (e->allow) {
	case ALLOW_TEXT:
		return e->allow_text;
	case ALLOW_NEVER_SYSCALL:
		return "It cannot be allowed: these calls are refused in every mode, audit included. "
		       "A program that needs one (a container engine, a debugger) has to run outside "
		       "agenttrace.";
	case ALLOW_NEVER_SELF:
		return "It cannot be allowed: no command-line allow exempts agenttrace's own files. "
		       "Keep the log and the policy files out of the command's way.";
	case ALLOW_NOTHING:
		return "There is nothing to allow: the program changed the path between the check and "
		       "the call. The record names the process; find out why it races the supervisor "
		       "before trusting it.";
	case ALLOW_FALLBACK:
		if (ruledoc_is(kind, "net"))
			return "Nothing in the policy allowed the destination. If it is expected, add it to "
			       "a policy layer (`{\"agenttrace\": 1, \"extends\": \"default\", \"net\": "
			       "{\"allow\": [\"HOST:PORT\"]}}`), or allow it for one run with `--allow-net "
			       "HOST:PORT`. The denial's record suggests the exact pattern; `agenttrace-policy "
			       "learn` writes a policy from a recorded run.";
		if (ruledoc_is(kind, "exec"))
			return "The program is not on the policy's exec allow-list. If it is expected, add "
			       "it to a policy layer (`{\"agenttrace\": 1, \"extends\": \"strict\", \"exec\": "
			       "{\"allow\": [\"PROGRAM\"]}}`), or allow it for one run with `--allow-exec "
			       "PROGRAM`. `agenttrace-policy learn` writes an allow-list from a recorded run.";
		if (ruledoc_is(kind, "read"))
			return "Add an allow rule for the path to a policy layer (`{\"read\": {\"allow\": "
			       "[\"PATH\"]}}`).";
		return "Nothing in the policy allowed a write there. If it is expected, add the path to "
		       "a policy layer (`{\"agenttrace\": 1, \"extends\": \"default\", \"write\": "
		       "{\"allow\": [\"PATTERN\"]}}`), or allow it for one run with `--allow-write "
		       "'PATTERN'`. The denial's record suggests the pattern; `agenttrace-policy learn` "
		       "writes a policy from a recorded run.";
	case ALLOW_BY_KIND:
		break;
	}
	if (action && strcmp(action, "deny") != 0)
		return "There is nothing to allow: the call ran and the rule only reports it. An alert "
		       "rule still alerts under a later layer's or the command line's allow; to stop "
		       "it, run under a policy without the rule.";
	if (ruledoc_is(kind, "read"))
		return "There is no command-line allow for reads. A program that must read this file "
		       "runs under a policy without this rule (a policy file that does not extend "
		       "`default`, see agenttrace-policy(5)); first find out why unreviewed code needs "
		       "a credential.";
	return ruledoc_is(kind, "exec") ?
		"A later policy layer cannot lift a deny rule (layers only add rules, and deny beats "
		"allow). If the program is intended, exempt it for one run with `--allow-exec "
		"PROGRAM`, or run under a policy without this rule." :
	       ruledoc_is(kind, "net") ?
		"A later policy layer cannot lift a deny rule (layers only add rules, and deny beats "
		"allow). If the connection is intended, exempt it for one run with `--allow-net "
		"HOST:PORT`, or run under a policy without this rule." :
		"A later policy layer cannot lift a deny rule (layers only add rules, and deny beats "
		"allow). If the write is intended, exempt that path for one run with `--allow-write "
		"'PATH'` (a command-line allow exempts what it matches from the deny rules of its "
		"kind), or run under a policy without this rule.";
}

/* Markdown text: the characters that would make markup escaped; `code`
 * spans of the table's own texts are kept (keep_code). */
static void ruledoc_md(FILE *out, const char *s, bool keep_code)
{
	for (; s && *s; s++) {
		if (*s == '`' && keep_code) {
			fputc('`', out);
			continue;
		}
		if (strchr("\\`*_[]<>|~$&", *s))
			fputc('\\', out);
		fputc(*s == '\n' ? ' ' : *s, out);
	}
}

static char *ruledoc_sentence(const char *s)
{
	size_t n = strlen(s);

	if (n && strchr(".!?", s[n - 1]))
		return xasprintf("%c%s", s[0] >= 'a' && s[0] <= 'z' ? s[0] - 'a' + 'A' : s[0], s + 1);
	return xasprintf("%c%s.", n && s[0] >= 'a' && s[0] <= 'z' ? s[0] - 'a' + 'A' : s[0],
			 n ? s + 1 : "");
}

static const char *ruledoc_decision(const char *kind, const char *action)
{
	if (ruledoc_is(kind, "warning") || !action)
		return "agenttrace writes a warning record when it sees this.";
	if (ruledoc_is(kind, "limit"))
		return "agenttrace enforces the ceiling and writes a limit record.";
	if (strcmp(action, "deny") == 0)
		return "agenttrace refuses the call (it fails with an error number and the program "
		       "goes on) and records the denial.";
	return "agenttrace lets the call run and records an alert.";
}

static const char *ruledoc_default_severity(const char *action)
{
	return action && strcmp(action, "deny") == 0 ? "6.0" : "4.0";
}

void ruledoc_describe(const char *id, const char *kind, const char *why, const char *action,
		      struct ruledoc *d)
{
	const struct ruledoc_entry *e = ruledoc_lookup(id ? id : "");
	const char *about = e->about ? e->about : why;
	const char *risk = ruledoc_risk(e->category), *allow = ruledoc_allow_text(e, kind, action);
	char *lead;
	size_t n_tags = 0, len;
	FILE *f;

	memset(d, 0, sizeof(*d));
	d->short_text = about && *about ? xstrdup(about) :
			xasprintf("%s rule %s of the policy", kind ? kind : "a", id ? id : "?");
	lead = ruledoc_sentence(d->short_text);
	d->full_text = xasprintf("%s %s%s%s", lead, ruledoc_decision(kind, action), risk ? " " : "",
				 risk ? risk : "");
	d->help_text = xasprintf("What it protects: %s%s%s\n\nHow to allow it: %s\n", lead,
				 risk ? " " : "", risk ? risk : "", allow);

	f = open_memstream(&d->help_markdown, &len);
	if (!f)
		d->help_markdown = xstrdup(d->help_text);
	else {
		fputs("**What it protects:** ", f);
		/* A policy's why is the policy author's text: escaped. */
		ruledoc_md(f, lead, false);
		if (risk) {
			fputc(' ', f);
			ruledoc_md(f, risk, false);
		}
		fputs("\n\n**How to allow it:** ", f);
		fputs(allow, f);
		fputs("\n\nRule ", f);
		ruledoc_md(f, id ? id : "?", false);
		fputs("; see agenttrace(1) and agenttrace-policy(5).\n", f);
		if (fclose(f) != 0 || !d->help_markdown) {
			free(d->help_markdown);
			d->help_markdown = xstrdup(d->help_text);
		}
	}
	free(lead);

	d->severity = e->severity ? e->severity : ruledoc_default_severity(action);
	d->precision = e->precision;
	d->tags[n_tags++] = "security";
	if (kind && *kind && !ruledoc_is(kind, "warning"))
		d->tags[n_tags++] = kind;
	if (e->category)
		d->tags[n_tags++] = e->category;
	d->tags[n_tags] = NULL;
}

void ruledoc_free(struct ruledoc *d)
{
	free(d->short_text);
	free(d->full_text);
	free(d->help_text);
	free(d->help_markdown);
	memset(d, 0, sizeof(*d));
}
