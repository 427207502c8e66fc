/* The policy engine's public contract.
 *
 * Two halves:
 *
 *  - the compiled policy and rules_decide(): plain data in ONE contiguous,
 *    position-independent block (offsets, never pointers), so that the
 *    supervisor can hand the very same bytes to the preload shim through a
 *    memfd and the shim can map it read-only.  Deciding allocates nothing,
 *    takes no lock, touches no global and never calls jansson: it is the
 *    only part of rules/ linked into the preload (librules-match.a).
 *
 *  - the loader (rules/load.h): files and shipped names -> JSON (jansson) ->
 *    validated, layered, variable-expanded -> compiled block.  Programs
 *    only.
 *
 * Semantics are agenttrace-policy(5); the language is documented in
 * agenttrace-policy(5).
 */
#ifndef AGENTTRACE_RULES_H
#define AGENTTRACE_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define RULES_MAGIC 0x50525441u /* "ATRP" little-endian */
#define RULES_VERSION 7u

/* A string inside the block: the byte offset of a NUL-terminated string
 * from the start of the block.  0 means "none" (offset 0 is the header). */
typedef uint32_t rules_str;

enum rules_kind {
	RULES_KIND_EXEC = 0,
	RULES_KIND_WRITE,
	RULES_KIND_READ,
	RULES_KIND_NET,
	RULES_KIND_COUNT
};

/* Ordered by precedence: a deny match beats an alert match beats an allow. */
enum rules_action {
	RULES_ACTION_ALLOW = 0,
	RULES_ACTION_ALERT,
	RULES_ACTION_DENY,
	RULES_ACTION_COUNT
};

enum rules_mode {
	RULES_MODE_ENFORCE = 0,
	RULES_MODE_AUDIT,
};

/* What one net pattern matches. */
enum rules_net_type {
	RULES_NET_ANY = 0,     /* "*" or "*:PORT": any address of any family */
	RULES_NET_IP,          /* address or CIDR, IPv4 or IPv6 */
	RULES_NET_HOST,        /* host name glob, "*.example.com" allowed */
	RULES_NET_UNIX_PATH,   /* "unix:PATH-GLOB" */
	RULES_NET_UNIX_ABSTRACT, /* "unix:@GLOB"; text holds the glob after '@' */
	RULES_NET_SESSION,     /* "session": a local endpoint the session's own
				* processes bound (struct rules_event endpoint) */
};

/* Whose a local destination is (agenttrace-policy(5), "Local endpoints"):
 * the backend finds out, the rules only read it. */
enum rules_endpoint {
	RULES_ENDPOINT_UNKNOWN = 0, /* not looked up (a remote address, a policy test) */
	RULES_ENDPOINT_SESSION,     /* a socket a process of the session bound */
	RULES_ENDPOINT_OUTSIDE,     /* a socket bound by a process outside it */
	RULES_ENDPOINT_NONE,        /* nothing listens there */
};

/* What an exec rule's "script" key asks of a shell's -c command string
 * (agenttrace-policy(5), SCRIPT SHAPES; rules/shell.h parses it). */
enum rules_script {
	RULES_SCRIPT_NONE = 0,          /* no "script": argv alone decides */
	RULES_SCRIPT_DOWNLOAD_AND_RUN,  /* "download-and-run" */
	RULES_SCRIPT_COUNT
};

/* What a write deny rule's "content" key judges besides the path
 * (agenttrace-policy(5), "Content"): the files it names may be replaced
 * through their lock file with bytes that pass this check, a replacement
 * the supervisor makes itself (tracer/confine/content.h). */
enum rules_content {
	RULES_CONTENT_NONE = 0,
	RULES_CONTENT_GIT_CONFIG,       /* "git-config": rules/gitconfig.h */
	RULES_CONTENT_COUNT
};

/* One compiled matcher.  Which fields count depends on the rule's kind:
 *
 *  write/read: text = absolute path glob ("*" one component, "**" any
 *              number of components, "?" and "[...]" as in fnmatch;
 *              a trailing "**" component also matches the directory itself).
 *  exec:       argv_first/argv_count = elements in the block's string
 *              table; element 0 matches the program (full-path glob when
 *              it contains '/', else the base name of the resolved
 *              executable), the rest match argv[1..]: "*" one element,
 *              "**" any number, "a|b" alternatives, globs inside an
 *              element, "\|" "\*" "\?" "\[" "\\" escapes.  script
 *              (enum rules_script), when set, must hold too: the
 *              program is a shell whose -c command string has that
 *              shape.  "unless" patterns have none.
 *  net:        net_type; IP: family (AF_INET/AF_INET6), addr (network
 *              order, IPv4 in the first 4 bytes), prefix bits; HOST/UNIX:
 *              text is the glob.  port_lo..port_hi inclusive, 0..65535
 *              when no port was given (unix patterns ignore ports).
 *              bind: the pattern ("bind:...") matches the address a
 *              socket is bound to, never a destination.
 *
 * prefix_len is the length of text's leading literal part (no glob or
 * escape character), for a cheap memcmp() reject before the glob runs.
 * need (write/read) is the summary, as match_path_comps() makes it of a
 * path, of the pattern's literal components: each must be one of the
 * path's, so a rule whose bits the path lacks is rejected without
 * looking at its text (most rules, for most paths).
 */
struct rules_pattern {
	rules_str text;
	uint32_t prefix_len;
	uint32_t argv_first;
	uint32_t argv_count;
	uint8_t net_type;
	uint8_t family;
	uint8_t prefix;
	uint8_t script;        /* exec: enum rules_script */
	uint8_t bind;          /* net: matches bind events only */
	uint8_t pad_[3];
	uint16_t port_lo;
	uint16_t port_hi;
	uint8_t addr[16];
	uint64_t need;
};

struct rules_rule {
	rules_str id;      /* "write.git-hooks"; generated when the policy gave none */
	rules_str why;     /* may be 0 */
	rules_str source;  /* the pattern as written after variable expansion */
	rules_str origin;  /* "FILE:LINE:COL" (or "<builtin:default>:L:C", "<command line>") */
	uint8_t kind;      /* enum rules_kind */
	uint8_t action;    /* enum rules_action */
	uint8_t content;   /* write deny rules: enum rules_content */
	/* 1: a twin of the policy's own pattern for where a link of this
	 * machine leads (a linked ~/.ssh, a ~/.aws/credentials kept
	 * elsewhere: agenttrace-policy(5), "Path patterns").  The policy's
	 * own tests do not see it: they test its text, on any machine. */
	uint8_t twin;
	/* The rule does not match an event that one of these matches
	 * (rule object key "unless": patterns of the same kind).  Lets a
	 * policy say "programs under /tmp, unless under ${ROOT}". */
	uint32_t unless_first; /* index into the block's pattern table */
	uint32_t unless_count;
	/* The first UNLESS_OWN are the rule's own exceptions; the rest are
	 * the user's: another layer's "overrides", a command-line allow. */
	uint32_t unless_own;
	/* The rule matches only an event whose process runs, or descends
	 * from a process of the session that ran, a program one of these
	 * exec patterns matches (rule object key "under"; struct
	 * rules_event lineage).  Lets a policy say "git, when pip runs it". */
	uint32_t under_first;
	uint32_t under_count;
	struct rules_pattern pat;
};

struct rules_span {
	uint32_t first; /* index into the rule table */
	uint32_t count;
};

/* Resource ceilings; 0 = not set. */
struct rules_limits {
	uint64_t max_procs;
	uint64_t timeout_sec;
	uint64_t max_memory;   /* bytes */
	uint64_t max_cpu_sec;
	uint32_t max_memory_percent; /* of the machine's memory, instead of max_memory */
	uint32_t max_procs_percent;  /* of the kernel's task limit, instead of max_procs */
};

/* The net section's fallbacks besides fallback[RULES_KIND_NET] (egress). */
enum rules_net_fallback {
	RULES_NET_FB_LOCAL = 0,     /* "net.local-outside" */
	RULES_NET_FB_INBOUND,       /* "net.inbound" */
	RULES_NET_FB_BIND_LOOPBACK, /* "net.bind-loopback" */
	RULES_NET_FALLBACKS
};

/* The header at offset 0 of the block. */
struct rules_policy {
	uint32_t magic;    /* RULES_MAGIC */
	uint32_t version;  /* RULES_VERSION */
	uint32_t size;     /* total bytes of the block, header included */
	uint8_t mode;      /* enum rules_mode, after layering */
	uint8_t record;    /* the policy asks for every event to be recorded */
	/* A deny or alert rule (or its "unless") names "session": whether a
	 * local destination is the session's can change such a rule's
	 * verdict, so a backend must find out before deciding (else only
	 * when the verdict is the local fallback: rules_endpoint_first()). */
	uint8_t endpoint_first;
	/* Bit 1 << kind: a rule of that kind has "under", and a backend gives
	 * events of that kind their lineage (which costs a walk up the
	 * process's line). */
	uint8_t under_kinds;
	rules_str name;    /* "default", or the last layer's "name" */
	rules_str layers;  /* "default+./extra.json" for records and --explain */

	/* Rules of one kind and action are contiguous, in policy order. */
	uint32_t rules_off;      /* byte offset of struct rules_rule[rules_count] */
	uint32_t rules_count;
	struct rules_span span[RULES_KIND_COUNT][RULES_ACTION_COUNT];
	/* One synthetic rule per kind, for events that no rule matched: its
	 * action is the section's fallback (agenttrace-policy(5)) and its id reads
	 * "write.fallback", "net.fallback", "exec.not-allowed", "read.fallback". */
	uint32_t fallback[RULES_KIND_COUNT];
	/* The net section's other fallbacks (rules_fallback()): a local
	 * destination ("net.local-outside", deny), a bind to an address
	 * other than loopback ("net.inbound", deny), a bind to loopback
	 * ("net.bind-loopback", allow). */
	uint32_t fallback_net[RULES_NET_FALLBACKS];

	uint32_t patterns_off;   /* byte offset of struct rules_pattern[] ("unless" lists) */
	uint32_t patterns_count;
	uint32_t strs_off;       /* byte offset of rules_str[] (argv elements, env drops) */
	uint32_t strs_count;

	uint32_t env_drop_first; /* env.drop globs, in the string table */
	uint32_t env_drop_count;

	struct rules_limits limits;
};

/* One event to decide.  Every pointer is borrowed for the call. */
struct rules_event {
	enum rules_kind kind;

	/* write, read: the resolved absolute path (no "..", no "//"). */
	const char *path;

	/* exec: the program that runs (resolved), and the argv it gets.  The
	 * backends fill in its identity (agenttrace-policy(5), "Exec
	 * identity"; rules_loader_prog(), rules_interp_script()):
	 *
	 *  - a program the dynamic loader runs (ld.so [OPTIONS] PROG ARGS) is
	 *    PROG with argv from PROG on; LOADER names the loader, for the
	 *    record only (no rule sees it);
	 *  - EXE_NAME is the name the program's package gives it when that
	 *    differs from its file's (node's package.json "bin":
	 *    .../npm/bin/npm-cli.js is "npm"), NULL otherwise;
	 *  - SCRIPT is the script file an interpreter runs (sh x.sh, python3
	 *    x.py), absolute and resolved, named by argv[SCRIPT_ARG]; its
	 *    package's name for it in SCRIPT_NAME.
	 *
	 * Every rule matches the program by its path, the base name of that
	 * path and EXE_NAME.  Deny and alert rules match more names, which
	 * can only make more of them match: argv[0]'s base name (a
	 * multi-call binary, the name a symlinked script was called by), and
	 * the script by its path, base name and SCRIPT_NAME with the
	 * arguments after it.  Allow rules never see those: an allow-list
	 * names the programs that may run, and a name the caller chose
	 * (argv[0]) or an interpreter's script must not admit a program. */
	const char *exe;
	const char *const *argv;
	size_t argc;
	const char *loader;
	const char *exe_name;
	const char *script;
	size_t script_arg;
	const char *script_name;

	/* net: family is AF_INET, AF_INET6 or AF_UNIX; 0 when only a host
	 * name is known (a policy test "connect": "pypi.org:443").
	 * An IPv4-mapped IPv6 address also matches IPv4 patterns. */
	int family;
	uint8_t addr[16];      /* network order; IPv4 in the first 4 bytes */
	uint16_t port;         /* host order */
	const char *host;      /* a name known for addr, or NULL */
	const char *unix_path; /* AF_UNIX: path, or "@name" for abstract; NULL for unnamed */
	/* net: a bind of a socket to addr:port (AF_INET, AF_INET6), not a
	 * destination; only "bind:" patterns match it. */
	bool bind;
	/* net, a local destination (rules_net_local()): enum rules_endpoint. */
	uint8_t endpoint;

	/* Any kind: the programs of the calling process's line, nearest
	 * first, as exec events (exe, argv and identity as each was judged
	 * at its exec): the program the process runs (for an exec, the one
	 * about to be replaced), then the one it replaced, or its parent ran
	 * when it forked it, and so on up to the session's command.
	 * N_LINEAGE 0: not known, and no rule with "under" matches.
	 * LINEAGE_CUT: programs above these were not kept (more than
	 * RULES_LINEAGE_MAX); a rule with "under" then matches, as if one
	 * of them were its program. */
	const struct rules_event *lineage;
	size_t n_lineage;
	bool lineage_cut;
};

#define RULES_LINEAGE_MAX 128

struct rules_verdict {
	enum rules_action action;      /* the matched rule's action (mode not applied) */
	const struct rules_rule *rule; /* never NULL: the fallback rule when nothing matched */
};

/* 0 when blk..blk+size holds a policy this build can read (magic,
 * version, every offset and string inside the block); -EINVAL otherwise.
 * The preload shim calls it on the block it maps before trusting it. */
int rules_policy_check(const void *blk, size_t size);

/* Decide one event.  Allocation-free, lock-free, no globals.
 * Returns 0, or -EINVAL for an event of an unknown kind. */
int rules_decide(const struct rules_policy *p, const struct rules_event *ev,
		 struct rules_verdict *out);

/* The fallback rule of EV's section that decides EV when no rule matches
 * it: for net, by what EV is (a bind, a local destination, another). */
const struct rules_rule *rules_fallback(const struct rules_policy *p, const struct rules_event *ev);

/* True when R is one of P's fallback rules. */
bool rules_is_fallback(const struct rules_policy *p, const struct rules_rule *r);

/* True when the net event EV's destination is on this machine: a UNIX
 * socket, a loopback address (127.0.0.0/8, ::1) or the unspecified one
 * (0.0.0.0, ::, which a connect takes for this host), IPv4-mapped ones
 * included.  Never for a bind. */
bool rules_net_local(const struct rules_event *ev);

/* True when the bind event EV binds a loopback address (127.0.0.0/8,
 * ::1, IPv4-mapped loopback), which only this machine can reach. */
bool rules_net_bind_loopback(const struct rules_event *ev);

/* True when a backend must find out whose a local destination is before
 * deciding it (struct rules_policy endpoint_first); otherwise only when
 * the verdict without it is the local fallback. */
static inline bool rules_endpoint_first(const struct rules_policy *p)
{
	return p->endpoint_first != 0;
}

/* The events of one call: one; two for symlink (the link and its
 * target) and for an open that writes and reads its file
 * (syscall_open_write_reads(), lib/syscall-open.h); three for rename
 * and link (both names written, and the file moved read: readable by its
 * new name, it is read as much as an open of it is), four for an
 * exchange (each file moved).  Their order: the names written, then the
 * names read. */
#define RULES_CALL_EVENTS 4

/* A call that gives files new names (rename, link) reads each file it
 * names anew: READS holds RULES_READS_PATH for the file at PATH (the
 * source), RULES_READS_PATH2 for the one at PATH2 (an exchange moves it
 * too).  An open for writing that also reads its file (O_RDWR) has
 * RULES_READS_PATH for it.  Their read events are appended to the N
 * events at EV (RULES_CALL_EVENTS in all); a NULL path is skipped.  Returns the new
 * count.  Every backend builds them here. */
#define RULES_READS_PATH 0x1
#define RULES_READS_PATH2 0x2
size_t rules_add_name_reads(struct rules_event *ev, size_t n, unsigned reads, const char *path,
			    const char *path2);

/* What a call's events come to together. */
struct rules_call_verdict {
	enum rules_action action;      /* the worst rule's action (mode not applied) */
	enum rules_action effective;   /* after the mode (rules_effective) */
	const struct rules_rule *rule; /* NULL: the engine could not decide an event */
	size_t event;                  /* the event that decided */
};

/* Decide the N events of one call (N <= RULES_CALL_EVENTS): the worst
 * verdict wins (deny > alert > allow), the first of equals.  An event
 * the engine cannot decide (unknown kind) is a deny with no rule: fail
 * closed.  EXPLICIT_DENY_ONLY (NULL: none) marks events that only an
 * explicit rule refuses, not their section's fallback: a symlink's
 * target is not written by the call, but a link towards a protected file
 * is how a later write would reach it.  The one combining step of both
 * backends.  Allocation-free. */
void rules_decide_call(const struct rules_policy *p, const struct rules_event *ev, size_t n,
		       const bool *explicit_deny_only, struct rules_call_verdict *out);

/* ---- rules that judge content (rules/content.c) ---- */

/* rules_decide_call() with the deny rules that judge content
 * (rules_rule.content) set aside: what the rest of the policy says of a
 * write whose content passed their check. */
void rules_decide_call_beside_content(const struct rules_policy *p, const struct rules_event *ev,
				      size_t n, const bool *explicit_deny_only,
				      struct rules_call_verdict *out);

/* The content rule of P that matches a path beneath directory PATH
 * (absolute, normalized) made of the rule's own last components: for
 * ${ROOT}, any depth, .git/config, any PATH named .git under ${ROOT},
 * since PATH/config is one.  A directory renamed to or from such a PATH,
 * or a symbolic link made there, would move judged files from under
 * their check.  NAMED: only when PATH's last component is one the
 * pattern names literally (".git", not any directory a "**" admits).
 * NULL: none.  Allocation-free. */
const struct rules_rule *rules_content_on_the_way(const struct rules_policy *p, const char *path,
						  bool named);

/* The content rule of P that could judge a file somewhere beneath
 * directory PATH: for ${ROOT}, any depth, .git/config, any PATH under
 * ${ROOT} but node_modules (PATH/.git/config is one), none elsewhere.  A
 * directory renamed from outside every rule's reach into it brings files
 * that no check of their content ever saw.  NULL: none.  Allocation-free. */
const struct rules_rule *rules_content_reach(const struct rules_policy *p, const char *path);

/* The same for any write deny rule: one that could refuse a file
 * somewhere beneath PATH (the CI definitions rule beneath any
 * directory of ${ROOT} but node_modules).  NULL: none. */
const struct rules_rule *rules_deny_reach(const struct rules_policy *p, const char *path);

/* The write deny rule of P whose pattern names PATH's last component
 * literally, on the way to what it refuses: ${ROOT}/.claude for
 * ${ROOT}/.claude/settings.json, any .git/hooks under ${ROOT} for
 * .git/hooks/ *.  A symbolic link made there would take every write by
 * those names to where it leads, out of the rule's sight.  NULL: none.
 * Allocation-free. */
const struct rules_rule *rules_deny_on_the_way(const struct rules_policy *p, const char *path);

/* The write deny rule that names PATH (CONTENT: one that judges
 * content), by its pattern and its own exceptions ("unless": node_modules
 * is no place it judges), the user's set aside (another layer's
 * "overrides", a command-line allow: a file the user let through is
 * still one the rule is about).  NULL: none.  Allocation-free. */
const struct rules_rule *rules_deny_names(const struct rules_policy *p, const char *path,
					  bool content);

/* Whether a write rule that admits (allow or alert, or an admitting write
 * fallback) matches PATH, the deny rules set aside: a name some session
 * may have been let make, under this policy's exceptions or another's
 * (the deny rules protecting this session's own files are not an earlier
 * session's).  True for a PATH too long to tell.  Allocation-free. */
bool rules_write_admits(const struct rules_policy *p, const char *path);

/* A read alert rule that could name a file somewhere beneath directory
 * PATH (the default's rule of a project's .env files: beneath any
 * directory of ${ROOT} but node_modules and site-packages).  NULL: none. */
const struct rules_rule *rules_read_alert_reach(const struct rules_policy *p, const char *path);

/* A read deny rule that could name a file somewhere beneath FROM and
 * nothing beneath TO: what renaming a directory FROM to TO, without
 * knowing all it holds, could take out of that rule's sight.  NULL: none. */
const struct rules_rule *rules_read_hidden(const struct rules_policy *p, const char *from,
					   const char *to);

/* "git-config"; NULL for none. */
const char *rules_content_name(enum rules_content c);

/* ---- exec identity (rules/identity.c): what a command line runs ---- */

/* True when BASE (a file's base name) is the dynamic loader's by name:
 * ld-linux*.so*, ld-*.so* (glibc, musl), ld.so. */
bool rules_loader_name(const char *base);

/* The dynamic loader's ARGV (ld.so [OPTIONS] PROG ARGS): the index of
 * PROG, past the options (--library-path, --preload, --argv0, --audit,
 * ... and their values; "--"); 0 when it runs no program (--help,
 * --version, --list-tunables, no argument). */
size_t rules_loader_prog(const char *const *argv, size_t argc);

/* The interpreter EXE (matched by its base name: sh, bash, dash, zsh,
 * ksh, mksh, ash, hush, fish, busybox's shells, python*, pypy*, node,
 * nodejs, perl*, ruby*, php*) given ARGV: the index of the script file
 * it runs, 0 when none (not an interpreter, inline code, stdin, a
 * module); the file's name starts at byte *SCRIPT_OFF of it (php
 * -fFILE), else 0.  Inline code (sh -c TEXT, python -c TEXT, node -e
 * TEXT, perl -e TEXT, php -r TEXT) is argv[*TEXT_ARG] from byte
 * *TEXT_OFF, 0 when none.  Each out pointer may be NULL. */
size_t rules_interp_script(const char *exe, const char *const *argv, size_t argc,
			   size_t *script_off, size_t *text_arg, size_t *text_off);
/* How the interpreter EXE given ARGV, whose script is ARGV[SCRIPT]
 * (rules_interp_script()), finds that script besides by its name from
 * the working directory: a shell searches PATH for a name that names no
 * file there (RULES_LOOKUP_PATH_IF_ABSENT: bash does, in POSIX mode too,
 * zsh with PATH_SCRIPT); perl -S and ruby -S search PATH
 * (RULES_LOOKUP_PATH), each in its own way (BY: tracer/inspect/identity.c);
 * ruby -C DIR, -CDIR and -xDIR change to each DIR (argv[DIR_ARG[K]] from
 * byte DIR_OFF[K]) in turn first.  Allocation-free. */
#define RULES_LOOKUP_DIRS 4
struct rules_lookup {
	enum { RULES_LOOKUP_NAME, RULES_LOOKUP_PATH_IF_ABSENT, RULES_LOOKUP_PATH } how;
	enum { RULES_LOOKUP_BY_SHELL, RULES_LOOKUP_BY_PERL, RULES_LOOKUP_BY_RUBY } by;
	size_t dir_arg[RULES_LOOKUP_DIRS], dir_off[RULES_LOOKUP_DIRS];
	size_t n_dirs;
};
void rules_interp_lookup(const char *exe, const char *const *argv, size_t argc, size_t script,
			 struct rules_lookup *out);
/* The directory ruby -C (-x) puts LK's interpreter in, from ARGV, into
 * DIR (PATH_MAX; "" none, relative ones from the working directory).
 * False when it does not fit. */
bool rules_interp_chdir(const struct rules_lookup *lk, const char *const *argv, char *dir);
/* Whether LK's interpreter searches for NAME: not an absolute name, nor
 * (but for ruby) one with a '/'; a shell only when ABSENT, no file of
 * NAME from the working directory. */
bool rules_interp_searches(const struct rules_lookup *lk, const char *name, bool absent);
/* The names LK's interpreter tries for its script NAME, in its order,
 * each put in BUF (PATH_MAX) and passed to TRY with ARG and whether the
 * interpreter wants a file it may run (perl) until TRY takes one: ruby's
 * RUBYPATH first, then PATH (the values of the exec's environment the
 * interpreter reads, NULL when unset; a shell's built-in one then), an
 * empty entry the working directory, a relative one from DIR
 * (rules_interp_chdir()) when not "", ruby's leading "~" HOME.  True
 * when TRY took one (its name in BUF).  Allocation-free. */
bool rules_interp_search(const struct rules_lookup *lk, const char *name, const char *dir,
			 const char *path, const char *rubypath, const char *home,
			 bool (*try)(const char *candidate, bool exec, void *arg), void *arg,
			 char *buf);
/* CV, the verdict of exec event EV (a call of one event), decided again
 * as the program ALIAS when no rule but the exec fallback matched it:
 * ALIAS is another name of the very file EV runs, such as
 * "/etc/alternatives/vi" for /usr/bin/vim.basic (Debian's alternatives
 * name programs on the system's behalf: an exec allow-list naming "vi"
 * admits the program the system calls vi).  A rule that names the alias
 * then decides; otherwise CV stays.  ALIAS NULL: nothing to do.  Both
 * backends call it after rules_decide_call().  Allocation-free. */
void rules_decide_exec_alias(const struct rules_policy *p, const struct rules_event *ev,
			     const char *alias, struct rules_call_verdict *cv);

/* True when PATH (absolute, normalized) is a directory on the way to what
 * a write allow or alert rule of P admits: ~/go for the cache root
 * ~/go/pkg, ~/.local/lib/python3.11 for Python's user site-packages.
 * Both backends let a mkdir of such a name through that only the write
 * fallback refuses (agenttrace-policy(5), DECISIONS): a cache in a fresh
 * HOME needs its parents made, and an empty directory changes nothing;
 * a deny rule that names it (~/.ssh) still wins.  Allocation-free. */
bool rules_write_root_ancestor(const struct rules_policy *p, const char *path);

/* The "@name" text of an abstract AF_UNIX address (NAME, N bytes after
 * the leading NUL) into OUT (SIZE >= 6): printable bytes as they are, the
 * others and '\' as \xHH, so that the text is unambiguous and valid
 * UTF-8; cut short when OUT is full.  Both backends name abstract sockets
 * through it, so that one rule "unix:@name" means the same in both. */
void rules_unix_abstract_text(const unsigned char *name, size_t n, char *out, size_t size);

/* "/proc/N/..." -> "/proc/self/..." in place when N is a process of the
 * session: IN_SESSION(N, ARG) says so, or, without a callback, N == PID.
 * Read rules on /proc/[0-9]*&#47;environ and the like are about processes
 * outside the session; a session's own entries are its "self".  The
 * supervisor knows every process of the session, the preload shim only
 * the calling one (agenttrace(1), BACKENDS).  SIZE is PATH's buffer.
 * Returns N when it renamed, else 0: an engine that opens the path itself
 * must open N's entry, not its own "self". */
pid_t rules_proc_self(char *path, size_t size, pid_t pid, bool (*in_session)(pid_t, void *),
		      void *arg);

/* The action to apply after the mode: in audit mode a deny becomes an
 * alert. */
enum rules_action rules_effective(const struct rules_policy *p, enum rules_action a);

/* A string of the block, "" for 0. */
static inline const char *rules_string(const struct rules_policy *p, rules_str s)
{
	return s ? (const char *)p + s : "";
}

static inline const struct rules_rule *rules_rule_at(const struct rules_policy *p, uint32_t i)
{
	return (const struct rules_rule *)((const char *)p + p->rules_off) + i;
}

/* True when NAME (an environment variable's name) matches env.drop. */
bool rules_env_dropped(const struct rules_policy *p, const char *name, size_t name_len);

/* Names for records and explain output. */
const char *rules_kind_name(enum rules_kind k);     /* "exec" "write" "read" "net" */
const char *rules_action_name(enum rules_action a); /* "allow" "alert" "deny" */
const char *rules_script_name(enum rules_script s); /* "download-and-run"; NULL for none */

/* ---- matchers (rules/match-*.c), exposed for the tests and the tools ---- */

/* Glob over an absolute path: "*" "?" "[...]" within a component, "**" as a
 * whole component across any number of them (zero included), a
 * trailing "**" component matching the directory itself too, "\x" escapes. */
bool match_path(const char *glob, const char *path);
/* Glob over one string with no component structure ("*" matches '/').
 * Used for base names, host names, argv elements, env names. */
bool match_glob(const char *glob, const char *s);
/* One argv element pattern: alternatives split on unescaped '|', each a
 * match_glob(). */
bool match_alternatives(const char *pattern, const char *s);

#endif
