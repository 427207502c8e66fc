#!/bin/bash
# SPEC §1/§5: the ptrace backend cannot be stepped around: static binaries,
# raw syscalls, other ABIs, threads, vfork, CLONE_UNTRACED, a cleared
# environment, and the syscalls that would blind the supervisor.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

bashrc=$HOME/.bashrc
cp "$TRY" "$ROOT/bin/nc"
nc=$ROOT/bin/nc

# bypass_expr ID: a kind "syscall" denial with exactly that rule id.
bypass_expr() {
	printf "event == 'alert' and action == 'deny' and kind == 'syscall' and rule_id == '%s'" "$1"
}

# expect_bypass DESC ERRNO ID -- CMD...
expect_bypass() {
	local desc=$1 want=$2 id=$3 st
	shift 3
	[ "$1" = -- ] && shift
	at -- "$@" >"$OUT" 2>"$ERR"
	st=$?
	assert_eq "$desc: program sees errno $want" "$want" "$st"
	[ "$st" = "$want" ] || diag "stderr:" "$(head -c 2000 "$ERR")"
	assert_rec "$desc: record $id" "$(bypass_expr "$id")"
}

# --- writes by every binary shape and thread ------------------------------------
if [ -n "$TRY_STATIC" ]; then
	expect_denied "static binary write" "$EACCES" write write. "$bashrc" -- "$TRY_STATIC" open-write "$bashrc"
	assert_file_absent "static binary write: absent" "$bashrc"
	expect_denied "static binary, write from a thread" "$EACCES" write write. "$bashrc" -- "$TRY_STATIC" thread-write "$bashrc"
	expect_allowed "static binary write under ROOT" -- "$TRY_STATIC" open-write "$ROOT/static.txt"
	assert_file_present "static binary write under ROOT: written" "$ROOT/static.txt"
else
	skip "static binary write" "no static helper (static linking unavailable)"
fi

expect_denied "raw syscall(SYS_openat)" "$EACCES" write write. "$bashrc" -- "$TRY" raw-openat "$bashrc"
assert_file_absent "raw syscall: absent" "$bashrc"

expect_denied "write from a second thread" "$EACCES" write write. "$bashrc" -- "$TRY" thread-write "$bashrc"
assert_file_absent "write from a second thread: absent" "$bashrc"
expect_allowed "write from a second thread under ROOT" -- "$TRY" thread-write "$ROOT/thread.txt"
assert_file_present "write from a second thread under ROOT: written" "$ROOT/thread.txt"

expect_denied "write from a forked child" "$EACCES" write write. "$bashrc" -- "$TRY" fork-write "$bashrc"
expect_denied "write from a vfork child" "$EACCES" write write. "$bashrc" -- "$TRY" vfork-write "$bashrc"
assert_file_absent "vfork child: absent" "$bashrc"

# --- exec shapes -------------------------------------------------------------
expect_denied "exec from a non-leader thread (nc -e)" "$EACCES" exec exec. "" -- "$TRY" thread-exec "$nc" -e /bin/sh 127.0.0.1 9
expect_denied "program exec'd from a non-leader thread is supervised" "$EACCES" write write. "$bashrc" -- \
	"$TRY" thread-exec "$TRY" open-write "$bashrc"
expect_allowed "exec from a non-leader thread (allowed program)" -- "$TRY" thread-exec "$TRY" exit 0

expect_denied "vfork child exec (nc -e)" "$EACCES" exec exec. "" -- "$TRY" vfork-exec "$nc" -e /bin/sh 127.0.0.1 9
expect_denied "program exec'd by a vfork child is supervised" "$EACCES" write write. "$bashrc" -- \
	"$TRY" vfork-exec "$TRY" open-write "$bashrc"

expect_denied "env -i child still supervised" "$EACCES" write write. "$bashrc" -- env -i "$TRY" open-write "$bashrc"
expect_denied "env -i sh -c child still supervised" "$EACCES" write write. "$bashrc" -- \
	env -i /bin/sh -c "exec '$TRY' open-write '$bashrc'"
assert_file_absent "env -i: absent" "$bashrc"

expect_denied "LD_PRELOAD cleared and a static child" "$EACCES" write write. "$bashrc" -- \
	env -u LD_PRELOAD "${TRY_STATIC:-$TRY}" raw-openat "$bashrc"

# --- other syscall ABIs ----------------------------------------------------------
("$TRY" i386-open "$SANDBOX/i386-probe"; exit $?) 2>/dev/null
native=$?
rm -f "$SANDBOX/i386-probe"
if [ "$native" = 0 ]; then
	expect_bypass "i386 int \$0x80 open" "$ENOSYS" syscall.abi -- "$TRY" i386-open "$bashrc"
	assert_file_absent "i386 open: absent" "$bashrc"
elif [ "$native" = 139 ]; then
	# No IA32 emulation in this kernel: int $0x80 is no entry point at all
	# (SIGSEGV natively), so there is nothing to bypass; it must stay so.
	at -- "$TRY" i386-open "$bashrc" >"$OUT" 2>"$ERR"
	assert_eq "i386 int \$0x80 (kernel without IA32): SIGSEGV under agenttrace too" 139 $?
	assert_file_absent "i386 int \$0x80 (kernel without IA32): absent" "$bashrc"
else
	skip "i386 int \$0x80 open" "unexpected native status $native"
fi

expect_bypass "x32 syscall" "$ENOSYS" syscall.abi -- "$TRY" x32-getpid

# --- syscalls that would blind the supervisor ------------------------------------
expect_bypass "io_uring_setup" "$EPERM" syscall.io_uring -- "$TRY" io_uring_setup
expect_bypass "clone(CLONE_UNTRACED)" "$EPERM" syscall.clone_untraced -- "$TRY" clone-untraced
expect_bypass "unshare(CLONE_NEWNS)" "$EPERM" syscall.namespace -- "$TRY" unshare-mount
expect_bypass "unshare(CLONE_NEWNET)" "$EPERM" syscall.namespace -- "$TRY" unshare-net

# mount: inside a private mount namespace of the test, so that even a
# supervisor failure cannot change the host's mounts.
mkdir -p "$ROOT/mnt"
if have unshare && unshare -m true 2>/dev/null; then
	rm -f "$LOG"
	unshare -m sh -c '
		cd "$ROOT" || exit 99
		timeout -k 5 "$AT_TIMEOUT" "$AGENTTRACE" --log "$LOG" -- "$TRY" mount "$ROOT/mnt"
		st=$?
		grep -q agenttrace-test /proc/self/mountinfo && st=200
		exit $st' >"$OUT" 2>"$ERR"
	assert_eq "mount: EPERM and nothing mounted" "$EPERM" $?
	assert_rec "mount: record syscall.mount" "$(bypass_expr syscall.mount)"
else
	skip "mount" "unshare -m unavailable"
fi

# ptrace and process_vm_writev of a sibling in the same session.  (A traced
# sibling already refuses PTRACE_ATTACH with EPERM; the record is the test.)
sibling='"$0" sleep 5 & s=$!; "$0" "$1" $s; st=$?; kill $s; exit $st'
expect_bypass "ptrace attach to a sibling" "$EPERM" syscall.ptrace -- sh -c "$sibling" "$TRY" ptrace-attach
expect_bypass "ptrace attach to an own child" "$EPERM" syscall.ptrace -- "$TRY" ptrace-attach child
expect_bypass "process_vm_writev on a sibling" "$EPERM" syscall.process_vm_writev -- sh -c "$sibling" "$TRY" process_vm_writev
expect_bypass "process_vm_writev on an own child" "$EPERM" syscall.process_vm_writev -- "$TRY" process_vm_writev child

# clone3 answers ENOSYS so that libc falls back to clone (which is traced).
at -- "$TRY" clone3 >"$OUT" 2>"$ERR"
assert_eq "clone3: ENOSYS" "$ENOSYS" $?

# No denial is silent: every one above left its record; the summary counts.
at -- sh -c '"$0" io_uring_setup; "$0" open-write "$HOME/.bashrc"; exit 0' "$TRY" >"$OUT" 2>"$ERR"
assert_eq "two denials, command exits 0" 0 $?
assert_rec "summary counts both denials" "event == 'summary' and denials == 2"
