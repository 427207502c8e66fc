#!/bin/bash
# SPEC §4/§5 write rules under the default policy: allowed under ROOT,
# denied for HOME dotfiles and for code that runs later (.git/hooks, CI
# definitions), whatever way the path is reached.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

bashrc=$HOME/.bashrc
printf 'orig' >"$bashrc"
chmod 0644 "$bashrc"
mkdir -p "$ROOT/.git/hooks" "$ROOT/.github/workflows" "$ROOT/sub/.git/hooks"
printf 'hook' >"$ROOT/.git/hooks/pre-commit"
bashrc_intact() {
	assert_file_content "$1: $bashrc unchanged" "$bashrc" orig
}

# --- allowed -------------------------------------------------------------
expect_allowed "write under ROOT" -- "$TRY" open-write "$ROOT/file.txt"
assert_file_content "write under ROOT: file written" "$ROOT/file.txt" x

expect_allowed "relative write in cwd (ROOT)" -- "$TRY" creat rel.txt
assert_file_present "relative write: file created" "$ROOT/rel.txt"

expect_allowed "write under TMPDIR" -- "$TRY" open-write "$TMPDIR/t.txt"
assert_file_present "write under TMPDIR: file created" "$TMPDIR/t.txt"

expect_allowed "write /dev/null" -- "$TRY" open-write /dev/null

expect_allowed "dirfd-relative write under ROOT" -- "$TRY" openat-dirfd "$ROOT" dirfd.txt
assert_file_present "dirfd-relative write: file created" "$ROOT/dirfd.txt"

printf 'r' >"$ROOT/r1"
expect_allowed "rename within ROOT" -- "$TRY" rename "$ROOT/r1" "$ROOT/r2"
assert_file_present "rename within ROOT: target exists" "$ROOT/r2"
expect_allowed "hard link within ROOT" -- "$TRY" link "$ROOT/r2" "$ROOT/r3"
assert_file_present "hard link within ROOT: link exists" "$ROOT/r3"
expect_allowed "symlink within ROOT" -- "$TRY" symlink r2 "$ROOT/r4"
assert_file_present "symlink within ROOT: link exists" "$ROOT/r4"
expect_allowed "unlink within ROOT" -- "$TRY" unlink "$ROOT/r3"
assert_file_absent "unlink within ROOT: gone" "$ROOT/r3"
expect_allowed "mkdir within ROOT" -- "$TRY" mkdir "$ROOT/newdir"
assert_file_present "mkdir within ROOT: exists" "$ROOT/newdir"
expect_allowed "chmod within ROOT" -- "$TRY" chmod "$ROOT/r2"
assert_eq "chmod within ROOT: mode changed" 600 "$(stat -c %a "$ROOT/r2")"
expect_allowed "truncate within ROOT" -- "$TRY" truncate "$ROOT/r2"
assert_eq "truncate within ROOT: size 0" 0 "$(stat -c %s "$ROOT/r2")"
expect_allowed "/proc/self/fd write under ROOT" -- "$TRY" proc-fd-write "$ROOT/r2"
assert_file_content "/proc/self/fd write under ROOT: written" "$ROOT/r2" x

# A shell redirection and a real tool: the common shape.
expect_allowed "sh redirection under ROOT" -- sh -c 'echo hi > out.txt && cp out.txt copy.txt'
assert_file_content "sh redirection under ROOT: cp worked" "$ROOT/copy.txt" hi

# --- denied: HOME dotfiles -------------------------------------------------
expect_denied "write HOME/.bashrc" "$EACCES" write write. "$bashrc" -- "$TRY" open-write "$bashrc"
bashrc_intact "write HOME/.bashrc"
assert_rec "write HOME/.bashrc: record says EACCES and syscall" \
	"event == 'alert' and path == '$bashrc' and errno == 'EACCES' and syscall in ('open', 'openat', 'openat2')"

expect_denied "creat HOME/.profile" "$EACCES" write write. "$HOME/.profile" -- "$TRY" creat "$HOME/.profile"
assert_file_absent "creat HOME/.profile: absent" "$HOME/.profile"

expect_denied "sh redirection to HOME/.bashrc" 13 write write. "$bashrc" -- sh -c 'echo evil >> "$HOME/.bashrc" || exit 13'
bashrc_intact "sh redirection"

# --- denied: code that runs later, under ROOT --------------------------------
expect_denied "write ROOT/.git/hooks/x" "$EACCES" write write. "$ROOT/.git/hooks/x" -- "$TRY" open-write "$ROOT/.git/hooks/x"
assert_file_absent "write ROOT/.git/hooks/x: absent" "$ROOT/.git/hooks/x"

expect_denied "write ROOT/.github/workflows/ci.yml" "$EACCES" write write. "$ROOT/.github/workflows/ci.yml" -- \
	"$TRY" open-write "$ROOT/.github/workflows/ci.yml"
assert_file_absent "write ci.yml: absent" "$ROOT/.github/workflows/ci.yml"

expect_denied "nested repo hook ROOT/sub/.git/hooks/pre-commit" "$EACCES" write write. "$ROOT/sub/.git/hooks/pre-commit" -- \
	"$TRY" open-write "$ROOT/sub/.git/hooks/pre-commit"
assert_file_absent "nested repo hook: absent" "$ROOT/sub/.git/hooks/pre-commit"

expect_denied "relative write .git/hooks/rel" "$EACCES" write write. "$ROOT/.git/hooks/rel" -- "$TRY" creat .git/hooks/rel
assert_file_absent "relative .git/hooks write: absent" "$ROOT/.git/hooks/rel"

# --- denied: two-path calls, checked on both paths ----------------------------
printf 'evil' >"$ROOT/evil"
expect_denied "rename over HOME/.bashrc" "$EACCES" write write. "$bashrc" -- "$TRY" rename "$ROOT/evil" "$bashrc"
bashrc_intact "rename over"
assert_file_present "rename over: source still there" "$ROOT/evil"

expect_denied "rename HOME/.bashrc away into ROOT" "$EACCES" write write. "$bashrc" -- "$TRY" rename "$bashrc" "$ROOT/stolen"
bashrc_intact "rename away"
assert_file_absent "rename away: no target" "$ROOT/stolen"

expect_denied "rename into .git/hooks" "$EACCES" write write. "$ROOT/.git/hooks/post-checkout" -- \
	"$TRY" rename "$ROOT/evil" "$ROOT/.git/hooks/post-checkout"
assert_file_absent "rename into .git/hooks: absent" "$ROOT/.git/hooks/post-checkout"

expect_denied "hard link onto HOME/.zshrc" "$EACCES" write write. "$HOME/.zshrc" -- "$TRY" link "$ROOT/evil" "$HOME/.zshrc"
assert_file_absent "hard link onto HOME/.zshrc: absent" "$HOME/.zshrc"

expect_denied "hard link to HOME/.bashrc from ROOT" "$EACCES" write write. "$bashrc" -- "$TRY" link "$bashrc" "$ROOT/hl"
assert_file_absent "hard link to HOME/.bashrc: absent" "$ROOT/hl"

expect_denied "symlink towards HOME/.bashrc" "$EACCES" write write. "$bashrc" -- "$TRY" symlink "$bashrc" "$ROOT/sl"
assert_file_absent "symlink towards HOME/.bashrc: absent" "$ROOT/sl"

# A link's target is not written by symlink(2): only an explicit deny rule
# (a protected file) refuses it, not the write fallback, so that
# `python3 -m venv` can link its interpreter (lead's decision, call.h).
expect_allowed "symlink towards a system program (venv-style)" -- "$TRY" symlink /usr/bin/python3 "$ROOT/py"
assert_file_present "symlink towards a system program: link exists" "$ROOT/py"
expect_denied "symlink towards /etc/passwd (explicit deny)" "$EACCES" write write. /etc/passwd -- \
	"$TRY" symlink /etc/passwd "$ROOT/pw"
assert_file_absent "symlink towards /etc/passwd: absent" "$ROOT/pw"
if have python3; then
	at_q -- python3 -m venv "$ROOT/venv"
	assert_eq "python3 -m venv works" 0 $?
	if [ -L "$ROOT/venv/bin/python3" ]; then ok "venv: bin/python3 is a symlink, as natively"; else not_ok "venv: bin/python3 is a symlink, as natively"; fi
	assert_no_rec "python3 -m venv: nothing in the venv refused" "event == 'alert' and ('/venv' in str(path) or '/venv' in str(path2))"
fi

expect_denied "symlink placed in .git/hooks" "$EACCES" write write. "$ROOT/.git/hooks/pre-push" -- \
	"$TRY" symlink "$ROOT/evil" "$ROOT/.git/hooks/pre-push"
assert_file_absent "symlink placed in .git/hooks: absent" "$ROOT/.git/hooks/pre-push"

# --- denied: the path as the kernel resolves it --------------------------------
ln -s "$bashrc" "$ROOT/existing-link"
expect_denied "write through a symlink in ROOT" "$EACCES" write write. "$bashrc" -- "$TRY" open-write "$ROOT/existing-link"
bashrc_intact "write through a symlink"

ln -s "$ROOT/.git" "$ROOT/gitdir-link"
expect_denied "write through a directory symlink into .git/hooks" "$EACCES" write write. "$ROOT/.git/hooks/via-link" -- \
	"$TRY" open-write "$ROOT/gitdir-link/hooks/via-link"
assert_file_absent "directory symlink: absent" "$ROOT/.git/hooks/via-link"

expect_denied "dirfd-relative HOME .bashrc" "$EACCES" write write. "$bashrc" -- "$TRY" openat-dirfd "$HOME" .bashrc
bashrc_intact "dirfd-relative"

expect_denied "dirfd-relative ROOT/.git hooks/y" "$EACCES" write write. "$ROOT/.git/hooks/y" -- "$TRY" openat-dirfd "$ROOT/.git" hooks/y
assert_file_absent "dirfd-relative .git: absent" "$ROOT/.git/hooks/y"

expect_denied "/proc/self/fd/N of HOME/.bashrc" "$EACCES" write write. "$bashrc" -- "$TRY" proc-fd-write "$bashrc"
bashrc_intact "/proc/self/fd"

expect_denied "../ traversal out of ROOT" "$EACCES" write write. "$bashrc" -- "$TRY" open-write ../home/.bashrc
bashrc_intact "../ traversal"

expect_denied "ROOT/sub/../../home traversal" "$EACCES" write write. "$HOME/.zprofile" -- "$TRY" creat "$ROOT/sub/../../home/.zprofile"
assert_file_absent "traversal: absent" "$HOME/.zprofile"

# --- denied: other file-changing calls -----------------------------------------
expect_denied "unlink HOME/.bashrc" "$EACCES" write write. "$bashrc" -- "$TRY" unlink "$bashrc"
bashrc_intact "unlink"

expect_denied "unlink ROOT/.git/hooks/pre-commit" "$EACCES" write write. "$ROOT/.git/hooks/pre-commit" -- \
	"$TRY" unlink "$ROOT/.git/hooks/pre-commit"
assert_file_content "unlink hook: still there" "$ROOT/.git/hooks/pre-commit" hook

expect_denied "mkdir HOME/.ssh" "$EACCES" write write. "$HOME/.ssh" -- "$TRY" mkdir "$HOME/.ssh"
assert_file_absent "mkdir HOME/.ssh: absent" "$HOME/.ssh"

expect_denied "mkdir ROOT/.github/actions" "$EACCES" write write. "$ROOT/.github/actions" -- "$TRY" mkdir "$ROOT/.github/actions"
assert_file_absent "mkdir .github/actions: absent" "$ROOT/.github/actions"

expect_denied "chmod HOME/.bashrc" "$EACCES" write write. "$bashrc" -- "$TRY" chmod "$bashrc"
assert_eq "chmod HOME/.bashrc: mode unchanged" 644 "$(stat -c %a "$bashrc")"

chmod 0755 "$ROOT/.git/hooks/pre-commit"
expect_denied "chmod ROOT/.git/hooks/pre-commit" "$EACCES" write write. "$ROOT/.git/hooks/pre-commit" -- \
	"$TRY" chmod "$ROOT/.git/hooks/pre-commit"
assert_eq "chmod hook: mode unchanged" 755 "$(stat -c %a "$ROOT/.git/hooks/pre-commit")"

expect_denied "truncate HOME/.bashrc" "$EACCES" write write. "$bashrc" -- "$TRY" truncate "$bashrc"
bashrc_intact "truncate"

# A run with several denials keeps going and exits with the command's status.
at -- sh -c '"$0" open-write "$HOME/.bashrc"; "$0" open-write "$ROOT/after.txt"' "$TRY" >"$OUT" 2>"$ERR"
assert_eq "the program goes on after a denial" 0 $?
assert_file_present "the program goes on after a denial: later write done" "$ROOT/after.txt"
bashrc_intact "program goes on"
