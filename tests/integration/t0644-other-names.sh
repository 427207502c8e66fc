#!/bin/bash
# A file a deny rule names may have other names: a hard link made before
# the session (a backup of ~/.ssh, a project file linked to ~/.bashrc).
# A mask covers a name and a rule matches one, so the supervisor knows
# such files by device and inode (agenttrace-policy(5), DECISIONS): a read
# or a write by another name is judged, and recorded, as one of the file,
# and under the notify engine no name swapped after the check reaches it.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

unset AGENTTRACE_TEST_ENGINE
mkdir -p "$HOME/.ssh" "$HOME/.aws" "$ROOT/x" "$ROOT/y"
echo "KEY-MATERIAL" >"$HOME/.ssh/id_rsa"
chmod 0600 "$HOME/.ssh/id_rsa"
echo "AWS-SECRET" >"$HOME/.aws/credentials"
echo "echo rc" >"$HOME/.bashrc"

# links: the other names, made outside agenttrace (again after a case
# removed one).
links() {
	ln -f "$HOME/.ssh/id_rsa" "$ROOT/key-copy"
	ln -f "$HOME/.aws/credentials" "$ROOT/aws-copy"
	ln -f "$HOME/.bashrc" "$ROOT/rc-copy"
}
links

# other_why NAME FILE: the record's why says whose other name NAME is.
other_why() {
	printf "'%s is another name of %s' in why" "$ROOT/$1" "$2"
}

engines="notify ptrace"
at_q --engine notify -- true || engines=ptrace

for E in $engines; do
	for O in "" "--mask off"; do
		L="$E${O:+, $O}"
		at_q --engine "$E" $O -- cat key-copy
		assert_eq "$L: cat of another name of the key: refused" 1 $?
		assert_rec "$L: recorded as a read of the key" \
			"$(deny_expr read read.ssh-keys "$HOME/.ssh/id_rsa") and $(other_why key-copy "$HOME/.ssh/id_rsa")"
		check "$L: nothing of the key was read" sh -c '! grep -q KEY-MATERIAL "$1"' - "$OUT"
		at_q --engine "$E" $O -- cat aws-copy
		assert_eq "$L: cat of another name of ~/.aws/credentials: refused" 1 $?
		assert_rec "$L: recorded as a read of the credentials" \
			"$(deny_expr read read.aws "$HOME/.aws/credentials")"
		at_q --engine "$E" $O -- sh -c 'echo evil >>rc-copy'
		assert_ne "$L: append to another name of ~/.bashrc: refused" 0 $?
		assert_rec "$L: recorded as a write of ~/.bashrc" \
			"$(deny_expr write write.home.bashrc "$HOME/.bashrc") and $(other_why rc-copy "$HOME/.bashrc")"
		assert_file_content "$L: ~/.bashrc unchanged" "$HOME/.bashrc" "echo rc"
		# What the policy lets be done to the file goes by any name:
		# ~/.bashrc is readable; removing a name changes no file.
		at_q --engine "$E" $O -- cat rc-copy
		assert_eq "$L: cat of another name of ~/.bashrc: allowed" 0 $?
		assert_no_alert "$L: cat rc-copy: no record"
		at_q --engine "$E" $O -- rm rc-copy
		assert_eq "$L: rm of another name of ~/.bashrc: allowed" 0 $?
		assert_file_present "$L: ~/.bashrc stays" "$HOME/.bashrc"
		links
	done
done

# The preload shim knows them too, from the supervisor's plan.
for O in "" "--mask off"; do
	L="preload${O:+, $O}"
	at_q --backend preload $O -- cat key-copy
	assert_eq "$L: cat of another name of the key: refused" 1 $?
	assert_rec "$L: recorded as a read of the key" \
		"$(deny_expr read read.ssh-keys "$HOME/.ssh/id_rsa") and $(other_why key-copy "$HOME/.ssh/id_rsa")"
	check "$L: nothing of the key was read" sh -c '! grep -q KEY-MATERIAL "$1"' - "$OUT"
	at_q --backend preload $O -- sh -c 'echo evil >>rc-copy'
	assert_ne "$L: append to another name of ~/.bashrc: refused" 0 $?
	assert_file_content "$L: ~/.bashrc unchanged" "$HOME/.bashrc" "echo rc"
	at_q --backend preload $O -- cat rc-copy
	assert_eq "$L: cat of another name of ~/.bashrc: allowed" 0 $?
	at_q --backend preload $O -- rm rc-copy
	assert_eq "$L: rm of another name of ~/.bashrc: allowed" 0 $?
	links
done

# A file the session itself names anew is judged so already (a link of a
# read-denied file is refused): moving its other name gives it a new one.
at_q -- mv key-copy moved-key
assert_ne "mv of another name of the key: refused" 0 $?
assert_file_present "mv of another name of the key: it stays" "$ROOT/key-copy"

# The denial's suggested layer admits the file, by any of its names.
at_q -- cat key-copy
layer=$(rec_field "event == 'alert' and action == 'deny' and has('suggest')" suggest)
printf '%s\n' "$layer" >"$SANDBOX/fix.json"
assert_match "the suggested layer names the key" "\\.ssh/id_rsa" "$layer"
at_q --policy "$SANDBOX/fix.json" -- cat key-copy
assert_eq "under the suggested layer: cat key-copy works" 0 $?
assert_match "under the suggested layer: it read the key" "KEY-MATERIAL" "$(cat "$OUT")"

# Audit mode lets it through, recorded as what it would refuse.
at_q --mode audit -- cat key-copy
assert_eq "audit: cat key-copy runs" 0 $?
assert_rec "audit: recorded as a read of the key" \
	"event == 'alert' and rule_id == 'read.ssh-keys' and path == '$HOME/.ssh/id_rsa'"

# Replay decides the record as the run did: it names the key.
at_q --record -- cat key-copy
cp "$LOG" "$SANDBOX/other.jsonl"
"$top_builddir/agenttrace-policy" replay "$SANDBOX/other.jsonl" --policy default >"$OUT" 2>"$ERR"
assert_eq "replay: decided as the run did" 0 $?
[ -s "$OUT" ] && diag "$(head -c 1000 "$OUT")"

# -v names what it found.
at_q -v -- true
assert_match "-v: the denied files with other names" \
	"denied file with another name: $HOME/.ssh/id_rsa" "$(cat "$ERR")"

# --- a name swapped after the check ----------------------------------------
# ROOT/x/f is an ordinary file, ROOT/y/f another name of a denied file; a
# second process exchanges x and y while the first uses x/f.  Under the
# notify engine the call is made by the supervisor on the object it
# opened, and refused where that is the denied file: no change reaches
# ~/.bashrc and no read gets the key, and the refused tries are recorded.

N=${RACE_N:-3000}

# dirs_with OTHER: ROOT/x/f an ordinary file, ROOT/y/f another name of OTHER.
dirs_with() {
	rm -rf "$ROOT/x" "$ROOT/y"
	mkdir -p "$ROOT/x" "$ROOT/y"
	echo plain >"$ROOT/x/f"
	ln -f "$1" "$ROOT/y/f"
}
cat >"$ROOT/swap-change.py" <<'PY'
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
root, n, how = sys.argv[1], int(sys.argv[2]), sys.argv[3]
a, b = os.path.join(root, "x"), os.path.join(root, "y")
p = os.path.join(a, "f")
change = {"truncate": lambda: os.truncate(p, 3), "chmod": lambda: os.chmod(p, 0o777),
          "utime": lambda: os.utime(p, (1, 1)),
          "xattr": lambda: os.setxattr(p, "user.test", b"1")}[how]
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.write(w, b"x")
    while True:
        libc.renameat2(-100, a.encode(), -100, b.encode(), 2)
os.read(r, 1)  # the swapper runs before the first try
for i in range(n):
    try:
        change()
    except OSError:
        pass
os.kill(pid, 9)
PY
# rc_state: ~/.bashrc's mode, size, time and the helper's attribute.
rc_state() {
	"$PYTHON" -c 'import os, sys
st = os.stat(sys.argv[1])
try:
    x = os.getxattr(sys.argv[1], "user.test")
except OSError:
    x = None
print(oct(st.st_mode), st.st_size, int(st.st_mtime), x)' "$HOME/.bashrc"
}
before=$(rc_state)
if [ "${engines#notify}" != "$engines" ]; then
	for how in truncate chmod utime xattr; do
		dirs_with "$HOME/.bashrc"
		at_q --engine notify -- "$PYTHON" "$ROOT/swap-change.py" "$ROOT" "$N" "$how"
		assert_eq "swap, $how: the helper ran" 0 $?
		assert_eq "swap, $how: ~/.bashrc unchanged" "$before" "$(rc_state)"
		assert_rec "swap, $how: the refused tries are recorded" \
			"$(deny_expr write write.home.bashrc "$HOME/.bashrc") and 'is another name of' in why"
	done
fi

dirs_with "$HOME/.ssh/id_rsa"
cat >"$ROOT/swap.py" <<'PY'
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
root, n = sys.argv[1], int(sys.argv[2])
a, b = os.path.join(root, "x"), os.path.join(root, "y")
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.write(w, b"x")
    while True:
        libc.renameat2(-100, a.encode(), -100, b.encode(), 2)
os.read(r, 1)  # the swapper runs before the first try
bad = ok = denied = 0
for i in range(n):
    try:
        with open(os.path.join(a, "f"), "rb") as f:
            if b"KEY-MATERIAL" in f.read():
                bad += 1
            else:
                ok += 1
    except PermissionError:
        denied += 1
    except FileNotFoundError:
        pass
os.kill(pid, 9)
print("ok=%d bad=%d denied=%d" % (ok, bad, denied))
PY
native_race "$PYTHON" "$ROOT/swap.py" "$ROOT" "$N"
diag "natively: $(cat "$OUT")"
assert_match "natively, the swapped name reaches the key" " bad=[1-9]" "$(cat "$OUT")"
for E in $engines; do
	for O in "" "--mask off"; do
		L="$E${O:+, $O}"
		at_q --engine "$E" $O -- "$PYTHON" "$ROOT/swap.py" "$ROOT" "$N"
		assert_eq "swap, $L: the helper ran" 0 $?
		diag "swap, $L: $(cat "$OUT")"
		denied=$(sed -n 's/.*denied=\([0-9]*\).*/\1/p' "$OUT")
		recs=$(rec_count "event == 'alert' and action == 'deny' and rule_id == 'read.ssh-keys'")
		if [ "$E" = ptrace ]; then
			# No open is made for the caller: the kernel's walk after
			# the check reaches what the names lead to then
			# (doc/THREAT-MODEL.md).
			diag "swap, $L: $recs records (the ptrace engine's race stays open)"
			continue
		fi
		assert_match "swap, $L: no read got the key" " bad=0 " "$(cat "$OUT") "
		assert_eq "swap, $L: each refused try is recorded" "${denied:-x}" "$recs"
	done
done

# A hard link of ~/.bashrc renamed back and forth onto a name being
# created: the open that found the name missing would reach the file by
# it.  Under notify the supervisor checks what it opened.
mkdir -p "$ROOT/sub"
ln -f "$HOME/.bashrc" "$ROOT/sub/b"
cp "$PROGS/race-rename-onto" "$ROOT/bin/race-rename-onto" || exit 99
if [ "$engines" != ptrace ]; then
	before=$(cat "$HOME/.bashrc")
	at_q --engine notify -- "$ROOT/bin/race-rename-onto" "$ROOT/sub" b new "$N"
	diag "a hard link renamed onto a name being created: $(cat "$OUT")"
	assert_match "a hard link renamed onto a name being created: none reached ~/.bashrc" \
		"wins=0$" "$(cat "$OUT")"
	assert_file_content "a hard link renamed onto a name being created: ~/.bashrc unchanged" \
		"$HOME/.bashrc" "$before"
fi
rm -rf "$ROOT/sub"

# --- a protected name that is a symlink ----------------------------------------
# A dotfiles manager (stow, home-manager) makes ~/.ssh a link into its
# tree and ~/.bashrc one to its file: the paths judged are where they
# lead, and the rules name them there too (agenttrace-policy(5), RULES).
rm -rf "$ROOT/x" "$ROOT/y" "$ROOT/key-copy" "$ROOT/aws-copy" "$ROOT/rc-copy"
mkdir -p "$HOME/dotfiles"
mv "$HOME/.ssh" "$HOME/dotfiles/ssh"
ln -s dotfiles/ssh "$HOME/.ssh"
echo "ssh-rsa PUBLIC" >"$HOME/dotfiles/ssh/id_rsa.pub"
mv "$HOME/.bashrc" "$HOME/dotfiles/bashrc"
ln -s dotfiles/bashrc "$HOME/.bashrc"
for B in auto preload; do
	backend_use "$B"
	bk_q -- cat "$HOME/.ssh/id_rsa"
	assert_eq "${BK}the key through a linked ~/.ssh: refused" 1 $?
	assert_rec "${BK}the key through a linked ~/.ssh: recorded where it is" \
		"$(deny_expr read read.ssh-keys "$HOME/dotfiles/ssh/id_rsa")"
	bk_allowed "the public key through a linked ~/.ssh" -- cat "$HOME/.ssh/id_rsa.pub"
	bk_q -- sh -c 'echo evil >>"$HOME/.bashrc"'
	assert_ne "${BK}append to a linked ~/.bashrc: refused" 0 $?
	assert_rec "${BK}append to a linked ~/.bashrc: recorded where it is" \
		"$(deny_expr write write.home.bashrc "$HOME/dotfiles/bashrc")"
	assert_file_content "${BK}the linked ~/.bashrc unchanged" "$HOME/dotfiles/bashrc" "echo rc"
done
at_q -v -v -- true
assert_match "the key behind a linked ~/.ssh is masked where it is" \
	"mask: empty file over $HOME/dotfiles/ssh/id_rsa by read.ssh-keys" "$(cat "$ERR")"

# A name below a rule's first glob that is a link: a credentials file
# kept elsewhere (a secrets manager's mount, a dotfiles tree) and linked
# into ~/.aws, a ~/.kube directory linked to one elsewhere, a key linked
# into the linked ~/.ssh.  The loader follows each link it finds there
# when the policy is loaded (agenttrace-policy(5), Path patterns).
mkdir -p "$SANDBOX/vault/kube" "$HOME/.kube"
echo "AWS-LINKED" >"$SANDBOX/vault/aws-credentials"
ln -s "$SANDBOX/vault/aws-credentials" "$HOME/.aws/linked-credentials"
echo "KUBE-LINKED" >"$SANDBOX/vault/kube/config"
ln -sfn "$SANDBOX/vault/kube" "$HOME/.kube/conf.d"
echo "KEY-LINKED" >"$SANDBOX/vault/id_ed25519"
echo "ssh-ed25519 PUBLIC" >"$SANDBOX/vault/id_ed25519.pub"
ln -s "$SANDBOX/vault/id_ed25519" "$HOME/dotfiles/ssh/id_ed25519"
ln -s "$SANDBOX/vault/id_ed25519.pub" "$HOME/dotfiles/ssh/id_ed25519.pub"
linked_reads() {
	bk_q $1 -- cat "$HOME/.aws/linked-credentials"
	assert_eq "$2credentials linked into ~/.aws: refused" 1 $?
	assert_rec "$2credentials linked into ~/.aws: recorded where they are" \
		"$(deny_expr read read.aws "$SANDBOX/vault/aws-credentials")"
	check "$2nothing of the linked credentials was read" sh -c '! grep -q AWS-LINKED "$1"' - "$OUT"
	bk_q $1 -- cat "$SANDBOX/vault/aws-credentials"
	assert_eq "$2the linked credentials by their own name: refused" 1 $?
	bk_q $1 -- cat "$HOME/.kube/conf.d/config"
	assert_eq "$2a file of a directory linked into ~/.kube: refused" 1 $?
	assert_rec "$2the linked ~/.kube directory: recorded where it is" \
		"$(deny_expr read read.kube "$SANDBOX/vault/kube/config")"
	bk_q $1 -- cat "$HOME/.ssh/id_ed25519"
	assert_eq "$2a key linked into the linked ~/.ssh: refused" 1 $?
	assert_rec "$2the linked key: recorded where it is" \
		"$(deny_expr read read.ssh-keys "$SANDBOX/vault/id_ed25519")"
	bk_q $1 -- cat "$HOME/.ssh/id_ed25519.pub"
	assert_eq "$2its public key, linked too: allowed" 0 $?
	assert_no_alert "$2the linked public key: no record"
}
backend_use auto
for E in $engines; do
	linked_reads "--engine $E" "$E: "
done
backend_use preload
linked_reads "" "$BK"
backend_use auto
at_q -v -v -- true
assert_match "the credentials linked into ~/.aws are masked where they are" \
	"mask: empty file over $SANDBOX/vault/aws-credentials by read.aws" "$(cat "$ERR")"
assert_match "the directory linked into ~/.kube is masked where it is" \
	"mask: empty directory over $SANDBOX/vault/kube by read.kube" "$(cat "$ERR")"
# A second process swapping a symlink between a decoy and the linked
# credentials' own directory, under a single-threaded reader: the kernel's
# walk ends on the mask there (and the tries the supervisor sees are
# refused), under both engines.
mkdir -p "$ROOT/decoy"
echo decoy >"$ROOT/decoy/aws-credentials"
cp "$PROGS/race-swap" "$ROOT/bin/race-swap" || exit 99
for E in $engines; do
	rm -rf "$ROOT/sw" "$ROOT/sw.swap"
	at_q --engine "$E" -- "$ROOT/bin/race-swap" symlink "$N" "$ROOT/sw" "$ROOT/decoy" \
		"$SANDBOX/vault" aws-credentials read AWS-LINKED
	diag "$E: a symlink swapped towards the linked credentials: $(cat "$OUT")"
	assert_match "$E: a symlink swapped towards the linked credentials: never read" \
		" marker=0 " "$(cat "$OUT")"
	assert_rec "$E: a symlink swapped towards the linked credentials: the refused tries recorded" \
		"$(deny_expr read read.aws "$SANDBOX/vault/aws-credentials")"
done
rm -rf "$ROOT/sw" "$ROOT/sw.swap" "$ROOT/decoy"
at_q --allow-read "$SANDBOX/vault/aws-credentials" -- cat "$HOME/.aws/linked-credentials"
assert_eq "the suggested fix admits the linked credentials" 0 $?
assert_match "the suggested fix: they were read" "AWS-LINKED" "$(cat "$OUT")"
# A linked head whose name holds glob characters, a directory of links
# (stow's folded tree) linked into ~/.gnupg, and what gets no twin: a
# program (a virtual environment's python) and the system's files.
mkdir -p "$SANDBOX/dots [v2]/aws" "$SANDBOX/farm" "$SANDBOX/vault" "$HOME/.gnupg" \
	"$HOME/.config/gcloud/venv/bin"
echo "BRACKET-SECRET" >"$SANDBOX/dots [v2]/aws/credentials"
mv "$HOME/.aws" "$SANDBOX/aws-was"
ln -s "$SANDBOX/dots [v2]/aws" "$HOME/.aws"
echo "FARM-SECRET" >"$SANDBOX/vault/ABC.key"
ln -s "$SANDBOX/vault/ABC.key" "$SANDBOX/farm/ABC.key"
ln -s "$SANDBOX/farm" "$HOME/.gnupg/private-keys-v1.d"
ln -s "$PYTHON" "$HOME/.config/gcloud/venv/bin/python3"
ln -s /etc/hostname "$HOME/.config/gcloud/hostname"
# ~/.bashrc's file inside the project, where Landlock lets writes through.
mkdir -p "$ROOT/dots [v2]"
mv "$HOME/dotfiles/bashrc" "$ROOT/dots [v2]/bashrc"
ln -sfn "$ROOT/dots [v2]/bashrc" "$HOME/.bashrc"
for B in auto preload; do
	backend_use "$B"
	bk_q -- cat "$HOME/.aws/credentials"
	assert_eq "${BK}credentials behind a linked ~/.aws named with [v2]: refused" 1 $?
	assert_rec "${BK}the bracketed head: recorded where it leads" \
		"$(deny_expr read read.aws "$SANDBOX/dots [v2]/aws/credentials")"
	bk_q -- sh -c 'echo evil >>"$HOME/.bashrc"'
	assert_ne "${BK}append to ~/.bashrc linked into [v2]: refused" 0 $?
	assert_rec "${BK}append to ~/.bashrc linked into [v2]: recorded where it is" \
		"$(deny_expr write write.home.bashrc "$ROOT/dots [v2]/bashrc")"
	assert_file_content "${BK}~/.bashrc linked into [v2]: unchanged" "$ROOT/dots [v2]/bashrc" "echo rc"
	bk_q -- cat "$HOME/.gnupg/private-keys-v1.d/ABC.key"
	assert_eq "${BK}a key linked from a directory of links in ~/.gnupg: refused" 1 $?
	assert_rec "${BK}the key of the directory of links: recorded where it is" \
		"$(deny_expr read read.gnupg "$SANDBOX/vault/ABC.key")"
	bk_status "${BK}python linked into ~/.config/gcloud still runs" 0 -- "$PYTHON" -c 'pass'
	bk_status "${BK}/etc/hostname linked into ~/.config/gcloud stays readable" 0 -- cat /etc/hostname
done
backend_use auto
rm -rf "$HOME/.aws" "$HOME/.gnupg" "$HOME/.config/gcloud" "$SANDBOX/farm" "$SANDBOX/vault"
mv "$SANDBOX/aws-was" "$HOME/.aws"
mv "$ROOT/dots [v2]/bashrc" "$HOME/dotfiles/bashrc"
ln -sfn dotfiles/bashrc "$HOME/.bashrc"
rm -rf "$SANDBOX/dots [v2]" "$ROOT/dots [v2]"

# A credential that is a FIFO a process outside the session feeds is
# masked like a file, and the masks are all in force.
mkfifo "$HOME/.netrc"
at_q -v -v -- true
assert_match "a FIFO ~/.netrc gets an empty file over it" \
	"mask: empty file over $HOME/.netrc by read.netrc" "$(cat "$ERR")"
assert_rec "a FIFO ~/.netrc: every mask in force" \
	"event == 'summary' and r['masks']['in_force'] == r['masks']['read'] + r['masks']['write']"
rm -f "$HOME/.netrc"

# A link in ~/.aws to a project file makes it a credential too, and the
# default policy's own test that the project's README is readable still
# holds: its tests judge its text, not this machine's links.
echo "readme" >"$ROOT/README"
ln -s "$ROOT/README" "$HOME/.aws/shared"
at_q -- cat README
assert_eq "a project file linked into ~/.aws: the policy loads, the read refused" 1 $?
assert_rec "a project file linked into ~/.aws: recorded" "$(deny_expr read read.aws "$ROOT/README")"
rm -f "$HOME/.aws/shared" "$ROOT/README"
rm -rf "$HOME/.aws/linked-credentials" "$HOME/.kube" "$HOME/dotfiles/ssh/id_ed25519" \
	"$HOME/dotfiles/ssh/id_ed25519.pub" "$SANDBOX/vault"

# Only rules that narrow follow a link at their name: an allow rule's
# name linked elsewhere admits nothing there, nor does an exception that
# leads out of its rule's tree (a "public" linked to "..").
cat >"$SANDBOX/toolrc.json" <<'JSON'
{"agenttrace": 1, "extends": "default",
 "write": {"allow": [{"id": "write.test-toolrc", "path": "${HOME}/.toolrc"}]},
 "read": {"deny": [{"id": "read.test-secrets", "path": "${ROOT}/secrets/**",
                    "unless": ["${ROOT}/secrets/public/**"]}]}}
JSON
mkdir -p "$SANDBOX/outside" "$ROOT/secrets"
echo "echo victim" >"$SANDBOX/outside/victim.sh"
ln -sfn "$SANDBOX/outside/victim.sh" "$HOME/.toolrc"
echo "TOP-SECRET" >"$ROOT/secrets/key"
ln -sfn .. "$ROOT/secrets/public"
at_q --policy "$SANDBOX/toolrc.json" -- sh -c 'echo evil >"$1"' sh "$SANDBOX/outside/victim.sh"
assert_ne "an allowed name linked outside the roots admits no write there" 0 $?
assert_file_content "the link's target unchanged" "$SANDBOX/outside/victim.sh" "echo victim"
at_q --policy "$SANDBOX/toolrc.json" -- cat secrets/key
assert_eq "an exception linked to its rule's parent admits nothing: refused" 1 $?
assert_rec "an exception linked to its rule's parent: the read recorded" \
	"$(deny_expr read read.test-secrets "$ROOT/secrets/key")"
rm -f "$HOME/.toolrc" "$ROOT/secrets/public"
