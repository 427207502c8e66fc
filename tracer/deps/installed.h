/* What the session installed (the summary's "installed", doc/RECORDS.md):
 * read from what the package managers leave behind, not guessed from
 * their command lines.
 *
 *  - Python: every *.dist-info directory the session wrote (any
 *    site-packages, --target or --prefix dir) that an installer marked
 *    (its INSTALLER file): METADATA's Name and Version, and from
 *    direct_url.json (PEP 610) whether it came from a URL, a git
 *    repository or a local path rather than an index.
 *  - npm: every node_modules/.package-lock.json the session wrote (the
 *    hidden lockfile npm keeps of what node_modules holds): the packages
 *    it lists that the same file did not list at the start (the project
 *    snapshot's), with "resolved", "integrity" and "hasInstallScript".
 *  - cargo: every .crates2.json the session wrote (cargo install's record
 *    of what a root holds): the crates it lists that it did not list when
 *    the session first wrote it, with their source (registry, git, path).
 *  - yarn 1: every node_modules/.yarn-integrity the session wrote (yarn's
 *    record of the lockfile entries node_modules holds): the entries it
 *    did not list at the session's first write of it, their versions
 *    and sources from the project's yarn.lock; its "artifacts" name the
 *    packages whose install scripts ran.
 *  - yarn 2 and later (Berry): every project whose .yarn/install-state.gz
 *    the session wrote: its yarn.lock's packages that the project's
 *    snapshot did not list at the start (all of them when there was no
 *    install state before: a first install), sources from "resolution".
 *  - pnpm: every .pnpm/lock.yaml the session wrote (pnpm's copy of the
 *    lockfile it linked, in node_modules or a global dir): the packages
 *    it did not list at the session's first write of it.
 *  - RubyGems: every specifications/NAME-VERSION.gemspec the session
 *    wrote (a gem home's record of an installed gem); RubyGems keeps no
 *    record of where a gem came from: "registry".
 *  - Go: every GOMODCACHE/cache/download/MODULE/@v/VERSION.ziphash the
 *    session wrote (the go command's mark of a module whose code is in
 *    the cache); VERSION.info's "Origin" names a repository the module
 *    was fetched from directly (GOPROXY=direct, GOPRIVATE), else the
 *    module came from a proxy: "registry".
 *  - Install scripts: a shell run by npm in a node_modules package dir
 *    (a preinstall, install or postinstall script), and the build
 *    backend pip runs for a source distribution, with their commands.
 *
 * An install from a URL, a git repository or a path outside the project
 * is flagged.  Bounded: at most INSTALLS_DIRS directories and
 * INSTALLS_SCRIPTS scripts are remembered; past them "truncated". */
#ifndef AGENTTRACE_DEPS_INSTALLED_H
#define AGENTTRACE_DEPS_INSTALLED_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "tracer/deps/snapshot.h"

#define INSTALLS_DIRS 2048
#define INSTALLS_SCRIPTS 64
#define INSTALLS_LISTED 2000

struct install_script {
	char *ecosystem;   /* "npm", "pypi" */
	char *package;     /* the package whose script it is; NULL: unknown */
	char *command;     /* the script, or the build command line */
	char *cwd;
};

enum install_dir {
	INSTALL_DIR_PYTHON,     /* a dist-info dir */
	INSTALL_DIR_NPM,        /* a node_modules dir */
	INSTALL_DIR_CARGO,      /* a cargo install root */
	INSTALL_DIR_GEM,        /* a gemspec in a gem home's specifications dir */
	INSTALL_DIR_GO,         /* a .ziphash in a Go module cache's download dir */
	INSTALL_DIR_YARN,       /* a node_modules dir with yarn 1's .yarn-integrity */
	INSTALL_DIR_PNPM,       /* the dir of a .pnpm holding pnpm's lock.yaml */
	INSTALL_DIR_BERRY,      /* a project whose .yarn/install-state.gz yarn 2+ wrote */
};

struct installs {
	char **dirs;       /* dist-info, node_modules and cargo root dirs written */
	enum install_dir *kind;
	/* cargo, yarn, pnpm: what the record listed before the session's
	 * first write of it */
	struct deplist **before;
	bool *had_state;   /* yarn 2+: the install state existed before the first write */
	size_t n_dirs;
	struct install_script scripts[INSTALLS_SCRIPTS];
	size_t n_scripts;
	bool truncated;
};

/* One allowed write of PATH (absolute): the package dir it is in, if any. */
void installs_note_write(struct installs *in, const char *path);

/* An allowed exec by task PID, whose program was CALLER_ARGV, of ARGV:
 * an install script when npm runs a shell in a package's dir, or pip a
 * build backend. */
void installs_note_exec(struct installs *in, pid_t pid, const char *const *caller_argv,
			size_t caller_argc, const char *const *argv, size_t argc);

struct install {
	const char *ecosystem; /* "pypi", "npm", "crates", "rubygems", "go" */
	char *name, *version;
	const char *source;    /* "registry", "url", "git", "path" */
	char *url;             /* where from; NULL: the registry's */
	char *location;        /* the dist-info or package dir */
	bool install_script;   /* npm: hasInstallScript */
	bool flagged;          /* not from a registry, nor from a path in the project */
};

struct install_list {
	struct install *v;
	size_t n;
	size_t flagged;
	bool truncated;
};

/* What the noted dirs hold now; ROOT the project's top (for "outside the
 * project") and BEFORE its snapshot at the start (npm's hidden lockfiles). */
void installs_collect(const struct installs *in, const char *root, const struct depsnap *before,
		      struct install_list *out);
void install_list_free(struct install_list *l);
void installs_free(struct installs *in);

#endif
