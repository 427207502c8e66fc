#!/bin/bash
# Faults: a dead supervisor, a log that cannot be written, a
# command that ignores SIGTERM, argv at ARG_MAX, 4095-byte paths, bytes
# that are not UTF-8.  Each: no crash, no hang, no lost record (or a loud
# failure), the right exit status.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

# Every line of the log is JSON (a partial line is a lost record).
log_is_json() {
	"$PYTHON" -c '
import json, sys
n = 0
for line in open(sys.argv[1], "rb"):
    json.loads(line.decode("utf-8")); n += 1
print(n)' "$1" 2>&1
}

# --- SIGKILL to the supervisor: every tracee dies, nothing runs on ------------
rm -f "$ROOT/ready" "$ROOT/late" "$ROOT/pids"
at_bg -- sh -c 'sleep 30 & echo "$$ $!" > pids; echo ready > ready; sleep 2; echo late > late'
if wait_file "$ROOT/ready" 10; then
	kill -KILL "$AT_PID"
	wait_exit "$AT_PID" 10
	assert_eq "SIGKILL to agenttrace: it dies of it (137)" 137 $?
	sleep 3
	assert_file_absent "SIGKILL: the command did not go on unsupervised (no marker)" "$ROOT/late"
	alive=
	for p in $(cat "$ROOT/pids"); do
		st=$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)
		[ -n "$st" ] && [ "$st" != Z ] && alive="$alive $p"
	done
	assert_eq "SIGKILL: every tracee is dead (the command and its child)" "" "$alive"
	n=$(log_is_json "$LOG")
	assert_match "SIGKILL: the log holds whole JSON lines only" "^[0-9]+$" "$n"
else
	not_ok "SIGKILL: the command did not start" "$(cat "$ERR")"
fi

# --- the log cannot be written ---------------------------------------------------
# A full disk: /dev/full takes the open and fails every write (ENOSPC).
(cd "$ROOT" && "$AGENTTRACE" --log /dev/full -- "$TRY" open-write "$HOME/.bashrc") >"$OUT" 2>"$ERR"
st=$?
assert_eq "log on a full disk: agenttrace exits 125" 125 $st
assert_match "log on a full disk: says records are lost" "cannot write the log /dev/full.*records are being lost" "$(cat "$ERR")"
assert_file_absent "log on a full disk: the denial still held" "$HOME/.bashrc"

if [ "$(id -u)" = 0 ] && have unshare; then
	# A small tmpfs that fills up mid-run, in a private mount namespace.
	mkdir -p "$SANDBOX/small" "$SANDBOX/ro"
	(cd "$ROOT" && unshare -m sh -c '
		mount -t tmpfs -o size=64k tmpfs "$1" || exit 99
		"$2" --log "$1/log.jsonl" -- sh -c "i=0; while [ \$i -lt 400 ]; do \"\$0\" open-write \"\$HOME/.bashrc\" 2>/dev/null; i=\$((i+1)); done; exit 0" "$3"
		st=$?
		ls -l "$1/log.jsonl" >&2
		exit $st' sh "$SANDBOX/small" "$AGENTTRACE" "$TRY") >"$OUT" 2>"$ERR"
	st=$?
	assert_eq "log fills a 64k tmpfs: agenttrace exits 125" 125 $st
	assert_match "log fills a 64k tmpfs: said loudly, once" "records are being lost" "$(cat "$ERR")"
	assert_eq "log fills a 64k tmpfs: the warning is printed once" 1 "$(grep -c 'records are being lost' "$ERR")"

	# A read-only file system: refused before the command runs.
	(cd "$ROOT" && unshare -m sh -c '
		mount -t tmpfs -o size=64k tmpfs "$1" || exit 99
		mount -o remount,ro "$1" || exit 99
		"$2" --log "$1/log.jsonl" -- sh -c "echo ran > ran"' sh "$SANDBOX/ro" "$AGENTTRACE") >"$OUT" 2>"$ERR"
	assert_eq "log on a read-only fs: 125" 125 $?
	assert_match "log on a read-only fs: says why" "cannot open the log .*Read-only file system" "$(cat "$ERR")"
	assert_file_absent "log on a read-only fs: the command did not run" "$ROOT/ran"
else
	skip "log on a small tmpfs / read-only fs" "needs root and unshare"
fi

# --- SIGTERM ignored at --timeout: escalation to SIGKILL, recorded --------------------
at --timeout 1 -- "$TRY" ignore-term 30 >"$OUT" 2>"$ERR"
st=$?
assert_eq "ignores SIGTERM at --timeout: killed (137)" 137 $st
assert_rec "ignores SIGTERM: limit.timeout record" "kind == 'limit' and rule_id == 'limit.timeout'"
assert_rec "ignores SIGTERM: the SIGKILL escalation is recorded" "kind == 'limit' and rule_id == 'limit.timeout-kill'"
assert_rec "ignores SIGTERM: summary with signal 9" "event == 'summary' and signal == 9"

# --- argv at ARG_MAX -------------------------------------------------------------
cat >"$ROOT/bigargv.py" <<'PY'
import os, sys
# The largest argv of 1000-byte strings that execve takes here.
lo, hi = 1, 4096
while lo < hi:
    mid = (lo + hi + 1) // 2
    pid = os.fork()
    if pid == 0:
        try:
            os.execv("/bin/true", ["true"] + ["x" * 999] * mid)
        except OSError:
            os._exit(7)
    _, st = os.waitpid(pid, 0)
    if os.WIFEXITED(st) and os.WEXITSTATUS(st) == 0:
        lo = mid
    else:
        hi = mid - 1
print(lo)
os.execv("/bin/sh", ["sh", "-c", 'echo "$#"', "sh"] + ["x" * 999] * (lo - 3))
PY
at --record -- "$PYTHON" bigargv.py >"$OUT" 2>"$ERR"
assert_eq "argv at ARG_MAX: exit 0" 0 $?
n=$(head -n1 "$OUT")
diag "largest argv: $n strings of 1000 bytes"
if [ "${n:-0}" -gt 1000 ]; then ok "argv at ARG_MAX: $n strings of 1000 bytes ran"; else not_ok "argv at ARG_MAX: ran" "$(cat "$OUT" "$ERR")"; fi
assert_eq "argv at ARG_MAX: the last program saw them all" "$((n - 3))" "$(sed -n 2p "$OUT")"
assert_rec "argv at ARG_MAX: exec record of the big argv (capped)" "event == 'exec' and pre(exe, '/usr/bin/dash') and len(argv) <= 257"
assert_match "argv at ARG_MAX: the log is JSON" "^[0-9]+$" "$(log_is_json "$LOG")"

# --- 4095-byte paths ---------------------------------------------------------------
cat >"$ROOT/longpath.py" <<'PY'
import errno, os, sys
root = os.getcwd()
want = 4095                        # PATH_MAX - 1: the longest the kernel takes
comps, cur = [], root
while len(cur) + 1 + 200 + 1 + 10 < want:
    comps.append("d" * 200)
    cur = cur + "/" + "d" * 200
os.makedirs(cur)
leaf = "f" * (want - len(cur) - 1)
path = cur + "/" + leaf
assert len(path) == want, len(path)
with open(path, "w") as f:
    f.write("ok")
print("4095 ok")
try:
    open(path + "g", "w")
    print("4096 opened")
except OSError as e:
    print("4096", errno.errorcode[e.errno])
# Relative to a deep cwd: short to the kernel, over PATH_MAX resolved.
os.chdir(cur)
try:
    open("r" * 200, "w").close()
    print("deep-relative ok")
except OSError as e:
    print("deep-relative", errno.errorcode[e.errno])
PY
at -- "$PYTHON" longpath.py >"$OUT" 2>"$ERR"
assert_eq "4095-byte paths: exit 0" 0 $?
assert_eq "4095-byte path: written" "4095 ok" "$(sed -n 1p "$OUT")"
assert_eq "4096-byte path: the kernel's ENAMETOOLONG" "4096 ENAMETOOLONG" "$(sed -n 2p "$OUT")"
deep=$(sed -n 3p "$OUT")
# The supervisor cannot judge a path longer than PATH_MAX: it fails
# closed with the kernel's own errno and a record.
case $deep in
"deep-relative ok") ok "deep relative path: allowed" ;;
"deep-relative ENAMETOOLONG")
	ok "deep relative path: refused (fails closed)"
	assert_rec "deep relative path: its record" "event == 'alert' and action == 'deny'" ;;
*) not_ok "deep relative path: allowed or refused" "$deep" ;;
esac
assert_rec "4095-byte paths: summary" "event == 'summary' and exit_code == 0"

# --- bytes that are not UTF-8 --------------------------------------------------------
bad=$(printf 'bad-\377\376-\303(')
X_BAD=$(printf '\377') at --record -- "$TRY" open-write "$HOME/$bad" >"$OUT" 2>"$ERR"
assert_eq "non-UTF-8 path outside ROOT: denied" "$EACCES" $?
assert_rec "non-UTF-8 path: every byte kept as \\xHH" "event == 'alert' and path == '$HOME/bad-\\\\xFF\\\\xFE-\\\\xC3('"
at --record -- sh -c 'echo x > "$1"' sh "$ROOT/$bad"
assert_eq "non-UTF-8 path in ROOT: allowed" 0 $?
assert_file_present "non-UTF-8 path in ROOT: written" "$ROOT/$bad"
assert_rec "non-UTF-8 argv: escaped in the exec record" "event == 'exec' and any('\\\\xFF' in a for a in argv)"
assert_match "non-UTF-8: the log is JSON (UTF-8)" "^[0-9]+$" "$(log_is_json "$LOG")"
