/* Where git finds a repository, judged when the session ends.
 *
 * The write rules judge a repository's configuration and hooks by name
 * (a repository's .git/config, its hooks, its submodules' git directories
 * in .git/modules).  git also finds a
 * repository by other names, each of which can lead a later `git status`
 * to a configuration no rule judged:
 *  - a ".git" file, "gitdir: PATH", naming any directory (git writes one
 *    for each submodule and worktree);
 *  - a "commondir" file in a git directory, naming the directory whose
 *    configuration and hooks it uses (git writes one for each worktree);
 *  - a directory that looks like a git directory ("HEAD" in it): git
 *    takes it as a bare repository where no valid ".git" comes first, and
 *    reads its own "config";
 *  - a symbolic link on the way to any of these (".git/modules/NAME").
 * None of these can be judged when it is written: a ".git" file is
 * written before the directory it names is filled, and what git does
 * with a name depends on everything beside it.  So the supervisor notes
 * the directories inside ${ROOT} where the session wrote such a name, or
 * renamed, linked or made a symbolic link, and when every process of the
 * session is gone it looks at what git would find there: a git directory
 * whose configuration and hooks are not where the write rules judge them
 * must hold no configuration that runs a program and no hook.  One that
 * does is made unreachable: the name the session wrote (the ".git" file,
 * the link, the "commondir", else the directory's "HEAD") is renamed to
 * NAME.agenttrace-refused, with a record; in audit mode, an alert alone.
 *
 * A directory named node_modules is not looked into: no one runs git in
 * a package's directory.  Past GITFIND_DIRS noted directories (and under
 * the preload backend, which notes nothing) the whole of ${ROOT} is
 * walked instead, and what changed in the session is judged. */
#ifndef AGENTTRACE_GITFIND_H
#define AGENTTRACE_GITFIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct session;
struct tracee;
struct tracee_info;

#define GITFIND_DIRS 4096

struct gitfind_dir {
	char *path;
	uint64_t hash;
	unsigned flags;            /* why it was noted (gitfind.c) */
	pid_t pid;                 /* the first process that wrote there */
	struct tracee_info *info;  /* its program (a reference), or NULL */
};

struct gitfind {
	char *root;                /* ${ROOT}, without a trailing '/' */
	size_t root_len;
	struct gitfind_dir *v;
	size_t n;
	size_t *set;               /* open addressing: an index into v plus 1; 0: empty */
	size_t set_cap;
	bool overflow;             /* more than GITFIND_DIRS: walk ${ROOT} */
};

/* ROOT: absolute; NULL or not absolute: nothing is noted or judged. */
void gitfind_start(struct gitfind *g, const char *root);

/* An allowed write of PATH (absolute, resolved) by the call SYSCALL of
 * task T (NULL: not known). */
void gitfind_note(struct gitfind *g, const char *syscall, const char *path,
		  const struct tracee *t);

/* After every process of the session is gone. */
void gitfind_finish(struct session *s, struct gitfind *g);

void gitfind_free(struct gitfind *g);

#endif
