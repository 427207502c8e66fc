#!/bin/bash
# Signals stay in the session (doc/SYSCALLS.md "Signals"): kill, tkill,
# tgkill, rt_sigqueueinfo, pidfd_send_signal, pidfd_open and pidfd_getfd
# reach only the session's own processes, and so do prlimit with new
# limits and process_vm_readv; the supervisor can be neither
# signalled nor stolen from; kill(-1) reaches the session only, and a
# process group's outside members are spared, and a child that has
# exited but is not yet reaped is still the session's.  The processes "outside"
# are the test's own; kill(-1) runs only inside a PID namespace of the
# test's, so that a failure could not reach the machine.  The preload
# backend does not see signals (agenttrace(1)): shown happening.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

ESRCH=3
out_expr="event == 'alert' and action == 'deny' and kind == 'syscall' and rule_id == 'syscall.signal-outside'"
pidfd_expr="event == 'alert' and action == 'deny' and kind == 'syscall' and rule_id == 'syscall.pidfd-outside'"

# outsider: a process of the test's, outside any session.
new_outsider() {
	sleep 300 &
	OUTSIDER=$!
	bg_track "$OUTSIDER"
}
alive() {
	kill -0 "$1" 2>/dev/null
}

# refused DESC EXPR -- CMD...: EPERM, a record matching EXPR, the outsider lives.
refused() {
	local desc=$1 expr=$2 st
	shift 2
	[ "$1" = -- ] && shift
	at -q -- "$@" >"$OUT" 2>"$ERR"
	st=$?
	assert_eq "$desc: program sees errno $EPERM" "$EPERM" "$st"
	[ "$st" = "$EPERM" ] || diag "stderr:" "$(head -c 2000 "$ERR")"
	assert_rec "$desc: record" "$expr"
	if alive "$OUTSIDER"; then ok "$desc: the outsider lives"; else not_ok "$desc: the outsider lives"; new_outsider; fi
}

allowed() {
	local desc=$1 want=$2 st
	shift 2
	[ "$1" = -- ] && shift
	at -q -- "$@" >"$OUT" 2>"$ERR"
	st=$?
	assert_eq "$desc: exit $want" "$want" "$st"
	[ "$st" = "$want" ] || diag "stderr:" "$(head -c 2000 "$ERR")"
	assert_no_alert "$desc: no alert"
}

new_outsider
refused "kill -9 of a process outside" "$out_expr and syscall == 'kill'" -- "$TRY" signal kill "$OUTSIDER" 9
refused "kill(1) -9 of a process outside" "$out_expr" -- kill -9 "$OUTSIDER"
refused "tkill of a thread outside" "$out_expr and syscall == 'tkill'" -- "$TRY" signal tkill "$OUTSIDER" 9
refused "tgkill of a thread outside" "$out_expr and syscall == 'tgkill'" -- "$TRY" signal tgkill "$OUTSIDER" "$OUTSIDER" 9
refused "rt_sigqueueinfo to a process outside" "$out_expr and syscall == 'rt_sigqueueinfo'" -- "$TRY" signal sigqueue "$OUTSIDER" 9
refused "pidfd_open of a process outside" "$pidfd_expr and syscall == 'pidfd_open'" -- "$TRY" pidfd-open "$OUTSIDER"
refused "kill of the supervisor (the command's parent)" "$out_expr" -- sh -c 'exec kill -9 $PPID'
assert_rec "kill of the supervisor: the session still ends with its summary" "event == 'summary'"
refused "pidfd_getfd from the supervisor (its log)" "$pidfd_expr and syscall == 'pidfd_open'" -- "$TRY" pidfd-getfd parent 3

# Resource limits and memory: a command running as agenttrace's user may,
# by the kernel's rules, set agenttrace's CPU or file-size limit (killing
# it before its records and end-of-session work) and read its memory.
prl_expr="event == 'alert' and action == 'deny' and kind == 'syscall' and rule_id == 'syscall.prlimit-outside'"
vmr_expr="event == 'alert' and action == 'deny' and kind == 'syscall' and rule_id == 'syscall.vm-read-outside'"
refused "prlimit of the supervisor (new limits)" "$prl_expr and syscall == 'prlimit64'" -- "$TRY" prlimit-same parent
refused "prlimit of a process outside" "$prl_expr" -- "$TRY" prlimit-same "$OUTSIDER"
at -q -- sh -c 'prlimit --pid $PPID --cpu=1:1; st=$?; cat /proc/$PPID/limits; exit $st' >"$OUT" 2>"$ERR"
assert_ne "prlimit(1) --cpu=1:1 of the supervisor: fails" 0 $?
assert_match "prlimit(1) --cpu=1:1 of the supervisor: its CPU limit stays unlimited" \
	"^Max cpu time +unlimited +unlimited" "$(cat "$OUT")"
assert_rec "prlimit(1) of the supervisor: recorded" "$prl_expr"
assert_rec "prlimit(1) of the supervisor: the session ends with its summary" "event == 'summary'"
allowed "prlimit of the supervisor, reading only" 0 -- "$TRY" prlimit-get parent
allowed "prlimit of its own process, by its pid" 0 -- "$TRY" prlimit-same self
allowed "prlimit of a child of its own" 0 -- "$TRY" prlimit-same child
refused "process_vm_readv of the supervisor" "$vmr_expr and syscall == 'process_vm_readv'" -- \
	"$TRY" process_vm_readv parent
refused "process_vm_readv of a process outside" "$vmr_expr" -- "$TRY" process_vm_readv "$OUTSIDER"
allowed "process_vm_readv of a child of its own" 0 -- "$TRY" process_vm_readv child
allowed "kill -0 of a process outside (a probe)" 0 -- "$TRY" signal kill "$OUTSIDER" 0
dead=$(sh -c 'echo $$')
allowed "kill of a pid that no longer exists: ESRCH, no record" "$ESRCH" -- "$TRY" signal kill "$dead" 9
alive "$OUTSIDER" && ok "the outsider lived through every attempt" || not_ok "the outsider lived through every attempt"

# A pidfd passed in from outside.
pidfd_run() {
	"$PYTHON" - "$AGENTTRACE" "$LOG" "$TRY" "$OUTSIDER" "$@" <<'PY'
import os, subprocess, sys
at, log, try_, pid = sys.argv[1:5]
fd = os.pidfd_open(int(pid))
args = [a.replace("FD", str(fd)) for a in sys.argv[5:]]
sys.exit(subprocess.run([at, "-q", "--log", log, "--", try_] + args, pass_fds=[fd]).returncode)
PY
}
rm -f "$LOG"
pidfd_run pidfd-signal FD 9 >"$OUT" 2>"$ERR"
assert_eq "pidfd_send_signal on an inherited pidfd of a process outside: EPERM" "$EPERM" $?
assert_rec "inherited pidfd signal: record" "$out_expr and syscall == 'pidfd_send_signal'"
rm -f "$LOG"
pidfd_run pidfd-getfd FD 1 >"$OUT" 2>"$ERR"
assert_eq "pidfd_getfd on an inherited pidfd of a process outside: EPERM" "$EPERM" $?
assert_rec "inherited pidfd getfd: record" "$pidfd_expr and syscall == 'pidfd_getfd'"
alive "$OUTSIDER" && ok "inherited pidfds: the outsider lives" || not_ok "inherited pidfds: the outsider lives"

# --- the session's own processes --------------------------------------------
allowed "kill of an own child" 143 -- sh -c 'sleep 30 & kill $!; wait $!'
allowed "a pidfd of an own child: open, signal" 0 -- "$PYTHON" -c '
import os, signal, subprocess
p = subprocess.Popen(["sleep", "30"])
fd = os.pidfd_open(p.pid)
signal.pidfd_send_signal(fd, signal.SIGTERM)
assert p.wait() == -signal.SIGTERM'
allowed "tgkill of an own thread (raise)" 0 -- "$PYTHON" -c '
import signal, threading
got = []
signal.signal(signal.SIGUSR1, lambda *a: got.append(1))
signal.pthread_kill(threading.get_ident(), signal.SIGUSR1)
assert got'
cat >"$ROOT/pk.sh" <<'SH'
sleep 4321 &
pkill -f 'sleep 4321'
wait $!
[ $? = 143 ]
SH
allowed "pkill -f of an own process" 0 -- sh "$ROOT/pk.sh"

# kill 0: the script's job control, in a group of agenttrace's own (as an
# interactive shell starts a job): the session's members get the signal,
# agenttrace is spared without a record.
cat >"$ROOT/job.sh" <<'SH'
sleep 30 & a=$!
sleep 31 & b=$!
# The shell's own SIGTERM runs this; exit 7: both jobs were killed by it.
trap 'wait $a; sa=$?; wait $b; sb=$?; [ $sa = 143 ] && [ $sb = 143 ] && exit 7; exit 8' TERM
kill 0
sleep 20
SH
rm -f "$LOG"
(cd "$ROOT" && timeout -k 5 "$AT_TIMEOUT" setsid -w "$AGENTTRACE" -q --log "$LOG" -- sh "$ROOT/job.sh") >"$OUT" 2>"$ERR"
assert_eq "kill 0 in a script (agenttrace's own group): the script and its jobs got it (7)" 7 $?
assert_no_alert "kill 0 in agenttrace's own group: no alert"
assert_rec "kill 0: the session ends with its summary" "event == 'summary' and exit_code == 7"

# The same where the group holds a process outside the session (the
# test's timeout(1)): spared, and recorded.
at -q -- sh "$ROOT/job.sh" >"$OUT" 2>"$ERR"
assert_eq "kill 0 with an outsider in the group: the jobs got it, the outsider (timeout) lived" 7 $?
assert_rec "kill 0 with an outsider: record" "$out_expr and syscall == 'kill' and errno is None"
# A process that left the group signals it: none of its members is the
# session's (agenttrace and the test's timeout(1)).
at -q -- sh -c 'g=$(ps -o pgid= $$ | tr -d " "); exec setsid kill -TERM -- -$g' >"$OUT" 2>"$ERR"
assert_eq "kill of agenttrace's group from outside it: kill(1) fails (1)" 1 $?
assert_rec "kill of agenttrace's group: record" "$out_expr and errno == 'EPERM'"

# kill -1, inside a PID namespace of the test's: the session's processes
# get it (the caller's own parent too, as kill(2) does it), the supervisor
# and an outsider live on and the log ends with its summary.
if have unshare && unshare -pf --mount-proc true 2>/dev/null; then
	# kill_all SIG SCRIPT
	kill_all() {
		rm -f "$LOG"
		unshare -pf --mount-proc sh -c '
			sleep 300 & out=$!
			cd "$ROOT" && timeout -k 5 "$AT_TIMEOUT" "$AGENTTRACE" -q --log "$LOG" -- sh -c "$1" "$TRY" "$2"
			st=$?
			kill -0 $out && echo outsider-alive
			kill $out
			exit $st' sh "$2" "$1" >"$OUT" 2>"$ERR"
	}
	kill_all 9 'sleep 50 & sleep 51 & "$0" kill-all "$1"; echo rc=$?; wait'
	assert_eq "kill -9 -1: the command's shell is killed with its session (137)" 137 $?
	assert_match "kill -9 -1: the process outside the session lives" "outsider-alive" "$(cat "$OUT")"
	assert_rec "kill -9 -1: record" "$out_expr and syscall == 'kill'"
	assert_rec "kill -9 -1: the supervisor lived: the log ends with the summary" "event == 'summary' and signal == 9"
	# The job must have undone the inherited "ignore TERM" (it is sleep
	# by then) before the signal comes.
	kill_all 15 'trap "" TERM; sleep 50 & a=$!; sleep 51 & b=$!; (trap - TERM; exec sleep 52) & c=$!
		until [ "$(cat /proc/$c/comm 2>/dev/null)" = sleep ]; do sleep 0.05; done
		"$0" kill-all "$1"; echo rc=$?; wait $c; echo c=$?'
	assert_eq "kill -TERM -1: the shell (ignoring TERM) goes on and exits 0" 0 $?
	assert_match "kill -TERM -1: kill returned 0" "rc=0" "$(cat "$OUT")"
	assert_match "kill -TERM -1: the job got it" "c=143" "$(cat "$OUT")"
	assert_match "kill -TERM -1: the process outside the session lives" "outsider-alive" "$(cat "$OUT")"
	assert_rec "kill -TERM -1: the log ends with the summary" "event == 'summary' and exit_code == 0"
else
	skip "kill -1" "unshare -p unavailable"
fi

# --- a child that has exited, not yet waited for ------------------------------
# The supervisor sees a child's end before its parent reaps it: until then
# it is the parent's zombie, still the session's.  A runtime that spawns a
# short command and opens a pidfd of it (Codex) or signals it must see
# what it sees natively.
cat >"$ROOT/zombie.py" <<'PY'
import os, signal, subprocess, time
p = subprocess.Popen(["/bin/true"])
time.sleep(0.3)
fd = os.pidfd_open(p.pid)
signal.pidfd_send_signal(fd, signal.SIGTERM)
os.close(fd)
os.kill(p.pid, signal.SIGTERM)
print("zombie", p.wait())
PY
at_q -- "$PYTHON" "$ROOT/zombie.py"
assert_eq "a zombie child: pidfd_open, pidfd_send_signal and kill as natively" \
	"$(cd "$ROOT" && "$PYTHON" zombie.py 2>&1)" "$(cat "$OUT" "$ERR" | grep -v '^agenttrace: ')"
assert_no_alert "a zombie child: no alert record"

# --- the preload backend does not see signals -------------------------------
backend_use preload
new_outsider
bk_escapes "kill -9 of a process outside" 0 -- kill -9 "$OUTSIDER"
wait "$OUTSIDER" 2>/dev/null
alive "$OUTSIDER" && not_ok "${BK}the outsider was killed (known limit)" || ok "${BK}the outsider was killed (known limit)"
assert_rec "${BK}its summary says signals are not judged" "event == 'summary' and 'signals, pidfds' in note"
