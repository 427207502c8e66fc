#!/bin/bash
# agenttrace(1) --private-tmp: a fresh TMPDIR per session (and a private /tmp
# where a mount namespace is allowed), ${TMPDIR} in the policy names it,
# removed at the end without ever following a link out of it.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

# Outside the session: a file that a symlink inside the private dir points
# at; the cleanup must leave it alone.
mkdir -p "$SANDBOX/outside/dir"
echo keep >"$SANDBOX/outside/dir/precious"

at_q --private-tmp -- sh -c '
	echo "$TMPDIR"
	echo data > "$TMPDIR/f" && mkdir -p "$TMPDIR/a/b/c" && echo deep > "$TMPDIR/a/b/c/g"
	ln -s "'"$SANDBOX"'/outside/dir" "$TMPDIR/link"
	ln -s "'"$SANDBOX"'/outside/dir/precious" "$TMPDIR/a/filelink"
	mkdir "$TMPDIR/locked" && echo z > "$TMPDIR/locked/z" && chmod 000 "$TMPDIR/locked"
	cat "$TMPDIR/f"'
assert_eq "--private-tmp: exit 0" 0 $?
ptmp=$(head -n1 "$OUT")
assert_match "--private-tmp: a fresh dir under \$TMPDIR" "^$TMPDIR/agenttrace-tmp\\.[A-Za-z0-9]{6}\$" "$ptmp"
assert_eq "--private-tmp: the command wrote and read it" data "$(sed -n 2p "$OUT")"
assert_no_alert "--private-tmp: writes there are allowed (\${TMPDIR} is the new dir)"
assert_file_absent "--private-tmp: removed at the end" "$ptmp"
assert_file_content "--private-tmp: the target of a symlink inside survives" "$SANDBOX/outside/dir/precious" keep
assert_rec "--private-tmp: the summary names it" "event == 'summary' and private_tmp == '$ptmp'"
leftover=$(find "$TMPDIR" -mindepth 1 -maxdepth 1 -name 'agenttrace-tmp.*' | wc -l)
assert_eq "--private-tmp: nothing left in \$TMPDIR" 0 "$leftover"

# ${TMPDIR} of the policy is the private dir: a rule naming it matches there.
cat >"$SANDBOX/p.json" <<'JSON'
{ "agenttrace": 1, "extends": "default",
  "write": { "deny": [{ "id": "write.tmpdir-secret", "path": "${TMPDIR}/secret" }] } }
JSON
at_q --private-tmp --policy "$SANDBOX/p.json" -- sh -c '"$0" open-write "$TMPDIR/secret"' "$TRY"
assert_eq "policy \${TMPDIR} rule applies to the private dir" "$EACCES" $?
assert_rec "policy \${TMPDIR} rule: its record" "rule_id == 'write.tmpdir-secret'"

# --- the private /tmp --------------------------------------------------------
marker=agenttrace-t0320-$$
if [ "$(id -u)" = 0 ]; then
	at_q -v --private-tmp -- sh -c 'echo in > /tmp/'"$marker"'; ls /tmp | wc -l; cat /tmp/'"$marker"
	assert_eq "private /tmp: exit 0" 0 $?
	assert_match "private /tmp: -v says so" "private /tmp" "$(cat "$ERR")"
	assert_eq "private /tmp: empty but for our file" "1
in" "$(cat "$OUT")"
	assert_file_absent "private /tmp: nothing written to the real /tmp" "/tmp/$marker"
	assert_no_alert "private /tmp: no alert"
	# The mount stays in the session's namespace.
	assert_eq "private /tmp: no mount left in the host's namespace" 0 \
		"$(grep -c ' /tmp tmpfs .*agenttrace-tmp\| agenttrace-tmp ' /proc/self/mounts)"
	# With TMPDIR itself under /tmp, it is still reachable inside.
	TMPDIR=/tmp at_q --private-tmp -- sh -c 'echo "$TMPDIR"; echo ok > "$TMPDIR/x" && cat "$TMPDIR/x"'
	assert_eq "TMPDIR under /tmp: usable inside the private /tmp" 0 $?
	p2=$(head -n1 "$OUT")
	assert_match "TMPDIR under /tmp: /tmp/agenttrace-tmp.*" "^/tmp/agenttrace-tmp\\." "$p2"
	assert_file_absent "TMPDIR under /tmp: removed at the end" "$p2"
else
	at_q -v --private-tmp -- true
	assert_match "not root: /tmp stays shared, and -v says why" "/tmp stays shared" "$(cat "$ERR")"
fi
