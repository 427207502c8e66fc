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

void vma_reader_init(struct vma_reader *r)
{
	r->pid = 0;
	r->fd = -1;
}

void vma_reader_close(struct vma_reader *r)
{
	if (r->fd >= 0)
		close(r->fd);
	vma_reader_init(r);
}

/* R's descriptor of PID's maps, opened anew when AFRESH or when another
 * process was asked last.  0 or -errno. */
static int vma_open(struct vma_reader *r, pid_t pid, bool afresh)
{
	char path[64];

	if (r->fd >= 0 && r->pid == pid && !afresh)
		return 0;
	vma_reader_close(r);
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	r->pid = pid;
	return 0;
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

int vma_at(struct vma_reader *r, pid_t pid, unsigned long addr, struct vma_region *out,
	   char *name, size_t size)
{
	if (size == 0)
		return -EINVAL;
	return probe_procmap_query() ? vma_query(r, pid, addr, out, name, size)
				     : vma_scan(r, pid, addr, out, name, size);
}
