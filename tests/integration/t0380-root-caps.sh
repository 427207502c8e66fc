#!/bin/bash
# Root without root's powers (doc/THREAT-MODEL.md "Root"): a command run
# as root without --user keeps a container's capabilities only, in every
# set, under both backends; --keep-caps widens it, validated; what builds
# and installs as root need (chown, set-id bits, low ports) still works;
# the user.root warning names what was kept.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace
[ "$(id -u)" = 0 ] || skip_all "needs root"

# chown dac_override fowner fsetid kill setgid setuid setpcap
# net_bind_service sys_chroot audit_write setfcap
DEFAULT=00000000a00405fb
capline() {
	sed -n "s/^$1:[[:space:]]*//p" "$OUT"
}

for B in auto preload; do
	backend_use "$B"
	bk_status "${BK}a root command runs" 0 -- grep Cap /proc/self/status
	for set in CapPrm CapEff CapBnd; do
		assert_eq "${BK}$set is the default set" "$DEFAULT" "$(capline $set)"
	done
	assert_eq "${BK}CapInh is empty" 0000000000000000 "$(capline CapInh)"
	assert_eq "${BK}CapAmb is empty" 0000000000000000 "$(capline CapAmb)"
	: >"$ROOT/f"
	bk_allowed "root chown in the project" -- chown 65534:65534 "$ROOT/f"
	assert_eq "${BK}chown: owned by 65534" 65534 "$(stat -c %u "$ROOT/f")"
	bk_allowed "root chmod u+s of a file it does not own" -- chmod 4755 "$ROOT/f"
	assert_eq "${BK}chmod: set-uid" 4755 "$(stat -c %a "$ROOT/f")"
	rm -f "$ROOT/f"
	bk_allowed "a server on port 80 (net_bind_service)" -- "$PYTHON" -c '
import socket
s = socket.socket(); s.bind(("127.0.0.1", 80)); s.close()'
done

# Under the preload backend nothing judges the calls: the kernel refuses
# what the capabilities no longer allow (no record).
backend_use preload
bk_status "${BK}mknod of a block device: the kernel refuses it (no CAP_MKNOD)" "$EPERM" -- \
	"$TRY" mknod "$ROOT/blk" b 7 0
assert_file_absent "${BK}mknod: absent" "$ROOT/blk"
bk_status "${BK}a raw socket: the kernel refuses it (no CAP_NET_RAW)" "$EPERM" -- "$TRY" socket 2 3 255

backend_use auto
at -q -- true
assert_rec "the user.root warning names the capabilities kept" \
	"event == 'warning' and rule_id == 'user.root' and 'chown,dac_override' in why and 'sys_admin' not in why"

at -q --keep-caps sys_ptrace,CAP_NET_ADMIN -- grep Cap /proc/self/status >"$OUT"
assert_eq "--keep-caps sys_ptrace,CAP_NET_ADMIN: added to the bounding set" \
	00000000a00c15fb "$(capline CapBnd)"
assert_rec "--keep-caps: the warning names them" "event == 'warning' and 'net_admin' in why and 'sys_ptrace' in why"
at -q --keep-caps all -- grep Cap /proc/self/status >"$OUT"
assert_eq "--keep-caps all: the bounding set is agenttrace's own" \
	"$(sed -n 's/^CapBnd:[[:space:]]*//p' /proc/self/status)" "$(capline CapBnd)"
at -q --keep-caps sys_admin,nonsense -- true >"$OUT" 2>"$ERR"
assert_eq "--keep-caps with an unknown name: 125" 125 $?
assert_match "--keep-caps: the message names it" "unknown capability 'nonsense'" "$(cat "$ERR")"
at -q --keep-caps '' -- true >"$OUT" 2>"$ERR"
assert_eq "--keep-caps '': 125" 125 $?

if id nobody >/dev/null 2>&1; then
	at --user nobody -- grep Cap /proc/self/status >"$OUT" 2>"$ERR"
	st=$?
	[ "$st" = 0 ] || diag "--user nobody: exit $st: $(cat "$ERR")"
	assert_eq "--user nobody: no capability" 0000000000000000 "$(capline CapEff)"
fi
