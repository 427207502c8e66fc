#!/bin/bash
# An open for writing that also reads its file is a read as much as a
# read-only open of it (agenttrace-policy(5), DECISIONS, read): "r+" and
# "a+" of the project's .env alert as "r" does, and a file a read rule
# denies is refused however it is opened.  An open that empties its file
# (O_TRUNC) or only makes a new one (O_CREAT|O_EXCL) reads nothing.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

cat >"$SANDBOX/secret.json" <<'JSON'
{"agenttrace": 1, "extends": "default",
 "read": {"deny": [{"id": "read.test-secret", "path": "${ROOT}/secret-*", "why": "a test's secret"}]}}
JSON

# open_py MODE PATH: prints what Python's open(PATH, MODE) read, exit 0;
# exits with the errno of a refused open.
open_py() {
	printf '%s' "
import os, sys
try:
    f = open(sys.argv[2], sys.argv[1])
except OSError as e:
    sys.exit(e.errno)
if 'r' in sys.argv[1] or '+' in sys.argv[1]:
    f.seek(0)
    print(repr(f.read()))
f.close()
"
}

# osopen FLAGS PATH: os.open(PATH, FLAGS) (FLAGS an expression over os.O_*).
osopen() {
	printf '%s' "
import os, sys
try:
    os.close(os.open(sys.argv[2], eval(sys.argv[1]), 0o600))
except OSError as e:
    sys.exit(e.errno)
"
}

# reopen_unlinked FLAGS NAME: NAME kept by an O_PATH descriptor, unlinked,
# then opened through the descriptor's /proc link with FLAGS; prints
# what it read, exits with the errno of a refused open.
reopen_unlinked() {
	printf '%s' "
import os, sys
p = os.open(sys.argv[2], os.O_PATH)
os.unlink(sys.argv[2])
try:
    fd = os.open('/proc/self/fd/%d' % p, eval(sys.argv[1]))
except OSError as e:
    sys.exit(e.errno)
print(repr(os.read(fd, 100)))
"
}

env_alert() {
	printf '%s' "event == 'alert' and action == 'alert' and kind == 'read' and rule_id == 'read.project-env' and path == '$ROOT/.env'"
}

for B in auto preload; do
	backend_use "$B"
	sandbox_reset
	cd "$ROOT" || exit 99

	for m in r+ a+; do
		echo "TOKEN=project-secret" >"$ROOT/.env"
		bk_status "${BK}open .env $m: exit 0" 0 -- "$PYTHON" -c "$(open_py)" "$m" .env
		assert_match "${BK}open .env $m: the program read it" "TOKEN=project-secret" "$(cat "$OUT")"
		assert_rec "${BK}open .env $m: a read alert" "$(env_alert) and pre(flags, 'O_RDWR')"
	done
	bk_status "${BK}O_RDONLY|O_CREAT of .env: exit 0" 0 -- \
		"$PYTHON" -c "$(osopen)" 'os.O_RDONLY | os.O_CREAT' .env
	assert_rec "${BK}O_RDONLY|O_CREAT of .env: a read alert" \
		"$(env_alert) and pre(flags, 'O_RDONLY|O_CREAT')"
	# Nothing is read of a file emptied first, or made new.
	bk_allowed "open .env w+ (O_TRUNC)" -- "$PYTHON" -c "$(open_py)" w+ .env
	assert_file_content "${BK}open .env w+: emptied" "$ROOT/.env" ""
	rm -f "$ROOT/.env"
	bk_allowed "O_RDWR|O_CREAT|O_EXCL of a new .env" -- \
		"$PYTHON" -c "$(osopen)" 'os.O_RDWR | os.O_CREAT | os.O_EXCL' .env
	bk_allowed "O_WRONLY|O_APPEND of .env" -- \
		"$PYTHON" -c "$(osopen)" 'os.O_WRONLY | os.O_APPEND' .env

	# A file a read rule denies: refused for reading and writing too.
	echo "KEY-MATERIAL" >"$ROOT/secret-key"
	for m in r+ a+; do
		bk_q --policy "$SANDBOX/secret.json" -- "$PYTHON" -c "$(open_py)" "$m" secret-key
		assert_eq "${BK}open of a denied file $m: EACCES" "$EACCES" $?
		assert_rec "${BK}open of a denied file $m: deny record" \
			"$(deny_expr read read.test-secret "$ROOT/secret-key") and pre(flags, 'O_RDWR')$(bk_rec_backend)"
		check "${BK}open of a denied file $m: nothing of it was read" \
			sh -c '! grep -q KEY-MATERIAL "$1"' - "$OUT"
	done
	assert_file_content "${BK}the denied file is unchanged" "$ROOT/secret-key" "KEY-MATERIAL"
	# A name that does not exist: the kernel's ENOENT, no record.
	bk_q --policy "$SANDBOX/secret.json" -- "$TRY" open-rdwr "$ROOT/secret-missing"
	assert_eq "${BK}O_RDWR of a missing denied name: ENOENT" "$ENOENT" $?
	assert_no_alert "${BK}O_RDWR of a missing denied name: no record"

	# A file kept by a descriptor and unlinked is read through the
	# descriptor's link: judged as a read of the name it had, and no
	# lookup of that (now missing) name stands for the kernel's answer.
	for fl in os.O_RDONLY os.O_RDWR; do
		echo "TOKEN=project-secret" >"$ROOT/.env"
		bk_status "${BK}unlinked .env reopened ($fl): exit 0" 0 -- \
			"$PYTHON" -c "$(reopen_unlinked)" "$fl" .env
		assert_match "${BK}unlinked .env reopened ($fl): read" "project-secret" "$(cat "$OUT")"
		assert_rec "${BK}unlinked .env reopened ($fl): a read alert" \
			"event == 'alert' and action == 'alert' and kind == 'read' and rule_id == 'read.project-env' and path == '$ROOT/.env (deleted)'"
		echo "KEY-MATERIAL" >"$ROOT/secret-key"
		bk_q --mask off --policy "$SANDBOX/secret.json" -- "$PYTHON" -c "$(reopen_unlinked)" "$fl" secret-key
		assert_eq "${BK}unlinked denied file reopened ($fl): EACCES" "$EACCES" $?
		assert_rec "${BK}unlinked denied file reopened ($fl): deny record" \
			"event == 'alert' and action == 'deny' and kind == 'read' and rule_id == 'read.test-secret' and path == '$ROOT/secret-key (deleted)'"
	done
	cp "$LOG" "$SANDBOX/unlinked.jsonl"
	"$top_builddir/agenttrace-policy" --root "$ROOT" replay "$SANDBOX/unlinked.jsonl" \
		--policy "$SANDBOX/secret.json" >"$OUT" 2>"$ERR"
	assert_eq "${BK}replay of the unlinked file's denial: decided as the run did" 0 $?
	[ -s "$OUT" ] && diag "$(head -c 1000 "$OUT")"

	# Replay judges a recorded O_RDWR open as the run did: a write and a
	# read of the file, so a policy that denies reading it refuses it.
	echo "v=1" >"$ROOT/settings.ini"
	bk_q --record -- "$PYTHON" -c "$(open_py)" r+ settings.ini
	assert_eq "${BK}replay: the recorded run ran" 0 $?
	cp "$LOG" "$SANDBOX/rdwr.jsonl"
	"$top_builddir/agenttrace-policy" replay "$SANDBOX/rdwr.jsonl" --policy default >"$OUT" 2>"$ERR"
	assert_eq "${BK}replay under default: nothing decided differently" 0 $?
	[ -s "$OUT" ] && diag "$(head -c 1000 "$OUT")"
	cat >"$SANDBOX/settings.json" <<'JSON'
{"agenttrace": 1, "extends": "default",
 "read": {"deny": [{"id": "read.test-settings", "path": "${ROOT}/settings.ini"}]}}
JSON
	"$top_builddir/agenttrace-policy" --root "$ROOT" replay "$SANDBOX/rdwr.jsonl" \
		--policy "$SANDBOX/settings.json" >"$OUT" 2>"$ERR"
	assert_eq "${BK}replay under a read deny: decided differently" 1 $?
	assert_match "${BK}replay under a read deny: the O_RDWR open is now refused" \
		"now deny: .*$ROOT/settings.ini.*\\(rule read.test-settings\\)" "$(cat "$OUT")"
	cd "$SANDBOX" || exit 99
done

# The ptrace engine decides the same events.
backend_use auto
cd "$ROOT" || exit 99
echo "TOKEN=project-secret" >"$ROOT/.env"
at_q --engine ptrace -- "$PYTHON" -c "$(open_py)" r+ .env
assert_eq "ptrace engine: open .env r+: exit 0" 0 $?
assert_rec "ptrace engine: open .env r+: a read alert" "$(env_alert) and pre(flags, 'O_RDWR')"
echo "KEY-MATERIAL" >"$ROOT/secret-key"
at_q --engine ptrace --policy "$SANDBOX/secret.json" -- "$TRY" open-rdwr "$ROOT/secret-key"
assert_eq "ptrace engine: O_RDWR of a denied file: EACCES" "$EACCES" $?
assert_rec "ptrace engine: O_RDWR of a denied file: deny record" \
	"$(deny_expr read read.test-secret "$ROOT/secret-key")"
at_q --engine ptrace --mask off --policy "$SANDBOX/secret.json" -- \
	"$PYTHON" -c "$(reopen_unlinked)" os.O_RDONLY secret-key
assert_eq "ptrace engine: unlinked denied file reopened: EACCES" "$EACCES" $?
echo "TOKEN=project-secret" >"$ROOT/.env"
at_q --engine ptrace -- "$PYTHON" -c "$(reopen_unlinked)" os.O_RDONLY .env
assert_eq "ptrace engine: unlinked .env reopened: exit 0" 0 $?
assert_rec "ptrace engine: unlinked .env reopened: a read alert" \
	"event == 'alert' and action == 'alert' and rule_id == 'read.project-env' and path == '$ROOT/.env (deleted)'"
cd "$SANDBOX" || exit 99

