#!/bin/bash
# Each program's --help and its man page list the same options, both
# ways: agenttrace(1), agenttrace-report(1) and agenttrace-policy(1)
# OPTIONS, and agenttrace-policy(1) "learn options" / "replay options"
# against `learn --help` / `replay --help`.  The option words of a man page
# are those of the tags of its .TP/.TQ paragraphs in that section.
. "$top_srcdir/tests/tools/lib-tools.sh"

AT=${AGENTTRACE:-$top_builddir/agenttrace}
MAN=$top_srcdir/man

# man_options PAGE SECTION-LINE: the options of that section's tags, one
# a line, sorted.
man_options() {
	"$PYTHON" - "$1" "$2" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
head = sys.argv[2]
try:
    start = lines.index(head) + 1
except ValueError:
    sys.exit("no %s in %s" % (head, sys.argv[1]))
level = head.split()[0]
opts = set()
tag_next = False
for l in lines[start:]:
    if l.startswith(".SH") or (level == ".SS" and l.startswith(".SS")):
        break
    if l in (".TP", ".TQ"):
        tag_next = True
        continue
    if tag_next:
        tag_next = False
        text = re.sub(r"\\f[A-Z]|\\f\(..|\\&", "", l).replace("\\-", "-")
        for m in re.finditer(r"(?:^|[ ,\"])(--?[A-Za-z][A-Za-z-]*)", text):
            opts.add(m.group(1))
for o in sorted(opts):
    print(o)
PY
}

# same DESC HELP-LIST MAN-LIST: equal, else the differences both ways.
same() {
	local only_help only_man
	only_help=$(comm -23 <(printf '%s\n' "$2") <(printf '%s\n' "$3") | tr '\n' ' ')
	only_man=$(comm -13 <(printf '%s\n' "$2") <(printf '%s\n' "$3") | tr '\n' ' ')
	if [ -n "$2" ] && [ -z "$only_help$only_man" ]; then
		ok "$1"
	else
		not_ok "$1" "only in --help: ${only_help:-none}" "only in the man page: ${only_man:-none}"
	fi
}

same "agenttrace: --help = agenttrace(1) OPTIONS" \
	"$(help_options "$AT")" "$(man_options "$MAN/agenttrace.1" ".SH OPTIONS")"
same "agenttrace-report: --help = agenttrace-report(1) OPTIONS" \
	"$(help_options "$REPORT")" "$(man_options "$MAN/agenttrace-report.1" ".SH OPTIONS")"
same "agenttrace-policy: --help = agenttrace-policy(1) OPTIONS" \
	"$(help_options "$POLICY_TOOL")" "$(man_options "$MAN/agenttrace-policy.1" ".SH OPTIONS")"
same "agenttrace-policy learn: --help = learn options" \
	"$(help_options "$POLICY_TOOL" learn)" \
	"$(man_options "$MAN/agenttrace-policy.1" '.SS "learn options"')"
same "agenttrace-policy replay: --help = replay options" \
	"$(help_options "$POLICY_TOOL" replay)" \
	"$(man_options "$MAN/agenttrace-policy.1" '.SS "replay options"')"

# What the pages say of behaviour that has changed.
help=$("$AT" --help)
assert_match "--help: --max-memory is the session's" '--max-memory SIZE +memory of the whole session' "$help"
assert_match "--help: --max-cpu is the session's" '--max-cpu SEC +CPU seconds of the whole session' "$help"
page=$(cat "$MAN/agenttrace.1")
if printf '%s\n' "$page" | grep -q 'not$' && printf '%s\n' "$page" | grep -q '^available yet'; then
	not_ok "agenttrace(1) LIMITS: the preload backend exists"
else
	ok "agenttrace(1) LIMITS: the preload backend exists"
fi
env_sec=$(printf '%s\n' "$page" | sed -n '/^\.SH ENVIRONMENT/,/^\.SH /p')
for v in GITHUB_ACTIONS GITHUB_STEP_SUMMARY AGENTTRACE_CONTEXT; do
	assert_match "agenttrace(1) ENVIRONMENT: $v" "$v" "$env_sec"
done

# Every page formats without a warning from groff: a text line that starts
# with "." or "'" is a request to troff, and its words vanish from the page.
if need_apt_package "command -v groff" groff-base; then
	for page in "$MAN"/*.[15]; do
		warnings=$(groff -man -ww -z -Tutf8 "$page" 2>&1)
		if [ -z "$warnings" ]; then
			ok "$(basename "$page"): groff gives no warning"
		else
			not_ok "$(basename "$page"): groff gives no warning" "$warnings"
		fi
	done
else
	skip "the man pages format without a warning" "no groff"
fi
# No control character but tab and newline: a "\f" written through a
# string escape once became a form feed in the middle of a line, which
# the terminal formatter drops without a word.
for page in "$MAN"/*.[15]; do
	if LC_ALL=C grep -n $'[\x01-\x08\x0b-\x1f\x7f]' "$page" >"$SANDBOX/ctl"; then
		not_ok "$(basename "$page"): no control characters" "$(cat -A "$SANDBOX/ctl" | head -3)"
	else
		ok "$(basename "$page"): no control characters"
	fi
done
