/* The exec family and posix_spawn*.  Both modes put the shim back into
 * an environment that dropped it (envfix.c); preload mode also decides
 * the exec and tells the supervisor which program runs, and posix_spawn*
 * ask before making a process under --max-procs (wrap-proc.c).
 *
 * These run in vfork children and between fork and exec: everything is
 * on the stack, nothing is allocated, no lock is taken.  The PATH search
 * of execvp() is done here (as glibc does it) so that the program checked
 * is the one that runs. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <spawn.h>
#include <stdint.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "preload/ask.h"
#include "preload/real.h"
#include "preload/shim.h"
#include "preload/wrap-proc.h"

#define EXPORT __attribute__((visibility("default")))

/* execl*'s arguments, gathered on the stack. */
#define EXEC_ARGS_MAX 4096

extern char **environ;

typedef int (*exec_execve_fn)(const char *, char *const[], char *const[]);

/* ld.so ld.so ... PROG: as many loaders as this are looked through (as
 * tracer/inspect/identity.c does). */
#define EXEC_LOADER_DEPTH 4

/* The dynamic loader of this very process (its PT_INTERP, read from the
 * program headers in memory: async-signal-safe, nothing to open),
 * resolved into OUT (PATH_MAX); false when it has none.  Every dynamic
 * program of the session names the system's loader there. */
static bool exec_own_loader(char *out)
{
	const ElfW(Phdr) *ph = (const ElfW(Phdr) *)getauxval(AT_PHDR);
	unsigned long n = getauxval(AT_PHNUM);
	uintptr_t bias = 0;
	const char *interp = NULL;

	if (!ph || !n)
		return false;
	for (unsigned long i = 0; i < n; i++)
		if (ph[i].p_type == PT_PHDR)
			bias = (uintptr_t)ph - ph[i].p_vaddr;
	for (unsigned long i = 0; i < n; i++)
		if (ph[i].p_type == PT_INTERP)
			interp = (const char *)(bias + ph[i].p_vaddr);
	return interp && interp[0] == '/' && ask_path(AT_FDCWD, interp, true, out) == 0;
}

/* The resolved loader, kept once found: a lock-free once (vfork children
 * and threads may race to fill it; only the one that claims it writes,
 * the others resolve on their own stack meanwhile). */
enum { EXEC_LOADER_UNKNOWN, EXEC_LOADER_FILLING, EXEC_LOADER_READY, EXEC_LOADER_NONE };
static int exec_loader_state;
static char exec_loader[PATH_MAX];

static bool exec_is_loader(const char *abs)
{
	char own[PATH_MAX];
	const char *slash = strrchr(abs, '/');
	int state = __atomic_load_n(&exec_loader_state, __ATOMIC_ACQUIRE), expect;

	if (rules_loader_name(slash ? slash + 1 : abs))
		return true;
	if (state == EXEC_LOADER_READY)
		return strcmp(exec_loader, abs) == 0;
	if (state == EXEC_LOADER_NONE)
		return false;
	expect = EXEC_LOADER_UNKNOWN;
	if (state == EXEC_LOADER_UNKNOWN &&
	    __atomic_compare_exchange_n(&exec_loader_state, &expect, EXEC_LOADER_FILLING, false,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		bool found = exec_own_loader(exec_loader);

		__atomic_store_n(&exec_loader_state, found ? EXEC_LOADER_READY : EXEC_LOADER_NONE,
				 __ATOMIC_RELEASE);
		return found && strcmp(exec_loader, abs) == 0;
	}
	return exec_own_loader(own) && strcmp(own, abs) == 0;
}

/* What the exec of ABS with ARGV runs (agenttrace-policy(5), "Exec
 * identity"), into C: through the loader, the program it runs (resolved
 * into PROG); the script an interpreter runs (into SCRIPT).  Node's
 * package.json names are the supervisor's alone: reading and parsing a
 * file the command controls is no work for a wrapper that must stay
 * async-signal-safe in every process (argv[0]'s name still names npm
 * when it is run as npm). */
/* The value of NAME ("PATH=") in ENVP: the first (FIRST, getenv's) or
 * the last one (bash's); NULL when none. */
static const char *exec_env_value(char *const envp[], const char *name, bool first)
{
	size_t n = strlen(name);
	const char *v = NULL;

	for (size_t i = 0; envp && envp[i]; i++)
		if (!strncmp(envp[i], name, n)) {
			v = envp[i] + n;
			if (first)
				break;
		}
	return v;
}

/* A name an interpreter's search tries (rules_interp_search()), as this
 * process: resolved into ARG (PATH_MAX) when it is a regular file it may
 * read (and run: EXEC). */
static bool exec_try_script(const char *candidate, bool exec, void *arg)
{
	char *out = arg;
	struct stat st;

	return ask_path(AT_FDCWD, candidate, true, out) == 0 &&
	       fstatat(AT_FDCWD, out, &st, 0) == 0 && S_ISREG(st.st_mode) &&
	       faccessat(AT_FDCWD, out, exec ? R_OK | X_OK : R_OK, AT_EACCESS) == 0;
}

/* The script NAME of the interpreter argv AV runs with environment ENVP,
 * found as the interpreter finds it (rules_interp_lookup()), resolved
 * into SCRIPT: false when it is NAME from the working directory. */
static bool exec_find_script(const char *target, const char *const *av, size_t argc, size_t s,
			     const char *name, char *const envp[], char *script)
{
	struct rules_lookup lk;
	char dir[PATH_MAX], cand[PATH_MAX];
	bool absent, first;

	rules_interp_lookup(target, av, argc, s, &lk);
	if (!rules_interp_chdir(&lk, av, dir))
		return false;
	absent = lk.how == RULES_LOOKUP_PATH_IF_ABSENT &&
		 faccessat(AT_FDCWD, name, F_OK, 0) < 0 && errno == ENOENT;
	first = lk.by != RULES_LOOKUP_BY_SHELL;
	if (rules_interp_searches(&lk, name, absent) &&
	    rules_interp_search(&lk, name, dir, exec_env_value(envp, "PATH=", first),
				exec_env_value(envp, "RUBYPATH=", first),
				exec_env_value(envp, "HOME=", first), exec_try_script, script, cand))
		return true;
	if (!dir[0] || name[0] == '/' || strlen(dir) + 1 + strlen(name) >= sizeof(cand))
		return false;
	strcpy(cand, dir);
	strcat(cand, "/");
	strcat(cand, name);
	return ask_path(AT_FDCWD, cand, true, script) != -ENAMETOOLONG;
}

static void exec_identity(struct ask_call *c, const char *abs, char *const argv[],
			  char *const envp[], char *prog, char *script)
{
	const char *const *av = (const char *const *)argv;
	size_t argc = 0, s, off;

	while (av && av[argc])
		argc++;
	for (int depth = 0; depth < EXEC_LOADER_DEPTH && exec_is_loader(c->target); depth++) {
		size_t p = rules_loader_prog(av + c->target_arg0, argc - c->target_arg0);

		if (!p)
			break;
		if (ask_path(AT_FDCWD, av[c->target_arg0 + p], true, prog) == -ENAMETOOLONG)
			break;
		c->loader = abs;
		c->target = prog;
		c->target_arg0 += p;
	}
	s = rules_interp_script(c->target, av ? av + c->target_arg0 : NULL, argc - c->target_arg0,
				&off, NULL, NULL);
	if (s && (exec_find_script(c->target, av + c->target_arg0, argc - c->target_arg0, s,
				   av[c->target_arg0 + s] + off, envp, script) ||
		  ask_path(AT_FDCWD, av[c->target_arg0 + s] + off, true, script) != -ENAMETOOLONG)) {
		c->script = script;
		c->script_arg = s;
	}
}

/* 0, or the errno of a denial.  A program that does not exist is left to
 * fail in the kernel with its own errno, unrecorded (execvp tries every
 * PATH entry). */
static int exec_check(int dirfd, const char *path, char *const argv[], char *const envp[],
		      const char *name)
{
	char abs[PATH_MAX], prog[PATH_MAX], script[PATH_MAX];
	struct ask_call c = { 0 };
	int saved = errno, r;

	if (!shim_deciding() || !path)
		return 0;
	r = ask_path(dirfd, path, true, abs);
	if (r < 0) {
		errno = saved;
		return 0;
	}
	c.syscall = name;
	c.kind = RULES_KIND_EXEC;
	c.target = abs;
	c.target_argv = argv;
	exec_identity(&c, abs, argv, envp, prog, script);
	errno = saved;
	return ask_decide(&c);
}

static int exec_do_execve(const char *path, char *const argv[], char *const envp[], const char *name)
{
	char *fixed[ENVFIX_CAP];
	char buf[ENVFIX_BUF];
	int err = exec_check(AT_FDCWD, path, argv, envp, name);

	if (err) {
		errno = err;
		return -1;
	}
	return REAL(execve, exec_execve_fn)(path, argv,
					    shim_active() ? envfix(envp, fixed, ENVFIX_CAP, buf, sizeof(buf)) : envp);
}

EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	return exec_do_execve(path, argv, envp, "execve");
}

EXPORT int execv(const char *path, char *const argv[])
{
	return exec_do_execve(path, argv, environ, "execv");
}

/* A file without "#!" that the kernel refused with ENOEXEC: run by
 * /bin/sh, as execvp(3) does. */
static int exec_script(const char *path, char *const argv[], char *const envp[], const char *name)
{
	char *args[EXEC_ARGS_MAX];
	size_t n = 0;

	args[n++] = (char *)"/bin/sh";
	args[n++] = (char *)path;
	for (size_t i = 1; argv[0] && argv[i]; i++) {
		if (n + 1 >= EXEC_ARGS_MAX) {
			errno = E2BIG;
			return -1;
		}
		args[n++] = argv[i];
	}
	args[n] = NULL;
	return exec_do_execve("/bin/sh", args, envp, name);
}

static int exec_search(const char *file, char *const argv[], char *const envp[], const char *name)
{
	char cand[PATH_MAX];
	const char *path, *p;
	size_t flen;
	bool eacces = false;

	if (!file || !*file) {
		errno = ENOENT;
		return -1;
	}
	if (strchr(file, '/')) {
		exec_do_execve(file, argv, envp, name);
		if (errno == ENOEXEC)
			exec_script(file, argv, envp, name);
		return -1;
	}
	path = getenv("PATH");
	if (!path)
		path = "/bin:/usr/bin";
	flen = strlen(file);
	for (p = path;; p++) {
		const char *end = strchrnul(p, ':');
		size_t dlen = (size_t)(end - p);

		if (dlen + 1 + flen + 1 <= sizeof(cand)) {
			if (dlen) {
				memcpy(cand, p, dlen);
				cand[dlen] = '/';
				memcpy(cand + dlen + 1, file, flen + 1);
			} else {
				memcpy(cand, file, flen + 1); /* "" is the cwd */
			}
			exec_do_execve(cand, argv, envp, name);
			switch (errno) {
			case ENOEXEC:
				exec_script(cand, argv, envp, name);
				return -1;
			case EACCES:
				eacces = true;
				break;
			case ENOENT:
			case ENOTDIR:
			case ESTALE:
			case ENODEV:
			case ETIMEDOUT:
				break;
			default:
				return -1;
			}
		}
		if (!*end)
			break;
		p = end;
	}
	errno = eacces ? EACCES : ENOENT;
	return -1;
}

EXPORT int execvp(const char *file, char *const argv[])
{
	return exec_search(file, argv, environ, "execvp");
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	return exec_search(file, argv, envp, "execvpe");
}

/* Gathers arg0, ... up to NULL into args; with envp, the pointer after
 * the NULL too (execle). */
#define EXEC_GATHER(arg0, args, n, ap)                                   \
	do {                                                             \
		args[0] = (char *)(arg0);                                \
		n = 1;                                                   \
		while (args[n - 1]) {                                    \
			if (n >= EXEC_ARGS_MAX) {                        \
				va_end(ap);                              \
				errno = E2BIG;                           \
				return -1;                               \
			}                                                \
			args[n++] = va_arg(ap, char *);                  \
		}                                                        \
	} while (0)

EXPORT int execl(const char *path, const char *arg0, ...)
{
	char *args[EXEC_ARGS_MAX];
	size_t n;
	va_list ap;

	va_start(ap, arg0);
	EXEC_GATHER(arg0, args, n, ap);
	va_end(ap);
	return exec_do_execve(path, args, environ, "execl");
}

EXPORT int execlp(const char *file, const char *arg0, ...)
{
	char *args[EXEC_ARGS_MAX];
	size_t n;
	va_list ap;

	va_start(ap, arg0);
	EXEC_GATHER(arg0, args, n, ap);
	va_end(ap);
	return exec_search(file, args, environ, "execlp");
}

EXPORT int execle(const char *path, const char *arg0, ...)
{
	char *args[EXEC_ARGS_MAX];
	char **envp;
	size_t n;
	va_list ap;

	va_start(ap, arg0);
	EXEC_GATHER(arg0, args, n, ap);
	envp = va_arg(ap, char **);
	va_end(ap);
	return exec_do_execve(path, args, envp, "execle");
}

EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	char *fixed[ENVFIX_CAP];
	char buf[ENVFIX_BUF];
	int err = 0;

	if (shim_deciding()) {
		char link[32] = "/proc/self/fd/";
		char *w = link + 14;
		char digits[12];
		int nd = 0;
		unsigned v = (unsigned)fd;

		/* exec_check("") cannot name an fd: ask about its /proc link. */
		do {
			digits[nd++] = (char)('0' + v % 10);
			v /= 10;
		} while (v);
		while (nd)
			*w++ = digits[--nd];
		*w = 0;
		err = exec_check(AT_FDCWD, link, argv, envp, "fexecve");
	}
	if (err) {
		errno = err;
		return -1;
	}
	return REAL(fexecve, int (*)(int, char *const[], char *const[]))(
		fd, argv, shim_active() ? envfix(envp, fixed, ENVFIX_CAP, buf, sizeof(buf)) : envp);
}

EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags)
{
	char *fixed[ENVFIX_CAP];
	char buf[ENVFIX_BUF];
	const char *p = path;
	int err;

	/* glibc declares path nonnull; a program may pass NULL all the same
	 * (the kernel answers EFAULT), so the check must survive. */
	__asm__("" : "+r"(p));
	err = p && *p ? exec_check(dirfd, p, argv, envp, "execveat") : 0;

	if (err) {
		errno = err;
		return -1;
	}
	return REAL(execveat, int (*)(int, const char *, char *const[], char *const[], int))(
		dirfd, path, argv,
		shim_active() ? envfix(envp, fixed, ENVFIX_CAP, buf, sizeof(buf)) : envp, flags);
}

typedef int (*exec_spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
			     const posix_spawnattr_t *, char *const[], char *const[]);

EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
		       const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	char *fixed[ENVFIX_CAP];
	char buf[ENVFIX_BUF];
	struct proc_ticket t;
	pid_t child = -1;
	int saved = errno, err = exec_check(AT_FDCWD, path, argv, envp, "posix_spawn");

	errno = saved;
	if (!err)
		err = proc_ask("posix_spawn", &t);
	if (err)
		return err; /* posix_spawn returns the error, errno untouched */
	err = REAL(posix_spawn, exec_spawn_fn)(
		&child, path, fa, attr, argv,
		shim_active() ? envfix(envp, fixed, ENVFIX_CAP, buf, sizeof(buf)) : envp);
	proc_done(&t, err ? -1 : child);
	if (!err && pid)
		*pid = child;
	return err;
}

/* The program posix_spawnp will run: the first PATH entry holding an
 * executable FILE. */
static int exec_spawnp_check(const char *file, char *const argv[], char *const envp[])
{
	char cand[PATH_MAX];
	const char *path, *p;
	size_t flen;

	if (!shim_deciding() || !file || !*file)
		return 0;
	if (strchr(file, '/'))
		return exec_check(AT_FDCWD, file, argv, envp, "posix_spawnp");
	path = getenv("PATH");
	if (!path)
		path = "/bin:/usr/bin";
	flen = strlen(file);
	for (p = path;; p++) {
		const char *end = strchrnul(p, ':');
		size_t dlen = (size_t)(end - p);

		if (dlen + 1 + flen + 1 <= sizeof(cand)) {
			memcpy(cand, dlen ? p : ".", dlen ? dlen : 1);
			dlen = dlen ? dlen : 1;
			cand[dlen] = '/';
			memcpy(cand + dlen + 1, file, flen + 1);
			if (access(cand, X_OK) == 0)
				return exec_check(AT_FDCWD, cand, argv, envp, "posix_spawnp");
		}
		if (!*end)
			break;
		p = end;
	}
	return 0;
}

EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
			const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	char *fixed[ENVFIX_CAP];
	char buf[ENVFIX_BUF];
	struct proc_ticket t;
	pid_t child = -1;
	int saved = errno, err = exec_spawnp_check(file, argv, envp);

	errno = saved;
	if (!err)
		err = proc_ask("posix_spawnp", &t);
	if (err)
		return err;
	err = REAL(posix_spawnp, exec_spawn_fn)(
		&child, file, fa, attr, argv,
		shim_active() ? envfix(envp, fixed, ENVFIX_CAP, buf, sizeof(buf)) : envp);
	proc_done(&t, err ? -1 : child);
	if (!err && pid)
		*pid = child;
	return err;
}
