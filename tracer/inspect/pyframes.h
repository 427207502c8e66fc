/* Python-level frames of a stopped CPython thread, for alert records
 * (doc/RECORDS.md "python": file, line, function, innermost first).
 *
 * Read from outside, from the interpreter's own structures in the
 * caller's memory (process_vm_readv through tracer/syscall/mem.h),
 * while the thread waits in its stop: _PyRuntime is found through the
 * exported symbols (.dynsym) of the program or of a mapped libpython,
 * the version through Py_Version, and the thread's state by its thread
 * id in the interpreters' thread lists (the calling thread usually does
 * not hold the GIL: CPython lets it go around blocking calls).  Layouts
 * are known per CPython version (pyframes.c); other versions get none.
 * doc/INTERNALS.md "Python frames" says why this way and not the shim.
 *
 * The memory read is the caller's, and the caller may have forged or
 * broken it (other threads of the process keep running meanwhile under
 * both engines): every read is bounded and checked, a pointer is only
 * ever an address to read at, lengths are capped, at most PYFRAMES_WALK
 * frames are visited and a frame seen twice ends the walk.  What comes
 * out is a hint for the human, not evidence.
 *
 * Not thread-safe (the supervisor is one thread).  Never exits. */
#ifndef AGENTTRACE_PYFRAMES_H
#define AGENTTRACE_PYFRAMES_H

#include <sys/types.h>

/* Frames per record, and frames visited at most while walking. */
#define PYFRAMES_DEPTH 8
#define PYFRAMES_WALK 64

struct py_frame {
	char file[256];       /* co_filename, cut to fit */
	char function[128];   /* co_qualname (Class.method), cut to fit */
	int line;             /* the line being run; 0 when unknown */
};

/* Frames of thread TID of process TGID, stopped in a call: at most MAX,
 * innermost first.  Returns the number written; 0 when TGID is not a
 * CPython of a known version, or the thread runs no Python code; -errno
 * when the process could not be read (-ESRCH: gone). */
int pyframes_take(pid_t tgid, pid_t tid, struct py_frame *frames, int max);

/* Where a process's interpreter is (not its frames) is kept for its next
 * alerts, at most PYFRAMES_PROCS processes; a process found to be no
 * CPython is looked at again each time (a libpython may be loaded
 * later).  Drop what is kept about PID: call at exec and exit. */
#define PYFRAMES_PROCS 8
void pyframes_forget(pid_t pid);

/* Drop everything (end of session). */
void pyframes_forget_all(void);

#endif
