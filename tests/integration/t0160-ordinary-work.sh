#!/bin/bash
# Ordinary work raises no record (agenttrace(1), agenttrace-policy(5)): what a
# passing test suite, an editor or a package manager does under the shipped
# policies is neither denied nor reported.  Each case was a false positive:
# anonymous temporary files (O_TMPFILE), pseudo-terminals, programs that
# Debian's alternatives name, directories that appeared in HOME, and the
# kernel's trace marker that a JavaScriptCore runtime opens.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

# The open Python's tempfile.TemporaryFile() tries first (O_TMPFILE: an
# unnamed file in DIR), then TemporaryFile() itself.
tmpfile_py='
import os, sys, tempfile
d = sys.argv[1]
fd = os.open(d, os.O_TMPFILE | os.O_RDWR, 0o600)
os.write(fd, b"x")
os.close(fd)
with tempfile.TemporaryFile(dir=d) as f:
    f.write(b"y")
with tempfile.TemporaryFile() as f:
    f.write(b"z")
'
# A pseudo-terminal pair as pty.openpty() makes it: /dev/ptmx, then the
# /dev/pts/N it names.
pty_py='
import os, pty
m, s = pty.openpty()
os.write(m, b"hi\n")
assert os.read(s, 3) == b"hi\n"
print(os.ttyname(s))
'

for B in auto preload; do
	backend_use "$B"

	# --- O_TMPFILE in the temp dir and in the project ---------------------
	bk_allowed "O_TMPFILE and TemporaryFile in TMPDIR" -- "$PYTHON" -c "$tmpfile_py" "$TMPDIR"
	bk_allowed "O_TMPFILE and TemporaryFile in ROOT" -- "$PYTHON" -c "$tmpfile_py" "$ROOT"
	mkdir -p "$ROOT/build"
	bk_allowed "O_TMPFILE and TemporaryFile in a directory of ROOT" -- \
		"$PYTHON" -c "$tmpfile_py" "$ROOT/build"
	if [ "$(id -u)" = 0 ]; then
		# /tmp itself, as the private /tmp of the session (a tmpfs of its
		# own: the test never touches the real /tmp).
		bk_q --private-tmp -- "$PYTHON" -c "$tmpfile_py" /tmp
		assert_eq "${BK}O_TMPFILE and TemporaryFile in /tmp (--private-tmp): exit 0" 0 $?
		assert_no_alert "${BK}O_TMPFILE and TemporaryFile in /tmp (--private-tmp): no alert record"
	else
		skip "${BK}O_TMPFILE and TemporaryFile in /tmp (--private-tmp)" "not root: no private /tmp"
	fi
	# The unnamed file gets its name by linkat(2) (AT_SYMLINK_FOLLOW of its
	# /proc/self/fd link, as open(2) shows), judged on that name.
	link_py='
import os, sys
fd = os.open(sys.argv[1], os.O_TMPFILE | os.O_WRONLY, 0o600)
root = os.open("/", os.O_RDONLY | os.O_DIRECTORY)
try:
    os.link("/proc/self/fd/%d" % fd, sys.argv[2], src_dir_fd=root, follow_symlinks=True)
except OSError as e:
    sys.exit(e.errno)
'
	bk_allowed "linkat of an O_TMPFILE file to a name in ROOT" -- "$PYTHON" -c "$link_py" "$ROOT" "$ROOT/named"
	assert_file_present "${BK}linkat of an O_TMPFILE file to a name in ROOT: the file is there" "$ROOT/named"
	bk_q -- "$PYTHON" -c "$link_py" "$ROOT" "$HOME/.bashrc"
	assert_eq "${BK}linkat of an O_TMPFILE file to HOME/.bashrc: EACCES" "$EACCES" $?
	assert_file_absent "${BK}linkat of an O_TMPFILE file to HOME/.bashrc: absent" "$HOME/.bashrc"
	assert_rec "${BK}linkat of an O_TMPFILE file to HOME/.bashrc: deny record" \
		"$(deny_expr write write.home.bashrc "$HOME/.bashrc")$(bk_rec_backend)"

	# --- pseudo-terminals, under default and strict ---------------------------
	for P in default strict; do
		bk_q --policy "$P" -- "$PYTHON" -c "$pty_py"
		assert_eq "${BK}$P: pty.openpty(): exit 0" 0 $?
		assert_match "${BK}$P: pty.openpty(): a /dev/pts terminal" '^/dev/pts/' "$(cat "$OUT")"
		assert_no_alert "${BK}$P: pty.openpty(): no alert record"
	done
	if have script; then
		bk_q -- script -qec 'tty' /dev/null </dev/null
		assert_eq "${BK}script(1): exit 0" 0 $?
		assert_match "${BK}script(1): the command ran on a /dev/pts terminal" '/dev/pts/' "$(cat "$OUT")"
		assert_no_alert "${BK}script(1): no alert record"
	else
		skip "${BK}script(1) makes a pty" "no script(1)"
	fi
	# --- strict: what its allow-list names, as Debian installs it -----------
	# which, vi and editor are alternatives (/etc/alternatives/NAME ->
	# which.debianutils, vim.basic): the program answers to the name it
	# was called by when that alternative leads to it.
	for c in "env true" "which ls" "vi --version" "editor --version" "man -w ls" "npm --version"; do
		set -- $c
		if ! have "$1"; then
			skip "${BK}strict: $c" "no $1 here"
			continue
		fi
		want=$(native "$@")
		bk_q --policy strict -- "$@"
		st=$?
		assert_eq "${BK}strict: $c: status as natively ($want)" "$want" "$st"
		[ "$st" = "$want" ] || diag "stderr:" "$(head -c 2000 "$ERR")"
		assert_no_alert "${BK}strict: $c: no alert record"
	done
	# A copy named like an alternative's target, called by the
	# alternative's name, is not that alternative.
	if [ -L /etc/alternatives/vi ]; then
		mkdir -p "$HOME/tools"
		cp /bin/true "$HOME/tools/$(basename "$(readlink -f /etc/alternatives/vi)")"
		bk_q --policy strict -- bash -c 'exec -a vi "$0"' "$HOME/tools/$(basename "$(readlink -f /etc/alternatives/vi)")"
		assert_eq "${BK}strict: a copy of another program run as vi: EACCES (126)" 126 $?
		assert_rec "${BK}strict: a copy of another program run as vi: denied by the allow-list" \
			"event == 'alert' and action == 'deny' and rule_id == 'exec.not-allowed'$(bk_rec_backend)"
	else
		skip "${BK}strict: a copy run as vi is no alternative" "no /etc/alternatives/vi"
	fi

	# --- HOME is left as the run found it --------------------------------------
	# Landlock grants only directories that exist, so the cache roots
	# (~/.cache, ~/go/pkg, ~/.m2/repository, ...) are made at start; those
	# the command left empty are gone again at the end.
	sandbox_reset
	before=$(cd "$HOME" && find . | sort)
	bk_allowed "a run that writes nothing in HOME" -- true
	assert_eq "${BK}HOME unchanged after a run" "$before" "$(cd "$HOME" && find . | sort)"
	bk_allowed "a run that fills a cache" -- sh -c \
		'mkdir -p "$HOME/.cache/pip" && echo x >"$HOME/.cache/pip/x"'
	assert_file_content "${BK}a cache write works" "$HOME/.cache/pip/x" x
	# Beneath a root whose parents are no write roots (~/go for ~/go/pkg,
	# Python's user site-packages): their mkdir is on the way to a root,
	# let through; a protected one (~/.ssh) is not.
	bk_allowed "a run that fills a cache whose parents it makes" -- sh -c \
		'mkdir -p "$HOME/go/pkg/mod" && echo y >"$HOME/go/pkg/mod/y" &&
		 mkdir -p "$HOME/.local/lib/python3.11/site-packages/p"'
	assert_file_content "${BK}a cache write below the parents made works" "$HOME/go/pkg/mod/y" y
	# The same where no root was made at start (no Landlock).
	bk_q --landlock off -- sh -c \
		'mkdir -p "$HOME/.m2/repository/g" && echo z >"$HOME/.m2/repository/g/z"'
	assert_eq "${BK}--landlock off: a cache whose parent it makes: exit 0" 0 $?
	assert_no_alert "${BK}--landlock off: a cache whose parent it makes: no alert record"
	assert_file_content "${BK}--landlock off: its write works" "$HOME/.m2/repository/g/z" z
	bk_q -- "$TRY" mkdir "$HOME/.ssh"
	assert_eq "${BK}mkdir HOME/.ssh is no way to a root: EACCES" "$EACCES" $?
	assert_rec "${BK}mkdir HOME/.ssh: denied by write.home.ssh" \
		"$(deny_expr write write.home.ssh "$HOME/.ssh")$(bk_rec_backend)"
	assert_file_absent "${BK}mkdir HOME/.ssh: absent" "$HOME/.ssh"
	made="./.cache ./.cache/pip ./.cache/pip/x ./go ./go/pkg ./go/pkg/mod ./go/pkg/mod/y"
	made="$made ./.local ./.local/lib ./.local/lib/python3.11 ./.local/lib/python3.11/site-packages"
	made="$made ./.local/lib/python3.11/site-packages/p ./.m2 ./.m2/repository ./.m2/repository/g"
	made="$made ./.m2/repository/g/z"
	assert_eq "${BK}HOME holds what the command made, nothing else" \
		"$(printf '%s\n' . $made | sort)" "$(cd "$HOME" && find . | sort)"
	sandbox_reset
done

# --- the kernel's trace marker ------------------------------------------------
# A JavaScriptCore runtime (Bun's single-file programs: Claude Code) opens
# the trace marker for writing at every start when tracefs is mounted.  A
# write there is a line in a kernel trace, no file: allowed, no record, not
# in changed_outside.  The files that change what the kernel traces stay
# refused.  tracefs is mounted in a mount namespace of the test's own, with
# agenttrace inside it (agenttrace refuses mounts to the command).
at_in_tracefs() {
	rm -f "$LOG"
	# Either may be mounted already (it often is): then it stays.
	(cd "$ROOT" && exec unshare -m --propagation private sh -c '
		[ -e /sys/kernel/debug/tracing/trace_marker ] ||
			mount -t debugfs none /sys/kernel/debug 2>/dev/null || exit 97
		[ -e /sys/kernel/tracing/trace_marker ] ||
			mount -t tracefs none /sys/kernel/tracing 2>/dev/null || exit 97
		[ -e /sys/kernel/debug/tracing/trace_marker ] && [ -e /sys/kernel/tracing/trace_marker ] || exit 97
		exec "$@"' sh timeout -k 5 "$AT_TIMEOUT" "$AGENTTRACE" --log "$LOG" "$@") >"$OUT" 2>"$ERR"
}
if [ "$(id -u)" != 0 ] || ! have unshare; then
	skip "the trace marker" "needs root and unshare(1) to mount tracefs in a namespace"
elif at_in_tracefs -- true; [ $? = 97 ]; then
	skip "the trace marker" "debugfs or tracefs cannot be mounted here"
else
	for m in /sys/kernel/debug/tracing/trace_marker /sys/kernel/tracing/trace_marker; do
		at_in_tracefs -- "$TRY" open-write "$m"
		assert_eq "a write to $m: exit 0" 0 $?
		assert_no_alert "a write to $m: no alert record"
		assert_rec "a write to $m: changes nothing outside" \
			"event == 'summary' and changed_outside == []"
	done
	# Opened only (O_RDWR, no O_TRUNC): refused before anything is written.
	at_in_tracefs -- "$TRY" open-rdwr /sys/kernel/debug/tracing/tracing_on
	assert_eq "tracing_on stays refused: EACCES" "$EACCES" $?
	assert_rec "tracing_on: denied by write.fallback" \
		"$(deny_expr write write.fallback /sys/kernel/debug/tracing/tracing_on)"
fi
