#!/bin/bash
# Read rules of the default policy (rules/default.json): credentials are denied, everything else is readable.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

mkdir -p "$HOME/.ssh" "$HOME/.aws"
printf 'SECRET-KEY-MATERIAL' >"$HOME/.ssh/id_ed25519"
printf 'ssh-ed25519 AAAA public' >"$HOME/.ssh/id_ed25519.pub"
printf '[default]\naws_secret_access_key=SECRET\n' >"$HOME/.aws/credentials"
printf 'plain' >"$HOME/notes.txt"
key=$HOME/.ssh/id_ed25519
# A process outside the session, for /proc/<pid>/environ.
sleep 60 &
outside=$!
bg_track "$outside"

# Every case under both backends: the shim alone does not see a static
# program or a raw syscall, and says so.
for B in auto preload; do
	backend_use "$B"

	bk_denied "read HOME/.ssh/id_ed25519" "$EACCES" read read. "$key" -- "$TRY" open-read "$key"
	assert_rec "${BK}read denial: errno EACCES in the record" "event == 'alert' and kind == 'read' and errno == 'EACCES'"

	bk -- cat "$key" >"$OUT" 2>"$ERR"
	assert_ne "${BK}cat of the private key fails" 0 $?
	if grep -q SECRET "$OUT"; then not_ok "${BK}cat of the private key prints nothing of it"; else ok "${BK}cat of the private key prints nothing of it"; fi
	assert_rec "${BK}cat of the private key: deny record" "$(deny_expr read read. "$key")$(bk_rec_backend)"

	bk_allowed "read HOME/.ssh/id_ed25519.pub" -- "$TRY" open-read "$key.pub"
	bk -- cat "$key.pub" >"$OUT" 2>"$ERR"
	assert_eq "${BK}cat of the public key works" 0 $?
	assert_file_content "${BK}cat of the public key prints it" "$OUT" 'ssh-ed25519 AAAA public'

	bk_allowed "read an ordinary HOME file" -- "$TRY" open-read "$HOME/notes.txt"
	bk_allowed "read /etc/passwd" -- "$TRY" open-read /etc/passwd

	bk_denied "read HOME/.aws/credentials" "$EACCES" read read. "$HOME/.aws/credentials" -- \
		"$TRY" open-read "$HOME/.aws/credentials"

	# A credential that does not exist: the open fails with ENOENT, as it
	# would natively, and leaves no record (npm looks up ~/.npmrc at every
	# start).  The call is answered, never run.
	bk_status "${BK}read a missing HOME/.npmrc: ENOENT, as natively" "$ENOENT" -- \
		"$TRY" open-read "$HOME/.npmrc"
	assert_no_alert "${BK}read a missing HOME/.npmrc: no record"
	bk_status "${BK}cat of a missing HOME/.npmrc: status as natively" "$(native cat "$HOME/.npmrc")" -- \
		cat "$HOME/.npmrc"
	assert_no_alert "${BK}cat of a missing HOME/.npmrc: no record"
	bk_status "${BK}read HOME/.aws/missing: ENOENT" "$ENOENT" -- "$TRY" open-read "$HOME/.aws/missing"
	assert_no_alert "${BK}read HOME/.aws/missing: no record"
	# ... and one that exists is still denied, and so is a write that would
	# create one (O_CREAT: a write, not a read).
	printf '//registry.example/:_authToken=SECRET' >"$HOME/.npmrc"
	bk_denied "read an existing HOME/.npmrc" "$EACCES" read read.npmrc "$HOME/.npmrc" -- \
		"$TRY" open-read "$HOME/.npmrc"
	rm -f "$HOME/.npmrc"
	bk_denied "create HOME/.bashrc (O_CREAT of a missing name)" "$EACCES" write write.home.bashrc \
		"$HOME/.bashrc" -- "$TRY" open-write "$HOME/.bashrc"
	assert_file_absent "${BK}create HOME/.bashrc: absent" "$HOME/.bashrc"
	# A write open without O_CREAT of a missing name outside the write
	# roots (openpty(3) probing BSD ptys): ENOENT, no record.
	bk_status "${BK}O_RDWR of a missing HOME/.ptyzz: ENOENT" "$ENOENT" -- "$TRY" open-rdwr "$HOME/.ptyzz"
	assert_no_alert "${BK}O_RDWR of a missing name: no record"
	if [ "$B" = auto ]; then
		bk_status "raw openat of a missing HOME/.npmrc: ENOENT" "$ENOENT" -- \
			"$TRY" raw-openat-read "$HOME/.npmrc"
		assert_no_alert "raw openat of a missing HOME/.npmrc: no record"
	fi

	# A listing is not a read of a file's bytes (agenttrace-policy(5)): an
	# O_DIRECTORY open does not stop, even under ~/.aws/**.  What its
	# descriptor leads to is an open of its own, and is judged.
	bk -- ls -a "$HOME/.aws" >"$OUT" 2>"$ERR"
	assert_eq "${BK}ls HOME/.aws (O_DIRECTORY open) works" 0 $?
	assert_match "${BK}ls HOME/.aws lists the names" '(^| )credentials( |$)' "$(cat "$OUT")"
	assert_no_alert "${BK}ls HOME/.aws: no alert"
	if [ -n "$PYTHON" ]; then
		dirwalk='
import os, sys
what, d = sys.argv[1], sys.argv[2]
try:
    if what == "file-as-dir":
        os.open(d, os.O_RDONLY | os.O_DIRECTORY)
    else:
        fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
        if what == "openat":
            os.read(os.open("credentials", os.O_RDONLY, dir_fd=fd), 100)
        elif what == "fchdir":
            os.fchdir(fd)
            os.read(os.open("credentials", os.O_RDONLY), 100)
except OSError as e:
    sys.exit(e.errno)
'
		bk_denied "openat(O_DIRECTORY fd of HOME/.aws, credentials)" "$EACCES" read read. \
			"$HOME/.aws/credentials" -- "$PYTHON" -c "$dirwalk" openat "$HOME/.aws"
		bk_denied "fchdir(O_DIRECTORY fd of HOME/.aws), open credentials" "$EACCES" read read. \
			"$HOME/.aws/credentials" -- "$PYTHON" -c "$dirwalk" fchdir "$HOME/.aws"
		bk_q -- "$PYTHON" -c "$dirwalk" file-as-dir "$key"
		assert_eq "${BK}O_DIRECTORY open of the key itself: ENOTDIR" 20 $?
		assert_no_alert "${BK}O_DIRECTORY open of the key itself: no alert (no byte read)"
	else
		skip "${BK}opens relative to an O_DIRECTORY descriptor" "no python3"
	fi

	ln -sfn "$key" "$ROOT/innocent"
	bk_denied "read the key through a symlink in ROOT" "$EACCES" read read. "$key" -- "$TRY" open-read "$ROOT/innocent"

	bk_denied "read the key through ../" "$EACCES" read read. "$key" -- "$TRY" open-read ../home/.ssh/id_ed25519

	if [ -z "$TRY_STATIC" ]; then
		skip "${BK}static binary reads the key" "no static helper (static linking unavailable)"
	elif [ "$B" = auto ]; then
		bk_denied "static binary reads the key" "$EACCES" read read. "$key" -- "$TRY_STATIC" open-read "$key"
	else
		bk_escapes "static binary reads the key" 0 -- "$TRY_STATIC" open-read "$key"
		assert_rec "${BK}static binary reads the key: listed as unseen" "$BYPASSABLE and '$TRY_STATIC' in unseen"
	fi

	if [ "$B" = auto ]; then
		bk_denied "raw openat of the key" "$EACCES" read read. "$key" -- "$TRY" raw-openat-read "$key"
	else
		bk_escapes "raw openat of the key" 0 -- "$TRY" raw-openat-read "$key"
	fi

	# /proc/*/environ: the session's own processes are fine ...
	bk_allowed "read /proc/self/environ" -- "$TRY" open-read /proc/self/environ
	bk_allowed "read /proc/<own pid>/environ" -- sh -c 'exec "$0" open-read /proc/$$/environ' "$TRY"

	# ... a process outside the session is not.
	bk -- "$TRY" open-read "/proc/$outside/environ" >"$OUT" 2>"$ERR"
	assert_eq "${BK}read /proc/<outside pid>/environ: EACCES" "$EACCES" $?
	assert_rec "${BK}read /proc/<outside pid>/environ: deny record" \
		"event == 'alert' and action == 'deny' and kind == 'read' and pre(path, '/proc/') and pre(rule_id, 'read.')$(bk_rec_backend)"
done
kill "$outside" 2>/dev/null
