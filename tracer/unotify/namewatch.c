/* Which calls another process can turn by a name it changes
 * (tracer/unotify/namewatch.h). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "lib/xalloc.h"
#include "rules/rules.h"
#include "tracer/confine/landlock.h"
#include "tracer/confine/mask.h"
#include "tracer/session.h"
#include "tracer/syscall/call.h"
#include "tracer/unotify/emulate-internal.h"
#include "tracer/unotify/namewatch.h"

/* A last name: "/" + a glob for match_path(), or a plain name. */
struct namewatch_name {
	char *text;
	size_t len;
	bool glob;
};

/* What the policy makes of last names, worked out at the first call. */
struct namewatch {
	/* "/" + the last component of each write deny or alert rule that
	 * names files inside the write roots (".gitlab-ci.yml", "*.pth"), a
	 * glob for match_path(). */
	struct namewatch_name *leaf;
	size_t n_leaf;
	/* "/" + each literal component, after its last "**", of a protected
	 * tree inside the write roots (".git" and "hooks" of the rule on
	 * .git/hooks in any directory of the project): a call that makes
	 * such a name may make such a tree. */
	struct namewatch_name *tree;
	size_t n_tree;
	/* The leading literal directories of those trees' rules ("/p/"
	 * for the project's): a directory moved in from elsewhere may hold
	 * such a tree, unmasked. */
	struct namewatch_name *tree_dir;
	size_t n_tree_dir;
	/* A protected tree no mask covers may exist: every write-class call
	 * is made by the engine. */
	bool unpinned;
};

/* Adds "/" + NAME[0..LEN) to V, once. */
static void namewatch_add(struct namewatch_name **v, size_t *n, const char *name, size_t len)
{
	char *g = xmalloc(len + 2);

	g[0] = '/';
	memcpy(g + 1, name, len);
	g[len + 1] = '\0';
	for (size_t i = 0; i < *n; i++)
		if (strcmp((*v)[i].text, g) == 0) {
			free(g);
			return;
		}
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = (struct namewatch_name){ .text = g, .len = len + 1,
						.glob = strcspn(g, "*?[\\") < len + 1 };
}

/* Whether the pattern TEXT, its first LEN bytes, can name a file inside
 * the write roots: where Landlock lets writes through (none in force:
 * anywhere), or where a glob may lead anywhere. */
static bool namewatch_inside_roots(const struct session *s, const char *text, size_t len)
{
	char path[PATH_MAX];

	if (!s->landlock || landlock_abi_in_force(s->landlock) <= 0 ||
	    strcspn(text, "*?[\\") < len)
		return true;
	if (len >= sizeof(path))
		return true;
	memcpy(path, text, len);
	path[len] = '\0';
	return landlock_covers(s->landlock, len ? path : "/");
}

/* The literal components of TEXT[0..LEN) after its last "**" one; with
 * none, the tree lies in one place, and its own name is the one. */
static void namewatch_tree_names(struct namewatch *w, const char *text, size_t len)
{
	size_t at = 0;

	for (size_t i = 0; i + 2 <= len; i++)
		if (text[i] == '*' && text[i + 1] == '*')
			at = i + 2;
	if (at == 0)
		for (size_t i = 0; i < len; i++)
			if (text[i] == '/')
				at = i + 1;
	while (at < len) {
		size_t end = at;

		while (end < len && text[end] != '/')
			end++;
		if (end > at && strcspn(text + at, "*?[\\") >= end - at)
			namewatch_add(&w->tree, &w->n_tree, text + at, end - at);
		at = end + 1;
	}
}

static struct namewatch *namewatch_of(struct session *s)
{
	static const enum rules_action actions[] = { RULES_ACTION_DENY, RULES_ACTION_ALERT };
	const struct rules_policy *p = s->policy;
	struct namewatch *w = s->namewatch;

	if (w)
		return w;
	w = s->namewatch = xcalloc(1, sizeof(*w));
	/* The protected trees that exist at the start are masked
	 * read-only; without the masks, or with a plan cut short, one may
	 * lie unmasked. */
	w->unpinned = !s->mask || !mask_in_force(s->mask) || s->mask->truncated;
	for (size_t a = 0; a < sizeof(actions) / sizeof(actions[0]); a++) {
		const struct rules_span *sp = &p->span[RULES_KIND_WRITE][actions[a]];

		for (uint32_t i = 0; i < sp->count; i++) {
			const char *text = rules_string(p, rules_rule_at(p, sp->first + i)->pat.text);
			const char *slash = strrchr(text, '/');
			size_t dir;

			if (!slash)
				continue;
			dir = (size_t)(slash - text);
			if (strcmp(slash + 1, "**") == 0) {
				if (namewatch_inside_roots(s, text, dir)) {
					size_t lit = strcspn(text, "*?[\\");

					namewatch_tree_names(w, text, dir);
					while (lit > 0 && text[lit - 1] != '/')
						lit--;
					if (lit > 1)
						namewatch_add(&w->tree_dir, &w->n_tree_dir, text + 1,
							      lit - 1);
				}
			} else if (namewatch_inside_roots(s, text, strlen(text))) {
				namewatch_add(&w->leaf, &w->n_leaf, slash + 1, strlen(slash + 1));
			}
		}
	}
	return w;
}

static bool namewatch_in(const struct namewatch_name *v, size_t n, const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;
	size_t len;

	if (!slash || !slash[1])
		return false;
	len = strlen(slash);
	for (size_t i = 0; i < n; i++)
		if (v[i].glob ? match_path(v[i].text, slash) :
				v[i].len == len && memcmp(v[i].text, slash, len) == 0)
			return true;
	return false;
}

/* Whether the rename C moves a directory into one of the places where
 * the tree rules apply from outside it: a repository made before the
 * session elsewhere, moved into the project, brings its hooks unmasked. */
static bool namewatch_moves_in(const struct namewatch *w, const struct call *c)
{
	struct stat st;

	for (size_t i = 0; i < w->n_tree_dir; i++) {
		const char *d = w->tree_dir[i].text;
		size_t n = w->tree_dir[i].len;

		if (strncmp(c->path[1], d, n) == 0 && strncmp(c->path[0], d, n) != 0)
			return lstat(c->path[0], &st) < 0 || S_ISDIR(st.st_mode);
	}
	return false;
}

/* Whether PATH leads through /proc (or /dev/fd, which leads there): a
 * process's descriptors, working directory and root, whose object
 * another process can change without changing a name. */
static bool namewatch_magic(const char *path)
{
	return strncmp(path, "/proc/", 6) == 0 || strcmp(path, "/proc") == 0 ||
	       strncmp(path, "/dev/fd", 7) == 0;
}

/* Whether event I of C names a file by a path (not an open descriptor). */
static bool namewatch_by_name(const struct call *c, unsigned i)
{
	return c->path[i][0] && !c->path_by_fd[i];
}

bool namewatch_exposed(struct session *s, const struct call *c, pid_t tgid, pid_t tid)
{
	const struct sockaddr_un *un = (const struct sockaddr_un *)&c->sockaddr;
	enum emulate_path_op op;
	struct namewatch *w;
	bool named = false, makes = false;
	unsigned n = c->n_events < 2 ? (unsigned)c->n_events : 2;

	if (c->sockaddr_len > offsetof(struct sockaddr_un, sun_path) &&
	    c->sockaddr.ss_family == AF_UNIX && un->sun_path[0] != '\0')
		return true;
	/* Every open comes here: a read leaves at once, before the name
	 * table is looked through. */
	if (c->is_open && (n == 0 || c->events[0].kind != RULES_KIND_WRITE))
		return false;
	op = c->is_open ? EMULATE_PATH_NONE : emulate_path_op_of(c);
	for (unsigned i = 0; i < n; i++)
		named |= namewatch_by_name(c, i);
	if (!named)
		return false;
	switch (op) {
	case EMULATE_CHMOD:
	case EMULATE_CHOWN:
	case EMULATE_SETXATTR:
	case EMULATE_REMOVEXATTR:
	case EMULATE_UTIMES:
	case EMULATE_OLDER_FORM:
	case EMULATE_TRUNCATE:
		return true;
	case EMULATE_PATH_NONE:
		if (!c->is_open || c->events[0].kind != RULES_KIND_WRITE)
			return false;
		break;
	default:
		makes = op != EMULATE_UNLINK && op != EMULATE_RMDIR;
		break;
	}
	w = namewatch_of(s);
	/* A name a protected tree is made of, made here (a directory, a
	 * rename's or a link's new name; a symlink to one): such a tree
	 * may now exist unmasked. */
	if (makes) {
		bool tree = namewatch_in(w->tree, w->n_tree, c->path[n - 1]) ||
			    namewatch_in(w->tree, w->n_tree, c->path[0]) ||
			    (op == EMULATE_SYMLINK &&
			     (namewatch_in(w->tree, w->n_tree, c->link_target) ||
			      namewatch_in(w->leaf, w->n_leaf, c->link_target) ||
			      namewatch_magic(c->link_target) || namewatch_magic(c->path[1])));

		if (tree || (op == EMULATE_RENAME && n == 2 && namewatch_moves_in(w, c)))
			w->unpinned = true;
	}
	if (w->unpinned)
		return true;
	/* Through another process's descriptor or working directory, which
	 * it can point elsewhere at any time. */
	for (unsigned i = 0; i < n; i++)
		if ((c->path_proc[i] > 0 && c->path_proc[i] != tgid) ||
		    (c->path_via[i] > 0 && c->path_via[i] != tgid && c->path_via[i] != tid))
			return true;
	for (unsigned i = 0; i < n; i++)
		if (namewatch_in(w->leaf, w->n_leaf, c->path[i]) ||
		    namewatch_in(w->tree, w->n_tree, c->path[i]))
			return true;
	return op == EMULATE_SYMLINK && namewatch_in(w->leaf, w->n_leaf, c->link_target);
}

void namewatch_free(struct session *s)
{
	struct namewatch *w = s->namewatch;

	if (!w)
		return;
	for (size_t i = 0; i < w->n_leaf; i++)
		free(w->leaf[i].text);
	for (size_t i = 0; i < w->n_tree; i++)
		free(w->tree[i].text);
	for (size_t i = 0; i < w->n_tree_dir; i++)
		free(w->tree_dir[i].text);
	free(w->leaf);
	free(w->tree);
	free(w->tree_dir);
	free(w);
	s->namewatch = NULL;
}
