#!/bin/bash
# The exec race: a thread flips the path of an execve between an allowed
# program and one the policy denies (sudo, exec.privilege), so that the supervisor may judge one and the kernel
# load the other.  An exec cannot be made for the caller; the program the
# kernel loaded is checked at the exec event against the file that was
# judged, and killed before its first instruction when they differ
# (race.exec).  Under both engines.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

unset AGENTTRACE_TEST_ENGINE
RACE=$ROOT/bin/race-exec
cp "$PROGS/race-exec" "$RACE" || exit 99
mkdir -p "$ROOT/g" "$ROOT/h"
cp "$RACE" "$ROOT/g/prog"
cp "$RACE" "$ROOT/h/sudo"
touch "$ROOT/h/bad"
GOOD=$ROOT/g/prog
BAD=$ROOT/h/sudo
N=${RACE_N:-400}

# Natively the race is there to be won.
"$RACE" "$GOOD" "$BAD" 100 >"$OUT" 2>&1
diag "native: $(cat "$OUT")"
# The policy refuses BAD itself.
at_q -- "$BAD"
assert_eq "sudo is refused when judged as such" 126 $?

engines="ptrace"
at_q --engine notify -- true && engines="ptrace notify"
for E in $engines; do
	at --engine "$E" -- "$RACE" "$GOOD" "$BAD" "$N" >"$OUT" 2>"$ERR"
	assert_eq "$E: the race helper ran" 0 $?
	diag "$E: $(cat "$OUT")"
	assert_match "$E: sudo never ran" " bad=0 " "$(cat "$OUT")"
	won=$(sed -n 's/.* good=\([0-9]*\).*/\1/p' "$OUT")
	if [ "${won:-0}" -gt 0 ]; then
		ok "$E: the allowed program ran (${won} times)"
	else
		not_ok "$E: the allowed program ran" "$(cat "$OUT")"
	fi
	# Each try of BAD is refused when judged as BAD (exec.privilege)
	# or killed when it was loaded in place of GOOD (race.exec).
	assert_rec "$E: tries of sudo are refused and recorded" \
		"event == 'alert' and kind == 'exec' and rule_id == 'exec.privilege'"
	n=$(rec_count "event == 'alert' and rule_id == 'race.exec'")
	if [ "${n:-0}" -gt 0 ]; then
		ok "$E: sudo loaded in place of the judged program was killed ($n race.exec records)"
	else
		skip "$E: race.exec records" "the race was never won in $N tries"
	fi
done

# The same for the program's arguments: a thread flips one byte of the
# command of "/bin/sh -c", so that it names /dev/tcq/ (allowed) or
# /dev/tcp/ (a shell wired to a network socket, exec.reverse-shell), and
# exits 42 when it is the latter.  The arguments the kernel copied are
# compared at the exec event with those judged: a mismatch is killed
# before it runs (race.exec).
for E in $engines; do
	at --engine "$E" -- "$RACE" "case /dev/tcq/ in */tcp/) exit 42;; esac" \
		"case /dev/tcp/ in */tcp/) exit 42;; esac" "$N" sh >"$OUT" 2>"$ERR"
	assert_eq "$E, argv: the race helper ran" 0 $?
	diag "$E, argv: $(cat "$OUT")"
	assert_match "$E, argv: the reverse-shell command never ran" " bad=0 " "$(cat "$OUT")"
	assert_match "$E, argv: the allowed command ran" " good=[1-9]" "$(cat "$OUT")"
	assert_rec "$E, argv: tries of the reverse shell are refused and recorded" \
		"event == 'alert' and kind == 'exec' and rule_id == 'exec.reverse-shell'"
	n=$(rec_count "event == 'alert' and rule_id == 'race.exec'")
	diag "$E, argv: $n race.exec records"
done

# A "#!" script's arguments: a thread puts "-x" before the judged "a"
# and takes it away again (the script exits 42 when its first argument is
# -x).  The kernel puts the interpreter and the script's path first, as
# many entries as the "#!" line gives: one more is an argument that was
# not judged.  Every run with -x must be one judged with it (--record
# writes the judged argv of every exec).
printf '#!/bin/sh\n[ "$1" = -x ] && exit 42\nexit 0\n' >"$ROOT/g/script"
chmod +x "$ROOT/g/script"
for E in $engines; do
	at --engine "$E" --record -- "$RACE" "$ROOT/g/script" "$ROOT/g/script" "$N" script \
		>"$OUT" 2>"$ERR"
	assert_eq "$E, script argv: the race helper ran" 0 $?
	ran=$(sed -n 's/.* bad=\([0-9]*\).*/\1/p' "$OUT")
	judged=$(rec_count "event == 'exec' and argv and len(argv) == 3 and argv[1] == '-x'")
	diag "$E, script argv: $(cat "$OUT"), $judged execs judged with -x"
	if [ "${ran:-0}" -le "${judged:-0}" ]; then
		ok "$E, script argv: every run with -x was judged with it"
	else
		not_ok "$E, script argv: every run with -x was judged with it" "ran $ran, judged $judged"
	fi
	assert_match "$E, script argv: it ran with the judged a" " good=[1-9]" "$(cat "$OUT")"
done
