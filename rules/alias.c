/* An exec decided again under another name of the same program
 * (rules.h, rules_decide_exec_alias). */
#include <string.h>

#include "rules/rules.h"

void rules_decide_exec_alias(const struct rules_policy *p, const struct rules_event *ev,
			     const char *alias, struct rules_call_verdict *cv)
{
	const struct rules_rule *fallback;
	struct rules_event as = *ev;
	struct rules_verdict v;

	if (!p || !alias || !*alias || ev->kind != RULES_KIND_EXEC || !cv->rule)
		return;
	fallback = rules_rule_at(p, p->fallback[RULES_KIND_EXEC]);
	/* Only an exec no rule named: a rule that matched the program as
	 * it is (a deny of nc.openbsd, an allow of make) decided already. */
	if (cv->rule != fallback)
		return;
	as.exe = alias;
	if (rules_decide(p, &as, &v) < 0 || v.rule == fallback)
		return;
	cv->action = v.action;
	cv->rule = v.rule;
	cv->effective = rules_effective(p, v.action);
}
