#!/bin/bash
# Write rules (agenttrace-policy(5)) of the default policy (rules/default.json): allowed under ROOT,
# denied for HOME dotfiles and for code that runs later (.git/hooks, CI
# definitions), whatever way the path is reached.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

bashrc=$HOME/.bashrc
bashrc_intact() {
	assert_file_content "${BK}$1: $bashrc unchanged" "$bashrc" orig
}

# Every case under both backends; what the shim alone cannot see is said
# where it differs.
for B in auto preload; do
	backend_use "$B"
	sandbox_reset
	printf 'orig' >"$bashrc"
	chmod 0644 "$bashrc"
	mkdir -p "$ROOT/.git/hooks" "$ROOT/.github/workflows" "$ROOT/sub/.git/hooks"
	printf 'hook' >"$ROOT/.git/hooks/pre-commit"

	# --- allowed -------------------------------------------------------------
	bk_allowed "write under ROOT" -- "$TRY" open-write "$ROOT/file.txt"
	assert_file_content "${BK}write under ROOT: file written" "$ROOT/file.txt" x

	bk_allowed "relative write in cwd (ROOT)" -- "$TRY" creat rel.txt
	assert_file_present "${BK}relative write: file created" "$ROOT/rel.txt"

	bk_allowed "write under TMPDIR" -- "$TRY" open-write "$TMPDIR/t.txt"
	assert_file_present "${BK}write under TMPDIR: file created" "$TMPDIR/t.txt"

	bk_allowed "write /dev/null" -- "$TRY" open-write /dev/null

	bk_allowed "dirfd-relative write under ROOT" -- "$TRY" openat-dirfd "$ROOT" dirfd.txt
	assert_file_present "${BK}dirfd-relative write: file created" "$ROOT/dirfd.txt"

	printf 'r' >"$ROOT/r1"
	bk_allowed "rename within ROOT" -- "$TRY" rename "$ROOT/r1" "$ROOT/r2"
	assert_file_present "${BK}rename within ROOT: target exists" "$ROOT/r2"
	bk_allowed "hard link within ROOT" -- "$TRY" link "$ROOT/r2" "$ROOT/r3"
	assert_file_present "${BK}hard link within ROOT: link exists" "$ROOT/r3"
	bk_allowed "symlink within ROOT" -- "$TRY" symlink r2 "$ROOT/r4"
	assert_file_present "${BK}symlink within ROOT: link exists" "$ROOT/r4"
	bk_allowed "unlink within ROOT" -- "$TRY" unlink "$ROOT/r3"
	assert_file_absent "${BK}unlink within ROOT: gone" "$ROOT/r3"
	bk_allowed "mkdir within ROOT" -- "$TRY" mkdir "$ROOT/newdir"
	assert_file_present "${BK}mkdir within ROOT: exists" "$ROOT/newdir"
	bk_allowed "chmod within ROOT" -- "$TRY" chmod "$ROOT/r2"
	assert_eq "${BK}chmod within ROOT: mode changed" 600 "$(stat -c %a "$ROOT/r2")"
	bk_allowed "truncate within ROOT" -- "$TRY" truncate "$ROOT/r2"
	assert_eq "${BK}truncate within ROOT: size 0" 0 "$(stat -c %s "$ROOT/r2")"
	bk_allowed "/proc/self/fd write under ROOT" -- "$TRY" proc-fd-write "$ROOT/r2"
	assert_file_content "${BK}/proc/self/fd write under ROOT: written" "$ROOT/r2" x

	# A shell redirection and a real tool: the common shape.
	bk_allowed "sh redirection under ROOT" -- sh -c 'echo hi > out.txt && cp out.txt copy.txt'
	assert_file_content "${BK}sh redirection under ROOT: cp worked" "$ROOT/copy.txt" hi

	# --- denied: HOME dotfiles -------------------------------------------------
	bk_denied "write HOME/.bashrc" "$EACCES" write write. "$bashrc" -- "$TRY" open-write "$bashrc"
	bashrc_intact "write HOME/.bashrc"
	# The record names the syscall (ptrace) or the libc function (preload).
	if [ "$B" = auto ]; then
		syscall="syscall in ('open', 'openat', 'openat2')"
	else
		syscall="pre(syscall, 'open')"
	fi
	assert_rec "${BK}write HOME/.bashrc: record says EACCES and syscall" \
		"event == 'alert' and path == '$bashrc' and errno == 'EACCES' and $syscall"

	bk_denied "creat HOME/.profile" "$EACCES" write write. "$HOME/.profile" -- "$TRY" creat "$HOME/.profile"
	assert_file_absent "${BK}creat HOME/.profile: absent" "$HOME/.profile"

	bk_denied "sh redirection to HOME/.bashrc" 13 write write. "$bashrc" -- sh -c 'echo evil >> "$HOME/.bashrc" || exit 13'
	bashrc_intact "sh redirection"

	# --- denied: code that runs later, under ROOT --------------------------------
	bk_denied "write ROOT/.git/hooks/x" "$EACCES" write write. "$ROOT/.git/hooks/x" -- "$TRY" open-write "$ROOT/.git/hooks/x"
	assert_file_absent "${BK}write ROOT/.git/hooks/x: absent" "$ROOT/.git/hooks/x"

	bk_denied "write ROOT/.github/workflows/ci.yml" "$EACCES" write write. "$ROOT/.github/workflows/ci.yml" -- \
		"$TRY" open-write "$ROOT/.github/workflows/ci.yml"
	assert_file_absent "${BK}write ci.yml: absent" "$ROOT/.github/workflows/ci.yml"

	bk_denied "nested repo hook ROOT/sub/.git/hooks/pre-commit" "$EACCES" write write. "$ROOT/sub/.git/hooks/pre-commit" -- \
		"$TRY" open-write "$ROOT/sub/.git/hooks/pre-commit"
	assert_file_absent "${BK}nested repo hook: absent" "$ROOT/sub/.git/hooks/pre-commit"

	bk_denied "relative write .git/hooks/rel" "$EACCES" write write. "$ROOT/.git/hooks/rel" -- "$TRY" creat .git/hooks/rel
	assert_file_absent "${BK}relative .git/hooks write: absent" "$ROOT/.git/hooks/rel"

	# --- denied: two-path calls, checked on both paths ----------------------------
	printf 'evil' >"$ROOT/evil"
	bk_denied "rename over HOME/.bashrc" "$EACCES" write write. "$bashrc" -- "$TRY" rename "$ROOT/evil" "$bashrc"
	bashrc_intact "rename over"
	assert_file_present "${BK}rename over: source still there" "$ROOT/evil"

	bk_denied "rename HOME/.bashrc away into ROOT" "$EACCES" write write. "$bashrc" -- "$TRY" rename "$bashrc" "$ROOT/stolen"
	bashrc_intact "rename away"
	assert_file_absent "${BK}rename away: no target" "$ROOT/stolen"

	bk_denied "rename into .git/hooks" "$EACCES" write write. "$ROOT/.git/hooks/post-checkout" -- \
		"$TRY" rename "$ROOT/evil" "$ROOT/.git/hooks/post-checkout"
	assert_file_absent "${BK}rename into .git/hooks: absent" "$ROOT/.git/hooks/post-checkout"

	bk_denied "hard link onto HOME/.zshrc" "$EACCES" write write. "$HOME/.zshrc" -- "$TRY" link "$ROOT/evil" "$HOME/.zshrc"
	assert_file_absent "${BK}hard link onto HOME/.zshrc: absent" "$HOME/.zshrc"

	bk_denied "hard link to HOME/.bashrc from ROOT" "$EACCES" write write. "$bashrc" -- "$TRY" link "$bashrc" "$ROOT/hl"
	assert_file_absent "${BK}hard link to HOME/.bashrc: absent" "$ROOT/hl"

	bk_denied "symlink towards HOME/.bashrc" "$EACCES" write write. "$bashrc" -- "$TRY" symlink "$bashrc" "$ROOT/sl"
	assert_file_absent "${BK}symlink towards HOME/.bashrc: absent" "$ROOT/sl"

	# A link's target is not written by symlink(2): only an explicit deny rule
	# (a protected file) refuses it, not the write fallback, so that
	# `python3 -m venv` can link its interpreter (lead's decision, call.h).
	bk_allowed "symlink towards a system program (venv-style)" -- "$TRY" symlink /usr/bin/python3 "$ROOT/py"
	assert_file_present "${BK}symlink towards a system program: link exists" "$ROOT/py"
	bk_denied "symlink towards /etc/passwd (explicit deny)" "$EACCES" write write. /etc/passwd -- \
		"$TRY" symlink /etc/passwd "$ROOT/pw"
	assert_file_absent "${BK}symlink towards /etc/passwd: absent" "$ROOT/pw"
	# Under preload --without-pip: the interpreter link is the case, and
	# ensurepip takes seconds more.
	venv_opts=
	[ "$B" = auto ] || venv_opts=--without-pip
	if have python3; then
		bk_q -- python3 -m venv $venv_opts "$ROOT/venv"
		assert_eq "${BK}python3 -m venv works" 0 $?
		if [ -L "$ROOT/venv/bin/python3" ]; then ok "${BK}venv: bin/python3 is a symlink, as natively"; else not_ok "${BK}venv: bin/python3 is a symlink, as natively"; fi
		assert_no_rec "${BK}python3 -m venv: nothing in the venv refused" "event == 'alert' and ('/venv' in str(path) or '/venv' in str(path2))"
	fi

	bk_denied "symlink placed in .git/hooks" "$EACCES" write write. "$ROOT/.git/hooks/pre-push" -- \
		"$TRY" symlink "$ROOT/evil" "$ROOT/.git/hooks/pre-push"
	assert_file_absent "${BK}symlink placed in .git/hooks: absent" "$ROOT/.git/hooks/pre-push"

	# --- denied: the path as the kernel resolves it --------------------------------
	ln -s "$bashrc" "$ROOT/existing-link"
	bk_denied "write through a symlink in ROOT" "$EACCES" write write. "$bashrc" -- "$TRY" open-write "$ROOT/existing-link"
	bashrc_intact "write through a symlink"

	ln -s "$ROOT/.git" "$ROOT/gitdir-link"
	bk_denied "write through a directory symlink into .git/hooks" "$EACCES" write write. "$ROOT/.git/hooks/via-link" -- \
		"$TRY" open-write "$ROOT/gitdir-link/hooks/via-link"
	assert_file_absent "${BK}directory symlink: absent" "$ROOT/.git/hooks/via-link"

	bk_denied "dirfd-relative HOME .bashrc" "$EACCES" write write. "$bashrc" -- "$TRY" openat-dirfd "$HOME" .bashrc
	bashrc_intact "dirfd-relative"

	bk_denied "dirfd-relative ROOT/.git hooks/y" "$EACCES" write write. "$ROOT/.git/hooks/y" -- "$TRY" openat-dirfd "$ROOT/.git" hooks/y
	assert_file_absent "${BK}dirfd-relative .git: absent" "$ROOT/.git/hooks/y"

	bk_denied "/proc/self/fd/N of HOME/.bashrc" "$EACCES" write write. "$bashrc" -- "$TRY" proc-fd-write "$bashrc"
	bashrc_intact "/proc/self/fd"

	bk_denied "../ traversal out of ROOT" "$EACCES" write write. "$bashrc" -- "$TRY" open-write ../home/.bashrc
	bashrc_intact "../ traversal"

	bk_denied "ROOT/sub/../../home traversal" "$EACCES" write write. "$HOME/.zprofile" -- "$TRY" creat "$ROOT/sub/../../home/.zprofile"
	assert_file_absent "${BK}traversal: absent" "$HOME/.zprofile"

	# --- denied: other file-changing calls -----------------------------------------
	bk_denied "unlink HOME/.bashrc" "$EACCES" write write. "$bashrc" -- "$TRY" unlink "$bashrc"
	bashrc_intact "unlink"

	bk_denied "unlink ROOT/.git/hooks/pre-commit" "$EACCES" write write. "$ROOT/.git/hooks/pre-commit" -- \
		"$TRY" unlink "$ROOT/.git/hooks/pre-commit"
	assert_file_content "${BK}unlink hook: still there" "$ROOT/.git/hooks/pre-commit" hook

	bk_denied "mkdir HOME/.ssh" "$EACCES" write write. "$HOME/.ssh" -- "$TRY" mkdir "$HOME/.ssh"
	assert_file_absent "${BK}mkdir HOME/.ssh: absent" "$HOME/.ssh"

	bk_denied "mkdir ROOT/.github/actions" "$EACCES" write write. "$ROOT/.github/actions" -- "$TRY" mkdir "$ROOT/.github/actions"
	assert_file_absent "${BK}mkdir .github/actions: absent" "$ROOT/.github/actions"

	# chmod(2) is not among the calls the shim wraps (agenttrace(1), BACKENDS).
	chmod 0755 "$ROOT/.git/hooks/pre-commit"
	if [ "$B" = auto ]; then
		bk_denied "chmod HOME/.bashrc" "$EACCES" write write. "$bashrc" -- "$TRY" chmod "$bashrc"
		assert_eq "${BK}chmod HOME/.bashrc: mode unchanged" 644 "$(stat -c %a "$bashrc")"
		bk_denied "chmod ROOT/.git/hooks/pre-commit" "$EACCES" write write. "$ROOT/.git/hooks/pre-commit" -- \
			"$TRY" chmod "$ROOT/.git/hooks/pre-commit"
		assert_eq "${BK}chmod hook: mode unchanged" 755 "$(stat -c %a "$ROOT/.git/hooks/pre-commit")"
	else
		bk_escapes "chmod HOME/.bashrc" 0 -- "$TRY" chmod "$bashrc"
		assert_eq "${BK}chmod HOME/.bashrc: the mode DID change (chmod is not wrapped)" 600 "$(stat -c %a "$bashrc")"
		# The masks bind .git/hooks read-only (agenttrace(1) --mask): the
		# kernel refuses what the shim does not see, without a record.
		EROFS=30
		bk_status "${BK}chmod ROOT/.git/hooks/pre-commit: refused by the masks (EROFS)" "$EROFS" -- \
			"$TRY" chmod "$ROOT/.git/hooks/pre-commit"
		assert_eq "${BK}chmod hook: mode unchanged under the masks" 755 \
			"$(stat -c %a "$ROOT/.git/hooks/pre-commit")"
		at_q --backend preload --mask off -- "$TRY" chmod "$ROOT/.git/hooks/pre-commit"
		assert_eq "${BK}--mask off: chmod ROOT/.git/hooks/pre-commit NOT stopped (known limit)" 0 $?
		assert_eq "${BK}--mask off: chmod hook: the mode DID change" 600 \
			"$(stat -c %a "$ROOT/.git/hooks/pre-commit")"
		chmod 0644 "$bashrc"
	fi

	bk_denied "truncate HOME/.bashrc" "$EACCES" write write. "$bashrc" -- "$TRY" truncate "$bashrc"
	bashrc_intact "truncate"

	# A run with several denials keeps going and exits with the command's status.
	bk -- sh -c '"$0" open-write "$HOME/.bashrc"; "$0" open-write "$ROOT/after.txt"' "$TRY" >"$OUT" 2>"$ERR"
	assert_eq "${BK}the program goes on after a denial" 0 $?
	assert_file_present "${BK}the program goes on after a denial: later write done" "$ROOT/after.txt"
	bashrc_intact "program goes on"
done
