#!/bin/bash
# agenttrace-report --format text: golden output of a fixed log
# (tests/tools/data/run.jsonl: a --record run with denials of every kind,
# an alert, a warning, a backtrace, a script, and two malformed lines).
. "$top_srcdir/tests/tools/lib-tools.sh"

cd "$DATA" || exit 99
"$REPORT" run.jsonl >"$OUT" 2>"$ERR"
assert_eq "exit 0 on a log with malformed lines" 0 $?
assert_golden "text report matches run.report.txt" "$DATA/run.report.txt" "$OUT"
assert_match "malformed lines reported on stderr" "2 malformed lines skipped" "$(cat "$ERR")"
assert_match "the first malformed line is named" "run.jsonl:10: not JSON" "$(cat "$ERR")"

"$REPORT" run.jsonl --format text -o "$SANDBOX/r.txt" >"$OUT" 2>/dev/null
assert_eq "-o FILE: exit 0" 0 $?
assert_golden "-o FILE writes the same report" "$DATA/run.report.txt" "$SANDBOX/r.txt"
assert_eq "-o FILE: nothing on stdout" "" "$(cat "$OUT")"

"$REPORT" -q run.jsonl >"$OUT" 2>"$ERR"
assert_eq "-q: no warnings" "" "$(cat "$ERR")"

"$REPORT" - <run.jsonl >"$OUT" 2>/dev/null
assert_eq "LOG - reads standard input" 0 $?
assert_match "stdin report has the denials" "6 denied, 1 alert, 1 warning" "$(cat "$OUT")"
