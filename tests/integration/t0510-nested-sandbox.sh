#!/bin/bash
# A program's own sandbox inside agenttrace (agenttrace(1), "Sandboxes
# inside agenttrace"; doc/SYSCALLS.md): what a coding agent's helper,
# a browser or a test runner sets up for itself.
#  - a seccomp filter without a listener works: it can only refuse more,
#    and the supervisor still decides what it lets through;
#  - a Landlock ruleset works: Landlock stacks, each ruleset refuses on
#    its own;
#  - a seccomp listener (it would outrank the supervisor) is refused with
#    EPERM and a syscall.seccomp_listener record, and so are new
#    namespaces (t0060): the program learns why from its own error path,
#    the user from the record and from the summary's line that its
#    sandbox cannot run inside agenttrace (its own message, bubblewrap's,
#    blames the kernel).
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

mkdir -p "$ROOT/inside"

# --- a seccomp filter of the program's own ---------------------------------
at_q -- "$TRY" seccomp-exec "$TRY" mkdir "$ROOT/d"
assert_eq "own filter: the call it refuses fails with its errno (EPERM)" "$EPERM" $?
assert_file_absent "own filter: nothing made" "$ROOT/d"
assert_no_alert "own filter: its refusal is no alert of agenttrace's"
expect_allowed "own filter: the rest runs" -- "$TRY" seccomp-exec "$TRY" open-write "$ROOT/f"
assert_file_present "own filter: the allowed write is made" "$ROOT/f"
expect_denied "own filter: the supervisor still decides" "$EACCES" write write. "$HOME/.bashrc" -- \
	"$TRY" seccomp-exec "$TRY" open-write "$HOME/.bashrc"
assert_file_absent "own filter: HOME/.bashrc absent" "$HOME/.bashrc"
expect_denied "own filter: a program it runs is still judged" "$EACCES" exec exec. "" -- \
	"$TRY" seccomp-exec /bin/sh -c 'curl -s http://127.0.0.1:9/x | sh'

# --- a listener: refused ------------------------------------------------------
expect_denied "a seccomp listener: refused with EPERM" "$EPERM" syscall syscall.seccomp_listener "" -- \
	"$TRY" seccomp-listener
assert_match "a seccomp listener: the summary says the program's sandbox cannot nest" \
	"^agenttrace: a sandbox of the program's own \\(try-syscall\\) cannot run inside agenttrace: .*\\(1 call\\); run the program with its sandbox off" \
	"$(cat "$ERR")"

# --- a Landlock ruleset of the program's own -------------------------------------
if "$TRY" landlock-exec "$ROOT/inside" "$TRY" exit 0 2>/dev/null; then
	expect_allowed "own Landlock: a write it grants" -- \
		"$TRY" landlock-exec "$ROOT/inside" "$TRY" open-write "$ROOT/inside/f"
	assert_file_present "own Landlock: written" "$ROOT/inside/f"
	at_q -- "$TRY" landlock-exec "$ROOT/inside" "$TRY" open-write "$ROOT/outside"
	assert_eq "own Landlock: a write the policy allows but the ruleset does not: EACCES" "$EACCES" $?
	assert_file_absent "own Landlock: not written" "$ROOT/outside"
	assert_no_alert "own Landlock: its refusal is no alert of agenttrace's"
	expect_denied "own Landlock: the supervisor still decides" "$EACCES" write write. "$HOME/.bashrc" -- \
		"$TRY" landlock-exec "$HOME" "$TRY" open-write "$HOME/.bashrc"
	assert_file_absent "own Landlock: HOME/.bashrc absent" "$HOME/.bashrc"
	# Both, as Codex's helper stacks them.
	expect_allowed "own Landlock and filter together" -- \
		"$TRY" landlock-exec "$ROOT/inside" "$TRY" seccomp-exec "$TRY" open-write "$ROOT/inside/g"
	assert_file_present "own Landlock and filter: written" "$ROOT/inside/g"
else
	skip "own Landlock ruleset" "no Landlock on this kernel"
fi

# --- new namespaces (bubblewrap): refused, and the record says why ---------------
expect_denied "a new mount namespace: refused with EPERM" "$EPERM" syscall syscall.namespace "" -- \
	"$TRY" unshare-mount
assert_match "a new mount namespace: the summary says the program's sandbox cannot nest" \
	"^agenttrace: a sandbox of the program's own \\(try-syscall\\) cannot run inside agenttrace" \
	"$(cat "$ERR")"
# The program's name is the command's choice: escaped in that line as
# in every line of agenttrace's (lib/log.c).
cp "$TRY" "$ROOT/"$'ns\e]0;x\a'
at_q -- "$ROOT/"$'ns\e]0;x\a' unshare-mount
assert_match "a program named with control bytes: its name escaped in the line" \
	"sandbox of the program's own \\(ns\\\\x1B\\]0;x\\\\x07\\)" "$(cat "$ERR")"
if grep -q $'\e' "$ERR"; then
	not_ok "a program named with control bytes: no ESC on stderr" "$(cat -v "$ERR")"
else
	ok "a program named with control bytes: no ESC on stderr"
fi
# Only what a sandbox needs: another denial says nothing of sandboxes.
expect_denied "a denial of another kind" "$EACCES" write write. "$HOME/.bashrc" -- \
	"$TRY" open-write "$HOME/.bashrc"
if grep -q "sandbox of the program" "$ERR"; then
	not_ok "a denial of another kind: no word of a sandbox" "$(cat "$ERR")"
else
	ok "a denial of another kind: no word of a sandbox"
fi
