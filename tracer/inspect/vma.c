/* What kind of memory holds an address (tracer/inspect/vma.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "tracer/inspect/vma.h"
#include "tracer/syscall/probe.h"

/* Bits of a /proc/PID/pagemap entry (the kernel's
 * Documentation/admin-guide/mm/pagemap.rst). */
#define VMA_PM_PRESENT (1ULL << 63)
#define VMA_PM_FILE (1ULL << 61)      /* a file's page, or shared anonymous memory */
#define VMA_PM_EXCLUSIVE (1ULL << 56) /* mapped once (Linux 4.2) */

void vma_reader_init(struct vma_reader *r)
{
	r->pid = 0;
	r->fd = -1;
	r->pagemap_fd = -1;
}

void vma_reader_close(struct vma_reader *r)
{
	if (r->fd >= 0)
		close(r->fd);
	if (r->pagemap_fd >= 0)
		close(r->pagemap_fd);
	vma_reader_init(r);
}

/* R's descriptor of PID's FILE ("maps" or "pagemap", kept in *FD), opened
 * anew when AFRESH or when another process was asked last.  0 or
 * -errno. */
static int vma_open_file(struct vma_reader *r, pid_t pid, bool afresh, const char *file, int *fd)
{
	char path[64];

	if (r->pid != pid) {
		vma_reader_close(r);
		r->pid = pid;
	}
	if (*fd >= 0 && !afresh)
		return 0;
	if (*fd >= 0)
		close(*fd);
	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	return 0;
}

static int vma_open(struct vma_reader *r, pid_t pid, bool afresh)
{
	return vma_open_file(r, pid, afresh, "maps", &r->fd);
}

/* A file's pages need a name to be judged by.  The kernel names a
 * shared anonymous mapping by its shmem file, "/dev/zero (deleted)", and
 * a memfd "/memfd:NAME (deleted)": a file without a name, which whoever
 * holds it can write. */
static void vma_classify(struct vma_region *out, uint64_t inode, bool shared, const char *name)
{
	static const char deleted[] = " (deleted)";
	size_t n = strlen(name), d = sizeof(deleted) - 1;

	if (inode == 0)
		out->kind = shared ? VMA_SHARED : VMA_PRIVATE;
	else if (name[0] != '/' || (n >= d && strcmp(name + n - d, deleted) == 0))
		out->kind = VMA_SHARED;
	else
		out->kind = VMA_FILE;
}

static int vma_query(struct vma_reader *r, pid_t pid, unsigned long addr, struct vma_region *out,
		     char *name, size_t size)
{
	for (int tries = 0; tries < 2; tries++) {
		struct vma_procmap_query q = {
			.size = sizeof(q),
			.query_addr = addr,
			.vma_name_addr = (uintptr_t)name,
			.vma_name_size = (uint32_t)size,
		};
		int rc = vma_open(r, pid, tries > 0);

		if (rc < 0)
			return rc;
		name[0] = '\0';
		if (ioctl(r->fd, VMA_PROCMAP_QUERY, &q) == 0) {
			out->end = (unsigned long)q.vma_end;
			out->dev = makedev(q.dev_major, q.dev_minor);
			out->ino = q.inode;
			vma_classify(out, q.inode, q.vma_flags & VMA_PROCMAP_SHARED, name);
			return 0;
		}
		if (errno == ENOENT) {
			out->kind = VMA_UNMAPPED;
			out->end = 0;
			return 0;
		}
		/* ESRCH: the descriptor names the memory the process had
		 * before an exec (or a process gone); once more, anew. */
		if (errno != ESRCH)
			return -errno;
	}
	return -ESRCH;
}

/* One line of the maps text: 1 when it holds ADDR (OUT and NAME filled),
 * 0 when it ends below ADDR, -1 when it starts above it (the lines come
 * in address order: nothing holds ADDR), -EIO when it cannot be read. */
static int vma_line(char *line, unsigned long addr, struct vma_region *out, char *name,
		    size_t size)
{
	unsigned long start, end, off;
	unsigned major, minor;
	uint64_t inode;
	char perms[5];
	int n = 0;

	if (sscanf(line, "%lx-%lx %4s %lx %x:%x %" SCNu64 " %n", &start, &end, perms, &off, &major,
		   &minor, &inode, &n) != 7 || n == 0)
		return -EIO;
	if (addr >= end)
		return 0;
	if (addr < start)
		return -1;
	snprintf(name, size, "%s", line + n);
	out->end = end;
	out->dev = makedev(major, minor);
	out->ino = inode;
	vma_classify(out, inode, perms[3] == 's', name);
	return 1;
}

static int vma_scan(struct vma_reader *r, pid_t pid, unsigned long addr, struct vma_region *out,
		    char *name, size_t size)
{
	static char buf[16384];

	for (int tries = 0; tries < 2; tries++) {
		size_t have = 0;
		off_t at = 0;
		bool any = false;
		int rc = vma_open(r, pid, tries > 0);

		if (rc < 0)
			return rc;
		for (;;) {
			ssize_t got = pread(r->fd, buf + have, sizeof(buf) - 1 - have, at);
			char *line = buf, *nl;

			if (got < 0)
				return errno == ESRCH ? -ESRCH : -errno;
			if (got == 0)
				break;
			at += got;
			have += (size_t)got;
			buf[have] = '\0';
			any = true;
			while ((nl = strchr(line, '\n'))) {
				*nl = '\0';
				rc = vma_line(line, addr, out, name, size);
				if (rc == 1)
					return 0;
				if (rc < 0) {
					if (rc == -1) {
						out->kind = VMA_UNMAPPED;
						out->end = 0;
						return 0;
					}
					return rc;
				}
				line = nl + 1;
			}
			have -= (size_t)(line - buf);
			if (have == sizeof(buf) - 1)
				return -EIO; /* a line longer than any the kernel writes */
			memmove(buf, line, have);
		}
		/* No process has no mappings: an empty text is memory the
		 * descriptor no longer has (an exec), so once more, anew. */
		if (any) {
			out->kind = VMA_UNMAPPED;
			out->end = 0;
			return 0;
		}
	}
	return -ESRCH;
}

/* Whether the page of ADDR is present in PID's memory and its own
 * anonymous memory, by its pagemap entry: true with OUT filled; false
 * when the entry says otherwise or cannot be read (the maps text then
 * tells).  Mapped once, too: the kernel says so only of a page it keeps
 * a count of, so a device's or another special mapping's pages (which
 * pagemap does not call a file's) and the zero page go to the maps text,
 * as do pages still shared with a forked child until either writes them.
 * A descriptor kept from before an exec reads nothing (its memory is
 * gone): once more, anew. */
static bool vma_page_own(struct vma_reader *r, pid_t pid, unsigned long addr,
			 struct vma_region *out)
{
	/* An entry per page of the kernel's base size. */
	static unsigned long page;
	uint64_t e;

	if (!page)
		page = (unsigned long)sysconf(_SC_PAGESIZE);
	for (int tries = 0; tries < 2; tries++) {
		ssize_t n;

		if (vma_open_file(r, pid, tries > 0, "pagemap", &r->pagemap_fd) < 0)
			return false;
		n = pread(r->pagemap_fd, &e, sizeof(e), (off_t)(addr / page * sizeof(e)));
		if (n == (ssize_t)sizeof(e)) {
			if ((e & (VMA_PM_PRESENT | VMA_PM_FILE | VMA_PM_EXCLUSIVE)) !=
			    (VMA_PM_PRESENT | VMA_PM_EXCLUSIVE))
				return false;
			out->kind = VMA_PRIVATE;
			out->end = (addr / page + 1) * page;
			out->dev = 0;
			out->ino = 0;
			return true;
		}
		if (n < 0 && errno != ESRCH)
			return false;
	}
	return false;
}

int vma_at(struct vma_reader *r, pid_t pid, unsigned long addr, struct vma_region *out,
	   char *name, size_t size)
{
	if (size == 0)
		return -EINVAL;
	if (probe_procmap_query())
		return vma_query(r, pid, addr, out, name, size);
	if (vma_page_own(r, pid, addr, out)) {
		name[0] = '\0';
		return 0;
	}
	return vma_scan(r, pid, addr, out, name, size);
}
