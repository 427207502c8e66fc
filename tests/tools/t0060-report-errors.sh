#!/bin/bash
# agenttrace-report exit status: 125 on bad usage or an unreadable log; a
# log of garbage, truncation and huge lines is reported, never fatal.
. "$top_srcdir/tests/tools/lib-tools.sh"

"$REPORT" >"$OUT" 2>"$ERR"
assert_eq "no LOG: 125" 125 $?
"$REPORT" "$DATA/run.jsonl" --format pdf >"$OUT" 2>"$ERR"
assert_eq "unknown format: 125" 125 $?
assert_match "unknown format is named" 'unknown format "pdf"' "$(cat "$ERR")"
"$REPORT" --bogus "$DATA/run.jsonl" >"$OUT" 2>"$ERR"
assert_eq "unknown option: 125" 125 $?
"$REPORT" "$SANDBOX/missing.jsonl" >"$OUT" 2>"$ERR"
assert_eq "missing log: 125" 125 $?
assert_match "missing log: says why" "cannot read .*missing.jsonl: No such file" "$(cat "$ERR")"
"$REPORT" "$SANDBOX" >"$OUT" 2>"$ERR"
assert_eq "a directory as log: 125" 125 $?
"$REPORT" "$DATA/run.jsonl" -o "$SANDBOX/no/such/dir/out" >"$OUT" 2>"$ERR"
assert_eq "unwritable -o: 125" 125 $?
"$REPORT" --help >"$OUT" 2>&1
assert_eq "--help: 0" 0 $?
assert_match "--help shows usage" "usage: agenttrace-report LOG" "$(cat "$OUT")"

# Garbage of every kind around one good record.
bad=$SANDBOX/bad.jsonl
{
	printf 'garbage\n'
	printf '\n'
	printf '[1,2,3]\n'
	printf '{"v":2,"event":"alert"}\n'
	printf '{"event":"alert"}\n'
	printf '{"v":1,"time":"2026-01-15T10:00:00.000Z","session":"s","seq":1,"event":"alert","pid":5,"ppid":1,"exe":"/bin/sh","argv":["sh"],"cwd":"/","action":"deny","mode":"enforce","kind":"write","path":"/etc/x","rule":"write.etc","why":"w","context":null,"backend":"ptrace"}\n'
	printf '{"v":1,"bad":"\xff\xfe"}\n'
	printf '{"v":1,"event":"alert","nul":"a\0b"}\n'
	head -c 5000000 /dev/zero | tr '\0' 'x'
	printf '\n'
	printf '{"v":1,"time":"2026-01-15T10:00:01.000Z","event":"exit","pid":5,'
} >"$bad"
"$REPORT" "$bad" >"$OUT" 2>"$ERR"
assert_eq "garbage log: exit 0" 0 $?
assert_match "garbage log: the good record is reported" "1 denied, 0 alerts" "$(cat "$OUT")"
assert_match "garbage log: 8 malformed lines counted" "8 malformed lines skipped" "$(cat "$OUT")"
assert_match "huge line named on stderr" "line longer than|not JSON" "$(cat "$ERR")"
for f in markdown html sarif junit; do
	"$REPORT" -q "$bad" -f "$f" >"$OUT" 2>"$ERR"
	assert_eq "garbage log, $f: exit 0" 0 $?
done

: >"$SANDBOX/empty.jsonl"
"$REPORT" "$SANDBOX/empty.jsonl" >"$OUT" 2>"$ERR"
assert_eq "empty log: exit 0" 0 $?
assert_match "empty log: no denials" "0 denied, 0 alerts" "$(cat "$OUT")"
