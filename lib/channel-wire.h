/* The wire format of the channel between the preload shim (inside the
 * command's processes, preload/) and the supervisor (tracer/shim/): a
 * connectionless UNIX datagram socket bound by agenttrace under the
 * abstract name "@agenttrace-<session id>", plus the run dir that holds
 * the compiled policy handed to the shim.  Header only, shared by both
 * sides; nothing else of the supervisor is the shim's.
 *
 * Plain C, no pointers:
 * one datagram is one message, a header followed by the body of its type;
 * a message may be shorter than the struct of its type only where a
 * comment says so.  The shim writes messages, agenttrace reads them, never
 * the other way round, so the shim never blocks on the supervisor in
 * ptrace mode (see channel_drain()).  The one exception is SPAWN_ASK
 * (preload mode with --max-procs only): it carries a socket of the shim's
 * (SCM_RIGHTS) on which agenttrace writes the answer; ENDPOINT_ASK
 * (preload mode) likewise.
 *
 * Environment of the command (set by channel_export()):
 *   LD_PRELOAD                 the shim, before any the user had
 *   AGENTTRACE_CHANNEL         "@agenttrace-<id>"
 *   AGENTTRACE_BACKEND         "ptrace" (host names only) or "preload"
 *                              (decisions in-process)
 *   AGENTTRACE_POLICY_BLOB     preload only: the compiled policy file
 *                              (beside it CHANNEL_LINKED_NAME, when the
 *                              session has denied files with other names)
 *
 * Trust: the messages come from the command, which the policy treats as
 * untrusted; a program can claim any name for an address.  Host names from
 * the shim are therefore as good as the program's own word; the supervisor's
 * own resolution of allow rules (hosts.c) does not depend on it. */
#ifndef AGENTTRACE_LIB_CHANNEL_WIRE_H
#define AGENTTRACE_LIB_CHANNEL_WIRE_H

#include <stdint.h>

#define CHANNEL_MAGIC 0x48435441u /* "ATCH" little-endian */
#define CHANNEL_VERSION 3u

#define CHANNEL_ENV_CHANNEL "AGENTTRACE_CHANNEL"
#define CHANNEL_ENV_BACKEND "AGENTTRACE_BACKEND"
#define CHANNEL_ENV_BLOB "AGENTTRACE_POLICY_BLOB"
#define CHANNEL_PRELOAD_NAME "libagenttrace-preload.so"

/* Preload only, in the policy blob's directory: the denied files that
 * have other names (tracer/confine/linked.h), which the shim judges as
 * those files.  A head, N entries, then STRINGS bytes of NUL-terminated
 * paths that the entries point into. */
#define CHANNEL_LINKED_NAME "linked.bin"
#define CHANNEL_LINKED_MAGIC 0x4b4e4c41u /* "ALNK" little-endian */

struct channel_linked_head {
	uint32_t magic;
	uint32_t n;
	uint32_t strings; /* bytes */
	uint32_t pad_;
};

struct channel_linked_file {
	uint64_t dev;
	uint64_t ino;
	uint32_t path; /* offset into the strings */
	uint32_t pad_;
};

enum channel_type {
	CHANNEL_HOSTS = 1,  /* a name and the addresses a lookup gave for it */
	CHANNEL_EVENT = 2,  /* preload-only: one decided event */
	CHANNEL_SPAWN_ASK = 3,  /* preload-only, --max-procs: may I fork? */
	CHANNEL_SPAWN_DONE = 4, /* ... and the process it made (or none) */
	CHANNEL_BIND = 5,       /* preload-only: a socket was bound, the session's */
	CHANNEL_ENDPOINT_ASK = 6, /* preload-only: whose is this local destination? */
};

/* Where a name came from (also the record's "host_source"). */
enum channel_source {
	CHANNEL_SOURCE_SHIM = 1,     /* getaddrinfo/gethostbyname in the command */
	CHANNEL_SOURCE_RESOLVER = 2, /* agenttrace's own lookup of a policy host */
};

#define CHANNEL_HOST_MAX 256
#define CHANNEL_HOST_ADDRS 16

struct channel_addr {
	uint8_t family;   /* AF_INET or AF_INET6 */
	uint8_t pad_[3];
	uint8_t addr[16]; /* network order, IPv4 in the first 4 bytes */
};

struct channel_hosts {
	uint8_t source;   /* enum channel_source */
	uint8_t n;        /* addresses used, <= CHANNEL_HOST_ADDRS */
	uint8_t pad_[2];
	char name[CHANNEL_HOST_MAX];
	struct channel_addr addrs[CHANNEL_HOST_ADDRS];
};

#define CHANNEL_PATH 4096
#define CHANNEL_ARGV 4096   /* NUL-separated argv bytes, capped */
#define CHANNEL_FRAMES 16
#define CHANNEL_OBJECT 160

/* One backtrace frame taken in-process: the pc, and where /proc/self/maps
 * says it lies (object file and the offset in it), for the supervisor to
 * name with elfinfo_symbol() even after the process is gone. */
struct channel_frame {
	uint64_t pc;
	uint64_t file_offset;
	char object[CHANNEL_OBJECT]; /* "" when unknown (anonymous memory) */
};

/* A kind beyond enum rules_kind: an allowed exec, reported so that the
 * supervisor knows the process tree and the programs the shim cannot
 * follow (static ELF). */
#define CHANNEL_KIND_EXEC_NOTICE 250

struct channel_event {
	uint8_t kind;        /* enum rules_kind, or CHANNEL_KIND_EXEC_NOTICE */
	uint8_t action;      /* the rule's action (enum rules_action), mode not applied */
	uint8_t effective;   /* what the shim did: allow, alert (let through), deny */
	uint8_t has_flags;
	int32_t flags;       /* open flags */
	int32_t err;         /* errno returned on deny, 0 none */
	uint32_t rule;       /* index in the block's rule table, UINT32_MAX none */
	char syscall[32];    /* the libc function: "openat", "fopen", "execve", ... */

	/* net */
	int32_t family;
	uint16_t port;
	uint8_t bind;        /* a bind of addr:port, not a destination */
	uint8_t endpoint;    /* a local destination: enum rules_endpoint */
	/* Nothing is at the local destination: the kernel's own answer (or
	 * the datagram went) stood for the verdict; counted, not recorded */
	uint8_t quiet;
	uint64_t listener;   /* RULES_ENDPOINT_OUTSIDE: the socket's inode, 0 unknown */
	uint8_t addr[16];
	char unix_path[110];
	char host[CHANNEL_HOST_MAX];

	/* write / read; exec: the script an interpreter runs (path) and the
	 * dynamic loader that runs target (path2), "" none */
	char path[CHANNEL_PATH];
	char path2[CHANNEL_PATH];
	uint8_t reads;       /* files read besides (RULES_READS_*): rename, link, an O_RDWR open */

	/* exec: the program run (through the loader: the program it runs,
	 * judged with target_argv from element target_arg0 on), the argv as
	 * exec'ed, and the script's element of the judged argv */
	char target[CHANNEL_PATH];
	uint32_t target_argc;
	uint32_t target_arg0;
	uint32_t script_arg;
	char target_argv[CHANNEL_ARGV];

	/* the calling process */
	char exe[CHANNEL_PATH];
	uint32_t argc;
	char argv[CHANNEL_ARGV];
	char cwd[CHANNEL_PATH];

	uint32_t n_frames;
	struct channel_frame frames[CHANNEL_FRAMES];
};

/* --max-procs in preload mode (preload/wrap-proc.c, tracer/shim/preload-mode.c).
 * ASK comes with one SCM_RIGHTS socket (SOCK_SEQPACKET) on which agenttrace
 * answers with an int32_t: 0 (go on) or EAGAIN, and which it then closes;
 * a shim that reads EOF instead (no answer: ptrace mode, an older
 * agenttrace) goes on.  DONE follows a granted ASK from the same process
 * with the same token: the new process, or -1 when the spawn failed. */
struct channel_spawn {
	uint32_t token;    /* per process, echoed by DONE */
	int32_t child;     /* DONE: the new process's pid, -1: none */
	int32_t reply_fd;  /* ASK: set by channel_drain() to the socket that came
			    * with the message, -1 none (the sender's value is
			    * ignored); closed by channel_drain() once handled */
	char syscall[32];  /* "fork", "vfork", "posix_spawn", "posix_spawnp" */
};

/* Session endpoints in preload mode (preload/wrap-net.c,
 * tracer/confine/endpoints.h).  BIND: a socket of the sender, unbound
 * before, was bound by a call that succeeded: its inode and, for a UNIX
 * socket, the name (the resolved path, or "@name").  ASK comes with two
 * SCM_RIGHTS descriptors, a SOCK_SEQPACKET socket for the answer (struct
 * channel_endpoint_answer) and the socket the destination is for; a shim
 * that reads EOF instead takes the destination to be outside. */
struct channel_endpoint {
	uint64_t ino;         /* BIND */
	int32_t reply_fd;     /* ASK: set by channel_drain() (the sender's value is ignored) */
	int32_t sock_fd;      /* ASK: likewise, the caller's socket; -1 none */
	int32_t family;       /* ASK: the destination's; BIND: the socket's */
	uint16_t port;
	uint8_t pad_[2];
	uint8_t addr[16];
	char name[CHANNEL_PATH]; /* UNIX: a path or "@name" ("\\xHH" escapes) */
};

struct channel_endpoint_answer {
	uint8_t endpoint;     /* enum rules_endpoint */
	uint8_t pad_[3];
	int32_t answer;       /* RULES_ENDPOINT_NONE: the kernel's errno; 0 the call runs */
	uint64_t listener;    /* RULES_ENDPOINT_OUTSIDE: the socket's inode, 0 unknown */
};

struct channel_msg {
	uint32_t magic;    /* CHANNEL_MAGIC */
	uint16_t version;  /* CHANNEL_VERSION */
	uint16_t type;     /* enum channel_type */
	int32_t pid;       /* the sender's process */
	int32_t ppid;
	union {
		struct channel_hosts hosts;
		struct channel_event event;
		struct channel_spawn spawn;
		struct channel_endpoint endpoint;
	} u;
};

#define CHANNEL_HEADER_SIZE (sizeof(struct channel_msg) - sizeof(((struct channel_msg *)0)->u))

#endif
