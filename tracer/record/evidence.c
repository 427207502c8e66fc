/* The evidence of a session (tracer/record/evidence.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/exitcode.h"
#include "lib/fullio.h"
#include "lib/hash.h"
#include "lib/log.h"
#include "lib/sha256.h"
#include "lib/syscall-rename.h"
#include "lib/xalloc.h"
#include "tracer/confine/ownpath.h"
#include "tracer/record/evidence.h"

void evidence_init(struct evidence *e)
{
	memset(e, 0, sizeof(*e));
	e->dir_fd = -1;
}

int evidence_open(struct evidence *e, const struct rules_policy *p, const char *dir)
{
	char link[PATH_MAX];
	int fd = ownpath_mkdir(p, dir, 0700, link, sizeof(link));

	if (fd < 0) {
		ownpath_error("--evidence", dir, fd, link);
		return AT_EXIT_FAILURE;
	}
	e->dir = ownpath_name(fd);
	if (!e->dir) {
		error_msg("--evidence %s: its name cannot be read back", dir);
		close(fd);
		return AT_EXIT_FAILURE;
	}
	e->dir_fd = fd;
	return AT_GO_ON;
}

/* The set's slot of PATH: its own, or the empty one it would take. */
static size_t evidence_slot(char *const *set, size_t cap, const char *path)
{
	size_t i = (size_t)hash_fnv1a(path, strlen(path)) & (cap - 1);

	while (set[i] && strcmp(set[i], path) != 0)
		i = (i + 1) & (cap - 1);
	return i;
}

void evidence_note_write(struct evidence *e, const char *path)
{
	size_t i;

	if (e->dir_fd < 0 || !path)
		return;
	if (!e->written) {
		/* Twice the bound: the set never fills past half. */
		e->cap_written = 2 * EVIDENCE_WRITES_MAX;
		e->written = xcalloc(e->cap_written, sizeof(*e->written));
	}
	i = evidence_slot(e->written, e->cap_written, path);
	if (e->written[i])
		return;
	if (e->n_written == EVIDENCE_WRITES_MAX) {
		e->untracked++;
		return;
	}
	e->written[i] = xstrdup(path);
	e->n_written++;
}

bool evidence_was_written(const struct evidence *e, const char *path)
{
	return e->written && path && e->written[evidence_slot(e->written, e->cap_written, path)];
}

/* A temporary name in the evidence directory, renamed to the hash once
 * the copy is whole: a copy named by a hash is always that content. */
static int evidence_temp(struct evidence *e, char *name, size_t size)
{
	static unsigned seq;

	snprintf(name, size, ".partial.%d.%u", (int)getpid(), ++seq);
	return openat(e->dir_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
}

/* Whether DIR/NAME is a regular file of SIZE bytes whose SHA-256 is NAME:
 * a copy already kept.  Anything else there (a file put under that name
 * before the session, a link) is replaced by the copy. */
static bool evidence_holds(struct evidence *e, const char *name, uint64_t size)
{
	char buf[65536], hex[65];
	struct sha256 h;
	struct stat st;
	int fd = openat(e->dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	bool ok;

	if (fd < 0)
		return false;
	ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size == size;
	sha256_init(&h);
	while (ok) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ok = n == 0;
			break;
		}
		sha256_update(&h, buf, (size_t)n);
	}
	close(fd);
	if (!ok)
		return false;
	sha256_hex(&h, hex);
	return strcmp(hex, name) == 0;
}

void evidence_file(struct evidence *e, const char *path, struct evidence_file *out)
{
	char buf[65536], tmp[64];
	struct sha256 h;
	struct stat st;
	int fd, cfd = -1;
	bool ok = true;

	memset(out, 0, sizeof(*out));
	/* Only a regular file is read.  Looked at through O_PATH first: an
	 * open for reading of a FIFO in a script's place would be a reader
	 * of the command's pipe (its data lost when we close it, the
	 * interpreter then waiting for ever), of a device a read with
	 * effects. */
	fd = path ? open(path, O_PATH | O_CLOEXEC) : -1;
	if (fd < 0)
		return;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return;
	}
	snprintf(tmp, sizeof(tmp), "/proc/self/fd/%d", fd);
	cfd = open(tmp, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	close(fd);
	fd = cfd;
	cfd = -1;
	if (fd < 0)
		return;
	out->known = true;
	out->size = (uint64_t)st.st_size;
	if (out->size > EVIDENCE_FILE_MAX) {
		if (e->dir_fd >= 0)
			e->skipped++;
		close(fd);
		return;
	}
	if (e->dir_fd >= 0) {
		if (e->bytes + out->size > EVIDENCE_TOTAL_MAX)
			e->skipped++;
		else
			cfd = evidence_temp(e, tmp, sizeof(tmp));
	}
	sha256_init(&h);
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ok = false;
			break;
		}
		if (n == 0)
			break;
		sha256_update(&h, buf, (size_t)n);
		if (cfd >= 0 && write_full(cfd, buf, (size_t)n) < 0) {
			close(cfd);
			unlinkat(e->dir_fd, tmp, 0);
			cfd = -1;
			e->skipped++;
		}
	}
	close(fd);
	if (!ok) {
		if (cfd >= 0) {
			close(cfd);
			unlinkat(e->dir_fd, tmp, 0);
		}
		memset(out, 0, sizeof(*out));
		return;
	}
	sha256_hex(&h, out->sha256);
	out->hashed = true;
	if (cfd < 0)
		return;
	snprintf(out->copy, sizeof(out->copy), "%s/%s", e->dir, out->sha256);
	if (evidence_holds(e, out->sha256, out->size)) {
		/* Kept already (the same script run again). */
		close(cfd);
		unlinkat(e->dir_fd, tmp, 0);
		out->copied = true;
		return;
	}
	/* What stands in the copy's way (a directory put there before the
	 * session) is exchanged with it and left under the temporary name:
	 * the copy is made whatever the directory held. */
	if (close(cfd) < 0 ||
	    (renameat(e->dir_fd, tmp, e->dir_fd, out->sha256) < 0 &&
	     renameat2(e->dir_fd, tmp, e->dir_fd, out->sha256, RENAME_EXCHANGE) < 0)) {
		unlinkat(e->dir_fd, tmp, 0);
		e->skipped++;
		out->copy[0] = 0;
		return;
	}
	e->files++;
	e->bytes += out->size;
	out->copied = true;
}

void evidence_close(struct evidence *e)
{
	if (e->dir_fd >= 0)
		close(e->dir_fd);
	for (size_t i = 0; e->written && i < e->cap_written; i++)
		free(e->written[i]);
	free(e->written);
	free(e->dir);
	evidence_init(e);
}
