#!/bin/bash
# agenttrace-report --format markdown: golden output, and no markup
# injection from the log's strings.
. "$top_srcdir/tests/tools/lib-tools.sh"

cd "$DATA" || exit 99
"$REPORT" -q run.jsonl --format markdown >"$OUT"
assert_eq "exit 0" 0 $?
assert_golden "markdown report matches run.report.md" "$DATA/run.report.md" "$OUT"
"$REPORT" -q run.jsonl -f md >"$SANDBOX/md2"
assert_golden "md is an alias of markdown" "$DATA/run.report.md" "$SANDBOX/md2"

# A path made to break out of a table cell and inject a link.
cat >"$SANDBOX/evil.jsonl" <<'LOG'
{"v":1,"time":"2026-01-15T10:00:00.000Z","session":"e","seq":1,"event":"alert","pid":7,"ppid":1,"exe":"/bin/x","argv":["x"],"cwd":"/","action":"deny","mode":"enforce","kind":"write","syscall":"openat","path":"/a|b`c<script>alert(1)</script>[l](http://x)*$$","rule":"write.fallback","why":"w | *x*","context":null,"backend":"ptrace"}
LOG
"$REPORT" -q "$SANDBOX/evil.jsonl" -f md >"$OUT"
out=$(cat "$OUT")
assert_eq "no raw <script> in markdown" "" "$(grep -F '<script>' "$OUT")"
row=$(grep -F '| **deny** |' "$OUT")
assert_eq "the finding row keeps 7 cell separators" 7 "$(printf '%s' "$row" | tr -cd '|' | wc -c)"
assert_match "the path is still shown, escaped" "/a&#124;b&#96;c&lt;script&gt;" "$out"
