/* Which program an exec runs, from its command line alone: the dynamic
 * loader run as a program (ld.so [OPTIONS] PROG ARGS) and the script file
 * an interpreter is given (sh x.sh, python3 x.py).  rules.h, "exec
 * identity"; agenttrace-policy(5), "Exec identity".
 *
 * Both backends ask these before they resolve paths: the supervisor in
 * tracer/inspect/identity.c, the preload shim in preload/wrap-exec.c
 * (allocation-free, no locale, no stdio: it runs between fork and exec).
 * The conventions are the programs' own: glibc's rtld.c option loop, the
 * shells' and interpreters' option parsers, reduced to "which argument
 * is the program or the script".  A case they get wrong errs towards
 * naming a script that does not exist, which judges a path that cannot
 * run; never towards missing one. */
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "rules/match-internal.h"
#include "rules/rules.h"

static bool id_is(const char *a, const char *b)
{
	return a && strcmp(a, b) == 0;
}

static const char *id_base(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;

	return s ? s + 1 : p ? p : "";
}

/* NAME, or NAME followed by a version: "python", "python3", "python3.11". */
static bool id_versioned(const char *base, const char *name)
{
	size_t n = strlen(name);

	if (strncmp(base, name, n) != 0)
		return false;
	for (const char *p = base + n; *p; p++)
		if ((*p < '0' || *p > '9') && *p != '.')
			return false;
	return true;
}

bool rules_loader_name(const char *base)
{
	static const char glob1[] = "ld-linux*.so*", glob2[] = "ld-*.so*";
	size_t n;

	if (!base)
		return false;
	n = strlen(base);
	return id_is(base, "ld.so") ||
	       match_glob_n(glob1, sizeof(glob1) - 1, base, n, 0) ||
	       match_glob_n(glob2, sizeof(glob2) - 1, base, n, 0);
}

/* glibc's ld.so options (elf/rtld.c, 2.36) that take the next argument;
 * musl's ld.so knows --library-path, --preload and --argv0 of these. */
static bool id_loader_opt_arg(const char *a)
{
	static const char *const with_arg[] = {
		"--library-path", "--inhibit-rpath", "--audit", "--preload", "--argv0",
		"--glibc-hwcaps-prepend", "--glibc-hwcaps-mask",
	};

	for (size_t i = 0; i < sizeof(with_arg) / sizeof(with_arg[0]); i++)
		if (id_is(a, with_arg[i]))
			return true;
	return false;
}

size_t rules_loader_prog(const char *const *argv, size_t argc)
{
	for (size_t i = 1; i < argc && argv && argv[i]; i++) {
		const char *a = argv[i];

		if (a[0] != '-' || a[1] != '-')
			return i; /* glibc: the first word not starting "--" is the program */
		if (a[2] == '\0') /* "--": musl's end of options (glibc refuses it) */
			return i + 1 < argc && argv[i + 1] ? i + 1 : 0;
		if (id_is(a, "--help") || id_is(a, "--version") || id_is(a, "--list-tunables") ||
		    id_is(a, "--list-diagnostics"))
			return 0; /* it prints and exits */
		if (id_loader_opt_arg(a))
			i++;
		/* --list, --verify, --inhibit-cache: still the program's file
		 * that is loaded (ldd runs ld.so --verify PROG). */
	}
	return 0;
}

enum id_interp { ID_NONE, ID_SHELL, ID_PYTHON, ID_NODE, ID_PERL, ID_RUBY, ID_PHP };

static enum id_interp id_interp_of(const char *base)
{
	static const char *const shells[] = { "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash",
					      "hush", "fish" };

	for (size_t i = 0; i < sizeof(shells) / sizeof(shells[0]); i++)
		if (id_is(base, shells[i]))
			return ID_SHELL;
	if (id_versioned(base, "python") || id_versioned(base, "pypy"))
		return ID_PYTHON;
	if (id_is(base, "node") || id_is(base, "nodejs"))
		return ID_NODE;
	if (id_versioned(base, "perl"))
		return ID_PERL;
	if (id_versioned(base, "ruby"))
		return ID_RUBY;
	if (id_versioned(base, "php"))
		return ID_PHP;
	return ID_NONE;
}

/* What one option argument says. */
enum id_step {
	ID_NEXT,        /* an option: go on with the next argument */
	ID_SKIP_ONE,    /* an option whose value is the next argument */
	ID_TEXT_NEXT,   /* inline code in the next argument (sh -c, python -c, ...) */
	ID_TEXT_HERE,   /* inline code in this very argument (python -c'...') */
	ID_SCRIPT_NEXT, /* the script file is the next argument (php -f) */
	ID_END,         /* nothing to run from a file: stdin, a module, a server */
};

/* Shells: -c anywhere in a group makes the first operand the command
 * text; -s reads stdin; -o/-O (and +o/+O) take an option name; bash's
 * --rcfile and --init-file a file; zsh's --emulate a mode. */
static enum id_step id_shell_opt(const char *a, bool *text)
{
	enum id_step step = ID_NEXT;

	if (a[0] == '-' && a[1] == '-')
		return id_is(a, "--rcfile") || id_is(a, "--init-file") || id_is(a, "--emulate") ?
			       ID_SKIP_ONE : ID_NEXT;
	for (const char *p = a + 1; *p; p++) {
		if (*p == 'c')
			*text = true;
		else if (*p == 's')
			return ID_END;
		else if (*p == 'o' || *p == 'O')
			step = ID_SKIP_ONE;
	}
	return step;
}

static enum id_step id_python_opt(const char *a, size_t *off)
{
	if (a[1] == '-')
		return id_is(a, "--check-hash-based-pycs") ? ID_SKIP_ONE :
		       id_is(a, "--help") || id_is(a, "--version") ? ID_END : ID_NEXT;
	for (const char *p = a + 1; *p; p++) {
		switch (*p) {
		case 'c':
			*off = (size_t)(p + 1 - a);
			return p[1] ? ID_TEXT_HERE : ID_TEXT_NEXT;
		case 'm':
			return ID_END; /* a module, found on sys.path */
		case 'W':
		case 'X':
			return p[1] ? ID_NEXT : ID_SKIP_ONE;
		case 'h':
		case 'V':
			return ID_END;
		default:
			break;
		}
	}
	return ID_NEXT;
}

static enum id_step id_node_opt(const char *a, size_t *off)
{
	static const char *const with_arg[] = {
		"-r", "--require", "--import", "--loader", "--experimental-loader", "-C",
		"--conditions", "--title", "--inspect-port", "--env-file", "--input-type",
		"--eval-ts",
	};

	if (id_is(a, "-e") || id_is(a, "--eval") || id_is(a, "-p") || id_is(a, "--print") ||
	    id_is(a, "-pe"))
		return ID_TEXT_NEXT;
	if (strncmp(a, "--eval=", 7) == 0 || strncmp(a, "--print=", 8) == 0) {
		*off = (size_t)(strchr(a, '=') + 1 - a);
		return ID_TEXT_HERE;
	}
	if (id_is(a, "-h") || id_is(a, "--help") || id_is(a, "-v") || id_is(a, "--version") ||
	    id_is(a, "-i") || id_is(a, "--interactive"))
		return ID_END;
	for (size_t i = 0; i < sizeof(with_arg) / sizeof(with_arg[0]); i++)
		if (id_is(a, with_arg[i]))
			return ID_SKIP_ONE;
	return ID_NEXT;
}

/* perl and ruby: -e (also at the end of a group, "-lne") is code; -I,
 * ruby's -r and -C alone take the next argument; perl's -I... -M... -i...
 * carry their value in the rest of the argument. */
/* What a perl or ruby option cluster A says besides its step, for
 * rules_interp_lookup(): -S (a PATH search), and where a ruby -C or -x
 * directory starts in A (0: none; -C with the next argument: DIR_NEXT). */
struct id_perl_ruby {
	bool search;
	size_t dir_off;
	bool dir_next;
};

/* perlrun(1) and ruby(1): -e (and perl's -E) is code, the rest of the
 * argument or the next one; -h (and perl's -v) ends; -0 (and perl's -l)
 * take optional digits and the cluster goes on; ruby's -K one letter and
 * -W an optional level; the letters of VALUE take the rest of the
 * argument as their value; the other letters are flags. */
static enum id_step id_perl_ruby_opt(const char *a, bool ruby, size_t *off,
				     struct id_perl_ruby *pr)
{
	const char *value = ruby ? "CEFiIrx" : "IMmxdDFCi";

	if (a[1] == '-') {
		if (id_is(a, "--help") || id_is(a, "--version"))
			return ID_END;
		return ruby && (id_is(a, "--encoding") || id_is(a, "--external-encoding") ||
				id_is(a, "--internal-encoding")) ? ID_SKIP_ONE : ID_NEXT;
	}
	for (const char *p = a + 1; *p; p++) {
		if (*p == 'e' || (!ruby && *p == 'E')) {
			*off = (size_t)(p + 1 - a);
			return p[1] ? ID_TEXT_HERE : ID_TEXT_NEXT;
		}
		if (*p == 'h' || (!ruby && *p == 'v'))
			return ID_END;
		if (*p == 'S') {
			pr->search = true;
		} else if (*p == '0' || (!ruby && *p == 'l')) {
			/* -0777, -0x1FF (perl), -l015 */
			if (!ruby && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
				p++;
			while ((p[1] >= '0' && p[1] <= '9') || (!ruby && ((p[1] >= 'a' && p[1] <= 'f') ||
								    (p[1] >= 'A' && p[1] <= 'F'))))
				p++;
		} else if (ruby && *p == 'K') {
			if (p[1])
				p++;
		} else if (ruby && *p == 'W') {
			if (p[1] == ':')
				return ID_NEXT;
			if (p[1] >= '0' && p[1] <= '2')
				p++;
		} else if (strchr(value, *p)) {
			if (ruby && (*p == 'C' || *p == 'x')) {
				if (p[1])
					pr->dir_off = (size_t)(p + 1 - a);
				else
					pr->dir_next = *p == 'C';
			}
			/* the rest of the argument is its value; ruby's -C,
			 * -E, -I, -r and perl's -I take the next one when it
			 * is empty */
			if (!p[1] && (*p == 'I' || (ruby && strchr("CEr", *p))))
				return ID_SKIP_ONE;
			return ID_NEXT;
		}
	}
	return ID_NEXT;
}

/* php [options] [-f] FILE [--] [args]: -f and -F name the file; -r, -B,
 * -R, -E are code; -c, -d, -z, -t, -S take a value; -a, -S, -l, -i, -v
 * and the rest run no file of their own. */
static enum id_step id_php_opt(const char *a)
{
	if (id_is(a, "-f") || id_is(a, "--file") || id_is(a, "-F") || id_is(a, "--process-file"))
		return ID_SCRIPT_NEXT;
	if (id_is(a, "-r") || id_is(a, "--run") || id_is(a, "-B") || id_is(a, "--process-begin") ||
	    id_is(a, "-R") || id_is(a, "--process-code") || id_is(a, "-E") ||
	    id_is(a, "--process-end"))
		return ID_TEXT_NEXT;
	if (id_is(a, "-c") || id_is(a, "--php-ini") || id_is(a, "-d") || id_is(a, "--define") ||
	    id_is(a, "-z") || id_is(a, "--zend-extension") || id_is(a, "-t") || id_is(a, "--docroot"))
		return ID_SKIP_ONE;
	if (id_is(a, "--"))
		return ID_END; /* arguments for a script read from stdin */
	return id_is(a, "-a") || id_is(a, "-S") || id_is(a, "-l") || id_is(a, "-i") ||
	       id_is(a, "-v") || id_is(a, "-h") || id_is(a, "-m") ? ID_END : ID_NEXT;
}

/* The first argument of ARGV the interpreter reads options from, and its
 * kind: busybox runs the applet argv[0] names, or argv[1] when called as
 * "busybox". */
static enum id_interp id_interp_start(const char *exe_base, const char *const *argv, size_t argc,
				      size_t *start)
{
	*start = 1;
	if (id_is(exe_base, "busybox")) {
		const char *applet = argc > 0 && argv[0] ? id_base(argv[0]) : "busybox";

		if (id_is(applet, "busybox")) {
			if (argc < 2 || !argv[1])
				return ID_NONE;
			applet = id_base(argv[1]);
			*start = 2;
		}
		return id_is(applet, "sh") || id_is(applet, "ash") || id_is(applet, "hush") ||
		       id_is(applet, "bash") ? ID_SHELL : ID_NONE;
	}
	return id_interp_of(exe_base);
}

void rules_interp_lookup(const char *exe, const char *const *argv, size_t argc, size_t script,
			 struct rules_lookup *out)
{
	enum id_interp kind;
	size_t i;

	memset(out, 0, sizeof(*out));
	if (!argv || script == 0 || script >= argc)
		return;
	kind = id_interp_start(id_base(exe), argv, argc, &i);
	if (kind == ID_SHELL) {
		/* bash searches PATH for a script it finds no file of, in
		 * POSIX mode too; zsh does with PATH_SCRIPT (set when it
		 * runs as sh or ksh).  One that does not fails to run
		 * anything: a search judged there refuses nothing that runs. */
		out->how = RULES_LOOKUP_PATH_IF_ABSENT;
		out->by = RULES_LOOKUP_BY_SHELL;
		return;
	}
	if (kind != ID_PERL && kind != ID_RUBY)
		return;
	out->by = kind == ID_PERL ? RULES_LOOKUP_BY_PERL : RULES_LOOKUP_BY_RUBY;
	/* perl -S and ruby -S search PATH (ruby RUBYPATH first); ruby -C DIR,
	 * -CDIR and -xDIR change to DIR before the script is opened. */
	for (; i < script; i++) {
		struct id_perl_ruby pr = { 0 };
		size_t off;
		enum id_step step;

		if (!argv[i] || argv[i][0] != '-' || !argv[i][1])
			continue;
		step = id_perl_ruby_opt(argv[i], kind == ID_RUBY, &off, &pr);
		if (pr.search)
			out->how = RULES_LOOKUP_PATH;
		if ((pr.dir_off || (pr.dir_next && i + 1 < script)) && out->n_dirs < RULES_LOOKUP_DIRS) {
			out->dir_arg[out->n_dirs] = pr.dir_off ? i : i + 1;
			out->dir_off[out->n_dirs++] = pr.dir_off;
		}
		if (step == ID_SKIP_ONE)
			i++;
	}
}

bool rules_interp_chdir(const struct rules_lookup *lk, const char *const *argv, char *dir)
{
	size_t used = 0;

	dir[0] = '\0';
	for (size_t k = 0; k < lk->n_dirs; k++) {
		const char *d = argv[lk->dir_arg[k]] + lk->dir_off[k];
		size_t n = strlen(d);

		if (d[0] == '/')
			used = 0;
		if (used + (used ? 1 : 0) + n >= PATH_MAX)
			return false;
		if (used)
			dir[used++] = '/';
		memcpy(dir + used, d, n + 1);
		used += n;
	}
	return true;
}

bool rules_interp_searches(const struct rules_lookup *lk, const char *name, bool absent)
{
	if (lk->how == RULES_LOOKUP_NAME || name[0] == '/')
		return false;
	if (lk->by != RULES_LOOKUP_BY_RUBY && strchr(name, '/'))
		return false;
	return lk->how == RULES_LOOKUP_PATH || absent;
}

/* bash's own PATH when the environment has none (config-top.h). */
#define ID_BASH_PATH "/usr/local/bin:/usr/local/sbin:/usr/bin:/usr/sbin:/bin:/sbin:."

/* NAME in each ':'-separated entry of DIRS in turn: see
 * rules_interp_search(). */
static bool id_search_dirs(const struct rules_lookup *lk, const char *dirs, const char *dir,
			   const char *home, const char *name,
			   bool (*try)(const char *candidate, bool exec, void *arg), void *arg,
			   char *buf)
{
	size_t name_n = strlen(name);

	for (const char *d = dirs;; d++) {
		size_t n = strcspn(d, ":"), at = 0;
		const char *pre = "";

		if (lk->by == RULES_LOOKUP_BY_RUBY && n && d[0] == '~' && (n == 1 || d[1] == '/')) {
			pre = home ? home : ""; /* ruby: a leading ~ is HOME */
			d++;
			n--;
		} else if (dir[0] && (n == 0 || d[0] != '/')) {
			pre = dir; /* a relative entry, from where ruby -C went */
		}
		if (strlen(pre) + 1 + n + 1 + name_n < PATH_MAX) {
			if (pre[0]) {
				memcpy(buf, pre, strlen(pre));
				at = strlen(pre);
				if (pre != home || n == 0)
					buf[at++] = '/';
			}
			if (n) {
				memcpy(buf + at, d, n);
				at += n;
				buf[at++] = '/';
			}
			memcpy(buf + at, name, name_n + 1);
			if (try(buf, lk->by == RULES_LOOKUP_BY_PERL, arg))
				return true;
		}
		d += n;
		if (!*d)
			return false;
	}
}

bool rules_interp_search(const struct rules_lookup *lk, const char *name, const char *dir,
			 const char *path, const char *rubypath, const char *home,
			 bool (*try)(const char *candidate, bool exec, void *arg), void *arg,
			 char *buf)
{
	if (lk->by == RULES_LOOKUP_BY_RUBY && rubypath && rubypath[0] &&
	    id_search_dirs(lk, rubypath, dir, home, name, try, arg, buf))
		return true;
	if ((!path || !path[0]) && lk->by == RULES_LOOKUP_BY_SHELL)
		path = ID_BASH_PATH;
	return path && path[0] && id_search_dirs(lk, path, dir, home, name, try, arg, buf);
}

size_t rules_interp_script(const char *exe, const char *const *argv, size_t argc,
			   size_t *script_off, size_t *text_arg, size_t *text_off)
{
	enum id_interp kind;
	bool shell_text = false;
	size_t i;

	if (script_off)
		*script_off = 0;
	if (text_arg)
		*text_arg = 0;
	if (text_off)
		*text_off = 0;
	if (!argv)
		return 0;
	kind = id_interp_start(id_base(exe), argv, argc, &i);
	if (kind == ID_NONE)
		return 0;
	for (; i < argc && argv[i]; i++) {
		const char *a = argv[i];
		enum id_step step;
		size_t off = 0;

		if (a[0] != '-' && !(kind == ID_SHELL && a[0] == '+' && a[1])) {
			if (!shell_text)
				return i;
			if (text_arg)
				*text_arg = i; /* sh -c TEXT: the first operand */
			return 0;
		}
		if (a[1] == '\0') /* "-": a shell's end of options, the others' stdin */
			return kind == ID_SHELL && !shell_text && i + 1 < argc && argv[i + 1] ? i + 1 : 0;
		if (a[1] == '-' && a[2] == '\0') { /* "--" */
			if (kind == ID_PHP)
				return 0;
			if (i + 1 >= argc || !argv[i + 1])
				return 0;
			if (shell_text) {
				if (text_arg)
					*text_arg = i + 1;
				return 0;
			}
			return i + 1;
		}
		switch (kind) {
		case ID_SHELL:
			step = id_shell_opt(a, &shell_text);
			break;
		case ID_PYTHON:
			step = id_python_opt(a, &off);
			break;
		case ID_NODE:
			step = id_node_opt(a, &off);
			break;
		case ID_PERL:
		case ID_RUBY: {
			struct id_perl_ruby pr = { 0 };

			step = id_perl_ruby_opt(a, kind == ID_RUBY, &off, &pr);
			break;
		}
		case ID_PHP:
			if (a[1] == 'f' && a[2]) { /* "-fFILE" */
				if (script_off)
					*script_off = 2;
				return i;
			}
			step = id_php_opt(a);
			break;
		default:
			return 0;
		}
		switch (step) {
		case ID_NEXT:
			break;
		case ID_SKIP_ONE:
			i++;
			break;
		case ID_TEXT_NEXT:
			if (text_arg && i + 1 < argc && argv[i + 1])
				*text_arg = i + 1;
			return 0;
		case ID_TEXT_HERE:
			/* "--eval=CODE", "-cCODE", "-lneCODE": after the option. */
			if (text_arg)
				*text_arg = i;
			if (text_off)
				*text_off = off;
			return 0;
		case ID_SCRIPT_NEXT:
			return i + 1 < argc && argv[i + 1] ? i + 1 : 0;
		case ID_END:
			return 0;
		}
	}
	return 0;
}
