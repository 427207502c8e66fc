/* ELF facts of an executed file, and symbol lookup in an object's
 * .symtab/.dynsym (libelf).  Used by exec records (static or dynamic,
 * interpreter, build-id, set-uid bits, "#!" line of scripts) and by
 * backtrace.c for frames that libunwind could not name (stripped or static
 * objects).
 *
 * Files are read with read()/pread() (ELF_C_READ), never mmap()ed: a file
 * truncated by a tracee while we look at it gives a short read and an
 * error, not a SIGBUS in the supervisor.
 *
 * Not thread-safe: the symbol cache is process-wide (the supervisor is one
 * thread).  Functions return 0 or -errno; they never exit. */
#ifndef AGENTTRACE_ELFINFO_H
#define AGENTTRACE_ELFINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct elf_facts {
	bool is_elf;          /* "\177ELF" magic and a header libelf accepts */
	bool is_static;       /* ELF without PT_INTERP (static and static-pie) */
	bool is_pie;          /* ET_DYN (PIE executable or shared object) */
	bool setuid;          /* S_ISUID on a regular file */
	bool setgid;          /* S_ISGID on a regular file */
	unsigned elf_class;   /* 32 or 64; 0 when not ELF */
	unsigned machine;     /* e_machine (EM_X86_64 = 62); 0 when not ELF */
	char interp[256];     /* PT_INTERP path of a dynamic ELF, else "" */
	char build_id[65];    /* NT_GNU_BUILD_ID as lowercase hex (up to 32 bytes), else "" */
	char shebang[256];    /* not ELF: the "#!" line without "#!", trimmed, else "" */
};

/* Facts about PATH (symlinks followed, as execve does).  0 on success,
 * also for files that are neither ELF nor scripts (all flags false);
 * -errno when PATH cannot be opened or read; -ENOEXEC when the file has
 * the ELF magic but libelf rejects it (truncated, corrupt). */
int elfinfo_read(const char *path, struct elf_facts *out);

/* The same for an open file (e.g. /proc/PID/exe opened at the exec stop,
 * which names the very file the kernel executed).  FD is not closed and
 * its offset is not used (pread only). */
int elfinfo_read_fd(int fd, struct elf_facts *out);

/* The function symbol of OBJECT that contains FILE_OFFSET (an offset in
 * the file, as /proc/PID/maps gives: pc - start + map offset).  The
 * offset is converted to a virtual address through the PT_LOAD segment
 * that maps it, then looked up in .symtab, else .dynsym.  Writes the name
 * (truncated to N-1 bytes) and the distance from the symbol's start.
 * 0 when found; -ENOENT when no symbol covers it (stripped); -ENOEXEC for
 * a file that is not ELF; other -errno when the file cannot be read.
 * Parsed objects are cached (a few, keyed by device, inode, size, mtime). */
int elfinfo_symbol(const char *object, uint64_t file_offset, char *sym, size_t n,
		   uint64_t *offset);

/* Where the symbols NAMES[0..N-1] of OBJECT lie in the file: for each,
 * the file offset of its value (through the PT_LOAD segment whose file
 * bytes hold it, as /proc/PID/maps maps them) into OFFSETS[I], or
 * UINT64_MAX when OBJECT has no such defined symbol or its bytes are not
 * in the file (.bss).  Exported symbols only (.dynsym, what a program
 * shares with the libraries it loads): one pass over a table that is
 * small, also for a big unstripped program that has none of them.
 * Returns the number found, or -errno as elfinfo_symbol(). */
int elfinfo_symbol_offsets(const char *object, const char *const *names, size_t n,
			   uint64_t *offsets);

/* Drop the symbol cache (closes its descriptors). */
void elfinfo_forget_all(void);

/* libelf is opened at the first use (it is not linked, see elfinfo.c).
 * Opens it now; false when it cannot be.  A caller that works against a
 * time budget (a backtrace) calls this first, so that the dlopen() is not
 * charged to the budget. */
bool elfinfo_ready(void);

#endif
