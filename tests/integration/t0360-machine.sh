#!/bin/bash
# The kernel and the machine are not the session's (doc/SYSCALLS.md,
# "Denied"): typing into a terminal (TIOCSTI, TIOCLINUX), packet and raw
# IP sockets and families the policy cannot judge, device nodes, the host
# name, reboot and kexec, modules, swap, the clock, accounting and I/O
# ports are refused with a kind "syscall" record.  The attacks run where
# a failure could not reach the machine: typing into a pty of the test's,
# sockets inside `unshare -n`, the host name inside `unshare -u`, the
# other calls made so that they fail natively before they act.  Ordinary
# work (netlink, FIFOs, read-only adjtimex, sockets of the judged
# families) goes on unrecorded.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

# sys_expr ID: a kind "syscall" denial with exactly that rule id.
sys_expr() {
	printf "event == 'alert' and action == 'deny' and kind == 'syscall' and rule_id == '%s'" "$1"
}

# refused DESC ERRNO ID -- CMD...: ERRNO seen, record ID.
refused() {
	local desc=$1 want=$2 id=$3 st
	shift 3
	[ "$1" = -- ] && shift
	at -q -- "$@" >"$OUT" 2>"$ERR"
	st=$?
	assert_eq "$desc: program sees errno $want" "$want" "$st"
	[ "$st" = "$want" ] || diag "stderr:" "$(head -c 2000 "$ERR")"
	assert_rec "$desc: record $id" "$(sys_expr "$id")"
}

# allowed DESC -- CMD...: exit 0, no alert.
allowed() {
	local desc=$1 st
	shift
	[ "$1" = -- ] && shift
	at -q -- "$@" >"$OUT" 2>"$ERR"
	st=$?
	assert_eq "$desc: exit 0" 0 "$st"
	[ "$st" = 0 ] || diag "stderr:" "$(head -c 2000 "$ERR")"
	assert_no_alert "$desc: no alert"
}

EAFNOSUPPORT=97

# --- typing into the user's terminal -----------------------------------------
# A pty of the test's is the command's controlling terminal; what TIOCSTI
# typed would come back on the master as echoed input.
tty_attack() {
	"$PYTHON" - "$AGENTTRACE" "$LOG" "$TRY" "$1" <<'PY'
import os, pty, sys, time, select
at, log, try_, op = sys.argv[1:5]
pid, fd = pty.fork()
if pid == 0:
    args = [at, "-q", "--log", log, "--", try_, op, "/dev/tty"]
    if op == "tiocsti":
        args.append("echo pwned-by-tiocsti\n")
    os.execv(at, args)
out = b""
end = time.time() + 30
while time.time() < end:
    r, _, _ = select.select([fd], [], [], 0.2)
    if r:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    elif os.waitpid(pid, os.WNOHANG)[0]:
        break
_, st = os.waitpid(pid, 0)
print(os.waitstatus_to_exitcode(st), b"pwned-by-tiocsti" in out)
PY
}
rm -f "$LOG"
set -- $(tty_attack tiocsti)
assert_eq "TIOCSTI into the controlling terminal: program sees errno $EPERM" "$EPERM" "${1:-?}"
assert_eq "TIOCSTI: nothing was typed into the terminal" False "${2:-?}"
assert_rec "TIOCSTI: record syscall.tty-inject" "$(sys_expr syscall.tty-inject) and syscall == 'ioctl'"
rm -f "$LOG"
set -- $(tty_attack tioclinux)
assert_eq "TIOCLINUX paste: program sees errno $EPERM" "$EPERM" "${1:-?}"
assert_rec "TIOCLINUX: record syscall.tty-inject" "$(sys_expr syscall.tty-inject)"
rm -f "$LOG"
"$PYTHON" - "$AGENTTRACE" "$LOG" <<'PY' >"$OUT" 2>"$ERR"
import os, subprocess, sys
m, s = os.openpty()
sys.exit(subprocess.run([sys.argv[1], "-q", "--log", sys.argv[2], "--", "stty", "-a"],
                        stdin=s, stdout=subprocess.DEVNULL).returncode)
PY
assert_eq "other terminal ioctls (stty -a on a pty of the test's): exit 0" 0 $?
assert_no_alert "stty -a: no alert"

# --- sockets ------------------------------------------------------------------
if have unshare && unshare -n true 2>/dev/null; then
	# inside_net CMD...: agenttrace in a network namespace of the test's.
	inside_net() {
		unshare -n sh -c 'ip link set lo up; ip addr add 192.0.2.1/24 dev lo; exec "$@"' sh "$@"
	}
	refused_net() {
		local desc=$1 want=$2 id=$3 st
		shift 3
		[ "$1" = -- ] && shift
		rm -f "$LOG"
		(cd "$ROOT" && inside_net timeout -k 5 "$AT_TIMEOUT" "$AGENTTRACE" -q --log "$LOG" -- "$@") >"$OUT" 2>"$ERR"
		st=$?
		assert_eq "$desc: program sees errno $want" "$want" "$st"
		[ "$st" = "$want" ] || diag "stderr:" "$(head -c 2000 "$ERR")"
		assert_rec "$desc: record $id" "$(sys_expr "$id") and syscall == 'socket'"
	}
	refused_net "AF_PACKET socket" "$EPERM" syscall.socket-raw -- "$TRY" socket 17 3 768
	refused_net "AF_PACKET SOCK_DGRAM socket" "$EPERM" syscall.socket-raw -- "$TRY" socket 17 2 768
	refused_net "IPPROTO_RAW socket" "$EPERM" syscall.socket-raw -- "$TRY" socket 2 3 255
	refused_net "raw socket with SOCK_CLOEXEC" "$EPERM" syscall.socket-raw -- "$TRY" socket 2 $((3 | 0x80000)) 1
	refused_net "raw IPv6 socket" "$EPERM" syscall.socket-raw -- "$TRY" socket 10 3 58
	refused_net "inet SOCK_PACKET (made a packet socket by the kernel)" "$EPERM" syscall.socket-raw -- "$TRY" socket 2 10 768
	refused_net "raw send: connect 127.0.0.1, header for 192.0.2.10" "$EPERM" syscall.socket-raw -- "$TRY" raw-send 192.0.2.10
	refused_net "AF_VSOCK socket" "$EAFNOSUPPORT" syscall.socket-family -- "$TRY" socket 40 1 0
	refused_net "AF_ALG socket" "$EAFNOSUPPORT" syscall.socket-family -- "$TRY" socket 38 5 0
	refused_net "AF_BLUETOOTH socket" "$EAFNOSUPPORT" syscall.socket-family -- "$TRY" socket 31 3 0
	refused_net "AF_XDP socket" "$EAFNOSUPPORT" syscall.socket-family -- "$TRY" socket 44 3 0
	# Netlink's user protocol carries messages to any process that bound
	# it, outside the session too (an attacker helper's reached one).
	refused_net "AF_NETLINK NETLINK_USERSOCK socket" 93 syscall.socket-family -- "$TRY" socket 16 3 2
	refused_net "AF_NETLINK NETLINK_USERSOCK datagram socket" 93 syscall.socket-family -- "$TRY" socket 16 2 2
else
	skip "sockets" "unshare -n unavailable"
fi
allowed "AF_INET stream socket" -- "$TRY" socket 2 1 0
allowed "AF_INET6 datagram socket" -- "$TRY" socket 10 2 0
allowed "AF_UNIX socket" -- "$TRY" socket 1 1 0
allowed "AF_NETLINK route socket (SOCK_RAW)" -- "$TRY" socket 16 3 0
if have ip; then
	allowed "ip link (netlink)" -- ip -o link show lo
	allowed "ip addr (netlink)" -- ip -o addr show
fi
allowed "getaddrinfo with AI_ADDRCONFIG (netlink route)" -- "$PYTHON" -c '
import socket
socket.getaddrinfo("localhost", 80, flags=socket.AI_ADDRCONFIG)'
allowed "a loopback TCP round trip" -- "$PYTHON" -c '
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
c = socket.create_connection(s.getsockname()); a, _ = s.accept()
c.sendall(b"hi"); assert a.recv(2) == b"hi"'

# --- device nodes -------------------------------------------------------------
refused "mknod of a block device (loop0)" "$EPERM" syscall.device-node -- "$TRY" mknod "$ROOT/blk" b 7 0
assert_file_absent "mknod block: absent" "$ROOT/blk"
refused "mknod of a character device (mem)" "$EPERM" syscall.device-node -- "$TRY" mknod "$ROOT/mem" c 1 1
assert_file_absent "mknod char: absent" "$ROOT/mem"
refused "mknod(1) b" "$EPERM" syscall.device-node -- mknod "$ROOT/blk2" b 7 1
allowed "mknod of a FIFO" -- "$TRY" mknod "$ROOT/fifo" p
assert_file_present "FIFO made" "$ROOT/fifo"
allowed "mknod of a socket node" -- "$TRY" mknod "$ROOT/sock" s
allowed "mkfifo(1)" -- mkfifo "$ROOT/fifo2"
assert_file_present "mkfifo: made" "$ROOT/fifo2"

# --- the host name ------------------------------------------------------------
if have unshare && unshare -u true 2>/dev/null; then
	for call in sethostname setdomainname; do
		rm -f "$LOG"
		unshare -u sh -c '
			before=$(uname -n; uname -a | md5sum); dom=$(cat /proc/sys/kernel/domainname)
			cd "$ROOT" && timeout -k 5 "$AT_TIMEOUT" "$AGENTTRACE" -q --log "$LOG" -- "$TRY" "$1" agenttrace-pwned
			st=$?
			[ "$before" = "$(uname -n; uname -a | md5sum)" ] && [ "$dom" = "$(cat /proc/sys/kernel/domainname)" ] || st=200
			exit $st' sh "$call" >"$OUT" 2>"$ERR"
		assert_eq "$call (in a UTS namespace of the test's): EPERM, unchanged" "$EPERM" $?
		assert_rec "$call: record syscall.hostname" "$(sys_expr syscall.hostname) and syscall == '$call'"
	done
else
	skip "sethostname" "unshare -u unavailable"
fi

# --- the machine --------------------------------------------------------------
# Each call is made so that, run, it would fail before it acts (a bad
# magic number, an invalid clock or flags, a missing file) or set nothing.
for c in reboot:syscall.reboot kexec_load:syscall.reboot kexec_file_load:syscall.reboot \
	init_module:syscall.module finit_module:syscall.module delete_module:syscall.module \
	swapon:syscall.swap swapoff:syscall.swap clock_settime:syscall.clock \
	settimeofday:syscall.clock adjtimex-set:syscall.clock clock_adjtime-set:syscall.clock \
	acct:syscall.acct iopl:syscall.ioport ioperm:syscall.ioport; do
	refused "${c%%:*}" "$EPERM" "${c#*:}" -- "$TRY" machine "${c%%:*}"
done
allowed "adjtimex that only reads (modes 0)" -- "$TRY" machine adjtimex-read
have date && allowed "date(1) reads the clock" -- date
