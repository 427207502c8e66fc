#!/bin/bash
# agenttrace-policy learn on a fixed --record log: the golden policy
# (generalisation rules of agenttrace-policy(1)), accepted by
# `agenttrace-policy check`, and admitting every event of the run.
. "$top_srcdir/tests/tools/lib-tools.sh"
[ -x "$POLICY_TOOL" ] || skip_all "$POLICY_TOOL not built"

cd "$DATA" || exit 99
learned=$SANDBOX/learned.json
"$POLICY_TOOL" learn learn.jsonl --home /home/u --tmpdir /tmp -o "$learned" 2>"$ERR"
assert_eq "learn: exit 0" 0 $?
assert_golden "learned policy matches learn.expected (extends default)" "$DATA/learn.expected" "$learned"
assert_match "denials are not admitted, and learn says which rules still deny them" \
	"2 denied events of the run: 2 still denied \(write.home.bashrc 1, net.fallback 1\)" "$(cat "$ERR")"

"$POLICY_TOOL" learn learn.jsonl --home /home/u --tmpdir /tmp -q >"$OUT"
assert_golden "learn to stdout: the same policy" "$DATA/learn.expected" "$OUT"

# --extends none: a standalone policy, as learn wrote before it extended
# default; its account names its own rules.
"$POLICY_TOOL" learn learn.jsonl --home /home/u --tmpdir /tmp --extends none -o "$SANDBOX/standalone.json" 2>"$ERR"
assert_eq "learn --extends none: exit 0" 0 $?
assert_golden "learn --extends none matches learn-standalone.expected" "$DATA/learn-standalone.expected" \
	"$SANDBOX/standalone.json"
assert_match "learn --extends none: the account" \
	"2 denied events of the run: 2 still denied \(write.fallback 1, net.fallback 1\)" "$(cat "$ERR")"

# ${ROOT} comes from the log (the summary's cwd) unless --root says.
"$POLICY_TOOL" learn learn.jsonl --root /work --home /home/u --tmpdir /tmp -q >"$OUT"
assert_match "--root moves \${ROOT}" '"\$\{ROOT\}/proj/build/test runner"' "$(cat "$OUT")"

if [ -x "$AGENTTRACE_POLICY_TOOL" ]; then
	out=$(cd "$SANDBOX" && HOME=/home/u TMPDIR=/tmp "$AGENTTRACE_POLICY_TOOL" --root /work/proj check "$learned" 2>&1)
	assert_eq "agenttrace-policy check accepts the learned policy" 0 $?
	[ $? = 0 ] || diag "$out"
else
	skip "agenttrace-policy check accepts the learned policy" "agenttrace-policy not built"
fi

"$POLICY_TOOL" replay learn.jsonl --policy "$SANDBOX/standalone.json" --home /home/u --tmpdir /tmp -q >"$OUT"
assert_eq "replay under the standalone learned policy: only the alert, now allowed, differs" \
	"was alert, now allow: exec /usr/bin/pip3 install -r req.txt (rule learned.exec.pip3)" "$(cat "$OUT")"
"$POLICY_TOOL" replay learn.jsonl --policy "$learned" --home /home/u --tmpdir /tmp -q >"$OUT"
assert_eq "replay under the learned policy: default's install alert still alerts" \
	"was allow, now alert: exec /usr/bin/pip3 install -r req.txt (rule exec.install.pip)" "$(cat "$OUT")"

"$POLICY_TOOL" learn run.jsonl --home /home/u --tmpdir /tmp -q >"$OUT"
assert_eq "learn on another log: exit 0" 0 $?

grep -v '"event":"exec"' learn.jsonl >"$SANDBOX/noexec.jsonl"
"$POLICY_TOOL" learn "$SANDBOX/noexec.jsonl" >"$OUT" 2>"$ERR"
assert_eq "a log without --record exec records: 125" 125 $?
assert_match "and says to record" "--record" "$(cat "$ERR")"
"$POLICY_TOOL" learn "$SANDBOX/missing.jsonl" >"$OUT" 2>"$ERR"
assert_eq "a missing log: 125" 125 $?
"$POLICY_TOOL" learn >"$OUT" 2>"$ERR"
assert_eq "no log: 125" 125 $?
"$POLICY_TOOL" learn learn.jsonl --root relative/dir >"$OUT" 2>"$ERR"
assert_eq "relative --root: 125" 125 $?
