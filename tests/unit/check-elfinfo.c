/* elfinfo_read() and elfinfo_symbol() on real files: /bin/sh, the
 * bt-helper builds (dynamic, static, stripped), scripts, set-uid/set-gid
 * copies and broken files made in a temp dir under the build dir. */
#include "config.h"

#include <check.h>
#include <ctype.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tracer/inspect/elfinfo.h"

#define HELPER INSPECT_PROGS "/bt-helper"
#define HELPER_STATIC INSPECT_PROGS "/bt-helper-static"
#define HELPER_STRIPPED INSPECT_PROGS "/bt-helper-stripped"
#define HELPER_STATIC_STRIPPED INSPECT_PROGS "/bt-helper-static-stripped"

static char T[PATH_MAX]; /* the temp dir, made by main() for all cases */

/* Made and removed by main(), not per case: check runs each case in a
 * child that exits at the first failed assertion, before any teardown. */
static bool tmp_make(void)
{
	char tmpl[] = "tmp-check-elfinfo-XXXXXX";

	return mkdtemp(tmpl) != NULL && realpath(tmpl, T) != NULL;
}

static void tmp_remove(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", T);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", T);
}

static const char *tpath(const char *name)
{
	static char p[PATH_MAX + 64];

	snprintf(p, sizeof p, "%s/%s", T, name);
	return p;
}

static void put(const char *name, const void *data, size_t len, mode_t mode)
{
	int fd = open(tpath(name), O_WRONLY | O_CREAT | O_TRUNC, mode);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, data, len), (ssize_t)len);
	ck_assert_int_eq(fchmod(fd, mode), 0);
	close(fd);
}

/* The first LEN bytes of SRC (all when LEN is 0) into the temp dir. */
static void copy(const char *src, const char *name, size_t len, mode_t mode)
{
	static char buf[4 << 20];
	int fd = open(src, O_RDONLY);
	ssize_t n;

	ck_assert_int_ge(fd, 0);
	n = read(fd, buf, sizeof buf);
	close(fd);
	ck_assert_int_gt(n, 0);
	ck_assert_int_lt(n, (ssize_t)sizeof buf);
	put(name, buf, len ? len : (size_t)n, mode);
}

static bool have(const char *prog)
{
	if (access(prog, X_OK) == 0)
		return true;
	fprintf(stderr, "%s missing: case skipped\n", prog);
	return false;
}

static bool is_hex(const char *s, size_t len)
{
	if (strlen(s) != len)
		return false;
	for (; *s; s++)
		if (!isxdigit((unsigned char)*s) || isupper((unsigned char)*s))
			return false;
	return true;
}

START_TEST(test_sh_dynamic)
{
	struct elf_facts e;

	ck_assert_int_eq(elfinfo_read("/bin/sh", &e), 0);
	ck_assert(e.is_elf);
	ck_assert(!e.is_static);
	ck_assert_uint_eq(e.elf_class, 64);
	ck_assert_uint_eq(e.machine, EM_X86_64);
	ck_assert_str_eq(e.interp, "/lib64/ld-linux-x86-64.so.2");
	ck_assert_str_eq(e.shebang, "");
	ck_assert(!e.setuid && !e.setgid);
}
END_TEST

START_TEST(test_helper_dynamic_build_id)
{
	struct elf_facts e;

	ck_assert_int_eq(elfinfo_read(HELPER, &e), 0);
	ck_assert(e.is_elf && !e.is_static);
	ck_assert_str_eq(e.interp, "/lib64/ld-linux-x86-64.so.2");
	/* -Wl,--build-id: sha1, 20 bytes. */
	ck_assert_msg(is_hex(e.build_id, 40), "build-id \"%s\"", e.build_id);
	/* Stripping keeps the note, so the id is the same. */
	if (have(HELPER_STRIPPED)) {
		struct elf_facts s;

		ck_assert_int_eq(elfinfo_read(HELPER_STRIPPED, &s), 0);
		ck_assert_str_eq(s.build_id, e.build_id);
	}
}
END_TEST

START_TEST(test_helper_static)
{
	struct elf_facts e;

	if (!have(HELPER_STATIC))
		return;
	ck_assert_int_eq(elfinfo_read(HELPER_STATIC, &e), 0);
	ck_assert(e.is_elf);
	ck_assert(e.is_static);
	ck_assert_str_eq(e.interp, "");
	ck_assert_msg(is_hex(e.build_id, 40), "build-id \"%s\"", e.build_id);
}
END_TEST

START_TEST(test_script)
{
	struct elf_facts e;
	static const char s1[] = "#!/bin/sh -e\necho hi\n";
	static const char s2[] = "#!  /usr/bin/env python3 \t\r\nprint(1)\n";
	static const char s3[] = "echo no shebang\n";
	static const char s4[] = "#!/bin/sh"; /* no newline at all */

	put("s1.sh", s1, sizeof s1 - 1, 0755);
	put("s2.py", s2, sizeof s2 - 1, 0755);
	put("s3.txt", s3, sizeof s3 - 1, 0644);
	put("s4", s4, sizeof s4 - 1, 0755);
	put("empty", "", 0, 0644);

	ck_assert_int_eq(elfinfo_read(tpath("s1.sh"), &e), 0);
	ck_assert(!e.is_elf && !e.is_static);
	ck_assert_str_eq(e.shebang, "/bin/sh -e");
	ck_assert_str_eq(e.interp, "");
	ck_assert_int_eq(elfinfo_read(tpath("s2.py"), &e), 0);
	ck_assert_str_eq(e.shebang, "/usr/bin/env python3");
	ck_assert_int_eq(elfinfo_read(tpath("s3.txt"), &e), 0);
	ck_assert(!e.is_elf);
	ck_assert_str_eq(e.shebang, "");
	ck_assert_int_eq(elfinfo_read(tpath("s4"), &e), 0);
	ck_assert_str_eq(e.shebang, "/bin/sh");
	ck_assert_int_eq(elfinfo_read(tpath("empty"), &e), 0);
	ck_assert(!e.is_elf);
	ck_assert_str_eq(e.shebang, "");
}
END_TEST

START_TEST(test_setuid_setgid)
{
	struct elf_facts e;
	int fd;

	copy(HELPER, "suid", 0, 04755);
	copy(HELPER, "sgid", 0, 02755);
	copy(HELPER, "plain", 0, 0755);
	ck_assert_int_eq(elfinfo_read(tpath("suid"), &e), 0);
	ck_assert(e.is_elf && e.setuid && !e.setgid);
	ck_assert_int_eq(elfinfo_read(tpath("sgid"), &e), 0);
	ck_assert(e.is_elf && !e.setuid && e.setgid);
	ck_assert_int_eq(elfinfo_read(tpath("plain"), &e), 0);
	ck_assert(e.is_elf && !e.setuid && !e.setgid);
	/* Through a symlink (execve follows it) and through an open fd. */
	char target[PATH_MAX + 64];

	snprintf(target, sizeof target, "%s", tpath("suid"));
	ck_assert_int_eq(symlink(target, tpath("link")), 0);
	ck_assert_int_eq(elfinfo_read(tpath("link"), &e), 0);
	ck_assert(e.setuid);
	fd = open(tpath("sgid"), O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(elfinfo_read_fd(fd, &e), 0);
	ck_assert(e.setgid && e.is_elf && !e.is_static);
	close(fd);
}
END_TEST

START_TEST(test_errors)
{
	struct elf_facts e;

	ck_assert_int_eq(elfinfo_read(tpath("nothing-here"), &e), -ENOENT);
	ck_assert(!e.is_elf);
	ck_assert_int_eq(elfinfo_read(T, &e), -EISDIR);
	/* The magic and a cut header; then a header whose program headers
	 * lie past the end of the file. */
	copy(HELPER, "cut20", 20, 0755);
	ck_assert_int_eq(elfinfo_read(tpath("cut20"), &e), -ENOEXEC);
	copy(HELPER, "cut200", 200, 0755);
	ck_assert_int_ge(elfinfo_read(tpath("cut200"), &e), -ENOEXEC);
	ck_assert_int_le(elfinfo_read(tpath("cut200"), &e), 0);
	ck_assert_str_eq(e.interp, "");
	ck_assert_str_eq(e.build_id, "");
}
END_TEST

/* A function of this very program, found through /proc/self/maps the way
 * backtrace.c finds a frame's file offset. */
__attribute__((noinline, noclone, used)) int elfinfo_marker_fn(int x);
__attribute__((noinline, noclone, used)) int elfinfo_marker_fn(int x)
{
	return x * 3 + 1;
}

static bool self_file_offset(uint64_t addr, uint64_t *off, char *path, size_t size)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[PATH_MAX + 128];
	bool found = false;

	ck_assert_ptr_nonnull(f);
	while (!found && fgets(line, sizeof line, f) != NULL) {
		uint64_t start, end, moff;
		int pos = 0;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %*s %*s %n", &start,
			   &end, &moff, &pos) != 3 || pos == 0)
			continue;
		if (addr >= start && addr < end) {
			*off = addr - start + moff;
			snprintf(path, size, "%s", line + pos);
			path[strcspn(path, "\n")] = '\0';
			found = true;
		}
	}
	fclose(f);
	return found;
}

START_TEST(test_symbol_self)
{
	uint64_t addr = (uint64_t)(uintptr_t)&elfinfo_marker_fn, off, delta;
	char sym[128], obj[PATH_MAX];

	ck_assert(self_file_offset(addr, &off, obj, sizeof obj));
	ck_assert_int_eq(elfinfo_symbol("/proc/self/exe", off, sym, sizeof sym, &delta), 0);
	ck_assert_str_eq(sym, "elfinfo_marker_fn");
	ck_assert_uint_eq(delta, 0);
	ck_assert_int_eq(elfinfo_symbol("/proc/self/exe", off + 3, sym, sizeof sym, &delta), 0);
	ck_assert_str_eq(sym, "elfinfo_marker_fn");
	ck_assert_uint_eq(delta, 3);
	/* Truncated to the buffer, NUL-terminated. */
	ck_assert_int_eq(elfinfo_symbol("/proc/self/exe", off, sym, 8, &delta), 0);
	ck_assert_str_eq(sym, "elfinfo");
	/* A libc function, from a stripped libc's .dynsym. */
	addr = (uint64_t)(uintptr_t)&getppid;
	ck_assert(self_file_offset(addr + 1, &off, obj, sizeof obj));
	ck_assert_msg(strstr(obj, "libc") != NULL, "getppid in %s", obj);
	ck_assert_int_eq(elfinfo_symbol(obj, off, sym, sizeof sym, &delta), 0);
	ck_assert_msg(strstr(sym, "getppid") != NULL, "getppid named %s", sym);
	ck_assert_uint_eq(delta, 1);
}
END_TEST

START_TEST(test_symbol_errors)
{
	uint64_t delta = 99;
	char sym[64] = "junk";
	static const char txt[] = "#!/bin/sh\n";

	put("txt", txt, sizeof txt - 1, 0755);
	ck_assert_int_eq(elfinfo_symbol(tpath("txt"), 0, sym, sizeof sym, &delta), -ENOEXEC);
	ck_assert_str_eq(sym, "");
	ck_assert_uint_eq(delta, 0);
	ck_assert_int_eq(elfinfo_symbol(tpath("none"), 0, sym, sizeof sym, &delta), -ENOENT);
	/* Far past any segment. */
	ck_assert_int_eq(elfinfo_symbol(HELPER, 1ULL << 40, sym, sizeof sym, &delta), -ENOENT);
	/* A static program without .symtab has no symbols left at all. */
	if (have(HELPER_STATIC_STRIPPED))
		ck_assert_int_eq(elfinfo_symbol(HELPER_STATIC_STRIPPED, 0x1000, sym, sizeof sym,
						&delta),
				 -ENOENT);
	/* The cache notices a file replaced under the same name. */
	copy(HELPER, "swap", 0, 0755);
	ck_assert_int_ge(elfinfo_symbol(tpath("swap"), 0x1000, sym, sizeof sym, &delta), -ENOENT);
	put("swap", txt, sizeof txt - 1, 0755);
	ck_assert_int_eq(elfinfo_symbol(tpath("swap"), 0x1000, sym, sizeof sym, &delta), -ENOEXEC);
	elfinfo_forget_all();
}
END_TEST

static Suite *elfinfo_suite(void)
{
	Suite *s = suite_create("elfinfo");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_sh_dynamic);
	tcase_add_test(tc, test_helper_dynamic_build_id);
	tcase_add_test(tc, test_helper_static);
	tcase_add_test(tc, test_script);
	tcase_add_test(tc, test_setuid_setgid);
	tcase_add_test(tc, test_errors);
	tcase_add_test(tc, test_symbol_self);
	tcase_add_test(tc, test_symbol_errors);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr;
	int failed;

	if (!tmp_make()) {
		perror("tmp-check-elfinfo");
		return EXIT_FAILURE;
	}
	sr = srunner_create(elfinfo_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	tmp_remove();
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
