/* What kind of memory holds an address of a traced process: whether
 * another task could change the bytes there after the supervisor has read
 * them, without being a thread of the process.
 *
 * A private anonymous mapping (the stack, the heap, a plain malloc) is
 * the process's own: only its threads write it (process_vm_writev(2),
 * ptrace(2), /proc/PID/mem and userfaultfd(2) are refused to the session).
 * A shared mapping (MAP_SHARED, System V shm, a memfd or /dev/shm file
 * mapped shared) is written by whoever else maps it.  A file's pages in a
 * private mapping are the file's until the process writes them, so a
 * write(2) to the file by any other process changes them.
 *
 * Answered by the PROCMAP_QUERY ioctl where the kernel has it (Linux
 * 6.11, tracer/syscall/probe.h), else by reading /proc/PID/maps up to the
 * address. */
#ifndef AGENTTRACE_VMA_H
#define AGENTTRACE_VMA_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* struct procmap_query of linux/fs.h (Linux 6.11), which older headers
 * lack; the ABI is extensible by its size field. */
struct vma_procmap_query {
	uint64_t size;
	uint64_t query_flags;
	uint64_t query_addr;
	uint64_t vma_start;
	uint64_t vma_end;
	uint64_t vma_flags;
	uint64_t vma_page_size;
	uint64_t vma_offset;
	uint64_t inode;
	uint32_t dev_major;
	uint32_t dev_minor;
	uint32_t vma_name_size;
	uint32_t build_id_size;
	uint64_t vma_name_addr;
	uint64_t build_id_addr;
};
#define VMA_PROCMAP_QUERY 0xC0686611UL /* _IOWR('f', 17, struct procmap_query) */
#define VMA_PROCMAP_SHARED 0x08        /* PROCMAP_QUERY_VMA_SHARED */

enum vma_kind {
	VMA_UNMAPPED,    /* nothing there: the kernel fails the call (EFAULT) */
	VMA_PRIVATE,     /* private and anonymous: the process's own */
	VMA_FILE,        /* a file's pages, private or shared: NAME says which file */
	VMA_SHARED,      /* shared and anonymous, or a file with no name left
			  * (a memfd, a deleted file): whoever holds it writes it */
};

struct vma_region {
	enum vma_kind kind;
	unsigned long end;   /* the first address past the mapping */
	dev_t dev;           /* VMA_FILE: the file's device and inode */
	uint64_t ino;
};

/* One process's maps, kept open across questions: the descriptor of the
 * last process asked stays open until another is asked (a process's
 * calls come in runs). */
struct vma_reader {
	pid_t pid;
	int fd;              /* -1: none open */
};

void vma_reader_init(struct vma_reader *r);
void vma_reader_close(struct vma_reader *r);

/* The mapping of process PID that holds ADDR into *OUT; for VMA_FILE the
 * file's path into NAME (SIZE bytes).  0, or -errno (-ESRCH: the process
 * is gone). */
int vma_at(struct vma_reader *r, pid_t pid, unsigned long addr, struct vma_region *out,
	   char *name, size_t size);

#endif
