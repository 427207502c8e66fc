#!/bin/bash
# The engine (agenttrace(1) --engine): seccomp user notification or ptrace
# stops, chosen by the kernel's features, said by -v and the summary; the
# same decisions and records under either; the listener never reaches the
# command; a denial unwound for its backtrace is recorded once.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

# The choice of this suite's run (the test knob) must not decide here.
unset AGENTTRACE_TEST_ENGINE

bashrc=$HOME/.bashrc

at_q --engine sometimes -- true
assert_eq "--engine sometimes: exit 125" 125 $?
assert_match "--engine sometimes: says what is valid" "auto, notify or ptrace" "$(cat "$ERR")"

AGENTTRACE_TEST_NOTIFY=0 at_q --engine notify -- true
assert_eq "--engine notify where the kernel lacks it: exit 125" 125 $?
assert_match "--engine notify where the kernel lacks it: says why" "no seccomp user notification" "$(cat "$ERR")"

# auto: notify where it can make a racing caller's calls itself (ADDFD,
# Linux 5.14) and no signal ends one it is making (the killable wait,
# 5.19); the sync wake-up (6.6) only makes it cheaper.
if at_q --engine notify -- true; then
	AGENTTRACE_TEST_NOTIFY_SYNC=0 at_q -v -- true
	assert_rec "auto without the sync wake-up: the notify engine" "event == 'summary' and engine == 'notify'"
	assert_match "auto without the sync wake-up: -v says so" "engine notify: .*no sync wake-up" "$(cat "$ERR")"
fi
AGENTTRACE_TEST_NOTIFY_KILLABLE=0 at_q -- true
assert_rec "auto without the killable wait: the ptrace engine" "event == 'summary' and engine == 'ptrace'"
AGENTTRACE_TEST_NOTIFY_ADDFD=0 at_q -- true
assert_rec "auto without ADDFD: the ptrace engine" "event == 'summary' and engine == 'ptrace'"
AGENTTRACE_TEST_NOTIFY=0 at_q -- true
assert_rec "auto without user notification: the ptrace engine" "event == 'summary' and engine == 'ptrace'"

notify_ok=1
at_q --engine notify -- true || notify_ok=0
if [ "$notify_ok" = 0 ]; then
	skip "the notify engine" "this kernel has no seccomp user notification: $(cat "$ERR")"
fi

for E in ptrace notify; do
	[ "$E" = notify ] && [ "$notify_ok" = 0 ] && continue
	rm -f "$bashrc"
	at_q -v --engine "$E" -- "$TRY" open-write "$bashrc"
	assert_eq "$E: the denied open fails with EACCES" "$EACCES" $?
	assert_file_absent "$E: ~/.bashrc not written" "$bashrc"
	assert_match "$E: -v says the engine" "engine $E" "$(cat "$ERR")"
	assert_rec "$E: the summary says the engine" "event == 'summary' and engine == '$E'"
	# Under notify the caller is interrupted to be unwound: its call
	# comes again, and is answered without a second record.
	assert_eq "$E: one denial record" 1 "$(rec_count "event == 'alert' and path == '$bashrc'")"
	assert_rec "$E: the denial has a backtrace" "event == 'alert' and path == '$bashrc' and backtrace"
	assert_rec "$E: the summary counts one denial" "event == 'summary' and denials == 1"

	at_q --engine "$E" -- sh -c 'echo in > a.txt; cat a.txt; exit 3'
	assert_eq "$E: an allowed write and the command's status" 3 $?
	assert_eq "$E: the command's output" in "$(cat "$OUT")"

	# The listener is agenttrace's alone: a process holding it could
	# answer its own calls.
	at_q --engine "$E" -- sh -c 'ls -l /proc/self/fd/ 2>/dev/null; for f in /proc/self/fd/*; do readlink "$f"; done'
	if grep -q "seccomp" "$OUT"; then
		not_ok "$E: the command holds no seccomp listener" "$(cat "$OUT")"
	else
		ok "$E: the command holds no seccomp listener"
	fi

	# Threads, forks and execs as natively.
	at_q --engine "$E" -- "$PYTHON" -c '
import os, threading, subprocess
def w(i):
    with open("t%d" % i, "w") as f:
        f.write("x")
ts = [threading.Thread(target=w, args=(i,)) for i in range(8)]
[t.start() for t in ts]; [t.join() for t in ts]
print(subprocess.run(["sh", "-c", "cat t0 t7; echo"], capture_output=True, text=True).stdout.strip())
'
	assert_eq "$E: threads and a subprocess" "xx" "$(cat "$OUT")"
	rm -f "$ROOT"/t[0-9]
done

# A dead supervisor leaves nothing running unsupervised: the command dies
# with it (PTRACE_O_EXITKILL), and its calls fail meanwhile.
if [ "$notify_ok" = 1 ]; then
	at_bg --engine notify -- "$TRY" sleep 30
	for _ in $(seq 50); do
		child=$(pgrep -P "$AT_PID" -f "try-syscall sleep" | head -n 1)
		[ -n "$child" ] && break
		sleep 0.1
	done
	kill -9 "$AT_PID"
	gone=0
	for _ in $(seq 50); do
		if [ -z "${child:-}" ] || ! kill -0 "$child" 2>/dev/null; then gone=1; break; fi
		sleep 0.1
	done
	assert_eq "notify: the command dies with its supervisor" 1 "$gone"
fi
