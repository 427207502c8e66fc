/* proc_read() and proc_status_field() on this process's own /proc files
 * and on a child that is stopped, has a pending SIGCONT, and is gone. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tracer/inspect/proc.h"

START_TEST(test_status_ids)
{
	char text[512];
	unsigned long long tgid = 0, ppid = 0;

	ck_assert_int_gt(proc_read(getpid(), "status", text, sizeof(text)), 0);
	ck_assert(proc_status_field(text, "\nTgid:", 10, &tgid));
	ck_assert(proc_status_field(text, "\nPPid:", 10, &ppid));
	ck_assert_uint_eq(tgid, (unsigned long long)getpid());
	ck_assert_uint_eq(ppid, (unsigned long long)getppid());
	/* "Pid:" inside "\nPPid:" or "\nTracerPid:" is not "\nPid:". */
	ck_assert(proc_status_field(text, "\nPid:", 10, &tgid));
	ck_assert_uint_eq(tgid, (unsigned long long)getpid());
	ck_assert(!proc_status_field(text, "\nNoSuchKey:", 10, &tgid));
	ck_assert(!proc_status_field(text, "\nName:", 10, &tgid)); /* not a number */
}
END_TEST

START_TEST(test_cut_and_errors)
{
	char small[8];
	pid_t child;

	/* What does not fit is cut, and the text still ends in a NUL. */
	ck_assert_int_eq(proc_read(getpid(), "status", small, sizeof(small)), 7);
	ck_assert_uint_eq(strlen(small), 7);
	ck_assert_int_eq(proc_read(getpid(), "status", small, 1), -EINVAL);
	ck_assert_int_eq(proc_read(getpid(), "no-such-file", small, sizeof(small)), -ENOENT);

	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0)
		_exit(0);
	ck_assert_int_eq(waitpid(child, NULL, 0), child);
	ck_assert_int_lt(proc_read(child, "stat", small, sizeof(small)), 0);
}
END_TEST

/* The signal masks are hex and lie after the Groups line. */
START_TEST(test_pending_sigcont)
{
	char text[16384];
	unsigned long long shd = 0;
	sigset_t block;
	pid_t child;
	int st;

	sigemptyset(&block);
	sigaddset(&block, SIGCONT);
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		sigprocmask(SIG_BLOCK, &block, NULL);
		kill(getpid(), SIGCONT); /* blocked: stays pending */
		pause();
		_exit(0);
	}
	for (int i = 0; i < 500; i++) {
		ck_assert_int_gt(proc_read(child, "status", text, sizeof(text)), 0);
		ck_assert(proc_status_field(text, "\nShdPnd:", 16, &shd));
		if (shd & (1ull << (SIGCONT - 1)))
			break;
		usleep(2000);
	}
	ck_assert(shd & (1ull << (SIGCONT - 1)));
	kill(child, SIGKILL);
	ck_assert_int_eq(waitpid(child, &st, 0), child);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("proc");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_status_ids);
	tcase_add_test(tc, test_cut_and_errors);
	tcase_add_test(tc, test_pending_sigcont);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
