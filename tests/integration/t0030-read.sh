#!/bin/bash
# SPEC §5 read rules: credentials are denied, everything else is readable.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

mkdir -p "$HOME/.ssh" "$HOME/.aws"
printf 'SECRET-KEY-MATERIAL' >"$HOME/.ssh/id_ed25519"
printf 'ssh-ed25519 AAAA public' >"$HOME/.ssh/id_ed25519.pub"
printf '[default]\naws_secret_access_key=SECRET\n' >"$HOME/.aws/credentials"
printf 'plain' >"$HOME/notes.txt"
key=$HOME/.ssh/id_ed25519

expect_denied "read HOME/.ssh/id_ed25519" "$EACCES" read read. "$key" -- "$TRY" open-read "$key"
assert_rec "read denial: errno EACCES in the record" "event == 'alert' and kind == 'read' and errno == 'EACCES'"

at -- cat "$key" >"$OUT" 2>"$ERR"
assert_ne "cat of the private key fails" 0 $?
if grep -q SECRET "$OUT"; then not_ok "cat of the private key prints nothing of it"; else ok "cat of the private key prints nothing of it"; fi
assert_rec "cat of the private key: deny record" "$(deny_expr read read. "$key")"

expect_allowed "read HOME/.ssh/id_ed25519.pub" -- "$TRY" open-read "$key.pub"
at -- cat "$key.pub" >"$OUT" 2>"$ERR"
assert_eq "cat of the public key works" 0 $?
assert_file_content "cat of the public key prints it" "$OUT" 'ssh-ed25519 AAAA public'

expect_allowed "read an ordinary HOME file" -- "$TRY" open-read "$HOME/notes.txt"
expect_allowed "read /etc/passwd" -- "$TRY" open-read /etc/passwd

expect_denied "read HOME/.aws/credentials" "$EACCES" read read. "$HOME/.aws/credentials" -- \
	"$TRY" open-read "$HOME/.aws/credentials"

ln -s "$key" "$ROOT/innocent"
expect_denied "read the key through a symlink in ROOT" "$EACCES" read read. "$key" -- "$TRY" open-read "$ROOT/innocent"

expect_denied "read the key through ../" "$EACCES" read read. "$key" -- "$TRY" open-read ../home/.ssh/id_ed25519

if [ -n "$TRY_STATIC" ]; then
	expect_denied "static binary reads the key" "$EACCES" read read. "$key" -- "$TRY_STATIC" open-read "$key"
else
	skip "static binary reads the key" "no static helper (static linking unavailable)"
fi

expect_denied "raw openat of the key" "$EACCES" read read. "$key" -- "$TRY" raw-openat-read "$key"

# /proc/*/environ: the session's own processes are fine ...
expect_allowed "read /proc/self/environ" -- "$TRY" open-read /proc/self/environ
expect_allowed "read /proc/<own pid>/environ" -- sh -c 'exec "$0" open-read /proc/$$/environ' "$TRY"

# ... a process outside the session is not.
sleep 30 &
outside=$!
bg_track "$outside"
at -- "$TRY" open-read "/proc/$outside/environ" >"$OUT" 2>"$ERR"
assert_eq "read /proc/<outside pid>/environ: EACCES" "$EACCES" $?
assert_rec "read /proc/<outside pid>/environ: deny record" \
	"event == 'alert' and action == 'deny' and kind == 'read' and pre(path, '/proc/') and pre(rule_id, 'read.')"
kill "$outside" 2>/dev/null
