/* A parser of the shell language (POSIX sh and bash's common extensions)
 * that answers one question: does the text download code and run it?
 *
 * It reads lists (; & && || newlines), pipelines, subshells, { } groups,
 * if/while/until/for/select/case, [[ ]], (( )), function definitions,
 * redirections, here-documents and here-strings, assignments, quoting
 * (single, double, $'...', $"...", backslashes), $(...), `...`, ${...},
 * $((...)), <(...) and >(...), comments.  Data stays data: the arguments
 * of a command are never taken for commands, only the substitutions in
 * them (which run).  What runs code is then judged by data flow:
 *
 *  - every command says whether it "downloads" (its output carries what a
 *    downloader fetched: curl itself, sudo curl, { curl x; }, echo
 *    "$(curl x)", sh -c 'curl x');
 *  - a pipeline stage's stdin carries a download when an earlier stage
 *    downloads (or the stage's own stdin was redirected from one:
 *    < <(curl x), <<< "$(curl x)", a here-document with $(curl x));
 *  - a match is an interpreter that reads its program from such a stdin
 *    (shell_cmd_reads_program), or any interpreter, eval or source whose
 *    program text or file is a download (sh -c "$(curl x)", eval
 *    "`curl x`", source <(curl x), python3 <(curl x));
 *  - the program text of a shell (sh -c TEXT, eval TEXT, a here-string
 *    or here-document a shell reads as its program) is parsed in turn,
 *    with the stdin it inherits;
 *  - a variable assigned a download (x=$(curl u), for x in $(curl u),
 *    read x from a download) carries it where it is expanded ("$x"),
 *    in the order of the text, whatever the scope.
 *
 * Fixed-size state only (struct parser, on the caller's stack, and the
 * caller's arena), recursion bounded by SHELL_MAX_DEPTH.  The parse stops
 * at the first match.  A nested text that cannot be parsed is judged by
 * its words (shell_scan_words); the top-level text is the caller's to
 * judge (SHELL_UNPARSED). */
#include <string.h>

#include "rules/shell.h"

enum { FEED_NONE = 0, FEED_INTERP, FEED_SHELL };

struct heredoc {
	char delim[SHELL_DELIM_MAX];
	uint8_t delim_len;
	bool quoted;     /* any quoting in the delimiter: the body is not expanded */
	bool strip_tabs; /* <<- */
	uint8_t feeds;   /* what reads it as stdin: FEED_* */
};

struct parser {
	const char *s; /* the text being read */
	size_t n, i;   /* its length, the cursor */
	char *arena;   /* word values and nested texts, used as a stack */
	size_t arena_size, top;
	unsigned depth, texts;
	bool match, failed;
	bool bounds;       /* the failure is a bound, not the text's syntax */
	const char *why;
	size_t why_at;
	const char *text0; /* the top-level text, and the cursor in it when a */
	size_t pos0;       /* nested text was entered (for why_at) */
	bool stage_taint;  /* the stdin of the command being read carries a download */
	bool out_taint;    /* what the command being read writes carries one (>(...)) */
	struct heredoc hd[SHELL_HEREDOCS];
	unsigned n_hd, hd_base; /* pending here-documents of this text: [hd_base, n_hd) */
	/* Variables that hold a download; when more than SHELL_VARS do (or
	 * a name is too long), every variable is taken to. */
	char var[SHELL_VARS][SHELL_VAR_NAME_MAX];
	uint8_t var_len[SHELL_VARS];
	unsigned n_var;
	bool var_all;
};

/* A word as read: its raw span in the text, its value after quote
 * removal in the arena (expansions kept as written). */
struct word {
	size_t start, end;
	size_t off, len;
	size_t assign_end; /* just after the '=' of NAME=, when assign */
	bool overflow;     /* the value did not fit in the arena */
	bool literal;      /* no expansion: the value is what the command gets */
	bool quoted;
	bool dl;           /* a substitution in it downloads */
	bool assign;       /* NAME= or NAME+= with everything before '=' unquoted */
	bool name_ok;      /* so far an unquoted NAME */
};

enum tok {
	T_EOF, T_NEWLINE, T_SEMI, T_DSEMI, T_AMP, T_AND, T_OR, T_PIPE,
	T_LPAREN, T_RPAREN, T_REDIR, T_WORD,
};

enum { STOP_EOF = 1, STOP_RPAREN = 2, STOP_DSEMI = 4 };

static bool parse_list(struct parser *p, unsigned stops, const char *const *kws);
static bool parse_command(struct parser *p);
static bool parse_text(struct parser *p, const char *text, size_t len, bool taint, bool judge);
static bool lex_word(struct parser *p, struct word *w);
static void lex_dquote(struct parser *p, struct word *w, bool term);
static void lex_dollar(struct parser *p, struct word *w, bool in_dq);
static void lex_backquote(struct parser *p, struct word *w, bool in_dq);

/* ---- state ---- */

static bool stop(const struct parser *p)
{
	return p->match || p->failed;
}

static void fail(struct parser *p, const char *why)
{
	if (p->failed)
		return;
	p->failed = true;
	p->why = why;
	p->why_at = p->s == p->text0 ? p->i : p->pos0;
}

static bool enter(struct parser *p)
{
	if (++p->depth > SHELL_MAX_DEPTH && !p->failed) {
		fail(p, "nested too deep");
		p->bounds = true;
	}
	return !stop(p);
}

static void leave(struct parser *p)
{
	p->depth--;
}

static int cur(const struct parser *p)
{
	return p->i < p->n ? (unsigned char)p->s[p->i] : -1;
}

static int ahead(const struct parser *p, size_t k)
{
	return p->i + k < p->n ? (unsigned char)p->s[p->i + k] : -1;
}

static bool is_meta(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' ||
	       c == '(' || c == ')' || c == '<' || c == '>';
}

static bool is_name_start(int c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_name(int c)
{
	return is_name_start(c) || (c >= '0' && c <= '9');
}

static bool is_digit(int c)
{
	return c >= '0' && c <= '9';
}

/* A text that could not be parsed, judged by its words. */
static bool judge_words(struct parser *p, const char *text, size_t len)
{
	bool downloads, interprets;

	shell_scan_words(text, len, &downloads, &interprets);
	if (downloads && interprets)
		p->match = true;
	return downloads;
}

/* ---- variables that hold a download ---- */

static int var_find(const struct parser *p, const char *name, size_t n)
{
	for (unsigned k = 0; k < p->n_var; k++)
		if (p->var_len[k] == n && memcmp(p->var[k], name, n) == 0)
			return (int)k;
	return -1;
}

static bool var_tainted(const struct parser *p, const char *name, size_t n)
{
	return p->var_all || var_find(p, name, n) >= 0;
}

/* NAME (N bytes) now holds a download (TAINT), or a value of its own. */
static void var_set(struct parser *p, const char *name, size_t n, bool taint)
{
	int k = var_find(p, name, n);

	if (!taint) {
		if (k >= 0) {
			p->n_var--;
			memcpy(p->var[k], p->var[p->n_var], p->var_len[p->n_var]);
			p->var_len[k] = p->var_len[p->n_var];
		}
		return;
	}
	if (k >= 0)
		return;
	if (p->n_var >= SHELL_VARS || n >= SHELL_VAR_NAME_MAX || n == 0) {
		p->var_all = true;
		return;
	}
	memcpy(p->var[p->n_var], name, n);
	p->var_len[p->n_var++] = (uint8_t)n;
}

/* ---- word values in the arena ---- */

static void put(struct parser *p, struct word *w, char c)
{
	if (w->off + w->len < p->arena_size)
		p->arena[w->off + w->len++] = c;
	else
		w->overflow = true;
}

static void put_raw(struct parser *p, struct word *w, size_t from, size_t to)
{
	for (size_t k = from; k < to && !w->overflow; k++)
		put(p, w, p->s[k]);
}

/* The arena above the word's value so far is free for what a
 * substitution inside it reads; the returned mark gives it back. */
static size_t hold(struct parser *p, const struct word *w)
{
	size_t mark = p->top;

	p->top = w->off + w->len;
	return mark;
}

/* ---- tokens ---- */

/* Blanks, line continuations and a comment (a '#' where a token would
 * start); not newlines. */
static void skip_blanks(struct parser *p)
{
	for (;;) {
		int c = cur(p);

		if (c == ' ' || c == '\t') {
			p->i++;
		} else if (c == '\\' && ahead(p, 1) == '\n') {
			p->i += 2;
		} else if (c == '#') {
			while (p->i < p->n && p->s[p->i] != '\n')
				p->i++;
		} else {
			return;
		}
	}
}

/* An io number ("2>") or bash's {name}> before a redirection operator:
 * its length, 0 when there is none. */
static size_t redir_prefix(const struct parser *p)
{
	size_t k = 0;

	while (is_digit(ahead(p, k)))
		k++;
	if (k == 0 && ahead(p, 0) == '{') {
		k = 1;
		if (!is_name_start(ahead(p, 1)))
			return 0;
		while (is_name(ahead(p, k)))
			k++;
		if (ahead(p, k) != '}')
			return 0;
		k++;
	}
	return (ahead(p, k) == '<' || ahead(p, k) == '>') && ahead(p, k + 1) != '(' ? k : 0;
}

static enum tok peek(struct parser *p, size_t *len)
{
	int c, c1;

	skip_blanks(p);
	c = cur(p);
	c1 = ahead(p, 1);
	*len = 1;
	switch (c) {
	case -1:
		return T_EOF;
	case '\n':
		return T_NEWLINE;
	case ';':
		if (c1 == ';') {
			*len = ahead(p, 2) == '&' ? 3 : 2;
			return T_DSEMI;
		}
		if (c1 == '&') {
			*len = 2;
			return T_DSEMI;
		}
		return T_SEMI;
	case '&':
		if (c1 == '&') {
			*len = 2;
			return T_AND;
		}
		return c1 == '>' ? T_REDIR : T_AMP;
	case '|':
		if (c1 == '|' || c1 == '&')
			*len = 2;
		return c1 == '|' ? T_OR : T_PIPE;
	case '(':
		return T_LPAREN;
	case ')':
		return T_RPAREN;
	case '<':
	case '>':
		return c1 == '(' ? T_WORD : T_REDIR;
	default:
		return redir_prefix(p) ? T_REDIR : T_WORD;
	}
}

/* The reserved word K at the cursor (unquoted, followed by a
 * delimiter).  Only meaningful where a command may start. */
static bool kw(const struct parser *p, const char *k)
{
	size_t n = strlen(k);

	return p->i + n <= p->n && memcmp(p->s + p->i, k, n) == 0 &&
	       (p->i + n == p->n || is_meta((unsigned char)p->s[p->i + n]));
}

static bool kw_any(const struct parser *p, const char *const *kws)
{
	for (; kws && *kws; kws++)
		if (kw(p, *kws))
			return true;
	return false;
}

static bool expect_kw(struct parser *p, const char *k)
{
	size_t len;

	if (stop(p))
		return false;
	if (peek(p, &len) == T_WORD && kw(p, k)) {
		p->i += strlen(k);
		return true;
	}
	fail(p, "a compound command is not closed");
	return false;
}

static bool expect_char(struct parser *p, int c, const char *why)
{
	if (stop(p))
		return false;
	skip_blanks(p);
	if (cur(p) == c) {
		p->i++;
		return true;
	}
	fail(p, why);
	return false;
}

/* ---- here-documents ---- */

static bool scan_expansions(struct parser *p, size_t from, size_t to)
{
	struct word w;
	size_t n = p->n;

	memset(&w, 0, sizeof(w));
	w.off = p->top;
	p->i = from;
	p->n = to;
	lex_dquote(p, &w, false);
	p->n = n;
	return w.dl;
}

/* After a newline: the bodies of the here-documents pending on the line
 * just read, in order.  An unquoted body's substitutions run; a body a
 * shell reads as its program is parsed; one an interpreter reads must
 * not be a download. */
static void read_heredocs(struct parser *p)
{
	unsigned from = p->hd_base, to = p->n_hd;

	/* A newline inside a body's substitution has nothing pending. */
	p->hd_base = to;
	for (unsigned k = from; k < to && !stop(p); k++) {
		const struct heredoc *h = &p->hd[k];
		size_t body = p->i, pos = p->i, end = p->n, next = p->n;
		const char *text = p->s;
		bool d = false;

		while (pos < p->n) {
			const char *nl = memchr(p->s + pos, '\n', p->n - pos);
			size_t le = nl ? (size_t)(nl - p->s) : p->n, cs = pos;

			if (h->strip_tabs)
				while (cs < le && p->s[cs] == '\t')
					cs++;
			if (le - cs == h->delim_len && memcmp(p->s + cs, h->delim, h->delim_len) == 0) {
				end = pos;
				next = le < p->n ? le + 1 : p->n;
				break;
			}
			pos = le + 1;
		}
		if (!h->quoted)
			d = scan_expansions(p, body, end);
		p->i = next;
		if (d && h->feeds != FEED_NONE)
			p->match = true;
		else if (h->feeds == FEED_SHELL)
			parse_text(p, text + body, end - body, false, true);
	}
	p->hd_base = from;
	p->n_hd = from;
}

static void newline(struct parser *p)
{
	p->i++;
	read_heredocs(p);
}

static void skip_linebreaks(struct parser *p)
{
	size_t len;

	while (!stop(p) && peek(p, &len) == T_NEWLINE)
		newline(p);
}

/* ---- words ---- */

static void lex_squote(struct parser *p, struct word *w)
{
	const char *q = memchr(p->s + p->i + 1, '\'', p->n - p->i - 1);

	if (!q) {
		fail(p, "unterminated single quote");
		return;
	}
	w->quoted = true;
	w->name_ok = false;
	put_raw(p, w, p->i + 1, (size_t)(q - p->s));
	p->i = (size_t)(q - p->s) + 1;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static void put_utf8(struct parser *p, struct word *w, unsigned long u)
{
	if (u < 0x80) {
		put(p, w, (char)u);
	} else if (u < 0x800) {
		put(p, w, (char)(0xc0 | (u >> 6)));
		put(p, w, (char)(0x80 | (u & 0x3f)));
	} else if (u < 0x10000) {
		put(p, w, (char)(0xe0 | (u >> 12)));
		put(p, w, (char)(0x80 | ((u >> 6) & 0x3f)));
		put(p, w, (char)(0x80 | (u & 0x3f)));
	} else {
		put(p, w, (char)(0xf0 | ((u >> 18) & 0x07)));
		put(p, w, (char)(0x80 | ((u >> 12) & 0x3f)));
		put(p, w, (char)(0x80 | ((u >> 6) & 0x3f)));
		put(p, w, (char)(0x80 | (u & 0x3f)));
	}
}

/* $'...' after the "$'": bash's escapes, so that $'\x63url' is curl. */
static void lex_ansi(struct parser *p, struct word *w)
{
	static const char from[] = "ntrabeEfv\\'\"?";
	static const char to[] = "\n\t\r\a\b\033\033\f\v\\'\"?";

	w->quoted = true;
	w->name_ok = false;
	for (;;) {
		int c = cur(p), c1;
		const char *e;

		if (c < 0) {
			fail(p, "unterminated $'...'");
			return;
		}
		p->i++;
		if (c == '\'')
			return;
		if (c != '\\') {
			put(p, w, (char)c);
			continue;
		}
		c1 = cur(p);
		if (c1 < 0)
			continue;
		p->i++;
		if ((e = strchr(from, c1)) != NULL && c1) {
			put(p, w, to[e - from]);
		} else if (c1 == 'x' || c1 == 'u' || c1 == 'U') {
			unsigned long v = 0;
			int max = c1 == 'x' ? 2 : c1 == 'u' ? 4 : 8, k = 0;

			while (k < max && hexval(cur(p)) >= 0) {
				v = v * 16 + (unsigned long)hexval(cur(p));
				p->i++;
				k++;
			}
			if (!k) {
				put(p, w, '\\');
				put(p, w, (char)c1);
			} else if (c1 == 'x') {
				put(p, w, (char)v);
			} else {
				put_utf8(p, w, v > 0x10ffff ? 0xfffd : v);
			}
		} else if (c1 >= '0' && c1 <= '7') {
			unsigned v = (unsigned)(c1 - '0');

			for (int k = 1; k < 3 && cur(p) >= '0' && cur(p) <= '7'; k++, p->i++)
				v = v * 8 + (unsigned)(cur(p) - '0');
			put(p, w, (char)v);
		} else if (c1 == 'c' && cur(p) >= 0) {
			put(p, w, (char)(cur(p) & 0x1f));
			p->i++;
		} else {
			put(p, w, '\\');
			put(p, w, (char)c1);
		}
	}
}

/* Inside "...", or a whole unquoted here-document body (TERM false):
 * backslash escapes only $ ` \ newline (and " inside quotes). */
static void lex_dquote(struct parser *p, struct word *w, bool term)
{
	if (term) {
		w->quoted = true;
		w->name_ok = false;
	}
	while (!stop(p)) {
		int c = cur(p);

		if (c < 0) {
			if (term)
				fail(p, "unterminated double quote");
			return;
		}
		if (term && c == '"') {
			p->i++;
			return;
		}
		if (c == '\\') {
			int c1 = ahead(p, 1);

			if (c1 == '$' || c1 == '`' || c1 == '\\' || c1 == '\n' || (term && c1 == '"')) {
				if (c1 != '\n')
					put(p, w, (char)c1);
				p->i += 2;
			} else {
				put(p, w, '\\');
				p->i++;
			}
		} else if (c == '$') {
			lex_dollar(p, w, true);
		} else if (c == '`') {
			lex_backquote(p, w, true);
		} else {
			put(p, w, (char)c);
			p->i++;
		}
	}
}

/* $( list ) */
static void lex_cmdsubst(struct parser *p, struct word *w, size_t start)
{
	size_t mark = hold(p, w);
	bool d;

	p->i = start + 2;
	d = parse_list(p, STOP_RPAREN, NULL);
	p->top = mark;
	expect_char(p, ')', "unbalanced $(");
	w->dl |= d;
	w->literal = false;
	put_raw(p, w, start, p->i);
}

/* $(( arithmetic )) or (( arithmetic )) from START, PREFIX bytes of
 * opening.  Substitutions inside run.  False when it is not arithmetic
 * after all ("$((cd x; make) | tee log)" is a subshell in $( )), with
 * the cursor where it was.  dash reads "((curl u | sh))" and
 * "$((curl u | sh))" as subshells, bash as arithmetic: the inside is
 * also read as commands, and taken as clean when it does not parse as
 * such. */
static bool lex_arith(struct parser *p, struct word *w, size_t start, size_t prefix)
{
	size_t keep = w->len;
	bool keep_over = w->overflow;
	int depth = 0;

	p->i = start + prefix;
	while (!stop(p)) {
		int c = cur(p);

		if (c < 0) {
			fail(p, "unbalanced ((");
			return true;
		}
		if (c == '(') {
			depth++;
			p->i++;
		} else if (c == ')') {
			if (depth > 0) {
				depth--;
				p->i++;
			} else if (ahead(p, 1) == ')') {
				p->i += 2;
				break;
			} else {
				p->i = start;
				w->len = keep;
				w->overflow = keep_over;
				return false;
			}
		} else if (c == '$') {
			lex_dollar(p, w, true);
		} else if (c == '`') {
			lex_backquote(p, w, true);
		} else if (c == '"') {
			p->i++;
			lex_dquote(p, w, true);
		} else if (c == '\'') {
			lex_squote(p, w);
		} else {
			p->i++;
		}
	}
	if (!stop(p)) {
		size_t mark = hold(p, w);

		w->dl |= parse_text(p, p->s + start + prefix, p->i - 2 - start - prefix,
				    p->stage_taint, false);
		p->top = mark;
	}
	w->len = keep;
	w->overflow = keep_over;
	w->literal = false;
	put_raw(p, w, start, p->i);
	return true;
}

/* ${ parameter expansion }: words inside it (defaults, patterns) expand. */
static void lex_param(struct parser *p, struct word *w, bool in_dq, size_t start)
{
	size_t keep = w->len;
	bool keep_over = w->overflow;
	int depth = 0;
	size_t name;

	p->i = start + 2;
	if (cur(p) == '!' || cur(p) == '#')
		p->i++; /* ${!name} ${#name} */
	name = p->i;
	while (is_name(cur(p)))
		p->i++;
	if (p->i > name)
		w->dl |= var_tainted(p, p->s + name, p->i - name);
	while (!stop(p)) {
		int c = cur(p);

		if (c < 0) {
			fail(p, "unbalanced ${");
			return;
		}
		if (c == '}' && depth == 0) {
			p->i++;
			break;
		}
		if (c == '{') {
			depth++;
			p->i++;
		} else if (c == '}') {
			depth--;
			p->i++;
		} else if (c == '\\') {
			p->i += ahead(p, 1) < 0 ? 1 : 2;
		} else if (c == '\'' && !in_dq) {
			lex_squote(p, w);
		} else if (c == '"') {
			p->i++;
			lex_dquote(p, w, true);
		} else if (c == '$') {
			lex_dollar(p, w, in_dq);
		} else if (c == '`') {
			lex_backquote(p, w, in_dq);
		} else {
			p->i++;
		}
	}
	w->len = keep;
	w->overflow = keep_over;
	w->literal = false;
	put_raw(p, w, start, p->i);
}

static void lex_dollar(struct parser *p, struct word *w, bool in_dq)
{
	size_t start = p->i;
	int c1 = ahead(p, 1);

	if (!enter(p)) {
		leave(p);
		return;
	}
	if (c1 == '\'' && !in_dq) {
		p->i += 2;
		lex_ansi(p, w);
	} else if (c1 == '"' && !in_dq) {
		p->i += 2;
		lex_dquote(p, w, true);
	} else if (c1 == '(') {
		if (ahead(p, 2) != '(' || !lex_arith(p, w, start, 3))
			lex_cmdsubst(p, w, start);
	} else if (c1 == '{') {
		lex_param(p, w, in_dq, start);
	} else if (c1 == '[') {
		/* $[ arithmetic ], bash's old form */
		const char *q = memchr(p->s + p->i, ']', p->n - p->i);

		p->i = q ? (size_t)(q - p->s) + 1 : p->n;
		w->literal = false;
		put_raw(p, w, start, p->i);
	} else if (is_name_start(c1)) {
		p->i++;
		while (is_name(cur(p)))
			p->i++;
		w->dl |= var_tainted(p, p->s + start + 1, p->i - start - 1);
		w->literal = false;
		put_raw(p, w, start, p->i);
	} else if (c1 >= 0 && (is_digit(c1) || strchr("@*#?$!-", c1))) {
		p->i += 2;
		w->literal = false;
		put_raw(p, w, start, p->i);
	} else {
		put(p, w, '$');
		p->i++;
	}
	leave(p);
}

/* `...`: the text between the backquotes, unescaped (\\ \` \$, and \"
 * inside double quotes), parsed as a text of its own. */
static void lex_backquote(struct parser *p, struct word *w, bool in_dq)
{
	size_t start = p->i, mark = hold(p, w);
	struct word t;

	memset(&t, 0, sizeof(t));
	t.off = p->top;
	p->i++;
	for (;;) {
		int c = cur(p);

		if (c < 0) {
			fail(p, "unterminated backquote");
			p->top = mark;
			return;
		}
		p->i++;
		if (c == '`')
			break;
		if (c == '\\') {
			int c1 = cur(p);

			if (c1 == '\\' || c1 == '`' || c1 == '$' || (in_dq && c1 == '"')) {
				put(p, &t, (char)c1);
				p->i++;
				continue;
			}
		}
		put(p, &t, (char)c);
	}
	if (t.overflow) {
		w->dl |= judge_words(p, p->s + start, p->i - start);
	} else {
		p->top = t.off + t.len;
		w->dl |= parse_text(p, p->arena + t.off, t.len, p->stage_taint, true);
	}
	p->top = mark;
	w->literal = false;
	put_raw(p, w, start, p->i);
}

/* <( list ) reads what the list writes; >( list ) reads what the command
 * writes there. */
static void lex_procsub(struct parser *p, struct word *w)
{
	size_t start = p->i, mark;
	bool taint = p->stage_taint, d;

	if (!enter(p)) {
		leave(p);
		return;
	}
	mark = hold(p, w);
	if (p->s[p->i] == '>')
		p->stage_taint = p->out_taint;
	p->i += 2;
	d = parse_list(p, STOP_RPAREN, NULL);
	p->stage_taint = taint;
	p->top = mark;
	expect_char(p, ')', "unbalanced process substitution");
	leave(p);
	w->dl |= d;
	w->literal = false;
	put_raw(p, w, start, p->i);
}

/* NAME=( words ) */
static void lex_array(struct parser *p, struct word *w)
{
	size_t mark = hold(p, w);

	if (!enter(p)) {
		leave(p);
		return;
	}
	p->i++;
	while (!stop(p)) {
		struct word e;
		size_t len;
		enum tok t = peek(p, &len);

		if (t == T_NEWLINE) {
			p->i++;
		} else if (t == T_RPAREN) {
			p->i++;
			break;
		} else if (t == T_WORD) {
			lex_word(p, &e);
			w->dl |= e.dl;
		} else {
			fail(p, "unbalanced array assignment");
		}
	}
	p->top = mark;
	leave(p);
	w->literal = false;
}

/* extglob's @( ) !( ) +( ) *( ) ?( ) inside a word: a pattern. */
static void lex_group(struct parser *p, struct word *w)
{
	int depth = 0;

	while (!stop(p)) {
		int c = cur(p);

		if (c < 0) {
			fail(p, "unbalanced pattern group");
			return;
		}
		if (c == '\\' && ahead(p, 1) >= 0) {
			put(p, w, p->s[p->i + 1]);
			p->i += 2;
			continue;
		}
		if (c == '\'') {
			lex_squote(p, w);
			continue;
		}
		if (c == '"') {
			p->i++;
			lex_dquote(p, w, true);
			continue;
		}
		if (c == '$') {
			lex_dollar(p, w, false);
			continue;
		}
		put(p, w, (char)c);
		p->i++;
		if (c == '(')
			depth++;
		else if (c == ')' && --depth == 0)
			return;
	}
}

/* One word at the cursor; false when there is none. */
static bool lex_word(struct parser *p, struct word *w)
{
	memset(w, 0, sizeof(*w));
	w->start = p->i;
	w->off = p->top;
	w->literal = true;
	w->name_ok = true;
	while (!stop(p)) {
		int c = cur(p);

		if (c < 0)
			break;
		if (c == '\\') {
			int c1 = ahead(p, 1);

			if (c1 == '\n') {
				p->i += 2;
			} else if (c1 < 0) {
				put(p, w, '\\');
				p->i++;
			} else {
				w->quoted = true;
				w->name_ok = false;
				put(p, w, (char)c1);
				p->i += 2;
			}
		} else if (c == '\'') {
			lex_squote(p, w);
		} else if (c == '"') {
			p->i++;
			lex_dquote(p, w, true);
		} else if (c == '$') {
			w->name_ok = false;
			lex_dollar(p, w, false);
		} else if (c == '`') {
			w->name_ok = false;
			lex_backquote(p, w, false);
		} else if ((c == '<' || c == '>') && ahead(p, 1) == '(') {
			w->name_ok = false;
			lex_procsub(p, w);
		} else if (c == '(' && w->assign && p->i == w->assign_end) {
			lex_array(p, w);
		} else if (c == '(' && p->i > w->start && strchr("@!+*?", p->s[p->i - 1])) {
			lex_group(p, w);
		} else if (is_meta(c)) {
			break;
		} else {
			if (c == '=' && w->name_ok && p->i > w->start) {
				w->assign = true;
				w->assign_end = p->i + 1;
				w->name_ok = false;
			} else if (c == '+' && ahead(p, 1) == '=' && w->name_ok && p->i > w->start) {
				/* NAME+= stays an assignment */
			} else if (!(p->i == w->start ? is_name_start(c) : is_name(c))) {
				w->name_ok = false;
			}
			put(p, w, (char)c);
			p->i++;
		}
	}
	w->end = p->i;
	return w->end > w->start;
}

/* ---- texts inside texts ---- */

/* Parse TEXT (in the arena above p->top, or a span of the current text)
 * as a text of its own with the given stdin.  One that cannot be parsed
 * is judged by its words when JUDGE or when a bound stopped it, else
 * taken as clean (arithmetic read as commands, see lex_arith).  Returns
 * whether it downloads. */
static bool parse_text(struct parser *p, const char *text, size_t len, bool taint, bool judge)
{
	const char *s = p->s;
	size_t n = p->n, i = p->i, pos0 = p->pos0;
	unsigned hd_base = p->hd_base, n_hd = p->n_hd;
	bool stage = p->stage_taint, d = false;

	if (stop(p))
		return false;
	if (p->texts >= SHELL_MAX_TEXTS || p->depth >= SHELL_MAX_DEPTH)
		return judge_words(p, text, len);
	if (p->s == p->text0)
		p->pos0 = p->i;
	p->texts++;
	p->depth++;
	p->s = text;
	p->n = len;
	p->i = 0;
	p->stage_taint = taint;
	p->hd_base = p->n_hd;
	d = parse_list(p, STOP_EOF, NULL);
	if (!stop(p))
		read_heredocs(p);
	if (p->failed && !p->match) {
		p->failed = false;
		p->why = NULL;
		d = judge || p->bounds ? judge_words(p, text, len) : false;
		p->bounds = false;
	}
	p->depth--;
	p->texts--;
	p->s = s;
	p->n = n;
	p->i = i;
	p->pos0 = pos0;
	p->stage_taint = stage;
	p->hd_base = hd_base;
	p->n_hd = n_hd;
	return d;
}

/* A shell's program text given as a word (sh -c TEXT, bash <<< TEXT). */
static bool parse_word_text(struct parser *p, const struct word *w, bool taint)
{
	size_t mark = p->top;
	bool d;

	if (w->overflow)
		return judge_words(p, p->s + w->start, w->end - w->start);
	p->top = w->off + w->len;
	d = parse_text(p, p->arena + w->off, w->len, taint, true);
	p->top = mark;
	return d;
}

/* ---- commands ---- */

/* What one simple command's redirections say about its stdin. */
struct redirs {
	bool stdin_set;   /* stdin comes from a redirection, not the pipe */
	bool stdin_taint; /* ... which carries a download */
	unsigned hd_mask; /* here-documents on its stdin */
};

/* One redirection at the cursor.  R and C are NULL after a compound
 * command.  Returns whether a substitution in it downloads. */
static bool parse_redirect(struct parser *p, struct redirs *r, const struct shell_cmd *c)
{
	size_t pre = redir_prefix(p);
	bool fd0 = pre == 0 || (pre == 1 && p->s[p->i] == '0');
	bool input, heredoc = false, herestr = false, strip = false;
	struct word w;

	p->i += pre;
	input = cur(p) == '<';
	if (cur(p) == '&') {
		p->i += ahead(p, 2) == '>' ? 3 : 2; /* &> &>> */
	} else if (input && ahead(p, 1) == '<' && ahead(p, 2) == '<') {
		herestr = true;
		p->i += 3;
	} else if (input && ahead(p, 1) == '<') {
		heredoc = true;
		strip = ahead(p, 2) == '-';
		p->i += strip ? 3 : 2;
	} else if (strchr("&>|", ahead(p, 1) < 0 ? 0 : ahead(p, 1)) && ahead(p, 1) > 0) {
		p->i += 2; /* <& <> >> >& >| */
	} else {
		p->i++;
	}
	skip_blanks(p);
	if (cur(p) < 0 || (is_meta(cur(p)) && !((cur(p) == '<' || cur(p) == '>') && ahead(p, 1) == '('))) {
		fail(p, "a redirection without a target");
		return false;
	}
	lex_word(p, &w);
	if (stop(p))
		return false;
	if (heredoc) {
		struct heredoc *h;

		if (p->n_hd >= SHELL_HEREDOCS || w.overflow || w.len >= SHELL_DELIM_MAX) {
			fail(p, "too many here-documents, or a delimiter too long");
			return false;
		}
		h = &p->hd[p->n_hd];
		memcpy(h->delim, p->arena + w.off, w.len);
		h->delim_len = (uint8_t)w.len;
		h->quoted = w.quoted;
		h->strip_tabs = strip;
		h->feeds = FEED_NONE;
		if (r && fd0) {
			r->hd_mask |= 1u << p->n_hd;
			r->stdin_set = true;
			r->stdin_taint = false;
		}
		p->n_hd++;
		return false;
	}
	if (r && fd0 && input) {
		r->stdin_set = true;
		r->stdin_taint = w.dl;
		/* bash <<< 'TEXT': the shell's program. */
		if (herestr && c && !w.dl && c->kind == SHELL_KIND_INTERP &&
		    c->family == SHELL_FAM_SHELL && shell_cmd_reads_program(c))
			return parse_word_text(p, &w, false);
	}
	return w.dl;
}

/* Redirections after a compound command. */
static bool compound_tail(struct parser *p)
{
	bool d = false;
	size_t len;

	while (!stop(p) && peek(p, &len) == T_REDIR)
		d |= parse_redirect(p, NULL, NULL);
	return d;
}

/* Builtins that store what they read in the variables they name. */
static bool is_reader(const char *v, size_t n)
{
	return (n == 4 && !memcmp(v, "read", 4)) || (n == 7 && !memcmp(v, "mapfile", 7)) ||
	       (n == 9 && !memcmp(v, "readarray", 9));
}

/* Not inlined: its frame is paid only by simple commands, not by every
 * level of nested compound commands. */
static __attribute__((noinline)) bool parse_simple(struct parser *p)
{
	struct shell_cmd c;
	struct redirs r;
	struct word w;
	size_t mark = p->top, eval_from = 0, eval_to = 0;
	bool d = false, first = true, eval = false, eval_over = false, reads = false;
	size_t names[4][2]; /* read's operands, unquoted: their spans are their names */
	unsigned n_names = 0;

	shell_cmd_init(&c);
	memset(&r, 0, sizeof(r));
	while (!stop(p)) {
		size_t len;
		enum tok t = peek(p, &len);
		enum shell_role role;

		p->out_taint = p->stage_taint || c.kind == SHELL_KIND_DOWNLOADER;
		if (t == T_REDIR) {
			d |= parse_redirect(p, &r, &c);
			continue;
		}
		if (t != T_WORD)
			break;
		lex_word(p, &w);
		if (stop(p))
			break;
		d |= w.dl;
		/* x=$(curl u), also as export/local/declare's argument */
		if (w.assign)
			var_set(p, p->s + w.start, w.assign_end - 1 - w.start -
				(p->s[w.assign_end - 2] == '+'), w.dl);
		else if (reads && n_names < sizeof(names) / sizeof(names[0]) && w.literal &&
			 !w.quoted && p->s[w.start] != '-') {
			names[n_names][0] = w.start;
			names[n_names++][1] = w.end;
		}
		if (first && w.literal && !w.assign) {
			skip_blanks(p);
			if (cur(p) == '(') {
				/* NAME () compound-command: a definition; what
				 * its body would run still counts. */
				p->i++;
				if (expect_char(p, ')', "'(' after a command word")) {
					skip_linebreaks(p);
					parse_command(p);
				}
				p->top = mark;
				return false;
			}
		}
		first = false;
		role = shell_cmd_word(&c, w.literal && !w.overflow ? p->arena + w.off : NULL, w.len,
				      w.assign);
		/* read NAME...: the names hold what stdin gives */
		if (role == SHELL_ROLE_COMMAND && w.literal && !w.overflow)
			reads = is_reader(p->arena + w.off, w.len);
		if ((role == SHELL_ROLE_TEXT || role == SHELL_ROLE_FILE) && w.dl &&
		    c.kind != SHELL_KIND_LOOKUP) {
			p->match = true; /* sh -c "$(curl x)", source <(curl x) */
		} else if (role == SHELL_ROLE_TEXT && c.kind == SHELL_KIND_EVAL) {
			/* eval's words, joined by spaces, are its text */
			if (!eval)
				eval_from = w.start;
			eval = true;
			eval_to = w.end;
			eval_over |= w.overflow;
			p->top = w.off + w.len;
			if (p->top < p->arena_size)
				p->arena[p->top++] = ' ';
			else
				eval_over = true;
		} else if (role == SHELL_ROLE_TEXT && c.family == SHELL_FAM_SHELL) {
			d |= parse_word_text(p, &w, r.stdin_set ? r.stdin_taint : p->stage_taint);
		}
	}
	shell_cmd_end(&c);
	if (eval && !stop(p)) {
		bool taint = r.stdin_set ? r.stdin_taint : p->stage_taint;

		if (eval_over) {
			d |= judge_words(p, p->s + eval_from, eval_to - eval_from);
		} else {
			size_t end = p->top;

			d |= parse_text(p, p->arena + mark, end - mark, taint, true);
		}
	}
	p->top = mark;
	if (r.stdin_set ? r.stdin_taint : p->stage_taint)
		for (unsigned k = 0; k < n_names; k++)
			var_set(p, p->s + names[k][0], names[k][1] - names[k][0], true);
	if (c.kind == SHELL_KIND_DOWNLOADER)
		d = true;
	if (shell_cmd_reads_program(&c) && (r.stdin_set ? r.stdin_taint : p->stage_taint))
		p->match = true;
	for (unsigned k = 0; k < SHELL_HEREDOCS; k++) {
		if (!(r.hd_mask & (1u << k)))
			continue;
		if (!shell_cmd_reads_program(&c))
			p->hd[k].feeds = FEED_NONE;
		else if (c.kind == SHELL_KIND_SOURCE || c.family == SHELL_FAM_SHELL)
			p->hd[k].feeds = FEED_SHELL;
		else
			p->hd[k].feeds = FEED_INTERP;
	}
	return d;
}

static bool parse_if(struct parser *p)
{
	static const char *const then_kw[] = { "then", NULL };
	static const char *const branch_kw[] = { "elif", "else", "fi", NULL };
	static const char *const fi_kw[] = { "fi", NULL };
	bool d;
	size_t len;

	p->i += 2;
	d = parse_list(p, 0, then_kw);
	expect_kw(p, "then");
	d |= parse_list(p, 0, branch_kw);
	while (!stop(p)) {
		peek(p, &len);
		if (kw(p, "elif")) {
			p->i += 4;
			d |= parse_list(p, 0, then_kw);
			expect_kw(p, "then");
			d |= parse_list(p, 0, branch_kw);
		} else if (kw(p, "else")) {
			p->i += 4;
			d |= parse_list(p, 0, fi_kw);
			expect_kw(p, "fi");
			break;
		} else {
			expect_kw(p, "fi");
			break;
		}
	}
	return d;
}

/* do list done (or bash's { list } for for-loops) */
static bool parse_do(struct parser *p)
{
	static const char *const done_kw[] = { "done", NULL };
	static const char *const close_kw[] = { "}", NULL };
	size_t len;
	bool d;

	skip_linebreaks(p);
	if (!stop(p) && peek(p, &len) == T_WORD && kw(p, "{")) {
		p->i++;
		d = parse_list(p, 0, close_kw);
		expect_kw(p, "}");
		return d;
	}
	expect_kw(p, "do");
	d = parse_list(p, 0, done_kw);
	expect_kw(p, "done");
	return d;
}

static bool parse_while(struct parser *p)
{
	static const char *const do_kw[] = { "do", NULL };
	bool d;

	p->i += 5; /* while, until */
	d = parse_list(p, 0, do_kw);
	return d | parse_do(p);
}

static bool parse_for(struct parser *p, size_t kwlen)
{
	struct word w;
	size_t len;
	bool d = false;

	p->i += kwlen;
	skip_blanks(p);
	if (cur(p) == '(' && ahead(p, 1) == '(') {
		memset(&w, 0, sizeof(w));
		w.off = p->top;
		if (!lex_arith(p, &w, p->i, 2))
			fail(p, "bad for (( ))");
		d |= w.dl;
	} else if (peek(p, &len) != T_WORD || !lex_word(p, &w)) {
		fail(p, "for without a name");
		return false;
	} else {
		struct word name = w;
		bool words = false;

		skip_linebreaks(p);
		if (!stop(p) && peek(p, &len) == T_WORD && kw(p, "in")) {
			p->i += 2;
			while (!stop(p) && peek(p, &len) == T_WORD) {
				lex_word(p, &w);
				words |= w.dl;
			}
		}
		d |= words;
		if (name.literal && !name.overflow)
			var_set(p, p->s + name.start, name.end - name.start, words);
	}
	if (!stop(p) && peek(p, &len) == T_SEMI)
		p->i++;
	return d | parse_do(p);
}

static bool parse_case(struct parser *p)
{
	static const char *const esac_kw[] = { "esac", NULL };
	struct word w;
	size_t len;
	bool d = false;

	p->i += 4;
	if (peek(p, &len) != T_WORD || !lex_word(p, &w)) {
		fail(p, "case without a word");
		return false;
	}
	d |= w.dl;
	skip_linebreaks(p);
	expect_kw(p, "in");
	for (;;) {
		enum tok t;

		skip_linebreaks(p);
		if (stop(p))
			break;
		t = peek(p, &len);
		if (t == T_WORD && kw(p, "esac")) {
			p->i += 4;
			break;
		}
		if (t == T_LPAREN)
			p->i++;
		for (;;) {
			t = peek(p, &len);
			if (t != T_WORD || !lex_word(p, &w)) {
				fail(p, "bad case pattern");
				return d;
			}
			d |= w.dl;
			t = peek(p, &len);
			if (t == T_PIPE && len == 1) {
				p->i++;
				continue;
			}
			if (t == T_RPAREN) {
				p->i++;
				break;
			}
			fail(p, "bad case pattern");
			return d;
		}
		d |= parse_list(p, STOP_DSEMI, esac_kw);
		if (stop(p))
			break;
		t = peek(p, &len);
		if (t == T_DSEMI)
			p->i += len;
		else if (!(t == T_WORD && kw(p, "esac")))
			fail(p, "case item not ended by ;;");
	}
	return d;
}

/* [[ expression ]]: operators are not metacharacters there; only the
 * substitutions in its words matter. */
static bool parse_cond(struct parser *p)
{
	struct word w;
	bool d = false;

	p->i += 2;
	while (!stop(p)) {
		int c;

		skip_blanks(p);
		c = cur(p);
		if (c < 0) {
			fail(p, "unbalanced [[");
			break;
		}
		if (kw(p, "]]")) {
			p->i += 2;
			break;
		}
		if (c == '\n') {
			newline(p);
		} else if (is_meta(c) && !((c == '<' || c == '>') && ahead(p, 1) == '(')) {
			p->i++;
		} else if (lex_word(p, &w)) {
			d |= w.dl;
		} else {
			p->i++;
		}
	}
	return d;
}

static bool parse_function(struct parser *p)
{
	struct word w;
	size_t len;

	p->i += 8;
	if (peek(p, &len) != T_WORD || !lex_word(p, &w)) {
		fail(p, "function without a name");
		return false;
	}
	skip_blanks(p);
	if (cur(p) == '(') {
		p->i++;
		expect_char(p, ')', "'(' after a function name");
	}
	skip_linebreaks(p);
	if (!stop(p))
		parse_command(p);
	return false;
}

static bool parse_command(struct parser *p)
{
	static const char *const closers[] = {
		"then", "elif", "else", "fi", "do", "done", "esac", "}", NULL,
	};
	static const char *const close_kw[] = { "}", NULL };
	size_t len;
	enum tok t;
	bool d = false;

	if (!enter(p)) {
		leave(p);
		return false;
	}
	t = peek(p, &len);
	if (t == T_LPAREN) {
		struct word w;

		memset(&w, 0, sizeof(w));
		w.off = p->top;
		if (ahead(p, 1) == '(' && lex_arith(p, &w, p->i, 2)) {
			d = w.dl;
		} else {
			p->i++;
			d = parse_list(p, STOP_RPAREN, NULL);
			expect_char(p, ')', "unbalanced (");
		}
		d |= compound_tail(p);
	} else if (t == T_WORD && kw(p, "{")) {
		p->i++;
		d = parse_list(p, 0, close_kw);
		expect_kw(p, "}");
		d |= compound_tail(p);
	} else if (t == T_WORD && kw(p, "if")) {
		d = parse_if(p) | compound_tail(p);
	} else if (t == T_WORD && (kw(p, "while") || kw(p, "until"))) {
		d = parse_while(p) | compound_tail(p);
	} else if (t == T_WORD && kw(p, "for")) {
		d = parse_for(p, 3) | compound_tail(p);
	} else if (t == T_WORD && kw(p, "select")) {
		d = parse_for(p, 6) | compound_tail(p);
	} else if (t == T_WORD && kw(p, "case")) {
		d = parse_case(p) | compound_tail(p);
	} else if (t == T_WORD && kw(p, "[[")) {
		d = parse_cond(p) | compound_tail(p);
	} else if (t == T_WORD && kw(p, "function")) {
		d = parse_function(p);
	} else if (t == T_WORD && kw_any(p, closers)) {
		fail(p, "a reserved word where a command should be");
	} else if (t == T_WORD || t == T_REDIR) {
		d = parse_simple(p);
	} else {
		fail(p, "an operator where a command should be");
	}
	leave(p);
	return d;
}

static bool parse_pipeline(struct parser *p)
{
	bool inherited = p->stage_taint, upstream = false, d = false;
	size_t len;

	for (;;) {
		if (peek(p, &len) != T_WORD)
			break;
		if (kw(p, "!")) {
			p->i++;
		} else if (kw(p, "time")) {
			p->i += 4;
			skip_blanks(p);
			if (kw(p, "-p"))
				p->i += 2;
		} else {
			break;
		}
	}
	while (!stop(p)) {
		bool s;

		p->stage_taint = inherited || upstream;
		s = parse_command(p);
		upstream |= s;
		d |= s;
		if (stop(p) || peek(p, &len) != T_PIPE)
			break;
		p->i += len;
		skip_linebreaks(p);
	}
	p->stage_taint = inherited;
	return d;
}

static bool parse_and_or(struct parser *p)
{
	bool d = parse_pipeline(p);
	size_t len;

	while (!stop(p)) {
		enum tok t = peek(p, &len);

		if (t != T_AND && t != T_OR)
			break;
		p->i += len;
		skip_linebreaks(p);
		d |= parse_pipeline(p);
	}
	return d;
}

/* Commands up to what STOPS and KWS allow to end the list (not
 * consumed). */
static bool parse_list(struct parser *p, unsigned stops, const char *const *kws)
{
	bool d = false;

	while (!stop(p)) {
		size_t len;
		enum tok t = peek(p, &len);

		if (t == T_NEWLINE) {
			newline(p);
			continue;
		}
		if (t == T_EOF) {
			if (!(stops & STOP_EOF))
				fail(p, "unexpected end of text");
			break;
		}
		if (t == T_RPAREN) {
			if (!(stops & STOP_RPAREN))
				fail(p, "unbalanced )");
			break;
		}
		if (t == T_DSEMI) {
			if (!(stops & STOP_DSEMI))
				fail(p, ";; outside case");
			break;
		}
		if (t == T_WORD && kw_any(p, kws))
			break;
		d |= parse_and_or(p);
		if (stop(p))
			break;
		t = peek(p, &len);
		if (t == T_SEMI || t == T_AMP)
			p->i += len;
		else if (!(t == T_NEWLINE || t == T_EOF || t == T_RPAREN || t == T_DSEMI ||
			   (t == T_WORD && kw_any(p, kws))))
			fail(p, "unexpected token after a command");
	}
	return d;
}

enum shell_result shell_download_and_run(const char *text, size_t len, char *arena, size_t size,
					 struct shell_report *out)
{
	struct parser p;
	enum shell_result res;

	memset(&p, 0, sizeof(p));
	p.s = p.text0 = text;
	p.n = len;
	p.arena = arena;
	p.arena_size = size;
	if (!text || len > SHELL_TEXT_MAX || !arena || size < 256) {
		p.failed = true;
		p.why = !text || !arena || size < 256 ? "no text or no scratch space"
						       : "longer than the parser reads";
	} else {
		parse_list(&p, STOP_EOF, NULL);
		if (!stop(&p))
			read_heredocs(&p);
	}
	res = p.match ? SHELL_DOWNLOAD_AND_RUN : p.failed ? SHELL_UNPARSED : SHELL_CLEAN;
	if (out) {
		out->result = res;
		out->why = res == SHELL_UNPARSED ? p.why : NULL;
		out->at = res == SHELL_UNPARSED ? p.why_at : 0;
	}
	return res;
}
