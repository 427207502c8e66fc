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
