#!/bin/bash
# agenttrace(1) --landlock and doc/THREAT-MODEL.md: the kernel backstop for the coarse write roots.
# A write outside them fails even when another thread rewrote the path
# after the supervisor's check; the race is recorded.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

RACE=$top_builddir/tests/progs/race-write
[ -x "$RACE" ] || skip_all "helper $RACE not built"
cp "$RACE" "$ROOT/bin/race-write" || exit 99
RACE=$ROOT/bin/race-write

have_landlock() {
	"$AGENTTRACE" -v --log "$SANDBOX/probe.jsonl" -- true 2>&1 | grep -q 'landlock: ABI'
}

# --- options: forced fallback, audit mode, bad values ---------------------------
AGENTTRACE_TEST_LANDLOCK_ABI=0 at_q --landlock on -- true
assert_eq "--landlock on where the kernel lacks it: 125" 125 $?
assert_match "--landlock on without Landlock: says why" "Landlock is not available" "$(cat "$ERR")"
AGENTTRACE_TEST_LANDLOCK_ABI=0 at_q -v --landlock auto -- true
assert_eq "--landlock auto without Landlock: runs (0)" 0 $?
assert_match "--landlock auto without Landlock: -v says so" "landlock: not available" "$(cat "$ERR")"
at_q --landlock on --mode audit -- true
assert_eq "--landlock on in audit mode: 125" 125 $?
at_q --landlock sometimes -- true
assert_eq "--landlock sometimes: 125" 125 $?

if ! have_landlock; then
	skip "landlock cases" "Landlock not available on this kernel"
	exit 0
fi

at_q -v -- true
assert_match "-v names the ABI and the roots" "landlock: ABI [0-9]+, writes allowed by the kernel only beneath: .*$ROOT" "$(cat "$ERR")"
at_q -v --landlock off -- true
assert_match "--landlock off: -v says off" "landlock: off" "$(cat "$ERR")"

# --- in force: what the supervisor allows still works ------------------------
at_q --landlock on -- sh -c 'echo a > f && mkdir d && mv f d/g && ln -s g d/l && rm d/l && echo b > "$TMPDIR/t" && mv "$TMPDIR/t" d/t && echo x > /dev/null && cat d/g d/t'
assert_eq "--landlock on: writes, renames across roots, /dev/null work" 0 $?
assert_eq "--landlock on: the files are right" "a
b" "$(cat "$OUT")"
assert_no_alert "--landlock on: no alert for allowed writes"

# A cache root under HOME that does not exist at start (a fresh CI HOME)
# is created empty before the ruleset is built, so package managers keep
# their caches (Landlock binds to inodes).
rm -rf "$HOME/.cache"
at_q --landlock on -- "$TRY" mkdir "$HOME/.cache/pip"
assert_eq "a cache root missing at start works under Landlock" 0 $?
assert_file_present "the cache dir was made" "$HOME/.cache/pip"
assert_no_alert "missing cache root under HOME: no alert"
# A missing root elsewhere cannot be granted: the supervisor refuses such
# a write itself and says why.
late=$SANDBOX/late
at_q --landlock on --allow-write "$late/**" -- "$TRY" mkdir "$late"
assert_eq "write beneath a missing root outside HOME: EACCES" "$EACCES" $?
assert_rec "missing root outside HOME: landlock.outside-roots record" "$(deny_expr write landlock.outside-roots "$late")"
at_q --landlock off --allow-write "$late/**" -- "$TRY" mkdir "$late"
assert_eq "the same with --landlock off: allowed" 0 $?
at_q --landlock on -- "$TRY" open-write "$HOME/.cache/pip-file"
assert_eq "an existing cache root is granted" 0 $?
# mkdir -p of existing ancestors is answered EEXIST by the kernel, not
# refused as outside the roots.
at_q --landlock on -- mkdir -p "$HOME/.cache/a/b"
assert_eq "mkdir -p beneath an existing root" 0 $?
assert_no_rec "mkdir -p: no landlock.outside-roots record" "rule_id == 'landlock.outside-roots'"

# --- the race (doc/THREAT-MODEL.md) --------------------------------------------------------
# GOOD and BAD differ in one byte: ROOT/a/.bashrc (allowed) and
# ROOT/b/.bashrc, where ROOT/b is a symlink to HOME.
mkdir -p "$ROOT/a"
ln -sfn "$HOME" "$ROOT/b"
GOOD=$ROOT/a/.bashrc
BAD=$ROOT/b/.bashrc
N=${RACE_N:-20000}

rm -f "$HOME/.bashrc"
at --landlock off -- "$RACE" "$GOOD" "$BAD" "$N" >"$OUT" 2>"$ERR"
assert_eq "race without Landlock: the helper ran" 0 $?
won=$(sed -n 's/.*bad=\([0-9]*\).*/\1/p' "$OUT")
engine=$(rec_field "event == 'summary'" engine)
diag "without Landlock, engine $engine: $(cat "$OUT")"
if [ "$engine" = notify ]; then
	# The notify engine makes a racing caller's open itself, on the path
	# it judged: no rewrite of the buffer can reach another file.
	assert_eq "notify engine, race without Landlock: no write reached HOME/.bashrc" 0 "${won:-x}"
	assert_file_absent "notify engine, race without Landlock: HOME/.bashrc never created" "$HOME/.bashrc"
	assert_rec "notify engine, race without Landlock: the tries of BAD are denied and recorded" \
		"event == 'alert' and action == 'deny' and path == '$HOME/.bashrc' and pre(rule_id, 'write.')"
	assert_no_rec "notify engine, race without Landlock: no race.toctou (nothing got through)" \
		"rule_id == 'race.toctou'"
elif [ "${won:-0}" -gt 0 ]; then
	ok "without Landlock the race is won (${won} writes reached HOME/.bashrc): the TOCTOU of doc/THREAT-MODEL.md is real"
	assert_rec "race won: race.toctou record names HOME/.bashrc" "event == 'alert' and rule_id == 'race.toctou' and path == '$HOME/.bashrc'"
else
	skip "without Landlock the race is won" "no win in $N tries on this machine"
fi

rm -f "$HOME/.bashrc"
at --landlock on -- "$RACE" "$GOOD" "$BAD" "$N" >"$OUT" 2>"$ERR"
assert_eq "race with Landlock: the helper ran" 0 $?
diag "with Landlock: $(cat "$OUT")"
assert_match "race with Landlock: no write reached HOME/.bashrc" "bad=0 " "$(cat "$OUT")"
assert_file_absent "race with Landlock: HOME/.bashrc was never created" "$HOME/.bashrc"
n=$(rec_count "event == 'alert' and rule_id == 'landlock.race'")
if [ "$(rec_field "event == 'summary'" engine)" = notify ]; then
	assert_eq "notify engine, race with Landlock: no landlock.race (the kernel never saw BAD)" 0 "${n:-x}"
elif [ "${n:-0}" -gt 0 ]; then
	ok "race with Landlock: landlock.race records ($n)"
else
	skip "race with Landlock: landlock.race records" "the kernel never saw BAD in this run"
fi
assert_no_rec "race with Landlock: no race.toctou (nothing got through)" "rule_id == 'race.toctou'"
assert_rec "race with Landlock: summary record" "event == 'summary' and landlock is not None"
