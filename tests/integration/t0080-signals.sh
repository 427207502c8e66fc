#!/bin/bash
# agenttrace(1): signals are untouched: SIGTERM/SIGINT sent to agenttrace reach
# the command, Ctrl-Z and fg work at a terminal, kill -STOP/-CONT of the
# command stop and resume it.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

# A command that says it is ready, and records the signal it got.
trapper='trap "echo $1 > got; exit $2" $1; echo ready > ready; while :; do sleep 0.1; done'

# Every case under both backends.
for B in auto preload; do
	backend_use "$B"

	for sig in TERM INT; do
		rm -f "$ROOT/got" "$ROOT/ready"
		code=7
		[ $sig = INT ] && code=8
		at_bg ${BK:+--backend "$B"} -- sh -c "$trapper" sh $sig $code
		if wait_file "$ROOT/ready" 10; then
			kill -$sig "$AT_PID"
			wait_exit "$AT_PID" 10
			assert_eq "${BK}SIG$sig to agenttrace is forwarded: the command's trap ran (exit $code)" $code $?
			assert_file_content "${BK}SIG$sig forwarded: the command saw SIG$sig" "$ROOT/got" $sig
		else
			not_ok "${BK}SIG$sig: the command did not start" "$(cat "$ERR")"
			kill -KILL "$AT_PID" 2>/dev/null
		fi
	done

	for sig in TERM:143 INT:130; do
		rm -f "$ROOT/ready"
		at_bg ${BK:+--backend "$B"} -- sh -c 'echo ready > ready; exec "$0" sleep 30' "$TRY"
		if wait_file "$ROOT/ready" 10; then
			sleep 0.3
			kill -${sig%:*} "$AT_PID"
			wait_exit "$AT_PID" 10
			assert_eq "${BK}SIG${sig%:*} to agenttrace: the command dies of it (${sig#*:})" "${sig#*:}" $?
		else
			not_ok "${BK}SIG${sig%:*}: the command did not start" "$(cat "$ERR")"
			kill -KILL "$AT_PID" 2>/dev/null
		fi
	done

	# --- kill -STOP / -CONT of the command ---------------------------------------------
	rm -f "$ROOT/pid" "$ROOT/count" "$ROOT/done"
	at_bg ${BK:+--backend "$B"} -- sh -c 'echo $$ > pid; i=0; while [ $i -lt 40 ]; do i=$((i+1)); echo $i > count; sleep 0.05; done; echo done > done'
	if wait_file "$ROOT/pid" 10 && wait_file "$ROOT/count" 10; then
		cmd=$(cat "$ROOT/pid")
		kill -STOP "$cmd"
		sleep 0.5
		c1=$(cat "$ROOT/count")
		sleep 1
		c2=$(cat "$ROOT/count")
		state=$(awk '{print $3}' "/proc/$cmd/stat" 2>/dev/null)
		assert_eq "${BK}kill -STOP: the command makes no progress" "$c1" "$c2"
		assert_match "${BK}kill -STOP: the command is stopped (state T or t)" '^[Tt]$' "$state"
		if kill -0 "$AT_PID" 2>/dev/null; then ok "${BK}kill -STOP: agenttrace waits"; else not_ok "${BK}kill -STOP: agenttrace waits"; fi
		kill -CONT "$cmd"
		wait_exit "$AT_PID" 30
		assert_eq "${BK}kill -CONT: the command resumes and finishes (exit 0)" 0 $?
		assert_file_present "${BK}kill -CONT: the command finished its work" "$ROOT/done"
		assert_eq "${BK}kill -CONT: the count went on to 40" 40 "$(cat "$ROOT/count")"
	else
		not_ok "${BK}kill -STOP/-CONT: the command did not start" "$(cat "$ERR")"
		kill -KILL "$AT_PID" 2>/dev/null
	fi
done

# --- Ctrl-Z and fg at a terminal, under each backend ------------------------------
for backend in ptrace preload; do
"$PYTHON" - "$AGENTTRACE" "$LOG" "$backend" >"$SANDBOX/pty.out" 2>&1 <<'PY'
import os, pty, select, sys, time
at, log, backend = sys.argv[1], sys.argv[2], sys.argv[3]
pid, fd = pty.fork()
if pid == 0:
    os.execvp("bash", ["bash", "--norc", "--noprofile", "-i"])
buf = b""
def expect(pat, timeout):
    global buf
    end = time.time() + timeout
    while pat not in buf and time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.1)
        if r:
            try:
                data = os.read(fd, 4096)
            except OSError:
                break
            if not data:
                break
            buf += data
    return pat in buf
def send(s):
    os.write(fd, s)
# 'PR''OMPT> ': the echoed input never contains what we wait for.
send(b"PS1='PR''OMPT> '\n")
expect(b"PROMPT> ", 10)
buf = b""
send(("'%s' --backend %s --log '%s' -- sh -c 'sleep 1; for i in 1 2 3 4 5 6 7 8 9 10; do sleep 0.1; done; echo FIN''ISHED'\n"
      % (at, backend, log)).encode())
time.sleep(0.6)
send(b"\x1a")
print("stopped", "yes" if expect(b"Stopped", 10) else "no")
time.sleep(3)
print("frozen", "no" if b"FINISHED" in buf else "yes")
buf = b""
send(b"fg\n")
print("finished", "yes" if expect(b"FINISHED", 15) else "no")
expect(b"PROMPT> ", 5)
buf = b""
send(b"echo R''C=$?\n")
expect(b"RC=", 5)
expect(b"\n", 2)
line = buf[buf.find(b"RC="):].split(b"\r")[0].split(b"\n")[0]
print("rc", line.decode(errors="replace"))
send(b"exit\n")
time.sleep(0.2)
try:
    os.kill(pid, 9)
except OSError:
    pass
os.waitpid(pid, 0)
sys.stderr.write(repr(buf[-400:]) + "\n")
PY
pty_out=$(cat "$SANDBOX/pty.out")
assert_match "$backend: Ctrl-Z: bash reports the job stopped" '^stopped yes' "$pty_out"
assert_match "$backend: Ctrl-Z: the command is frozen while stopped" '^frozen yes' "$pty_out"
assert_match "$backend: fg: the command resumes and finishes" '^finished yes' "$pty_out"
assert_match "$backend: fg: exit status 0" '^rc RC=0' "$pty_out"
grep -q 'yes$' "$SANDBOX/pty.out" || diag "$pty_out"
done
