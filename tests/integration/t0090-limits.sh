#!/bin/bash
# agenttrace(1) resource ceilings: --timeout and --max-procs end or refuse cleanly
# with a limit record (a share of the kernel's task limit ends a fork bomb);
# many short processes are no problem.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

limit_expr() {
	printf "event == 'alert' and kind == 'limit' and rule_id == '%s'" "$1"
}

# Two (three) children that each stay under the ceiling but not together:
# a session ceiling ends one of them, a per-process rlimit would not.
MEM_KIDS='
import os, sys, time
pids = []
for i in range(2):
    p = os.fork()
    if p == 0:
        b = bytearray(120 * 1024 * 1024)
        for j in range(0, len(b), 4096): b[j] = 1
        time.sleep(1)
        os._exit(0)
    pids.append(p)
st = [os.waitpid(p, 0)[1] for p in pids]
print(" ".join(str(x) for x in st))
'
CPU_KIDS='
import os, time
pids = []
for i in range(3):
    p = os.fork()
    if p == 0:
        t = time.process_time()
        while time.process_time() - t < 0.7: pass
        os._exit(0)
    pids.append(p)
print(" ".join(str(os.waitpid(p, 0)[1]) for p in pids))
'
# The memory ceiling of the cgroup this process is in (v2 or v1), or none.
CG_LIMIT='
import re
for line in open("/proc/self/cgroup"):
    _, ctl, path = line.rstrip("\n").split(":", 2)
    for base, f in (("/sys/fs/cgroup/memory", "memory.limit_in_bytes") if "memory" in ctl.split(",") else
                    ("/sys/fs/cgroup", "memory.max") if ctl == "" else (None, None),):
        if base:
            try:
                v = open(base + path + "/" + f).read().strip()
            except OSError:
                continue
            if v.isdigit():
                print(v)
                raise SystemExit(0)
print("none")
'
# The kernel's task limit, of which --max-procs N% is a share.
task_limit=$(cat /proc/sys/kernel/threads-max)
[ "$(cat /proc/sys/kernel/pid_max)" -lt "$task_limit" ] && task_limit=$(cat /proc/sys/kernel/pid_max)
for b in auto preload; do
	printf 'b() { b & b & wait; }\nb\n' >"$SANDBOX/bomb-$b.sh"
done
cgroup_dir() { sed -n "s/^agenttrace: limits: the session's cgroup (v[12]): \([^ ]*\).*/\1/p" "$ERR" | head -1; }

cat >"$SANDBOX/limits.json" <<'JSON'
{ "agenttrace": 1, "extends": "default", "limits": { "timeout": 1 } }
JSON

# Every case under both backends: the shim asks the supervisor before each
# fork (SPAWN_ASK), the rest is the supervisor's own.
for B in auto preload; do
	backend_use "$B"
	if [ "$B" = auto ]; then SUMMARY="event == 'summary'"; else SUMMARY=$BYPASSABLE; fi

	# --- --timeout --------------------------------------------------------------------
	t0=$(now_ms)
	bk --timeout 1 -- sleep 30 >"$OUT" 2>"$ERR"
	st=$?
	el=$(( $(now_ms) - t0 ))
	assert_ne "${BK}--timeout 1 on sleep 30: non-zero status" 0 "$st"
	if [ $el -ge 900 ]; then ok "${BK}--timeout 1 does not end early (${el} ms)"; else not_ok "${BK}--timeout 1 does not end early" "${el} ms"; fi
	assert_rec "${BK}--timeout: limit record limit.timeout, naming the command's program" \
		"$(limit_expr limit.timeout)$(bk_rec_backend) and pre(exe, '/') and exe.endswith('/sleep')"
	assert_rec "${BK}--timeout: summary record, naming the command's program" \
		"$SUMMARY and pre(exe, '/') and exe.endswith('/sleep')"

	bk --timeout 1 -- "$TRY" ignore-term 30 >"$OUT" 2>"$ERR"
	st=$?
	assert_eq "${BK}a command that ignores SIGTERM is killed (137)" 137 "$st"
	assert_rec "${BK}SIGTERM-ignoring command: limit record" "$(limit_expr limit.timeout)"

	# Children of the command are ended too.
	rm -f "$ROOT/child-pid"
	bk --timeout 1 -- sh -c 'sleep 60 & echo $! > child-pid; wait' >"$OUT" 2>"$ERR"
	sleep 0.3
	# (A zombie left to an init that does not reap counts as ended.)
	child_state=
	[ -s "$ROOT/child-pid" ] && child_state=$(awk '{print $3}' "/proc/$(cat "$ROOT/child-pid")/stat" 2>/dev/null)
	if [ -n "$child_state" ] && [ "$child_state" != Z ] && [ "$child_state" != X ]; then
		not_ok "${BK}--timeout: the command's children are ended too" "pid $(cat "$ROOT/child-pid") still runs"
		kill -KILL "$(cat "$ROOT/child-pid")" 2>/dev/null
	else
		ok "${BK}--timeout: the command's children are ended too"
	fi

	# A policy's limits section does the same.
	bk --policy "$SANDBOX/limits.json" -- sleep 30 >"$OUT" 2>"$ERR"
	assert_ne "${BK}policy limits.timeout 1 ends sleep 30: non-zero status" 0 $?
	assert_rec "${BK}policy limits.timeout: limit record" "$(limit_expr limit.timeout)"

	# --- --max-procs ---------------------------------------------------------------------
	bk --max-procs 20 -- "$TRY" fork-storm 100 >"$OUT" 2>"$ERR"
	st=$?
	assert_eq "${BK}fork storm over --max-procs 20: fork fails with EAGAIN" "$EAGAIN" "$st"
	if [ "$B" = auto ]; then
		assert_rec "${BK}fork storm: limit record limit.max-procs" "$(limit_expr limit.max-procs)"
	else
		assert_rec "${BK}fork storm: limit record limit.max-procs from the preload backend" \
			"$(limit_expr limit.max-procs) and action == 'deny' and errno == 'EAGAIN' and syscall == 'fork' and backend == 'preload' and pre(exe, '$TRY')"
	fi
	assert_rec "${BK}fork storm: summary record" "$SUMMARY and exit_code == $EAGAIN and denials >= 1"

	bk --max-procs 20 -- "$TRY" fork-storm 10 >"$OUT" 2>"$ERR"
	assert_eq "${BK}10 children under --max-procs 20: fine" 0 $?
	assert_no_rec "${BK}10 children under --max-procs 20: no limit record" "kind == 'limit'"

	# --- --max-memory and --max-cpu: the whole session's, through a cgroup ------------
	bk -v --max-memory 200M -- "$PYTHON" -c "$MEM_KIDS" >"$OUT" 2>"$ERR"
	st=$?
	cg=$(cgroup_dir)
	if [ -z "$cg" ]; then
		skip "${BK}--max-memory for the session" "no usable cgroup here: $(grep -o 'no usable cgroup.*' "$ERR")"
	else
		assert_eq "${BK}--max-memory 200M, two children of 120 MB: the command goes on (exit 0)" 0 "$st"
		assert_match "${BK}--max-memory: one child killed by the kernel (SIGKILL), one done" \
			'^(0 9|9 0)$' "$(cat "$OUT")"
		assert_rec "${BK}--max-memory: limit record limit.max-memory" "$(limit_expr limit.max-memory)"
		assert_file_absent "${BK}--max-memory: the session's cgroup is removed at the end" "$cg"

		# A cgroup left by a killed agenttrace is swept by the next one.
		if [ "$B" = auto ]; then
			stale="$(dirname "$cg")/agenttrace.4194305"
			mkdir "$stale" 2>/dev/null
			bk -v --max-memory 200M -- true >"$OUT" 2>"$ERR"
			assert_file_absent "${BK}a stale session cgroup (pid gone) is removed" "$stale"
			rmdir "$stale" 2>/dev/null
			stale="$(dirname "$cg")/agenttrace.4194305.5eed"
			mkdir "$stale" 2>/dev/null
			bk -v --max-memory 200M -- true >"$OUT" 2>"$ERR"
			assert_file_absent "${BK}a stale session cgroup with a tag (pid gone) is removed" "$stale"
			rmdir "$stale" 2>/dev/null
			# One a killed session left under the pid this one gets
			# (pids are reused) is not taken over: a third session
			# that saw that pid gone would sweep it away under it.
			(cd "$ROOT" && exec sh -c 'echo $$ >"$4"; mkdir "$1/agenttrace.$$" &&
				exec "$2" -v --log "$3" --max-memory 200M -- true' \
				sh "$(dirname "$cg")" "$AGENTTRACE" "$LOG" "$SANDBOX/cg-pid") >"$OUT" 2>"$ERR"
			assert_eq "${BK}a cgroup left under this session's pid: the session runs" 0 $?
			own=$(cgroup_dir)
			assert_match "${BK}a cgroup left under this session's pid: the session makes its own" \
				'/agenttrace\.[0-9]+\.[0-9a-f]+$' "$own"
			rmdir "$(dirname "$cg")/agenttrace.$(cat "$SANDBOX/cg-pid")" 2>/dev/null
		fi
	fi

	# The session's cgroup and the rlimit fallback are the supervisor's
	# own, the same whichever backend decides: what follows runs once,
	# but for the one allocation over the ceiling.
	if [ "$B" = auto ]; then
		AGENTTRACE_TEST_NO_CGROUP=1 bk -v --max-memory 200M -- "$PYTHON" -c "$MEM_KIDS" >"$OUT" 2>"$ERR"
		assert_eq "${BK}no cgroup: --max-memory is per process (RLIMIT_AS), both children live" "0 0" "$(cat "$OUT")"
		assert_match "${BK}no cgroup: -v says the ceiling is per process" "apply to each process" "$(cat "$ERR")"
	fi
	# A share of the machine's memory is bytes of MemTotal, and the
	# session's ceiling only: never an address-space limit per process,
	# which would break programs that reserve address space.
	if [ "$B" = auto ]; then
		mem_kb=$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)
		share=$(( mem_kb * 1024 / 100 * 30 ))
		bk -v --max-memory 30% -- "$PYTHON" -c "$CG_LIMIT" >"$OUT" 2>"$ERR"
		assert_eq "${BK}--max-memory 30%: exit 0" 0 $?
		assert_match "${BK}--max-memory 30%: 30% of MemTotal" "max-memory $share bytes \\(a share" "$(cat "$ERR")"
		if [ -n "$(cgroup_dir)" ]; then
			# cgroup v1 rounds the limit down to a page.
			lim=$(cat "$OUT")
			if [ "${lim:-0}" -le "$share" ] && [ "${lim:-0}" -gt $(( share - 65536 )) ]; then
				ok "${BK}--max-memory 30%: the session's cgroup holds it ($lim)"
			else
				not_ok "${BK}--max-memory 30%: the session's cgroup holds it" "limit ${lim:-none}, want $share"
			fi
		else
			skip "${BK}--max-memory 30%: the session's cgroup holds it" "no usable cgroup here"
		fi
		AGENTTRACE_TEST_NO_CGROUP=1 bk -v --max-memory 30% -- sh -c 'ulimit -v' >"$OUT" 2>"$ERR"
		assert_eq "${BK}no cgroup, --max-memory 30%: no address-space limit" unlimited "$(cat "$OUT")"
		assert_match "${BK}no cgroup, --max-memory 30%: -v says it is not applied" \
			"the memory ceiling of 30% of the machine's memory is not applied" "$(cat "$ERR")"
		bk --max-memory 0% -- true >"$OUT" 2>"$ERR"
		assert_eq "${BK}--max-memory 0%: 125" 125 $?
		bk --max-memory 101% -- true >"$OUT" 2>"$ERR"
		assert_eq "${BK}--max-memory 101%: 125" 125 $?
		# The default policy's own ceilings.
		bk -v -- true >"$OUT" 2>"$ERR"
		assert_match "${BK}default policy: a share of memory and of the kernel's task limit" \
			"limits: max-procs $(( task_limit * 15 / 100 )) \\(tasks, .*max-memory $(( mem_kb * 1024 / 100 * 75 )) bytes \\(a share" "$(cat "$ERR")"
	fi

	# The command is in the session's cgroup before it runs, whichever way
	# it got there: made there (clone3 into a v2 cgroup) or moved there by
	# itself before its filter (v1, and v2 where clone3 cannot).
	for knob in 0 1; do
		AGENTTRACE_TEST_NO_CLONE_INTO_CGROUP=$knob bk -v --max-memory 200M -- cat /proc/self/cgroup >"$OUT" 2>"$ERR"
		cg=$(cgroup_dir)
		if [ -z "$cg" ]; then
			skip "${BK}the command is in the session's cgroup (knob $knob)" "no usable cgroup here"
			continue
		fi
		assert_eq "${BK}the command's memory cgroup is the session's (knob $knob)" 1 \
			"$(grep -cE "^(0::|[0-9]+:([^:]*,)?memory(,[^:]*)?:).*/${cg##*/}\$" "$OUT")"
	done

	# --- a share of the kernel's task limit (the pids controller) ---------------------
	# A fork bomb: forks fail at the ceiling, and the first refusal ends
	# the session.  1% keeps it small (a few hundred tasks).
	bk -v --max-procs 1% -- bash "$SANDBOX/bomb-$B.sh" >"$OUT" 2>"$ERR"
	st=$?
	if grep -q "the process ceiling of 1% of the kernel's task limit is not applied" "$ERR"; then
		skip "${BK}--max-procs 1%: a fork bomb ends" "no cgroup with the pids controller here"
	else
		assert_eq "${BK}--max-procs 1%: a fork bomb ends, killed (137)" 137 "$st"
		assert_rec "${BK}--max-procs 1%: one limit record names the ceiling" \
			"$(limit_expr limit.max-procs) and 'ceiling of $(( task_limit / 100 )) tasks' in why"
		assert_eq "${BK}--max-procs 1%: one record for the whole bomb" 1 \
			"$(rec_count "kind == 'limit'")"
		sleep 0.2
		assert_eq "${BK}--max-procs 1%: nothing of the bomb is left running" "" \
			"$(pgrep -f "bomb-$B.sh" || true)"
	fi
	# Ordinary parallel work under the default ceiling: nothing refused.
	bk -- sh -c 'for i in $(seq 64); do sleep 0.3 & done; wait; echo done' >"$OUT" 2>"$ERR"
	assert_eq "${BK}64 processes at once under the default ceiling: exit 0" 0 $?
	assert_no_alert "${BK}64 processes at once under the default ceiling: no record"
	AGENTTRACE_TEST_NO_CGROUP=1 bk -v --max-procs 1% -- true >"$OUT" 2>"$ERR"
	assert_match "${BK}no cgroup, --max-procs 1%: -v says it is not applied" \
		"the process ceiling of 1% of the kernel's task limit is not applied" "$(cat "$ERR")"
	for bad in 0% 101% x% 5x; do
		bk --max-procs "$bad" -- true >"$OUT" 2>"$ERR"
		assert_eq "${BK}--max-procs $bad: 125" 125 $?
	done
	AGENTTRACE_TEST_NO_CGROUP=1 bk --max-memory 200M -- "$PYTHON" -c 'bytearray(300 * 1024 * 1024)' >"$OUT" 2>"$ERR"
	assert_eq "${BK}no cgroup: one allocation over --max-memory fails (MemoryError, exit 1)" 1 $?
	assert_match "${BK}no cgroup: the program saw ENOMEM" MemoryError "$(cat "$ERR")"

	if [ "$B" = auto ]; then
		bk -v --max-cpu 1 -- "$PYTHON" -c "$CPU_KIDS" >"$OUT" 2>"$ERR"
		st=$?
		cg=$(cgroup_dir)
		if [ -z "$cg" ]; then
			skip "${BK}--max-cpu for the session" "no usable cgroup here"
		else
			assert_eq "${BK}--max-cpu 1, three children of 0.7 s CPU: SIGXCPU ends the command (152)" 152 "$st"
			assert_rec "${BK}--max-cpu: limit record limit.max-cpu for the session" \
				"$(limit_expr limit.max-cpu) and 'session used' in why"
			assert_file_absent "${BK}--max-cpu: the session's cgroup is removed at the end" "$cg"
		fi
		AGENTTRACE_TEST_NO_CGROUP=1 bk --max-cpu 1 -- "$PYTHON" -c "$CPU_KIDS" >"$OUT" 2>"$ERR"
		assert_eq "${BK}no cgroup: --max-cpu is per process (RLIMIT_CPU), all three finish" "0 0 0" "$(cat "$OUT")"
		assert_no_rec "${BK}no cgroup: no limit record under the per-process ceiling" "kind == 'limit'"
	fi

	# --- many short processes ---------------------------------------------------------
	# (fewer under preload, where each start also loads the shim)
	n=1000
	[ "$B" = auto ] || n=300
	t0=$(now_ms)
	bk -- sh -c 'i=0; while [ $i -lt $0 ]; do /bin/true; i=$((i+1)); done; echo $i' $n >"$OUT" 2>"$ERR"
	st=$?
	el=$(( $(now_ms) - t0 ))
	assert_eq "${BK}$n short processes: exit 0" 0 "$st"
	assert_file_content "${BK}$n short processes: all ran" "$OUT" $n
	assert_no_alert "${BK}$n short processes: no alert"
	diag "$n short processes ${BK:+under --backend $B }took ${el} ms"
done
