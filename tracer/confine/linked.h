/* The files a deny rule names that have another name too: a hard link
 * made before the session (a backup of ~/.ssh, a project file linked to
 * ~/.bashrc).  A mask covers a name, not the file, and a rule matches a
 * name, so such a file is reachable by its other names unless the
 * supervisor knows it by device and inode.  Noted at the start, where the
 * mask plan finds the denied files (mask-plan.c: files with more than one
 * link, and the files in the trees the rules deny as a whole, within
 * LINKED_MAX_LISTED entries); every open and path event is then judged as
 * the denied file when it names the same inode (tracer/judge.c), and an
 * open the notify engine makes for the caller is checked on the file it
 * opened (tracer/unotify/emulate.c). */
#ifndef AGENTTRACE_LINKED_H
#define AGENTTRACE_LINKED_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#define LINKED_MAX 256          /* files noted; past it the plan says so */
#define LINKED_MAX_LISTED 2048  /* entries of denied trees looked at, all trees together */
#define LINKED_MAX_DEPTH 8      /* levels below a denied tree's top */

struct linked_file {
	dev_t dev;
	ino_t ino;
	char *path;  /* the name the rule denies */
};

struct linked {
	struct linked_file *v;
	size_t n;
	unsigned listed;
	bool truncated; /* a bound was reached: files past it are not known */
	char **trees;   /* denied trees still to walk */
	size_t n_trees;
	pid_t walker;   /* the process walking them (linked_start()), or 0 */
	int walker_fd;  /* what it found comes through this pipe */
	bool finished;  /* linked_finish() was called: the set is complete */
};

/* PATH, a file a deny rule names, lstat()ed into ST: noted when it has
 * another link. */
void linked_note(struct linked *l, const char *path, const struct stat *st);

/* DIR, a tree a deny rule names as a whole: its files with another
 * link are looked for by linked_start() and linked_finish(). */
void linked_want_tree(struct linked *l, const char *dir);

/* The walk of the wanted trees begins in a process of its own, beside
 * the rest of the start (under the default policy it is all of /etc:
 * about a fifth of a start's time when made in line).  Walked in line by
 * linked_finish() when no process can be made. */
void linked_start(struct linked *l);

/* The walk's findings taken into L, its process reaped; where it failed,
 * the trees are walked here.  Every question to L waits for this: the
 * supervisor calls it before it judges the command's first call. */
void linked_finish(struct linked *l);

/* Whether any file is noted: only then is an object's inode asked. */
static inline bool linked_any(const struct linked *l)
{
	return l && l->n > 0;
}

/* The noted file that is DEV:INO; NULL: none. */
const struct linked_file *linked_find(const struct linked *l, dev_t dev, ino_t ino);

/* The noted file PATH names (lstat: the name itself, as a judged path
 * is the object), when PATH is another name of it; NULL: none. */
const struct linked_file *linked_other_name(const struct linked *l, const char *path);

void linked_free(struct linked *l);

#endif
