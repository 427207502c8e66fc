#!/bin/bash
# The files agenttrace itself writes by a name it was given (--log,
# --evidence, GITHUB_OUTPUT and GITHUB_STEP_SUMMARY) and the roots it asks
# Landlock to grant: agenttrace runs as root, and such a name often lies
# where a session may write.  A symbolic link planted there by an earlier
# session (run.jsonl -> a/.bashrc, then a -> $HOME: each step allowed)
# must not make it append its records to ~/.bashrc, copy scripts into any
# directory, or have the kernel grant writes beneath one.  Links where no
# write rule admits a name (/dev/stdout) are followed as before
# (agenttrace(1), --log).
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

echo 'echo rc' >"$HOME/.bashrc"
mkdir -p "$SANDBOX/outside"

# own [AGENTTRACE OPTIONS] -- COMMAND...: agenttrace with no --log of the
# suite's, in ROOT, stdout and stderr in OUT and ERR.
own() {
	(cd "$ROOT" && exec timeout -k 5 "$AT_TIMEOUT" "$AGENTTRACE" "$@") >"$OUT" 2>"$ERR"
}
refused_link() { # DESC LINK: the error names LINK as a link agenttrace does not follow
	assert_match "$1: the error names the link" \
		"$2 is a symbolic link where the policy lets a session make names" "$(cat "$ERR")"
}

# --- a log name planted by a session --------------------------------------
at_q -- sh -c 'mkdir a && ln -s a/.bashrc run.jsonl && rmdir a && ln -s "$HOME" a'
assert_eq "a session plants run.jsonl -> a/.bashrc, a -> HOME" 0 $?
own --log run.jsonl -- true
assert_eq "--log run.jsonl, a planted link: refused" 125 $?
refused_link "--log run.jsonl" "$ROOT/run.jsonl"
assert_file_content "--log run.jsonl: ~/.bashrc unchanged" "$HOME/.bashrc" "echo rc"
rm -f "$ROOT/run.jsonl" "$ROOT/a"

# A process left from an earlier session exchanging the log's name, a
# plain file, with the planted link, while agenttrace starts: each start
# writes the plain file or refuses, none reaches ~/.bashrc.
: >"$ROOT/run.jsonl"
ln -s "$HOME" "$ROOT/a"
ln -s a/.bashrc "$ROOT/alt"
cat >"$SANDBOX/flip.py" <<'PY'
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
a, b = sys.argv[1].encode(), sys.argv[2].encode()
while True:
    libc.renameat2(-100, a, -100, b, 2)
PY
"$PYTHON" "$SANDBOX/flip.py" "$ROOT/run.jsonl" "$ROOT/alt" &
flipper=$!
refused=0
for i in $(seq 100); do
	own --log run.jsonl -- true
	st=$?
	[ "$st" = 125 ] && refused=$((refused + 1))
	[ "$st" = 0 ] || [ "$st" = 125 ] || diag "start $i: status $st"
done
kill "$flipper"
wait "$flipper" 2>/dev/null
diag "log name exchanged with a planted link: $refused of 100 starts refused"
assert_file_content "log name exchanged with a planted link: ~/.bashrc unchanged" \
	"$HOME/.bashrc" "echo rc"
rm -f "$ROOT/run.jsonl" "$ROOT/alt" "$ROOT/a"

ln -s "$HOME" "$ROOT/logs"
own --log logs/.bashrc -- true
assert_eq "--log through a linked directory of the project: refused" 125 $?
refused_link "--log logs/.bashrc" "$ROOT/logs"
assert_file_content "--log logs/.bashrc: ~/.bashrc unchanged" "$HOME/.bashrc" "echo rc"
rm -f "$ROOT/logs"

ln -s "$HOME/.bashrc" "$TMPDIR/run.jsonl"
own --log "$TMPDIR/run.jsonl" -- true
assert_eq "--log, a link in the temp dir: refused" 125 $?
assert_file_content "--log in the temp dir: ~/.bashrc unchanged" "$HOME/.bashrc" "echo rc"
rm -f "$TMPDIR/run.jsonl"

# What works as before: a new file, and a link where no session writes.
own --log run.jsonl -- true
assert_eq "--log run.jsonl, a new file: the command runs" 0 $?
check "--log run.jsonl: the summary is there" grep -q '"event":"summary"' "$ROOT/run.jsonl"
own --log run.jsonl -- true
check "--log run.jsonl again: appended" test "$(grep -c '"event":"summary"' "$ROOT/run.jsonl")" = 2
rm -f "$ROOT/run.jsonl"
own --log /dev/stdout -- true
assert_eq "--log /dev/stdout (a link in /dev, then /proc's): the command runs" 0 $?
check "--log /dev/stdout: the records on standard output" grep -q '"event":"summary"' "$OUT"

# --- the evidence directory -----------------------------------------------
mkdir "$SANDBOX/outside/kept"
ln -s b/kept "$ROOT/evidence"
ln -s "$SANDBOX/outside" "$ROOT/b"
own --evidence evidence -- sh -c 'echo echo hi >s.sh && sh s.sh'
assert_eq "--evidence, a planted link: refused" 125 $?
refused_link "--evidence evidence" "$ROOT/evidence"
check "--evidence: no copy where the link leads" test -z "$(ls -A "$SANDBOX/outside/kept")"
rm -rf "$ROOT/evidence" "$ROOT/b" "$SANDBOX/outside/kept"
own --evidence "$SANDBOX/kept" -- true
assert_eq "--evidence, a new directory: the command runs" 0 $?
check "--evidence: the directory made" test -d "$SANDBOX/kept"
# A file put in the directory beforehand under a copy's name is no copy.
printf 'echo EVIL-PAYLOAD\n' >"$ROOT/evil.sh"
sha=$(sha256sum "$ROOT/evil.sh" | cut -c1-64)
echo 'echo harmless' >"$SANDBOX/kept/$sha"
own --evidence "$SANDBOX/kept" -- sh evil.sh
assert_eq "--evidence, a forged copy in the way: the command runs" 0 $?
assert_eq "--evidence: the copy under the hash holds the script run" "$sha" \
	"$(sha256sum "$SANDBOX/kept/$sha" | cut -c1-64)"
rm -f "$SANDBOX/kept/$sha"
mkdir -p "$SANDBOX/kept/$sha/sub"
own --evidence "$SANDBOX/kept" -- sh evil.sh
assert_eq "--evidence, a directory in the copy's way: the command runs" 0 $?
assert_eq "--evidence: the copy made all the same" "$sha" \
	"$(sha256sum "$SANDBOX/kept/$sha" | cut -c1-64)"
rm -f "$ROOT/evil.sh"

# --- the CI job's step outputs --------------------------------------------
ln -s "$HOME/.bashrc" "$ROOT/out.txt"
GITHUB_ACTIONS=true GITHUB_OUTPUT=$ROOT/out.txt GITHUB_STEP_SUMMARY=$ROOT/out.txt own -- true
assert_eq "GITHUB_OUTPUT, a planted link: the command's status" 0 $?
refused_link "GITHUB_OUTPUT" "$ROOT/out.txt"
assert_match "GITHUB_STEP_SUMMARY: said too" "cannot append to GITHUB_STEP_SUMMARY" "$(cat "$ERR")"
assert_file_content "GITHUB_OUTPUT: ~/.bashrc unchanged" "$HOME/.bashrc" "echo rc"
rm -f "$ROOT/out.txt"
GITHUB_ACTIONS=true GITHUB_OUTPUT=$ROOT/out.txt own -- true
check "GITHUB_OUTPUT, a plain file: the counts appended" grep -q '^denials=0$' "$ROOT/out.txt"

# A FIFO at a step output: the supervisor would wait for a reader at the
# session's end, and no signal ended that wait.
mkfifo "$ROOT/fifo"
GITHUB_ACTIONS=true GITHUB_OUTPUT=$ROOT/fifo own -- true
assert_eq "GITHUB_OUTPUT, a FIFO: the session ends" 0 $?
assert_match "GITHUB_OUTPUT, a FIFO: said" "GITHUB_OUTPUT $ROOT/fifo" "$(cat "$ERR")"
rm -f "$ROOT/fifo"

# --- the write roots named through a link -----------------------------------
# A temp dir, or a sub-project, that a session replaced by a link to a
# directory outside every root: the policy's roots would be where it
# leads.  (The temp dir here is one in the project, where a session may
# make names wherever the suite runs.)
ln -s "$SANDBOX/outside" "$ROOT/tmp"
TMPDIR=$ROOT/tmp own -- sh -c 'echo x > "$TMPDIR/planted"'
assert_eq "TMPDIR a planted link: refused" 125 $?
refused_link "TMPDIR" "$ROOT/tmp"
TMPDIR=$ROOT/tmp own --private-tmp -- true
assert_eq "TMPDIR a planted link, --private-tmp: refused" 125 $?
check "TMPDIR a planted link: nothing made where it leads" test -z "$(ls -A "$SANDBOX/outside")"
rm -f "$ROOT/tmp"
ln -s "$SANDBOX/outside" "$ROOT/pkg"
own --root pkg -- sh -c 'echo x > "$0/planted"' "$ROOT/pkg"
assert_eq "--root a planted link (a sub-project replaced): refused" 125 $?
assert_match "--root pkg: the error says why" "is a symbolic link" "$(cat "$ERR")"
for r in pkg/ pkg/. "$ROOT/pkg/"; do
	own --root "$r" -- true
	assert_eq "--root $r (a planted link, spelled as a directory): refused" 125 $?
done
(cd "$ROOT/pkg" && exec "$AGENTTRACE" -- true) >"$OUT" 2>"$ERR"
assert_eq "the project entered by cd through a planted link: refused" 125 $?
(cd "$ROOT/pkg" && exec "$AGENTTRACE" --root "$ROOT" --log run.jsonl -- true) >"$OUT" 2>"$ERR"
assert_eq "a relative --log from a directory entered through a planted link: refused" 125 $?
check "nothing made where the link leads" test -z "$(ls -A "$SANDBOX/outside")"
rm -f "$ROOT/pkg"

# A FIFO at the log's name would hold the start, before --timeout is
# armed; a working directory removed leaves no project.
mkfifo "$ROOT/run.jsonl"
own --timeout 5 --log run.jsonl -- true
assert_eq "--log a FIFO no one reads: refused, not waited on" 125 $?
rm -f "$ROOT/run.jsonl"
mkdir "$ROOT/gone"
(cd "$ROOT/gone" && rmdir "$ROOT/gone" && exec "$AGENTTRACE" -- true) >"$OUT" 2>"$ERR"
assert_eq "a removed working directory, no --root: refused" 125 $?
assert_match "a removed working directory: said" "the current directory" "$(cat "$ERR")"

# --- the project's policy --------------------------------------------------
# A repository can ship .agenttrace.json as a link: agenttrace reads it as
# root and would quote what it names in the parse error.
mkdir -p "$HOME/.ssh"
echo "KEYMATERIAL-0123456789" >"$HOME/.ssh/id_rsa"
ln -s "$HOME/.ssh/id_rsa" "$ROOT/.agenttrace.json"
own -- true
assert_eq "a project policy linked outside the project: refused" 125 $?
check "a project policy linked outside the project: nothing of it quoted" \
	sh -c '! grep -q KEYMATERIAL "$1" "$2"' - "$OUT" "$ERR"
rm -f "$ROOT/.agenttrace.json"
# A --policy file, or one it extends, that names a key: its parse error
# says where, not what stands there.
ln -s "$HOME/.ssh/id_rsa" "$ROOT/p.json"
own --policy ./p.json -- true
assert_eq "--policy linked to a key: refused" 125 $?
check "--policy linked to a key: nothing of it quoted" \
	sh -c '! grep -q KEYMATERIAL "$1" "$2"' - "$OUT" "$ERR"
echo "{\"agenttrace\": 1, \"extends\": \"$HOME/.ssh/id_rsa\"}" >"$ROOT/p2.json"
own --policy ./p2.json -- true
assert_eq "--policy extending a key: refused" 125 $?
check "--policy extending a key: nothing of it quoted" \
	sh -c '! grep -q KEYMATERIAL "$1" "$2"' - "$OUT" "$ERR"
rm -f "$ROOT/p.json" "$ROOT/p2.json"
echo '{"agenttrace": 1, "write": {"deny": ["${ROOT}/nope"]}}' >"$ROOT/policy.json"
ln -s policy.json "$ROOT/.agenttrace.json"
own -- sh -c 'echo x > nope'
assert_eq "a project policy linked inside the project: read (the shell's redirect fails)" 2 $?
assert_file_absent "a project policy linked inside the project: its rule refuses" "$ROOT/nope"
rm -f "$ROOT/.agenttrace.json" "$ROOT/policy.json" "$ROOT/nope"

# --- Landlock's roots -----------------------------------------------------
# A cache root the policy lets a session replace (rmdir, then a symbolic
# link): the kernel must not grant writes where the link leads.
mkdir -p "$HOME/.local/share/pnpm"
ln -s "$SANDBOX/outside" "$HOME/.local/share/pnpm/store"
own -v -- true
if grep -q 'landlock: ABI' "$ERR"; then
	check "Landlock: the linked cache root's target is not granted" \
		sh -c '! grep "landlock: ABI" "$1" | grep -q "$2"' - "$ERR" "$SANDBOX/outside"
	assert_match "Landlock: -v says why the root is not covered" \
		"store is a symbolic link where the policy lets a session make names" "$(cat "$ERR")"
else
	skip "Landlock: the linked cache root's target is not granted" "no Landlock here"
fi
rm -f "$HOME/.local/share/pnpm/store"
