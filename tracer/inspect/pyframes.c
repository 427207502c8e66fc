/* Python frames read from outside the interpreter.  See pyframes.h. */
#include "config.h"

#include "tracer/inspect/pyframes.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "lib/log.h"
#include "tracer/inspect/elfinfo.h"
#include "tracer/inspect/proc.h"
#include "tracer/syscall/mem.h"

/* Bounds on what is read: the caller's memory says how much there is,
 * and it may lie. */
#define PY_MAPS_MAX (4u << 20)   /* /proc/PID/maps text */
#define PY_INTERPS_MAX 16        /* interpreters (sub-interpreters) */
#define PY_THREADS_MAX 1024      /* thread states, all interpreters */
#define PY_LINETABLE_MAX 16384   /* bytes of one code object's line table */
#define PY_STRING_MAX 255        /* characters of a file or function name */

/* Where things are in one CPython version's structures (x86-64). */
struct py_layout {
	unsigned version;                /* PY_VERSION_HEX >> 16: 0x030b is 3.11 */
	uint64_t runtime_interp_head;    /* _PyRuntimeState.interpreters.head */
	uint64_t interp_next;            /* PyInterpreterState.next */
	uint64_t interp_threads_head;    /* PyInterpreterState.threads.head */
	uint64_t tstate_next;            /* PyThreadState.next */
	uint64_t tstate_native_id;       /* PyThreadState.native_thread_id */
	bool has_cframe;                 /* 3.11, 3.12: the frame is in a _PyCFrame */
	uint64_t tstate_frame;           /* PyThreadState.cframe, else .current_frame */
	uint64_t cframe_current;         /* _PyCFrame.current_frame */
	uint64_t frame_code;             /* _PyInterpreterFrame.f_code (f_executable) */
	uint64_t frame_previous;         /* _PyInterpreterFrame.previous */
	uint64_t frame_instr;            /* .prev_instr (3.11, 3.12), .instr_ptr (3.13) */
	uint64_t frame_owner;            /* _PyInterpreterFrame.owner (char) */
	uint64_t code_firstlineno;       /* PyCodeObject.co_firstlineno (int) */
	uint64_t code_filename;          /* PyCodeObject.co_filename */
	uint64_t code_qualname;          /* PyCodeObject.co_qualname */
	uint64_t code_linetable;         /* PyCodeObject.co_linetable (bytes) */
	uint64_t code_firsttraceable;    /* PyCodeObject._co_firsttraceable (int); 0: not known */
	uint64_t code_code;              /* PyCodeObject.co_code_adaptive */
	uint64_t ob_type;                /* PyObject.ob_type */
	uint64_t bytes_size;             /* PyVarObject.ob_size */
	uint64_t bytes_data;             /* PyBytesObject.ob_sval */
	uint64_t str_length;             /* PyASCIIObject.length */
	uint64_t str_state;              /* PyASCIIObject.state (bit-field word) */
	uint64_t str_ascii_data;         /* sizeof(PyASCIIObject) */
	uint64_t str_compact_data;       /* sizeof(PyCompactUnicodeObject) */
	int owner_cstack;                /* owner of C-stack entry frames (3.12+); -1 none */
};

/* CPython 3.11 and 3.12 (x86-64, the default build), from their
 * internal headers (pycore_runtime.h, pycore_interp.h,
 * cpython/pystate.h, pycore_frame.h, cpython/code.h,
 * cpython/unicodeobject.h) with offsetof(), checked against 3.11.2,
 * 3.11.7 and 3.12.1.  CPython keeps them fixed within a minor version.
 * 3.13 publishes its own (_Py_DebugOffsets, py_debug_offsets()). */
static const struct py_layout py_layouts[] = {
	{
		.version = 0x030b,
		.runtime_interp_head = 40,
		.interp_next = 0,
		.interp_threads_head = 16,
		.tstate_next = 8,
		.tstate_native_id = 160,
		.has_cframe = true,
		.tstate_frame = 56,
		.cframe_current = 8,
		.frame_code = 32,
		.frame_previous = 48,
		.frame_instr = 56,
		.frame_owner = 69,
		.code_firstlineno = 72,
		.code_filename = 112,
		.code_qualname = 128,
		.code_linetable = 136,
		.code_firsttraceable = 168,
		.code_code = 184,
		.ob_type = 8,
		.bytes_size = 16,
		.bytes_data = 32,
		.str_length = 16,
		.str_state = 32,
		.str_ascii_data = 48,      /* 3.11 still has the wstr pointer */
		.str_compact_data = 72,
		.owner_cstack = -1,
	},
	{
		.version = 0x030c,
		.runtime_interp_head = 40,
		.interp_next = 0,
		.interp_threads_head = 72,
		.tstate_next = 8,
		.tstate_native_id = 144,
		.has_cframe = true,
		.tstate_frame = 56,
		.cframe_current = 0,
		.frame_code = 0,
		.frame_previous = 8,
		.frame_instr = 56,
		.frame_owner = 70,
		.code_firstlineno = 68,
		.code_filename = 112,
		.code_qualname = 128,
		.code_linetable = 136,
		.code_firsttraceable = 176,
		.code_code = 192,
		.ob_type = 8,
		.bytes_size = 16,
		.bytes_data = 32,
		.str_length = 16,
		.str_state = 32,
		.str_ascii_data = 40,
		.str_compact_data = 56,
		.owner_cstack = 3,
	},
};

/* _Py_DebugOffsets of CPython 3.13, at the start of _PyRuntime: a
 * cookie, the version, then 64-bit offsets in a fixed order (its
 * pycore_runtime.h); the word index of each one used. */
#define PY_DEBUG_COOKIE "xdebugpy"
enum {
	PY_DO_VERSION = 1, PY_DO_FREE_THREADED = 2,
	PY_DO_RT_INTERP_HEAD = 5,
	PY_DO_IS_NEXT = 8, PY_DO_IS_THREADS_HEAD = 9,
	PY_DO_TS_NEXT = 21, PY_DO_TS_CURRENT_FRAME = 23, PY_DO_TS_NATIVE_ID = 25,
	PY_DO_FR_PREVIOUS = 29, PY_DO_FR_EXECUTABLE = 30, PY_DO_FR_INSTR_PTR = 31,
	PY_DO_FR_OWNER = 33,
	PY_DO_CO_FILENAME = 35, PY_DO_CO_QUALNAME = 37, PY_DO_CO_LINETABLE = 38,
	PY_DO_CO_FIRSTLINENO = 39, PY_DO_CO_CODE = 43,
	PY_DO_OB_TYPE = 45,
	PY_DO_BY_SIZE = 65, PY_DO_BY_SVAL = 66,
	PY_DO_UN_STATE = 68, PY_DO_UN_LENGTH = 69, PY_DO_UN_ASCII_SIZE = 70,
	PY_DO_WORDS = 73,
};
/* An offset the debug offsets give: read from the caller, so bounded
 * (CPython's largest, in PyInterpreterState, are a few KiB). */
#define PY_OFFSET_MAX (1u << 20)

#define PY_OWNED_BY_GENERATOR 1  /* _PyInterpreterFrame.owner */

/* The symbols looked up, and what they are at in the caller. */
enum { PY_SYM_RUNTIME, PY_SYM_VERSION, PY_SYM_CODE_TYPE, PY_SYM_UNICODE_TYPE,
       PY_SYM_BYTES_TYPE, PY_SYMS };
static const char *const py_sym_names[PY_SYMS] = {
	"_PyRuntime", "Py_Version", "PyCode_Type", "PyUnicode_Type", "PyBytes_Type",
};

struct py_proc {
	pid_t pid;
	struct py_layout lay;
	uint64_t addr[PY_SYMS];
};

/* The caller's memory a page at a time: a walk reads some 20 small
 * fields a frame, mostly on the same few pages (the frame stack, the
 * code objects, their strings), and one process_vm_readv(2) costs about
 * as much for a page as for a word.  Emptied at every walk (the process
 * ran in between). */
#define PY_PAGE 4096u
#define PY_PAGES 16

static struct {
	uint64_t base;
	bool valid;
	unsigned char data[PY_PAGE];
} py_pages[PY_PAGES];
static unsigned py_page_next;

static void py_pages_reset(void)
{
	for (unsigned i = 0; i < PY_PAGES; i++)
		py_pages[i].valid = false;
}

static const unsigned char *py_page(pid_t pid, uint64_t base)
{
	struct iovec local, remote;
	unsigned i;

	for (i = 0; i < PY_PAGES; i++)
		if (py_pages[i].valid && py_pages[i].base == base)
			return py_pages[i].data;
	i = py_page_next;
	py_page_next = (py_page_next + 1) % PY_PAGES;
	py_pages[i].valid = false;
	local.iov_base = py_pages[i].data;
	local.iov_len = PY_PAGE;
	remote.iov_base = (void *)(uintptr_t)base;
	remote.iov_len = PY_PAGE;
	if (process_vm_readv(pid, &local, 1, &remote, 1, 0) != (ssize_t)PY_PAGE)
		return NULL;
	py_pages[i].base = base;
	py_pages[i].valid = true;
	return py_pages[i].data;
}

/* LEN bytes at ADDR: within one page through the page cache, else (or
 * where process_vm_readv cannot read the page) through mem_read(). */
static int py_read(const struct py_proc *p, uint64_t addr, void *buf, size_t len)
{
	uint64_t base = addr & ~(uint64_t)(PY_PAGE - 1);
	const unsigned char *pg;

	if (addr == 0 || addr > UINT64_MAX - len)
		return -EFAULT;
	if (len == 0)
		return 0;
	if (addr - base + len <= PY_PAGE && (pg = py_page(p->pid, base)) != NULL) {
		memcpy(buf, pg + (addr - base), len);
		return 0;
	}
	return mem_read(p->pid, (unsigned long)addr, buf, len);
}

/* The pointer-sized word at BASE + OFF; 0 when it cannot be read (a
 * NULL pointer ends every walk). */
static uint64_t py_ptr(const struct py_proc *p, uint64_t base, uint64_t off)
{
	uint64_t v;

	if (base == 0 || base > UINT64_MAX - off || py_read(p, base + off, &v, sizeof v) < 0)
		return 0;
	return v;
}

static bool py_int(const struct py_proc *p, uint64_t base, uint64_t off, int32_t *v)
{
	return base != 0 && base <= UINT64_MAX - off && py_read(p, base + off, v, sizeof *v) == 0;
}

/* Whether the object at ADDR has the type at TYPE (0: not known, taken
 * as yes). */
static bool py_is(const struct py_proc *p, uint64_t addr, uint64_t type)
{
	return addr != 0 && (type == 0 || py_ptr(p, addr, p->lay.ob_type) == type);
}

/* /proc/PID/maps, whole, NUL-terminated (a heap buffer to free). */
static int py_maps_text(pid_t pid, char **out)
{
	char path[64];
	size_t cap = 16384, len = 0;
	char *buf = NULL;
	int fd;

	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	for (;;) {
		ssize_t n;

		if (buf == NULL || len + 1 >= cap) {
			char *bigger;

			if (buf != NULL)
				cap *= 2;
			bigger = cap <= PY_MAPS_MAX ? realloc(buf, cap) : NULL;
			if (bigger == NULL) {
				free(buf);
				close(fd);
				return -ENOMEM;
			}
			buf = bigger;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = errno == ESRCH ? -ESRCH : -errno;
			free(buf);
			close(fd);
			return err;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	*out = buf;
	return 0;
}

struct py_map {
	uint64_t start, end, off;
	const char *path;        /* into the text, cut at the line's end */
};

/* One line of maps ("start-end perms offset dev inode   path"); false
 * for a line without a file. */
static bool py_map_parse(char *line, struct py_map *m)
{
	char *p, *end;

	m->start = strtoull(line, &end, 16);
	if (*end != '-')
		return false;
	m->end = strtoull(end + 1, &p, 16);
	p = strchr(p, ' ');
	p = p ? strchr(p + 1, ' ') : NULL;
	if (p == NULL)
		return false;
	m->off = strtoull(p + 1, &end, 16);
	p = strchr(end + 1, ' ');
	p = p ? strchr(p + 1, ' ') : NULL;
	if (p == NULL)
		return false;
	while (*p == ' ')
		p++;
	m->path = p;
	return *p == '/';
}

/* Whether PATH may hold CPython's runtime: the program itself (FIRST,
 * the first file mapped) or a libpython. */
static bool py_candidate(const char *path, bool first)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return first || strncmp(base, "libpython", 9) == 0;
}

/* The caller's address of file offset FO of PATH, through its mappings. */
static uint64_t py_map_addr(char *const *lines, size_t n, const char *path, uint64_t fo)
{
	for (size_t i = 0; i < n; i++) {
		struct py_map m;
		char copy[1024];

		snprintf(copy, sizeof copy, "%s", lines[i]);
		if (!py_map_parse(copy, &m) || strcmp(m.path, path) != 0)
			continue;
		if (fo >= m.off && fo - m.off < m.end - m.start)
			return m.start + (fo - m.off);
	}
	return 0;
}

/* The layout of 3.13 from its _Py_DebugOffsets at RUNTIME, into L.
 * False when they are not there or not sane (a free-threaded build,
 * whose objects differ, is not read). */
static bool py_debug_offsets(const struct py_proc *p, uint64_t runtime, struct py_layout *L)
{
	uint64_t w[PY_DO_WORDS];

	if (py_read(p, runtime, w, sizeof w) < 0 || memcmp(w, PY_DEBUG_COOKIE, 8) != 0 ||
	    (w[PY_DO_VERSION] >> 16 & 0xffff) != 0x030d || w[PY_DO_FREE_THREADED] != 0)
		return false;
	for (int i = PY_DO_RT_INTERP_HEAD; i < PY_DO_WORDS; i++)
		if (w[i] > PY_OFFSET_MAX)
			return false;
	memset(L, 0, sizeof *L);
	L->version = 0x030d;
	L->runtime_interp_head = w[PY_DO_RT_INTERP_HEAD];
	L->interp_next = w[PY_DO_IS_NEXT];
	L->interp_threads_head = w[PY_DO_IS_THREADS_HEAD];
	L->tstate_next = w[PY_DO_TS_NEXT];
	L->tstate_native_id = w[PY_DO_TS_NATIVE_ID];
	L->tstate_frame = w[PY_DO_TS_CURRENT_FRAME];
	L->frame_code = w[PY_DO_FR_EXECUTABLE];
	L->frame_previous = w[PY_DO_FR_PREVIOUS];
	L->frame_instr = w[PY_DO_FR_INSTR_PTR];
	L->frame_owner = w[PY_DO_FR_OWNER];
	L->code_firstlineno = w[PY_DO_CO_FIRSTLINENO];
	L->code_filename = w[PY_DO_CO_FILENAME];
	L->code_qualname = w[PY_DO_CO_QUALNAME];
	L->code_linetable = w[PY_DO_CO_LINETABLE];
	L->code_code = w[PY_DO_CO_CODE];
	L->ob_type = w[PY_DO_OB_TYPE];
	L->bytes_size = w[PY_DO_BY_SIZE];
	L->bytes_data = w[PY_DO_BY_SVAL];
	L->str_state = w[PY_DO_UN_STATE];
	L->str_length = w[PY_DO_UN_LENGTH];
	L->str_ascii_data = w[PY_DO_UN_ASCII_SIZE];
	/* Not published: PyCompactUnicodeObject adds utf8_length and utf8. */
	L->str_compact_data = L->str_ascii_data + 16;
	L->owner_cstack = 3;
	return true;
}

/* The layout of the CPython whose Py_Version is VERSION, into P. */
static bool py_layout_of(struct py_proc *p, uint64_t version)
{
	unsigned minor = (unsigned)(version >> 16 & 0xffff);

	if (minor >= 0x030d)
		return minor == 0x030d && py_debug_offsets(p, p->addr[PY_SYM_RUNTIME], &p->lay);
	for (size_t k = 0; k < sizeof py_layouts / sizeof py_layouts[0]; k++)
		if (py_layouts[k].version == minor) {
			p->lay = py_layouts[k];
			return true;
		}
	return false;
}

/* Finds _PyRuntime and friends in the program or a libpython mapped in
 * PID, and the layout of its version.  0 and P filled; -ENOENT: not a
 * CPython (or not one known); other -errno. */
static int py_find(pid_t pid, struct py_proc *p)
{
	char *text = NULL, **lines = NULL, *line, *next;
	size_t n = 0, cap = 0;
	const char *done[8];
	size_t n_done = 0;
	int ret = py_maps_text(pid, &text), found = -ENOENT;

	if (ret < 0)
		return ret;
	for (line = text; *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		else
			next = line + strlen(line);
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 128;
			char **bigger = realloc(lines, ncap * sizeof *bigger);

			if (bigger == NULL) {
				found = -ENOMEM;
				goto out;
			}
			lines = bigger;
			cap = ncap;
		}
		lines[n++] = line;
	}
	memset(p, 0, sizeof *p);
	p->pid = pid;
	for (size_t i = 0; i < n && found == -ENOENT; i++) {
		uint64_t fo[PY_SYMS];
		struct py_map m;
		char copy[1024];
		bool seen = false;
		uint64_t version = 0;

		snprintf(copy, sizeof copy, "%s", lines[i]);
		if (!py_map_parse(copy, &m) || !py_candidate(m.path, n_done == 0))
			continue;
		for (size_t k = 0; k < n_done; k++)
			seen = seen || strcmp(done[k], lines[i] + (m.path - copy)) == 0;
		if (seen || n_done == sizeof done / sizeof done[0])
			continue;
		done[n_done++] = lines[i] + (m.path - copy);
		if (elfinfo_symbol_offsets(m.path, py_sym_names, PY_SYMS, fo) <= 0 ||
		    fo[PY_SYM_RUNTIME] == UINT64_MAX || fo[PY_SYM_VERSION] == UINT64_MAX)
			continue;
		for (int k = 0; k < PY_SYMS; k++)
			p->addr[k] = fo[k] == UINT64_MAX ? 0 : py_map_addr(lines, n, m.path, fo[k]);
		if (!p->addr[PY_SYM_RUNTIME] ||
		    py_read(p, p->addr[PY_SYM_VERSION], &version, sizeof version) < 0)
			continue;
		if (py_layout_of(p, version)) {
			found = 0;
		} else {
			debug_msg("python frames: pid %d runs CPython %#llx, a version without a known layout",
				  (int)pid, (unsigned long long)version);
			found = -ENOENT;
			break;
		}
	}
out:
	free(lines);
	free(text);
	return found;
}

/* Appends code point C as UTF-8 to OUT (N bytes, NUL kept room for). */
static void py_utf8(uint32_t c, char *out, size_t n, size_t *len)
{
	char b[4];
	size_t k;

	if (c >= 0xd800 && c < 0xe000)
		c = '?';   /* a lone surrogate is no UTF-8 */
	if (c < 0x80) {
		b[0] = (char)c;
		k = 1;
	} else if (c < 0x800) {
		b[0] = (char)(0xc0 | c >> 6);
		b[1] = (char)(0x80 | (c & 0x3f));
		k = 2;
	} else if (c < 0x10000) {
		b[0] = (char)(0xe0 | c >> 12);
		b[1] = (char)(0x80 | (c >> 6 & 0x3f));
		b[2] = (char)(0x80 | (c & 0x3f));
		k = 3;
	} else if (c < 0x110000) {
		b[0] = (char)(0xf0 | c >> 18);
		b[1] = (char)(0x80 | (c >> 12 & 0x3f));
		b[2] = (char)(0x80 | (c >> 6 & 0x3f));
		b[3] = (char)(0x80 | (c & 0x3f));
		k = 4;
	} else {
		b[0] = '?';
		k = 1;
	}
	if (*len + k < n) {
		memcpy(out + *len, b, k);
		*len += k;
	}
}

/* A str object at ADDR into OUT as UTF-8 (cut to fit); false when ADDR
 * is no compact str (then OUT is "?"). */
static bool py_string(const struct py_proc *p, uint64_t addr, char *out, size_t n)
{
	const struct py_layout *L = &p->lay;
	unsigned char data[PY_STRING_MAX * 4];
	unsigned kind, state;
	int32_t state_word;
	int64_t length;
	size_t len = 0;

	snprintf(out, n, "?");
	if (!py_is(p, addr, p->addr[PY_SYM_UNICODE_TYPE]) ||
	    py_read(p, addr + L->str_length, &length, sizeof length) < 0 ||
	    !py_int(p, addr, L->str_state, &state_word))
		return false;
	/* state: interned:2, kind:3, compact:1, ascii:1, then others */
	state = (unsigned)state_word;
	kind = state >> 2 & 7;
	if (length < 0 || !(state >> 5 & 1) || (kind != 1 && kind != 2 && kind != 4) ||
	    ((state >> 6 & 1) && kind != 1))
		return false;
	if (length > PY_STRING_MAX)
		length = PY_STRING_MAX;
	if (py_read(p, addr + ((state >> 6 & 1) ? L->str_ascii_data : L->str_compact_data), data,
		    (size_t)length * kind) < 0)
		return false;
	for (int64_t i = 0; i < length; i++) {
		uint32_t c;

		if (kind == 1)
			c = data[i];
		else if (kind == 2)
			c = (uint32_t)(data[2 * i] | data[2 * i + 1] << 8);
		else
			memcpy(&c, data + 4 * i, sizeof c);
		py_utf8(c == 0 ? '?' : c, out, n, &len);
	}
	out[len] = '\0';
	return true;
}

/* The line table's varint (6-bit chunks, 0x40 says more follow) at
 * T[*I]; T ends at N. */
static uint32_t py_varint(const unsigned char *t, size_t n, size_t *i)
{
	uint32_t v = 0;
	unsigned shift = 0;

	while (*i < n && shift < 32) {
		unsigned char b = t[(*i)++];

		v |= (uint32_t)(b & 63) << shift;
		shift += 6;
		if (!(b & 64))
			break;
	}
	return v;
}

/* The line of byte offset ADDRQ into the code, from the location table
 * of CPython 3.11 to 3.13 (Objects/locations.md of CPython): entries of a first
 * byte 1CCCCLLL (code C, LLL + 1 code units), then data bytes with the
 * top bit clear.  C 15: no line; 14 (long form) and 13 (no columns):
 * a signed varint line delta; 10..12: delta C - 10; below: the same
 * line.  0 when not found. */
static int py_line(const unsigned char *t, size_t n, int first, int64_t addrq)
{
	/* 64 bits: a forged table of 16 KiB of deltas near 2^31 cannot
	 * overflow them. */
	int64_t end = 0, line = first;
	size_t i = 0;

	while (i < n) {
		unsigned char b = t[i++];
		unsigned code = b >> 3 & 15;
		int64_t delta = 0;
		size_t j = i;

		if (!(b & 0x80))
			return 0;   /* not at an entry: a broken table */
		if (code == 13 || code == 14) {
			uint32_t u = py_varint(t, n, &j);
			delta = (u & 1) ? -(int64_t)(u >> 1) : (int64_t)(u >> 1);
		} else if (code >= 10 && code <= 12) {
			delta = (int64_t)code - 10;
		}
		line += delta;
		end += ((b & 7) + 1) * 2;
		while (i < n && !(t[i] & 0x80))
			i++;
		if (addrq < end)
			return code == 15 || line <= 0 || line > INT32_MAX ? 0 : (int)line;
	}
	return 0;
}

/* One frame's code object CODE, running at INSTR, into F.  False when
 * CODE is no code object (the walk ends); *SKIP for a frame that is
 * none of the program's (not started yet, or a C-stack entry). */
static bool py_code(const struct py_proc *p, uint64_t code, uint64_t instr, bool generator,
		    struct py_frame *f, bool *skip)
{
	const struct py_layout *L = &p->lay;
	static unsigned char table[PY_LINETABLE_MAX];
	uint64_t table_obj;
	int32_t first = 0, traceable = 0;
	int64_t size = 0, addrq;

	if (!py_is(p, code, p->addr[PY_SYM_CODE_TYPE]) || !py_int(p, code, L->code_firstlineno, &first))
		return false;
	addrq = (int64_t)(instr - (code + L->code_code));
	*skip = !generator && L->code_firsttraceable &&
		py_int(p, code, L->code_firsttraceable, &traceable) && addrq < (int64_t)traceable * 2;
	if (*skip)
		return true;
	py_string(p, py_ptr(p, code, L->code_filename), f->file, sizeof f->file);
	py_string(p, py_ptr(p, code, L->code_qualname), f->function, sizeof f->function);
	f->line = first > 0 ? first : 0;
	if (addrq < 0)
		return true;
	table_obj = py_ptr(p, code, L->code_linetable);
	if (!py_is(p, table_obj, p->addr[PY_SYM_BYTES_TYPE]) ||
	    py_read(p, table_obj + L->bytes_size, &size, sizeof size) < 0) {
		f->line = 0;
		return true;
	}
	if (size < 0)
		size = 0;
	if (size > PY_LINETABLE_MAX)
		size = PY_LINETABLE_MAX;
	if (py_read(p, table_obj + L->bytes_data, table, (size_t)size) < 0)
		size = 0;
	f->line = py_line(table, (size_t)size, first, addrq);
	return true;
}

/* The thread state of thread id TID (or NSTID, its id in the process's
 * own pid namespace): 0 when none. */
static uint64_t py_thread(const struct py_proc *p, pid_t tid, pid_t nstid)
{
	const struct py_layout *L = &p->lay;
	uint64_t interp = py_ptr(p, p->addr[PY_SYM_RUNTIME], L->runtime_interp_head);
	int threads = 0;

	for (int i = 0; interp && i < PY_INTERPS_MAX; i++) {
		uint64_t ts = py_ptr(p, interp, L->interp_threads_head);

		for (; ts && threads < PY_THREADS_MAX; threads++) {
			uint64_t id = py_ptr(p, ts, L->tstate_native_id);

			if (id != 0 && (id == (uint64_t)tid || id == (uint64_t)nstid))
				return ts;
			ts = py_ptr(p, ts, L->tstate_next);
		}
		interp = py_ptr(p, interp, L->interp_next);
	}
	return 0;
}

/* TID as its own pid namespace numbers it (the last of "NSpid:"). */
static pid_t py_ns_tid(pid_t tid)
{
	char text[2048], name[64], *p, *end;
	pid_t last = tid;

	snprintf(name, sizeof name, "task/%d/status", (int)tid);
	if (proc_read(tid, name, text, sizeof text) < 0)
		return tid;
	p = strstr(text, "\nNSpid:");
	if (p == NULL)
		return tid;
	p += 7;
	for (;;) {
		long v = strtol(p, &end, 10);

		if (end == p)
			break;
		last = (pid_t)v;
		p = end;
	}
	return last;
}

/* The interpreters found, least recently used first to go.  Kept until
 * exec or exit (pyframes_forget): the runtime does not move in a process
 * (a libpython unloaded meanwhile makes the reads fail, nothing more). */
static struct {
	struct py_proc p;        /* p.pid 0: free */
	unsigned long last_use;
} py_cache[PYFRAMES_PROCS];
static unsigned long py_clock;

/* P for TGID, from the cache or found and cached. */
static int py_lookup(pid_t tgid, struct py_proc *p)
{
	size_t victim = 0;
	int ret;

	for (size_t i = 0; i < PYFRAMES_PROCS; i++) {
		if (py_cache[i].p.pid == tgid) {
			py_cache[i].last_use = ++py_clock;
			*p = py_cache[i].p;
			return 0;
		}
		if (py_cache[i].p.pid == 0 ||
		    (py_cache[victim].p.pid != 0 && py_cache[i].last_use < py_cache[victim].last_use))
			victim = i;
	}
	ret = py_find(tgid, p);
	if (ret == 0) {
		py_cache[victim].p = *p;
		py_cache[victim].last_use = ++py_clock;
	}
	return ret;
}

void pyframes_forget(pid_t pid)
{
	for (size_t i = 0; i < PYFRAMES_PROCS; i++)
		if (py_cache[i].p.pid == pid)
			memset(&py_cache[i], 0, sizeof py_cache[i]);
}

void pyframes_forget_all(void)
{
	memset(py_cache, 0, sizeof py_cache);
}

int pyframes_take(pid_t tgid, pid_t tid, struct py_frame *frames, int max)
{
	uint64_t seen[PYFRAMES_WALK], ts, frame;
	struct py_proc p;
	int n = 0, ret;

	if (max <= 0 || tgid <= 0)
		return 0;
	py_pages_reset();
	ret = py_lookup(tgid, &p);
	if (ret < 0)
		return ret == -ENOENT ? 0 : ret;
	/* The id the process knows the thread by differs in a pid namespace
	 * of its own; /proc says it, at the cost of one more read. */
	ts = py_thread(&p, tid, tid);
	if (ts == 0) {
		pid_t nstid = py_ns_tid(tid);

		ts = nstid != tid ? py_thread(&p, tid, nstid) : 0;
	}
	if (ts == 0)
		return 0;
	frame = py_ptr(&p, ts, p.lay.tstate_frame);
	if (p.lay.has_cframe)
		frame = py_ptr(&p, frame, p.lay.cframe_current);
	for (int walked = 0; frame && walked < PYFRAMES_WALK && n < max; walked++) {
		bool skip = false, again = false;
		unsigned char owner;

		for (int k = 0; k < walked; k++)
			again = again || seen[k] == frame;
		if (again || py_read(&p, frame + p.lay.frame_owner, &owner, 1) < 0)
			break;
		seen[walked] = frame;
		memset(&frames[n], 0, sizeof frames[n]);
		if (owner != p.lay.owner_cstack &&
		    !py_code(&p, py_ptr(&p, frame, p.lay.frame_code),
			     py_ptr(&p, frame, p.lay.frame_instr), owner == PY_OWNED_BY_GENERATOR,
			     &frames[n], &skip))
			break;
		if (owner != p.lay.owner_cstack && !skip)
			n++;
		frame = py_ptr(&p, frame, p.lay.frame_previous);
	}
	return n;
}
