/* One simple command, word by word: assignments before it, wrappers
 * (sudo -E, env -i VAR=x, xargs, nohup, exec, command, time, nice, ...)
 * and their options, then the command proper.  For an interpreter, its
 * options say where its program comes from (sh -c TEXT, sh -s, sh FILE,
 * python3 -m MODULE, python3 -, node -e CODE, perl FILE, ...): only one
 * that names no program, or names stdin, runs what it reads.
 *
 * A word whose value is not known (an expansion) is taken as what such a
 * word usually is: an unknown command, or an operand. */
#include <string.h>

#include "rules/shell.h"

enum {
	PH_CMD = 0, /* the command word is next (after assignments, wrappers) */
	PH_WRAP,    /* a wrapper's options and operands */
	PH_INTERP,  /* an interpreter's options, up to its program */
	PH_EVAL,    /* eval's words: program text */
	PH_SOURCE,  /* source's file */
	PH_ARGS,    /* the rest is data */
};

enum {
	NEXT_NONE = 0,
	NEXT_TEXT,   /* the next word is program text (python -c TEXT) */
	NEXT_FILE,   /* the next word is the program file (php -f FILE) */
	NEXT_MODULE, /* the next word is a module (python -m MODULE) */
};

void shell_cmd_init(struct shell_cmd *c)
{
	memset(c, 0, sizeof(*c));
}

static bool is(const char *v, size_t n, const char *s)
{
	return strlen(s) == n && memcmp(v, s, n) == 0;
}

static bool in_list(const char *v, size_t n, const char *const *list)
{
	for (; list && *list; list++)
		if (is(v, n, *list))
			return true;
	return false;
}

/* "--name=value": the value is attached. */
static bool has_eq(const char *v, size_t n)
{
	return memchr(v, '=', n) != NULL;
}

static bool names_stdin(const char *v, size_t n)
{
	return is(v, n, "/dev/stdin") || is(v, n, "/dev/fd/0") || is(v, n, "/proc/self/fd/0");
}

/* The program named by an operand (a script file, or stdin by name). */
static enum shell_role operand_program(struct shell_cmd *c, const char *v, size_t n)
{
	c->prog = v && names_stdin(v, n) ? SHELL_PROG_STDIN : SHELL_PROG_FILE;
	c->phase = PH_ARGS;
	return SHELL_ROLE_FILE;
}

/* NAME=VALUE as env(1) and sudo read it, quoted or not. */
static bool looks_assign(const char *v, size_t n)
{
	size_t i = 0;

	while (i < n && (v[i] == '_' || (v[i] >= 'a' && v[i] <= 'z') || (v[i] >= 'A' && v[i] <= 'Z') ||
			 (i > 0 && v[i] >= '0' && v[i] <= '9')))
		i++;
	return i > 0 && i < n && v[i] == '=';
}

static enum shell_role command_word(struct shell_cmd *c, const char *v, size_t n);

static enum shell_role wrapper_word(struct shell_cmd *c, const char *v, size_t n, bool assign)
{
	const struct shell_wrapper *w = c->wrapper;

	if (c->skip) {
		c->skip--;
		return SHELL_ROLE_WRAPPER;
	}
	if (v && !c->end_opts && n > 1 && v[0] == '-') {
		if (is(v, n, "--")) {
			c->end_opts = true;
		} else if (v[1] == '-') {
			if (!has_eq(v, n) && in_list(v, n, w->long_args))
				c->skip = 1;
			if ((w->flags & SHELL_WRAP_SUDO) && (is(v, n, "--shell") || is(v, n, "--login")))
				c->sudo_shell = true;
		} else {
			for (size_t i = 1; i < n; i++) {
				char o = v[i];

				if (strchr(w->arg_opts, o)) {
					if (i + 1 == n)
						c->skip = 1;
					break;
				}
				if ((w->flags & SHELL_WRAP_LOOKUP) && (o == 'v' || o == 'V'))
					c->kind = SHELL_KIND_LOOKUP;
				if ((w->flags & SHELL_WRAP_SUDO) && (o == 's' || o == 'i'))
					c->sudo_shell = true;
				/* sudo -e edits files, -l -v -k -K -V list,
				 * validate or forget: no command runs. */
				if ((w->flags & SHELL_WRAP_SUDO) && strchr("elvkKV", o))
					c->kind = SHELL_KIND_LOOKUP;
			}
		}
		return SHELL_ROLE_WRAPPER;
	}
	if ((assign || (v && looks_assign(v, n))) && (w->flags & SHELL_WRAP_ASSIGN))
		return SHELL_ROLE_ASSIGN;
	if (c->operands < w->operands) {
		c->operands++;
		return SHELL_ROLE_WRAPPER;
	}
	if (c->kind == SHELL_KIND_LOOKUP) {
		c->phase = PH_ARGS;
		return SHELL_ROLE_DATA;
	}
	/* The command it runs: classified afresh (sudo env X=1 nice sh). */
	c->wrapper = NULL;
	c->phase = PH_CMD;
	c->end_opts = false;
	c->operands = 0;
	c->sudo_shell = false;
	return command_word(c, v, n);
}

static enum shell_role command_word(struct shell_cmd *c, const char *v, size_t n)
{
	const struct shell_wrapper *w;
	const char *b;
	size_t bn;

	if (!v) {
		c->kind = SHELL_KIND_OTHER;
		c->phase = PH_ARGS;
		return SHELL_ROLE_COMMAND;
	}
	b = shell_base(v, n, &bn);
	if ((w = shell_name_wrapper(b, bn)) != NULL) {
		c->wrapper = w;
		c->phase = (w->flags & SHELL_WRAP_APPLET) ? PH_CMD : PH_WRAP;
		return SHELL_ROLE_WRAPPER;
	}
	c->phase = PH_ARGS;
	if (shell_name_downloads(b, bn)) {
		c->kind = SHELL_KIND_DOWNLOADER;
	} else if (is(b, bn, "eval")) {
		c->kind = SHELL_KIND_EVAL;
		c->phase = PH_EVAL;
	} else if (is(b, bn, "source") || is(b, bn, ".")) {
		c->kind = SHELL_KIND_SOURCE;
		c->phase = PH_SOURCE;
	} else if ((c->family = (uint8_t)shell_name_family(b, bn)) != SHELL_FAM_NONE) {
		c->kind = SHELL_KIND_INTERP;
		c->phase = PH_INTERP;
	} else {
		c->kind = SHELL_KIND_OTHER;
	}
	return SHELL_ROLE_COMMAND;
}

/* ---- interpreters' options ---- */

/* A shell: -c (its first operand is the text), -s (stdin), -o/-O/+o
 * take a value, --rcfile/--init-file too; "-" and "--" end the options. */
static enum shell_role shell_opt(struct shell_cmd *c, const char *v, size_t n)
{
	if (is(v, n, "--")) {
		c->end_opts = true;
		return SHELL_ROLE_OPTION;
	}
	if (v[0] == '-' && v[1] == '-') {
		if (is(v, n, "--rcfile") || is(v, n, "--init-file"))
			c->skip = 1;
		return SHELL_ROLE_OPTION;
	}
	for (size_t i = 1; i < n; i++) {
		if (v[i] == 'c' && v[0] == '-')
			c->shell_c = true;
		else if (v[i] == 's' && v[0] == '-')
			c->shell_s = true;
		else if (v[i] == 'o' || v[i] == 'O')
			c->skip++;
	}
	return SHELL_ROLE_OPTION;
}

static enum shell_role shell_operand(struct shell_cmd *c, const char *v, size_t n)
{
	c->phase = PH_ARGS;
	if (c->shell_c) {
		c->prog = SHELL_PROG_TEXT;
		return SHELL_ROLE_TEXT;
	}
	if (c->shell_s) {
		c->prog = SHELL_PROG_STDIN;
		return SHELL_ROLE_DATA;
	}
	return operand_program(c, v, n);
}

/* The option letters of the other interpreters: which take program
 * text, a program file, a module, or some other value.  A value is the
 * rest of the word when there is one ("-cprint(1)", "-I/dir"), else the
 * next word; the letters of OPTIONAL take only the rest ("-i.bak"). */
struct interp_opts {
	const char *text;     /* -c -e -p ... */
	const char *file;     /* php -f */
	const char *module;   /* python -m */
	const char *value;    /* -W -X -I -r ... */
	const char *optional; /* perl -i.bak -MJSON: the rest of the word only */
	const char *digits;   /* perl -l0 -0777: digits, then more letters */
	bool attached;        /* a value may be the rest of the word (not node) */
	const char *const *long_text;
	const char *const *long_file;
	const char *const *long_value;
};

static const char *const node_long_text[] = { "--eval", "--print", NULL };
static const char *const node_long_value[] = {
	"--require", "--import", "--loader", "--experimental-loader", "--conditions",
	"--input-type", "--title", "--env-file", "--inspect-port", NULL,
};
static const char *const python_long_value[] = { "--check-hash-based-pycs", NULL };
static const char *const php_long_text[] = {
	"--run", "--process-begin", "--process-code", "--process-end", NULL,
};
static const char *const php_long_file[] = { "--file", NULL };
static const char *const php_long_value[] = {
	"--php-ini", "--define", "--zend-extension", "--docroot", "--server",
	"--process-file", NULL,
};
static const char *const none_long[] = { NULL };

static const struct interp_opts *interp_opts_of(enum shell_family f)
{
	static const struct interp_opts python = {
		"c", "", "m", "WX", "", "", true, none_long, none_long, python_long_value,
	};
	static const struct interp_opts node = {
		"ep", "", "", "rC", "", "", false, node_long_text, none_long, node_long_value,
	};
	static const struct interp_opts perl = {
		"eE", "", "", "I", "MmxiCdDF", "l0", true, none_long, none_long, none_long,
	};
	static const struct interp_opts ruby = {
		"e", "", "", "IrCE", "xiKTWF", "0", true, none_long, none_long, none_long,
	};
	/* -R/-B/-E run code for each line of stdin (stdin is data); -F a file. */
	static const struct interp_opts php = {
		"rBRE", "fF", "", "cdzt", "", "", true, php_long_text, php_long_file, php_long_value,
	};
	static const struct interp_opts lua = {
		"e", "", "", "l", "", "", true, none_long, none_long, none_long,
	};

	switch (f) {
	case SHELL_FAM_PYTHON: return &python;
	case SHELL_FAM_NODE: return &node;
	case SHELL_FAM_PERL: return &perl;
	case SHELL_FAM_RUBY: return &ruby;
	case SHELL_FAM_PHP: return &php;
	case SHELL_FAM_LUA: return &lua;
	default: return NULL;
	}
}

/* Program text or file or module, from the rest of an option word or
 * from the next word. */
static enum shell_role interp_names(struct shell_cmd *c, int what, bool attached)
{
	if (!attached) {
		c->next = (uint8_t)what;
		return SHELL_ROLE_OPTION;
	}
	c->phase = PH_ARGS;
	switch (what) {
	case NEXT_TEXT:
		c->prog = SHELL_PROG_TEXT;
		return SHELL_ROLE_TEXT;
	case NEXT_FILE:
		c->prog = SHELL_PROG_FILE;
		return SHELL_ROLE_FILE;
	default:
		c->prog = SHELL_PROG_MODULE;
		return SHELL_ROLE_OPTION;
	}
}

static enum shell_role interp_opt(struct shell_cmd *c, const struct interp_opts *o, const char *v,
				  size_t n)
{
	if (v[1] == '-') {
		bool eq = has_eq(v, n);
		size_t kn = eq ? (size_t)((const char *)memchr(v, '=', n) - v) : n;

		if (in_list(v, kn, o->long_text))
			return interp_names(c, NEXT_TEXT, eq);
		if (in_list(v, kn, o->long_file))
			return interp_names(c, NEXT_FILE, eq);
		if (!eq && in_list(v, n, o->long_value))
			c->skip = 1;
		return SHELL_ROLE_OPTION;
	}
	for (size_t i = 1; i < n; i++) {
		bool rest = o->attached && i + 1 < n;

		if (strchr(o->digits, v[i])) {
			while (i + 1 < n && v[i + 1] >= '0' && v[i + 1] <= '9')
				i++;
			continue;
		}
		if (strchr(o->text, v[i]))
			return interp_names(c, NEXT_TEXT, rest);
		if (strchr(o->file, v[i]))
			return interp_names(c, NEXT_FILE, rest);
		if (strchr(o->module, v[i]))
			return interp_names(c, NEXT_MODULE, rest);
		if (strchr(o->value, v[i])) {
			if (!rest)
				c->skip = 1;
			if (o->attached)
				break;
		}
		if (strchr(o->optional, v[i]))
			break;
	}
	return SHELL_ROLE_OPTION;
}

static enum shell_role interp_word(struct shell_cmd *c, const char *v, size_t n)
{
	const struct interp_opts *o = interp_opts_of((enum shell_family)c->family);

	if (c->skip) {
		c->skip--;
		return SHELL_ROLE_OPTION;
	}
	if (c->next) {
		int what = c->next;

		c->next = NEXT_NONE;
		return interp_names(c, what, true);
	}
	if (v && !c->end_opts && is(v, n, "-")) {
		if (o == NULL) { /* a shell's "-" is "--" */
			c->end_opts = true;
			return SHELL_ROLE_OPTION;
		}
		c->prog = SHELL_PROG_STDIN;
		c->phase = PH_ARGS;
		return SHELL_ROLE_DATA;
	}
	if (v && !c->end_opts && n > 1 && (v[0] == '-' || (v[0] == '+' && o == NULL))) {
		if (o == NULL)
			return shell_opt(c, v, n);
		if (is(v, n, "--")) {
			c->end_opts = true;
			return SHELL_ROLE_OPTION;
		}
		return interp_opt(c, o, v, n);
	}
	if (o == NULL)
		return shell_operand(c, v, n);
	return operand_program(c, v, n);
}

enum shell_role shell_cmd_word(struct shell_cmd *c, const char *value, size_t len, bool assign)
{
	switch (c->phase) {
	case PH_CMD:
		if (assign)
			return SHELL_ROLE_ASSIGN;
		return command_word(c, value, len);
	case PH_WRAP:
		return wrapper_word(c, value, len, assign);
	case PH_INTERP:
		return interp_word(c, value, len);
	case PH_EVAL:
		c->prog = SHELL_PROG_TEXT;
		return SHELL_ROLE_TEXT;
	case PH_SOURCE:
		return operand_program(c, value, len);
	default:
		return SHELL_ROLE_DATA;
	}
}

void shell_cmd_end(struct shell_cmd *c)
{
	if (c->phase == PH_WRAP && c->sudo_shell && c->kind == SHELL_KIND_NONE) {
		/* sudo -s, sudo -i: the user's shell, reading stdin. */
		c->kind = SHELL_KIND_INTERP;
		c->family = SHELL_FAM_SHELL;
		c->prog = SHELL_PROG_UNSET;
	} else if (c->phase == PH_WRAP && c->kind == SHELL_KIND_NONE) {
		c->kind = SHELL_KIND_OTHER; /* env, xargs alone: print */
	} else if (c->kind == SHELL_KIND_INTERP && c->next == NEXT_TEXT) {
		c->prog = SHELL_PROG_UNSET; /* python -c from xargs' input */
	}
	c->phase = PH_ARGS;
}

/* "source" with no file reads stdin in fish (bash refuses it): taken as
 * reading its program. */
bool shell_cmd_reads_program(const struct shell_cmd *c)
{
	if (c->kind != SHELL_KIND_INTERP && c->kind != SHELL_KIND_SOURCE)
		return false;
	return c->prog == SHELL_PROG_UNSET || c->prog == SHELL_PROG_STDIN;
}

const char *shell_argv_command_string(const char *const *argv, size_t argc, bool applet)
{
	struct shell_cmd c;
	size_t i = applet ? 2 : 1;

	shell_cmd_init(&c);
	c.kind = SHELL_KIND_INTERP;
	c.family = SHELL_FAM_SHELL;
	c.phase = PH_INTERP;
	for (; argv && i < argc && c.phase == PH_INTERP; i++) {
		const char *a = argv[i] ? argv[i] : "";

		if (interp_word(&c, a, strlen(a)) == SHELL_ROLE_TEXT)
			return a;
	}
	return NULL;
}
