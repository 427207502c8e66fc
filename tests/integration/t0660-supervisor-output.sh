#!/bin/bash
# What a command could do to agenttrace's own output and memory, not by a
# call agenttrace judges but by what it shares with it (doc/THREAT-MODEL.md,
# "The supervisor's limits, memory and output"):
#  - set O_NONBLOCK on the stderr pipe it shares with agenttrace and keep
#    the pipe full: agenttrace's lines, the only records without --log,
#    failed with EAGAIN and were dropped;
#  - take the terminal's foreground and set TOSTOP: agenttrace's lines
#    failed with EIO (or stopped agenttrace, in a group not orphaned);
#  - read the memory of a supervisor of its own user (/proc/PID/environ,
#    where the environment the policy withheld from it is);
#  - make a dependency manifest unreadable, so that the end's snapshot
#    called it removed.
# An attacker helper won each, every run.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

mkdir -p "$HOME/.ssh"
echo key >"$HOME/.ssh/id_rsa"

# --- a shared stderr made non-blocking ------------------------------------
cat >"$ROOT/bin/nonblock.py" <<'PY'
import fcntl, os
fcntl.fcntl(2, fcntl.F_SETFL, fcntl.fcntl(2, fcntl.F_GETFL) | os.O_NONBLOCK)
try:
    while True:
        os.write(2, b"x" * 4096)
except BlockingIOError:
    pass
for _ in range(3):
    try:
        open(os.path.expanduser("~/.ssh/id_rsa"))
    except OSError:
        pass
PY
# The reader starts late: the pipe is full when agenttrace writes.
(cd "$ROOT" && exec timeout -k 5 "$AT_TIMEOUT" "$AGENTTRACE" -- "$PYTHON" bin/nonblock.py) 2>&1 |
	(sleep 2; cat) >"$OUT"
assert_eq "stderr set non-blocking and kept full by the command: every denial's line arrives" 3 \
	"$(grep -o 'agenttrace: denied read' "$OUT" | wc -l)"
assert_match "stderr set non-blocking: the summary line arrives" "agenttrace: 3 denied" \
	"$(tr -d x <"$OUT")"

# --- the terminal taken, TOSTOP set -----------------------------------------
cat >"$ROOT/bin/tostop.py" <<'PY'
import os, signal, termios
signal.signal(signal.SIGTTOU, signal.SIG_IGN)
fd = os.open("/dev/tty", os.O_RDWR)
os.setpgid(0, 0)
os.tcsetpgrp(fd, os.getpgrp())
a = termios.tcgetattr(fd)
a[3] |= termios.TOSTOP
termios.tcsetattr(fd, termios.TCSANOW, a)
try:
    open(os.path.expanduser("~/.ssh/id_rsa"))
except OSError as e:
    print("cmd:", e.strerror, flush=True)
PY
# pty_run CMD...: CMD on a terminal of its own; what the terminal showed.
pty_run() {
	"$PYTHON" - "$@" <<'PY'
import os, pty, select, sys, time
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
out, end = b"", time.time() + 30
while time.time() < end:
    r, _, _ = select.select([fd], [], [], 0.5)
    if r:
        try:
            b = os.read(fd, 4096)
        except OSError:
            break
        if not b:
            break
        out += b
    elif os.waitpid(pid, os.WNOHANG)[0]:
        break
sys.stdout.write(out.decode(errors="replace"))
PY
}
(cd "$ROOT" && pty_run "$AGENTTRACE" -- "$PYTHON" bin/tostop.py) >"$OUT" 2>"$ERR"
assert_match "terminal taken with TOSTOP: the command was refused" "cmd: Permission denied" "$(cat "$OUT")"
assert_match "terminal taken with TOSTOP: the denial's line reaches the terminal" \
	"agenttrace: denied read .*id_rsa" "$(cat "$OUT")"
assert_match "terminal taken with TOSTOP: the summary line reaches the terminal" \
	"agenttrace: 1 denied" "$(cat "$OUT")"

# --- the terminal left concealing ---------------------------------------------
# The command is refused, then leaves the terminal concealing text, black
# on black, so that agenttrace's summary would be drawn invisibly: each of
# agenttrace's lines on a terminal resets the attributes first.
(cd "$ROOT" && pty_run "$AGENTTRACE" -- sh -c \
	'cat ~/.ssh/id_rsa 2>/dev/null; printf "\033[8m\033[30;40m"') >"$OUT" 2>"$ERR"
assert_eq "a terminal left concealing: the summary is drawn with the attributes reset" \
	ok "$("$PYTHON" - "$OUT" <<'PY'
import sys
out = open(sys.argv[1], encoding="utf-8", errors="replace").read()
at = out.find("agenttrace: 1 denied")
conceal = out.rfind("\x1b[8m", 0, at)
print("ok" if at >= 0 and conceal >= 0 and out.rfind("\x1b[0m", conceal, at) > conceal else
      "not reset: %r" % out[max(0, conceal - 20):at + 40])
PY
)"

# --- agenttrace as a user of its own ----------------------------------------
U=54321
if [ "$(id -u)" != 0 ] || ! have setpriv; then
	skip "a supervisor that is not root" "needs root and setpriv to become another user"
	exit 0
fi
UB=$SANDBOX/u
mkdir -p "$UB/root/sub" "$UB/home" "$UB/tmp"
echo '{"name": "p", "dependencies": {"left-pad": "1.3.0"}}' >"$UB/root/sub/package.json"
chown -R "$U:$U" "$UB"
chmod 0755 "$SANDBOX"
as_user() {
	setpriv --reuid "$U" --regid "$U" --clear-groups env HOME="$UB/home" TMPDIR="$UB/tmp" "$@"
}

# Its memory: the environment it holds, which the strict policy withholds
# from the command, is no process's of its user to read.
(cd "$UB/root" && as_user env MY_API_KEY=secret-4242 timeout -k 5 "$AT_TIMEOUT" "$AGENTTRACE" \
	--policy strict --log "$UB/log.jsonl" -- sh -c 'echo $PPID >pids; echo $$ >>pids; sleep 3') \
	>"$OUT" 2>"$ERR" &
bg_track $!
for _ in $(seq 100); do
	[ "$(wc -l <"$UB/root/pids" 2>/dev/null)" = 2 ] && break
	sleep 0.1
done
sup=$(sed -n 1p "$UB/root/pids" 2>/dev/null)
cmd=$(sed -n 2p "$UB/root/pids" 2>/dev/null)
if [ -n "$sup" ] && [ -n "$cmd" ]; then
	as_user cat "/proc/$cmd/environ" >/dev/null 2>&1
	assert_eq "its user reads the command's environment (a dumpable program)" 0 $?
	as_user cat "/proc/$sup/environ" >"$SANDBOX/environ" 2>/dev/null
	assert_ne "its user cannot read agenttrace's own environment" 0 $?
	if grep -aq secret-4242 "$SANDBOX/environ"; then
		not_ok "agenttrace's withheld variable is not read"
	else
		ok "agenttrace's withheld variable is not read"
	fi
else
	not_ok "its user cannot read agenttrace's own environment" "no pids: $(head -c 500 "$ERR")"
fi
wait

# A manifest the command makes unreadable is not "removed".
(cd "$UB/root" && as_user timeout -k 5 "$AT_TIMEOUT" "$AGENTTRACE" --log "$UB/log.jsonl" -- \
	chmod 000 sub) >"$OUT" 2>"$ERR"
assert_eq "a directory made unreadable: the command runs" 0 $?
REC_LOG=$UB/log.jsonl assert_rec "an unreadable manifest: the dependency snapshot says it is incomplete" \
	"event == 'summary' and dependencies['truncated'] and not any(f['status'] == 'removed' for f in dependencies['files'])"
chmod 0755 "$UB/root/sub"
