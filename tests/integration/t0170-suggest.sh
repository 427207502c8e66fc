#!/bin/bash
# The fix a denial suggests is a fix (agenttrace(1), RECORDS; agenttrace-policy(5),
# LAYERING): "suggest" is a policy layer, "suggest_option" the command-line
# option; each, applied as given, admits the denied event on the next run,
# and a different protected object is still denied.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

# A UNIX socket that listens, for the container-engine deny rule.
sock_py='
import os, socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1])
s.listen(16)
open(sys.argv[1] + ".up", "w").close()
s.settimeout(120)
while True:
    try:
        s.accept()[0].close()
    except Exception:
        break
'
listen_unix() {
	mkdir -p "$(dirname "$1")"
	"$PYTHON" -c "$sock_py" "$1" >/dev/null 2>&1 &
	bg_track $!
	for _ in $(seq 100); do [ -e "$1.up" ] && return 0; sleep 0.05; done
	return 1
}
listen_unix "$ROOT/run/docker.sock"
listen_unix "$ROOT/run2/docker.sock"

# The objects exist: a layer's new write root is granted by Landlock only
# when it does (agenttrace(1), --landlock; a new file outside every root
# is refused with landlock.outside-roots, and its record says why).
mkdir -p "$HOME/.aws" "$ROOT/.git/hooks" "$HOME/tools" "$SANDBOX/outside/.cache/pip"
printf '[default]\nsecret=1\n' >"$HOME/.aws/credentials"
printf '[default]\nsecret=2\n' >"$HOME/.aws/config"
printf '#!/bin/sh\nexit 0\n' >"$ROOT/bin/sudo"
printf '#!/bin/sh\nexit 0\n' >"$ROOT/bin/pip"
chmod 0755 "$ROOT/bin/pip"
cp /bin/true "$HOME/tools/mytool"
cp /bin/true "$HOME/tools/othertool"
chmod 0755 "$ROOT/bin/sudo"

# fix DESC POLICY WANT_OPTION DENIED... -- OTHER...: the run of DENIED (a
# command) is denied with a record carrying a suggestion (and an option
# unless WANT_OPTION is "none"); then DENIED runs under that layer, and
# under that option, exiting 0 without a denial, while OTHER (another
# protected object) is still denied under each.
fix() {
	local desc=$1 policy=$2 want_option=$3 st layer opt
	local -a denied=() other=() popt=()
	shift 3
	while [ "$1" != -- ]; do denied+=("$1"); shift; done
	shift
	other=("$@")
	[ "$policy" = default ] || popt=(--policy "$policy")

	bk_q "${popt[@]}" -- "${denied[@]}"
	st=$?
	assert_ne "${BK}$desc: denied first" 0 "$st"
	layer=$(rec_field "event == 'alert' and action == 'deny' and has('suggest')" suggest)
	opt=$(rec_field "event == 'alert' and action == 'deny' and has('suggest')" suggest_option)
	[ "$opt" = null ] && opt=
	if [ -z "$layer" ]; then
		not_ok "${BK}$desc: the denial suggests a layer"
		rec_dump
		return
	fi
	ok "${BK}$desc: the denial suggests a layer"
	printf '%s\n' "$layer" >"$SANDBOX/fix.json"
	check "${BK}$desc: the layer is a valid policy file" \
		env HOME="$HOME" "$top_builddir/agenttrace-policy" --root "$ROOT" check "$SANDBOX/fix.json"
	assert_match "${BK}$desc: the layer extends the run's policy" "\"extends\":\"$policy\"" "$layer"

	bk_q --policy "$SANDBOX/fix.json" -- "${denied[@]}"
	st=$?
	assert_eq "${BK}$desc: admitted under the layer" 0 "$st"
	[ "$st" = 0 ] || diag "layer: $layer" "$(head -c 1500 "$ERR")"
	assert_no_rec "${BK}$desc: no denial under the layer" "event == 'alert' and action == 'deny'"
	bk_q --policy "$SANDBOX/fix.json" -- "${other[@]}"
	assert_ne "${BK}$desc: under the layer, another protected object is still denied" 0 $?
	assert_rec "${BK}$desc: under the layer, its denial is recorded" \
		"event == 'alert' and action == 'deny'"

	if [ "$want_option" = none ]; then
		assert_eq "${BK}$desc: no option suggested (none admits only this)" "" "$opt"
		return
	fi
	if [ -z "$opt" ]; then
		not_ok "${BK}$desc: the denial suggests an option"
		return
	fi
	assert_match "${BK}$desc: the option is $want_option" "^$want_option '" "$opt"
	eval "set -- $opt"
	bk_q "${popt[@]}" "$@" -- "${denied[@]}"
	st=$?
	assert_eq "${BK}$desc: admitted with $opt" 0 "$st"
	[ "$st" = 0 ] || diag "$(head -c 1500 "$ERR")"
	assert_no_rec "${BK}$desc: no denial with the option" "event == 'alert' and action == 'deny'"
	bk_q "${popt[@]}" "$@" -- "${other[@]}"
	assert_ne "${BK}$desc: with the option, another protected object is still denied" 0 $?
}

cat >"$SANDBOX/secret.json" <<'EOF'
{"agenttrace": 1, "extends": "default",
 "read": {"deny": [{"id": "read.test-secret", "path": "${ROOT}/secret-*", "why": "a test's secret"}]}}
EOF

for B in auto preload; do
	backend_use "$B"
	: >"$ROOT/.git/config"
	: >"$HOME/.bashrc"
	: >"$SANDBOX/outside/x"

	fix "write .git/config (write.git-config)" default --allow-write \
		"$TRY" open-write "$ROOT/.git/config" -- "$TRY" open-write "$ROOT/.git/hooks/pre-commit"
	fix "write HOME/.bashrc (write.home.bashrc)" default --allow-write \
		"$TRY" open-write "$HOME/.bashrc" -- "$TRY" open-write "$HOME/.profile"
	fix "write outside every root (write.fallback)" default --allow-write \
		"$TRY" open-write "$SANDBOX/outside/x" -- "$TRY" open-write "$SANDBOX/outside/y"
	fix "a write in a cache directory outside the roots" default --allow-write \
		"$TRY" open-write "$SANDBOX/outside/.cache/pip/x" -- "$TRY" open-write "$HOME/.ssh/authorized_keys"
	fix "read HOME/.aws/credentials (read.aws)" default --allow-read \
		"$TRY" open-read "$HOME/.aws/credentials" -- "$TRY" open-read "$HOME/.aws/config"
	fix "connect to a docker.sock (net.docker)" default --allow-net \
		"$TRY" connect-unix "$ROOT/run/docker.sock" -- "$TRY" connect-unix "$ROOT/run2/docker.sock"
	fix "sudo (exec.privilege): its very arguments" default none \
		"$ROOT/bin/sudo" make install -- "$ROOT/bin/sudo" -i
	fix "strict: a program off the allow-list (exec.not-allowed)" strict --allow-exec \
		"$HOME/tools/mytool" -- "$HOME/tools/othertool"

	# A link gives the file a new name, and is a read of it as well as a
	# write of two names: the rule that refused the read goes to the
	# layer's read section, where it admits the read.
	printf 'k1\n' >"$ROOT/secret-1"
	printf 'k2\n' >"$ROOT/secret-2"
	fix "link a read-denied file of the project (read.test-secret)" "$SANDBOX/secret.json" \
		--allow-read sh -c 'rm -f "$2" && exec "$1" link "$3" "$2"' - "$TRY" "$ROOT/s1" "$ROOT/secret-1" -- \
		"$TRY" link "$ROOT/secret-2" "$ROOT/s2"
	rm -f "$ROOT/s1" "$ROOT/s2" "$ROOT/secret-1" "$ROOT/secret-2"
	# An open for reading and writing reads the file: the read rule
	# that refused it is the one the layer overrides.
	printf 'k1\n' >"$ROOT/secret-1"
	printf 'k2\n' >"$ROOT/secret-2"
	fix "O_RDWR of a read-denied file of the project (read.test-secret)" "$SANDBOX/secret.json" \
		--allow-read "$TRY" open-rdwr "$ROOT/secret-1" -- "$TRY" open-rdwr "$ROOT/secret-2"
	rm -f "$ROOT/secret-1" "$ROOT/secret-2"
	printf 'SECRET=1\n' >"$ROOT/.env"
	bk_q -- "$TRY" link "$ROOT/.env" "$ROOT/env2"
	assert_eq "${BK}link .env: made, with an alert" 0 $?
	layer=$(rec_field "event == 'alert' and action == 'alert' and rule_id == 'read.project-env'" suggest)
	assert_match "${BK}link .env: the layer's rule is a read rule" '"read":\{"allow":\[\{"path":' "$layer"
	printf '%s\n' "$layer" >"$SANDBOX/fix.json"
	rm -f "$ROOT/env2"
	bk_q --policy "$SANDBOX/fix.json" -- "$TRY" link "$ROOT/.env" "$ROOT/env2"
	assert_eq "${BK}link .env under the layer: made" 0 $?
	assert_no_alert "${BK}link .env under the layer: no alert"
	rm -f "$ROOT/env2" "$ROOT/.env"

	# An alert (a package install) suggests the layer that silences that
	# very alert; another install still alerts.  No option can.
	bk_q -- "$ROOT/bin/pip" install requests
	assert_eq "${BK}pip install: runs, with an alert" 0 $?
	layer=$(rec_field "event == 'alert' and action == 'alert' and rule_id == 'exec.install.pip'" suggest)
	assert_match "${BK}pip install: the alert suggests a layer" '"overrides":\["exec.install.pip"\]' "$layer"
	assert_no_rec "${BK}pip install: no option for an alert" "event == 'alert' and has('suggest_option')"
	printf '%s\n' "$layer" >"$SANDBOX/fix.json"
	bk_q --policy "$SANDBOX/fix.json" -- "$ROOT/bin/pip" install requests
	assert_eq "${BK}pip install under the layer: runs" 0 $?
	assert_no_alert "${BK}pip install under the layer: no alert"
	bk_q --policy "$SANDBOX/fix.json" -- "$ROOT/bin/pip" install evil
	assert_rec "${BK}another pip install under the layer: still alerts" \
		"event == 'alert' and action == 'alert' and rule_id == 'exec.install.pip'"
	bk_q --policy "$SANDBOX/fix.json" -- "$TRY" exec "$ROOT/bin/sudo" true
	assert_eq "${BK}under the layer, default is no exec allow-list: sudo is still denied (EACCES)" \
		"$EACCES" $?

	# The fix is a fix with the masks too (agenttrace(1) --mask): what it
	# admits is not masked, so the very bytes are read (an empty mask
	# would open as well) and a protected file is written.
	mkdir -p "$HOME/.ssh"
	printf 'SECRET-KEY\n' >"$HOME/.ssh/id_rsa"
	bk_q -- cat "$HOME/.ssh/id_rsa"
	assert_ne "${BK}cat ~/.ssh/id_rsa: denied first" 0 $?
	layer=$(rec_field "event == 'alert' and action == 'deny' and rule_id == 'read.ssh-keys'" suggest)
	opt=$(rec_field "event == 'alert' and action == 'deny' and rule_id == 'read.ssh-keys'" suggest_option)
	printf '%s\n' "$layer" >"$SANDBOX/fix.json"
	bk_q --policy "$SANDBOX/fix.json" -- cat "$HOME/.ssh/id_rsa"
	assert_eq "${BK}cat ~/.ssh/id_rsa under the suggested layer: the key's bytes" SECRET-KEY "$(cat "$OUT")"
	eval "set -- $opt"
	bk_q "$@" -- cat "$HOME/.ssh/id_rsa"
	assert_eq "${BK}cat ~/.ssh/id_rsa with $opt: the key's bytes" SECRET-KEY "$(cat "$OUT")"
	bk_q -- sh -c 'cat "$HOME/.ssh/id_rsa"; true'
	assert_eq "${BK}cat ~/.ssh/id_rsa without the fix: nothing" "" "$(cat "$OUT")"
	rm -rf "$HOME/.ssh"
	mkdir -p "$ROOT/.github/workflows"
	bk_q --allow-write '${ROOT}/.github/workflows/ci.yml' -- sh -c 'echo on: push > .github/workflows/ci.yml'
	assert_eq "${BK}--allow-write of a file in a protected tree: written" 0 $?
	assert_file_content "${BK}--allow-write of a file in a protected tree: its content" \
		"$ROOT/.github/workflows/ci.yml" "on: push"
	rm -rf "$ROOT/.github"

	# agenttrace's own protections admit no suggestion.
	bk_q -- "$TRY" open-write "$LOG"
	assert_rec "${BK}a write of the log is denied" "event == 'alert' and action == 'deny' and rule_id == 'write.agenttrace-log'"
	assert_no_rec "${BK}a write of the log: no suggestion" "rule_id == 'write.agenttrace-log' and has('suggest')"
	# A log that is a device protects nothing: --log /dev/null keeps
	# none, and the command writes to /dev/null as it would natively.
	if [ "$B" = auto ]; then set --; else set -- --backend "$B"; fi
	(cd "$ROOT" && timeout -k 5 "$AT_TIMEOUT" "$AGENTTRACE" "$@" --log /dev/null -- \
		sh -c 'echo x >/dev/null') >"$OUT" 2>"$ERR"
	assert_eq "${BK}--log /dev/null: the command writes to /dev/null" 0 $?
	check "${BK}--log /dev/null: no denial" sh -c '! grep -q "denied write" "$1"' - "$ERR"
done
