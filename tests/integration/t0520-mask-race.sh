#!/bin/bash
# A second process, sharing no memory with the caller, swaps a symlink or
# renames a directory in the path of a checked open: the supervisor checks
# one object and the kernel's own walk reaches another.  The command's
# masks (doc/INTERNALS.md "Masks") make the kernel's walk land on an empty
# file, an empty directory or a read-only tree where the policy denies the
# object, whatever the supervisor saw.  Under both engines.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

SWAP=$top_builddir/tests/progs/race-swap
[ -x "$SWAP" ] || skip_all "helper $SWAP not built"
cp "$SWAP" "$ROOT/bin/race-swap" || exit 99
SWAP=$ROOT/bin/race-swap
N=${RACE_N:-3000}
SECRET=SECRET-KEY-BYTES
PLANT=planted-by-the-race

mkdir -p "$HOME/.ssh" "$ROOT/ok" "$ROOT/.git/hooks"
echo "$SECRET" >"$HOME/.ssh/id_rsa"
chmod 0600 "$HOME/.ssh/id_rsa"
mkdir -p "$ROOT/ok/.ssh"
echo decoy >"$ROOT/ok/.ssh/id_rsa"

# race_case ENGINE MODE OP [AGENTTRACE OPTIONS]: one run of race-swap;
# sets RESULT to its line.
race_case() {
	local engine=$1 mode=$2 op=$3 link=$ROOT/x name bad hooks=${HOOKS:-$ROOT/.git/hooks}
	shift 3
	rm -rf "$link" "$link.swap" "$hooks/pre-commit" "$ROOT/ok/pre-commit"
	# A symlink towards ~/.ssh is refused (write.home.ssh): the swapped
	# link names HOME, and the opened name goes on with .ssh/id_rsa.
	if [ "$op" = read ]; then name=.ssh/id_rsa bad=$HOME; else name=pre-commit bad=$hooks; fi
	if [ "$mode" = rename ]; then
		mkdir -p "$link/.ssh"
		[ "$op" = read ] && echo decoy >"$link/.ssh/id_rsa"
	fi
	at --engine "$engine" "$@" -- "$SWAP" "$mode" "$N" "$link" "$ROOT/ok" "$bad" "$name" "$op" \
		"$([ "$op" = read ] && echo "$SECRET" || echo "$PLANT")" >"$OUT" 2>"$ERR"
	RESULT=$(cat "$OUT")
	[ -n "$RESULT" ] || diag "stderr:" "$(head -c 2000 "$ERR")"
}

marker_of() {
	printf '%s' "$1" | sed -n 's/.* marker=\([0-9]*\).*/\1/p'
}

for E in notify ptrace; do
	if [ "$E" = notify ] && ! at_q --engine notify -- true; then
		skip "notify engine" "no notify engine on this kernel"
		continue
	fi
	for M in symlink rename; do
		race_case "$E" "$M" read
		diag "$E $M read: $RESULT"
		assert_eq "$E, $M swap: the credential's bytes are never read" 0 "$(marker_of "$RESULT")"
		assert_rec "$E, $M swap: the refused reads are recorded" \
			"$(deny_expr read read.ssh-keys "$HOME/.ssh/id_rsa")"

		race_case "$E" "$M" write
		diag "$E $M write: $RESULT"
		if [ -e "$ROOT/.git/hooks/pre-commit" ]; then
			not_ok "$E, $M swap: no hook is planted" \
				"$(wc -c <"$ROOT/.git/hooks/pre-commit") bytes in .git/hooks/pre-commit"
		else
			ok "$E, $M swap: no hook is planted"
		fi
		assert_rec "$E, $M swap: the refused writes are recorded" \
			"$(deny_expr write write.git-hooks "$ROOT/.git/hooks/pre-commit")"
	done
done

# --- a nested project's hooks (a repository vendored below ROOT) -----------------
nested=$ROOT/vendor/lib/.git/hooks
at_q -- true
plain=$(rec_field "event == 'summary'" masks | "$PYTHON" -c 'import json, sys; print(json.load(sys.stdin)["write"])')
mkdir -p "$nested"
at_q -- true
assert_rec "a nested repository: its hooks are masked too" \
	"event == 'summary' and masks['write'] > $plain and masks['in_force'] == masks['read'] + masks['write']"
for E in notify ptrace; do
	HOOKS=$nested race_case "$E" symlink write
	diag "$E nested write: $RESULT"
	if [ -e "$nested/pre-commit" ]; then
		not_ok "$E, symlink swap: no hook is planted in a nested repository" \
			"$(wc -c <"$nested/pre-commit") bytes in vendor/lib/.git/hooks/pre-commit"
	else
		ok "$E, symlink swap: no hook is planted in a nested repository"
	fi
	assert_rec "$E, nested repository: the refused writes are recorded" \
		"$(deny_expr write write.git-hooks "$nested/pre-commit")"
done

# --- other routes to the same objects ------------------------------------------
# The supervisor's own view, through /proc/PID/root of agenttrace (the
# command's parent): the kernel refuses a process without agenttrace's
# capabilities the walk into it, whatever the supervisor checked.
rm -rf "$ROOT/x" "$ROOT/x.swap"
at -- sh -c 'exec "$0" symlink "$1" "$2" "$3" "/proc/$PPID/root$4" .ssh/id_rsa read "$5"' \
	"$SWAP" "$N" "$ROOT/x" "$ROOT/ok" "$HOME" "$SECRET" >"$OUT" 2>"$ERR"
diag "via /proc/PPID/root: $(cat "$OUT")"
assert_eq "via agenttrace's /proc/PID/root: the credential's bytes are never read" 0 \
	"$(marker_of "$(cat "$OUT")")"

# No race at all: a credential's directory renamed to a name no rule
# protects (a layer that protects ~/keys/secret, HOME writable).  The mask
# goes with the directory; also for the opens the notify engine makes
# itself for a caller with threads, which are made in the command's view.
mkdir -p "$HOME/keys"
echo "$SECRET" >"$HOME/keys/secret"
cat >"$SANDBOX/keys.json" <<JSON
{"agenttrace": 1, "extends": "default",
 "read": {"deny": [{"id": "read.keys", "path": "\${HOME}/keys/secret"}]}}
JSON
cat >"$ROOT/moved.py" <<'PY'
import os, sys, threading
threading.Thread(target=threading.Event().wait, daemon=True).start()
os.rename(os.path.expanduser("~/keys"), "moved")
try:
    print(open("moved/secret").read().strip() or "(empty)")
except OSError as e:
    print("error", e.errno)
os.rename("moved", os.path.expanduser("~/keys"))
PY
for E in notify ptrace; do
	at_q --engine "$E" --policy "$SANDBOX/keys.json" --allow-write "$HOME/**" -- "$PYTHON" "$ROOT/moved.py"
	assert_ne "$E: a renamed credential directory still hides the credential" "$SECRET" "$(cat "$OUT")"
	[ "$(cat "$OUT")" = "$SECRET" ] && diag "stderr:" "$(head -c 1500 "$ERR")"
done
# Without masks the supervisor refuses the rename itself: it would take
# the credential out of its rule's sight.
at_q --mask off --policy "$SANDBOX/keys.json" --allow-write "$HOME/**" -- "$PYTHON" "$ROOT/moved.py"
assert_ne "--mask off: the renamed directory does not give the credential away" \
	"$SECRET" "$(cat "$OUT")"
assert_rec "--mask off: the rename of the credential's directory is refused" \
	"event == 'alert' and action == 'deny' and kind == 'read' and rule_id == 'read.keys'"

# A protected tree's directory cannot be moved away and made again: the
# supervisor refuses it for .git (a rename on the way to what a content
# rule judges), the kernel for .github, whose workflows are a mount.
at_q -- mv "$ROOT/.git" "$ROOT/g"
assert_ne "mv .git away: refused" 0 $?
mkdir -p "$ROOT/.github/workflows"
echo 'on: push' >"$ROOT/.github/workflows/ci.yml"
at_q -- mv "$ROOT/.github" "$ROOT/gh"
assert_ne "mv .github away: refused" 0 $?
assert_match "mv .github away: the kernel says the directory is busy" "busy" "$(cat "$ERR")"
assert_file_present "mv .github away: the workflow stays" "$ROOT/.github/workflows/ci.yml"
# The same rename by a caller with a second thread, which the notify
# engine makes itself: the mount is the caller's, and so is EBUSY.
at_q --engine notify -- "$PYTHON" -c '
import os, sys, threading
threading.Thread(target=threading.Event().wait, daemon=True).start()
try:
    os.rename(sys.argv[1], sys.argv[2]); print("moved")
except OSError as e:
    print(e.strerror)' "$ROOT/.github" "$ROOT/gh"
assert_eq "notify, a racing caller's mv .github away: the directory is busy" \
	"Device or resource busy" "$(cat "$OUT")"
assert_file_present "notify, a racing caller's mv .github away: the workflow stays" \
	"$ROOT/.github/workflows/ci.yml"
assert_file_present "mv .git away: .git stays" "$ROOT/.git/hooks"

# --- the command cannot undo the masks (the filter refuses mount calls) ----------
for E in notify ptrace; do
	at_q --engine "$E" -- "$TRY" umount "$HOME/.ssh/id_rsa"
	assert_eq "$E: umount of a mask: EPERM" "$EPERM" $?
	assert_rec "$E: umount of a mask: recorded" \
		"event == 'alert' and action == 'deny' and rule_id == 'syscall.mount'"
	at_q --engine "$E" -- "$TRY" move-mount "$ROOT/.git/hooks"
	assert_eq "$E: move_mount of a read-only tree: EPERM" "$EPERM" $?
	at_q --engine "$E" -- "$TRY" unshare-mount
	assert_eq "$E: a namespace of its own: EPERM" "$EPERM" $?
done
# Without the filter (the preload backend), no capability lets it either.
at_q --backend preload -- "$TRY" umount "$HOME/.ssh/id_rsa"
assert_eq "preload: umount of a mask: EPERM (no capability)" "$EPERM" $?
at_q --backend preload -- sh -c 'cat "$HOME/.ssh/id_rsa"; true'
assert_eq "preload: the credential stays hidden" "" "$(cat "$OUT")"

# --- what the command sees -------------------------------------------------------
at_q -- sh -c 'grep -c " $HOME/.ssh/id_rsa " /proc/self/mountinfo; findmnt -n -o TARGET "$ROOT/.git/hooks"; ls -A "$HOME/.ssh"'
assert_eq "mountinfo and findmnt show the masks; the listing keeps its names" \
	"1
$ROOT/.git/hooks
id_rsa" "$(cat "$OUT")"
assert_rec "the summary names the namespace and the masks" \
	"event == 'summary' and masks['namespace'] == ('mount' if $(id -u) == 0 else 'user') and masks['read'] >= 1 and masks['write'] >= 1 and masks['in_force'] >= 2 and masks['why'] is None"
at_q --mask off -- true
assert_rec "--mask off: the summary's masks is null" "event == 'summary' and masks is None"
at_q --mask off -- sh -c 'grep -c " $HOME/.ssh/id_rsa " /proc/self/mountinfo'
assert_eq "--mask off: no mask" 0 "$(cat "$OUT")"

# Admitted objects are not masked.
at_q --allow-read "$HOME/.ssh/id_rsa" -- cat "$HOME/.ssh/id_rsa"
assert_eq "--allow-read: the credential is read" "$SECRET" "$(cat "$OUT")"
at_q --allow-write '${ROOT}/.git/hooks/pre-commit' -- sh -c 'echo "#!/bin/sh" > .git/hooks/pre-commit'
assert_eq "--allow-write of a hook: written" 0 $?
rm -f "$ROOT/.git/hooks/pre-commit"

# With --private-tmp (which gives the supervisor a namespace of its own
# as root) the masks hold in the command's.
if [ "$(id -u)" = 0 ]; then
	at_q --private-tmp -- sh -c 'cat "$HOME/.ssh/id_rsa"; findmnt -n -o FSTYPE /tmp'
	assert_eq "--private-tmp: the credential hidden, /tmp private" "tmpfs" "$(cat "$OUT")"
fi

# --- where no namespace can be made ---------------------------------------------
AGENTTRACE_TEST_MASK_NS=0 at_q -v -- sh -c 'cat "$HOME/.ssh/id_rsa"; true'
assert_eq "no namespace: the command runs" 0 $?
assert_match "no namespace: one info line says so" "masks: none \(no namespace may be made" "$(cat "$ERR")"
assert_rec "no namespace: the summary says no mask ran, and why" \
	"event == 'summary' and masks['namespace'] is None and masks['in_force'] == 0 and 'no namespace' in masks['why']"
AGENTTRACE_TEST_MASK_NS=0 at_q -- true
assert_match "no namespace: the human summary says the race stays open" "no masks .*race" "$(cat "$ERR")"
AGENTTRACE_TEST_MASK_NS=0 at --engine ptrace -- "$SWAP" symlink 200 "$ROOT/x" "$ROOT/ok" "$ROOT/.git/hooks" \
	pre-commit write "$PLANT" >"$OUT" 2>"$ERR"
assert_match "no namespace: the race runs (the supervisor's checks alone)" "^tries=200 " "$(cat "$OUT")"
rm -f "$ROOT/.git/hooks/pre-commit"
AGENTTRACE_TEST_MASK_NS=0 at_q --mask on -- true
assert_eq "--mask on without a namespace: 125" 125 $?
# The namespace is made but no mount in it succeeds (a container's
# seccomp profile, Ubuntu's restricted unprivileged user namespaces):
# only the child finds out, and says so.
AGENTTRACE_TEST_MASK_MOUNT=0 at_q -v -- sh -c 'cat "$HOME/.ssh/id_rsa"; grep -c " $HOME/.ssh/id_rsa " /proc/self/mountinfo'
assert_eq "namespace without mounts: the command runs, unmasked" 0 "$(cat "$OUT")"
assert_match "namespace without mounts: one info line says why" \
	"masks: none \(cannot keep mounts from propagating: Operation not permitted\); the supervisor's checks alone" \
	"$(cat "$ERR")"
assert_rec "namespace without mounts: the summary says no mask ran, and why" \
	"event == 'summary' and masks['namespace'] is None and masks['in_force'] == 0 and 'cannot keep mounts' in masks['why']"
AGENTTRACE_TEST_MASK_MOUNT=0 at_q --mask on -- true
assert_eq "--mask on, namespace without mounts: 125" 125 $?
assert_match "--mask on, namespace without mounts: says why" "--mask on: cannot keep mounts" "$(cat "$ERR")"
at_q --mask on --mode audit -- true
assert_eq "--mask on in audit mode: 125" 125 $?
at_q --mask sometimes -- true
assert_eq "--mask sometimes: 125" 125 $?

# --doctor tells in advance which of the two protections a session runs.
"$AGENTTRACE" --doctor >"$OUT" 2>"$ERR"
assert_match "--doctor: the masks a session here makes" \
	"^  masks \(--mask auto\) +a $([ "$(id -u)" = 0 ] && echo mount || echo user) namespace" "$(cat "$OUT")"
AGENTTRACE_TEST_MASK_NS=0 "$AGENTTRACE" --doctor >"$OUT" 2>"$ERR"
assert_match "--doctor, no namespace: the supervisor's checks alone, and why" \
	"^  masks \(--mask auto\) +none, no namespace may be made.*checks alone" "$(cat "$OUT")"

# --- not root: a user namespace -----------------------------------------------
# agenttrace run by an unprivileged user (uid 54321, no passwd entry
# needed) makes a user namespace with the user mapped to itself.
U=54321
if [ "$(id -u)" != 0 ] || ! have setpriv; then
	skip "not root: user namespace" "needs root and setpriv to become another user"
	exit 0
fi
UB=$SANDBOX/u
mkdir -p "$UB/root/.git/hooks" "$UB/root/ok/.ssh" "$UB/home/.ssh" "$UB/tmp"
echo "$SECRET" >"$UB/home/.ssh/id_rsa"
echo decoy >"$UB/root/ok/.ssh/id_rsa"
cp "$SWAP" "$UB/root/race-swap"
chown -R "$U:$U" "$UB"
chmod 0755 "$SANDBOX"
as_user() {
	(cd "$UB/root" && exec setpriv --reuid "$U" --regid "$U" --clear-groups \
		env HOME="$UB/home" TMPDIR="$UB/tmp" timeout -k 5 "$AT_TIMEOUT" \
		"$AGENTTRACE" --log "$UB/log.jsonl" "$@") >"$OUT" 2>"$ERR"
}
as_user -- true
if grep -q "masks: none" "$ERR" || [ ! -s "$UB/log.jsonl" ]; then
	skip "not root: user namespace" "no user namespace here: $(head -c 300 "$ERR")"
	exit 0
fi
(cd "$UB/root" && setpriv --reuid "$U" --regid "$U" --clear-groups "$AGENTTRACE" --doctor) >"$OUT" 2>"$ERR"
assert_match "not root, --doctor: a user namespace" "^  masks \(--mask auto\) +a user namespace" "$(cat "$OUT")"
REC_LOG=$UB/log.jsonl assert_rec "not root: the masks are in a user namespace" \
	"event == 'summary' and masks['namespace'] == 'user' and masks['in_force'] >= 2"
for E in notify ptrace; do
	as_user --engine "$E" -- ./race-swap symlink "$N" "$UB/root/x" "$UB/root/ok" "$UB/home" \
		.ssh/id_rsa read "$SECRET"
	diag "not root, $E: $(cat "$OUT")"
	assert_eq "not root, $E: the credential's bytes are never read" 0 "$(marker_of "$(cat "$OUT")")"
	as_user --engine "$E" -- ./race-swap symlink "$N" "$UB/root/x" "$UB/root/ok" "$UB/root/.git/hooks" \
		pre-commit write "$PLANT"
	assert_file_absent "not root, $E: no hook is planted" "$UB/root/.git/hooks/pre-commit"
done
# A user namespace in which no mount succeeds changes what the command
# sees for nothing: the command is started again without one.
AGENTTRACE_TEST_MASK_MOUNT=0 as_user -v -- sh -c 'tr -s " " </proc/self/uid_map; stat -c %U /'
assert_eq "not root, namespace without mounts: the command runs without a user namespace" \
	" 0 0 4294967295
root" "$(cat "$OUT")"
assert_match "not root, namespace without mounts: started again, and said so" \
	"masks: none \(cannot keep mounts.*starting the command again without a namespace" "$(cat "$ERR")"
# The supervisor's view through its /proc/PID/root: another user
# namespace's processes are out of a capability-less command's reach.
as_user -- sh -c 'exec ./race-swap symlink "$0" "$1" "$2" "/proc/$PPID/root$3" .ssh/id_rsa read "$4"' \
	"$N" "$UB/root/x" "$UB/root/ok" "$UB/home" "$SECRET"
assert_eq "not root, via agenttrace's /proc/PID/root: never read" 0 "$(marker_of "$(cat "$OUT")")"
# What the namespace changes, and what it does not.
as_user -- sh -c 'stat -c %u "$HOME/.ssh" /; cat /proc/self/uid_map | tr -s " "'
assert_eq "not root: own files keep their owner, others' show as the overflow user; one mapping" \
	"$U
65534
 $U $U 1" "$(cat "$OUT")"
