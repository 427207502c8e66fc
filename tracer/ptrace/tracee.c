#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xalloc.h"
#include "tracer/ptrace/tracee.h"

#define TRACEE_MIN_BUCKETS 64

static char *tracee_put(char **p, const char *s)
{
	char *at = *p;
	size_t n = strlen(s) + 1;

	memcpy(at, s, n);
	*p += n;
	return at;
}

struct tracee_info *tracee_info_new_exec(const char *exe, const char *const *argv, size_t argc,
					 const char *loader, const char *script, const char *name)
{
	size_t bytes;
	struct tracee_info *i;
	char *p;

	if (!argv)
		argc = 0;
	bytes = sizeof(struct tracee_info) + (argc + 1) * sizeof(char *) + strlen(exe) + 1;
	for (size_t k = 0; k < argc; k++)
		bytes += strlen(argv[k]) + 1;
	bytes += (loader ? strlen(loader) + 1 : 0) + (script ? strlen(script) + 1 : 0) +
		 (name ? strlen(name) + 1 : 0);
	i = xmalloc(bytes);
	i->refs = 1;
	i->script_arg = 0;
	i->n_pins = 0;
	i->parent = NULL;
	i->depth = 1;
	i->cut = false;
	i->argc = argc;
	i->argv = (char **)(i + 1);
	p = (char *)(i->argv + argc + 1);
	i->exe = tracee_put(&p, exe);
	for (size_t k = 0; k < argc; k++)
		i->argv[k] = tracee_put(&p, argv[k]);
	i->argv[argc] = NULL;
	i->loader = loader ? tracee_put(&p, loader) : NULL;
	i->script = script ? tracee_put(&p, script) : NULL;
	i->name = name ? tracee_put(&p, name) : NULL;
	return i;
}

struct tracee_info *tracee_info_new(const char *exe, const char *const *argv, size_t argc)
{
	return tracee_info_new_exec(exe, argv, argc, NULL, NULL, NULL);
}

struct tracee_info *tracee_info_ref(struct tracee_info *i)
{
	if (i)
		i->refs++;
	return i;
}

void tracee_info_unref(struct tracee_info *i)
{
	/* A line of programs is freed from the bottom up, without recursion. */
	while (i && --i->refs == 0) {
		struct tracee_info *parent = i->parent;

		free(i);
		i = parent;
	}
}

void tracee_info_link(struct tracee_info *i, struct tracee_info *prev)
{
	if (!i || i == prev) {
		tracee_info_unref(prev);
		return;
	}
	tracee_info_unref(i->parent);
	i->parent = NULL;
	i->cut = false;
	i->depth = 1;
	if (!prev)
		return;
	/* Bounded: a process that execs itself in a loop must not grow the
	 * supervisor. What is dropped is told (cut), never forgotten. */
	if (prev->depth >= RULES_LINEAGE_MAX) {
		i->cut = true;
		tracee_info_unref(prev);
		return;
	}
	i->parent = prev;
	i->depth = prev->depth + 1;
}

size_t tracee_info_lineage(const struct tracee_info *i, struct rules_event *out, size_t max,
			   bool *cut)
{
	size_t n = 0;

	*cut = false;
	for (; i && n < max; i = i->parent) {
		struct rules_event *e = &out[n++];

		memset(e, 0, sizeof(*e));
		e->kind = RULES_KIND_EXEC;
		e->exe = i->exe;
		e->argv = (const char *const *)i->argv;
		e->argc = i->argc;
		e->loader = i->loader;
		e->script = i->script;
		e->script_arg = i->script_arg;
		if (i->script)
			e->script_name = i->name;
		else
			e->exe_name = i->name;
		*cut = i->cut;
	}
	if (i)
		*cut = true;
	return n;
}

static size_t tracee_hash(pid_t pid, size_t mask)
{
	/* Fibonacci hashing: pids are sequential, spread them. */
	return (size_t)(((uint64_t)(uint32_t)pid * 0x9E3779B97F4A7C15ull) >> 32) & mask;
}

/* The share S stands for: two shares that met were merged into one, and
 * the groups of both keep pointing where they pointed. */
static struct tracee_share *tracee_share_root(struct tracee_share *s)
{
	while (s && s->into)
		s = s->into;
	return s;
}

static struct tracee_share *tracee_share_ref(struct tracee_share *s)
{
	s->refs++;
	return s;
}

/* C, a new process, joins the share of P (made on its first).  C may be
 * in a share already (a new process compared with every task can meet a
 * second one): the two become one, so that C counts once, and for as
 * long as it stays, in a share with both. */
static void tracee_share_join(struct tracee_share **p, struct tracee_share **c)
{
	struct tracee_share *rp, *rc;

	if (!*p) {
		*p = tracee_share_ref(xcalloc(1, sizeof(**p)));
		(*p)->procs = 1;
	}
	rp = tracee_share_root(*p);
	if (!*c) {
		*c = tracee_share_ref(*p);
		rp->procs++;
		return;
	}
	rc = tracee_share_root(*c);
	if (rc == rp)
		return;
	rc->into = tracee_share_ref(rp);
	rp->procs += rc->procs;
}

static void tracee_share_leave(struct tracee_share **s)
{
	struct tracee_share *r = tracee_share_root(*s), *next;

	if (r)
		r->procs--;
	for (struct tracee_share *at = *s; at && --at->refs == 0; at = next) {
		next = at->into;
		free(at);
	}
	*s = NULL;
}

void tracee_share_mem(struct tracee_group *parent, struct tracee_group *child)
{
	tracee_share_join(&parent->mem, &child->mem);
}

void tracee_share_fs(struct tracee_group *parent, struct tracee_group *child)
{
	tracee_share_join(&parent->fs, &child->fs);
}

void tracee_unshare_mem(struct tracee_group *g)
{
	tracee_share_leave(&g->mem);
}

bool tracee_shares(const struct tracee_group *g)
{
	return (g->mem && tracee_share_root(g->mem)->procs > 1) ||
	       (g->fs && tracee_share_root(g->fs)->procs > 1);
}

void tracee_table_init(struct tracee_table *t)
{
	memset(t, 0, sizeof(*t));
	t->buckets = xcalloc(TRACEE_MIN_BUCKETS, sizeof(*t->buckets));
	t->mask = TRACEE_MIN_BUCKETS - 1;
	t->groups = xcalloc(TRACEE_MIN_BUCKETS, sizeof(*t->groups));
	t->gmask = TRACEE_MIN_BUCKETS - 1;
}

static void tracee_free(struct tracee *e)
{
	free(e->pin_exit);
	tracee_info_unref(e->info);
	tracee_info_unref(e->pending_exec);
	free(e);
}

void tracee_table_free(struct tracee_table *t)
{
	for (size_t b = 0; b <= t->mask && t->buckets; b++) {
		struct tracee *e = t->buckets[b], *next;

		for (; e; e = next) {
			next = e->next;
			tracee_free(e);
		}
	}
	for (size_t b = 0; b <= t->gmask && t->groups; b++) {
		struct tracee_group *g = t->groups[b], *next;

		for (; g; g = next) {
			next = g->next;
			tracee_share_leave(&g->mem);
			tracee_share_leave(&g->fs);
			free(g);
		}
	}
	free(t->buckets);
	free(t->groups);
	memset(t, 0, sizeof(*t));
}

static void tracee_groups_grow(struct tracee_table *t)
{
	size_t nmask = t->gmask * 2 + 1;
	struct tracee_group **nb = xcalloc(nmask + 1, sizeof(*nb));

	for (size_t b = 0; b <= t->gmask; b++) {
		struct tracee_group *g = t->groups[b], *next;

		for (; g; g = next) {
			size_t h = tracee_hash(g->tgid, nmask);

			next = g->next;
			g->next = nb[h];
			nb[h] = g;
		}
	}
	free(t->groups);
	t->groups = nb;
	t->gmask = nmask;
}

static struct tracee_group *tracee_group_find(const struct tracee_table *t, pid_t tgid)
{
	struct tracee_group *g = t->groups[tracee_hash(tgid, t->gmask)];

	while (g && g->tgid != tgid)
		g = g->next;
	return g;
}

/* The group of TGID with one more task, made on its first. */
static struct tracee_group *tracee_group_join(struct tracee_table *t, pid_t tgid)
{
	struct tracee_group *g = tracee_group_find(t, tgid);
	size_t h;

	if (g) {
		g->tasks++;
		return g;
	}
	if (t->ngroups + 1 > (t->gmask + 1) - (t->gmask + 1) / 4)
		tracee_groups_grow(t);
	g = xcalloc(1, sizeof(*g));
	g->tgid = tgid;
	g->tasks = 1;
	h = tracee_hash(tgid, t->gmask);
	g->next = t->groups[h];
	t->groups[h] = g;
	t->ngroups++;
	return g;
}

static void tracee_group_leave(struct tracee_table *t, struct tracee_group *g)
{
	struct tracee_group **pp;

	if (--g->tasks > 0)
		return;
	tracee_share_leave(&g->mem);
	tracee_share_leave(&g->fs);
	for (pp = &t->groups[tracee_hash(g->tgid, t->gmask)]; *pp && *pp != g; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = g->next;
	t->ngroups--;
	free(g);
}

size_t tracee_group_tasks(const struct tracee_table *t, pid_t tgid)
{
	const struct tracee_group *g = tracee_group_find(t, tgid);

	return g ? g->tasks : 0;
}

static void tracee_grow(struct tracee_table *t)
{
	size_t nmask = t->mask * 2 + 1;
	struct tracee **nb = xcalloc(nmask + 1, sizeof(*nb));

	for (size_t b = 0; b <= t->mask; b++) {
		struct tracee *e = t->buckets[b], *next;

		for (; e; e = next) {
			size_t h = tracee_hash(e->pid, nmask);

			next = e->next;
			e->next = nb[h];
			nb[h] = e;
		}
	}
	free(t->buckets);
	t->buckets = nb;
	t->mask = nmask;
}

struct tracee *tracee_find(const struct tracee_table *t, pid_t pid)
{
	struct tracee *e = t->buckets[tracee_hash(pid, t->mask)];

	while (e && e->pid != pid)
		e = e->next;
	return e;
}

static void tracee_link(struct tracee_table *t, struct tracee *e)
{
	size_t h;

	if (t->tasks + 1 > (t->mask + 1) - (t->mask + 1) / 4)
		tracee_grow(t);
	h = tracee_hash(e->pid, t->mask);
	e->next = t->buckets[h];
	t->buckets[h] = e;
	t->tasks++;
	if (e->pid == e->tgid)
		t->procs++;
	e->group = tracee_group_join(t, e->tgid);
}

static struct tracee *tracee_unlink(struct tracee_table *t, pid_t pid)
{
	struct tracee **pp = &t->buckets[tracee_hash(pid, t->mask)];
	struct tracee *e;

	while (*pp && (*pp)->pid != pid)
		pp = &(*pp)->next;
	e = *pp;
	if (!e)
		return NULL;
	*pp = e->next;
	e->next = NULL;
	t->tasks--;
	if (e->pid == e->tgid)
		t->procs--;
	if (e->spawn_pending)
		t->spawn_pending--;
	e->spawn_pending = false;
	tracee_group_leave(t, e->group);
	e->group = NULL;
	return e;
}

struct tracee *tracee_add(struct tracee_table *t, pid_t pid, pid_t tgid, pid_t ppid,
			  struct tracee_info *info)
{
	struct tracee *e = xcalloc(1, sizeof(*e));

	e->pid = pid;
	e->tgid = tgid;
	e->ppid = ppid;
	e->info = tracee_info_ref(info);
	tracee_link(t, e);
	return e;
}

void tracee_remove(struct tracee_table *t, pid_t pid)
{
	struct tracee *e = tracee_unlink(t, pid);

	if (e)
		tracee_free(e);
}

void tracee_set_spawn_pending(struct tracee_table *t, struct tracee *e, bool on)
{
	if (e->spawn_pending == on)
		return;
	e->spawn_pending = on;
	if (on)
		t->spawn_pending++;
	else
		t->spawn_pending--;
}

void tracee_foreach(const struct tracee_table *t, void (*fn)(struct tracee *e, void *arg),
		    void *arg)
{
	for (size_t b = 0; b <= t->mask; b++)
		for (struct tracee *e = t->buckets[b]; e; e = e->next)
			fn(e, arg);
}
