#!/bin/bash
# The open race of doc/THREAT-MODEL.md, run by a caller with one thread:
# the path lies in memory a second process changes, a shared mapping or
# the pages of a file the caller mapped private (another process rewrites
# the file).  Under the notify engine such an open is made by the
# supervisor on the path it judged, found by the mapping that holds the
# path (PROCMAP_QUERY on Linux 6.11 and later, else the maps text): no
# write reaches the denied file.  Under the ptrace engine the race stays.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

unset AGENTTRACE_TEST_ENGINE
at_q --engine notify -- true || skip_all "no notify engine on this kernel: $(cat "$ERR")"

RACE=$ROOT/bin/race-write
cp "$PROGS/race-write" "$RACE" || exit 99
# GOOD and BAD differ in one byte: ROOT/a/.bashrc (allowed) and
# ROOT/b/.bashrc, where ROOT/b is a symlink to HOME.  Landlock is off, so
# that only the supervisor's check stands between them.
mkdir -p "$ROOT/a"
ln -sfn "$HOME" "$ROOT/b"
GOOD=$ROOT/a/.bashrc
BAD=$ROOT/b/.bashrc
N=${RACE_N:-3000}

for M in process file; do
	for Q in 1 0; do
		rm -f "$HOME/.bashrc" "$LOG"
		AGENTTRACE_TEST_PROCMAP_QUERY=$Q at --engine notify --landlock off -- \
			"$RACE" "$GOOD" "$BAD" "$N" "$M" >"$OUT" 2>"$ERR"
		assert_eq "notify, $M flips (PROCMAP_QUERY $Q): the helper ran" 0 $?
		diag "notify, $M flips (PROCMAP_QUERY $Q): $(cat "$OUT")"
		won=$(sed -n 's/.*bad=\([0-9]*\).*/\1/p' "$OUT")
		assert_eq "notify, $M flips (PROCMAP_QUERY $Q): no write reached HOME/.bashrc" 0 "${won:-x}"
		assert_file_absent "notify, $M flips (PROCMAP_QUERY $Q): HOME/.bashrc never created" \
			"$HOME/.bashrc"
		assert_match "notify, $M flips (PROCMAP_QUERY $Q): writes of GOOD were made" \
			" ok=[1-9]" "$(cat "$OUT")"
		assert_rec "notify, $M flips (PROCMAP_QUERY $Q): the tries of BAD are denied and recorded" \
			"event == 'alert' and action == 'deny' and path == '$HOME/.bashrc'"
	done
	rm -f "$HOME/.bashrc"
	at --engine ptrace --landlock off -- "$RACE" "$GOOD" "$BAD" "$N" "$M" >"$OUT" 2>"$ERR"
	assert_eq "ptrace, $M flips: the helper ran" 0 $?
	won=$(sed -n 's/.*bad=\([0-9]*\).*/\1/p' "$OUT")
	if [ "${won:-0}" -gt 0 ]; then
		ok "ptrace, $M flips: the race is won (${won} writes reached HOME/.bashrc): doc/THREAT-MODEL.md says so"
	else
		ok "ptrace, $M flips: the race was not won in $N tries"
	fi
done


# A file the policy refuses writes to by name, which the command inherits
# open for writing (a redirection of the shell that started it): its
# pages change all the same, so they are not the caller's alone.
OUTSIDE=$SANDBOX/outside.bin
: >"$OUTSIDE"
at_q --engine notify -- sh -c 'echo x >"$0"' "$OUTSIDE"
assert_rec "the inherited file is one the policy refuses writes to" \
	"event == 'alert' and action == 'deny' and path == '$OUTSIDE'"
rm -f "$HOME/.bashrc" "$LOG"
at --engine notify --landlock off -- "$RACE" "$GOOD" "$BAD" "$N" fd3 3<>"$OUTSIDE" >"$OUT" 2>"$ERR"
assert_eq "notify, inherited file flips: the helper ran" 0 $?
diag "notify, inherited file flips: $(cat "$OUT")"
won=$(sed -n 's/.*bad=\([0-9]*\).*/\1/p' "$OUT")
assert_eq "notify, inherited file flips: no write reached HOME/.bashrc" 0 "${won:-x}"
assert_rec "notify, inherited file flips: the tries of BAD are denied and recorded" \
	"event == 'alert' and action == 'deny' and path == '$HOME/.bashrc'"

# A file with a second name: mapped by a name the policy refuses, written
# by one it admits (ROOT/w), both made before the session.  A hard link
# (HOME/hl), and a bind mount of a directory of the project at
# HOME/bm, in a mount namespace the test makes: the pages change through
# the other name, so they are not the caller's alone.
: >"$ROOT/w"
ln "$ROOT/w" "$HOME/hl"
rm -f "$HOME/.bashrc" "$LOG"
RACE_MEM_MAP=$HOME/hl RACE_MEM_WRITE=$ROOT/w \
	at --engine notify --landlock off -- "$RACE" "$GOOD" "$BAD" "$N" alias >"$OUT" 2>"$ERR"
assert_eq "notify, hard link flips: the helper ran" 0 $?
diag "notify, hard link flips: $(cat "$OUT")"
won=$(sed -n 's/.*bad=\([0-9]*\).*/\1/p' "$OUT")
assert_eq "notify, hard link flips: no write reached HOME/.bashrc" 0 "${won:-x}"
rm -f "$HOME/hl"
if have unshare && unshare -m true 2>/dev/null; then
	mkdir -p "$ROOT/bm" "$HOME/bm"
	: >"$ROOT/bm/w"
	rm -f "$HOME/.bashrc" "$LOG"
	unshare -m sh -c 'mount --make-rprivate / && mount --bind "$1/bm" "$2/bm" || exit 99
		cd "$1" && RACE_MEM_MAP=$2/bm/w RACE_MEM_WRITE=$1/bm/w exec timeout -k 5 "$3" \
			"$4" --log "$5" --engine notify --landlock off -- "$6" "$7" "$8" "$9" alias' \
		sh "$ROOT" "$HOME" "$AT_TIMEOUT" "$AGENTTRACE" "$LOG" "$RACE" "$GOOD" "$BAD" "$N" \
		>"$OUT" 2>"$ERR"
	assert_eq "notify, bind mount flips: the helper ran" 0 $?
	diag "notify, bind mount flips: $(cat "$OUT")"
	won=$(sed -n 's/.*bad=\([0-9]*\).*/\1/p' "$OUT")
	assert_eq "notify, bind mount flips: no write reached HOME/.bashrc" 0 "${won:-x}"
else
	skip "notify, bind mount flips" "no mount namespace here"
fi
