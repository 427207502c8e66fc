/* Remote backtraces with libunwind-ptrace.  See backtrace.h.
 *
 * libunwind reads registers with PTRACE_PEEKUSER and memory with
 * PTRACE_PEEKDATA through the _UPT_accessors, so the thread must be in a
 * ptrace-stop; every failure of those (ESRCH when the tracee died, EIO,
 * EFAULT) comes back as an error from unw_step() and ends the walk. */
#include "config.h"

#include "tracer/inspect/backtrace.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libunwind-ptrace.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/testknob.h"
#include "tracer/inspect/elfinfo.h"
#include "tracer/inspect/proc.h"

/* libunwind is opened at the first backtrace, not linked: most runs take
 * none (only denials and alerts do), and linking it made the loader map
 * and relocate libunwind-ptrace, libunwind-x86_64, libunwind and liblzma
 * at every start of agenttrace.  configure puts the sonames of the
 * libraries it found into config.h.  libunwind-ptrace has no DT_NEEDED on
 * the libunwind it calls (_Ux86_64_dwarf_*, _Ux86_64_get_elf_image): that
 * one is opened first with RTLD_GLOBAL so that the loader finds them, and
 * both with RTLD_NOW, so that a mismatch fails here and not as a "symbol
 * lookup error" exit in the middle of a session.  The public names are
 * macros (unw_init_remote is _Ux86_64_init_remote): BT_STR expands them. */
#ifndef BACKTRACE_UNWIND_SONAME
#define BACKTRACE_UNWIND_SONAME "libunwind-x86_64.so.8"
#endif
#ifndef BACKTRACE_UNWIND_PTRACE_SONAME
#define BACKTRACE_UNWIND_PTRACE_SONAME "libunwind-ptrace.so.0"
#endif
#define BT_STR_(x) #x
#define BT_STR(x) BT_STR_(x)

static struct {
	__typeof__(unw_create_addr_space) *create_addr_space;
	__typeof__(unw_destroy_addr_space) *destroy_addr_space;
	__typeof__(unw_set_caching_policy) *set_caching_policy;
	__typeof__(unw_flush_cache) *flush_cache;
	__typeof__(unw_init_remote) *init_remote;
	__typeof__(unw_get_reg) *get_reg;
	__typeof__(unw_step) *step;
	__typeof__(unw_get_proc_name) *get_proc_name;
	__typeof__(unw_is_signal_frame) *is_signal_frame;
	__typeof__(_UPT_create) *upt_create;
	__typeof__(_UPT_destroy) *upt_destroy;
	__typeof__(_UPT_access_mem) *upt_access_mem;
	unw_accessors_t *upt_accessors;
} bt_unw;

static bool bt_unw_load(const char **why)
{
	void *gen, *upt;

	gen = dlopen(BACKTRACE_UNWIND_SONAME, RTLD_NOW | RTLD_GLOBAL);
	upt = gen ? dlopen(BACKTRACE_UNWIND_PTRACE_SONAME, RTLD_NOW | RTLD_LOCAL) : NULL;
	if (upt == NULL) {
		*why = dlerror();
		return false;
	}
	/* On a missing name the handles stay open: harmless. */
#define BT_SYM(h, field, name)                                                          \
	do {                                                                            \
		bt_unw.field = (__typeof__(bt_unw.field))dlsym(h, BT_STR(name));        \
		if (bt_unw.field == NULL) {                                             \
			*why = "no symbol " BT_STR(name);                               \
			return false;                                                   \
		}                                                                       \
	} while (0)
	BT_SYM(gen, create_addr_space, unw_create_addr_space);
	BT_SYM(gen, destroy_addr_space, unw_destroy_addr_space);
	BT_SYM(gen, set_caching_policy, unw_set_caching_policy);
	BT_SYM(gen, flush_cache, unw_flush_cache);
	BT_SYM(gen, init_remote, unw_init_remote);
	BT_SYM(gen, get_reg, unw_get_reg);
	BT_SYM(gen, step, unw_step);
	BT_SYM(gen, get_proc_name, unw_get_proc_name);
	BT_SYM(gen, is_signal_frame, unw_is_signal_frame);
	BT_SYM(upt, upt_create, _UPT_create);
	BT_SYM(upt, upt_destroy, _UPT_destroy);
	BT_SYM(upt, upt_access_mem, _UPT_access_mem);
	BT_SYM(upt, upt_accessors, _UPT_accessors);
#undef BT_SYM
	return true;
}

/* Opens libunwind (libunwind-x86_64 and libunwind-ptrace, sonames from
 * configure) on the first call; false, then and ever after, when it
 * cannot be loaded. */
static bool backtrace_ready(void)
{
	static int state; /* 0 not tried, 1 loaded, -1 failed */
	const char *why = NULL;

	if (state == 0) {
		state = bt_unw_load(&why) ? 1 : -1;
		/* Once: records go on without backtraces. */
		if (state < 0)
			info_msg("backtraces are off: cannot load libunwind (%s)",
				 why ? why : "unknown error");
	}
	return state > 0;
}

/* One traced process's libunwind state. */
struct bt_space {
	pid_t tgid;              /* 0: free slot */
	pid_t tid;               /* the thread UPT was created for */
	unw_addr_space_t as;
	void *upt;
	uint64_t maps_hash;      /* of the file-backed lines of /proc/PID/maps */
	unsigned long last_use;
};

/* One line of /proc/PID/maps; PATH points into the text buffer. */
struct bt_map {
	uint64_t start, end, off;
	const char *path;
};

struct bt_maps {
	char *text;
	struct bt_map *map;
	size_t n;
	uint64_t hash;
};

static struct bt_space bt_spaces[BACKTRACE_SPACES];
static unsigned long bt_clock;
static enum backtrace_names bt_names;

/* Tracee memory for libunwind, a page at a time.  _UPT_access_mem reads
 * one word per PTRACE_PEEKDATA, and parsing one frame's CIE/FDE and the
 * .eh_frame_hdr search table takes a hundred words or more: measured 200
 * ptrace calls and about 2 ms for the first backtrace of a process.
 * process_vm_readv(2) of whole pages into a small cache, emptied at every
 * backtrace (the tracee ran in between), reads the same words with a
 * handful of calls. */
#define BT_PAGE 4096
#define BT_PAGES 8

struct bt_page {
	uint64_t base;
	bool valid;
	unsigned char data[BT_PAGE];
};

static struct bt_page bt_pages[BT_PAGES];
static unsigned bt_page_next;
static pid_t bt_mem_tid;        /* the thread being unwound */
static unw_accessors_t bt_accessors;

void backtrace_set_names(enum backtrace_names names)
{
	bt_names = names;
}

static const struct bt_page *bt_page_get(uint64_t base)
{
	struct bt_page *pg;
	struct iovec local, remote;

	for (unsigned i = 0; i < BT_PAGES; i++)
		if (bt_pages[i].valid && bt_pages[i].base == base)
			return &bt_pages[i];
	pg = &bt_pages[bt_page_next];
	bt_page_next = (bt_page_next + 1) % BT_PAGES;
	pg->valid = false;
	local.iov_base = pg->data;
	local.iov_len = BT_PAGE;
	remote.iov_base = (void *)(uintptr_t)base;
	remote.iov_len = BT_PAGE;
	if (process_vm_readv(bt_mem_tid, &local, 1, &remote, 1, 0) != BT_PAGE)
		return NULL;
	pg->base = base;
	pg->valid = true;
	return pg;
}

/* Reads through the page cache; writes, unaligned words and pages that
 * process_vm_readv cannot read (a guard page next to a valid word, a
 * kernel without it) go to libunwind's own PTRACE_PEEKDATA path. */
static int bt_access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val, int write,
			 void *arg)
{
	const struct bt_page *pg;

	if (!write && bt_mem_tid > 0 && (addr & (sizeof *val - 1)) == 0) {
		pg = bt_page_get(addr & ~(uint64_t)(BT_PAGE - 1));
		if (pg != NULL) {
			memcpy(val, pg->data + (addr - pg->base), sizeof *val);
			return 0;
		}
	}
	return bt_unw.upt_access_mem(as, addr, val, write, arg);
}

static void bt_mem_reset(pid_t tid)
{
	for (unsigned i = 0; i < BT_PAGES; i++)
		bt_pages[i].valid = false;
	bt_mem_tid = tid;
}

static int64_t bt_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* The whole of a /proc file (they report size 0, so read until EOF). */
static int bt_slurp(const char *path, char **res)
{
	size_t cap = 8192, len = 0;
	char *buf, *bigger;
	int fd, ret = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	buf = malloc(cap);
	if (buf == NULL) {
		ret = -ENOMEM;
		goto out_fd;
	}
	for (;;) {
		ssize_t r;

		if (cap - len < 2) {
			bigger = realloc(buf, cap * 2);
			if (bigger == NULL) {
				ret = -ENOMEM;
				goto out_buf;
			}
			buf = bigger;
			cap *= 2;
		}
		r = read(fd, buf + len, cap - len - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			ret = -errno;
			goto out_buf;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	buf[len] = '\0';
	*res = buf;
	buf = NULL;
out_buf:
	free(buf);
out_fd:
	close(fd);
	return ret;
}

static pid_t bt_tgid(pid_t pid)
{
	char text[512];
	unsigned long long tgid;
	ssize_t n = proc_read(pid, "status", text, sizeof(text));

	if (n < 0)
		return n == -ENOENT ? -ESRCH : (pid_t)n;
	if (!proc_status_field(text, "\nTgid:", 10, &tgid) || tgid == 0)
		return -ESRCH;
	return (pid_t)tgid;
}

static void bt_maps_free(struct bt_maps *m)
{
	free(m->text);
	free(m->map);
	memset(m, 0, sizeof *m);
}

/* "start-end perms offset dev inode   path" (proc(5)).  Lines are cut in
 * place; the hash covers the file-backed lines only, so that heap and
 * stack growth do not count as a change of the code mapped. */
static int bt_maps_read(pid_t pid, struct bt_maps *m)
{
	char path[64], *line, *next;
	size_t cap = 0;
	int ret;

	memset(m, 0, sizeof *m);
	m->hash = 1469598103934665603ULL; /* FNV-1a */
	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	ret = bt_slurp(path, &m->text);
	if (ret < 0)
		return ret == -ENOENT ? -ESRCH : ret;
	for (line = m->text; *line != '\0'; line = next) {
		struct bt_map map;
		char *p, *end;

		next = strchr(line, '\n');
		if (next != NULL)
			*next++ = '\0';
		else
			next = line + strlen(line);
		map.start = strtoull(line, &end, 16);
		if (*end != '-')
			continue;
		map.end = strtoull(end + 1, &p, 16);
		p = strchr(p, ' ');                       /* perms */
		if (p == NULL)
			continue;
		p = strchr(p + 1, ' ');                   /* offset */
		if (p == NULL)
			continue;
		map.off = strtoull(p + 1, &end, 16);
		p = strchr(end + 1, ' ');                 /* dev, inode */
		p = p != NULL ? strchr(p + 1, ' ') : NULL;
		if (p == NULL)
			p = end + strlen(end);
		while (*p == ' ')
			p++;
		map.path = p;
		if (*p == '/')
			for (const char *c = line; c < p + strlen(p); c++)
				m->hash = (m->hash ^ (unsigned char)*c) * 1099511628211ULL;
		if (m->n == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			struct bt_map *bigger = realloc(m->map, ncap * sizeof *bigger);

			if (bigger == NULL) {
				bt_maps_free(m);
				return -ENOMEM;
			}
			m->map = bigger;
			cap = ncap;
		}
		m->map[m->n++] = map;
	}
	return 0;
}

static const struct bt_map *bt_maps_find(const struct bt_maps *m, uint64_t pc)
{
	for (size_t i = 0; i < m->n; i++)
		if (pc >= m->map[i].start && pc < m->map[i].end)
			return &m->map[i];
	return NULL;
}

static void bt_space_drop(struct bt_space *sp)
{
	if (sp->tgid == 0)
		return;
	if (sp->upt != NULL)
		bt_unw.upt_destroy(sp->upt);
	if (sp->as != NULL)
		bt_unw.destroy_addr_space(sp->as);
	memset(sp, 0, sizeof *sp);
}

void backtrace_forget(pid_t pid)
{
	for (size_t i = 0; i < BACKTRACE_SPACES; i++)
		if (bt_spaces[i].tgid == pid || bt_spaces[i].tid == pid)
			bt_space_drop(&bt_spaces[i]);
}

void backtrace_forget_all(void)
{
	for (size_t i = 0; i < BACKTRACE_SPACES; i++)
		bt_space_drop(&bt_spaces[i]);
	elfinfo_forget_all();
}

/* The address space of TGID, ready to unwind thread TID. */
static int bt_space_get(pid_t tgid, pid_t tid, uint64_t maps_hash, struct bt_space **res)
{
	struct bt_space *sp = NULL, *victim = &bt_spaces[0];

	for (size_t i = 0; i < BACKTRACE_SPACES; i++) {
		struct bt_space *s = &bt_spaces[i];

		if (s->tgid == tgid) {
			sp = s;
			break;
		}
		if (s->tgid == 0 || (victim->tgid != 0 && s->last_use < victim->last_use))
			victim = s;
	}
	if (sp == NULL) {
		bt_space_drop(victim);
		sp = victim;
		if (bt_accessors.access_mem == NULL) {
			bt_accessors = *bt_unw.upt_accessors;
			bt_accessors.access_mem = bt_access_mem;
		}
		sp->as = bt_unw.create_addr_space(&bt_accessors, 0);
		if (sp->as == NULL)
			return -ENOMEM;
		sp->tgid = tgid;
		/* The per-address-space cache keeps the parsed unwind tables
		 * between backtraces of one process. */
		bt_unw.set_caching_policy(sp->as, UNW_CACHE_GLOBAL);
		sp->maps_hash = maps_hash;
	} else if (sp->maps_hash != maps_hash) {
		/* Code was mapped or unmapped since: cached unwind info may
		 * describe addresses that now hold other code.  The UPT keeps
		 * an image of the last object it read, stale as well. */
		bt_unw.flush_cache(sp->as, 0, 0);
		if (sp->upt != NULL)
			bt_unw.upt_destroy(sp->upt);
		sp->upt = NULL;
		sp->maps_hash = maps_hash;
	}
	if (sp->upt != NULL && sp->tid != tid) {
		bt_unw.upt_destroy(sp->upt);
		sp->upt = NULL;
	}
	if (sp->upt == NULL) {
		sp->upt = bt_unw.upt_create(tid);
		if (sp->upt == NULL) {
			bt_space_drop(sp);
			return -ENOMEM;
		}
		sp->tid = tid;
	}
	sp->last_use = ++bt_clock;
	*res = sp;
	return 0;
}

/* The symbol through libelf: the exact mapped file via
 * /proc/PID/map_files (still right after the path was replaced or
 * deleted; needs CAP_SYS_ADMIN), else the path the maps line shows.
 * 0 named; -ENOENT the object has no symbol there; other -errno: the
 * object could not be read as ELF. */
static int bt_elf_name(pid_t pid, const struct bt_map *map, uint64_t lookup_pc,
		       struct bt_frame *f)
{
	uint64_t file_off = lookup_pc - map->start + map->off, off;
	char mf[96];
	int r;

	snprintf(mf, sizeof mf, "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid,
		 map->start, map->end);
	r = elfinfo_symbol(mf, file_off, f->sym, sizeof f->sym, &off);
	if (r != 0 && r != -ENOENT)
		r = elfinfo_symbol(map->path, file_off, f->sym, sizeof f->sym, &off);
	if (r == 0 && f->sym[0] != '\0') {
		f->offset = off + (f->pc - lookup_pc);
		return 0;
	}
	f->sym[0] = '\0';
	return r < 0 ? r : -ENOENT;
}

/* libunwind's name: the ELF tables again (the nearest preceding symbol,
 * sizes ignored, so a static function of a stripped library gets the
 * name of the exported one before it), and also the procedure names a
 * JIT may register with _U_dyn_register(). */
static void bt_unwind_name(unw_cursor_t *cursor, struct bt_frame *f)
{
	unw_word_t off = 0;
	int r = bt_unw.get_proc_name(cursor, f->sym, sizeof f->sym, &off);

	/* -UNW_ENOMEM: the name was truncated to fit; keep it. */
	if ((r == 0 || r == -UNW_ENOMEM) && f->sym[0] != '\0')
		f->offset = off;
	else
		f->sym[0] = '\0';
}

static void bt_copy(char *dst, size_t size, const char *src)
{
	size_t len = strnlen(src, size - 1);

	memcpy(dst, src, len);
	dst[len] = '\0';
}

/* The tests' budget (AGENTTRACE_TEST_BACKTRACE_BUDGET_MS): whether a
 * record gets its whole backtrace must not depend on how loaded the
 * machine is, or on a sanitizer's slowdown. */
static int bt_test_budget_us(void)
{
	static int us = -1;

	if (us < 0) {
		long ms = test_knob("BACKTRACE_BUDGET_MS", 0, 0, 60000);

		us = ms > 0 && ms <= 60000 ? (int)ms * 1000 : 0;
	}
	return us;
}

int backtrace_take(pid_t pid, struct bt_frame *frames, int max, int budget_us)
{
	int64_t deadline;
	struct bt_maps maps;
	struct bt_space *sp;
	unw_cursor_t cursor;
	bool prev_signal = false;
	pid_t tgid;
	int n = 0, ret;

	if (max <= 0)
		return 0;
	/* Before the clock starts: the first dlopen() must not eat the
	 * budget. */
	if (!backtrace_ready())
		return -ELIBACC;
	if (bt_test_budget_us())
		budget_us = bt_test_budget_us();
	deadline = bt_now_us() + (budget_us > 0 ? budget_us : BACKTRACE_BUDGET_US);
	tgid = bt_tgid(pid);
	if (tgid < 0)
		return tgid;
	ret = bt_maps_read(pid, &maps);
	if (ret < 0)
		return ret;
	ret = bt_space_get(tgid, pid, maps.hash, &sp);
	if (ret < 0)
		goto out_maps;
	bt_mem_reset(pid);
	ret = bt_unw.init_remote(&cursor, sp->as, sp->upt);
	if (ret < 0) {
		/* The registers could not be read: the thread is gone or not
		 * in a ptrace-stop of ours. */
		ret = kill(pid, 0) != 0 && errno == ESRCH ? -ESRCH : -EIO;
		goto out_maps;
	}
	for (;;) {
		struct bt_frame *f = &frames[n];
		const struct bt_map *map;
		unw_word_t ip = 0;
		uint64_t lookup_pc;
		bool elf_read = false;
		int r;

		if (bt_unw.get_reg(&cursor, UNW_REG_IP, &ip) < 0 || ip == 0)
			break;
		memset(f, 0, sizeof *f);
		f->pc = ip;
		/* Above frame 0 the pc is a return address, which may already
		 * be the next function (a call to a noreturn function ends its
		 * caller): name the call instruction instead.  After a signal
		 * frame the pc is the interrupted instruction itself. */
		lookup_pc = n > 0 && !prev_signal && ip > 0 ? ip - 1 : ip;
		map = bt_maps_find(&maps, lookup_pc);
		if (map != NULL)
			bt_copy(f->object, sizeof f->object, map->path);
		/* By default libunwind is asked only where libelf could not
		 * read the object ([vdso], anonymous code, a file gone): for
		 * an ELF file it would search the same tables, slower. */
		if (map != NULL && map->path[0] == '/' &&
		    (bt_names == BACKTRACE_NAMES_DEFAULT || bt_names == BACKTRACE_NAMES_ELF)) {
			r = bt_elf_name(pid, map, lookup_pc, f);
			if (r == 0 || r == -ENOENT)
				elf_read = true;
		}
		if (f->sym[0] == '\0' &&
		    ((bt_names == BACKTRACE_NAMES_DEFAULT && !elf_read) ||
		     bt_names == BACKTRACE_NAMES_UNWIND))
			bt_unwind_name(&cursor, f);
		n++;
		prev_signal = bt_unw.is_signal_frame(&cursor) > 0;
		if (n >= max || bt_now_us() >= deadline)
			break;
		if (bt_unw.step(&cursor) <= 0)
			break;
	}
	ret = n;
out_maps:
	bt_mem_reset(0);
	bt_maps_free(&maps);
	return ret;
}
