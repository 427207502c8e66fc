#!/bin/bash
# bench/floor-tracer, the do-nothing supervisors that bench/run measures
# agenttrace against: each mode runs a real shell loop to its end, hands
# back the command's exit status, and counts what it says it counts.  The
# -x mode (ptrace at each exec alone) is also given an exec that fails,
# after which its caller stays seized, and an exec from a second thread.
. "${top_srcdir:-.}/tests/lib.sh"
floor=$top_builddir/bench/floor-tracer
[ -x "$floor" ] || skip_all "$floor not built"
set_csv=execve,execveat,open,openat,openat2,clone
loop='i=0; while [ $i -lt 20 ]; do /bin/true; i=$((i + 1)); done; exit 7'

sync_ok=1
"$floor" -s -n -e "$set_csv" -- /bin/true 2>"$SANDBOX/probe.err" || sync_ok=0

for mode in "" "-u" "-s -n" "-s -x"; do
	case $mode in
	-s*) if [ $sync_ok = 0 ]; then
		skip "floor-tracer $mode" "no sync wake-up on this kernel (Linux 6.6)"
		continue
	fi ;;
	esac
	# shellcheck disable=SC2086 # the mode's words
	timeout 60 "$floor" -c $mode -e "$set_csv" -- sh -c "$loop" 2>"$SANDBOX/err"
	assert_eq "floor-tracer ${mode:-(ptrace)}: the command's exit status" 7 $?
	assert_match "floor-tracer ${mode:-(ptrace)}: counts its stops" \
		'seccomp stops' "$(cat "$SANDBOX/err")"
done

if [ $sync_ok = 1 ]; then
	# 20 execs of /bin/true and the shell's own: 21 exec events.
	timeout 60 "$floor" -c -s -x -e "$set_csv" -- sh -c "$loop" 2>"$SANDBOX/err"
	assert_match "floor-tracer -x: one exec event per exec" \
		' 21 exec events' "$(cat "$SANDBOX/err")"

	# An exec that fails leaves its caller seized: its later signals and
	# its next exec still pass, and it ends.
	timeout 60 "$floor" -c -s -x -e "$set_csv" -- bash -c \
		'shopt -s execfail; exec /nonexistent/x 2>/dev/null
		 trap "echo got-usr1" USR1; kill -USR1 $$; exec /bin/true' \
		>"$SANDBOX/out" 2>"$SANDBOX/err"
	assert_eq "floor-tracer -x: a failed exec, a signal, an exec: exit 0" 0 $?
	assert_eq "floor-tracer -x: the signal reached the shell's handler" got-usr1 "$(cat "$SANDBOX/out")"

	# An exec from a thread other than the leader: the task seized is the
	# thread, whose exec event comes under the leader's id.
	timeout 60 "$floor" -c -s -x -e "$set_csv" -- "$TRY" thread-exec /bin/true 2>"$SANDBOX/err"
	assert_eq "floor-tracer -x: exec from a second thread: exit 0" 0 $?
fi
