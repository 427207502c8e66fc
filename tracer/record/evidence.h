/* The evidence of a session (agenttrace(1), --evidence): the size and
 * SHA-256 of the script an interpreter runs, and with --evidence DIR a
 * content-addressed copy (DIR/SHA256) of every script run and of every
 * program the session wrote and then ran, which the exec records name
 * ("evidence", doc/RECORDS.md).
 *
 * Bounded, so that a session cannot fill the disk or the supervisor's
 * memory through it: a file over EVIDENCE_FILE_MAX is neither hashed nor
 * copied (its size is recorded); copies stop at EVIDENCE_TOTAL_MAX bytes
 * a session (the rest are hashed, counted as skipped); at most
 * EVIDENCE_WRITES_MAX written paths are remembered (later writes are
 * counted, and a program written by one of them is not recognised). */
#ifndef AGENTTRACE_EVIDENCE_H
#define AGENTTRACE_EVIDENCE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rules/rules.h"

#define EVIDENCE_FILE_MAX (16u << 20)
#define EVIDENCE_TOTAL_MAX (256u << 20)
#define EVIDENCE_WRITES_MAX 4096

struct evidence {
	int dir_fd;              /* --evidence DIR, -1: none */
	char *dir;               /* its absolute path */
	char **written;          /* paths written in the session: a hash set */
	size_t n_written, cap_written;
	uint64_t untracked;      /* writes beyond EVIDENCE_WRITES_MAX */
	uint64_t files, bytes;   /* copies made (or found already there) */
	uint64_t skipped;        /* copies not made: over a bound, or a write error */
};

/* One file's facts for a record. */
struct evidence_file {
	bool known;              /* it could be opened: size is set */
	uint64_t size;
	bool hashed;             /* sha256 is set (size <= EVIDENCE_FILE_MAX) */
	char sha256[65];
	bool copied;             /* copy holds DIR/SHA256 */
	char copy[PATH_MAX];
};

/* Before the session: no evidence kept. */
void evidence_init(struct evidence *e);

/* --evidence DIR: made if missing (0700), opened, no link a session could
 * have planted followed (tracer/confine/ownpath.h, P the policy).
 * AT_GO_ON, or an exit status after the error was printed. */
int evidence_open(struct evidence *e, const struct rules_policy *p, const char *dir);

/* A path the session opened for writing, created, or renamed or linked
 * into place (tracked with --evidence only). */
void evidence_note_write(struct evidence *e, const char *path);
bool evidence_was_written(const struct evidence *e, const char *path);

/* Size and hash of PATH, and with --evidence its copy.  Never fails: what
 * could not be read is left unknown. */
void evidence_file(struct evidence *e, const char *path, struct evidence_file *out);

void evidence_close(struct evidence *e);

#endif
