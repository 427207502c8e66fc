#!/bin/bash
# A second process, sharing no memory with a single-threaded caller,
# swaps a symlink in the path of a checked call, towards what no mask
# covers: a name the policy refuses inside the write roots that does not
# exist at the start (a .pth of the user site, a CI definition), or a
# file outside the roots changed by a call Landlock does not govern
# (chmod).  Under the notify engine such calls are made by the
# supervisor on what it judged (doc/THREAT-MODEL.md, "Time of check").
# The old engine let them run: 400 to 2,000 of 3,000 tries reached each.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

SWAP=$top_builddir/tests/progs/race-swap
[ -x "$SWAP" ] || skip_all "helper $SWAP not built"
at_q --engine notify -- true || skip_all "no notify engine on this kernel"
cp "$SWAP" "$ROOT/bin/race-swap" || exit 99
SWAP=$ROOT/bin/race-swap
N=${RACE_N:-3000}
PLANT=planted-by-the-race
SITE=$HOME/.local/lib/python3.11/site-packages
mkdir -p "$SITE" "$ROOT/ok" "$TMPDIR/ok"

# swap_case MODE GOOD BAD NAME OP: race-swap on $ROOT/x, notify engine.
swap_case() {
	rm -rf "$ROOT/x" "$ROOT/x.swap" "$ROOT/x.src"
	[ "$1" = rename ] && mkdir "$ROOT/x"
	at --engine notify -- "$SWAP" "$1" "$N" "$ROOT/x" "$2" "$3" "$4" "$5" "$PLANT" >"$OUT" 2>"$ERR"
	diag "$1 $5 of $4: $(cat "$OUT")"
}

for M in symlink rename; do
	swap_case "$M" "$ROOT/ok" "$SITE" evil.pth write
	assert_file_absent "$M swap: no .pth planted in the user site" "$SITE/evil.pth"
	assert_rec "$M swap: the refused .pth writes are recorded" \
		"$(deny_expr write write.python-user-site.pth "$SITE/evil.pth")"
done

# Allowed in TMPDIR, refused in the project: the same name, another
# directory.
swap_case symlink "$TMPDIR/ok" "$ROOT" .gitlab-ci.yml write
assert_file_absent "open: no CI definition made" "$ROOT/.gitlab-ci.yml"
assert_rec "open: the refused tries are recorded" \
	"$(deny_expr write write.ci-definitions.gitlab-ci "$ROOT/.gitlab-ci.yml")"
swap_case symlink "$TMPDIR/ok" "$ROOT" .gitlab-ci.yml move
assert_file_absent "rename: no CI definition made" "$ROOT/.gitlab-ci.yml"
assert_match "rename: the allowed renames were made" " ok=[1-9]" "$(cat "$OUT")"

# chmod is not Landlock's business: a mode made outside the roots.
echo theirs >"$HOME/.profile"
chmod 0644 "$HOME/.profile"
echo ours >"$ROOT/ok/.profile"
swap_case symlink "$ROOT/ok" "$HOME" .profile chmod
assert_eq "chmod: HOME/.profile keeps its mode" 644 "$(stat -c %a "$HOME/.profile")"
assert_match "chmod: the allowed ones were made" " ok=[1-9]" "$(cat "$OUT")"

# What a name of a protected tree changes: once the session makes a .git,
# its hooks may be unmasked, and every write is made by the supervisor.
rm -rf "$ROOT/proj2"
mkdir -p "$ROOT/proj2"
at_q --engine notify -- sh -c 'cd "$1" && git init -q . && echo x >file && mv file file2 && cat file2' \
	sh "$ROOT/proj2"
assert_eq "after git init: ordinary work as natively" x "$(cat "$OUT")"
rm -rf "$ROOT/x" "$ROOT/x.swap"
at_q --engine notify -- sh -c 'git init -q "$1" && exec "$2" symlink "$3" "$4" "$5" "$6" pre-commit write "$7"' \
	sh "$ROOT/proj3" "$SWAP" "$N" "$ROOT/x" "$ROOT/ok" "$ROOT/proj3/.git/hooks" "$PLANT"
diag "a .git made in the session: $(cat "$OUT")"
assert_file_absent "a .git made in the session: no hook planted" "$ROOT/proj3/.git/hooks/pre-commit"

# A directory made before the session outside the project, with an empty
# .git/hooks in it, moved in (a whole repository is refused: its config
# was never judged): those hooks are no mask's, and from then on every
# write is made by the supervisor.
rm -rf "$TMPDIR/repo" "$ROOT/moved" "$ROOT/x" "$ROOT/x.swap"
mkdir -p "$TMPDIR/repo/.git/hooks"
echo 'ref: refs/heads/main' >"$TMPDIR/repo/.git/HEAD"
mkdir -p "$TMPDIR/ok/.git/hooks"
# The swapped links name directories no rule names (TMPDIR/ok, ROOT/moved).
at_q --engine notify -- sh -c 'mv "$1" "$2" && exec "$3" symlink "$4" "$5" "$6" "$7" .git/hooks/pre-commit write "$8"' \
	sh "$TMPDIR/repo" "$ROOT/moved" "$SWAP" "$N" "$ROOT/x" "$TMPDIR/ok" "$ROOT/moved" "$PLANT"
diag "a repository moved in: $(cat "$OUT")"
assert_file_present "a repository moved in: the move was made" "$ROOT/moved/.git/HEAD"
assert_file_absent "a repository moved in: no hook planted" "$ROOT/moved/.git/hooks/pre-commit"
