/* Unit tests of lib/openflags.c: open flags as a record writes them and
 * as replay reads them back. */
#include <check.h>
#include <fcntl.h>
#include <stdlib.h>

#include "lib/openflags.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const struct {
	int flags;
	const char *text;
} cases[] = {
	{ O_RDONLY, "O_RDONLY" },
	{ O_RDWR | O_CLOEXEC, "O_RDWR|O_CLOEXEC" },
	{ O_WRONLY | O_CREAT | O_TRUNC, "O_WRONLY|O_CREAT|O_TRUNC" },
	{ O_RDWR | O_CREAT | O_APPEND, "O_RDWR|O_CREAT|O_APPEND" },
	/* named as wholes */
	{ O_RDWR | O_TMPFILE, "O_RDWR|O_TMPFILE" },
	{ O_RDONLY | O_DIRECTORY | O_NOFOLLOW, "O_RDONLY|O_DIRECTORY|O_NOFOLLOW" },
	{ O_WRONLY | O_SYNC, "O_WRONLY|O_SYNC" },
	{ O_WRONLY | O_DSYNC, "O_WRONLY|O_DSYNC" },
	{ O_PATH | O_CLOEXEC, "O_RDONLY|O_CLOEXEC|O_PATH" },
	/* bits with no name, and the ioctl-only access mode */
	{ O_RDWR | 0100000, "O_RDWR|0x8000" }, /* the kernel's O_LARGEFILE */
	{ 3, "O_ACCMODE" },
};

START_TEST(test_round_trip)
{
	char text[256];
	int back = -1;

	openflags_text(cases[_i].flags, text, sizeof(text));
	ck_assert_str_eq(text, cases[_i].text);
	ck_assert(openflags_parse(text, &back));
	ck_assert_int_eq(back, cases[_i].flags);
}
END_TEST

START_TEST(test_not_flags)
{
	static const char *const bad[] = { "", "RENAME_EXCHANGE", "O_RDWR|", "|O_RDWR",
					   "O_RDWR||O_CREAT", "O_RDWR|0x", "O_RDWR|0xzz", "o_rdwr" };
	int flags = 42;

	for (size_t i = 0; i < N(bad); i++) {
		ck_assert_msg(!openflags_parse(bad[i], &flags), "parsed: %s", bad[i]);
		ck_assert_int_eq(flags, 42);
	}
	ck_assert(!openflags_parse(NULL, &flags));
}
END_TEST

START_TEST(test_cut)
{
	char text[8];

	openflags_text(O_RDWR | O_CREAT, text, sizeof(text));
	ck_assert_str_eq(text, "O_RDWR|");
	openflags_text(O_RDWR, text, 0);
}
END_TEST

static Suite *openflags_suite(void)
{
	Suite *s = suite_create("openflags");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_round_trip, 0, (int)N(cases));
	tcase_add_test(tc, test_not_flags);
	tcase_add_test(tc, test_cut);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(openflags_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
