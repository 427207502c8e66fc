#!/bin/bash
# --backend auto falls back to the preload backend when ptrace
# cannot start, and says so; --backend ptrace refuses to run instead.
# Forced for real: agenttrace runs under `strace -f`, which attaches to
# every child agenttrace forks, so that agenttrace's PTRACE_SEIZE of the
# command fails with EPERM (one tracer per process).
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace
[ -f "$top_builddir/preload/libagenttrace-preload.so" ] || skip_all "the shim is not built"
have strace || skip_all "strace is not installed (the test's way to make ptrace fail)"
strace -f -o /dev/null true 2>/dev/null || skip_all "strace cannot trace here"

bashrc=$HOME/.bashrc
printf 'orig' >"$bashrc"

# st_at [OPTIONS] -- CMD...: `at` under strace -f (its own output dropped).
# LeakSanitizer cannot run in a traced process (an ASan build would exit 1
# at its end), so it is off there.
st_at() {
	local st
	rm -f "$LOG"
	(cd "$ROOT" && ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		exec timeout -k 5 "$AT_TIMEOUT" strace -f -o /dev/null \
		"$AGENTTRACE" --log "$LOG" "$@") >"$OUT" 2>"$ERR"
	st=$?
	at_runs=$((at_runs + 1))
	[ -f "$LOG" ] && cp "$LOG" "$SANDBOX/log.$at_runs.jsonl"
	return $st
}

FALLBACK_WARNING='warning: cannot trace the command \(Operation not permitted\): falling back to the preload backend, which static binaries and raw syscalls bypass'

# --- auto (the default) falls back, warns, and still denies ---------------
for how in default --backend=auto; do
	opts=()
	[ $how = default ] || opts=("$how")
	st_at "${opts[@]}" -- "$TRY" open-write "$bashrc"
	assert_eq "auto ($how) under strace: a dynamic program's write to HOME/.bashrc is denied (EACCES)" "$EACCES" $?
	assert_file_content "auto ($how) under strace: HOME/.bashrc unchanged" "$bashrc" orig
	assert_match "auto ($how) under strace: a warning says it fell back to the preload backend, bypassable" \
		"$FALLBACK_WARNING" "$(cat "$ERR")"
	assert_match "auto ($how) under strace: the summary line says preload-only is bypassable" \
		"preload-only: .*bypass" "$(cat "$ERR")"
	assert_rec "auto ($how) under strace: the denial record says backend preload" \
		"$(deny_expr write write. "$bashrc") and errno == 'EACCES' and backend == 'preload'"
	assert_rec "auto ($how) under strace: the summary says backend preload, bypassable" \
		"event == 'summary' and backend == 'preload' and bypassable == True and exit_code == $EACCES"
	assert_no_rec "auto ($how) under strace: no record claims the ptrace backend" \
		"event == 'alert' and backend == 'ptrace'"
done

# Exit statuses are the usual ones.
st_at -- "$TRY" exit 3
assert_eq "fallback: the command's status is passed through (3)" 3 $?
st_at -- "$TRY" kill-self 15
assert_eq "fallback: a command killed by SIGTERM -> 143" 143 $?
st_at -- agenttrace-no-such-command-xyz
assert_eq "fallback: command not found -> 127" 127 $?
st_at -- "$TRY" open-write "$ROOT/allowed.txt"
assert_eq "fallback: an allowed write works (exit 0)" 0 $?
assert_file_content "fallback: the allowed write happened" "$ROOT/allowed.txt" x
assert_no_alert "fallback: an allowed write: no alert"

# The command runs once: the child that could not be traced was killed
# before its exec, and a new one started for the preload backend.
rm -f "$ROOT/runs"
st_at -- sh -c 'echo ran >> runs'
assert_eq "fallback: sh -c exits 0" 0 $?
assert_file_content "fallback: the command ran exactly once" "$ROOT/runs" ran

# Children of the command are covered by the shim too.
st_at -- sh -c '"$0" open-write "$1"; exit $?' "$TRY" "$bashrc"
assert_eq "fallback: a child's denied write: EACCES" "$EACCES" $?
assert_rec "fallback: a child's denial record says backend preload" \
	"$(deny_expr write write. "$bashrc") and backend == 'preload' and pre(exe, '$ROOT/bin/try-syscall')"

# What the fallback costs: the static helper is not seen by the shim (and
# reported).  The Landlock backstop that auto set up before ptrace failed
# stays in force (the summary's "landlock" is its ABI): where the kernel
# has Landlock, the helper's write outside the write roots is still
# refused, by the kernel and without a record; where it has not, the
# write happens.
if [ -n "$TRY_STATIC" ]; then
	st_at -- "$TRY_STATIC" open-write "$bashrc"
	st=$?
	assert_no_alert "fallback: the static helper's write: no record (the shim never ran)"
	assert_rec "fallback: the summary lists the static helper as unseen" \
		"event == 'summary' and backend == 'preload' and '$TRY_STATIC' in unseen"
	if [ "$(rec_field "event == 'summary'" landlock)" = null ]; then
		assert_eq "fallback, no Landlock: the static helper's write is NOT stopped (the preload blind spot)" 0 "$st"
		assert_file_content "fallback, no Landlock: HOME/.bashrc WAS written" "$bashrc" xrig
	else
		assert_eq "fallback with Landlock: the kernel backstop refuses the static helper's write (EACCES)" "$EACCES" "$st"
		assert_file_content "fallback with Landlock: HOME/.bashrc unchanged" "$bashrc" orig
		st_at -- "$TRY_STATIC" open-write "$ROOT/static.txt"
		assert_eq "fallback with Landlock: the static helper's write under ROOT still works" 0 $?
	fi
	printf 'orig' >"$bashrc"
else
	skip "fallback: the static helper escapes" "no static helper (static linking unavailable)"
fi

# --- ptrace only: no fallback, 125 with a clear message --------------------
st_at --backend ptrace -- "$TRY" open-write "$ROOT/ptrace.txt"
assert_eq "--backend ptrace under strace: exits 125" 125 $?
assert_match "--backend ptrace under strace: says it cannot trace the command" \
	"agenttrace: cannot trace the command: Operation not permitted" "$(cat "$ERR")"
assert_match "--backend ptrace under strace: the hint names the tracer already there" \
	"already traced by pid [0-9]+ .*strace -f" "$(cat "$ERR")"
if grep -q 'falling back' "$ERR"; then
	not_ok "--backend ptrace under strace: no fallback" "$(cat "$ERR")"
else
	ok "--backend ptrace under strace: no fallback"
fi
assert_file_absent "--backend ptrace under strace: the command did not run" "$ROOT/ptrace.txt"

# --- --backend preload under strace: nothing to fall back from ------------
st_at --backend preload -- "$TRY" open-write "$bashrc"
assert_eq "--backend preload under strace: denied as usual (EACCES)" "$EACCES" $?
if grep -q 'falling back' "$ERR"; then
	not_ok "--backend preload under strace: no fallback warning" "$(cat "$ERR")"
else
	ok "--backend preload under strace: no fallback warning"
fi

# --- without strace, auto does not fall back --------------------------------
at -- "$TRY" open-write "$bashrc" >"$OUT" 2>"$ERR"
assert_eq "auto without strace: EACCES" "$EACCES" $?
assert_rec "auto without strace: the record says backend ptrace" \
	"$(deny_expr write write. "$bashrc") and backend == 'ptrace'"
if grep -q 'falling back' "$ERR"; then not_ok "auto without strace: no fallback warning" "$(cat "$ERR")"; else ok "auto without strace: no fallback warning"; fi
