/* ELF facts and symbol lookup with libelf (elfutils).  See elfinfo.h. */
#include "config.h"

#include "tracer/inspect/elfinfo.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Enough for the ELF identification and for a "#!" line: the kernel
 * itself reads at most 256 bytes of a script's first line
 * (BINPRM_BUF_SIZE, include/uapi/linux/binfmts.h). */
#define ELFINFO_HEAD 256

/* A handful of objects: a backtrace touches the program, libc and maybe
 * one or two libraries; alerts are rare, so a tiny LRU is enough. */
#define ELFINFO_CACHE 4

struct elfinfo_obj {
	bool used;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	int fd;
	Elf *elf;
	unsigned long last_use;
};

static struct elfinfo_obj elfinfo_cache[ELFINFO_CACHE];
static unsigned long elfinfo_clock;

/* libelf is opened at the first use, not linked: most runs never need
 * it (ELF facts go into exec records and alerts, names into backtraces),
 * and every start of agenttrace would otherwise map it and libz too. */
#ifndef ELFINFO_LIBELF_SONAME
#define ELFINFO_LIBELF_SONAME "libelf.so.1"
#endif

static struct {
	__typeof__(elf_version) *elf_version;
	__typeof__(elf_begin) *elf_begin;
	__typeof__(elf_kind) *elf_kind;
	__typeof__(gelf_getehdr) *gelf_getehdr;
	__typeof__(gelf_getclass) *gelf_getclass;
	__typeof__(elf_getphdrnum) *elf_getphdrnum;
	__typeof__(gelf_getphdr) *gelf_getphdr;
	__typeof__(elf_getdata_rawchunk) *elf_getdata_rawchunk;
	__typeof__(gelf_getnote) *gelf_getnote;
	__typeof__(elf_end) *elf_end;
	__typeof__(elf_getdata) *elf_getdata;
	__typeof__(gelf_getsym) *gelf_getsym;
	__typeof__(elf_strptr) *elf_strptr;
	__typeof__(elf_nextscn) *elf_nextscn;
	__typeof__(gelf_getshdr) *gelf_getshdr;
} elfinfo_lib;

static bool elfinfo_load(void)
{
	void *h = dlopen(ELFINFO_LIBELF_SONAME, RTLD_LAZY | RTLD_LOCAL);

	if (!h)
		return false;
	/* On a missing name the handle stays open: harmless. */
#define ELFINFO_SYM(name)                                                               \
	do {                                                                            \
		elfinfo_lib.name = (__typeof__(elfinfo_lib.name))dlsym(h, #name);      \
		if (!elfinfo_lib.name)                                                  \
			return false;                                                   \
	} while (0)
	ELFINFO_SYM(elf_version);
	ELFINFO_SYM(elf_begin);
	ELFINFO_SYM(elf_kind);
	ELFINFO_SYM(gelf_getehdr);
	ELFINFO_SYM(gelf_getclass);
	ELFINFO_SYM(elf_getphdrnum);
	ELFINFO_SYM(gelf_getphdr);
	ELFINFO_SYM(elf_getdata_rawchunk);
	ELFINFO_SYM(gelf_getnote);
	ELFINFO_SYM(elf_end);
	ELFINFO_SYM(elf_getdata);
	ELFINFO_SYM(gelf_getsym);
	ELFINFO_SYM(elf_strptr);
	ELFINFO_SYM(elf_nextscn);
	ELFINFO_SYM(gelf_getshdr);
#undef ELFINFO_SYM
	return true;
}

static bool elfinfo_init(void)
{
	static int state; /* 0 unknown, 1 ok, -1 failed */

	if (state == 0)
		state = !elfinfo_load() || elfinfo_lib.elf_version(EV_CURRENT) == EV_NONE ? -1 : 1;
	return state > 0;
}

bool elfinfo_ready(void)
{
	return elfinfo_init();
}

static ssize_t elfinfo_pread(int fd, void *buf, size_t n, off_t off)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = pread(fd, (char *)buf + got, n - got, off + (off_t)got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

static void elfinfo_copy_str(char *dst, size_t size, const char *src, size_t len)
{
	size_t i;

	for (i = 0; i < len && i + 1 < size && src[i] != '\0'; i++)
		dst[i] = src[i];
	dst[i] = '\0';
}

/* The "#!" line as the kernel parses it (fs/binfmt_script.c): up to the
 * newline, blanks around it dropped.  The interpreter and its one
 * optional argument stay together, as written. */
static void elfinfo_shebang(const char *head, size_t n, char *out, size_t size)
{
	size_t start = 2, end;

	while (start < n && (head[start] == ' ' || head[start] == '\t'))
		start++;
	end = start;
	while (end < n && head[end] != '\n' && head[end] != '\0')
		end++;
	while (end > start && (head[end - 1] == ' ' || head[end - 1] == '\t' ||
			       head[end - 1] == '\r'))
		end--;
	elfinfo_copy_str(out, size, head + start, end - start);
}

static void elfinfo_hex(const unsigned char *p, size_t len, char *out, size_t size)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	if (len * 2 + 1 > size) {
		/* A longer id (--build-id=0xHEX) would only fit truncated, and a
		 * truncated id names no file: say nothing instead. */
		out[0] = '\0';
		return;
	}
	for (i = 0; i < len; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 0xf];
	}
	out[2 * len] = '\0';
}

static void elfinfo_notes(Elf *elf, const GElf_Phdr *ph, struct elf_facts *out)
{
	Elf_Type type = ph->p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR;
	Elf_Data *data = elfinfo_lib.elf_getdata_rawchunk(elf, (int64_t)ph->p_offset, ph->p_filesz, type);
	size_t off = 0, next, name_off, desc_off;
	GElf_Nhdr nh;

	if (data == NULL)
		return;
	while ((next = elfinfo_lib.gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == sizeof "GNU" &&
		    memcmp((const char *)data->d_buf + name_off, "GNU", sizeof "GNU") == 0 &&
		    nh.n_descsz > 0) {
			elfinfo_hex((const unsigned char *)data->d_buf + desc_off, nh.n_descsz,
				    out->build_id, sizeof out->build_id);
			return;
		}
		off = next;
	}
}

static int elfinfo_parse(int fd, struct elf_facts *out)
{
	Elf *elf;
	GElf_Ehdr eh;
	size_t nph = 0, i;
	bool has_interp = false;
	int ret = 0;

	if (!elfinfo_init())
		return -ENOSYS;
	elf = elfinfo_lib.elf_begin(fd, ELF_C_READ, NULL);
	if (elf == NULL)
		return -ENOEXEC;
	if (elfinfo_lib.elf_kind(elf) != ELF_K_ELF || elfinfo_lib.gelf_getehdr(elf, &eh) == NULL) {
		ret = -ENOEXEC;
		goto out_elf;
	}
	out->is_elf = true;
	out->elf_class = elfinfo_lib.gelf_getclass(elf) == ELFCLASS64 ? 64 : 32;
	out->machine = eh.e_machine;
	out->is_pie = eh.e_type == ET_DYN;
	if (elfinfo_lib.elf_getphdrnum(elf, &nph) != 0)
		nph = 0;
	for (i = 0; i < nph; i++) {
		GElf_Phdr ph;
		Elf_Data *data;

		if (elfinfo_lib.gelf_getphdr(elf, (int)i, &ph) == NULL)
			continue;
		if (ph.p_type == PT_INTERP && !has_interp) {
			has_interp = true;
			data = elfinfo_lib.elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz,
						    ELF_T_BYTE);
			if (data != NULL)
				elfinfo_copy_str(out->interp, sizeof out->interp, data->d_buf,
						 data->d_size);
		} else if (ph.p_type == PT_NOTE && out->build_id[0] == '\0') {
			elfinfo_notes(elf, &ph, out);
		}
	}
	out->is_static = !has_interp && (eh.e_type == ET_EXEC || eh.e_type == ET_DYN);
out_elf:
	elfinfo_lib.elf_end(elf);
	return ret;
}

int elfinfo_read_fd(int fd, struct elf_facts *out)
{
	char head[ELFINFO_HEAD];
	struct stat st;
	ssize_t n;

	memset(out, 0, sizeof *out);
	if (fstat(fd, &st) != 0)
		return -errno;
	if (S_ISREG(st.st_mode)) {
		out->setuid = (st.st_mode & S_ISUID) != 0;
		out->setgid = (st.st_mode & S_ISGID) != 0;
	}
	n = elfinfo_pread(fd, head, sizeof head, 0);
	if (n < 0)
		return (int)n;
	if (n >= SELFMAG && memcmp(head, ELFMAG, SELFMAG) == 0)
		return elfinfo_parse(fd, out);
	if (n >= 2 && head[0] == '#' && head[1] == '!')
		elfinfo_shebang(head, (size_t)n, out->shebang, sizeof out->shebang);
	return 0;
}

int elfinfo_read(const char *path, struct elf_facts *out)
{
	int fd, ret;

	memset(out, 0, sizeof *out);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	ret = elfinfo_read_fd(fd, out);
	close(fd);
	return ret;
}

static void elfinfo_obj_drop(struct elfinfo_obj *o)
{
	if (!o->used)
		return;
	elfinfo_lib.elf_end(o->elf);
	close(o->fd);
	memset(o, 0, sizeof *o);
}

void elfinfo_forget_all(void)
{
	for (size_t i = 0; i < ELFINFO_CACHE; i++)
		elfinfo_obj_drop(&elfinfo_cache[i]);
}

/* The parsed object for PATH: from the cache when the same file (device,
 * inode, size, mtime) is there, else opened and put in the least recently
 * used slot. */
static int elfinfo_obj_get(const char *path, struct elfinfo_obj **res)
{
	struct elfinfo_obj *o, *victim = &elfinfo_cache[0];
	struct stat st;
	Elf *elf;
	int fd;

	if (!elfinfo_init())
		return -ENOSYS;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) != 0) {
		int err = -errno;
		close(fd);
		return err;
	}
	for (size_t i = 0; i < ELFINFO_CACHE; i++) {
		o = &elfinfo_cache[i];
		if (o->used && o->dev == st.st_dev && o->ino == st.st_ino && o->size == st.st_size &&
		    o->mtime.tv_sec == st.st_mtim.tv_sec && o->mtime.tv_nsec == st.st_mtim.tv_nsec) {
			close(fd);
			o->last_use = ++elfinfo_clock;
			*res = o;
			return 0;
		}
		if (!o->used || (victim->used && o->last_use < victim->last_use))
			victim = o;
	}
	elf = elfinfo_lib.elf_begin(fd, ELF_C_READ, NULL);
	if (elf == NULL || elfinfo_lib.elf_kind(elf) != ELF_K_ELF) {
		if (elf != NULL)
			elfinfo_lib.elf_end(elf);
		close(fd);
		return -ENOEXEC;
	}
	elfinfo_obj_drop(victim);
	victim->used = true;
	victim->dev = st.st_dev;
	victim->ino = st.st_ino;
	victim->size = st.st_size;
	victim->mtime = st.st_mtim;
	victim->fd = fd;
	victim->elf = elf;
	victim->last_use = ++elfinfo_clock;
	*res = victim;
	return 0;
}

/* File offset -> virtual address through the PT_LOAD that maps it. */
static int elfinfo_vaddr(Elf *elf, uint64_t file_offset, uint64_t *vaddr)
{
	size_t nph = 0;

	if (elfinfo_lib.elf_getphdrnum(elf, &nph) != 0)
		return -ENOEXEC;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (elfinfo_lib.gelf_getphdr(elf, (int)i, &ph) == NULL || ph.p_type != PT_LOAD)
			continue;
		if (file_offset >= ph.p_offset && file_offset - ph.p_offset < ph.p_filesz) {
			*vaddr = file_offset - ph.p_offset + ph.p_vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

/* The function symbol of one symbol table containing VADDR: a sized
 * symbol that covers it, else a size-0 symbol (hand-written assembly)
 * that starts exactly there. */
static bool elfinfo_lookup(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, uint64_t vaddr,
			   char *sym, size_t n, uint64_t *offset)
{
	Elf_Data *data = elfinfo_lib.elf_getdata(scn, NULL);
	size_t count;

	if (data == NULL || sh->sh_entsize == 0)
		return false;
	count = sh->sh_size / sh->sh_entsize;
	for (size_t i = 0; i < count; i++) {
		GElf_Sym s;
		int type;
		const char *name;

		if (elfinfo_lib.gelf_getsym(data, (int)i, &s) == NULL)
			break;
		type = GELF_ST_TYPE(s.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || s.st_shndx == SHN_UNDEF)
			continue;
		if (vaddr < s.st_value)
			continue;
		if (s.st_size == 0 ? vaddr != s.st_value : vaddr - s.st_value >= s.st_size)
			continue;
		name = elfinfo_lib.elf_strptr(elf, sh->sh_link, s.st_name);
		if (name == NULL || name[0] == '\0')
			continue;
		if (n > 0)
			elfinfo_copy_str(sym, n, name, strlen(name));
		*offset = vaddr - s.st_value;
		return true;
	}
	return false;
}

int elfinfo_symbol(const char *object, uint64_t file_offset, char *sym, size_t n,
		   uint64_t *offset)
{
	struct elfinfo_obj *o = NULL;
	uint64_t vaddr;
	static const unsigned tables[] = { SHT_SYMTAB, SHT_DYNSYM };
	int ret;

	if (n > 0)
		sym[0] = '\0';
	*offset = 0;
	ret = elfinfo_obj_get(object, &o);
	if (ret < 0)
		return ret;
	ret = elfinfo_vaddr(o->elf, file_offset, &vaddr);
	if (ret < 0)
		return ret;
	/* .symtab first: it has the local (static) functions that .dynsym
	 * lacks; .dynsym is all a stripped library keeps. */
	for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++) {
		Elf_Scn *scn = NULL;

		while ((scn = elfinfo_lib.elf_nextscn(o->elf, scn)) != NULL) {
			GElf_Shdr sh;

			if (elfinfo_lib.gelf_getshdr(scn, &sh) == NULL || sh.sh_type != tables[t])
				continue;
			if (elfinfo_lookup(o->elf, scn, &sh, vaddr, sym, n, offset))
				return 0;
		}
	}
	return -ENOENT;
}

/* Virtual address -> file offset through the PT_LOAD whose file bytes
 * hold it (not the zero-filled rest of a segment). */
static int elfinfo_file_offset(Elf *elf, uint64_t vaddr, uint64_t *file_offset)
{
	size_t nph = 0;

	if (elfinfo_lib.elf_getphdrnum(elf, &nph) != 0)
		return -ENOEXEC;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (elfinfo_lib.gelf_getphdr(elf, (int)i, &ph) == NULL || ph.p_type != PT_LOAD)
			continue;
		if (vaddr >= ph.p_vaddr && vaddr - ph.p_vaddr < ph.p_filesz) {
			*file_offset = vaddr - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	return -ENOENT;
}

/* Names of NAMES still UINT64_MAX in OFFSETS, looked up in one table. */
static size_t elfinfo_find_names(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh,
				 const char *const *names, size_t n, uint64_t *offsets)
{
	Elf_Data *data = elfinfo_lib.elf_getdata(scn, NULL);
	size_t count, found = 0;

	if (data == NULL || sh->sh_entsize == 0)
		return 0;
	count = sh->sh_size / sh->sh_entsize;
	for (size_t i = 0; i < count; i++) {
		GElf_Sym s;
		const char *name;

		if (elfinfo_lib.gelf_getsym(data, (int)i, &s) == NULL)
			break;
		if (s.st_shndx == SHN_UNDEF || s.st_name == 0)
			continue;
		name = elfinfo_lib.elf_strptr(elf, sh->sh_link, s.st_name);
		if (name == NULL)
			continue;
		for (size_t k = 0; k < n; k++)
			if (offsets[k] == UINT64_MAX && strcmp(name, names[k]) == 0 &&
			    elfinfo_file_offset(elf, s.st_value, &offsets[k]) == 0)
				found++;
	}
	return found;
}

int elfinfo_symbol_offsets(const char *object, const char *const *names, size_t n,
			   uint64_t *offsets)
{
	struct elfinfo_obj *o = NULL;
	Elf_Scn *scn = NULL;
	size_t found = 0;
	int ret;

	for (size_t k = 0; k < n; k++)
		offsets[k] = UINT64_MAX;
	ret = elfinfo_obj_get(object, &o);
	if (ret < 0)
		return ret;
	while ((scn = elfinfo_lib.elf_nextscn(o->elf, scn)) != NULL) {
		GElf_Shdr sh;

		if (elfinfo_lib.gelf_getshdr(scn, &sh) == NULL || sh.sh_type != SHT_DYNSYM)
			continue;
		found += elfinfo_find_names(o->elf, scn, &sh, names, n, offsets);
	}
	return (int)found;
}
