#!/bin/bash
# doc/THREAT-MODEL.md: the ptrace backend cannot be stepped around: static binaries,
# raw syscalls, other ABIs, threads, vfork, CLONE_UNTRACED, a cleared
# environment, and the syscalls that would blind the supervisor.  The same
# attempts under --backend preload (doc/THREAT-MODEL.md): what goes through libc is
# caught, the rest is shown happening and the summary says the run was
# bypassable.
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

# What each attempt does without agenttrace: the preload backend must
# leave it so.
("$TRY" i386-open "$SANDBOX/i386-probe"; exit $?) 2>/dev/null
i386_native=$?
rm -f "$SANDBOX/i386-probe"
declare -A native_st
for op in x32-getpid io_uring_setup io_setup userfaultfd memfd_secret clone-untraced unshare-mount unshare-net clone3; do
	native_st[$op]=$(native "$TRY" "$op")
done
native_st[ptrace-child]=$(native "$TRY" ptrace-attach child)
native_st[pvw-child]=$(native "$TRY" process_vm_writev child)
sibling='"$0" sleep 5 & s=$!; "$0" "$1" $s; st=$?; kill -KILL $s; exit $st'
native_st[ptrace-sibling]=$(native sh -c "$sibling" "$TRY" ptrace-attach)
native_st[pvw-sibling]=$(native sh -c "$sibling" "$TRY" process_vm_writev)
mkdir -p "$ROOT/mnt"
# A root command keeps no CAP_SYS_ADMIN (doc/THREAT-MODEL.md "Root"): under
# the preload backend, which does not see these calls, the kernel itself
# refuses new namespaces and mounts.
if [ "$(id -u)" = 0 ]; then
	native_st[unshare-mount]=$EPERM
	native_st[unshare-net]=$EPERM
	# Without CAP_SYS_PTRACE (vm.unprivileged_userfaultfd 0, the default).
	[ "$(cat /proc/sys/vm/unprivileged_userfaultfd 2>/dev/null)" = 1 ] || native_st[userfaultfd]=$EPERM
fi

# bypass DESC ERRNO ID NATIVE -- CMD...: under auto the supervisor refuses
# CMD with ERRNO and records ID; under preload CMD runs as natively (NATIVE).
bypass() {
	local desc=$1 want=$2 id=$3 nat=$4
	shift 4
	if [ "$B" = auto ]; then
		expect_bypass "$desc" "$want" "$id" "$@"
	else
		bk_escapes "$desc runs as natively" "$nat" "$@"
	fi
}

for B in auto preload; do
	backend_use "$B"
	rm -f "$bashrc"

	# --- writes by every binary shape and thread ------------------------------------
	if [ -z "$TRY_STATIC" ]; then
		skip "${BK}static binary write" "no static helper (static linking unavailable)"
	elif [ "$B" = auto ]; then
		expect_denied "static binary write" "$EACCES" write write. "$bashrc" -- "$TRY_STATIC" open-write "$bashrc"
		assert_file_absent "static binary write: absent" "$bashrc"
		expect_denied "static binary, write from a thread" "$EACCES" write write. "$bashrc" -- "$TRY_STATIC" thread-write "$bashrc"
		expect_denied "sh starts the static helper, which writes" "$EACCES" write write. "$bashrc" -- \
			sh -c '"$0" open-write "$1"' "$TRY_STATIC" "$bashrc"
		assert_file_absent "static child: absent" "$bashrc"
	else
		printf 'orig' >"$bashrc"
		bk_escapes "static binary write to HOME/.bashrc" 0 -- "$TRY_STATIC" open-write "$bashrc"
		assert_file_content "${BK}static binary: HOME/.bashrc WAS written" "$bashrc" xrig
		assert_rec "${BK}static binary: the summary lists it as unseen" "$BYPASSABLE and '$TRY_STATIC' in unseen"
		printf 'orig' >"$bashrc"
		bk_escapes "static binary, write from a thread" 0 -- "$TRY_STATIC" thread-write "$bashrc"
		assert_file_content "${BK}static thread: HOME/.bashrc WAS written" "$bashrc" xrig
		printf 'orig' >"$bashrc"
		# A static program started by a dynamic one: the exec is seen, what it does is not.
		bk_escapes "sh starts the static helper, which writes" 0 -- sh -c '"$0" open-write "$1"' "$TRY_STATIC" "$bashrc"
		assert_file_content "${BK}static child: HOME/.bashrc WAS written" "$bashrc" xrig
		assert_rec "${BK}static child: listed as unseen" "$BYPASSABLE and '$TRY_STATIC' in unseen"
		rm -f "$bashrc"
	fi
	if [ -n "$TRY_STATIC" ]; then
		bk_allowed "static binary write under ROOT" -- "$TRY_STATIC" open-write "$ROOT/static.txt"
		assert_file_present "${BK}static binary write under ROOT: written" "$ROOT/static.txt"
		rm -f "$ROOT/static.txt"
	fi

	if [ "$B" = auto ]; then
		expect_denied "raw syscall(SYS_openat)" "$EACCES" write write. "$bashrc" -- "$TRY" raw-openat "$bashrc"
		assert_file_absent "raw syscall: absent" "$bashrc"
	else
		bk_escapes "raw syscall(SYS_openat)" 0 -- "$TRY" raw-openat "$bashrc"
		assert_file_present "${BK}raw syscall: HOME/.bashrc WAS created" "$bashrc"
		rm -f "$bashrc"
	fi

	bk_denied "write from a second thread" "$EACCES" write write. "$bashrc" -- "$TRY" thread-write "$bashrc"
	assert_file_absent "${BK}write from a second thread: absent" "$bashrc"
	bk_allowed "write from a second thread under ROOT" -- "$TRY" thread-write "$ROOT/thread.txt"
	assert_file_present "${BK}write from a second thread under ROOT: written" "$ROOT/thread.txt"
	rm -f "$ROOT/thread.txt"

	bk_denied "write from a forked child" "$EACCES" write write. "$bashrc" -- "$TRY" fork-write "$bashrc"
	bk_denied "write from a vfork child" "$EACCES" write write. "$bashrc" -- "$TRY" vfork-write "$bashrc"
	assert_file_absent "${BK}vfork child: absent" "$bashrc"

	# --- exec shapes -------------------------------------------------------------
	bk_denied "exec from a non-leader thread (nc -e)" "$EACCES" exec exec. "" -- "$TRY" thread-exec "$nc" -e /bin/sh 127.0.0.1 9
	bk_denied "program exec'd from a non-leader thread is supervised" "$EACCES" write write. "$bashrc" -- \
		"$TRY" thread-exec "$TRY" open-write "$bashrc"
	bk_allowed "exec from a non-leader thread (allowed program)" -- "$TRY" thread-exec "$TRY" exit 0
	# A thread whose exit signal is SIGCHLD comes as a fork event: taken
	# for a process, its exec would not be matched with the call judged
	# (race.exec, the process killed).
	bk_allowed "exec from a clone(CLONE_THREAD|SIGCHLD) thread (allowed program)" -- \
		"$TRY" sigchld-thread-exec "$TRY" exit 0
	bk_denied "program exec'd from a clone(CLONE_THREAD|SIGCHLD) thread is supervised" "$EACCES" \
		write write. "$bashrc" -- "$TRY" sigchld-thread-exec "$TRY" open-write "$bashrc"

	bk_denied "vfork child exec (nc -e)" "$EACCES" exec exec. "" -- "$TRY" vfork-exec "$nc" -e /bin/sh 127.0.0.1 9
	bk_denied "program exec'd by a vfork child is supervised" "$EACCES" write write. "$bashrc" -- \
		"$TRY" vfork-exec "$TRY" open-write "$bashrc"

	# (the shim puts itself back into a cleared environment)
	bk_denied "env -i child still supervised" "$EACCES" write write. "$bashrc" -- env -i "$TRY" open-write "$bashrc"
	bk_denied "env -i sh -c child still supervised" "$EACCES" write write. "$bashrc" -- \
		env -i /bin/sh -c "exec '$TRY' open-write '$bashrc'"
	assert_file_absent "${BK}env -i: absent" "$bashrc"

	if [ "$B" = auto ]; then
		expect_denied "LD_PRELOAD cleared and a static child" "$EACCES" write write. "$bashrc" -- \
			env -u LD_PRELOAD "${TRY_STATIC:-$TRY}" raw-openat "$bashrc"
	else
		bk_escapes "LD_PRELOAD cleared and a static child's raw openat" 0 -- \
			env -u LD_PRELOAD "${TRY_STATIC:-$TRY}" raw-openat "$bashrc"
		assert_file_present "${BK}LD_PRELOAD cleared, static child: HOME/.bashrc WAS created" "$bashrc"
		rm -f "$bashrc"
	fi

	# --- other syscall ABIs ----------------------------------------------------------
	# The supervisor-only rules (kind "syscall") have no libc call to wrap:
	# under the preload backend each runs as it does natively.
	if [ "$B" = preload ]; then
		bk_escapes "i386 int \$0x80 open (status $i386_native natively)" "$i386_native" -- "$TRY" i386-open "$bashrc"
		if [ "$i386_native" = 0 ]; then
			assert_file_present "${BK}i386 open: HOME/.bashrc WAS created" "$bashrc"
		fi
		rm -f "$bashrc"
	elif [ "$i386_native" = 0 ]; then
		expect_bypass "i386 int \$0x80 open" "$ENOSYS" syscall.abi -- "$TRY" i386-open "$bashrc"
		assert_file_absent "i386 open: absent" "$bashrc"
	elif [ "$i386_native" = 139 ]; then
		# No IA32 emulation in this kernel: int $0x80 is no entry point at all
		# (SIGSEGV natively), so there is nothing to bypass; it must stay so.
		at -- "$TRY" i386-open "$bashrc" >"$OUT" 2>"$ERR"
		assert_eq "i386 int \$0x80 (kernel without IA32): SIGSEGV under agenttrace too" 139 $?
		assert_file_absent "i386 int \$0x80 (kernel without IA32): absent" "$bashrc"
	else
		skip "i386 int \$0x80 open" "unexpected native status $i386_native"
	fi

	bypass "x32 syscall" "$ENOSYS" syscall.abi "${native_st[x32-getpid]}" -- "$TRY" x32-getpid

	# --- syscalls that would blind the supervisor ------------------------------------
	bypass "io_uring_setup" "$EPERM" syscall.io_uring "${native_st[io_uring_setup]}" -- "$TRY" io_uring_setup
	# Linux AIO: a read submitted before a call lands in the memory that
	# holds its path while the supervisor judges it.
	bypass "io_setup" "$EPERM" syscall.aio "${native_st[io_setup]}" -- "$TRY" io_setup
	# userfaultfd would let a process stall the supervisor's reads of its
	# memory and show it one value and the kernel another.
	bypass "userfaultfd" "$EPERM" syscall.userfaultfd "${native_st[userfaultfd]}" -- "$TRY" userfaultfd
	# Memory no other process can read: the supervisor could not read
	# the paths and addresses of calls that name it (EFAULT, no record).
	bypass "memfd_secret" "$ENOSYS" syscall.memfd_secret "${native_st[memfd_secret]}" -- "$TRY" memfd_secret
	if [ -e /dev/userfaultfd ]; then
		native_st[uffd-dev]=$(native "$TRY" open-read /dev/userfaultfd)
		bypass "open /dev/userfaultfd" "$EPERM" syscall.userfaultfd "${native_st[uffd-dev]}" -- \
			"$TRY" open-read /dev/userfaultfd
		# A descriptor of the device that no open of the session's
		# made (inherited here; received, or opened through a name
		# swapped after its check, alike): its ioctl is refused.
		if [ -r /dev/userfaultfd ]; then
			native_st[uffd-ioctl]=$(native "$TRY" uffd-ioctl 7 7</dev/userfaultfd)
			bypass "userfaultfd from an inherited /dev/userfaultfd" "$EPERM" \
				syscall.userfaultfd "${native_st[uffd-ioctl]}" -- \
				"$TRY" uffd-ioctl 7 7</dev/userfaultfd
		else
			skip "${BK}userfaultfd from an inherited /dev/userfaultfd" \
				"/dev/userfaultfd is not readable here"
		fi
	else
		skip "${BK}open /dev/userfaultfd" "no /dev/userfaultfd on this machine"
	fi
	# A path in memory only the caller and the kernel can read
	# (memfd_secret(2)): the supervisor could not judge it (the call failed
	# as one with a bad pointer, with no record), so such memory is
	# refused when it is asked for (ENOSYS, recorded); the shim reads it
	# in-process and judges it.  Landlock off, so that only the decision
	# stands in the way.
	native_st[secret]=$(native "$TRY" secret-open "$SANDBOX/secret-native")
	if [ "${native_st[secret]}" = 0 ]; then
		rm -f "$bashrc"
		bk_q --landlock off -- "$TRY" secret-open "$bashrc"
		st=$?
		if [ "$B" = preload ]; then
			assert_eq "${BK}path in secret memory: refused (EACCES)" 13 "$st"
		else
			assert_eq "path in secret memory: no such memory is given (ENOSYS)" "$ENOSYS" "$st"
			assert_rec "path in secret memory: recorded" \
				"event == 'alert' and action == 'deny' and rule_id == 'syscall.memfd_secret'"
		fi
		assert_file_absent "${BK}path in secret memory: HOME/.bashrc not created" "$bashrc"
		bk_q -- "$TRY" secret-open "$ROOT/secret-allowed"
		st=$?
		[ "$B" = preload ] && want=0 || want=$ENOSYS
		assert_eq "${BK}path in secret memory, an allowed file: status $want" "$want" "$st"
	else
		skip "${BK}path in secret memory" "no memfd_secret here (status ${native_st[secret]})"
	fi
	bypass "clone(CLONE_UNTRACED)" "$EPERM" syscall.clone_untraced "${native_st[clone-untraced]}" -- "$TRY" clone-untraced
	bypass "unshare(CLONE_NEWNS)" "$EPERM" syscall.namespace "${native_st[unshare-mount]}" -- "$TRY" unshare-mount
	bypass "unshare(CLONE_NEWNET)" "$EPERM" syscall.namespace "${native_st[unshare-net]}" -- "$TRY" unshare-net

	# mount: inside a private mount namespace of the test, so that even a
	# supervisor failure cannot change the host's mounts.
	if have unshare && unshare -m true 2>/dev/null; then
		rm -f "$LOG"
		unshare -m sh -c '
			cd "$ROOT" || exit 99
			timeout -k 5 "$AT_TIMEOUT" "$AGENTTRACE" --log "$LOG" $1 -- "$TRY" mount "$ROOT/mnt"
			st=$?
			grep -q agenttrace-test /proc/self/mountinfo && st=200
			exit $st' sh "${BK:+--backend=$B}" >"$OUT" 2>"$ERR"
		st=$?
		if [ "$B" = auto ]; then
			assert_eq "mount: EPERM and nothing mounted" "$EPERM" $st
			assert_rec "mount: record syscall.mount" "$(bypass_expr syscall.mount)"
		elif [ "$(id -u)" = 0 ]; then
			assert_eq "${BK}mount (in a private mount namespace) is NOT stopped by the shim: the kernel refuses it (no CAP_SYS_ADMIN)" "$EPERM" $st
			assert_no_alert "${BK}mount: no alert"
		else
			assert_eq "${BK}mount (in a private mount namespace) is NOT stopped: it mounted" 200 $st
			assert_no_alert "${BK}mount: no alert"
		fi
	else
		skip "${BK}mount" "unshare -m unavailable"
	fi

	# ptrace and process_vm_writev of a sibling in the same session.  (A traced
	# sibling already refuses PTRACE_ATTACH with EPERM; the record is the test.)
	bypass "ptrace attach to a sibling" "$EPERM" syscall.ptrace "${native_st[ptrace-sibling]}" -- sh -c "$sibling" "$TRY" ptrace-attach
	bypass "ptrace attach to an own child" "$EPERM" syscall.ptrace "${native_st[ptrace-child]}" -- "$TRY" ptrace-attach child
	bypass "process_vm_writev on a sibling" "$EPERM" syscall.process_vm_writev "${native_st[pvw-sibling]}" -- sh -c "$sibling" "$TRY" process_vm_writev
	bypass "process_vm_writev on an own child" "$EPERM" syscall.process_vm_writev "${native_st[pvw-child]}" -- "$TRY" process_vm_writev child

	# clone3 answers ENOSYS so that libc falls back to clone (which is traced).
	if [ "$B" = auto ]; then
		at -- "$TRY" clone3 >"$OUT" 2>"$ERR"
		assert_eq "clone3: ENOSYS" "$ENOSYS" $?
	else
		bk_escapes "clone3 runs as natively" "${native_st[clone3]}" -- "$TRY" clone3
	fi

	# No denial is silent: every one above left its record; the summary counts
	# (under preload, the one denial the shim saw).
	bk -- sh -c '"$0" io_uring_setup; "$0" open-write "$HOME/.bashrc"; exit 0' "$TRY" >"$OUT" 2>"$ERR"
	assert_eq "${BK}two denials, command exits 0" 0 $?
	if [ "$B" = auto ]; then
		assert_rec "summary counts both denials" "event == 'summary' and denials == 2"
	else
		assert_rec "${BK}the summary counts the one denial the shim saw" "$BYPASSABLE and denials == 1"
	fi
done
