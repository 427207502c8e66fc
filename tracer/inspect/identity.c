/* Which program an exec runs (tracer/inspect/identity.h). */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/readfile.h"
#include "lib/sha256.h"
#include "tracer/inspect/creds.h"
#include "tracer/inspect/execid.h"
#include "tracer/inspect/identity.h"
#include "tracer/syscall/mem.h"
#include "tracer/syscall/path.h"

/* How far up from a node script its package.json may be
 * (bin/cli.js, dist/bin/cli.js, ...). */
#define IDENTITY_PACKAGE_DEPTH 4
#define IDENTITY_PACKAGE_MAX (1024 * 1024)

static const char *identity_base(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

static ssize_t identity_pread(int fd, void *buf, size_t n, off_t off)
{
	ssize_t r;

	do
		r = pread(fd, buf, n, off);
	while (r < 0 && errno == EINTR);
	return r;
}

/* PT_INTERP of the 64-bit ELF file PATH into OUT (SIZE bytes); false when
 * it has none.  Read by hand: libelf is loaded only for records
 * (elfinfo.c), and this runs at the first exec. */
static bool identity_interp_of(const char *path, char *out, size_t size)
{
	Elf64_Ehdr eh;
	bool found = false;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);

	if (fd < 0)
		return false;
	if (identity_pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum > 64)
		goto out;
	for (unsigned i = 0; i < eh.e_phnum && !found; i++) {
		Elf64_Phdr ph;

		if (identity_pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) !=
		    (ssize_t)sizeof(ph))
			break;
		if (ph.p_type != PT_INTERP)
			continue;
		if (ph.p_filesz < 2 || ph.p_filesz > size ||
		    identity_pread(fd, out, ph.p_filesz, (off_t)ph.p_offset) != (ssize_t)ph.p_filesz)
			break;
		out[ph.p_filesz - 1] = '\0';
		found = out[0] == '/';
	}
out:
	close(fd);
	return found;
}

const char *identity_system_loader(void)
{
	static char loader[PATH_MAX];
	static bool done;
	char interp[PATH_MAX];

	if (!done) {
		done = true;
		if (!identity_interp_of("/bin/sh", interp, sizeof(interp)) ||
		    !realpath(interp, loader))
			loader[0] = '\0';
	}
	return loader;
}

static bool identity_is_loader(const char *exe)
{
	const char *sys = identity_system_loader();

	return rules_loader_name(identity_base(exe)) || (sys[0] && strcmp(exe, sys) == 0);
}

/* ---- node's package.json ---- */

static bool identity_ends(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n > m && strcmp(s + n - m, suffix) == 0;
}

/* "./bin/x.js", "bin//x.js" -> "bin/x.js" in OUT; false when it climbs. */
static bool identity_rel_norm(const char *in, char *out, size_t size)
{
	size_t n = 0;

	while (*in) {
		const char *end = strchrnul(in, '/');
		size_t len = (size_t)(end - in);

		if (len == 2 && in[0] == '.' && in[1] == '.')
			return false;
		if (len && !(len == 1 && in[0] == '.')) {
			if (n + len + 2 > size)
				return false;
			if (n)
				out[n++] = '/';
			memcpy(out + n, in, len);
			n += len;
		}
		in = *end ? end + 1 : end;
	}
	out[n] = '\0';
	return n > 0;
}

static bool identity_sane_name(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n >= IDENTITY_NAME_MAX)
		return false;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x21 || *p == 0x7f || *p == '/')
			return false;
	return true;
}

/* The "bin" of package.json text (LEN bytes) that names REL (the file's
 * path below the package's directory) into OUT. */
static bool identity_bin_of(const char *text, size_t len, const char *rel, char *out)
{
	json_t *root = json_loadb(text, len, 0, NULL), *bin;
	char norm[PATH_MAX];
	bool found = false;

	if (!root)
		return false;
	bin = json_object_get(root, "bin");
	if (json_is_string(bin)) {
		/* "bin": "cli.js": the package's own name, without its scope. */
		const char *name = json_string_value(json_object_get(root, "name"));

		if (name && identity_rel_norm(json_string_value(bin), norm, sizeof(norm)) &&
		    strcmp(norm, rel) == 0) {
			const char *slash = strrchr(name, '/');

			name = slash && name[0] == '@' ? slash + 1 : name;
			if (identity_sane_name(name)) {
				strcpy(out, name);
				found = true;
			}
		}
	} else if (json_is_object(bin)) {
		const char *key;
		json_t *v;

		json_object_foreach(bin, key, v) {
			if (!json_is_string(v) || !identity_sane_name(key) ||
			    !identity_rel_norm(json_string_value(v), norm, sizeof(norm)) ||
			    strcmp(norm, rel) != 0)
				continue;
			strcpy(out, key);
			found = true;
			break;
		}
	}
	json_decref(root);
	return found;
}

/* DIR/package.json, a regular file (not a link, not a FIFO), into a
 * malloc'ed buffer; NULL when there is none. */
static char *identity_read_package(const char *dir, size_t *len)
{
	char path[PATH_MAX + 16], *buf;

	if ((size_t)snprintf(path, sizeof(path), "%s/package.json", dir) >= sizeof(path))
		return NULL;
	if (readfile_at(AT_FDCWD, path, IDENTITY_PACKAGE_MAX, &buf, len, NULL) < 0)
		return NULL;
	if (*len == 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* DIR is a package's own directory: node_modules/P or node_modules/@S/P. */
static bool identity_is_package_dir(const char *dir)
{
	const char *s = strrchr(dir, '/'), *pb;
	size_t plen;

	if (!s || s == dir)
		return false;
	plen = (size_t)(s - dir);
	pb = memrchr(dir, '/', plen);
	pb = pb ? pb + 1 : dir;
	if ((size_t)(s - pb) == 12 && memcmp(pb, "node_modules", 12) == 0)
		return true;
	if (*pb == '@' && pb > dir + 1) {
		const char *gb = memrchr(dir, '/', (size_t)(pb - 1 - dir));

		gb = gb ? gb + 1 : dir;
		return (size_t)(pb - 1 - gb) == 12 && memcmp(gb, "node_modules", 12) == 0;
	}
	return false;
}

bool identity_package_bin(const char *file, char *out)
{
	char dir[PATH_MAX];
	size_t n = strlen(file);
	bool found = false;

	if (file[0] != '/' || n >= sizeof(dir) ||
	    !(identity_ends(file, ".js") || identity_ends(file, ".cjs") ||
	      identity_ends(file, ".mjs") || strstr(file, "/node_modules/")))
		return false;
	memcpy(dir, file, n + 1);
	for (int up = 0; up < IDENTITY_PACKAGE_DEPTH; up++) {
		char *slash = strrchr(dir, '/'), *text;
		size_t len;

		if (!slash || slash == dir)
			break;
		*slash = '\0';
		text = identity_read_package(dir, &len);
		if (text) {
			found = identity_bin_of(text, len, file + strlen(dir) + 1, out);
			free(text);
			break; /* the nearest package.json is the package's */
		}
		if (identity_is_package_dir(dir))
			break; /* a package's files stop at its own directory */
	}
	return found && strcmp(out, identity_base(file)) != 0;
}

/* ---- the identity ---- */

/* ARG as process PID would open it, into OUT (PATH_MAX): resolved, or as
 * text when it cannot be (the program fails to open it as well). */
static const char *identity_resolve(pid_t pid, const char *arg, char *out)
{
	if (path_resolve(pid, AT_FDCWD, arg, 0, out, PATH_MAX) == 0)
		return out;
	if (strlen(arg) >= PATH_MAX)
		return NULL;
	strcpy(out, arg);
	return out;
}

static bool identity_same_args(const char *const *a, size_t na, const char *const *b, size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++)
		if (!a[i] || !b[i] || strcmp(a[i], b[i]) != 0)
			return false;
	return true;
}

static void identity_names(struct identity *id)
{
	if (id->exe && identity_package_bin(id->exe, id->exe_name_buf))
		id->exe_name = id->exe_name_buf;
	if (id->script && identity_package_bin(id->script, id->script_name_buf))
		id->script_name = id->script_name_buf;
}

static void identity_clear(struct identity *id, const char *exe, const char *const *argv,
			   size_t argc)
{
	id->exe = exe;
	id->argv = argv;
	id->argc = argv ? argc : 0;
	id->loader = NULL;
	id->script = NULL;
	id->script_arg = 0;
	id->exe_name = NULL;
	id->script_name = NULL;
	id->script_judged = false;
	id->n_opens = 0;
	id->env_searched = false;
	id->env_sha[0] = '\0';
}

/* The program will open the name TEXT, which resolves to PATH. */
static void identity_opens(struct identity *id, const char *text, const char *path)
{
	if (id->n_opens < IDENTITY_OPENS) {
		id->opens_text[id->n_opens] = text;
		strcpy(id->opens_path[id->n_opens++], path);
	}
}

/* ---- interpreters that search for their script ---- */

/* Entries of an environment read, and the bytes of one. */
#define IDENTITY_ENV_ENTRIES 16384
#define IDENTITY_ENV_ENTRY (128 * 1024)

/* What of an exec's environment a search reads: PATH, RUBYPATH and
 * HOME (ruby turns a leading '~' of an entry into it), each "" when
 * absent. */
struct identity_search_env {
	char path[PATH_MAX], rubypath[PATH_MAX], home[PATH_MAX];
};

/* The searched entries (execid.h, exec_env_searched_entry()) of the
 * environment at ENV in process PID's memory: their digest in ID, and
 * the value of the first (FIRST: getenv(3)'s) or last (bash's) of each
 * in OUT.  False when the environment cannot be read whole. */
static bool identity_env_read(struct identity *id, pid_t pid, const struct identity_env *env,
			      bool first, struct identity_search_env *out)
{
	/* The pointers and the entries a chunk at a time: one
	 * process_vm_readv for most of an environment, each entry longer
	 * than a slot (or across a page) read on its own. */
	enum { CHUNK = MEM_STRINGS_MAX, SLOT = 256 };
	static char entry[IDENTITY_ENV_ENTRY], slots[CHUNK][SLOT];
	static char *bufs[CHUNK];
	static size_t caps[CHUNK];
	unsigned long at[CHUNK];
	bool have[3] = { false, false, false };
	struct sha256 h;

	for (size_t i = 0; i < CHUNK; i++) {
		bufs[i] = slots[i];
		caps[i] = SLOT;
	}
	out->path[0] = out->rubypath[0] = out->home[0] = '\0';
	sha256_init(&h);
	for (size_t k = 0; k < IDENTITY_ENV_ENTRIES; k += CHUNK) {
		long lens[CHUNK];
		size_t m = CHUNK;

		if (mem_read(pid, env->envp + k * sizeof(at[0]), at, sizeof(at)) < 0) {
			/* the array may end before an unmapped page */
			for (size_t i = 0; i < CHUNK; i++) {
				if (mem_read(pid, env->envp + (k + i) * sizeof(at[0]), &at[i],
					     sizeof(at[0])) < 0)
					return false;
				if (!at[i])
					break;
			}
		}
		for (size_t i = 0; i < m; i++)
			if (!at[i]) {
				m = i;
				break;
			}
		if (m && mem_read_strings(pid, m, at, bufs, caps, lens) < 0)
			return false;
		for (size_t i = 0; i < m; i++) {
			const char *e = slots[i], *eq;
			char *to;
			int which;
			long n = lens[i];

			if (n < 0) {
				n = mem_read_string(pid, at[i], entry, sizeof(entry));
				if (n < 0)
					return false;
				e = entry;
			}
			if (!exec_env_searched_entry(e))
				continue;
			sha256_update(&h, e, (size_t)n + 1);
			eq = strchr(e, '=');
			which = e[0] == 'P' ? 0 : e[0] == 'R' ? 1 : 2;
			to = which == 0 ? out->path : which == 1 ? out->rubypath : out->home;
			if ((first && have[which]) || strlen(eq + 1) >= PATH_MAX)
				continue;
			strcpy(to, eq + 1);
			have[which] = true;
		}
		if (m < CHUNK) {
			sha256_hex(&h, id->env_sha);
			id->env_searched = true;
			return true;
		}
	}
	return false;
}

/* Whether a process of credentials CR may use the file at PATH
 * (resolved, in its view) as the interpreters' searches ask: a regular file it can read (and,
 * for perl, run: EXEC). */
static bool identity_usable(const struct creds *cr, const char *path, bool exec)
{
	struct creds saved;
	struct stat st;
	bool ok;

	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return false;
	creds_become(cr, &saved);
	ok = faccessat(AT_FDCWD, path, exec ? R_OK | X_OK : R_OK, AT_EACCESS) == 0;
	creds_restore(&saved);
	return ok;
}

/* A name an interpreter's search tries (rules_interp_search()), in the
 * caller's view and as the caller: resolved into the identity's
 * script_buf when it is a file it may use. */
struct identity_try {
	struct identity *id;
	pid_t pid;
	struct creds cr;
};

static bool identity_try_one(const char *candidate, bool exec, void *arg)
{
	struct identity_try *t = arg;

	return path_resolve(t->pid, AT_FDCWD, candidate, 0, t->id->script_buf, PATH_MAX) == 0 &&
	       identity_usable(&t->cr, t->id->script_buf, exec);
}

/* The script NAME of an interpreter that LK says looks it up otherwise
 * than from the working directory: the text it opens into id->search_buf
 * and the file into id->script_buf.  False: as from the working
 * directory (the caller's identity_resolve()). */
static bool identity_lookup(struct identity *id, pid_t pid, const struct rules_lookup *lk,
			    const char *name, const struct identity_env *env)
{
	static struct identity_search_env se;
	static struct identity_try t;
	char dir[PATH_MAX], at[PATH_MAX];
	bool absent;

	if (!rules_interp_chdir(lk, id->argv, dir))
		return false;
	absent = lk->how == RULES_LOOKUP_PATH_IF_ABSENT &&
		 !(path_resolve(pid, AT_FDCWD, name, 0, at, PATH_MAX) == 0 && access(at, F_OK) == 0);
	if (env && env->envp && rules_interp_searches(lk, name, absent)) {
		if (!identity_env_read(id, pid, env, lk->by != RULES_LOOKUP_BY_SHELL, &se)) {
			/* Not read whole: the exec event finds another digest. */
			id->env_searched = true;
			strcpy(id->env_sha, "unread");
		} else {
			t.id = id;
			t.pid = pid;
			if (creds_of_task(pid, &t.cr) == 0 &&
			    rules_interp_search(lk, name, dir, se.path[0] ? se.path : NULL,
						se.rubypath[0] ? se.rubypath : NULL,
						se.home[0] ? se.home : NULL, identity_try_one, &t,
						id->search_buf))
				return true;
		}
	}
	if (!dir[0] || name[0] == '/')
		return false;
	if (snprintf(id->search_buf, PATH_MAX, "%s/%s", dir, name) >= PATH_MAX)
		return false;
	if (path_resolve(pid, AT_FDCWD, id->search_buf, 0, id->script_buf, PATH_MAX) < 0)
		strcpy(id->script_buf, id->search_buf);
	return true;
}

void identity_of_exec(struct identity *id, pid_t pid, const char *exe, const char *const *argv,
		      size_t argc, const struct identity_caller *caller,
		      const struct identity_env *env)
{
	const char *text = NULL;
	size_t s, off;

	identity_clear(id, exe, argv, argc);
	if (!exe)
		return;
	for (int depth = 0; depth < IDENTITY_LOADER_DEPTH && identity_is_loader(id->exe); depth++) {
		size_t p = rules_loader_prog(id->argv, id->argc);
		const char *prog;

		if (!p)
			break; /* ld.so --help and the like run no program */
		if (!id->loader) {
			strcpy(id->loader_buf, exe);
			id->loader = id->loader_buf;
		}
		prog = identity_resolve(pid, id->argv[p], id->exe_buf);
		if (!prog)
			break;
		identity_opens(id, id->argv[p], prog);
		id->exe = prog;
		id->argv += p;
		id->argc -= p;
	}
	s = rules_interp_script(id->exe, id->argv, id->argc, &off, NULL, NULL);
	if (s) {
		struct rules_lookup lk;

		rules_interp_lookup(id->exe, id->argv, id->argc, s, &lk);
		if (identity_lookup(id, pid, &lk, id->argv[s] + off, env))
			text = id->search_buf;
		else if (identity_resolve(pid, id->argv[s] + off, id->script_buf))
			text = id->argv[s] + off;
	}
	if (text) {
		id->script = id->script_buf;
		id->script_arg = s;
		identity_opens(id, text, id->script);
		id->script_judged = caller && caller->exe && strcmp(caller->exe, id->script) == 0 &&
				    caller->argc > 0 &&
				    identity_same_args(id->argv + s + 1, id->argc - s - 1,
						       caller->argv + 1, caller->argc - 1);
	}
	identity_names(id);
}

void identity_of_resolved(struct identity *id, const char *exe, const char *const *argv,
			  size_t argc, const char *loader, const char *script, size_t script_arg)
{
	identity_clear(id, exe, argv, argc);
	if (loader && *loader && strlen(loader) < PATH_MAX) {
		strcpy(id->loader_buf, loader);
		id->loader = id->loader_buf;
	}
	if (script && *script && strlen(script) < PATH_MAX && script_arg < id->argc) {
		strcpy(id->script_buf, script);
		id->script = id->script_buf;
		id->script_arg = script_arg;
	}
	identity_names(id);
}

void identity_apply(const struct identity *id, struct rules_event *ev)
{
	ev->exe = id->exe;
	ev->argv = id->argv;
	ev->argc = id->argc;
	ev->loader = id->loader;
	ev->exe_name = id->exe_name;
	if (id->script_judged) {
		ev->script = NULL;
		ev->script_name = NULL;
		ev->script_arg = 0;
	} else {
		ev->script = id->script;
		ev->script_arg = id->script_arg;
		ev->script_name = id->script_name;
	}
}
