#!/bin/bash
# --max-procs through the shim's SPAWN_ASK (agenttrace(1),
# BACKENDS): the cases of the preload backend that have no counterpart in
# t0090.  Every other case of t0010-t0120 runs under --backend preload in
# its own file, next to the ptrace expectation (lib.sh: backend_use, bk_*).
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace
[ -f "$top_builddir/preload/libagenttrace-preload.so" ] || skip_all "the shim is not built"

backend_use preload
limit_expr() {
	printf "event == 'alert' and kind == 'limit' and rule_id == '%s'" "$1"
}

assert_eq "${BK}limits: the storm stopped at the ceiling (19 children + the command)" \
	"19 forked" "$("$PYTHON" -c 'import sys; print(sys.argv[1])' "$(bk --max-procs 20 -- "$PYTHON" -c '
import os
# The children live until the storm is over (EOF on the pipe), however
# slow the machine: none may leave early and free a place.
r, w = os.pipe()
n = 0
while True:
    try:
        p = os.fork()
    except OSError:
        break
    if p == 0:
        os.close(w); os.read(r, 1); os._exit(0)
    n += 1
print(n, "forked")
os.close(w)
for _ in range(n): os.wait()' 2>/dev/null)")"

# Exited processes stop counting: sh, the helper and its 3 children are 5;
# three rounds fit under a ceiling of 5 only if each round's are forgotten.
bk --max-procs 5 -- sh -c 'for r in 1 2 3; do "$0" fork-storm 3 || exit $?; done' "$TRY" >"$OUT" 2>"$ERR"
assert_eq "${BK}limits: processes that have ended no longer count" 0 $?

# vfork (python's subprocess) and posix_spawn are counted too.
bk --max-procs 3 -- "$PYTHON" -c '
import os, subprocess
ps, res = [], []
for i in range(4):
    try:
        ps.append(subprocess.Popen(["sleep", "1"])); res.append("ok")
    except OSError as e:
        res.append(str(e.errno))
for p in ps: p.wait()
kids = []
for i in range(4):
    try:
        kids.append(os.posix_spawn("/bin/sleep", ["sleep", "1"], os.environ)); res.append("ok")
    except OSError as e:
        res.append(str(e.errno))
for k in kids: os.waitpid(k, 0)
print(" ".join(res))' >"$OUT" 2>"$ERR"
assert_eq "${BK}limits: python subprocess (vfork) and posix_spawn stop at --max-procs 3" \
	"ok ok $EAGAIN $EAGAIN ok ok $EAGAIN $EAGAIN" "$(cat "$OUT")"
assert_rec "${BK}limits: a vfork refusal is recorded" "$(limit_expr limit.max-procs) and syscall == 'vfork'"
assert_rec "${BK}limits: a posix_spawn refusal is recorded" "$(limit_expr limit.max-procs) and syscall == 'posix_spawn'"

# A static program forks without asking.
if [ -n "$TRY_STATIC" ]; then
	bk --max-procs 5 -- "$TRY_STATIC" fork-storm 10 >"$OUT" 2>"$ERR"
	assert_eq "${BK}limits: a static program's fork storm is NOT limited (the shim cannot ask)" 0 $?
	assert_no_rec "${BK}limits: static fork storm: no limit record" "kind == 'limit'"
	assert_rec "${BK}limits: static fork storm: listed as unseen" "$BYPASSABLE and '$TRY_STATIC' in unseen"
else
	skip "${BK}limits: a static program's fork storm" "no static helper"
fi
