#!/bin/bash
# Terminals opened by a caller that can race (a second thread, or memory
# another process shares): /dev/tty, and a terminal opened without
# O_NOCTTY, are opened by the supervisor too (doc/INTERNALS.md, "Callers
# that can race"), never let run on memory that can name another file by
# the time the kernel reads it.  /dev/tty is the caller's own terminal,
# found among its descriptors; without one the open fails with ENXIO, as
# natively.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

unset AGENTTRACE_TEST_ENGINE
at_q --engine notify -- true || skip_all "no notify engine on this kernel: $(cat "$ERR")"
PY3=/usr/bin/python3
[ -x "$PY3" ] || PY3=$PYTHON

RACE=$ROOT/bin/race-write
cp "$PROGS/race-write" "$RACE" || exit 99
# GOOD is /dev/tty, written with as many slashes as give it BAD's length;
# BAD a CI definition that does not exist at the start (no mask covers it).
BAD=$ROOT/.gitlab-ci.yml
GOOD=/dev/
while [ $((${#GOOD} + 3)) -lt ${#BAD} ]; do GOOD=$GOOD/; done
GOOD=${GOOD}tty
N=${RACE_N:-3000}

# race_case LABEL COMMAND...: COMMAND prints race-write's counts.
race_case() {
	local label=$1 won refused recs
	shift
	rm -f "$BAD" "$LOG"
	"$@" >"$OUT" 2>"$ERR"
	diag "$label: $(tr -d '\r' <"$OUT" | grep opens=)"
	assert_match "$label: the helper ran" "opens=$N" "$(cat "$OUT")"
	won=$(tr -d '\r' <"$OUT" | sed -n 's/.*bad=\([0-9]*\).*/\1/p')
	assert_eq "$label: no open reached .gitlab-ci.yml" 0 "${won:-x}"
	assert_file_absent "$label: .gitlab-ci.yml never made" "$BAD"
	# The flip goes byte by byte: a try reads .gitlab-ci.yml whole only
	# when the supervisor's read falls between two rounds, and the rest
	# are names in the project that mix both, refused alike.  Every
	# refused try has its record.
	refused=$(tr -d '\r' <"$OUT" | sed -n 's/.*eacces=\([0-9]*\).*/\1/p')
	recs=$(rec_count "event == 'alert' and action == 'deny'")
	diag "$label: $recs deny records, $(rec_count "event == 'alert' and action == 'deny' and path == '$BAD'") of .gitlab-ci.yml itself"
	[ "${refused:-0}" -gt 0 ] && [ "$recs" = "$refused" ] &&
		ok "$label: the refused tries are denied and recorded" ||
		not_ok "$label: the refused tries are denied and recorded" "refused ${refused:-?}, records $recs"
}

# Without a controlling terminal: every open of /dev/tty is ENXIO.
for M in thread process; do
	race_case "notify, no terminal, $M flips" \
		sh -c 'cd "$0" && exec setsid -w "$@"' "$ROOT" "$AGENTTRACE" --log "$LOG" \
		--engine notify -- "$RACE" "$GOOD" "$BAD" "$N" $([ "$M" = thread ] || echo "$M") </dev/null
done

# With one (script(1) gives the command a pty): the opens of /dev/tty are
# made, and still none reaches .gitlab-ci.yml.
if have script; then
	race_case "notify, on a terminal, thread flips" \
		script -qec "cd '$ROOT' && '$AGENTTRACE' --log '$LOG' --engine notify -- '$RACE' '$GOOD' '$BAD' $N" /dev/null
	assert_match "notify, on a terminal: the opens of /dev/tty were made" " ok=[1-9]" \
		"$(tr -d '\r' <"$OUT")"
else
	skip "notify, on a terminal" "no script(1)"
fi

# As natively: the terminal, its process group, a pty pair, the terminal
# by its own name without O_NOCTTY, and ENXIO without a terminal.
cat >"$ROOT/tty.py" <<'PY'
import errno, os, sys, threading
threading.Thread(target=threading.Event().wait, daemon=True).start()
def tell(name, fn):
    try:
        print(name, fn())
    except OSError as e:
        print(name, "error", errno.errorcode.get(e.errno, e.errno))
    sys.stdout.flush()
def dev_tty():
    fd = os.open("/dev/tty", os.O_RDWR)
    os.write(fd, b"through-dev-tty\n")
    r = (os.isatty(fd), os.tcgetpgrp(fd) == os.getpgrp())
    os.close(fd)
    return r
tell("dev-tty", dev_tty)
tell("own-name", lambda: os.close(os.open(os.ttyname(0), os.O_RDWR)) or "ok")
def pair():
    m, s = os.openpty()
    os.write(s, b"x\n")
    return os.read(m, 10).strip()
tell("openpty", pair)
PY
if have script; then
	script -qec "cd '$SANDBOX' && '$PY3' '$ROOT/tty.py'" /dev/null </dev/null |
		tr -d '\r' >"$SANDBOX/native.tty"
	rm -f "$LOG"
	script -qec "cd '$ROOT' && '$AGENTTRACE' -q --log '$LOG' --engine notify -- '$PY3' '$ROOT/tty.py'" \
		/dev/null </dev/null | tr -d '\r' >"$OUT"
	assert_match "notify, on a terminal: the program ran" "through-dev-tty" "$(cat "$OUT")"
	if diff -u "$SANDBOX/native.tty" "$OUT" >"$SANDBOX/diff.tty"; then
		ok "notify, on a terminal: every open as natively"
	else
		not_ok "notify, on a terminal: every open as natively" "$(cat "$SANDBOX/diff.tty")"
	fi
	assert_no_rec "notify, on a terminal: nothing denied" "event == 'alert'"
fi
(cd "$SANDBOX" && setsid -w "$PY3" -c 'import os, threading
threading.Thread(target=threading.Event().wait, daemon=True).start()
try: os.open("/dev/tty", os.O_RDWR)
except OSError as e: print(e.errno)') </dev/null >"$SANDBOX/native.notty" 2>&1
rm -f "$LOG"
cd "$ROOT" && setsid -w "$AGENTTRACE" --log "$LOG" --engine notify -- "$PY3" -c 'import os, threading
threading.Thread(target=threading.Event().wait, daemon=True).start()
try: os.open("/dev/tty", os.O_RDWR)
except OSError as e: print(e.errno)' </dev/null >"$OUT" 2>"$ERR"
assert_eq "notify, no terminal: /dev/tty fails as natively (ENXIO)" "$(cat "$SANDBOX/native.notty")" \
	"$(cat "$OUT")"

