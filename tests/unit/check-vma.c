/* Unit tests of tracer/inspect/vma.c: the kind of memory that holds an
 * address, in mappings this test makes, by both ways of asking (the
 * PROCMAP_QUERY ioctl and the maps text; each test runs once per way). */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tracer/inspect/vma.h"
#include "tracer/syscall/probe.h"

static const char literal[] = "a string in the program's own file";

/* Way _I: 0 the maps text, 1 PROCMAP_QUERY (skipped where the kernel lacks it). */
static bool way(int i)
{
	setenv("AGENTTRACE_TEST_PROCMAP_QUERY", i ? "1" : "0", 1);
	return i == 0 || probe_procmap_query();
}

static enum vma_kind kind_at(struct vma_reader *r, pid_t pid, const void *addr, char *name)
{
	struct vma_region v;

	ck_assert_int_eq(vma_at(r, pid, (unsigned long)addr, &v, name, PATH_MAX), 0);
	return v.kind;
}

START_TEST(kinds_of_mappings)
{
	struct vma_reader r;
	static char name[PATH_MAX];
	char stack[16] = "on the stack";
	char *heap = malloc(64);
	char *shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	char *priv = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int mfd = memfd_create("vma-test", MFD_CLOEXEC);
	char *mem;

	if (!way(_i))
		return;
	ck_assert_ptr_nonnull(heap);
	ck_assert_ptr_ne(shared, MAP_FAILED);
	ck_assert_ptr_ne(priv, MAP_FAILED);
	ck_assert_int_ge(mfd, 0);
	ck_assert_int_eq(ftruncate(mfd, 4096), 0);
	mem = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, mfd, 0);
	ck_assert_ptr_ne(mem, MAP_FAILED);
	vma_reader_init(&r);
	ck_assert_int_eq(kind_at(&r, getpid(), stack, name), VMA_PRIVATE);
	ck_assert_int_eq(kind_at(&r, getpid(), heap, name), VMA_PRIVATE);
	ck_assert_int_eq(kind_at(&r, getpid(), priv + 4096, name), VMA_PRIVATE);
	ck_assert_int_eq(kind_at(&r, getpid(), shared, name), VMA_SHARED);
	ck_assert_int_eq(kind_at(&r, getpid(), literal, name), VMA_FILE);
	ck_assert_ptr_nonnull(strstr(name, "check-vma"));
	ck_assert_int_eq(kind_at(&r, getpid(), mem, name), VMA_SHARED);
	ck_assert_int_eq(munmap(priv, 8192), 0);
	ck_assert_int_eq(kind_at(&r, getpid(), priv, name), VMA_UNMAPPED);
	vma_reader_close(&r);
	free(heap);
}
END_TEST

/* A region's end: where the next question begins. */
START_TEST(region_end)
{
	struct vma_reader r;
	static char name[PATH_MAX];
	struct vma_region v;
	char *a = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (!way(_i))
		return;
	ck_assert_ptr_ne(a, MAP_FAILED);
	/* The middle page shared: three mappings. */
	ck_assert_ptr_ne(mmap(a + 4096, 4096, PROT_READ | PROT_WRITE,
			      MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0), MAP_FAILED);
	vma_reader_init(&r);
	ck_assert_int_eq(vma_at(&r, getpid(), (unsigned long)a + 10, &v, name, sizeof(name)), 0);
	ck_assert_int_eq(v.kind, VMA_PRIVATE);
	ck_assert_uint_eq(v.end, (unsigned long)a + 4096);
	ck_assert_int_eq(vma_at(&r, getpid(), v.end, &v, name, sizeof(name)), 0);
	ck_assert_int_eq(v.kind, VMA_SHARED);
	ck_assert_uint_eq(v.end, (unsigned long)a + 8192);
	vma_reader_close(&r);
}
END_TEST

/* A written page of a file mapped private is a copy of the process's own,
 * but not for good: truncating the file takes such copies away (the
 * kernel unmaps private copies beyond the new end too), and the next
 * read faults in whatever the file then holds.  So it is the file's page
 * to the answer, written or not, under both ways of asking: a page's
 * pagemap entry (anonymous, mapped once) cannot tell it from the heap. */
START_TEST(written_file_page_is_the_files)
{
	struct vma_reader r;
	static char name[PATH_MAX];
	long page = sysconf(_SC_PAGESIZE);
	int fd = memfd_create("vma-written", MFD_CLOEXEC);
	char *copy;

	if (!way(_i))
		return;
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, 2 * page), 0);
	copy = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	ck_assert_ptr_ne(copy, MAP_FAILED);
	strcpy(copy + page, "./a/.bashrc");
	vma_reader_init(&r);
	/* A file with no name: whoever holds it writes it. */
	ck_assert_int_eq(kind_at(&r, getpid(), copy + page, name), VMA_SHARED);
	/* Truncated and grown again, the file's bytes show through. */
	ck_assert_int_eq(ftruncate(fd, page), 0);
	ck_assert_int_eq(ftruncate(fd, 2 * page), 0);
	ck_assert_int_eq(pwrite(fd, "./b/.bashrc", 12, page), 12);
	ck_assert_str_eq(copy + page, "./b/.bashrc");
	vma_reader_close(&r);
	munmap(copy, 2 * page);
	close(fd);
}
END_TEST

/* A process asked before and after its exec: the descriptor kept from
 * before names memory that is gone, and the answer is the new memory's,
 * never "nothing there" for want of a look. */
START_TEST(answers_after_an_exec)
{
	struct vma_reader r;
	static char name[PATH_MAX];
	char here[16] = "stack";
	int go[2], st;
	pid_t pid;
	char c;

	if (!way(_i))
		return;
	ck_assert_int_eq(pipe(go), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		execlp("sleep", "sleep", "10", (char *)NULL);
		_exit(127);
	}
	close(go[0]);
	vma_reader_init(&r);
	ck_assert_int_eq(kind_at(&r, pid, here, name), VMA_PRIVATE);
	ck_assert_int_eq(kind_at(&r, pid, literal, name), VMA_FILE);
	ck_assert_int_eq(write(go[1], "x", 1), 1);
	/* Until sleep runs, its mappings are check-vma's or sleep's. */
	for (int i = 0; i < 200; i++) {
		char exe[PATH_MAX], link[64];
		ssize_t n;

		snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
		n = readlink(link, exe, sizeof(exe) - 1);
		if (n > 0 && (exe[n] = '\0', strstr(exe, "sleep")))
			break;
		usleep(10000);
	}
	usleep(50000);
	{
		struct vma_region v;
		/* The start of the program's own file, in the new memory. */
		char maps[64];
		FILE *f;
		unsigned long start = 0;

		snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
		f = fopen(maps, "re");
		ck_assert_ptr_nonnull(f);
		ck_assert_int_eq(fscanf(f, "%lx", &start), 1);
		fclose(f);
		ck_assert_int_eq(vma_at(&r, pid, start, &v, name, sizeof(name)), 0);
		ck_assert_int_eq(v.kind, VMA_FILE);
		ck_assert_ptr_nonnull(strstr(name, "sleep"));
	}
	vma_reader_close(&r);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	close(go[1]);
}
END_TEST

START_TEST(a_process_gone)
{
	struct vma_reader r;
	static char name[PATH_MAX];
	struct vma_region v;
	pid_t pid = fork();
	int st;

	if (!way(_i))
		return;
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(0);
	waitpid(pid, &st, 0);
	vma_reader_init(&r);
	ck_assert_int_eq(vma_at(&r, pid, (unsigned long)&v, &v, name, sizeof(name)), -ESRCH);
	vma_reader_close(&r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("vma");
	TCase *tc = tcase_create("kinds");
	SRunner *sr;
	int failed;

	tcase_add_loop_test(tc, kinds_of_mappings, 0, 2);
	tcase_add_loop_test(tc, region_end, 0, 2);
	tcase_add_loop_test(tc, written_file_page_is_the_files, 0, 2);
	tcase_add_loop_test(tc, answers_after_an_exec, 0, 2);
	tcase_add_loop_test(tc, a_process_gone, 0, 2);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
