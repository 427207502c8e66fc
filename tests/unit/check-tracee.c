/* Unit tests of the task table's shares (tracer/ptrace/tracee.c): which
 * processes use one memory or working directory between them, as the
 * notify engine asks before it lets a call run on what it checked. */
#include <check.h>
#include <stdbool.h>
#include <stdlib.h>

#include "tracer/ptrace/tracee.h"

static struct tracee_table table;

static struct tracee_group *proc(pid_t pid)
{
	struct tracee *t = tracee_add(&table, pid, pid, 1, NULL);

	ck_assert_ptr_nonnull(t);
	ck_assert_ptr_nonnull(t->group);
	return t->group;
}

static void setup(void)
{
	tracee_table_init(&table);
}

static void teardown(void)
{
	tracee_table_free(&table);
}

/* A vfork child shares until it execs; its parent is alone again. */
START_TEST(share_until_exec)
{
	struct tracee_group *p = proc(100), *c = proc(101);

	ck_assert(!tracee_shares(p));
	tracee_share_mem(p, c);
	ck_assert(tracee_shares(p));
	ck_assert(tracee_shares(c));
	tracee_unshare_mem(c);
	ck_assert(!tracee_shares(p));
	ck_assert(!tracee_shares(c));
}
END_TEST

/* A process that shares with two processes of different shares (C with
 * A's share and with B's) stays in a share with each for as long as it
 * and that one live: when the rest of either share leaves, C and the one
 * left still share. */
START_TEST(two_shares_merge)
{
	struct tracee_group *a1 = proc(200), *a2 = proc(201);
	struct tracee_group *b1 = proc(300), *b2 = proc(301);

	tracee_share_mem(a1, a2); /* {a1, a2} */
	tracee_share_mem(b1, b2); /* {b1, b2} */
	tracee_share_mem(a2, b2); /* b2 meets a second share */
	ck_assert(tracee_shares(b2));
	/* b1 and a1 go: a2 and b2 still use one memory. */
	tracee_remove(&table, 300);
	tracee_remove(&table, 200);
	ck_assert(tracee_shares(a2));
	ck_assert(tracee_shares(b2));
	/* And when one of the two is gone, the other is alone. */
	tracee_remove(&table, 201);
	ck_assert(!tracee_shares(b2));
}
END_TEST

/* The same, the other way round: the first share shrinks first. */
START_TEST(two_shares_merge_first_shrinks)
{
	struct tracee_group *a1 = proc(200), *a2 = proc(201);
	struct tracee_group *b1 = proc(300), *b2 = proc(301);

	tracee_share_mem(a1, a2);
	tracee_share_mem(b1, b2);
	tracee_share_mem(a2, b2);
	tracee_remove(&table, 300);     /* b1 */
	ck_assert(tracee_shares(b2));
	tracee_remove(&table, 200);     /* a1 */
	ck_assert(tracee_shares(a2));
	tracee_unshare_mem(a2);         /* a2 execs */
	ck_assert(!tracee_shares(b2));
}
END_TEST

/* Shares merged in a chain are freed when the last of them goes (the
 * sanitizer build reports a leak or a use after free otherwise). */
START_TEST(merged_chain_freed)
{
	struct tracee_group *g[6];

	for (int i = 0; i < 6; i++)
		g[i] = proc(400 + i);
	tracee_share_fs(g[0], g[1]);
	tracee_share_fs(g[2], g[3]);
	tracee_share_fs(g[4], g[5]);
	tracee_share_fs(g[1], g[3]);
	tracee_share_fs(g[3], g[5]);
	tracee_share_fs(g[0], g[5]); /* one share already: nothing changes */
	for (int i = 0; i < 5; i++) {
		ck_assert(tracee_shares(g[5]));
		tracee_remove(&table, 400 + i);
	}
	ck_assert(!tracee_shares(g[5]));
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("tracee");
	TCase *tc = tcase_create("shares");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, share_until_exec);
	tcase_add_test(tc, two_shares_merge);
	tcase_add_test(tc, two_shares_merge_first_shrinks);
	tcase_add_test(tc, merged_chain_freed);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
