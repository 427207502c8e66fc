#!/bin/bash
# agenttrace(1): the command's streams, exit status and behaviour are untouched.
# Real programs under supervision must do what they do natively, down to a
# real project's own test suite (CPython's).
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

# Every case under both backends.
for B in auto preload; do
	backend_use "$B"

	# --- pipelines and streams -----------------------------------------------------
	bk -- bash -c 'seq 1 1000 | sort -rn | head -3 | tr "\n" " "' >"$OUT" 2>"$ERR"
	assert_eq "${BK}bash pipeline: exit 0" 0 $?
	assert_eq "${BK}bash pipeline: output" "1000 999 998 " "$(cat "$OUT")"
	assert_no_alert "${BK}bash pipeline: no alert"

	echo "hello stdin" | bk -- cat >"$OUT" 2>"$ERR"
	assert_eq "${BK}stdin passes through: exit 0" 0 $?
	assert_file_content "${BK}stdin passes through" "$OUT" "hello stdin"

	bk -- sh -c 'read a; read b; echo "$b-$a"; echo to-stderr >&2' >"$OUT" 2>"$ERR" <<'IN'
one
two
IN
	assert_file_content "${BK}stdin lines read by sh" "$OUT" "two-one"
	assert_match "${BK}the command's stderr passes through" "to-stderr" "$(cat "$ERR")"

	bk -- head -c 3000000 /dev/zero 2>"$ERR" | wc -c >"$OUT"
	assert_eq "${BK}3 MB through a pipe on stdout" 3000000 "$(tr -d ' ' <"$OUT")"

	# The 20 cats write through a pipe, not into "$OUT" directly: coreutils'
	# cat copies with copy_file_range(2), which (unlike write(2)) does not
	# take the file-position lock of a shared open file, so concurrent cats
	# into one regular file lose lines natively too (52 runs in 300 here,
	# without agenttrace).  Through a pipe the command is deterministic.
	bk -- bash -c 'for i in $(seq 20); do (echo $i >"$ROOT/f$i"; cat "$ROOT/f$i") & done; wait' 2>"$ERR" | sort -n >"$OUT"
	assert_eq "${BK}20 background subshells: exit 0" 0 "${PIPESTATUS[0]}"
	assert_eq "${BK}20 background subshells: all 20 lines" "$(seq 20)" "$(cat "$OUT")"

	bk -- sh -c 'exit 42' >"$OUT" 2>"$ERR"
	assert_eq "${BK}sh -c 'exit 42' -> 42" 42 $?

	# --- python3 --------------------------------------------------------------
	bk -- "$PYTHON" -c '
import subprocess, sys
r = subprocess.run(["sh", "-c", "echo sub; exit 3"], close_fds=True, capture_output=True)
p = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, close_fds=True)
out, _ = p.communicate(b"piped")
print(r.stdout.decode().strip(), r.returncode, out.decode())
' >"$OUT" 2>"$ERR"
	assert_eq "${BK}python3 subprocess with close_fds: exit 0" 0 $?
	assert_file_content "${BK}python3 subprocess with close_fds: output" "$OUT" "sub 3 piped"
	assert_no_alert "${BK}python3 subprocess: no alert"

	bk -- "$PYTHON" -c '
import os, threading
def work(i):
    with open(os.path.join(os.environ["ROOT"], "t%d" % i), "w") as f:
        f.write(str(i))
ts = [threading.Thread(target=work, args=(i,)) for i in range(16)]
[t.start() for t in ts]
[t.join() for t in ts]
print(len(os.listdir(os.environ["ROOT"])))
' >"$OUT" 2>"$ERR"
	assert_eq "${BK}python3 16 threads writing: exit 0" 0 $?
	n=$(ls "$ROOT" | grep -c '^t[0-9]*$')
	assert_eq "${BK}python3 16 threads writing: 16 files" 16 "$n"

	bk -- "$PYTHON" -c '
import multiprocessing as mp
def sq(x): return x * x
if __name__ == "__main__":
    with mp.Pool(4) as p:
        print(sum(p.map(sq, range(100))))
' >"$OUT" 2>"$ERR"
	assert_eq "${BK}python3 multiprocessing pool: exit 0" 0 $?
	assert_file_content "${BK}python3 multiprocessing pool: result" "$OUT" 328350
done

# --- CPython's own test suite, native vs supervised --------------------------------
# A permissive policy: the suite writes and connects where it likes; what is
# compared is whether supervision changes any result.
cat >"$SANDBOX/permissive.json" <<'JSON'
{
  "agenttrace": 1,
  "name": "permissive",
  "write": { "allow": ["/**"] },
  "net": { "allow": ["*"] }
}
JSON

# The failed test ids of a junit file, one per line.
junit_failed() {
	"$PYTHON" - "$1" <<'PY'
import sys, xml.etree.ElementTree as ET
try:
    root = ET.parse(sys.argv[1]).getroot()
except Exception:
    print("<no junit result>")
    sys.exit(0)
for tc in root.iter("testcase"):
    if any(c.tag in ("failure", "error") for c in tc):
        print(tc.get("name"))
PY
}

cpython_timeout=${AGENTTRACE_CPYTHON_TIMEOUT:-240}
if [ "${AGENTTRACE_QUICK:-0}" = 1 ]; then
	# An explicit request (.ci/run's sanitizer and distcheck passes, after
	# the first pass ran it): a plain TAP skip even with AGENTTRACE_MUST_WORK.
	ok "CPython test suite # SKIP AGENTTRACE_QUICK=1"
elif ! "$PYTHON" -m test --list-tests >"$SANDBOX/tests.list" 2>/dev/null; then
	skip "CPython test suite" "this python3 lacks the test package"
else
	for mod in test_subprocess test_signal test_threading test_os; do
		if ! grep -qx "$mod" "$SANDBOX/tests.list"; then
			skip "CPython $mod" "not in this python3's test package"
			continue
		fi
		mkdir -p "$TMPDIR/$mod"
		(cd "$TMPDIR/$mod" && TMPDIR=$TMPDIR/$mod timeout -k 10 "$cpython_timeout" \
			"$PYTHON" -m test -j2 --junit-xml "$SANDBOX/$mod.native.xml" "$mod") >"$SANDBOX/$mod.native.out" 2>&1
		native=$?
		# Each backend must leave the results as they are natively.
		for backend in ptrace preload; do
		start=$(date +%s)
		(cd "$TMPDIR/$mod" && TMPDIR=$TMPDIR/$mod timeout -k 10 "$cpython_timeout" \
			"$AGENTTRACE" --backend $backend --policy "$SANDBOX/permissive.json" \
			--log "$SANDBOX/$mod.$backend.jsonl" -- \
			"$PYTHON" -m test -j2 --junit-xml "$SANDBOX/$mod.at.xml" "$mod") >"$SANDBOX/$mod.at.out" 2>&1
		supervised=$?
		diag "$mod: native status $native, --backend $backend status $supervised in $(( $(date +%s) - start ))s"
		new=$(comm -13 <(junit_failed "$SANDBOX/$mod.native.xml" | sort) \
			<(junit_failed "$SANDBOX/$mod.at.xml" | sort))
		# A test that fails only once may be flaky: run those again, each way.
		if [ -n "$new" ]; then
			args=()
			for t in $new; do args+=(-m "${t##*.}"); done
			(cd "$TMPDIR/$mod" && timeout -k 10 "$cpython_timeout" "$AGENTTRACE" \
				--backend $backend --policy "$SANDBOX/permissive.json" \
				--log "$SANDBOX/$mod.$backend.jsonl" -- \
				"$PYTHON" -m test --junit-xml "$SANDBOX/$mod.again.xml" "${args[@]}" "$mod") \
				>"$SANDBOX/$mod.again.out" 2>&1
			new=$(comm -12 <(echo "$new" | sort) <(junit_failed "$SANDBOX/$mod.again.xml" | sort))
		fi
		if [ -z "$new" ]; then
			ok "CPython $mod, --backend $backend: same results supervised as native"
		else
			not_ok "CPython $mod, --backend $backend: same results supervised as native" \
				"fails only supervised:" "$new" "$(tail -15 "$SANDBOX/$mod.at.out")"
		fi
		REC_LOG=$SANDBOX/$mod.$backend.jsonl assert_no_rec \
			"CPython $mod, --backend $backend: no denial under the permissive policy" \
			"event == 'alert' and action == 'deny' and kind != 'syscall'"
		done
	done
fi
