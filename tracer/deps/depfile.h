/* The dependency manifests and lockfiles of a project, parsed into lists
 * of (package, version) to diff a file as it was when the session started
 * against what the session left (doc/RECORDS.md, "dependencies").
 *
 * The files are the command's to write, so they are hostile input: every
 * parser is bounded (DEPFILE_MAX_BYTES of text, DEPLIST_MAX packages,
 * DEP_TEXT_MAX bytes per name or version) and never fails on what it does
 * not understand beyond saying so (-EINVAL: "changed, not parsed").  No
 * package manager is run.  What each parser reads is in
 * doc/INTERNALS.md, "Dependency files". */
#ifndef AGENTTRACE_DEPS_DEPFILE_H
#define AGENTTRACE_DEPS_DEPFILE_H

#include <stdbool.h>
#include <stddef.h>

#define DEPFILE_MAX_BYTES (16u << 20)
#define DEPLIST_MAX 100000
#define DEP_TEXT_MAX 200

enum depfile_format {
	DEPFILE_NONE = 0,
	DEPFILE_PACKAGE_JSON,
	DEPFILE_PACKAGE_LOCK,   /* package-lock.json, npm-shrinkwrap.json */
	DEPFILE_YARN_LOCK,
	DEPFILE_PNPM_LOCK,
	DEPFILE_REQUIREMENTS,   /* requirements*.txt */
	DEPFILE_PYPROJECT,
	DEPFILE_POETRY_LOCK,
	DEPFILE_UV_LOCK,
	DEPFILE_CARGO_TOML,
	DEPFILE_CARGO_LOCK,
	DEPFILE_GO_MOD,
	DEPFILE_GO_SUM,
	DEPFILE_GEMFILE_LOCK,
	/* node_modules/.package-lock.json: what node_modules holds (npm's
	 * hidden lockfile, read as package-lock.json), for installed.h; not a
	 * manifest of the project. */
	DEPFILE_NPM_HIDDEN,
};

/* The format of a file by its name (the last component), DEPFILE_NONE
 * for any other file. */
enum depfile_format depfile_format_of(const char *name);
/* The format's name in records: the file name it stands for
 * ("requirements.txt" for every requirements*.txt). */
const char *depfile_format_name(enum depfile_format f);

struct dep {
	char *name;     /* as the format spells it (Python names normalised, PEP 503) */
	char *version;  /* the version, or the manifest's requirement ("^1.2", ">=2") */
	/* Where a lockfile says the package came from when it says more than
	 * a registry's name: yarn.lock's "resolved" (or the spec's
	 * "file:"/"link:"/"git..." range when it has none), pnpm-lock's spec
	 * of a tarball, directory or repository; NULL otherwise. */
	char *source;
};

struct deplist {
	struct dep *v;
	size_t n, cap;
	bool truncated; /* more than DEPLIST_MAX packages: the rest were dropped */
};

/* NAME at VERSION (NULL: "") added to L, cut at DEP_TEXT_MAX; past
 * DEPLIST_MAX packages L is truncated instead. */
void deplist_add(struct deplist *l, const char *name, const char *version);

/* L sorted by name, then version, without duplicates. */
void deplist_sort(struct deplist *l);

/* Whether a yarn or pnpm spec's range [B, E) names a place (a "file:",
 * "link:", "portal:" path, a "workspace:" of the project, a git or GitHub
 * repository, a URL) rather than versions. */
bool depfile_range_is_source(const char *b, const char *e);

/* Parse TEXT (LEN bytes) of format F into OUT (empty on entry).  0, or
 * -EINVAL when the text is not of the format (OUT is then empty), or
 * -EFBIG past DEPFILE_MAX_BYTES.  OUT comes back sorted by name and
 * version, without duplicates. */
int depfile_parse(enum depfile_format f, const char *text, size_t len, struct deplist *out);
void deplist_free(struct deplist *l);

/* One package whose versions differ: FROM NULL, added; TO NULL, removed.
 * A name that has several versions (nested node_modules) has them
 * joined with ", ". */
struct depchange {
	char *name;
	char *from, *to;
};

struct depdiff {
	struct depchange *v;
	size_t n;
	size_t added, removed, changed;
};

/* The changes from OLD to NEW (both sorted, as depfile_parse leaves them),
 * in name order.  Either may be NULL: an empty list. */
void depdiff_make(const struct deplist *old, const struct deplist *new, struct depdiff *d);
void depdiff_free(struct depdiff *d);

#endif
