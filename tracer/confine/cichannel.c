/* CI's own channels (cichannel.h).  The entries are parsed as the
 * GitHub Actions runner parses them: a line "NAME=VALUE", or "NAME<<DELIM"
 * followed by lines up to one that is DELIM; in $GITHUB_PATH, one path a
 * line.  What this file cannot read as an entry is taken out too: the
 * runner must never see an entry the supervisor did not judge. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/log.h"
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
};
/* ...and every variable of these families (LD_PRELOAD, LD_AUDIT,
 * LD_LIBRARY_PATH; GIT_CONFIG_GLOBAL, GIT_CONFIG_KEY_0, ...). */
static const char *const cichannel_code_prefixes[] = { "LD_", "GIT_CONFIG_" };

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

/* The whole file, at most CICHANNEL_MAX + 1 bytes (malloc'ed, *len);
 * NULL when it cannot be read. */
static char *cichannel_read(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	char *buf;
	size_t got = 0;
	struct stat st;

	*len = 0;
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return NULL;
	}
	buf = xmalloc(CICHANNEL_MAX + 2);
	while (got < CICHANNEL_MAX + 1) {
		ssize_t n = read(fd, buf + got, CICHANNEL_MAX + 1 - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = 0;
	*len = got;
	return buf;
}

void cichannel_start(struct cichannels *c)
{
	static const char *const vars[] = { [CICHANNEL_ENV] = "GITHUB_ENV",
					    [CICHANNEL_PATH] = "GITHUB_PATH" };

	memset(c, 0, sizeof(*c));
	for (int k = CICHANNEL_ENV; k <= CICHANNEL_PATH; k++) {
		const char *p = getenv(vars[k]);
		struct cichannel *ch = &c->v[k];

		ch->kind = (enum cichannel_kind)k;
		if (!p || p[0] != '/')
			continue;
		ch->before = cichannel_read(p, &ch->before_len);
		if (!ch->before)
			continue;
		if (ch->before_len > CICHANNEL_MAX) {
			/* Not ours to judge: what the job wrote before it. */
			free(ch->before);
			ch->before = NULL;
			continue;
		}
		ch->path = xstrdup(p);
	}
}

/* The line at P (to before its '\n', without a '\r' before that): its
 * length in *N; the next line's start returned (END at the end). */
static const char *cichannel_line(const char *p, const char *end, size_t *n)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));
	const char *stop = nl ? nl : end;

	*n = (size_t)(stop - p);
	if (*n && p[*n - 1] == '\r')
		(*n)--;
	return nl ? nl + 1 : end;
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

static void cichannel_record(struct session *s, const struct cichannel *ch, const char *rule,
			     const char *why, const char *detail, bool audit)
{
	struct record r = { 0 };

	/* The processes are gone: the record names the command. */
	r.pid = s->main_pid;
	if (s->main_info) {
		r.exe = s->main_info->exe;
		r.argv = (const char *const *)s->main_info->argv;
		r.argc = s->main_info->argc;
	}
	r.no_cwd = true;
	r.event = "alert";
	r.action = audit ? "alert" : "deny";
	r.kind = SESSION_KIND_WRITE;
	r.port = -1;
	r.path = ch->path;
	r.rule = rule;
	r.why = why;
	r.detail = detail;
	record_emit(s, &r);
}

/* Judges the entries of SEG; the kept ones are appended to OUT (*OUT_LEN).
 * Returns how many were taken out. */
static size_t cichannel_judge(struct session *s, const struct cichannel *ch, const char *seg,
			      size_t seg_len, const char *root, char *out, size_t *out_len,
			      bool audit)
{
	const char *p = seg, *end = seg + seg_len;
	size_t refused = 0;

	while (p < end) {
		const char *start = p, *line = p, *eq, *hd;
		char name[128], why[256];
		size_t n, name_len;
		bool ok = true;

		p = cichannel_line(p, end, &n);
		if (n == 0)
			goto keep;
		if (ch->kind == CICHANNEL_PATH) {
			if (cichannel_under(line, n, root))
				goto keep;
			snprintf(name, sizeof(name), "%.*s", (int)(n < 100 ? n : 100), line);
			snprintf(why, sizeof(why),
				 "$GITHUB_PATH puts %s, outside the workspace, in front of every later "
				 "step's PATH", name);
			cichannel_record(s, ch, "write.ci-channel.github-path", why, name, audit);
			refused++;
			if (!audit)
				continue;
			goto keep;
		}
		eq = memchr(line, '=', n);
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

				p = cichannel_line(p, end, &k);
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
		cichannel_record(s, ch, "write.ci-channel.github-env", why,
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

static void cichannel_rewrite(const struct cichannel *ch, const char *text, size_t len)
{
	int fd = open(ch->path, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	size_t done = 0;

	if (fd < 0) {
		warn_msg("%s: cannot take the refused entries out: %s", ch->path, strerror(errno));
		return;
	}
	while (done < len) {
		ssize_t n = write(fd, text + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			warn_msg("%s: cannot take the refused entries out: %s", ch->path,
				 strerror(n < 0 ? errno : EIO));
			break;
		}
		done += (size_t)n;
	}
	close(fd);
}

void cichannel_finish(struct session *s, struct cichannels *c, const char *root)
{
	bool audit = s->policy->mode == RULES_MODE_AUDIT;

	for (int k = CICHANNEL_ENV; k <= CICHANNEL_PATH; k++) {
		struct cichannel *ch = &c->v[k];
		const char *seg;
		size_t len, seg_len, out_len, refused;
		char *now, *out;

		if (!ch->path)
			continue;
		now = cichannel_read(ch->path, &len);
		if (!now)
			continue;
		/* What the session added, or, where it rewrote what was
		 * there, all of it (the start's content is put back). */
		if (len >= ch->before_len && memcmp(now, ch->before, ch->before_len) == 0) {
			seg = now + ch->before_len;
			seg_len = len - ch->before_len;
		} else {
			seg = now;
			seg_len = len;
		}
		if (seg_len == 0 && seg != now) {
			free(now);
			continue;
		}
		out = xmalloc(ch->before_len + seg_len + 1);
		memcpy(out, ch->before, ch->before_len);
		out_len = ch->before_len;
		if (seg_len > CICHANNEL_MAX - ch->before_len) {
			cichannel_record(s, ch, k == CICHANNEL_ENV ? "write.ci-channel.github-env" :
					 "write.ci-channel.github-path",
					 "the session wrote more than agenttrace judges (4 MiB) to a "
					 "channel later steps read", NULL, audit);
			refused = 1;
			if (audit) {
				memcpy(out + out_len, seg, seg_len);
				out_len += seg_len;
			}
		} else {
			refused = cichannel_judge(s, ch, seg, seg_len, root, out, &out_len, audit);
		}
		if ((refused && !audit) || (seg == now && !audit && (out_len != len ||
								      memcmp(out, now, len))))
			cichannel_rewrite(ch, out, out_len);
		free(out);
		free(now);
	}
}

void cichannel_free(struct cichannels *c)
{
	for (int k = CICHANNEL_ENV; k <= CICHANNEL_PATH; k++) {
		free(c->v[k].path);
		free(c->v[k].before);
	}
	memset(c, 0, sizeof(*c));
}
