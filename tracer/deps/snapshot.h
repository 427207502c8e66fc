/* The project's dependency files as the session found them and as it
 * left them, and what changed between the two (the summary's
 * "dependencies", doc/RECORDS.md).
 *
 * A snapshot walks the project from its top down to DEPSNAP_DEPTH levels
 * of directories, skipping what holds installed packages or history
 * rather than the project's own manifests (node_modules, .git, virtual
 * environments, cache dirs), and reads the files depfile_format_of()
 * knows.  It follows no symbolic link and reads only regular files; it is
 * bounded in files, in directory entries looked at and, per file, in
 * bytes (past DEPFILE_MAX_BYTES a file is only compared by identity and
 * change time). */
#ifndef AGENTTRACE_DEPS_SNAPSHOT_H
#define AGENTTRACE_DEPS_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>
#include <sys/types.h>

#include "tracer/deps/depfile.h"

#define DEPSNAP_DEPTH 4         /* directory levels below the top */
#define DEPSNAP_FILES 256
#define DEPSNAP_ENTRIES 100000  /* directory entries looked at */
/* The look at the start keeps files' bytes, up to this much in all, and
 * parses them only if the session changed them (a big lockfile's parse
 * would otherwise be most of every session's start). */
#define DEPSNAP_KEEP_BYTES (64u << 20)
#define DEPSNAP_PENDING 1       /* parse_rc: kept, not parsed yet */

struct depsnap_file {
	char *rel;                  /* the path below the top */
	enum depfile_format format;
	char sha256[65];            /* of the content; "" when too big */
	ino_t ino;                  /* too big: compared by these */
	off_t size;
	struct timespec ctime;
	int parse_rc;               /* depfile_parse(): 0, -EINVAL, -EFBIG; DEPSNAP_PENDING */
	struct deplist deps;
	char *text;                 /* DEPSNAP_PENDING: the bytes read */
	size_t len;
	bool same_at_end;           /* depsnap_settle(): the end's look found it unchanged */
};

struct depsnap {
	char *root;                 /* the top looked at; NULL when none */
	struct depsnap_file *v;     /* sorted by rel */
	size_t n;
	bool truncated;             /* a bound stopped the walk, or a look failed */
};

/* A snapshot of the files beneath ROOT (empty if it cannot be opened).
 * A file whose content is that of the same file in PREV (NULL: none) is
 * not parsed again: nothing of it is to diff. */
void depsnap_take(struct depsnap *s, const char *root, const struct depsnap *prev);
void depsnap_free(struct depsnap *s);

/* Once AFTER is taken: BEFORE's kept files that changed are parsed, those
 * that did not are marked same_at_end, and the kept bytes are freed. */
void depsnap_settle(struct depsnap *before, const struct depsnap *after);

/* One file the session created, removed or changed. */
struct depsnap_change {
	const char *rel;            /* the snapshots' */
	enum depfile_format format;
	const char *status;         /* "added", "removed", "changed" */
	bool parsed;                /* false: changed, the diff not known */
	struct depdiff diff;
};

struct depsnap_changes {
	const char *root;           /* the snapshots' top */
	struct depsnap_change *v;   /* in path order */
	size_t n;
	size_t added, removed, changed; /* packages, over the files */
	bool truncated;             /* either snapshot was */
};

/* What changed from BEFORE to AFTER (both must outlive C). */
void depsnap_compare(const struct depsnap *before, const struct depsnap *after,
		     struct depsnap_changes *c);
void depsnap_changes_free(struct depsnap_changes *c);

#endif
