#!/bin/bash
# What agenttrace's own start costs: the supervisor does not link
# libunwind.  tracer/inspect/backtrace.c opens libunwind-x86_64 and libunwind-ptrace
# at the first backtrace (a denial or an alert), so a run that takes none
# never maps them, nor liblzma that they need: at every start the loader
# mapped and relocated those four for nothing.  Checked from outside, in
# the supervisor's /proc/PID/maps while the command sleeps; then a denial in
# the same run loads them and its record has the frames.  Where the
# libraries cannot be loaded, denials go on without a backtrace.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

bashrc=$HOME/.bashrc
printf 'orig' >"$bashrc"
UNW='libunwind|liblzma'

# --- the program's own dependencies ----------------------------------------
assert_no_needed "agenttrace" "$AGENTTRACE" "$UNW"

# Full RELRO (configure: -z relro -z now): the GOT is resolved at start and
# read-only after, and the command's child (a fork) resolves nothing lazily.
if ! have readelf; then
	skip "agenttrace binds at start (BIND_NOW)" "no readelf"
else
	assert_match "agenttrace binds at start (BIND_NOW)" 'BIND_NOW|NOW ' "$(readelf -d "$AGENTTRACE")"
fi

# What a start opens: not /dev/urandom (jansson's hash seed comes from
# getrandom(2)) nor /etc/localtime (record times are computed in UTC, not
# by gmtime_r, which loads the zone file); and an auto run whose ptrace
# works makes no run dir.  strace follows the supervisor alone (no -f), so
# agenttrace can still trace the command.
if ! have strace || ! strace -o /dev/null true 2>/dev/null; then
	skip "a start opens neither /dev/urandom nor /etc/localtime" "strace cannot run here"
else
	rm -f "$LOG"
	(cd "$ROOT" && ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		strace -qq -e trace=open,openat,mkdir,rmdir -o "$SANDBOX/start.strace" \
		"$AGENTTRACE" --log "$LOG" -- "$TRY" exit 0) >"$OUT" 2>"$ERR"
	assert_eq "a start under strace (the supervisor alone): exit 0" 0 $?
	assert_rec "a start under strace: it wrote records (a warning or the summary)" "event == 'summary'"
	opened=$(grep -E '/dev/urandom|/etc/localtime|agenttrace-run' "$SANDBOX/start.strace")
	assert_eq "a start opens neither /dev/urandom nor /etc/localtime, and makes no run dir" "" "$opened"
fi

# maps_of PID: the mapped files of PID, one per line.
maps_of() {
	awk 'NF >= 6 { print $6 }' "/proc/$1/maps" 2>/dev/null | sort -u
}

# --- one run: nothing mapped before the first denial, loaded at it --------
# The command signals each phase by a file in ROOT and waits for ours.
at_bg -- sh -c '
	echo x >phase1
	while [ ! -e go ]; do sleep 0.05; done
	"$0" open-write "$1"
	echo "$?" >phase2
	while [ ! -e done ]; do sleep 0.05; done' "$TRY" "$bashrc"
if wait_file "$ROOT/phase1" 20; then
	m=$(maps_of "$AT_PID")
	assert_match "before a denial: the supervisor's maps are readable (libc)" "/libc\\.so" "$m"
	if grep -Eq "$UNW" <<<"$m"; then
		not_ok "before a denial: the supervisor maps neither libunwind nor liblzma" "$(grep -E "$UNW" <<<"$m")"
	else
		ok "before a denial: the supervisor maps neither libunwind nor liblzma"
	fi
else
	not_ok "the command started" "$(cat "$ERR")"
fi
touch "$ROOT/go"
if wait_file "$ROOT/phase2" 20; then
	assert_eq "the denied write fails with EACCES" "$EACCES" "$(cat "$ROOT/phase2")"
	m=$(maps_of "$AT_PID")
	assert_match "after a denial: libunwind-ptrace is loaded" "libunwind-ptrace\\.so" "$m"
else
	not_ok "the command reached its denial" "$(cat "$ERR")"
fi
touch "$ROOT/done"
wait_exit "$AT_PID" 30
assert_eq "the run ends with the command's status" 0 $?
assert_file_content "HOME/.bashrc unchanged" "$bashrc" orig
assert_rec "the denial has a backtrace from the calling program" \
	"$(deny_expr write write. "$bashrc") and len(backtrace or []) >= 2 and any(f['sym'] == 'main' and f['object'] == '$TRY' for f in backtrace)"

# --- a run without denials: never loaded ----------------------------------
# The command's parent is agenttrace (a root command reads its maps only
# with the supervisor's capabilities: --keep-caps all).
at --keep-caps all -- sh -c 'cat /proc/$PPID/maps' >"$OUT" 2>"$ERR"
assert_eq "a run without denials: ok" 0 $?
if grep -Eq "$UNW" "$OUT"; then
	not_ok "a run without denials never maps libunwind" "$(grep -E "$UNW" "$OUT")"
else
	ok "a run without denials never maps libunwind"
fi

# --- libunwind cannot be loaded: records without a backtrace --------------
# A private mount namespace hides libunwind-ptrace behind /dev/null.
lib=$(ldconfig -p 2>/dev/null | awk '$1 == "libunwind-ptrace.so.0" { print $NF; exit }')
lib=${lib:+$(readlink -f "$lib")}
if [ -z "$lib" ] || [ ! -f "$lib" ]; then
	skip "without libunwind: denials go on" "libunwind-ptrace.so.0 not found by ldconfig"
elif ! have unshare || ! unshare -m --propagation private true 2>/dev/null; then
	skip "without libunwind: denials go on" "no mount namespace here (needs root)"
else
	rm -f "$LOG"
	(cd "$ROOT" && exec unshare -m --propagation private sh -c \
		'mount --bind /dev/null "$1" && shift && exec "$@"' sh "$lib" \
		timeout -k 5 "$AT_TIMEOUT" "$AGENTTRACE" -v --log "$LOG" -- \
		sh -c '"$0" open-write "$1"; "$0" open-write "$1"; exit $?' "$TRY" "$bashrc") \
		>"$OUT" 2>"$ERR"
	assert_eq "without libunwind: the denied write fails with EACCES" "$EACCES" $?
	assert_file_content "without libunwind: HOME/.bashrc unchanged" "$bashrc" orig
	assert_eq "without libunwind: both denials are recorded, without a backtrace" 2 \
		"$(rec_count "$(deny_expr write write. "$bashrc") and not has('backtrace')")"
	assert_eq "without libunwind: -v says so once" 1 \
		"$(grep -c 'backtraces are off: cannot load libunwind' "$ERR")"
fi
