/* CI's own channels (cichannel.h).  The entries are parsed as the
 * GitHub Actions runner parses them on Linux: $GITHUB_ENV is decoded by
 * its byte order mark and split at "\n" only (a "\r" is part of the line,
 * of a heredoc's delimiter too), each line "NAME=VALUE", or "NAME<<DELIM"
 * followed by lines up to one that is DELIM; $GITHUB_PATH is split at
 * "\n", "\r" and "\r\n", one path a line, and the paths are joined with
 * ":" in front of PATH.  What this file cannot read as an entry is taken
 * out too: the runner must never see an entry the supervisor did not
 * judge. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fullio.h"
#include "lib/log.h"
#include "lib/readfile.h"
#include "lib/xalloc.h"
#include "rules/load.h"
#include "rules/rules.h"
#include "tracer/confine/cichannel.h"
#include "tracer/record/record.h"
#include "tracer/session.h"

/* A channel's content beyond this is not judged entry by entry: what the
 * session added is taken out whole. */
#define CICHANNEL_MAX (4u << 20)

/* Variables that make later steps load or run code of the command's
 * choosing (doc/THREAT-MODEL.md, "CI's own channels"). */
static const char *const cichannel_code_vars[] = {
	"PATH", "BASH_ENV", "ENV", "PROMPT_COMMAND", "ZDOTDIR", "GCONV_PATH",
	"NODE_OPTIONS", "NODE_PATH", "PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME",
	"PYTHONUSERBASE", "PERL5OPT", "PERL5LIB", "PERLLIB", "RUBYOPT", "RUBYLIB",
	"JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "CLASSPATH",
	"DOTNET_STARTUP_HOOKS", "GIT_EXEC_PATH", "GIT_SSH", "GIT_SSH_COMMAND",
	"GIT_ASKPASS", "SSH_ASKPASS", "GIT_EXTERNAL_DIFF", "GIT_PAGER", "PAGER",
	/* bash, every later run: step: xtrace from SHELLOPTS expands PS4,
	 * command substitutions included; BASHOPTS sets extdebug and the
	 * like. */
	"SHELLOPTS", "BASHOPTS", "PS4",
	/* Where git and others read their configuration and templates
	 * (a ~/.gitconfig of the command's: core.fsmonitor, aliases), and
	 * the programs git runs. */
	"HOME", "XDG_CONFIG_HOME", "GIT_TEMPLATE_DIR", "GIT_PROXY_COMMAND", "GIT_EDITOR",
	"GIT_SEQUENCE_EDITOR", "EDITOR", "VISUAL",
	/* The program cargo runs in front of every rustc. */
	"RUSTC_WRAPPER", "RUSTC_WORKSPACE_WRAPPER", "CARGO_BUILD_RUSTC_WRAPPER",
	/* npm's configuration that runs code: the shell of its scripts,
	 * node's options, another .npmrc (npm reads either case). */
	"npm_config_script_shell", "NPM_CONFIG_SCRIPT_SHELL", "npm_config_node_options",
	"NPM_CONFIG_NODE_OPTIONS", "npm_config_userconfig", "NPM_CONFIG_USERCONFIG",
	"npm_config_globalconfig", "NPM_CONFIG_GLOBALCONFIG",
};
/* ...and every variable of these families (LD_PRELOAD, LD_AUDIT,
 * LD_LIBRARY_PATH; GIT_CONFIG_GLOBAL, GIT_CONFIG_KEY_0, ...; bash's
 * exported functions, BASH_FUNC_git%%, which replace a command by name). */
static const char *const cichannel_code_prefixes[] = { "LD_", "GIT_CONFIG_", "BASH_FUNC_" };

static bool cichannel_code_var(const char *name, size_t n)
{
	for (size_t i = 0; i < sizeof(cichannel_code_vars) / sizeof(cichannel_code_vars[0]); i++)
		if (strlen(cichannel_code_vars[i]) == n && memcmp(cichannel_code_vars[i], name, n) == 0)
			return true;
	for (size_t i = 0; i < sizeof(cichannel_code_prefixes) / sizeof(cichannel_code_prefixes[0]);
	     i++) {
		size_t k = strlen(cichannel_code_prefixes[i]);

		if (n >= k && memcmp(cichannel_code_prefixes[i], name, k) == 0)
			return true;
	}
	return false;
}

/* Adds the channel at absolute PATH (of KIND, named SHOWN in records):
 * what it holds now.  A GitHub channel must exist (the runner made it);
 * a dotenv report may not yet. */
static void cichannel_add(struct cichannels *c, enum cichannel_kind kind, const char *path,
			  const char *shown)
{
	struct cichannel *ch;
	struct stat st;
	int rc;

	if (c->n == sizeof(c->v) / sizeof(c->v[0]))
		return;
	ch = &c->v[c->n];
	memset(ch, 0, sizeof(*ch));
	ch->kind = kind;
	rc = readfile_at(AT_FDCWD, path, CICHANNEL_MAX, &ch->before, &ch->before_len, &st);
	/* Not ours to judge: what the job wrote before, past the bound;
	 * no channel a step may write. */
	if (rc < 0 && !(kind == CICHANNEL_DOTENV && rc == -ENOENT))
		return;
	ch->existed = rc == 0;
	ch->mode = rc == 0 ? st.st_mode & 07777 : 0644;
	ch->uid = rc == 0 ? st.st_uid : geteuid();
	ch->gid = rc == 0 ? st.st_gid : getegid();
	if (!ch->before)
		ch->before = xstrdup("");
	ch->path = xstrdup(path);
	ch->shown = xstrdup(shown);
	c->n++;
}

/* A dotenv report's name, as the job names it (relative to ROOT). */
static void cichannel_add_dotenv(struct cichannels *c, const char *root, const char *name,
				 size_t len)
{
	char *path, *shown;

	while (len && (name[len - 1] == ' ' || name[len - 1] == '\t' || name[len - 1] == '\r'))
		len--;
	if (len >= 2 && (name[0] == '"' || name[0] == '\'') && name[len - 1] == name[0]) {
		name++;
		len -= 2;
	}
	if (!len || !root)
		return;
	shown = xasprintf("the dotenv report %.*s", (int)len, name);
	path = name[0] == '/' ? xstrndup(name, len) : xasprintf("%s/%.*s", root, (int)len, name);
	for (size_t i = 0; i < c->n; i++)
		if (strcmp(c->v[i].path, path) == 0)
			goto out;
	cichannel_add(c, CICHANNEL_DOTENV, path, shown);
out:
	free(path);
	free(shown);
}

/* The dotenv reports .gitlab-ci.yml names ("dotenv: FILE", "dotenv:
 * [A, B]", or a list of "- FILE" lines under "dotenv:"), whichever job
 * names them: a line scan, not a YAML parser (includes from other files
 * are not followed; AGENTTRACE_GITLAB_DOTENV names those). */
static void cichannel_scan_gitlab_ci(struct cichannels *c, const char *root)
{
	char *path = xasprintf("%s/.gitlab-ci.yml", root), *text;
	size_t len;
	bool list = false;

	if (readfile_at(AT_FDCWD, path, 1u << 20, &text, &len, NULL) < 0) {
		free(path);
		return;
	}
	for (char *line = text, *next; line && *line; line = next) {
		char *p = line;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		while (*p == ' ' || *p == '\t')
			p++;
		if (list && p[0] == '-' && (p[1] == ' ' || p[1] == '\t')) {
			cichannel_add_dotenv(c, root, p + 2 + strspn(p + 2, " \t"),
					     strcspn(p + 2 + strspn(p + 2, " \t"), "#"));
			continue;
		}
		list = false;
		if (strncmp(p, "dotenv:", 7) != 0)
			continue;
		p += 7 + strspn(p + 7, " \t");
		if (!*p || *p == '#') {
			list = true;
		} else if (*p == '[') {
			for (char *q = p + 1; *q && *q != ']';) {
				size_t n = strcspn(q, ",]");

				cichannel_add_dotenv(c, root, q + strspn(q, " \t"), n - strspn(q, " \t"));
				q += n + (q[n] == ',');
			}
		} else {
			cichannel_add_dotenv(c, root, p, strcspn(p, "#"));
		}
	}
	free(text);
	free(path);
}

void cichannel_start(struct cichannels *c, const char *root)
{
	const char *p, *names;

	memset(c, 0, sizeof(*c));
	if ((p = getenv("GITHUB_ENV")) && p[0] == '/')
		cichannel_add(c, CICHANNEL_ENV, p, "$GITHUB_ENV");
	if ((p = getenv("GITHUB_PATH")) && p[0] == '/')
		cichannel_add(c, CICHANNEL_PATH, p, "$GITHUB_PATH");
	if (!(p = getenv("GITLAB_CI")) || !*p || !root)
		return;
	names = getenv("AGENTTRACE_GITLAB_DOTENV");
	if (!names || !*names) {
		cichannel_scan_gitlab_ci(c, root);
		return;
	}
	for (const char *q = names; *q;) {
		size_t n = strcspn(q, ":");

		cichannel_add_dotenv(c, root, q, n);
		q += n + (q[n] == ':');
	}
}

/* The line at P as the runner splits the channel KIND: its length in *N;
 * the next line's start returned (END at the end).  $GITHUB_ENV: to
 * before its '\n', a '\r' kept (the runner keeps it on Linux);
 * $GITHUB_PATH: to before '\n', '\r' or "\r\n" (StreamReader.ReadLine). */
static const char *cichannel_line(enum cichannel_kind kind, const char *p, const char *end,
				  size_t *n)
{
	const char *q = p;

	while (q < end && *q != '\n' && (kind == CICHANNEL_ENV || *q != '\r'))
		q++;
	*n = (size_t)(q - p);
	if (q == end)
		return end;
	if (*q == '\r' && q + 1 < end && q[1] == '\n')
		q++;
	return q + 1;
}

/* Where the job's last entry in BEFORE (LEN bytes, the start's content)
 * begins when the runner would read the session's bytes as part of it: a
 * last line without its line break, a heredoc without its delimiter.  LEN
 * when BEFORE ends between entries. */
static size_t cichannel_resume(enum cichannel_kind kind, const char *before, size_t len)
{
	const char *p = before, *end = before + len, *last = before;
	size_t n;

	if (len == 0)
		return 0;
	if (kind == CICHANNEL_PATH) {
		if (before[len - 1] == '\n' || before[len - 1] == '\r')
			return len;
		while (p < end) {
			last = p;
			p = cichannel_line(kind, p, end, &n);
		}
		return (size_t)(last - before);
	}
	while (p < end) {
		const char *line = p, *eq, *hd;
		bool closed = false;

		last = line;
		p = cichannel_line(kind, p, end, &n);
		eq = memchr(line, '=', n);
		hd = memmem(line, n, "<<", 2);
		if (!hd || (eq && eq < hd))
			continue;
		while (p < end) {
			const char *l = p;
			size_t k;

			p = cichannel_line(kind, p, end, &k);
			if (k == n - (size_t)(hd + 2 - line) && memcmp(l, hd + 2, k) == 0) {
				/* A delimiter without its '\n' goes on with
				 * what follows. */
				closed = p[-1] == '\n';
				break;
			}
		}
		if (!closed)
			return (size_t)(last - before);
	}
	return before[len - 1] == '\n' ? len : (size_t)(last - before);
}

static bool cichannel_under(const char *path, size_t n, const char *root)
{
	size_t r = root ? strlen(root) : 0;

	if (!root || n == 0 || path[0] != '/' || n < r || memcmp(path, root, r) != 0 ||
	    (n > r && path[r] != '/' && !(r == 1 && root[0] == '/')))
		return false;
	/* Lexically beneath: no ".." to climb out again. */
	for (size_t i = 0; i + 1 < n; i++)
		if (path[i] == '/' && path[i + 1] == '.' &&
		    (i + 2 == n || (path[i + 2] == '.' && (i + 3 == n || path[i + 3] == '/'))))
			return false;
	return true;
}

static const char *cichannel_rule(enum cichannel_kind kind)
{
	return kind == CICHANNEL_ENV ? "write.ci-channel.github-env" :
	       kind == CICHANNEL_PATH ? "write.ci-channel.github-path" :
	       "write.ci-channel.gitlab-dotenv";
}

/* The processes are gone: the record names the command. */
static void cichannel_record(struct session *s, const struct cichannel *ch, const char *rule,
			     const char *why, const char *detail, bool audit)
{
	record_end_write(s, 0, NULL, ch->path, rule, why, detail, audit);
}

/* Judges the entries of SEG; the kept ones are appended to OUT (*OUT_LEN).
 * Returns how many were taken out. */
static size_t cichannel_judge(struct session *s, const struct cichannel *ch, const char *seg,
			      size_t seg_len, bool at_start, const char *root, char *out,
			      size_t *out_len, bool audit)
{
	const char *p = seg, *end = seg + seg_len;
	size_t refused = 0;

	/* The runner drops a UTF-8 byte order mark at the file's start: the
	 * entries are what follows it. */
	if (at_start && seg_len >= 3 && memcmp(seg, "\xef\xbb\xbf", 3) == 0)
		p += 3;

	while (p < end) {
		const char *start = p, *line = p, *eq, *hd;
		char name[128], why[256];
		size_t n, name_len;
		bool ok = true;

		p = cichannel_line(ch->kind, p, end, &n);
		if (n == 0)
			goto keep;
		if (ch->kind == CICHANNEL_PATH) {
			/* The runner joins the entries with ':': one holding it
			 * is more than one directory, or an empty one (the
			 * current directory); a NUL ends PATH there. */
			bool one = !memchr(line, ':', n) && !memchr(line, '\0', n);

			if (one && cichannel_under(line, n, root))
				goto keep;
			snprintf(name, sizeof(name), "%.*s", (int)(n < 100 ? n : 100), line);
			snprintf(why, sizeof(why),
				 one ? "$GITHUB_PATH puts %s, outside the workspace, in front of every "
				 "later step's PATH" : "$GITHUB_PATH puts %s, which holds a ':' or a NUL "
				 "(more than one directory, an empty one), in front of every later "
				 "step's PATH", name);
			cichannel_record(s, ch, cichannel_rule(ch->kind), why, name, audit);
			refused++;
			if (!audit)
				continue;
			goto keep;
		}
		eq = memchr(line, '=', n);
		if (ch->kind == CICHANNEL_DOTENV) {
			/* NAME=VALUE, one a line; anything else makes GitLab
			 * refuse the whole report, which passes nothing on. */
			if (!eq || !cichannel_code_var(line, (size_t)(eq - line)))
				goto keep;
			name_len = (size_t)(eq - line);
			snprintf(name, sizeof(name), "%.*s", (int)(name_len < 100 ? name_len : 100), line);
			snprintf(why, sizeof(why),
				 "%s sets %s, which loads or runs code in every later job that takes "
				 "its variables", ch->shown, name);
			cichannel_record(s, ch, cichannel_rule(ch->kind), why, name, audit);
			refused++;
			if (!audit)
				continue;
			goto keep;
		}
		hd = memmem(line, n, "<<", 2);
		if (eq && (!hd || eq < hd)) {
			name_len = (size_t)(eq - line);
		} else if (hd) {
			size_t dn = n - (size_t)(hd + 2 - line), k;
			const char *delim = hd + 2;

			name_len = (size_t)(hd - line);
			ok = false;
			while (p < end) {
				const char *l = p;

				p = cichannel_line(ch->kind, p, end, &k);
				if (k == dn && memcmp(l, delim, dn) == 0) {
					ok = dn > 0;
					break;
				}
			}
		} else {
			name_len = 0;
			ok = false;
		}
		snprintf(name, sizeof(name), "%.*s", (int)(name_len < 100 ? name_len : 100), line);
		if (ok && name_len && !cichannel_code_var(line, name_len))
			goto keep;
		if (ok && name_len)
			snprintf(why, sizeof(why),
				 "$GITHUB_ENV sets %s, which loads or runs code in every later step "
				 "of the job", name);
		else
			snprintf(why, sizeof(why),
				 "$GITHUB_ENV holds what is no entry agenttrace can read (the runner "
				 "must not read what was not judged)");
		cichannel_record(s, ch, cichannel_rule(ch->kind), why,
				 name_len ? name : NULL, audit);
		refused++;
		if (!audit)
			continue;
keep:
		memcpy(out + *out_len, start, (size_t)(p - start));
		*out_len += (size_t)(p - start);
	}
	return refused;
}

/* The runner's File.ReadAllText decodes a file that starts with one of
 * these byte order marks as UTF-16 or UTF-32. */
static bool cichannel_wide(const char *text, size_t len)
{
	return (len >= 2 && (memcmp(text, "\xff\xfe", 2) == 0 || memcmp(text, "\xfe\xff", 2) == 0)) ||
	       (len >= 4 && memcmp(text, "\0\0\xfe\xff", 4) == 0);
}

/* Puts a new regular file with TEXT at the channel's name, whatever is
 * there now: a file written in place would write through a hard link the
 * command made to a file of its own, and a symlink, FIFO or directory at
 * the name is what the runner must not follow.  The new file is made
 * beside it and renamed over it; a directory is exchanged with it, and
 * left at the new file's temporary name unless it is empty. */
/* When no new file can be put there (a full file system, no inode
 * left): a regular file of its own is emptied and written in place (the
 * blocks the session's content held are free again); anything else at
 * the name is taken away, the runner then reads nothing.  Never left
 * holding what was refused. */
static void cichannel_fallback(const struct cichannel *ch, const char *text, size_t len, int why)
{
	int fd = open(ch->path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC), rc = -EBADF;
	struct stat st;

	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1) {
		rc = ftruncate(fd, 0) < 0 ? -errno : write_full(fd, text, len);
		if (rc < 0 && ftruncate(fd, 0) == 0) {
			warn_msg("%s: cannot put the judged content back (%s): the file is emptied, "
				 "the job's earlier entries too", ch->path, strerror(-why));
			rc = 0;
		} else if (rc == 0) {
			warn_msg("%s: cannot put a new file in its place (%s): the judged content is "
				 "written in place", ch->path, strerror(-why));
		}
	}
	if (fd >= 0)
		close(fd);
	if (rc == 0)
		return;
	if (unlink(ch->path) == 0 || (errno == EISDIR && rmdir(ch->path) == 0))
		warn_msg("%s: cannot put the judged content back (%s): the channel is removed",
			 ch->path, strerror(-why));
	else
		error_msg("%s: cannot put the judged content back (%s) nor remove it (%s): the "
			  "runner will read what agenttrace refused", ch->path, strerror(-why),
			  strerror(errno));
}

static void cichannel_replace(const struct cichannel *ch, const char *text, size_t len)
{
	char *tmp = xasprintf("%s.agenttrace-XXXXXX", ch->path);
	int fd = mkostemp(tmp, O_CLOEXEC), rc;

	if (fd < 0) {
		cichannel_fallback(ch, text, len, -errno);
		free(tmp);
		return;
	}
	rc = write_full(fd, text, len);
	if (rc == 0 && fchmod(fd, ch->mode) < 0)
		rc = -errno;
	/* The runner's own user must read and write it still. */
	if (rc == 0 && geteuid() == 0 && fchown(fd, ch->uid, ch->gid) < 0)
		rc = -errno;
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, ch->path) < 0) {
		rc = -errno;
		if ((rc == -EISDIR || rc == -ENOTEMPTY || rc == -EEXIST) &&
		    renameat2(AT_FDCWD, tmp, AT_FDCWD, ch->path, RENAME_EXCHANGE) == 0) {
			if (rmdir(tmp) < 0)
				warn_msg("%s: the directory the command left there is now %s",
					 ch->path, tmp);
			free(tmp);
			return;
		}
	}
	if (rc < 0) {
		unlink(tmp);
		cichannel_fallback(ch, text, len, rc);
	}
	free(tmp);
}

void cichannel_finish(struct session *s, struct cichannels *c, const char *root)
{
	bool audit = s->policy->mode == RULES_MODE_AUDIT;

	for (size_t k = 0; k < c->n; k++) {
		struct cichannel *ch = &c->v[k];
		const char *rule = cichannel_rule(ch->kind);
		const char *add;
		size_t len, add_len, text_len, resume, out_len, refused;
		char *now, *text, *out;
		struct stat st;
		bool shared, rewritten;
		int rc;

		if (!ch->path)
			continue;
		rc = readfile_at(AT_FDCWD, ch->path, CICHANNEL_MAX, &now, &len, &st);
		if (rc == -ENOENT) {
			/* Taken away: back with what the job had written (no
			 * dotenv report at all passes nothing on). */
			if (ch->kind != CICHANNEL_DOTENV)
				cichannel_replace(ch, ch->before, ch->before_len);
			continue;
		}
		if (rc < 0 && rc != -EFBIG) {
			cichannel_record(s, ch, rule,
					 rc == -EINVAL || rc == -ELOOP ?
					 "the channel is not a regular file now: the runner would read "
					 "what agenttrace did not judge, or wait on it" :
					 "the channel cannot be read: the runner would read what "
					 "agenttrace did not judge", NULL, audit);
			if (!audit)
				cichannel_replace(ch, ch->before, ch->before_len);
			continue;
		}
		if (rc == -EFBIG) {
			cichannel_record(s, ch, rule,
					 "the session wrote more than agenttrace judges (4 MiB) to a "
					 "channel later steps read", NULL, audit);
			if (!audit)
				cichannel_replace(ch, ch->before, ch->before_len);
			continue;
		}
		/* A report the session made keeps its owner and mode. */
		if (!ch->existed) {
			ch->mode = st.st_mode & 07777;
			ch->uid = st.st_uid;
			ch->gid = st.st_gid;
		}
		/* What the session added, or, where it rewrote what was
		 * there, all of it (the start's content is put back). */
		rewritten = len < ch->before_len || memcmp(now, ch->before, ch->before_len) != 0;
		add = rewritten ? now : now + ch->before_len;
		add_len = rewritten ? len : len - ch->before_len;
		/* A hard link to a file of the command's: judged as any
		 * content, and never written in place. */
		shared = st.st_nlink != 1;
		if (add_len == 0 && !rewritten && !shared) {
			free(now);
			continue;
		}
		/* The file the runner is to read: the start's content, then
		 * what was added.  Judged from the job's last entry when the
		 * runner would read the first added bytes as part of it. */
		text_len = ch->before_len + add_len;
		text = xmalloc(text_len + 1);
		memcpy(text, ch->before, ch->before_len);
		memcpy(text + ch->before_len, add, add_len);
		resume = cichannel_resume(ch->kind, ch->before, ch->before_len);
		out = xmalloc(text_len + 1);
		memcpy(out, ch->before, resume);
		out_len = resume;
		if (cichannel_wide(text, text_len)) {
			/* Decoded as UTF-16 or UTF-32 by the runner: no byte
			 * judged here means what it reads. */
			cichannel_record(s, ch, rule,
					 "the channel starts with a UTF-16 or UTF-32 byte order mark: "
					 "the runner would read what agenttrace did not judge", NULL,
					 audit);
			refused = 1;
			memcpy(out, ch->before, ch->before_len);
			out_len = ch->before_len;
			if (audit) {
				memcpy(out + out_len, add, add_len);
				out_len += add_len;
			}
		} else {
			refused = cichannel_judge(s, ch, text + resume, text_len - resume, resume == 0,
						  root, out, &out_len, audit);
		}
		if (!audit && (refused || shared || (rewritten && (out_len != len ||
								     memcmp(out, now, len)))))
			cichannel_replace(ch, out, out_len);
		free(text);
		free(out);
		free(now);
	}
}

void cichannel_free(struct cichannels *c)
{
	for (size_t k = 0; k < c->n; k++) {
		free(c->v[k].path);
		free(c->v[k].shown);
		free(c->v[k].before);
	}
	memset(c, 0, sizeof(*c));
}
