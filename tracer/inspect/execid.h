/* Which file an exec will run, by identity (device and inode), so that
 * the program the kernel loaded can be checked against the one the policy
 * judged: a path the caller rewrote after the check, or a file swapped at
 * the judged path, runs another inode.  A "#!" script runs its
 * interpreter (binfmt_script, up to four levels), which is the file
 * /proc/PID/exe names after the exec. */
#ifndef AGENTTRACE_INSPECT_EXECID_H
#define AGENTTRACE_INSPECT_EXECID_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* The kernel follows at most this many "#!" levels (fs/exec.c), and
 * reads that much of a file to find its line (BINPRM_BUF_SIZE). */
#define EXECID_SCRIPT_DEPTH 4
#define EXECID_LINE_MAX 256

/* The "#!" line of the file at PATH, as the kernel reads it: its
 * interpreter into INTERP and the line's argument into ARG (PATH_MAX
 * each).  1: an interpreter, 2: with an argument, 0: no script (or no
 * regular file that can be read), -1: a line that names none that fits. */
int exec_script_line(const char *path, char *interp, char *arg);

struct exec_id {
	bool known;  /* false: a format this cannot follow (binfmt_misc, ...) */
	bool direct; /* the path itself is the ELF program: no interpreter
		      * rewrites its arguments */
	unsigned before_args; /* what the kernel puts before argv[1]: argv[0]
			       * when direct, else each "#!" level's
			       * interpreter (and its argument) and the
			       * script's path */
	dev_t dev;
	ino_t ino;
	/* The "#!" lines the policy judged (tracer/judge.c): the entries the
	 * kernel puts before the script's name (each level's interpreter
	 * and its argument, the deepest first), how many and their digest
	 * (exec_lines_digest()); 0: none judged. */
	unsigned lines;
	char lines_sha[65];
	/* An interpreter that searched for its script (identity.h): the
	 * digest of the environment entries the search read
	 * (exec_env_digest()); env_searched false: none. */
	bool env_searched;
	char env_sha[65];
};

/* A file a program opens itself, by a name it was given, once the kernel
 * has loaded it: the program the dynamic loader runs (`ld.so PROG`), the
 * script an interpreter runs (`sh SCRIPT`, and the script of a "#!"
 * exec, whose path the kernel hands its interpreter).  The kernel loaded
 * only the loader or interpreter, which exec_id_matches() checks; the
 * name was judged before the exec, and a symlink swapped since would
 * give the program another file.  So the name as given (its hash_text(),
 * as struct call's text_hash) and the file it reached at the check are
 * noted; the engine that makes opens itself judges an open of that name
 * which reaches another file as the program or script that file would
 * be (stop_pin_reached(), tracer/stop.h). */
#define EXEC_PINS_MAX 6
struct exec_pin {
	/* The name as given and, when relative, joined to the working
	 * directory (python opens its script so); 0: none. */
	uint64_t text_hash;
	uint64_t abs_hash;
	dev_t dev;   /* the object the name reached; 0, 0: none (a file */
	ino_t ino;   /* that appears there later is no file judged) */
	/* A relative name names it only from this working directory. */
	dev_t cwd_dev;
	ino_t cwd_ino;
	bool script; /* the interpreter's script; false: the program run */
};

/* PIN for the name TEXT, given by process PID in its working directory
 * CWD (NULL: unknown), which resolved to PATH in its view (VIEW: its
 * root, or AT_FDCWD); SCRIPT: see struct exec_pin.  A PATH that names
 * nothing now (or could not be resolved: not absolute) is pinned as
 * nothing.  False when TEXT is empty. */
bool exec_pin_make(struct exec_pin *pin, int view, pid_t pid, const char *text, const char *cwd,
		   const char *path, bool script);

/* The pin among the N at PINS for a name hashed TEXT_HASH, opened by task
 * TID; NULL: none.  A relative name from another working directory than
 * the one it was given in names something else. */
struct exec_pin *exec_pin_find(struct exec_pin *pins, unsigned n, uint64_t text_hash, pid_t tid);

/* The digest of N entries at ENTRIES, each with its NUL, as
 * exec_argv_matches() reads them from the exec's command line. */
void exec_lines_digest(const char *const *entries, size_t n, char out[65]);

/* Whether ENTRY ("NAME=VALUE") of an environment is one an interpreter
 * reads to search for its script: PATH, RUBYPATH, HOME (ruby's '~'). */
bool exec_env_searched_entry(const char *entry);

/* The digest of the N entries at ENTRIES for which
 * exec_env_searched_entry() holds, in their order, each with its NUL. */
void exec_env_digest(const char *const *entries, size_t n, char out[65]);

/* Whether process PID, just after its exec, has the environment entries
 * a search for its script read when it was judged (ID->env_sha; the
 * kernel copied them from the caller's memory after the check).  True
 * when no search was made, or PID is gone. */
bool exec_env_matches(pid_t pid, const struct exec_id *id);

/* The file an execve of PATH (resolved, absolute) loads.  OUT->known is
 * false when that cannot be told (a format binfmt_misc runs).  Returns 0,
 * or -errno when PATH (or a script's interpreter) cannot be opened: the
 * kernel would fail the exec, unless the caller's memory changes first,
 * and the supervisor answers it so itself. */
int exec_id_of(const char *path, struct exec_id *out);

/* Whether process PID, just after its exec, runs the file ID names.  True
 * when ID is not known (nothing to compare) or PID is gone. */
bool exec_id_matches(pid_t pid, const struct exec_id *id);

/* Whether process PID, just after its exec, runs with the ARGC arguments
 * ARGV that were judged (its /proc/PID/cmdline, which the kernel copied
 * from the caller's memory after the check), ID the file judged.  For a
 * program run directly the loaded ones are the judged ones.  Else
 * interpreters the kernel put first replaced argv[0]: the judged
 * argv[1..] end the line, after exactly as many entries as the "#!"
 * lines give (ID->before_args); before them, for a binfmt_misc format,
 * any number; with ID->lines, exactly those entries, which must be the
 * lines judged.  True when PID is gone. */
bool exec_argv_matches(pid_t pid, const struct exec_id *id, const char *const *argv, size_t argc);

#endif
