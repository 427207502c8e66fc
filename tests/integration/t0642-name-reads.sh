#!/bin/bash
# A rename or a link gives a file a new name, and a read by that name is
# a read of the file: the name it had is judged as a read too
# (agenttrace-policy(5), DECISIONS, read).  `ln .env n2 && cat n2` reads
# the project's .env with an alert, as `cat .env` does; a link of a file
# a read rule denies is refused, under every backend.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

cat >"$SANDBOX/secrets.json" <<JSON
{"agenttrace": 1, "extends": "default",
 "read": {"deny": [{"id": "read.test-secrets", "path": "\${ROOT}/secrets/**",
                    "why": "the test's credentials"}]}}
JSON

# alert_rec_of SYSCALLS PATH: the read alert of PATH (the record's path
# or path2: both names of the call, in its order) by one of SYSCALLS
# (call names, separated by spaces).
alert_rec_of() {
	printf '%s' "event == 'alert' and action == 'alert' and kind == 'read' and rule_id == 'read.project-env' and (path == '$2' or path2 == '$2') and syscall in '$1'.split()"
}

# secrets_status DESC WANT COMMAND...: COMMAND's status under the current
# backend with the policy above.
secrets_status() {
	local desc=$1 want=$2
	shift 2
	bk_q --policy "$SANDBOX/secrets.json" -- "$@"
	assert_eq "$desc" "$want" $?
}

for B in auto preload; do
	backend_use "$B"
	sandbox_reset
	cd "$ROOT" || exit 99
	echo "TOKEN=project-secret" >"$ROOT/.env"

	bk_status "${BK}ln .env n2: exit 0" 0 -- ln .env n2
	assert_rec "${BK}ln .env n2: a read alert of .env" "$(alert_rec_of 'link linkat' "$ROOT/.env")"
	assert_rec "${BK}ln .env n2: the record names the new name" \
		"kind == 'read' and path == '$ROOT/.env' and path2 == '$ROOT/n2'"
	assert_file_content "${BK}ln .env n2: n2 is .env" "$ROOT/n2" "TOKEN=project-secret"

	bk_status "${BK}mv .env moved: exit 0" 0 -- mv .env moved
	assert_rec "${BK}mv .env moved: a read alert of .env" \
		"$(alert_rec_of 'rename renameat renameat2' "$ROOT/.env")"
	mv "$ROOT/moved" "$ROOT/.env"

	# An exchange moves both files: the one at the second name is read
	# by the first.
	echo plain >"$ROOT/plain"
	bk_status "${BK}exchange of plain and .env: exit 0" 0 -- "$TRY" exchange plain .env
	assert_rec "${BK}exchange of plain and .env: a read alert of .env" \
		"$(alert_rec_of 'renameat2' "$ROOT/.env")"
	assert_file_content "${BK}exchange of plain and .env: exchanged" "$ROOT/plain" \
		"TOKEN=project-secret"

	# What gets no new name is no read: a symlink (a read through it is
	# an open of .env, judged then), and files no read rule names.
	echo a >"$ROOT/a.txt"
	bk_allowed "mv and ln of ordinary files, ln -s .env" -- \
		sh -c 'mv a.txt b.txt && ln b.txt c.txt && ln -s .env s'

	# A file a read rule denies gets no new name to be read by.
	mkdir -p "$ROOT/secrets"
	echo "KEY-MATERIAL" >"$ROOT/secrets/key"
	secrets_status "${BK}link of a denied file: EACCES" "$EACCES" "$TRY" link secrets/key k2
	assert_rec "${BK}link of a denied file: deny record" \
		"$(deny_expr read read.test-secrets "$ROOT/secrets/key")$(bk_rec_backend)"
	assert_file_absent "${BK}link of a denied file: no new name" "$ROOT/k2"
	secrets_status "${BK}rename of a denied file: EACCES" "$EACCES" "$TRY" rename secrets/key k3
	assert_file_present "${BK}rename of a denied file: it stays" "$ROOT/secrets/key"
	secrets_status "${BK}exchange with a denied file: EACCES" "$EACCES" \
		"$TRY" exchange plain secrets/key
	assert_file_content "${BK}exchange with a denied file: nothing moved" "$ROOT/secrets/key" \
		"KEY-MATERIAL"

	# agenttrace-policy replay judges a recorded link or rename as the
	# run did: writes of both names and a read of the file that gets a
	# new name (an exchange: of both), so a policy that denies reading
	# it refuses the call on replay.
	mkdir -p "$ROOT/later"
	echo k >"$ROOT/later/one"
	echo b >"$ROOT/later/two"
	echo a >"$ROOT/third"
	# (A symlink's target is refused only by an explicit rule, there as
	# in the run.)
	bk_q --record -- sh -c 'ln later/one n-one && mv later/two n-two && "$1" exchange third plain &&
		ln -s /usr/bin/true n-link' \
		sh "$TRY"
	assert_eq "${BK}replay: the recorded run ran" 0 $?
	cp "$LOG" "$SANDBOX/names.jsonl"
	"$top_builddir/agenttrace-policy" replay "$SANDBOX/names.jsonl" --policy default >"$OUT" 2>"$ERR"
	assert_eq "${BK}replay under default: nothing decided differently" 0 $?
	[ -s "$OUT" ] && diag "$(head -c 1000 "$OUT")"
	# An exec record names the program the process ran (under the
	# preload backend the record's target, its exe the caller): a rule
	# that refuses agenttrace's own program, which starts the command,
	# changes nothing on replay.
	launcher=$(readlink -f "$AGENTTRACE")
	cat >"$SANDBOX/launcher.json" <<JSON
{"agenttrace": 1, "extends": "default",
 "exec": {"deny": [{"id": "exec.test-launcher", "argv": ["$launcher", "**"]}]}}
JSON
	"$top_builddir/agenttrace-policy" replay "$SANDBOX/names.jsonl" \
		--policy "$SANDBOX/launcher.json" >"$OUT" 2>"$ERR"
	assert_eq "${BK}replay: the exec records are judged as the programs they ran" 0 $?
	[ -s "$OUT" ] && diag "$(head -c 1000 "$OUT")"
	cat >"$SANDBOX/later.json" <<JSON
{"agenttrace": 1, "extends": "default",
 "read": {"deny": [{"id": "read.test-later", "path": "\${ROOT}/later/*"},
                   {"id": "read.test-plain", "path": "\${ROOT}/plain"}]}}
JSON
	"$top_builddir/agenttrace-policy" --root "$ROOT" replay "$SANDBOX/names.jsonl" \
		--policy "$SANDBOX/later.json" >"$OUT" 2>"$ERR"
	assert_eq "${BK}replay under a read deny: decided differently" 1 $?
	for n in one two; do
		assert_match "${BK}replay under a read deny: the new name of later/$n is now refused" \
			"now deny: write $ROOT/later/$n -> .* \\(rule read.test-later\\)" "$(cat "$OUT")"
	done
	assert_match "${BK}replay under a read deny: the exchange reads plain too" \
		"now deny: write $ROOT/third -> $ROOT/plain \\(rule read.test-plain\\)" "$(cat "$OUT")"
	rm -rf "$ROOT/later" "$ROOT/n-one" "$ROOT/n-two" "$ROOT/third" "$ROOT/n-link"
	cd "$SANDBOX" || exit 99
done

# A directory renamed gives what it holds new names too: the supervisor
# looks into it (the shim does not), and refuses a rename that takes a
# file out of a read deny rule's sight; one that keeps it there goes.
cat >"$SANDBOX/config.json" <<JSON
{"agenttrace": 1, "extends": "default",
 "read": {"deny": [{"id": "read.test-config", "path": "\${ROOT}/config/secrets.yml"},
                   {"id": "read.test-anywhere", "path": "\${ROOT}/**/token.txt"}]}}
JSON
cd "$ROOT" || exit 99
mkdir -p config/sub keep
echo "CONFIG-SECRET" >config/secrets.yml
echo plain >config/sub/other
echo "TOKEN" >keep/token.txt
at --policy "$SANDBOX/config.json" -- mv config c2 >"$OUT" 2>"$ERR"
assert_ne "mv of the directory holding a denied file: refused" 0 $?
assert_rec "mv of the directory holding a denied file: deny record" \
	"$(deny_expr read read.test-config "$ROOT/config") and 'config/secrets.yml' in why"
assert_file_present "mv of the directory holding a denied file: it stays" "$ROOT/config/secrets.yml"
at --policy "$SANDBOX/config.json" -- mv keep kept >"$OUT" 2>"$ERR"
assert_eq "mv of a directory whose denied file stays denied there: exit 0" 0 $?
assert_no_alert "mv of a directory whose denied file stays denied there: no alert"

# Padding the tree past the look's bounds (64 levels) does not hide it:
# what a read deny rule could name in it is refused all the same.  Masks
# off, so that the supervisor's refusal is all there is.
# The file lies past them, so that only the bound can refuse it.
deep=config2/$(printf 'a/%.0s' $(seq 66))
mkdir -p "$deep" && echo "CONFIG-SECRET" >"$deep/secrets.yml"
cat >"$SANDBOX/config2.json" <<JSON
{"agenttrace": 1, "extends": "default",
 "read": {"deny": [{"id": "read.test-config2", "path": "\${ROOT}/config2/**/secrets.yml"},
                   {"id": "read.test-vault", "path": "\${ROOT}/vault/**/key.pem"},
                   {"id": "read.test-private",
                    "path": "\${ROOT}/proj2/$(printf 'b/%.0s' $(seq 66))private/**"}]}}
JSON
at --mask off --policy "$SANDBOX/config2.json" -- \
	sh -c 'mv config2 "$TMPDIR/c2" && cat "$TMPDIR/c2/${1#config2/}secrets.yml"' sh "$deep" >"$OUT" 2>"$ERR"
assert_ne "mv of a padded directory holding a denied file: refused" 0 $?
if grep -q CONFIG-SECRET "$OUT"; then not_ok "mv of a padded directory: the secret is not printed"; else ok "mv of a padded directory: the secret is not printed"; fi
assert_rec "mv of a padded directory holding a denied file: deny record" \
	"$(deny_expr read read.test-config2 "$ROOT/config2") and 'deeper' in why"
# Another rule that could name something at the new name does not stand
# for the one that names the file here; under node_modules, where no
# write deny rule reaches.
mkdir -p vault/node_modules
at --mask off --policy "$SANDBOX/config2.json" -- mv config2 vault/node_modules/x >"$OUT" 2>"$ERR"
assert_ne "mv of a padded directory where another rule reaches: refused" 0 $?
assert_file_present "mv of a padded directory where another rule reaches: it stays" \
	"$ROOT/$deep/secrets.yml"
# A rule whose literal start lies inside the tree (a trailing "**"), the
# tree moved from above it.
mkdir -p "proj2/$(printf 'b/%.0s' $(seq 66))private"
echo "PRIVATE" >"proj2/$(printf 'b/%.0s' $(seq 66))private/token"
at --mask off --policy "$SANDBOX/config2.json" -- mv proj2 "$TMPDIR/p2" >"$OUT" 2>"$ERR"
assert_ne "mv of a padded tree above a private/** rule's start: refused" 0 $?
assert_rec "mv of a padded tree above a private/** rule's start: deny record" \
	"$(deny_expr read read.test-private "$ROOT/proj2")"

# A directory that takes an alerted file out of its rule's sight goes,
# with that alert: out of the project, or under node_modules.
mkdir -p app/sub && echo "TOKEN=app-secret" >app/sub/.env
at -- sh -c 'mv app "$TMPDIR/app" && cat "$TMPDIR/app/sub/.env"' >"$OUT" 2>"$ERR"
assert_eq "mv of a directory holding a .env out of the project: exit 0" 0 $?
assert_rec "mv of a directory holding a .env out of the project: its alert" \
	"event == 'alert' and action == 'alert' and kind == 'read' and rule_id == 'read.project-env' and path == '$ROOT/app' and '/sub/.env' in why"
mkdir -p app5 node_modules && echo "TOKEN=x" >app5/.env
at -- mv app5 node_modules/app5 >"$OUT" 2>"$ERR"
assert_eq "mv of a directory holding a .env into node_modules: exit 0" 0 $?
assert_rec "mv of a directory holding a .env into node_modules: its alert" \
	"event == 'alert' and kind == 'read' and rule_id == 'read.project-env' and path == '$ROOT/app5'"
mkdir -p app6 && echo "TOKEN=y" >app6/.env
at -- mv app6 app7 >"$OUT" 2>"$ERR"
assert_eq "mv of a directory holding a .env within the project: exit 0" 0 $?
assert_no_alert "mv of a directory holding a .env within the project: no alert (still in sight)"
cd "$SANDBOX" || exit 99

# The same under the ptrace engine, where the kernel has the notify one.
if [ "${AGENTTRACE_TEST_ENGINE:-}" != ptrace ]; then
	cd "$ROOT" || exit 99
	at --engine ptrace -- ln .env n4 >"$OUT" 2>"$ERR"
	assert_eq "--engine ptrace: ln .env n4: exit 0" 0 $?
	assert_rec "--engine ptrace: ln .env n4: a read alert of .env" \
		"$(alert_rec_of 'link linkat' "$ROOT/.env")"
	cd "$SANDBOX" || exit 99
fi
