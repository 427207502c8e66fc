#!/bin/bash
# agenttrace(1) RECORDS, doc/CI.md: the bytes a command chooses (file
# names, argv) reach human output escaped (lib/textesc.h): agenttrace's
# lines on stderr, the GitHub annotations and step summary, the text and
# Markdown reports.  Control bytes, C1 and invalid UTF-8 show as \xHH; no
# line begins with "::" but agenttrace's own workflow commands; Markdown's
# characters are neutralised in table cells; the HTML report escapes the
# same way.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

REPORT=$top_builddir/agenttrace-report
[ -x "$REPORT" ] || skip_all "$REPORT not built"

nl=$'\n'
esc=$'\x1b'
names=("a${nl}b" "${esc}[31mred" "::error::x" "y${nl}::error::pwned" $'\xff\xfeu')
# Their \xHH forms, as they must appear.
shown=('a\x0Ab' '\x1B[31mred' '::error::x' 'y\x0A::error::pwned' '\xFF\xFEu')

# A command whose name is made of Markdown's table and code characters.
odd="$ROOT/bin/t|r\`y*_x"
cp "$TRY" "$odd"

# bad_lines FILE: lines that begin with "::" and are not agenttrace's own
# annotations, and lines that hold a control character (C0 but TAB, DEL,
# C1) or a byte that is not UTF-8.
bad_lines() {
	"$PYTHON" -S - "$1" <<'PY'
import re, sys
data = open(sys.argv[1], "rb").read()
for line in data.split(b"\n"):
    own = re.match(rb"^::(error|warning) (file=[^,:]*,)?title=agenttrace ", line)
    if line.startswith(b"::") and not own:
        print("workflow command:", line[:80])
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        print("not UTF-8:", line[:80])
        continue
    if any(ord(c) < 0x20 and c != "\t" or 0x7f <= ord(c) <= 0x9f for c in text):
        print("control character:", line[:80])
PY
}

script='for f in "$@"; do "$TRY" open-write "$HOME/$f" 2>/dev/null; done; exit 0'
summary=$SANDBOX/step-summary.md

for B in auto preload; do
	backend_use "$B"
	: >"$summary"
	GITHUB_ACTIONS=true GITHUB_STEP_SUMMARY=$summary \
		bk_q -v -- "$odd" exec /bin/sh -c "$script" sh "${names[@]}"
	assert_eq "${BK}the command ran" 0 $?
	assert_eq "${BK}every name was denied" "${#names[@]}" \
		"$(rec_count "event == 'alert' and action == 'deny' and kind == 'write'")"

	bad=$(bad_lines "$ERR")
	assert_eq "${BK}stderr: no raw control byte, invalid UTF-8 or foreign workflow command" "" "$bad"
	for i in "${!names[@]}"; do
		assert_match "${BK}annotation: name $i escaped inside one ::error command" \
			"^::error title=agenttrace write.fallback::denied write " \
			"$(grep -F -- "${shown[$i]}" "$ERR" | grep '^::')"
	done
	assert_eq "${BK}one annotation per denial" "${#names[@]}" "$(grep -c '^::error title=agenttrace' "$ERR")"
	assert_eq "${BK}no plain line beside an annotation" "" "$(grep '^agenttrace: denied' "$ERR")"
	bad=$(bad_lines "$summary")
	assert_eq "${BK}step summary: no raw control byte" "" "$bad"
	assert_match "${BK}step summary: the command's name neutralised in its cell" \
		'\| <code>[^|]*/t&#124;r&#96;y&#42;&#95;x</code> \|' "$(cat "$summary")"
	assert_eq "${BK}step summary: the command row keeps its 5 cell separators" 5 \
		"$(grep -F '<code>' "$summary" | head -1 | tr -cd '|' | wc -c)"
	assert_eq "${BK}step summary: each denial row keeps its 4 cell separators" "4 4 4 4 4" \
		"$(grep -F '<code>write.fallback</code>' "$summary" | tr -cd '|\n' | awk '{ s = s (NR > 1 ? " " : "") length($0) } END { print s }')"

	# Outside GitHub Actions, the plain lines say the same, escaped.
	bk_q -v -- "$odd" exec /bin/sh -c "$script" sh "${names[@]}"
	bad=$(bad_lines "$ERR")
	assert_eq "${BK}stderr: no raw control byte, invalid UTF-8 or workflow command" "" "$bad"
	for i in "${!names[@]}"; do
		assert_match "${BK}stderr: the alert line shows name $i escaped" \
			"^agenttrace: denied write .*$(printf '%s' "${shown[$i]}" | sed 's/[][\\.*^$|?+(){}]/\\&/g')" \
			"$(grep -F -- "${shown[$i]}" "$ERR" | grep '^agenttrace: ')"
	done

	# The reports of that log.
	"$REPORT" -q "$LOG" >"$SANDBOX/report.txt"
	assert_eq "${BK}text report: exit 0" 0 $?
	bad=$(bad_lines "$SANDBOX/report.txt")
	assert_eq "${BK}text report: no raw control byte and no line beginning with ::" "" "$bad"
	for i in "${!names[@]}"; do
		if grep -qF -- "${shown[$i]}" "$SANDBOX/report.txt"; then
			ok "${BK}text report: name $i shown escaped"
		else
			not_ok "${BK}text report: name $i shown escaped" "missing: ${shown[$i]}"
		fi
	done

	"$REPORT" -q "$LOG" --format markdown >"$SANDBOX/report.md"
	assert_eq "${BK}markdown report: exit 0" 0 $?
	bad=$(bad_lines "$SANDBOX/report.md")
	assert_eq "${BK}markdown report: no raw control byte and no line beginning with ::" "" "$bad"
	assert_match "${BK}markdown report: ESC shown as \\x1B, its '[' neutralised" \
		'<code>[^<]*/&#92;x1B&#91;31mred</code>' "$(cat "$SANDBOX/report.md")"
	assert_match "${BK}markdown report: the newline shown as \\x0A" \
		'<code>[^<]*/y&#92;x0A::error::pwned</code>' "$(cat "$SANDBOX/report.md")"
	assert_match "${BK}markdown report: invalid UTF-8 shown as \\xHH" \
		'&#92;xFF&#92;xFEu' "$(cat "$SANDBOX/report.md")"
	# A long sandbox path (a distcheck build) cuts the cell short of "pwned".
	row=$(grep -F '| **deny** |' "$SANDBOX/report.md" | grep -F '::error::pwn' | head -1)
	assert_eq "${BK}markdown report: a finding row keeps 7 cell separators" 7 \
		"$(printf '%s' "$row" | tr -cd '|' | wc -c)"
done

# A script whose text holds a workflow command and an ESC: the reports
# show it, escaped, and never at the start of a line.
printf '#!/bin/sh\n::error::from-script\necho "\033[2J"\n' >"$ROOT/bin/odd.sh"
chmod +x "$ROOT/bin/odd.sh"
cat >"$SANDBOX/deny-odd.json" <<'JSON'
{ "agenttrace": 1, "extends": "default",
  "exec": { "deny": [{ "id": "exec.odd", "argv": ["odd.sh", "**"] }] } }
JSON
at_q --policy "$SANDBOX/deny-odd.json" -- "$TRY" exec "$ROOT/bin/odd.sh"
assert_eq "a denied script: EACCES" "$EACCES" $?
assert_rec "a denied script: its record carries the script text" \
	"event == 'alert' and rule_id == 'exec.odd' and script and '::error::from-script' in script"
"$REPORT" -q "$LOG" >"$SANDBOX/script.txt"
"$REPORT" -q "$LOG" --format markdown >"$SANDBOX/script.md"
assert_eq "text report of a script: no line beginning with ::, no ESC" "" "$(bad_lines "$SANDBOX/script.txt")"
assert_eq "markdown report of a script: no line beginning with ::, no ESC" "" "$(bad_lines "$SANDBOX/script.md")"
assert_match "markdown report of a script: the line shown, its colon escaped" \
	'^\\x3A:error::from-script$' "$(cat "$SANDBOX/script.md")"
assert_match "text report of a script: the ESC shown as \\x1B" '\| echo "\\x1B\[2J"' "$(cat "$SANDBOX/script.txt")"
"$REPORT" -q "$LOG" --format html >"$SANDBOX/script.html"
assert_eq "html report of a script: no line beginning with ::, no ESC" "" "$(bad_lines "$SANDBOX/script.html")"
