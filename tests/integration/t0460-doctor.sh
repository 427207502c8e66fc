#!/bin/bash
# agenttrace --doctor (agenttrace(1), DOCTOR): the kernel features this
# machine has and what a session here uses, from the probes a session
# uses itself: what it says matches what a session does, the test knobs
# that bend the probes bend it, and it exits 0.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

doctor() { "$AGENTTRACE" --doctor "$@" >"$OUT" 2>"$ERR"; }

doctor
assert_eq "--doctor exits 0" 0 $?
assert_eq "--doctor: nothing on stderr" "" "$(cat "$ERR")"
for line in 'seccomp user notification +(yes|no)' '  sync wake-up +(yes|no)' '  ADDFD +(yes|no)' \
	'  wait-killable +(yes|no)' 'Landlock +(ABI [0-9]+|no )' 'cgroup +(v[12], controllers: |none)' \
	'yama ptrace_scope +' 'ptrace of a child +(allowed|refused)' \
	'unprivileged user namespaces +(yes|no)' 'pidfd +(yes|no)' \
	'backend \(auto\) +' 'engine \(auto\) +(notify|ptrace)' 'Landlock backstop \(auto\) +' \
	'--max-memory, --max-cpu +for (the whole session|each process)' '--private-tmp +' '--user +'; do
	assert_match "--doctor: $line" "^  $line" "$(cat "$OUT")"
done

# What it says a session uses is what a session uses.
AGENTTRACE_TEST_ENGINE= at -- true >/dev/null 2>&1
engine=$(rec_field "event == 'summary'" engine)
landlock=$(rec_field "event == 'summary'" landlock)
assert_match "--doctor: the engine auto picks is the session's ($engine)" "engine \\(auto\\) +$engine " "$(cat "$OUT")"
if [ "$landlock" = None ]; then
	assert_match "--doctor: no Landlock backstop, as the session" "Landlock backstop \\(auto\\) +(none|not used)" "$(cat "$OUT")"
else
	assert_match "--doctor: the session's Landlock ABI $landlock" "backs the write roots \\(ABI $landlock\\)" "$(cat "$OUT")"
fi

# The knobs that pretend a kernel lacks a feature.
AGENTTRACE_TEST_NOTIFY_SYNC=0 doctor
assert_match "no sync wake-up: auto picks notify all the same" 'engine \(auto\) +notify \(seccomp user notification; no sync wake-up' "$(cat "$OUT")"
AGENTTRACE_TEST_NOTIFY_KILLABLE=0 doctor
assert_match "no killable wait: said" 'wait-killable +no ' "$(cat "$OUT")"
assert_match "no killable wait: auto picks ptrace" 'engine \(auto\) +ptrace \(seccomp stops\); --engine notify works' "$(cat "$OUT")"
AGENTTRACE_TEST_NOTIFY=0 doctor
assert_match "no user notification: said" 'seccomp user notification +no ' "$(cat "$OUT")"
assert_match "no user notification: --engine notify exits 125" 'engine \(auto\) +ptrace .*--engine notify exits 125' "$(cat "$OUT")"
AGENTTRACE_TEST_LANDLOCK_ABI=3 doctor
assert_match "Landlock ABI 3" 'Landlock +ABI 3$' "$(cat "$OUT")"
assert_match "Landlock ABI 3 backs the writes" 'Landlock backstop \(auto\) +backs the write roots \(ABI 3\)$' "$(cat "$OUT")"
AGENTTRACE_TEST_LANDLOCK_ABI=1 doctor
assert_match "Landlock ABI 1 is not used" 'Landlock backstop \(auto\) +not used: ABI 1' "$(cat "$OUT")"
AGENTTRACE_TEST_NO_CGROUP=1 doctor
assert_match "no cgroup: ceilings per process" '--max-memory, --max-cpu +for each process' "$(cat "$OUT")"

# Where ptrace is refused (here: inside a session, whose supervisor
# refuses it), auto would fall back to the preload backend.  Under ASan,
# LeakSanitizer's exit check needs ptrace, which the session refuses.
# Run from ROOT/bin: a build dir under /tmp is a temp dir, whose programs
# the default policy refuses to run.
cp "$AGENTTRACE" "$ROOT/bin/agenttrace" || exit 99
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 at -q -- "$ROOT/bin/agenttrace" --doctor >"$OUT" 2>"$ERR"
assert_eq "--doctor inside a session: exit 0" 0 $?
assert_match "--doctor inside a session: ptrace refused" 'ptrace of a child +refused' "$(cat "$OUT")"
assert_match "--doctor inside a session: the preload backend alone" 'backend \(auto\) +preload alone, bypassable' "$(cat "$OUT")"

# Usage.
"$AGENTTRACE" --doctor true >"$OUT" 2>"$ERR"
assert_eq "--doctor takes no command: 125" 125 $?
"$AGENTTRACE" --doctor --explain >"$OUT" 2>"$ERR"
assert_eq "--doctor with --explain: 125" 125 $?
