/* The calls that a write deny rule judging content (agenttrace-policy(5),
 * "Content"; rules_rule.content) decides otherwise than a plain deny, at
 * a stop of either engine:
 *
 *  - a rename of FILE.lock onto FILE: the supervisor makes the
 *    replacement itself with the bytes it judged (replace.h), and answers
 *    the caller's rename with 0; refused (EACCES, a record naming the
 *    variable) when the bytes do not pass, or the lock is no plain file,
 *    or the rename has flags;
 *  - a chmod of FILE: decided by the rest of the policy (no byte changes);
 *  - a rename or symlink at a directory on the way to what such a rule
 *    names (rules_content_on_the_way): refused, since it would move a
 *    judged file from under its check.
 *
 * Every other write of FILE stays the rule's plain deny. */
#ifndef AGENTTRACE_CONTENT_H
#define AGENTTRACE_CONTENT_H

#include <stdbool.h>

struct call;
struct judge_call;
struct judge_verdict;
struct session;
struct stop_answer;
struct tracee;

/* After judge_decide() of call C of task T (JC its judge call, V its
 * verdict).  True: decided here, A holds the answer and the records are
 * written.  False: the caller goes on with V, which may have become the
 * verdict of the rest of the policy (a chmod) or of the Landlock
 * backstop. */
bool content_stop(struct session *s, struct tracee *t, struct call *c, struct judge_call *jc,
		  struct judge_verdict *v, struct stop_answer *a);

/* The unlink C, of a file of git's configuration in a git directory the
 * session made (call.h removal_in_new_git), about to be made from the
 * directory DFD: whether DFD is still one the session made. */
bool content_removal_holds(const struct session *s, const struct call *c, int dfd);

#endif
