/* One event inside the program: resolve its paths, decide with the mapped
 * policy (preload mode), and tell the supervisor over the channel.
 *
 * Every function here is safe in a vfork child and between fork and exec
 * of a multi-threaded program: stack buffers only, raw syscalls for the
 * lookups, no malloc, no stdio, no lock; errno is left as it was found. */
#ifndef AGENTTRACE_PRELOAD_ASK_H
#define AGENTTRACE_PRELOAD_ASK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "rules/rules.h"

struct addrinfo;

/* What a wrapper asks about.  Paths are absolute (ask_path()). */
struct ask_call {
	const char *syscall;     /* the libc function */
	enum rules_kind kind;
	const char *path;        /* write, read */
	const char *path2;       /* the second path of rename/link/symlink */
	/* path2 is refused only by an explicit deny rule, not by the write
	 * fallback: a symlink's target (tracer/syscall/call.h, explicit_deny_only). */
	bool path2_explicit_deny_only;
	/* the files the call reads besides its kind's events
	 * (RULES_READS_*, rules_add_name_reads()): rename and link by their
	 * new names, an open for reading and writing its own file */
	uint8_t reads;
	int flags;               /* open flags, with has_flags */
	bool has_flags;
	/* a write that changes the file's bytes (an open, a truncate), not
	 * only names: another name of a denied file is then that file */
	bool changes_file;
	int family;              /* net */
	uint8_t addr[16];
	uint16_t port;
	const char *unix_path;
	const char *host;
	bool bind;               /* net: a bind of addr:port, not a destination */
	/* net, a local destination: the socket it is sent through (-1:
	 * none), and what the supervisor said of it (ask_decide() asks when
	 * the verdict depends on it) */
	int sock_fd;
	uint8_t endpoint;        /* enum rules_endpoint */
	bool quiet;              /* the kernel's own answer stood for the verdict */
	uint64_t listener;
	/* exec: the program run (through the loader: the program it runs,
	 * from TARGET_ARG0 of the argv), the argv as exec'ed, the loader
	 * and the script an interpreter runs (argv[TARGET_ARG0 +
	 * SCRIPT_ARG]), all resolved (agenttrace-policy(5), "Exec identity"). */
	const char *target;
	char *const *target_argv;
	size_t target_arg0;
	const char *loader;
	const char *script;
	size_t script_arg;
};

/* Called by the constructor. */
void ask_init(void);

/* PATH, relative to DIRFD (AT_FDCWD: the cwd), as an absolute path in OUT
 * (PATH_MAX bytes): the kernel's view of the parent directory (symlinks
 * resolved, through an O_PATH open and /proc/self/fd), and of the last
 * component too when FOLLOW and it exists.  Falls back to the lexical
 * form (cwd + path) when the parent cannot be opened; rules_decide()
 * removes "." and "..".  Returns 0, -ENOENT when FOLLOW and the file does
 * not exist (OUT still filled), or -ENAMETOOLONG. */
int ask_path(int dirfd, const char *path, bool follow, char *out);

/* The decision for C (both paths of a two-path call), reported to the
 * supervisor when it is an alert or a denial (every event with --record).
 * Returns 0 to call through, or the errno to fail with (EACCES). */
int ask_decide(const struct ask_call *c);

/* Preload mode: the socket FD (its inode INO), bound to nothing before,
 * was bound by a call that succeeded, to the UNIX NAME (a resolved path
 * or "@name"; NULL for another family): the supervisor counts it among
 * the session's endpoints (lib/channel-wire.h BIND). */
void ask_bound(uint64_t ino, int family, const char *name);

/* An allowed exec: the supervisor learns the program (static ones are
 * listed as unseen in the summary). */
void ask_exec_notice(const struct ask_call *c);

/* A name lookup's answer: kept for this process's own connects and sent
 * to the supervisor (HOSTS).  Numeric names are ignored. */
void ask_hosts_addrinfo(const char *name, const struct addrinfo *res);
void ask_hosts_list(const char *name, int family, char **addrs);

/* The name this process last resolved to ADDR, copied into BUF
 * (CHANNEL_HOST_MAX bytes); NULL when none. */
const char *ask_host_of(int family, const uint8_t addr[16], char *buf);

#endif
