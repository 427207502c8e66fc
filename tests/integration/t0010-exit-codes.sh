#!/bin/bash
# SPEC §3: the command's own status, 128+N for signal N, and agenttrace's
# own failures as 125 (cannot run), 126 (not executable), 127 (not found).
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

at_q -- true
assert_eq "true exits 0" 0 $?

at_q -- "$TRY" exit 3
assert_eq "exit 3 is passed through" 3 $?

at_q -- "$TRY" exit 0
assert_eq "exit 0 of a helper" 0 $?

at_q -- "$TRY" kill-self 15
assert_eq "killed by SIGTERM -> 143" 143 $?

at_q -- "$TRY" kill-self 9
assert_eq "killed by SIGKILL -> 137" 137 $?

at_q -- agenttrace-no-such-command-xyz
assert_eq "command not found -> 127" 127 $?

at_q -- ./no-such-file
assert_eq "relative path not found -> 127" 127 $?

printf '#!/bin/sh\necho ran > "%s/ran"\n' "$ROOT" >"$ROOT/bin/not-exec"
chmod 0644 "$ROOT/bin/not-exec"
at_q -- "$ROOT/bin/not-exec"
assert_eq "not executable -> 126" 126 $?
assert_file_absent "not executable: nothing ran" "$ROOT/ran"

at_q -- "$ROOT/bin"
assert_eq "a directory as command -> 126" 126 $?

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
# agenttrace alone gets the PATH under test (at() itself needs a usable one)
at_path() {
	local p=$1
	shift
	(cd "$ROOT" && exec timeout -k 5 "$AT_TIMEOUT" env PATH="$p" "$AGENTTRACE" --log "$LOG" "$@") \
		>"$OUT" 2>"$ERR"
}
for c in "cmd-x" "cmd-noshebang" "cmd-here" "cmd-none"; do
	for p in "$ROOT/nonexistent:$ROOT/p1:$ROOT/p2:$ROOT/p3:$ROOT/p4:/usr/bin" "$ROOT/p2" "/usr/bin::$ROOT/p4"; do
		# env(1) runs it with execvp(3), and exits 127/126 as agenttrace does
		(cd "$ROOT" && /usr/bin/env PATH="$p" "$c" >/dev/null 2>&1)
		native=$?
		at_path "$p" -- "$c"
		assert_eq "PATH search: $c with PATH=${p//$ROOT/ROOT}: status as native" "$native" $?
	done
done

at_q --no-such-option -- true
assert_eq "bad option -> 125" 125 $?

at_q --mode sideways -- true
assert_eq "bad --mode value -> 125" 125 $?

at_q --policy no-such-shipped-policy -- true
assert_eq "unknown policy name -> 125" 125 $?

# A syntax error: the message names file:line:col.
cat >"$SANDBOX/syntax.json" <<'JSON'
{
  "agenttrace": 1,
  "write": { "allow": [ "${ROOT}/**" ,, ] }
}
JSON
at_q --policy "$SANDBOX/syntax.json" -- "$TRY" open-write "$ROOT/ran"
assert_eq "policy syntax error -> 125" 125 $?
assert_match "policy syntax error names file:line:col" "syntax\.json:3:[0-9]+" "$(cat "$ERR")"
assert_file_absent "policy syntax error: the command did not run" "$ROOT/ran"

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
at_q --policy "$SANDBOX/badkey.json" -- "$TRY" open-write "$ROOT/ran"
assert_eq "policy unknown key -> 125" 125 $?
assert_match "policy unknown key names file:line:col" "badkey\.json:5:[0-9]+" "$(cat "$ERR")"
assert_match "policy unknown key names the key" "permit" "$(cat "$ERR")"
assert_file_absent "policy unknown key: the command did not run" "$ROOT/ran"

at_q --policy "$SANDBOX/missing.json" -- true
assert_eq "missing policy file -> 125" 125 $?

"$AGENTTRACE" --help >"$OUT" 2>&1
assert_eq "--help exits 0" 0 $?
"$AGENTTRACE" --version >"$OUT" 2>&1
assert_eq "--version exits 0" 0 $?
assert_match "--version prints a version" "[0-9]+\.[0-9]+" "$(cat "$OUT")"
