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

# A second process sharing the caller's working directory (CLONE_FS) or
# its descriptor table (CLONE_FILES), pointing it now at a safe directory
# and now into a nested repository's hooks deeper than the masks look:
# no name changes, and the caller's memory is its own.
SHARE=$ROOT/bin/race-share
cp "$PROGS/race-share" "$SHARE" || exit 99
deep=$ROOT/a/b/c/d/e
mkdir -p "$deep" "$ROOT/safe"
git init -q "$deep"
echo '#!/bin/sh' >"$deep/.git/hooks/pre-commit"
: >"$ROOT/safe/pre-commit"
# The same with a process sharing the caller's memory (clone(CLONE_VM)),
# rewriting the path in the caller's private memory: alone, after the
# caller ran a program by vfork and exec (that child's share ended, the
# rewriter's did not), and started by a thread that has ended since.
# fs-exec: the opens made by a program the caller execs, the directory
# still shared (an exec ends no CLONE_FS sharing).
# The rewriter wins most tries where the caller is slow (a sanitizer
# build: 44 to 87 allowed opens of 3,000, once none): a run with none is
# tried again, up to three runs, each of which must reach no hook.
for M in fs files vm vm-spawned vm-thread fs-exec; do
	inside=
	for run in 1 2 3; do
		at_q --engine notify -- "$SHARE" "$M" "$deep/.git/hooks" "$ROOT/safe" pre-commit "$N"
		diag "shared $M, run $run: $(cat "$OUT")"
		grep -q " inside=0$" "$OUT" || inside="$inside $(cat "$OUT")"
		grep -q " ok=[1-9]" "$OUT" && break
	done
	assert_eq "a process sharing the caller's $M: no open reached the hooks" "" "$inside"
	assert_match "a process sharing the caller's $M: the allowed opens were made" " ok=[1-9]" \
		"$(cat "$OUT")"
done

# The same when the clone that made the caller was never seen, or seen
# after its maker's death (race-orphan): vm, the maker killed by a
# rewriter sharing its memory, the caller's /proc parent another
# (CLONE_PARENT); fs-thread, the maker killed by its parent-death signal
# when the thread that made it ends, the directory it shares moved by a
# second thread of that process, which has a directory of its own.
ORPHAN=$ROOT/bin/race-orphan
cp "$PROGS/race-orphan" "$ORPHAN" || exit 99
for M in "vm 300 20" "fs-thread 100 100"; do
	set -- $M
	(cd "$ROOT" && "$ORPHAN" "$1" "$deep/.git/hooks" "$ROOT/safe" pre-commit 20 "$3") >"$OUT" 2>&1
	diag "orphaned $1, natively: $(cat "$OUT")"
	assert_match "natively, the orphaned $1 sharer's path reaches the hooks" " inside=[1-9]" \
		"$(cat "$OUT")"
	at_q --engine notify -- "$ORPHAN" "$1" "$deep/.git/hooks" "$ROOT/safe" pre-commit "$2" "$3"
	diag "orphaned $1: $(cat "$OUT")"
	assert_match "an orphaned process sharing the caller's $1: no open reached the hooks" \
		" inside=0$" "$(cat "$OUT")"
	assert_match "an orphaned process sharing the caller's $1: the allowed opens were made" \
		" ok=[1-9]" "$(cat "$OUT")"
done

# A process that ran a program by vfork and exec (Python's subprocess,
# posix_spawn) shares nothing once the child has exec'd: its calls are
# continued again, not made by the supervisor.  strace follows the
# supervisor alone (no -f) and counts the directories it makes.
cat >"$ROOT/spawned.py" <<'PY'
import os, subprocess, sys
if sys.argv[1] == "spawn":
    subprocess.run(["/bin/true"], check=True)
for i in range(200):
    os.mkdir("made"); os.rmdir("made")
print("done")
PY
if ! have strace || ! strace -o /dev/null true 2>/dev/null; then
	skip "after a vfork child's exec, the parent's mkdirs are continued" "strace cannot run here"
else
	for how in alone spawn; do
		rm -f "$LOG"
		(cd "$ROOT" && ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
			strace -qq -e trace=mkdir,mkdirat -o "$SANDBOX/$how.strace" \
			"$AGENTTRACE" --engine notify --log "$LOG" -- "$PYTHON" spawned.py "$how") \
			>"$OUT" 2>"$ERR"
		assert_eq "mkdirs after $how: the program ran" done "$(cat "$OUT")"
		made=$(grep -c '"made"' "$SANDBOX/$how.strace")
		diag "mkdirs after $how: $made made by the supervisor"
		assert_eq "mkdirs after $how: none made by the supervisor" 0 "$made"
	done
fi

# Another process's descriptor opened through /proc/PID/fd, which that
# process points now at a harmless file and now at a .pth of the user
# site: what the link leads to changes without a name changing.
echo 'import os' >"$SITE/x.pth"
echo harmless >"$ROOT/harmless"
cat >"$ROOT/procfd.py" <<'PY'
import os, sys, time
prot, harmless, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
pid = os.fork()
if pid == 0:
    a = os.open(harmless, os.O_PATH); b = os.open(prot, os.O_PATH)
    while True:
        os.dup2(a, 100); os.dup2(b, 100)
time.sleep(0.2)
wins = ok = 0
ino = os.stat(prot).st_ino
for i in range(n):
    try:
        fd = os.open("/proc/%d/fd/100" % pid, os.O_WRONLY | os.O_APPEND)
    except OSError:
        continue
    ok += 1
    if os.fstat(fd).st_ino == ino:
        wins += 1
        os.write(fd, b"#planted\n")
    os.close(fd)
os.kill(pid, 9)
print("ok=%d wins=%d" % (ok, wins))
PY
at_q --engine notify -- "$PYTHON" "$ROOT/procfd.py" "$SITE/x.pth" "$ROOT/harmless" "$N"
diag "through /proc/PID/fd: $(cat "$OUT")"
assert_match "through another process's /proc/PID/fd: the .pth never opened for writing" " wins=0$" \
	"$(cat "$OUT")"
assert_eq "through another process's /proc/PID/fd: the .pth as it was" "import os" "$(cat "$SITE/x.pth")"

# A symlink into /proc made in the session (another process's working
# directory, harmless when the link is made; the process moves into a
# nested repository's hooks once the racing caller has begun) can lead
# anywhere later: from then on every write is made by the supervisor.
rm -rf "$ROOT/x" "$ROOT/x.swap" "$ROOT/cwdlink"
at_q --engine notify -- "$PYTHON" -c '
import os, subprocess, sys, time
safe, tree, link = sys.argv[1:4]
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.chdir(safe); os.read(r, 1); os.chdir(tree); time.sleep(120); os._exit(0)
race = subprocess.Popen(sys.argv[4:])
time.sleep(0.1)
os.symlink("/proc/%d/cwd" % pid, link)
time.sleep(0.05)
os.write(w, b"x")
race.wait()
os.kill(pid, 9)' "$ROOT/safe" "$deep/.git/hooks" "$ROOT/cwdlink" \
	"$SWAP" symlink 20000 "$ROOT/x" "$ROOT/safe" "$ROOT/cwdlink" pre-commit write "$PLANT"
diag "a symlink to /proc/PID/cwd: $(cat "$OUT")"
assert_eq "a symlink to /proc/PID/cwd: no hook planted" '#!/bin/sh' "$(cat "$deep/.git/hooks/pre-commit")"

# A submodule's hooks, kept in the superproject's .git/modules: refused
# as the project's own are.
mkdir -p "$ROOT/.git/modules/lib/hooks"
at_q -- sh -c 'echo "$1" >"$2"' sh "$PLANT" "$ROOT/.git/modules/lib/hooks/post-checkout"
assert_file_absent "a submodule's hooks: no hook planted" "$ROOT/.git/modules/lib/hooks/post-checkout"
assert_rec "a submodule's hooks: the write is denied and recorded" \
	"$(deny_expr write write.git-modules-hooks "$ROOT/.git/modules/lib/hooks/post-checkout")"

# A protected tree in a directory that is no git project (a monorepo
# package's .husky) is masked as a nested project's are.
mkdir -p "$ROOT/frontend/.husky"
echo 'npx lint-staged' >"$ROOT/frontend/.husky/pre-commit"
at_q -- sh -c 'grep -c " $1 " /proc/self/mountinfo' sh "$ROOT/frontend/.husky"
assert_eq "a monorepo package's .husky: masked" 1 "$(cat "$OUT")"

# A thread's creation in a directory that another thread renames to
# .git/hooks at once: the rename of the empty directory is allowed, so
# the creation must have landed, or been refused, before it is judged
# (a creation made later, in the directory as it was judged, would plant
# a hook).  In a .git that has no hooks, made in the session and made
# before it.
cp "$PROGS/race-create-rename" "$ROOT/bin/race-create-rename" || exit 99
for where in session start; do
	rm -rf "$ROOT/proj4"
	mkdir -p "$ROOT/proj4"
	[ "$where" = start ] && git init -q --template= "$ROOT/proj4"
	at_q --engine notify -- sh -c 'cd "$1" && { [ -d .git ] || { git init -q . && rm -rf .git/hooks; }; } &&
		exec "$2" "$3" "$4"' sh "$ROOT/proj4" "$ROOT/bin/race-create-rename" .git/h "$N"
	diag "a creation racing a rename to .git/hooks, .git made at the $where: $(cat "$OUT")"
	assert_match "a creation racing a rename to .git/hooks (.git made at the $where): no hook planted" \
		"wins=0$" "$(cat "$OUT")"
done
