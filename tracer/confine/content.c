/* Calls that rules judging content decide (tracer/confine/content.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/fs.h>

#include "lib/syscall-rename.h"
#include "rules/rules.h"
#include "tracer/confine/content.h"
#include "tracer/confine/mask.h"
#include "tracer/confine/landlock.h"
#include "tracer/confine/replace.h"
#include "tracer/confine/survive.h"
#include "tracer/judge.h"
#include "tracer/session.h"
#include "tracer/stop.h"
#include "tracer/syscall/call.h"
#include "tracer/syscall/path.h"

#define CONTENT_LOCK_SUFFIX ".lock"

/* The why of the last refusal (records are written before the next). */
static char content_why[2 * PATH_MAX + 256];

static bool content_is(const char *name, const char *a, const char *b, const char *c)
{
	return name && (!strcmp(name, a) || !strcmp(name, b) || (c && !strcmp(name, c)));
}

static bool content_is_rename(const char *name)
{
	return content_is(name, "rename", "renameat", "renameat2");
}

/* How content_verdict() records. */
#define CONTENT_FRAMES 0x1  /* with the caller's backtrace: never after the
			     * supervisor changed anything (the notify engine
			     * may have the caller make the call again to
			     * unwind it) */
#define CONTENT_NO_SUGGEST 0x2 /* no layer admits it by naming its object */

/* A verdict of content rule R on event EVENT of C, for WHY, under the
 * mode (audit: an alert, the call goes on), recorded as HOW says. */
static void content_verdict(struct session *s, struct tracee *t, const struct call *c,
			    struct judge_call *jc, struct judge_verdict *v,
			    struct stop_answer *a, const struct rules_rule *r, size_t event,
			    const char *why, unsigned how)
{
	enum rules_action eff = rules_effective(s->policy, RULES_ACTION_DENY);
	struct judge_who w;

	memset(v, 0, sizeof(*v));
	v->action = RULES_ACTION_DENY;
	v->effective = eff;
	v->kind = (int)c->events[event].kind;
	v->event = event;
	/* A suggestion names the event's own path, which would exempt that
	 * path, not the files beneath it that put it on the way. */
	if (how & CONTENT_NO_SUGGEST)
		v->rule_id = rules_string(s->policy, r->id);
	else
		v->rule = r;
	v->why = why;
	v->err = eff == RULES_ACTION_DENY ? c->deny_errno : 0;
	if (v->err) {
		a->how = STOP_RETURN;
		a->ret = -(long)v->err;
	}
	judge_who_of_task(&w, t);
	if (!(how & CONTENT_FRAMES))
		w.stopped_tid = 0;
	judge_record(s, &w, jc, v);
}

/* What PATH is now, without following it: 'd' a directory, 'l' a
 * symbolic link, 'f' anything else, 0 none. */
static char content_type(const char *path)
{
	struct stat st;

	if (!path || lstat(path, &st) < 0)
		return 0;
	return S_ISDIR(st.st_mode) ? 'd' : S_ISLNK(st.st_mode) ? 'l' : 'f';
}

/* The content rule event I's path is on the way to (rules.h,
 * rules_content_on_the_way), as a directory (TYPE 'd') or as a symbolic
 * link at a name the rule's pattern names ('l'). */
static const struct rules_rule *content_way_of(const struct session *s, const struct call *c,
					       size_t i, char type)
{
	if (i >= c->n_events || c->events[i].kind != RULES_KIND_WRITE || !c->events[i].path)
		return NULL;
	return rules_content_on_the_way(s->policy, c->events[i].path, type == 'l');
}

/* ---- a directory renamed into a rule's reach ---- */

/* Bounds of the look into a directory renamed into a content rule's
 * reach: beyond them, what it holds is not known, and it is refused. */
#define CONTENT_WALK_ENTRIES 100000
#define CONTENT_WALK_DEPTH 64

struct content_walk {
	const struct rules_policy *p;
	char path[PATH_MAX];          /* where the entry would be: the destination + its name */
	size_t n;
	size_t entries;
	const struct rules_rule *rule; /* the content rule that would judge it */
	const char *unknown;          /* why the tree cannot be told */
	bool any_deny;                /* any deny rule refusing an entry there, content or not */
	/* With any_deny: where the entry is now (the source + its name), and
	 * whether RULE is a read deny rule that names it there and not at
	 * PATH (the rename would take it out of that rule's sight) */
	char from[PATH_MAX];
	size_t from_n;
	bool hidden;
	/* The first entry taken out of a read alert rule's sight, the walk
	 * going on: that rule, its name now and the name it would get */
	const struct rules_rule *alert;
	char alert_from[PATH_MAX], alert_to[PATH_MAX];
};

/* The read rule that names FROM, where a rename takes the file, and
 * would not name TO as strictly (a deny rule, or an alert rule where
 * nothing at TO is more than allowed): NULL for none.  A symbolic link is
 * read as what it leads to, wherever it goes. */
static const struct rules_rule *content_hidden(const struct rules_policy *p, const char *from,
					       const char *to)
{
	struct rules_event was = { .kind = RULES_KIND_READ, .path = from };
	struct rules_event will = { .kind = RULES_KIND_READ, .path = to };
	struct rules_verdict wv, nv;

	if (rules_decide(p, &was, &wv) < 0 || wv.action == RULES_ACTION_ALLOW)
		return NULL;
	if (rules_decide(p, &will, &nv) == 0 && nv.action >= wv.action)
		return NULL;
	return wv.rule;
}

/* Whether a content rule judges a write of PATH. */
static bool content_judged_at(const struct rules_policy *p, const char *path)
{
	struct rules_event ev = { .kind = RULES_KIND_WRITE, .path = path };
	struct rules_verdict v;

	return rules_decide(p, &ev, &v) == 0 && v.rule && v.rule->content;
}

/* "/" NAME (LEN bytes) after the *N bytes of PATH (PATH_MAX): false when
 * it does not fit. */
static bool content_join(char *path, size_t *n, const char *name, size_t len)
{
	if (*n + 1 + len >= PATH_MAX)
		return false;
	path[*n] = '/';
	memcpy(path + *n + 1, name, len + 1);
	*n += 1 + len;
	return true;
}

static void content_walk_dir(struct content_walk *w, int dfd, unsigned depth)
{
	DIR *d = fdopendir(dfd);
	struct dirent *e;

	if (!d) {
		close(dfd);
		w->unknown = "a directory in it cannot be read";
		return;
	}
	while (!w->rule && !w->unknown && (e = readdir(d))) {
		size_t len = strlen(e->d_name), at = w->n, from_at = w->from_n;
		unsigned char type = e->d_type;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (++w->entries > CONTENT_WALK_ENTRIES) {
			w->unknown = "it holds more entries than the check looks at";
			break;
		}
		if (!content_join(w->path, &w->n, e->d_name, len) ||
		    (w->any_deny && !content_join(w->from, &w->from_n, e->d_name, len))) {
			w->unknown = "a path in it is too long";
			break;
		}
		if (type == DT_UNKNOWN) {
			struct stat st;

			if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
				type = DT_REG;
			else
				type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISLNK(st.st_mode) ? DT_LNK : DT_REG;
		}
		if (w->any_deny) {
			struct rules_event ev = { .kind = RULES_KIND_WRITE, .path = w->path };
			const struct rules_rule *r;
			struct rules_verdict v;

			/* A content rule's files are the walk below's, or stay
			 * judged where the same rule judged them (a repository
			 * moved within the project); one that arrives from a
			 * name no content rule judges is refused: its content
			 * was never looked at. */
			if (rules_decide(w->p, &ev, &v) == 0 && v.rule && v.action == RULES_ACTION_DENY &&
			    (!v.rule->content || !content_judged_at(w->p, w->from))) {
				w->rule = v.rule;
				break;
			}
			/* A link at a name on the way to what a deny rule
			 * refuses leads the writes by those names elsewhere. */
			if (type == DT_LNK && (r = rules_deny_on_the_way(w->p, w->path))) {
				w->rule = r;
				break;
			}
			r = type == DT_LNK ? NULL : content_hidden(w->p, w->from, w->path);
			if (r && r->action == RULES_ACTION_DENY) {
				w->rule = r;
				w->hidden = true;
				break;
			}
			if (r && !w->alert) {
				w->alert = r;
				memcpy(w->alert_from, w->from, w->from_n + 1);
				memcpy(w->alert_to, w->path, w->n + 1);
			}
		}
		if (type == DT_DIR) {
			int fd;

			if (depth + 1 >= CONTENT_WALK_DEPTH) {
				w->unknown = "it is deeper than the check looks";
			} else if ((fd = openat(dirfd(d), e->d_name,
						O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
				w->unknown = "a directory in it cannot be read";
			} else {
				content_walk_dir(w, fd, depth + 1);
			}
		} else if (w->any_deny) {
			/* Judged above, as any entry. */
		} else if (type == DT_LNK) {
			w->rule = rules_content_on_the_way(w->p, w->path, true);
		} else {
			struct rules_event ev = { .kind = RULES_KIND_WRITE, .path = w->path };
			struct rules_verdict v;

			if (rules_decide(w->p, &ev, &v) == 0 && v.rule && v.rule->content &&
			    v.action == RULES_ACTION_DENY)
				w->rule = v.rule;
		}
		if (!w->rule) {
			w->n = at;
			w->from_n = from_at;
		}
		w->path[w->n] = '\0';
		w->from[w->from_n] = '\0';
	}
	closedir(d);
}

/* Walks FROM, a directory renamed to TO, as if its entries stood at TO:
 * W filled (ANY_DENY: every deny rule, else the content rules judge).
 * False when nothing was walked (TO too long, FROM gone: the kernel's
 * answer to the rename). */
static bool content_walk_tree(const struct session *s, const char *from, const char *to,
			      bool any_deny, struct content_walk *w)
{
	size_t n = strlen(to);
	int fd;

	memset(w, 0, sizeof(*w));
	w->p = s->policy;
	w->any_deny = any_deny;
	if (n >= sizeof(w->path))
		return false;
	memcpy(w->path, to, n + 1);
	w->n = n;
	if (any_deny) {
		w->from_n = strlen(from);
		if (w->from_n >= sizeof(w->from))
			return false;
		memcpy(w->from, from, w->from_n + 1);
	}
	fd = open(from, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return false;
	content_walk_dir(w, fd, 0);
	return true;
}

/* FROM, a directory renamed to TO where a content rule could judge what
 * it holds but not where it was: the first thing in it that rule would
 * judge at TO (W->path), or why its content cannot be told.  True when
 * it is refused. */
static bool content_import(const struct session *s, const char *from, const char *to,
			   struct content_walk *w)
{
	if (rules_content_reach(s->policy, from) || !rules_content_reach(s->policy, to))
		return false;
	return content_walk_tree(s, from, to, false, w) && (w->rule || w->unknown);
}

/* FROM, a directory renamed to TO: the first entry it holds that a deny
 * rule refuses at TO (W->path), or that a read deny rule refuses at its
 * name in FROM (W->from) and not at TO (W->hidden: mv config c2 would make
 * config/secrets.yml readable as c2/secrets.yml), or why what it holds
 * cannot be told.
 * True when it is refused: a tree made under another name and renamed
 * into place (mkdir -p .gh/workflows, then mv .gh .github) writes what it
 * holds at names the policy protects.  A tree past the walk's bounds (or
 * with a directory that cannot be read) is refused where a deny rule
 * could refuse something beneath TO (W->rule then that rule): padding
 * the tree must not hide what it holds. */
static bool content_tree_denied(const struct session *s, const char *from, const char *to,
				struct content_walk *w)
{
	const struct rules_rule *r;

	if (!content_walk_tree(s, from, to, true, w))
		return false;
	if (!w->rule && w->unknown) {
		if ((w->rule = rules_deny_reach(s->policy, to)))
			return true;
		/* The same for what a read deny rule could name where the
		 * tree is now: padding the tree must not take it out of
		 * sight.  An alert rule's files past the bounds go unrecorded:
		 * a tree that big is ordinary (a package's, moved into
		 * node_modules), and an alert refuses nothing. */
		if ((r = rules_read_hidden(s->policy, from, to))) {
			w->rule = r;
			w->hidden = true;
			return true;
		}
	}
	w->unknown = NULL;
	return w->rule != NULL;
}

/* The event of C that reads the file at the name of its event I
 * (rules_add_name_reads()); I itself when there is none. */
static size_t content_read_of(const struct call *c, size_t i)
{
	for (size_t k = 2; k < c->n_events; k++)
		if (c->events[k].kind == RULES_KIND_READ && c->events[k].path == c->events[i].path)
			return k;
	return i;
}

/* A directory renamed from outside every content rule's reach into one's
 * (a tree made in /tmp or under node_modules, holding a .git): refused,
 * with a record, when it holds a file such a rule would judge there.  Any
 * directory renamed: refused when it holds what a deny rule refuses at its
 * new name, or what a read deny rule refuses at its old one only;
 * recorded with V an alert when it holds what a read alert rule names at
 * its old name only. */
static bool content_imports(struct session *s, struct tracee *t, const struct call *c,
			    struct judge_call *jc, struct judge_verdict *v, struct stop_answer *a,
			    char t0, char t1)
{
	static struct content_walk w;

	for (size_t i = 0; i < 2; i++) {
		const char *from = c->events[i].path, *to = c->events[1 - i].path;
		const struct rules_rule *r;

		if ((i == 0 ? t0 : t1) != 'd' || !content_import(s, from, to, &w))
			continue;
		r = w.rule ? w.rule : rules_content_reach(s->policy, to);
		if (w.rule)
			snprintf(content_why, sizeof(content_why),
				 "%s would bring %s, which no check of its content saw, to where %s "
				 "judges it", from, w.path, rules_string(s->policy, r->id));
		else
			snprintf(content_why, sizeof(content_why),
				 "%s goes where %s judges what it holds, but %s", from,
				 rules_string(s->policy, r->id), w.unknown);
		content_verdict(s, t, c, jc, v, a, r, 1 - i, content_why,
				CONTENT_FRAMES | CONTENT_NO_SUGGEST);
		return true;
	}
	static char alert_why[sizeof(content_why)];
	const struct rules_rule *alert = NULL;
	size_t alert_at = 0;

	for (size_t i = 0; i < 2; i++) {
		const char *from = c->events[i].path, *to = c->events[1 - i].path;

		if ((i == 0 ? t0 : t1) != 'd')
			continue;
		if (!content_tree_denied(s, from, to, &w)) {
			if (w.alert && !alert) {
				alert = w.alert;
				alert_at = content_read_of(c, i);
				snprintf(alert_why, sizeof(alert_why),
					 "%s would give %s, which %s alerts on, the name %s", from,
					 w.alert_from, rules_string(s->policy, alert->id), w.alert_to);
			}
			continue;
		}
		if (w.unknown && w.hidden)
			snprintf(content_why, sizeof(content_why),
				 "%s could hold what %s refuses to read, and give it a name it does "
				 "not refuse, but %s", from, rules_string(s->policy, w.rule->id),
				 w.unknown);
		else if (w.unknown)
			snprintf(content_why, sizeof(content_why),
				 "%s goes where %s refuses what it could hold, but %s", from,
				 rules_string(s->policy, w.rule->id), w.unknown);
		else if (w.hidden)
			snprintf(content_why, sizeof(content_why),
				 "%s would give %s, which %s refuses to read, the name %s", from,
				 w.from, rules_string(s->policy, w.rule->id), w.path);
		else
			snprintf(content_why, sizeof(content_why),
				 "%s would bring %s to where %s refuses it", from, w.path,
				 rules_string(s->policy, w.rule->id));
		content_verdict(s, t, c, jc, v, a, w.rule, w.hidden ? content_read_of(c, i) : 1 - i,
				content_why, CONTENT_FRAMES | CONTENT_NO_SUGGEST);
		return true;
	}
	/* An alerted file moved out of its rule's sight: the call goes, and
	 * its record is that alert (a .env read by its new name later is
	 * read with no record). */
	if (alert && v->action == RULES_ACTION_ALLOW) {
		memset(v, 0, sizeof(*v));
		v->action = RULES_ACTION_ALERT;
		v->effective = rules_effective(s->policy, RULES_ACTION_ALERT);
		v->kind = (int)c->events[alert_at].kind;
		v->event = alert_at;
		v->rule = alert;
		v->why = alert_why;
	}
	return false;
}

/* A symbolic link made, or moved, at a name on the way to what a write
 * deny rule refuses (rules_deny_on_the_way()): .claude -> .claude-real,
 * then .claude/settings.json written as .claude-real/settings.json, which
 * no rule names.  Event I of C is where the link would stand. */
static bool content_link_on_the_way(struct session *s, struct tracee *t, const struct call *c,
				    struct judge_call *jc, struct judge_verdict *v,
				    struct stop_answer *a, size_t i)
{
	const struct rules_rule *r;

	if (i >= c->n_events || c->events[i].kind != RULES_KIND_WRITE || !c->events[i].path ||
	    !(r = rules_deny_on_the_way(s->policy, c->events[i].path)))
		return false;
	snprintf(content_why, sizeof(content_why),
		 "%s is on the way to what %s refuses: a symbolic link there would take "
		 "writes by those names to where it leads, which no rule protects",
		 c->events[i].path, rules_string(s->policy, r->id));
	content_verdict(s, t, c, jc, v, a, r, i, content_why, CONTENT_FRAMES | CONTENT_NO_SUGGEST);
	return true;
}

/* A rename that moves a directory (or a symbolic link) from or to a place
 * on the way to what a content rule names, or a symlink made at such a
 * name: it would move judged files from under the check of their content.
 * Moving such a directory from one such place to another keeps them
 * judged (git mv of a submodule's worktree, say); what else it holds is
 * looked at as in any directory moved. */
static bool content_on_the_way(struct session *s, struct tracee *t, const struct call *c,
			       struct judge_call *jc, struct judge_verdict *v,
			       struct stop_answer *a)
{
	const struct rules_rule *r0 = NULL, *r1 = NULL;
	size_t at = 0;
	char t0, t1;

	if (content_is(c->name, "symlink", "symlinkat", NULL)) {
		/* The link is event 0 (the target is not written). */
		if (c->n_events < 1 || c->events[0].path != c->path[0])
			return false;
		r0 = content_way_of(s, c, 0, 'l');
		if (!r0)
			return content_link_on_the_way(s, t, c, jc, v, a, 0);
	} else if (content_is(c->name, "link", "linkat", NULL)) {
		/* A second name for a symbolic link (linkat() without
		 * AT_SYMLINK_FOLLOW) is one made there; no other file has a
		 * reason to stand at such a name. */
		return c->n_events >= 2 && content_link_on_the_way(s, t, c, jc, v, a, 1);
	} else if (content_is_rename(c->name) && c->n_events >= 2) {
		t0 = content_type(c->events[0].path);
		/* RENAME_EXCHANGE moves the destination to the source's name too. */
		t1 = syscall_exchanges(c->name, c->flags) ? content_type(c->events[1].path) : 0;
		if ((t0 == 'l' && content_link_on_the_way(s, t, c, jc, v, a, 1)) ||
		    (t1 == 'l' && content_link_on_the_way(s, t, c, jc, v, a, 0)))
			return true;
		if (t0 == 'd' || t0 == 'l' || t1 == 'd' || t1 == 'l') {
			char type = t0 == 'd' || t1 == 'd' ? 'd' : 'l';

			r0 = content_way_of(s, c, 0, type);
			r1 = content_way_of(s, c, 1, type);
			/* From one such place to another the judged files stay
			 * judged; what else it holds is looked at as for any
			 * directory moved (a worktree's private directory made
			 * a repository's .git brings its hooks and config). */
			if (r0 && r1)
				return content_imports(s, t, c, jc, v, a, t0, t1);
			if (r1)
				at = 1;
			if (!r0 && !r1 && content_imports(s, t, c, jc, v, a, t0, t1))
				return true;
		}
	} else {
		return false;
	}
	if (!r0 && !r1)
		return false;
	snprintf(content_why, sizeof(content_why),
		 "%s is on the way to what %s names: a %s there would move those files from "
		 "under the check of their content",
		 c->events[at].path, rules_string(s->policy, (r0 ? r0 : r1)->id),
		 content_is_rename(c->name) ? "rename" : "symbolic link");
	content_verdict(s, t, c, jc, v, a, r0 ? r0 : r1, at, content_why,
			CONTENT_FRAMES | CONTENT_NO_SUGGEST);
	return true;
}

/* PATH's directory into DIR and its base name's offset; false when it
 * has none or is too long. */
static bool content_split(const char *path, char *dir, size_t size, const char **base)
{
	const char *slash = strrchr(path, '/');
	size_t n;

	if (!slash || !slash[1])
		return false;
	n = slash == path ? 1 : (size_t)(slash - path);
	if (n >= size)
		return false;
	memcpy(dir, path, n);
	dir[n] = '\0';
	*base = slash + 1;
	return true;
}

/* LOCK is TARGET's own lock: TARGET".lock", the same directory. */
static bool content_own_lock(const char *lock, const char *target)
{
	size_t n = strlen(target);

	return strlen(lock) == n + strlen(CONTENT_LOCK_SUFFIX) && !strncmp(lock, target, n) &&
	       !strcmp(lock + n, CONTENT_LOCK_SUFFIX);
}

/* The rename of C's lock onto its target (event 1), which content rule
 * R refused as a plain write. */
static bool content_replace(struct session *s, struct tracee *t, const struct call *c,
			    struct judge_call *jc, struct judge_verdict *v, struct stop_answer *a)
{
	const struct rules_rule *r = v->rule;
	const char *lock = c->path[0], *target = c->path[1], *lock_base, *target_base;
	char dir[PATH_MAX], temp[PATH_MAX], token[17];
	struct rules_event tev = { .kind = RULES_KIND_WRITE };
	struct rules_verdict tv;
	struct judge_verdict rest;
	struct replace_result res;
	struct judge_who w;
	bool force = rules_effective(s->policy, RULES_ACTION_DENY) != RULES_ACTION_DENY;
	int out;

	if (c->n_events < 2 || v->event != 1 || c->events[0].path != lock ||
	    c->events[1].path != target)
		return false;
	if (c->flags && !strcmp(c->name, "renameat2")) {
		snprintf(content_why, sizeof(content_why),
			 "renameat2 with flags onto %s, whose content is judged: only a plain "
			 "rename of its lock replaces it", target);
		content_verdict(s, t, c, jc, v, a, r, 1, content_why, CONTENT_FRAMES);
		return true;
	}
	if (!content_own_lock(lock, target) || !content_split(target, dir, sizeof(dir), &target_base))
		return false; /* the rule's plain deny */
	lock_base = lock + (target_base - target);

	/* What the rest of the policy says of both names. */
	jc->content_aside = true;
	judge_decide(s, jc, &rest);
	jc->content_aside = false;
	if (rest.effective == RULES_ACTION_DENY || rest.action == RULES_ACTION_DENY) {
		*v = rest;
		return false;
	}
	/* The supervisor is not bound by Landlock: it writes only where the
	 * kernel would have let the caller. */
	out = landlock_uncovered(s, c);
	if (out >= 0) {
		judge_own(v, SESSION_KIND_WRITE, (size_t)out, RULES_ACTION_DENY,
			  LANDLOCK_UNCOVERED_RULE, LANDLOCK_UNCOVERED_WHY, EACCES);
		return false;
	}
	/* Its own file: a name nobody can have asked for before. */
	session_token(token);
	if ((size_t)snprintf(temp, sizeof(temp), "%s/%s.agenttrace-%s", dir, target_base, token) >=
	    sizeof(temp)) {
		a->how = STOP_RETURN;
		a->ret = -ENAMETOOLONG;
		return true;
	}
	tev.path = temp;
	if (rules_decide(s->policy, &tev, &tv) < 0 || tv.action == RULES_ACTION_DENY) {
		snprintf(content_why, sizeof(content_why),
			 "the replacement of %s needs a file of the supervisor's beside it, %s, "
			 "which the policy does not let the caller write", target, temp);
		content_verdict(s, t, c, jc, v, a, r, 1, content_why, CONTENT_FRAMES);
		return true;
	}

	replace_from_lock(t->pid, dir, lock_base, target_base, temp + strlen(dir) + 1, force,
			  &res);
	switch (res.outcome) {
	case REPLACE_DONE:
		a->how = STOP_RETURN;
		a->ret = 0;
		survive_note(s->survive, lock);
		survive_note(s->survive, target);
		judge_who_of_task(&w, t);
		w.stopped_tid = 0;
		if (res.check.outcome == GITCONFIG_CLEAN) {
			*v = rest;
			v->content = rules_content_name((enum rules_content)r->content);
			judge_record(s, &w, jc, v);
			return true;
		}
		break; /* audit: the bytes landed, the alert says what they set */
	case REPLACE_REFUSED:
		break;
	case REPLACE_BAD_LOCK:
		snprintf(content_why, sizeof(content_why),
			 "%s cannot replace %s, whose content is judged: %s", lock, target, res.why);
		content_verdict(s, t, c, jc, v, a, r, 1, content_why, CONTENT_FRAMES);
		return true;
	case REPLACE_FAILED:
		/* The kernel's own answer to the caller's rename (no lock, no
		 * permission): nothing happened, nothing to record. */
		a->how = STOP_RETURN;
		a->ret = -(long)res.err;
		return true;
	}
	if (res.check.outcome == GITCONFIG_RUNS)
		snprintf(content_why, sizeof(content_why), "the new %s sets %s (line %u): %s",
			 target, res.check.name, res.check.line, res.check.what);
	else
		snprintf(content_why, sizeof(content_why),
			 "the new %s is not git configuration this check reads as git would "
			 "(line %u: %s)", target, res.check.line, res.check.what);
	content_verdict(s, t, c, jc, v, a, r, 1, content_why,
			res.outcome == REPLACE_REFUSED ? CONTENT_FRAMES : 0);
	if (res.outcome == REPLACE_DONE) {
		a->how = STOP_RETURN;
		a->ret = 0;
	}
	return true;
}

/* ---- removals in a repository the session made ---- */

/* Whether PATH (absolute) lies in a directory named .git. */
static bool content_in_git(const char *path)
{
	return strstr(path, "/.git/") != NULL;
}

static int content_ts_cmp(const struct timespec *a, long long sec, unsigned nsec)
{
	if (a->tv_sec != sec)
		return a->tv_sec < sec ? -1 : 1;
	return a->tv_nsec < (long)nsec ? -1 : a->tv_nsec > (long)nsec;
}

/* Whether directory NAME at DIRFD ("": DIRFD itself) was made in the
 * session: born after the tick of the coarse clock (which stamps births)
 * it started in (one made in that tick before it looks the same: not
 * counted), and not later than now (a clock set back since is no
 * proof). */
static bool content_born_in_session(const struct session *s, int dirfd, const char *name)
{
	struct statx sx;
	struct timespec now;

	if (statx(dirfd, name, AT_SYMLINK_NOFOLLOW | (name[0] ? 0 : AT_EMPTY_PATH),
		  STATX_TYPE | STATX_BTIME, &sx) < 0 ||
	    !(sx.stx_mask & STATX_BTIME) || !S_ISDIR(sx.stx_mode) ||
	    clock_gettime(CLOCK_REALTIME_COARSE, &now) < 0)
		return false;
	return content_ts_cmp(&s->started_coarse, sx.stx_btime.tv_sec, sx.stx_btime.tv_nsec) < 0 &&
	       content_ts_cmp(&now, sx.stx_btime.tv_sec, sx.stx_btime.tv_nsec) >= 0;
}

/* An unlink of a file (not an rmdir). */
static bool content_is_removal(const struct call *c)
{
	return !strcmp(c->name, "unlink") ||
	       (!strcmp(c->name, "unlinkat") && !(c->flags & AT_REMOVEDIR));
}

/* Whether the git directory of PATH, a file of git's configuration that
 * task T removes, is one the session made: the file's own directory born
 * in the session.  Its configuration then ran nothing before the session,
 * and removing it (rm -rf of a clone, git's cleanup of a clone that
 * failed, the git directory of a submodule the session added) is the
 * rest of the policy's to judge.  A git directory that existed keeps its
 * configuration wherever it is moved (below a new repository's
 * .git/modules, say): a directory keeps its birth time, and the file
 * itself cannot be moved or linked out of it (the rule refuses both).
 * Without its configuration, a repository's .git could be emptied and a
 * .git file naming a directory of the session's own put in its place. */
static bool content_in_new_git(struct session *s, struct tracee *t, const char *path)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	int view, fd;
	bool ok;

	if (!content_in_git(path) || !slash || (size_t)(slash - path) >= sizeof(dir))
		return false;
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	view = mask_view_fd(s, t->pid);
	if (view < 0 && view != AT_FDCWD)
		return false;
	fd = openat(view, view == AT_FDCWD ? dir : dir + 1,
		    O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return false;
	ok = content_born_in_session(s, fd, "");
	close(fd);
	return ok;
}

bool content_removal_holds(const struct session *s, const struct call *c, int dfd)
{
	return content_in_git(c->events[0].path) && content_born_in_session(s, dfd, "");
}

bool content_stop(struct session *s, struct tracee *t, struct call *c, struct judge_call *jc,
		  struct judge_verdict *v, struct stop_answer *a)
{
	if (v->quiet || !c->name)
		return false;
	if (v->action != RULES_ACTION_DENY)
		return content_on_the_way(s, t, c, jc, v, a);
	if (!v->rule || !v->rule->content)
		return false;
	if (c->n_events == 1 && content_is_removal(c) &&
	    content_in_new_git(s, t, c->events[0].path)) {
		/* The engine that makes the unlink checks the directory it
		 * makes it in again. */
		c->removal_in_new_git = true;
		jc->content_aside = true;
		judge_decide(s, jc, v);
		jc->content_aside = false;
		return false;
	}
	if (c->n_events == 1 && content_is(c->name, "chmod", "fchmodat", "fchmodat2")) {
		/* No byte of the file changes. */
		jc->content_aside = true;
		judge_decide(s, jc, v);
		jc->content_aside = false;
		return false;
	}
	if (content_is_rename(c->name))
		return content_replace(s, t, c, jc, v, a);
	return false;
}
