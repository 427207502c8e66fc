#!/bin/bash
# The shipped policies' own tests hold wherever the session's HOME, TMPDIR
# and ROOT are (a HOME under /tmp, as CI containers and tests have it; a
# TMPDIR on /dev/shm; a project under /tmp): every start runs them, and a
# test whose verdict depends on those places would make agenttrace refuse
# to start there.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

POLICY_BIN=$top_builddir/agenttrace-policy
places=$(mktemp -d /tmp/agenttrace-places.XXXXXX) || exit 99
shm=$(mktemp -d /dev/shm/agenttrace-places.XXXXXX 2>/dev/null) || shm=$places/shm
tap_outside_dirs="$places $shm"
mkdir -p "$places/home" "$places/tmp" "$places/root" "$shm/home" "$shm/tmp"
policies="default strict ci audit agent registries"
for h in "$HOME" "$places/home" "$shm/home"; do
	for t in "$TMPDIR" /tmp "$places/tmp" "$shm/tmp"; do
		for r in "$ROOT" "$places/root"; do
			# shellcheck disable=SC2086
			out=$(cd "$r" && HOME=$h TMPDIR=$t "$POLICY_BIN" --root "$r" check $policies 2>&1)
			assert_eq "HOME=${h#"$SANDBOX"/} TMPDIR=${t#"$SANDBOX"/} ROOT=${r#"$SANDBOX"/}: every shipped policy's tests pass" 0 $? ||
				diag "$out"
		done
	done
done
(cd "$places/root" && HOME=$places/home TMPDIR=$shm/tmp "$AGENTTRACE" -q --log "$LOG" -- true)
assert_eq "agenttrace starts with HOME under /tmp and TMPDIR on /dev/shm" 0 $?

# A ROOT of / leaves nothing outside the project: the error says so.
(cd / && "$AGENTTRACE" -q --log "$LOG" -- true) >"$OUT" 2>"$ERR"
assert_eq "ROOT /: exit 125" 125 $?
assert_match "ROOT /: the error says why" "ROOT is / .*give --root DIR" "$(cat "$ERR")"
