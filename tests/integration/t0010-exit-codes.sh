#!/bin/bash
# agenttrace(1), EXIT STATUS: the command's own status, 128+N for signal N, and agenttrace's
# own failures as 125 (cannot run), 126 (not executable), 127 (not found).
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

# agenttrace alone gets the PATH under test (at() itself needs a usable one)
at_path() {
	local p=$1
	shift
	(cd "$ROOT" && exec timeout -k 5 "$AT_TIMEOUT" env PATH="$p" "$AGENTTRACE" --log "$LOG" \
		${BK:+--backend "$B"} "$@") >"$OUT" 2>"$ERR"
}

# Every case under both backends: the exit codes do not depend on one.
for B in auto preload; do
	backend_use "$B"
	rm -f "$ROOT/ran"

	bk_q -- true
	assert_eq "${BK}true exits 0" 0 $?

	bk_q -- "$TRY" exit 3
	assert_eq "${BK}exit 3 is passed through" 3 $?

	bk_q -- "$TRY" exit 0
	assert_eq "${BK}exit 0 of a helper" 0 $?

	bk_q -- "$TRY" kill-self 15
	assert_eq "${BK}killed by SIGTERM -> 143" 143 $?

	bk_q -- "$TRY" kill-self 9
	assert_eq "${BK}killed by SIGKILL -> 137" 137 $?

	bk_q -- agenttrace-no-such-command-xyz
	assert_eq "${BK}command not found -> 127" 127 $?

	bk_q -- ./no-such-file
	assert_eq "${BK}relative path not found -> 127" 127 $?

	printf '#!/bin/sh\necho ran > "%s/ran"\n' "$ROOT" >"$ROOT/bin/not-exec"
	chmod 0644 "$ROOT/bin/not-exec"
	bk_q -- "$ROOT/bin/not-exec"
	assert_eq "${BK}not executable -> 126" 126 $?
	assert_file_absent "${BK}not executable: nothing ran" "$ROOT/ran"

	bk_q -- "$ROOT/bin"
	assert_eq "${BK}a directory as command -> 126" 126 $?

	# The command's PATH search is execvp(3)'s (spawn.c skips the directories
	# that lack the name without an exec attempt): the same program is found,
	# with the same errors, as natively.
	mkdir -p "$ROOT/p1/cmd-x" "$ROOT/p2" "$ROOT/p3" "$ROOT/p4"
	printf '#!/bin/sh\nexit 21\n' >"$ROOT/p2/cmd-x"        # p1/cmd-x is a directory
	printf '#!/bin/sh\nexit 22\n' >"$ROOT/p3/cmd-x"
	chmod 0755 "$ROOT/p3/cmd-x"                             # p2's is not executable
	printf 'exit 23\n' >"$ROOT/p4/cmd-noshebang"
	chmod 0755 "$ROOT/p4/cmd-noshebang"
	printf '#!/bin/sh\nexit 24\n' >"$ROOT/cmd-here"
	chmod 0755 "$ROOT/cmd-here"
	for c in "cmd-x" "cmd-noshebang" "cmd-here" "cmd-none"; do
		for p in "$ROOT/nonexistent:$ROOT/p1:$ROOT/p2:$ROOT/p3:$ROOT/p4:/usr/bin" "$ROOT/p2" "/usr/bin::$ROOT/p4"; do
			# env(1) runs it with execvp(3), and exits 127/126 as agenttrace does
			(cd "$ROOT" && /usr/bin/env PATH="$p" "$c" >/dev/null 2>&1)
			native=$?
			at_path "$p" -- "$c"
			assert_eq "${BK}PATH search: $c with PATH=${p//$ROOT/ROOT}: status as native" "$native" $?
		done
	done

	bk_q --no-such-option -- true
	assert_eq "${BK}bad option -> 125" 125 $?

	bk_q --mode sideways -- true
	assert_eq "${BK}bad --mode value -> 125" 125 $?

	bk_q --policy no-such-shipped-policy -- true
	assert_eq "${BK}unknown policy name -> 125" 125 $?

	# A pattern the shell expanded to nothing ("${ROOT}/.git/config" in
	# double quotes, ROOT unset in the shell): refused with a hint to
	# single-quote it, never taken as /.git/config.
	NOT_SET=
	bk_q --allow-write "${NOT_SET}/.git/config" -- "$TRY" open-write "$ROOT/ran"
	assert_eq "${BK}--allow-write \"\${ROOT}/.git/config\" as the shell leaves it -> 125" 125 $?
	assert_match "${BK}... with a hint to single-quote it" "'\\\$\{ROOT\}/\.git/config'" "$(cat "$ERR")"
	assert_file_absent "${BK}... and the command did not run" "$ROOT/ran"
	bk_q --allow-write "${NOT_SET}/**" -- true
	assert_eq "${BK}--allow-write \"\${ROOT}/**\" as the shell leaves it (every path) -> 125" 125 $?
	bk_q --allow-read "${NOT_SET}/.aws/credentials" -- true
	assert_eq "${BK}--allow-read of a dot-name under / -> 125" 125 $?
	bk_q --allow-write '${ROOT}/.git/config' -- "$TRY" open-write "$ROOT/ran"
	assert_eq "${BK}--allow-write '\${ROOT}/.git/config' single-quoted: runs" 0 $?
	rm -f "$ROOT/ran"
	cat >"$SANDBOX/heredoc.json" <<JSON
{
  "agenttrace": 1,
  "write": { "allow": [ "${NOT_SET}/.cache/tool/**" ] }
}
JSON
	bk_q --policy "$SANDBOX/heredoc.json" -- true
	assert_eq "${BK}a policy written by an unquoted here-document (/.cache/...) -> 125" 125 $?
	assert_match "${BK}... naming file:line:col and the here-document" "heredoc\.json:3:[0-9]+: .*<<'EOF'" "$(cat "$ERR")"

	# A syntax error: the message names file:line:col.
	cat >"$SANDBOX/syntax.json" <<'JSON'
{
  "agenttrace": 1,
  "write": { "allow": [ "${ROOT}/**" ,, ] }
}
JSON
	bk_q --policy "$SANDBOX/syntax.json" -- "$TRY" open-write "$ROOT/ran"
	assert_eq "${BK}policy syntax error -> 125" 125 $?
	assert_match "${BK}policy syntax error names file:line:col" "syntax\.json:3:[0-9]+" "$(cat "$ERR")"
	assert_file_absent "${BK}policy syntax error: the command did not run" "$ROOT/ran"

	# An unknown key: file:line:col and the key path.
	cat >"$SANDBOX/badkey.json" <<'JSON'
{
  "agenttrace": 1,
  "write": {
    "allow": [ "${ROOT}/**" ],
    "permit": [ "/" ]
  }
}
JSON
	bk_q --policy "$SANDBOX/badkey.json" -- "$TRY" open-write "$ROOT/ran"
	assert_eq "${BK}policy unknown key -> 125" 125 $?
	assert_match "${BK}policy unknown key names file:line:col" "badkey\.json:5:[0-9]+" "$(cat "$ERR")"
	assert_match "${BK}policy unknown key names the key" "permit" "$(cat "$ERR")"
	assert_file_absent "${BK}policy unknown key: the command did not run" "$ROOT/ran"

	bk_q --policy "$SANDBOX/missing.json" -- true
	assert_eq "${BK}missing policy file -> 125" 125 $?

done

"$AGENTTRACE" --help >"$OUT" 2>&1
assert_eq "--help exits 0" 0 $?
"$AGENTTRACE" --version >"$OUT" 2>&1
assert_eq "--version exits 0" 0 $?
assert_match "--version prints a version" "[0-9]+\.[0-9]+" "$(cat "$OUT")"
version=$(cat "$OUT")

# -V and -h are the short forms, as in agenttrace-policy and
# agenttrace-report; --help and agenttrace(1) list them.
"$AGENTTRACE" -V >"$OUT" 2>&1
assert_eq "-V exits 0" 0 $?
assert_eq "-V prints what --version prints" "$version" "$(cat "$OUT")"
"$AGENTTRACE" -h >"$OUT" 2>&1
assert_eq "-h exits 0" 0 $?
assert_match "-h prints the usage" "^Usage: agenttrace " "$(cat "$OUT")"
assert_match "--help lists -V, --version" "-V, --version" "$("$AGENTTRACE" --help)"
assert_match "--help lists -h, --help" "-h, --help" "$("$AGENTTRACE" --help)"
assert_match "agenttrace(1) documents -V" '^\.BR \\-V ", " \\-\\-version$' \
	"$(grep -e '-V' "$top_srcdir/man/agenttrace.1")"
for tool in agenttrace-policy agenttrace-report; do
	if [ -x "$top_builddir/$tool" ]; then
		assert_eq "$tool -V names the same version" "${version#agenttrace }" \
			"$("$top_builddir/$tool" -V 2>&1 | sed 's/^[^ ]* //')"
	else
		skip "$tool -V names the same version" "$tool not built"
	fi
done
