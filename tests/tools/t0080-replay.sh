#!/bin/bash
# agenttrace-policy replay: a fixed log recorded under a permissive policy,
# replayed under "default", lists exactly the events default denies (and
# the one it alerts on); exit 1 when some differ, 0 when none, 125 on error.
. "$top_srcdir/tests/tools/lib-tools.sh"
[ -n "$POLICY_TOOL" ] || skip_all "no program runs replay (agenttrace-policy or tests/tools/policy-tools)"

cd "$DATA" || exit 99
"$POLICY_TOOL" replay replay.jsonl --policy default --home /home/u --tmpdir /tmp >"$OUT" 2>"$ERR"
assert_eq "differences: exit 1" 1 $?
assert_golden "the differences match replay-default.expected" "$DATA/replay-default.expected" "$OUT"
assert_eq "exactly the events default denies" \
"write /work/proj/.git/hooks/pre-commit
write /home/u/.bashrc
write /work/proj/ci.tmp -> /work/proj/.github/workflows/ci.yml
read /home/u/.ssh/id_ed25519
net 93.184.216.34:443 (example.com)
net 169.254.169.254:80
net unix:/var/run/docker.sock
net unix:/run/dbus/system_bus_socket
exec /usr/bin/sudo id
exec /tmp/dropper" "$(sed -n 's/^was allow, now deny: \(.*\) (rule [^)]*)\( \[[0-9]* times\]\)\{0,1\}$/\1/p' "$OUT")"
assert_match "summary on stderr" "12 of 19 events decided differently under default" "$(cat "$ERR")"

"$POLICY_TOOL" replay replay.jsonl -p default -p strict --home /home/u --tmpdir /tmp -q >"$OUT"
assert_eq "layered policies: exit 1" 1 $?
assert_match "strict's allow-list applies too" "exec /tmp/dropper" "$(cat "$OUT")"

cat >"$SANDBOX/permissive.json" <<'POL'
{"agenttrace": 1, "name": "permissive",
 "write": {"allow": ["/**"]}, "net": {"allow": ["*", "unix:**", "unix:@*"]}}
POL
"$POLICY_TOOL" replay replay.jsonl --policy "$SANDBOX/permissive.json" -q >"$OUT"
assert_eq "no differences: exit 0" 0 $?
assert_eq "no differences: nothing listed" "" "$(cat "$OUT")"

printf '{"agenttrace": 1, "bogus": 1}\n' >"$SANDBOX/bad.json"
"$POLICY_TOOL" replay replay.jsonl --policy "$SANDBOX/bad.json" >"$OUT" 2>"$ERR"
assert_eq "a bad policy: 125" 125 $?
assert_match "a bad policy: error with file and key" "bad.json:1:[0-9]+: " "$(cat "$ERR")"
"$POLICY_TOOL" replay "$SANDBOX/missing.jsonl" --policy default >"$OUT" 2>"$ERR"
assert_eq "a missing log: 125" 125 $?
"$POLICY_TOOL" replay >"$OUT" 2>"$ERR"
assert_eq "no log: 125" 125 $?
