/* What a git configuration text makes git run (rules/gitconfig.h).
 *
 * The reader follows git's own (config.c: get_next_char, parse_value,
 * get_value, get_base_var, get_extended_base_var, git_parse_source) step
 * by step, with git's locale-free character classes: space is ' ', \t,
 * \n and \r only; letters and digits are ASCII. */
#include <string.h>

#include "rules/gitconfig.h"

/* ---- the list ---- */

/* Every variable that makes git run a program, or read configuration
 * from another file, when set in a repository's configuration
 * (git-config(1)).  agenttrace-policy(5), "Content", lists the same. */
const struct gitconfig_key gitconfig_keys[] = {
	{ "core", "fsmonitor", "core.fsmonitor", GITCONFIG_ANY,
	  "git runs it as its file system monitor" },
	{ "core", "hookspath", "core.hooksPath", GITCONFIG_ANY,
	  "git runs the hooks of that directory" },
	{ "core", "sshcommand", "core.sshCommand", GITCONFIG_ANY, "git runs it instead of ssh" },
	{ "core", "gitproxy", "core.gitProxy", GITCONFIG_ANY,
	  "git runs it to connect to git:// remotes" },
	{ "core", "pager", "core.pager", GITCONFIG_ANY, "git runs it as its pager" },
	{ "core", "editor", "core.editor", GITCONFIG_ANY, "git runs it as the editor" },
	{ "core", "askpass", "core.askPass", GITCONFIG_ANY, "git runs it to ask for passwords" },
	{ "core", "alternaterefscommand", "core.alternateRefsCommand", GITCONFIG_ANY,
	  "git runs it on fetches and pushes" },
	{ "sequence", "editor", "sequence.editor", GITCONFIG_ANY,
	  "git runs it as the rebase editor" },
	{ "credential", "helper", "credential.*.helper", GITCONFIG_ANY,
	  "git runs it as a credential helper" },
	{ "alias", "*", "alias.*", GITCONFIG_ALIAS,
	  "git runs the alias as a shell command, or takes options from it" },
	{ "filter", "clean", "filter.*.clean", GITCONFIG_ANY,
	  "git runs the filter on checked-in files" },
	{ "filter", "smudge", "filter.*.smudge", GITCONFIG_ANY,
	  "git runs the filter on checked-out files" },
	{ "filter", "process", "filter.*.process", GITCONFIG_ANY, "git runs the filter process" },
	{ "diff", "textconv", "diff.*.textconv", GITCONFIG_ANY,
	  "git runs it to convert files for diffs" },
	{ "diff", "command", "diff.*.command", GITCONFIG_ANY,
	  "git runs it as an external diff driver" },
	{ "diff", "external", "diff.external", GITCONFIG_ANY, "git runs it as the external diff" },
	{ "merge", "driver", "merge.*.driver", GITCONFIG_ANY, "git runs it as a merge driver" },
	{ "gpg", "program", "gpg.*.program", GITCONFIG_ANY, "git runs it to sign and verify" },
	{ "gpg", "defaultkeycommand", "gpg.ssh.defaultKeyCommand", GITCONFIG_ANY,
	  "git runs it to find a signing key" },
	{ "include", "path", "include.path", GITCONFIG_ANY,
	  "git reads configuration from that file" },
	{ "includeif", "path", "includeIf.*.path", GITCONFIG_ANY,
	  "git reads configuration from that file" },
	{ "remote", "uploadpack", "remote.*.uploadpack", GITCONFIG_ANY,
	  "git runs it on the remote side of fetches" },
	{ "remote", "receivepack", "remote.*.receivepack", GITCONFIG_ANY,
	  "git runs it on the remote side of pushes" },
	{ "remote", "vcs", "remote.*.vcs", GITCONFIG_ANY, "git runs that remote helper" },
	{ "remote", "url", "remote.*.url", GITCONFIG_EXT, "git runs the command of an ext:: URL" },
	{ "remote", "pushurl", "remote.*.pushurl", GITCONFIG_EXT,
	  "git runs the command of an ext:: URL" },
	{ "url", "insteadof", "url.*.insteadOf", GITCONFIG_EXT_BASE,
	  "git runs the command of an ext:: URL" },
	{ "url", "pushinsteadof", "url.*.pushInsteadOf", GITCONFIG_EXT_BASE,
	  "git runs the command of an ext:: URL" },
	{ "protocol", "allow", "protocol.*.allow", GITCONFIG_ANY,
	  "it lets git use transports that run commands" },
	{ "submodule", "update", "submodule.*.update", GITCONFIG_NOT_UPDATE,
	  "git runs it on submodule updates" },
	{ "submodule", "url", "submodule.*.url", GITCONFIG_EXT,
	  "git runs the command of an ext:: URL" },
	{ "pager", "*", "pager.*", GITCONFIG_NOT_BOOL, "git runs it as that command's pager" },
	{ "interactive", "difffilter", "interactive.diffFilter", GITCONFIG_ANY,
	  "git runs it on interactive diffs" },
	{ "uploadpack", "packobjectshook", "uploadpack.packObjectsHook", GITCONFIG_ANY,
	  "git runs it on fetches" },
	{ "trailer", "command", "trailer.*.command", GITCONFIG_ANY, "git runs it for trailers" },
	{ "trailer", "cmd", "trailer.*.cmd", GITCONFIG_ANY, "git runs it for trailers" },
	{ "difftool", "cmd", "difftool.*.cmd", GITCONFIG_ANY, "git difftool runs it" },
	{ "difftool", "path", "difftool.*.path", GITCONFIG_ANY, "git difftool runs it" },
	{ "mergetool", "cmd", "mergetool.*.cmd", GITCONFIG_ANY, "git mergetool runs it" },
	{ "mergetool", "path", "mergetool.*.path", GITCONFIG_ANY, "git mergetool runs it" },
	{ "guitool", "cmd", "guitool.*.cmd", GITCONFIG_ANY, "git gui runs it" },
	{ "man", "cmd", "man.*.cmd", GITCONFIG_ANY, "git help runs it" },
	{ "man", "path", "man.*.path", GITCONFIG_ANY, "git help runs it" },
	{ "browser", "cmd", "browser.*.cmd", GITCONFIG_ANY, "git web--browse runs it" },
	{ "browser", "path", "browser.*.path", GITCONFIG_ANY, "git web--browse runs it" },
	{ "sendemail", "smtpserver", "sendemail.smtpServer", GITCONFIG_ANY,
	  "git send-email runs it when it is a program" },
	{ "sendemail", "sendmailcmd", "sendemail.sendmailCmd", GITCONFIG_ANY,
	  "git send-email runs it" },
	{ "sendemail", "tocmd", "sendemail.toCmd", GITCONFIG_ANY, "git send-email runs it" },
	{ "sendemail", "cccmd", "sendemail.ccCmd", GITCONFIG_ANY, "git send-email runs it" },
	{ "sendemail", "headercmd", "sendemail.headerCmd", GITCONFIG_ANY,
	  "git send-email runs it" },
	{ "imap", "tunnel", "imap.tunnel", GITCONFIG_ANY, "git imap-send runs it" },
	{ "instaweb", "httpd", "instaweb.httpd", GITCONFIG_ANY, "git instaweb runs it" },
	{ "hook", "command", "hook.*.command", GITCONFIG_ANY, "git runs it as a hook" },
	{ "tar", "command", "tar.*.command", GITCONFIG_ANY,
	  "git archive pipes its output through it" },
	{ NULL, NULL, NULL, GITCONFIG_ANY, NULL },
};

/* ---- git's character classes ---- */

static bool gc_space(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool gc_alpha(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool gc_keychar(int c)
{
	return gc_alpha(c) || (c >= '0' && c <= '9') || c == '-';
}

static int gc_lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

/* ---- the reader ---- */

struct gc_reader {
	const unsigned char *p, *end;
	bool eof;
	bool at_nl;                 /* the last character read ended a line */
	unsigned line;              /* lines ended so far */
	const char *what;           /* why the text is unreadable */
	char name[GITCONFIG_NAME_MAX];
	size_t stem;                /* "section.subsection." of the last header */
	bool in_section;
	char value[GITCONFIG_VALUE_MAX];
	size_t value_len;
};

/* get_next_char(): CRLF is LF, the end of the text is a last LF. */
static int gc_getc(struct gc_reader *r)
{
	int c;

	if (r->p >= r->end) {
		r->eof = true;
		r->at_nl = false;
		return '\n';
	}
	c = *r->p++;
	if (c == '\r' && r->p < r->end && *r->p == '\n')
		c = *r->p++;
	r->at_nl = c == '\n';
	if (c == '\n')
		r->line++;
	return c;
}

static int gc_fail(struct gc_reader *r, const char *what)
{
	r->what = what;
	return -1;
}

static bool gc_name_add(struct gc_reader *r, size_t *n, int c)
{
	if (*n + 1 >= sizeof(r->name))
		return false;
	r->name[(*n)++] = (char)c;
	r->name[*n] = '\0';
	return true;
}

/* After "[": get_base_var() and get_extended_base_var().  0 or -1. */
static int gc_header(struct gc_reader *r)
{
	size_t n = 0;
	int c;

	r->in_section = false;
	r->name[0] = '\0';
	for (;;) {
		c = gc_getc(r);
		if (r->eof)
			return gc_fail(r, "a section header without \"]\"");
		if (c == ']')
			break;
		if (gc_space(c)) {
			/* [section "subsection"] */
			do {
				if (c == '\n')
					return gc_fail(r, "a section header without \"]\"");
				c = gc_getc(r);
			} while (gc_space(c));
			if (c != '"')
				return gc_fail(r, "a subsection name must be quoted");
			if (!gc_name_add(r, &n, '.'))
				return gc_fail(r, "a section name too long");
			for (;;) {
				c = gc_getc(r);
				if (c == '\n')
					return gc_fail(r, "a subsection name without its closing quote");
				if (c == '"')
					break;
				if (c == '\\') {
					c = gc_getc(r);
					if (c == '\n')
						return gc_fail(r,
							       "a subsection name without its closing quote");
				}
				if (!gc_name_add(r, &n, c))
					return gc_fail(r, "a section name too long");
			}
			if (gc_getc(r) != ']')
				return gc_fail(r, "a section header without \"]\"");
			break;
		}
		if (!gc_keychar(c) && c != '.')
			return gc_fail(r, "a character git does not allow in a section name");
		if (!gc_name_add(r, &n, gc_lower(c)))
			return gc_fail(r, "a section name too long");
	}
	/* git accepts "[ \"x\"]", a section without a name that nothing
	 * reads: refused rather than guessed at. */
	if (n == 0 || r->name[0] == '.')
		return gc_fail(r, "a section without a name");
	if (!gc_name_add(r, &n, '.'))
		return gc_fail(r, "a section name too long");
	r->stem = n;
	r->in_section = true;
	return 0;
}

static bool gc_value_add(struct gc_reader *r, int c)
{
	if (r->value_len + 1 >= sizeof(r->value))
		return false;
	r->value[r->value_len++] = (char)c;
	r->value[r->value_len] = '\0';
	return true;
}

/* parse_value(): after "=", up to the end of the (continued) line. */
static int gc_value(struct gc_reader *r)
{
	bool quote = false, comment = false;
	size_t space = 0;

	r->value_len = 0;
	r->value[0] = '\0';
	for (;;) {
		int c = gc_getc(r);

		if (c == '\n') {
			if (quote)
				return gc_fail(r, "a value without its closing quote");
			return 0;
		}
		if (comment)
			continue;
		if (gc_space(c) && !quote) {
			if (r->value_len)
				space++;
			continue;
		}
		if (!quote && (c == ';' || c == '#')) {
			comment = true;
			continue;
		}
		for (; space; space--)
			if (!gc_value_add(r, ' '))
				return gc_fail(r, "a value too long");
		if (c == '\\') {
			c = gc_getc(r);
			switch (c) {
			case '\n':
				if (r->eof)
					return gc_fail(r, "a backslash at the end of the text");
				continue;
			case 't':
				c = '\t';
				break;
			case 'b':
				c = '\b';
				break;
			case 'n':
				c = '\n';
				break;
			case '\\':
			case '"':
				break;
			default:
				return gc_fail(r, "an escape git does not know");
			}
			if (!gc_value_add(r, c))
				return gc_fail(r, "a value too long");
			continue;
		}
		if (c == '"') {
			quote = !quote;
			continue;
		}
		if (!gc_value_add(r, c))
			return gc_fail(r, "a value too long");
	}
}

/* The next variable: 1, with r->name and (HAS_VALUE) r->value; 0 at the
 * end; -1 when unreadable. */
static int gc_next(struct gc_reader *r, bool *has_value, unsigned *line)
{
	bool comment = false;

	for (;;) {
		int c = gc_getc(r);
		size_t n;

		if (c == '\n') {
			if (r->eof)
				return 0;
			comment = false;
			continue;
		}
		if (comment || gc_space(c))
			continue;
		if (c == '#' || c == ';') {
			comment = true;
			continue;
		}
		if (c == '[') {
			if (gc_header(r) < 0)
				return -1;
			continue;
		}
		if (!gc_alpha(c))
			return gc_fail(r, "a line git does not read as a variable");
		/* A variable before any section would be one git reads but
		 * nothing uses: refused rather than guessed at. */
		if (!r->in_section)
			return gc_fail(r, "a variable outside any section");
		*line = r->line + 1;
		n = r->stem;
		r->name[n] = '\0';
		if (!gc_name_add(r, &n, gc_lower(c)))
			return gc_fail(r, "a variable name too long");
		/* get_value() */
		for (;;) {
			c = gc_getc(r);
			if (r->eof || !gc_keychar(c))
				break;
			if (!gc_name_add(r, &n, gc_lower(c)))
				return gc_fail(r, "a variable name too long");
		}
		while (c == ' ' || c == '\t')
			c = gc_getc(r);
		*has_value = false;
		if (c != '\n') {
			if (c != '=')
				return gc_fail(r, "a variable name followed by neither \"=\" "
						  "nor the end of the line");
			if (gc_value(r) < 0)
				return -1;
			*has_value = true;
		}
		return 1;
	}
}

int gitconfig_each(const char *text, size_t len,
		   int (*fn)(const struct gitconfig_entry *e, void *arg), void *arg,
		   unsigned *line, const char **what)
{
	static const unsigned char bom[3] = { 0xef, 0xbb, 0xbf };
	struct gc_reader r;
	int rc;

	memset(&r, 0, sizeof(r));
	r.p = (const unsigned char *)text;
	r.end = r.p + len;
	rc = 0;
	if (len > GITCONFIG_MAX) {
		r.what = "a text longer than the check reads";
		rc = -1;
	} else if (memchr(text, '\0', len)) {
		/* git reads a value up to a NUL and a name past it: two
		 * readings, neither to be guessed. */
		const char *z = memchr(text, '\0', len);

		for (const char *q = text; q < z; q++)
			r.line += *q == '\n';
		r.what = "a NUL byte";
		rc = -1;
	} else if (len > 0 && r.p[0] == bom[0]) {
		/* git skips a whole UTF-8 byte order mark and refuses a part */
		if (len < 3 || memcmp(r.p, bom, 3) != 0) {
			r.what = "part of a byte order mark";
			rc = -1;
		} else {
			r.p += 3;
		}
	}
	while (rc == 0) {
		struct gitconfig_entry e;
		bool has_value = false;
		unsigned at = 0;
		int n = gc_next(&r, &has_value, &at);

		if (n <= 0) {
			rc = n;
			break;
		}
		e.name = r.name;
		e.value = has_value ? r.value : NULL;
		e.value_len = has_value ? r.value_len : 0;
		e.line = at;
		rc = fn(&e, arg);
		if (rc)
			return rc;
	}
	if (rc < 0) {
		/* The line the failing character is on (a newline: the line
		 * it ends). */
		if (line)
			*line = r.at_nl ? r.line : r.line + 1;
		if (what)
			*what = r.what ? r.what : "unreadable";
	}
	return rc;
}

/* ---- judging ---- */

static bool gc_word(const char *v, size_t n, const char *w)
{
	size_t wn = strlen(w);

	if (n != wn)
		return false;
	for (size_t i = 0; i < n; i++)
		if (gc_lower((unsigned char)v[i]) != w[i])
			return false;
	return true;
}

/* V (N bytes; NULL: none) starts with "ext::", after spaces. */
static bool gc_ext(const char *v, size_t n)
{
	size_t i = 0;

	while (v && i < n && gc_space((unsigned char)v[i]))
		i++;
	return v && n - i >= 5 && gc_word(v + i, 5, "ext::");
}

/* Whether E, a variable of entry K, makes git run something. */
static bool gc_when(const struct gitconfig_key *k, const struct gitconfig_entry *e)
{
	static const char *const bools[] = { "true", "false", "yes", "no", "on", "off", "1", "0" };
	static const char *const updates[] = { "checkout", "rebase", "merge", "none" };
	const char *v = e->value, *sub, *last;
	size_t n = e->value_len, i = 0;

	switch (k->when) {
	case GITCONFIG_ANY:
		return true;
	case GITCONFIG_ALIAS:
		/* git runs "!..." with the shell; otherwise it splits the
		 * value as a command line (quotes and backslashes, as
		 * split_cmdline does) and reads the leading words that start
		 * with '-' as options of its own, -c and --config-env among
		 * them: a whole configuration, "-c alias.y=!sh y". */
		while (v && i < n && gc_space((unsigned char)v[i]))
			i++;
		return v && i < n && v[i] != '\0' && strchr("!-'\"\\", v[i]) != NULL;
	case GITCONFIG_NOT_BOOL:
		if (!v || n == 0)
			return false;
		for (i = 0; i < sizeof(bools) / sizeof(bools[0]); i++)
			if (gc_word(v, n, bools[i]))
				return false;
		return true;
	case GITCONFIG_NOT_UPDATE:
		if (!v)
			return false;
		for (i = 0; i < sizeof(updates) / sizeof(updates[0]); i++)
			if (gc_word(v, n, updates[i]))
				return false;
		return true;
	case GITCONFIG_EXT:
		return gc_ext(v, n);
	case GITCONFIG_EXT_BASE:
		sub = strchr(e->name, '.');
		last = strrchr(e->name, '.');
		return sub && last > sub && gc_ext(sub + 1, (size_t)(last - sub - 1));
	}
	return true;
}

const struct gitconfig_key *gitconfig_runs(const struct gitconfig_entry *e)
{
	const char *dot = strchr(e->name, '.');
	const char *last = strrchr(e->name, '.');
	size_t sec_len;

	if (!dot || !last)
		return NULL;
	sec_len = (size_t)(dot - e->name);
	last++;
	for (const struct gitconfig_key *k = gitconfig_keys; k->section; k++) {
		if (strlen(k->section) != sec_len || memcmp(k->section, e->name, sec_len) != 0)
			continue;
		if (strcmp(k->name, "*") != 0 && strcmp(k->name, last) != 0)
			continue;
		if (gc_when(k, e))
			return k;
	}
	return NULL;
}

/* Whether OLD has the very variable and value of E. */
struct gc_find {
	const struct gitconfig_entry *want;
	bool found;
};

static int gc_same(const struct gitconfig_entry *e, void *arg)
{
	struct gc_find *f = arg;
	const struct gitconfig_entry *w = f->want;

	if (strcmp(e->name, w->name) != 0 || (e->value == NULL) != (w->value == NULL))
		return 0;
	if (e->value && (e->value_len != w->value_len || memcmp(e->value, w->value, e->value_len)))
		return 0;
	f->found = true;
	return 1;
}

struct gc_judge {
	const char *old;
	size_t old_len;
	bool old_readable;
	struct gitconfig_verdict *v;
};

static int gc_judge_one(const struct gitconfig_entry *e, void *arg)
{
	struct gc_judge *j = arg;
	const struct gitconfig_key *k = gitconfig_runs(e);
	size_t n;

	if (!k)
		return 0;
	if (j->old && j->old_readable) {
		struct gc_find f = { e, false };

		gitconfig_each(j->old, j->old_len, gc_same, &f, NULL, NULL);
		if (f.found)
			return 0;
	}
	n = strlen(e->name);
	if (n >= sizeof(j->v->name))
		n = sizeof(j->v->name) - 1;
	memcpy(j->v->name, e->name, n);
	j->v->name[n] = '\0';
	j->v->line = e->line;
	j->v->what = k->runs;
	j->v->outcome = GITCONFIG_RUNS;
	return 1;
}

static int gc_nothing(const struct gitconfig_entry *e, void *arg)
{
	(void)e;
	(void)arg;
	return 0;
}

void gitconfig_judge(const char *text, size_t len, const char *old, size_t old_len,
		     struct gitconfig_verdict *v)
{
	struct gc_judge j = { old, old_len, false, v };
	const char *what = NULL;
	unsigned line = 0;
	int rc;

	memset(v, 0, sizeof(*v));
	if (old)
		j.old_readable = gitconfig_each(old, old_len, gc_nothing, NULL, NULL, NULL) == 0;
	rc = gitconfig_each(text, len, gc_judge_one, &j, &line, &what);
	if (rc < 0) {
		v->outcome = GITCONFIG_UNREADABLE;
		v->line = line;
		v->what = what;
		v->name[0] = '\0';
	}
}
