/* Backtraces of a stopped tracee (libunwind-ptrace), for alert records
 * (doc/RECORDS.md "backtrace": frames of pc, sym, offset, object).
 *
 * One libunwind address space per traced process (tgid), with libunwind's
 * caching on, kept between backtraces and flushed when the process's
 * file mappings change (dlopen/dlclose, read from /proc/PID/maps at each
 * backtrace) and dropped by backtrace_forget() at exec and exit.  At most
 * BACKTRACE_SPACES processes are kept (least recently used goes).
 *
 * libunwind is not linked: it is dlopen()ed at the first backtrace, so
 * that a run that takes none never maps it; when it cannot be loaded,
 * backtrace_take() returns -ELIBACC (one line at -v says why).
 *
 * Not thread-safe (the supervisor is one thread).  Never exits, never
 * raises a signal of its own; a tracee that dies mid-unwind (ESRCH) ends
 * the walk and the frames collected so far are returned.
 *
 * Known limits: libunwind finds DWARF unwind tables through
 * PT_GNU_EH_FRAME (.eh_frame_hdr); gcc links -static programs without it
 * unless given -Wl,--eh-frame-hdr, and libunwind then follows frame
 * pointers, which skips the caller of a leaf function (libc's syscall
 * wrappers make no frame) and ends at code built without them.
 * libunwind mmap()s the objects it reads unwind tables from;
 * an object truncated on disk while it is being read could fault the
 * supervisor (SIGBUS).  Symbol lookups of our own (elfinfo.c) use pread()
 * and are immune. */
#ifndef AGENTTRACE_BACKTRACE_H
#define AGENTTRACE_BACKTRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Defaults for the record writer: frames per backtrace, and the time a
 * backtrace may take (checked between frames, so one frame may overrun). */
#define BACKTRACE_DEPTH 16
#define BACKTRACE_BUDGET_US 20000
#define BACKTRACE_SPACES 32

struct bt_frame {
	uint64_t pc;          /* frame 0: the stop's pc; then return addresses */
	uint64_t offset;      /* pc - start of sym; 0 when sym is "" */
	char sym[128];        /* function name, "" when unknown */
	char object[256];     /* the mapped file from /proc/PID/maps ("[vdso]",
				 * "... (deleted)" as the kernel prints it), "" for
				 * anonymous memory (JIT code) */
};

/* Frames of thread PID, which must be in a ptrace-stop (e.g. a seccomp
 * stop) of ours.  Writes at most MAX frames, innermost first, and stops
 * early when BUDGET_US microseconds have passed (<= 0: the default).
 * Returns the number of frames (>= 1 when the stop's pc could be read), or
 * -errno when none could be taken (-ESRCH: the process is gone; -ELIBACC:
 * libunwind could not be loaded).  Loads libunwind first, before its clock
 * starts. */
int backtrace_take(pid_t pid, struct bt_frame *frames, int max, int budget_us);

/* Drop what is cached about PID (a tgid or a thread id): call at
 * PTRACE_EVENT_EXEC (new address space) and when a process exits. */
void backtrace_forget(pid_t pid);

/* Drop everything (end of session; leak checkers stay quiet). */
void backtrace_forget_all(void);

/* Where frame names come from.  The default asks libelf (our own cached,
 * pread()-based lookup in .symtab, else .dynsym) and libunwind's
 * unw_get_proc_name() only for frames whose object libelf cannot read
 * ([vdso], anonymous code): libunwind searches the same tables but
 * re-reads /proc/PID/maps and mmap()s the whole object for every frame
 * (about 350 us a frame, measured).  Tests and measurements pick one
 * source, or none. */
enum backtrace_names {
	BACKTRACE_NAMES_DEFAULT,  /* libelf; libunwind where libelf cannot read */
	BACKTRACE_NAMES_ELF,      /* libelf only */
	BACKTRACE_NAMES_UNWIND,   /* libunwind only */
	BACKTRACE_NAMES_NONE,     /* pcs and objects only */
};
void backtrace_set_names(enum backtrace_names names);

#endif
