#!/bin/bash
# The README's bench command after the quick start: bench/setup builds
# from a clean source tree and from one configured and built in place (as
# ./quickstart leaves it), and bench/run then starts on what it prepared.
# On a copy of this tree's sources (its `make distdir`), so that both
# cases run whatever state the tree under test is in.  Only the startup
# and exec workloads (no network, no package beyond the build's), no apt
# (AGENTTRACE_NO_APT=1), one round of `bench/run --quick`.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace
if [ "${AGENTTRACE_QUICK:-0}" = 1 ]; then
	# Three builds of the tree, about a minute: an explicit request (.ci/run's
	# sanitizer and distcheck passes, after the first pass ran it) skips
	# them, as a plain TAP skip even with AGENTTRACE_MUST_WORK.
	ok "bench/setup and bench/run # SKIP AGENTTRACE_QUICK=1"
	exit 0
fi

# The make running this test must not leak into the ones below (its
# jobserver, a TESTS=... on its command line).
unset MAKEFLAGS MFLAGS MAKELEVEL
export AGENTTRACE_NO_APT=1 AGENTTRACE_BENCH_DIR=$SANDBOX/bench
src=$SANDBOX/src
bench=$AGENTTRACE_BENCH_DIR
workloads=startup,exec

if ! make -C "$top_builddir" -s distdir distdir="$src" >"$SANDBOX/distdir.log" 2>&1; then
	not_ok "a copy of the sources (make distdir)" "$(tail -n 20 "$SANDBOX/distdir.log")"
	exit 1
fi

# assert_no_match DESC ERE TEXT
assert_no_match() {
	if printf '%s' "$3" | grep -Eq -- "$2"; then not_ok "$1" "matched: $2" "$3"; else ok "$1"; fi
}

# The source tree the bench's build was configured from.
srcdir_of_build() {
	sed -n 's/^srcdir = //p' "$bench/obj/Makefile" 2>/dev/null
}

# --- a clean tree -------------------------------------------------------
"$src/bench/setup" --workloads "$workloads" >"$OUT" 2>&1
st=$?
assert_eq "clean tree: bench/setup exits 0" 0 "$st"
[ "$st" = 0 ] || diag "$(tail -n 20 "$OUT")"
assert_eq "clean tree: built from the tree itself" "$src" "$(srcdir_of_build)"
check "clean tree: agenttrace built" test -x "$bench/obj/agenttrace"
check "clean tree: floor tracer built" test -x "$bench/obj/bench/floor-tracer"

# --- the same tree configured and built in place, as ./quickstart does ---
if ! (cd "$src" && ./configure -q && make -s -j2) >"$SANDBOX/inplace.log" 2>&1; then
	not_ok "configure and build in place" "$(tail -n 20 "$SANDBOX/inplace.log")"
	exit 1
fi
in_place_stamp=$(stat -c %Y "$src/agenttrace")

# After the quick start, with no bench build yet: the README's case.
fresh=$SANDBOX/bench-after-quickstart
AGENTTRACE_BENCH_DIR=$fresh "$src/bench/setup" --workloads "$workloads" >"$OUT" 2>&1
st=$?
assert_eq "in-place tree: bench/setup exits 0" 0 "$st"
[ "$st" = 0 ] || diag "$(tail -n 20 "$OUT")"
assert_no_match "in-place tree: no configure error" "already configured|configure failed" "$(cat "$OUT")"
assert_eq "in-place tree: built from a copy of the sources" "$fresh/src" "$(bench=$fresh srcdir_of_build)"
check "in-place tree: the copy is not configured" test ! -e "$fresh/src/config.status"
check "in-place tree: agenttrace built" test -x "$fresh/obj/agenttrace"
check "in-place tree: floor tracer built" test -x "$fresh/obj/bench/floor-tracer"
assert_eq "in-place tree: its own build left as it was" "$in_place_stamp" "$(stat -c %Y "$src/agenttrace")"
check "in-place tree: still configured in place" test -f "$src/config.status"

# The bench dir set up from the clean tree: configured again, from a copy.
"$src/bench/setup" --workloads "$workloads" >"$OUT" 2>&1
st=$?
assert_eq "clean, then in place: bench/setup exits 0" 0 "$st"
[ "$st" = 0 ] || diag "$(tail -n 20 "$OUT")"
assert_eq "clean, then in place: built from a copy of the sources" "$bench/src" "$(srcdir_of_build)"
check "clean, then in place: agenttrace built" test -x "$bench/obj/agenttrace"

# A rerun has nothing to configure again.
AGENTTRACE_BENCH_DIR=$fresh "$src/bench/setup" --workloads "$workloads" >"$OUT" 2>&1
assert_eq "in-place tree, again: bench/setup exits 0" 0 $?
assert_no_match "in-place tree, again: no new configure" "setup: configure |configuring it again" "$(cat "$OUT")"

# --- bench/run starts on it -----------------------------------------------
AGENTTRACE_BENCH_DIR=$fresh "$src/bench/run" --quick --runs 1 --workloads "$workloads" --wrappers native,agenttrace \
	--out "$SANDBOX/results" >"$OUT" 2>&1
st=$?
assert_eq "bench/run --quick exits 0" 0 "$st"
[ "$st" = 0 ] || diag "$(tail -n 20 "$OUT")"
check "bench/run wrote results.md" test -s "$SANDBOX/results/results.md"
# A workload's row of the wall-time table: its label, native seconds,
# agenttrace's ratio ("n/a (why)" when it could not run).
for w in startup exec; do
	row=$(grep -E "^\| $w: " "$SANDBOX/results/results.md" | head -n 1)
	assert_match "bench/run measured agenttrace on $w" '^\|[^|]*\| *[0-9.]+ *\| *[0-9.]+×' "$row"
done
