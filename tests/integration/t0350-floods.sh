#!/bin/bash
# Floods: a fork bomb against --max-procs, 10,000 short processes
# (processes per second and the supervisor's peak RSS reported), 200
# threads opening files at once, a SIGCHLD storm, a chain of 100 execs,
# zombies left by the command.  No crash, no hang, no lost record.
# AGENTTRACE_SKIP_SLOW=1 runs 1,000 short processes instead of 10,000.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

# --- a fork bomb against --max-procs -------------------------------------------------
at --max-procs 40 --timeout 30 -- sh -c 'bomb() { bomb | bomb & }; bomb; sleep 1; exit 0' >"$OUT" 2>"$ERR"
st=$?
assert_eq "fork bomb under --max-procs 40: the command's status" 0 $st
assert_rec "fork bomb: limit.max-procs records" "kind == 'limit' and rule_id == 'limit.max-procs'"
assert_rec "fork bomb: the summary counts every refusal" "event == 'summary' and counts['limit']['deny'] >= 10"
assert_no_rec "fork bomb: no timeout needed" "rule_id == 'limit.timeout'"

# --- 10,000 short processes ----------------------------------------------------------
N=10000
[ "${AGENTTRACE_SKIP_SLOW:-0}" = 1 ] && N=1000
rm -f "$LOG"
t0=$(now_ms)
(cd "$ROOT" && /usr/bin/time -f '%M' -o "$SANDBOX/rss" "$AGENTTRACE" --log "$LOG" -- \
	sh -c 'i=0; while [ $i -lt '$N' ]; do /bin/true; i=$((i+1)); done; echo $i') >"$OUT" 2>"$ERR"
st=$?
el=$(( $(now_ms) - t0 ))
assert_eq "$N short processes: exit 0" 0 $st
assert_file_content "$N short processes: all ran" "$OUT" $N
assert_rec "$N short processes: summary counts them" "event == 'summary' and processes >= $N"
rate=$(( N * 1000 / (el > 0 ? el : 1) ))
# The same loop natively, a tenth as long, for the ratio (a busy machine
# is slow at fork and exec with or without agenttrace).
t1=$(now_ms)
sh -c 'i=0; while [ $i -lt '$((N / 10))' ]; do /bin/true; i=$((i+1)); done'
nel=$(( ($(now_ms) - t1) * 10 ))
diag "natively: $(( N * 1000 / (nel > 0 ? nel : 1) )) processes/s"
rss=$(tail -n1 "$SANDBOX/rss" 2>/dev/null)
diag "$N short processes: ${el} ms, ${rate} processes/s; peak RSS of agenttrace (and its largest descendant): ${rss} KiB"
# How fast is bench/'s business (tests do not assert timings): the
# diagnostics above report it, the assertions are that all ran.
if [ "${rss:-0}" -lt 65536 ]; then ok "peak RSS under 64 MiB (${rss} KiB)"; else not_ok "peak RSS under 64 MiB" "${rss} KiB"; fi

# --- 200 threads opening files at once -------------------------------------------
cat >"$ROOT/threads.py" <<'PY'
import os, sys, threading
home = os.environ["HOME"]
barrier = threading.Barrier(200)
denied = []
def work(i):
    barrier.wait()
    for j in range(5):
        with open("t%d-%d" % (i, j), "w") as f:
            f.write("x")
    try:
        open(os.path.join(home, ".bashrc"), "a")
    except PermissionError:
        denied.append(i)
ts = [threading.Thread(target=work, args=(i,)) for i in range(200)]
for t in ts: t.start()
for t in ts: t.join()
print(sum(1 for n in os.listdir(".") if n.startswith("t") and "-" in n), len(denied))
PY
at -- "$PYTHON" threads.py >"$OUT" 2>"$ERR"
assert_eq "200 threads: exit 0" 0 $?
assert_eq "200 threads: 1000 files written, 200 writes denied" "1000 200" "$(cat "$OUT")"
assert_eq "200 threads: 200 deny records, none lost" 200 "$(rec_count "event == 'alert' and action == 'deny' and path == '$HOME/.bashrc'")"
assert_file_absent "200 threads: HOME/.bashrc untouched" "$HOME/.bashrc"

# --- a SIGCHLD storm ----------------------------------------------------------------
rm -f "$ROOT/ready"
at_bg -- sh -c 'echo ready > ready; i=0; while [ $i -lt 300 ]; do (exit 0) & kill -CHLD $$; i=$((i+1)); done; wait; echo done'
if wait_file "$ROOT/ready" 10; then
	for i in $(seq 300); do kill -CHLD "$AT_PID" 2>/dev/null || break; done
	wait_exit "$AT_PID" 60
	assert_eq "SIGCHLD storm (300 children, 600 signals): exit 0" 0 $?
	assert_eq "SIGCHLD storm: the command finished" done "$(cat "$OUT")"
	assert_rec "SIGCHLD storm: summary" "event == 'summary' and processes >= 300"
else
	not_ok "SIGCHLD storm: the command did not start" "$(cat "$ERR")"
fi

# --- a chain of 100 execs -----------------------------------------------------
cat >"$ROOT/chain.sh" <<'SH'
n=$1
if [ "$n" -gt 0 ]; then exec sh "$0" $((n - 1)); fi
echo end of chain
SH
at --record -- sh chain.sh 100 >"$OUT" 2>"$ERR"
assert_eq "100 execs: exit 0" 0 $?
assert_eq "100 execs: the last one ran" "end of chain" "$(cat "$OUT")"
n=$(rec_count "event == 'exec'")
if [ "${n:-0}" -ge 101 ]; then ok "100 execs: $n exec records"; else not_ok "100 execs: 101 exec records" "$n"; fi
assert_rec "100 execs: summary names the last program" "event == 'summary' and argv[-1] == '0'"

# --- zombies left by the command ---------------------------------------------------
cat >"$ROOT/zombies.py" <<'PY'
import os, time
def state(pid):
    return open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[0]
kids = []
for i in range(50):
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    kids.append(pid)
    # Each child has exited before the next fork: one that has not yet
    # run to its exit is live, and counts, natively as under RLIMIT_NPROC.
    while state(pid) != "Z":
        time.sleep(0.001)
time.sleep(0.5)                      # 50 zombies, never reaped by us
pid = os.fork()                      # still room under --max-procs 20
if pid == 0:
    os._exit(0)
os.waitpid(pid, 0)
print("zombies", sum(1 for k in kids if state(k) == "Z"))
os._exit(0)                          # exit with them unreaped
PY
at --max-procs 20 -- "$PYTHON" zombies.py >"$OUT" 2>"$ERR"
st=$?
assert_eq "zombies: exit 0" 0 $st
assert_eq "zombies: 50 zombies existed and did not count against --max-procs" "zombies 50" "$(cat "$OUT")"
assert_rec "zombies: summary, nothing left running" "event == 'summary' and left_running == []"
