#!/bin/bash
# Net rules of the default policy (rules/default.json): local servers
# started outside the session (these listeners are) denied with the
# listener named, container engine sockets and every remote address
# denied.  The session's own endpoints are t0530-local-ipc's.  Denied
# remote destinations are tested only inside a fresh network namespace
# (unshare -n) where the address sits on the namespace's own lo, so that
# no packet can leave the machine.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

# listen KIND ADDR: a python3 listener; sets LISTEN_PORT once bound.
listen() {
	local portfile=$SANDBOX/port.$RANDOM
	"$PYTHON" - "$1" "$2" "$portfile" >/dev/null 2>&1 <<'PY' &
import os, socket, sys
kind, addr, portfile = sys.argv[1:4]
if kind == "unix":
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(addr)
    port = 0
elif kind == "udp":
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((addr, 0))
    port = s.getsockname()[1]
else:
    fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.bind((addr, 0))
    port = s.getsockname()[1]
if kind != "udp":
    s.listen(16)
with open(portfile + ".tmp", "w") as f:
    f.write(str(port))
os.rename(portfile + ".tmp", portfile)
s.settimeout(60)
while True:
    try:
        if kind == "udp":
            s.recvfrom(100)
        else:
            c, _ = s.accept()
            c.close()
    except Exception:
        break
PY
	bg_track $!
	LISTEN_PORT=
	for _ in $(seq 100); do
		[ -s "$portfile" ] && break
		sleep 0.05
	done
	LISTEN_PORT=$(cat "$portfile" 2>/dev/null)
}

# The listeners serve both backends' cases.
listen tcp 127.0.0.1
port=$LISTEN_PORT
listen udp 127.0.0.1
uport=$LISTEN_PORT
sock=$ROOT/app.sock
listen unix "$sock"
docker=$HOME/docker.sock
listen unix "$docker"

netns_ok=1
if ! have unshare || ! have ip; then
	netns_ok=0
elif ! unshare -n sh -c 'ip link set lo up && ip addr add 192.0.2.1/24 dev lo' >/dev/null 2>&1; then
	netns_ok=0
fi

# at_netns [OPTIONS] -- CMD...: like bk, inside a new network namespace
# whose lo carries 192.0.2.1/24, 169.254.169.254/32 and 2001:db8::1.
at_netns() {
	rm -f "$LOG"
	unshare -n sh -c '
		ip link set lo up && ip addr add 192.0.2.1/24 dev lo &&
		ip addr add 169.254.169.254/32 dev lo || exit 99
		ip -6 addr add 2001:db8::1/128 dev lo nodad 2>/dev/null
		cd "$ROOT" && exec "$@"' sh \
		timeout -k 5 "$AT_TIMEOUT" "$AGENTTRACE" --log "$LOG" ${BK:+--backend "$B"} "$@"
}

if [ $netns_ok = 1 ]; then
	# Sanity: without agenttrace the kernel answers (refused), so an EACCES
	# below can only come from the supervisor.
	unshare -n sh -c 'ip link set lo up; ip addr add 192.0.2.1/24 dev lo; exec "$0" connect 192.0.2.1 9' "$TRY" 2>/dev/null
	assert_eq "netns sanity: native connect 192.0.2.1 is refused" 111 $?
fi

# Every case under both backends.
for B in auto preload; do
	backend_use "$B"

	# --- local servers started outside the session ---------------------------
	if [ -n "$port" ]; then
		bk -- "$TRY" connect 127.0.0.1 "$port" >"$OUT" 2>"$ERR"
		assert_eq "${BK}connect 127.0.0.1:$port (outside listener): EACCES" "$EACCES" $?
		assert_rec "${BK}outside listener: deny record names the endpoint and its process" \
			"$(deny_expr net net.local-outside) and addr == '127.0.0.1' and port == $port and endpoint == 'outside' and isinstance(listener_pid, int) and listener_pid > 0 and 'python' in (listener_exe or '')$(bk_rec_backend)"
		bk -- "$PYTHON" -c "import socket; socket.create_connection(('127.0.0.1', $port), timeout=5).close(); print('connected')" >"$OUT" 2>"$ERR"
		assert_ne "${BK}python3 does not connect to the outside listener" 0 $?
		bk --allow-net "127.0.0.1:$port" -- "$TRY" connect 127.0.0.1 "$port" >"$OUT" 2>"$ERR"
		assert_eq "${BK}--allow-net 127.0.0.1:$port admits the outside listener" 0 $?
		assert_no_alert "${BK}--allow-net 127.0.0.1:$port: no alert"
	else
		not_ok "${BK}tcp listener on 127.0.0.1 did not start"
	fi

	# Nothing listens on ::1 port 1: refused by the kernel, not by agenttrace.
	bk -- "$TRY" connect ::1 1 >"$OUT" 2>"$ERR"
	st=$?
	if [ "$st" = 111 ] || [ "$st" = 0 ]; then ok "${BK}connect ::1 reaches the kernel (status $st)"; else not_ok "${BK}connect ::1 reaches the kernel" "status $st"; fi
	assert_no_alert "${BK}connect ::1: no alert"

	bk -- "$TRY" sendto 127.0.0.1 "${uport:-9}" >"$OUT" 2>"$ERR"
	assert_eq "${BK}sendto 127.0.0.1 (outside udp socket): EACCES" "$EACCES" $?
	assert_rec "${BK}sendto outside udp socket: deny record" \
		"$(deny_expr net net.local-outside) and port == ${uport:-9} and endpoint == 'outside'$(bk_rec_backend)"

	bk -- "$TRY" connect-unix "$sock" >"$OUT" 2>"$ERR"
	assert_eq "${BK}connect an outside unix socket under ROOT: EACCES" "$EACCES" $?
	assert_rec "${BK}outside unix socket: deny record" \
		"$(deny_expr net net.local-outside) and addr == '$sock' and endpoint == 'outside' and isinstance(listener_pid, int)$(bk_rec_backend)"
	bk --allow-net "unix:$sock" -- "$TRY" connect-unix "$sock" >"$OUT" 2>"$ERR"
	assert_eq "${BK}--allow-net unix:PATH admits it" 0 $?
	assert_no_alert "${BK}--allow-net unix:PATH: no alert"

	# Nothing at a path: the kernel's own ENOENT, no record.
	bk -- "$TRY" connect-unix "$ROOT/no-such.sock" >"$OUT" 2>"$ERR"
	assert_eq "${BK}connect a missing unix socket: ENOENT" "$ENOENT" $?
	assert_no_alert "${BK}missing unix socket: no alert"

	# --- denied: container engine socket --------------------------------------
	bk -- "$TRY" connect-unix "$docker" >"$OUT" 2>"$ERR"
	assert_eq "${BK}connect HOME/docker.sock: EACCES" "$EACCES" $?
	assert_rec "${BK}connect HOME/docker.sock: deny record" \
		"event == 'alert' and action == 'deny' and kind == 'net' and pre(rule_id, 'net.') and '$docker' in (path, addr, 'unix:' + str(addr))$(bk_rec_backend)"

	# --- denied: other addresses, inside a private network namespace ------------
	if [ $netns_ok = 1 ]; then
		at_netns -- "$TRY" connect 192.0.2.1 9 >"$OUT" 2>"$ERR"
		assert_eq "${BK}connect 192.0.2.1:9: EACCES" "$EACCES" $?
		assert_rec "${BK}connect 192.0.2.1:9: deny record with addr and port" \
			"event == 'alert' and action == 'deny' and kind == 'net' and pre(rule_id, 'net.') and addr == '192.0.2.1' and port == 9 and syscall == 'connect' and errno == 'EACCES'$(bk_rec_backend)"

		at_netns -- "$TRY" sendto 192.0.2.1 53 >"$OUT" 2>"$ERR"
		assert_eq "${BK}sendto 192.0.2.1:53 (udp): EACCES" "$EACCES" $?
		assert_rec "${BK}sendto 192.0.2.1:53: deny record" \
			"event == 'alert' and action == 'deny' and kind == 'net' and addr == '192.0.2.1' and port == 53 and syscall in ('sendto', 'sendmsg')$(bk_rec_backend)"

		at_netns -- "$TRY" connect 169.254.169.254 80 >"$OUT" 2>"$ERR"
		assert_eq "${BK}connect cloud metadata 169.254.169.254: EACCES" "$EACCES" $?
		assert_rec "${BK}cloud metadata: deny record" "$(deny_expr net net.) and addr == '169.254.169.254'"

		at_netns -- "$TRY" connect 2001:db8::1 443 >"$OUT" 2>"$ERR"
		assert_eq "${BK}connect [2001:db8::1]:443: EACCES" "$EACCES" $?
		assert_rec "${BK}connect [2001:db8::1]:443: deny record" "$(deny_expr net net.) and addr == '2001:db8::1' and port == 443"

		# The summary's egress: every destination judged, allowed ones
		# too, without --record; more than 256 destinations are counted,
		# not listed (doc/RECORDS.md, egress).
		# AF_UNSPEC names an IPv4 destination to an IPv4 socket's send.
		at_netns -- "$TRY" unspec-send 192.0.2.1 53 >"$OUT" 2>"$ERR"
		assert_eq "${BK}sendto 192.0.2.1:53 named AF_UNSPEC: EACCES" "$EACCES" $?
		assert_rec "${BK}sendto named AF_UNSPEC: deny record" \
			"event == 'alert' and action == 'deny' and kind == 'net' and addr == '192.0.2.1' and port == 53 and syscall == 'sendto'$(bk_rec_backend)"
		# The kernel delivers a datagram to 0.0.0.0 to its own source,
		# which IP_PKTINFO sets: that address is the one judged.  (The
		# preload backend judges neither this nor socket options.)
		if [ "$B" = auto ]; then
			at_netns -- "$TRY" pktinfo-zero 192.0.2.1 53 >"$OUT" 2>"$ERR"
			assert_eq "${BK}sendmsg to 0.0.0.0:53 from 192.0.2.1 (IP_PKTINFO): EACCES" "$EACCES" $?
			assert_rec "${BK}sendmsg to 0.0.0.0 from 192.0.2.1: judged as 192.0.2.1" \
				"event == 'alert' and action == 'deny' and kind == 'net' and addr == '192.0.2.1' and port == 53 and syscall == 'sendmsg'"
			# An IPv6 routing header sends a packet to its segments,
			# whatever address the send names (::1 here).
			for how in setsockopt cmsg flowlabel; do
				at_netns -- "$TRY" route-send "$how" 2001:db8::1 53 >"$OUT" 2>"$ERR"
				assert_eq "${BK}a routing header to 2001:db8::1 by $how: EPERM" "$EPERM" $?
				assert_rec "${BK}a routing header by $how: record syscall.routing-header" \
					"event == 'alert' and action == 'deny' and kind == 'syscall' and rule_id == 'syscall.routing-header'"
			done
		fi

		# A datagram to a local port nobody has goes quietly; the next
		# message of the same sendmmsg is judged all the same.
		at_netns -- "$TRY" mmsg-two 127.0.0.1 192.0.2.1 53 >"$OUT" 2>"$ERR"
		assert_eq "${BK}sendmmsg to 127.0.0.1:53 (nobody there), then 192.0.2.1:53: EACCES" "$EACCES" $?
		assert_rec "${BK}sendmmsg's second destination: deny record" \
			"event == 'alert' and action == 'deny' and kind == 'net' and addr == '192.0.2.1' and port == 53 and syscall == 'sendmmsg'$(bk_rec_backend)"

		# A message's name longer than a sockaddr_storage is cut to one
		# by the kernel, not refused: the address in it is judged.
		for m in sendmsg sendmmsg; do
			at_netns -- "$TRY" long-name-send "$m" 192.0.2.1 53 >"$OUT" 2>"$ERR"
			assert_eq "${BK}$m to 192.0.2.1:53, msg_namelen 200: EACCES" "$EACCES" $?
			assert_rec "${BK}$m with msg_namelen 200: deny record" \
				"event == 'alert' and action == 'deny' and kind == 'net' and addr == '192.0.2.1' and port == 53 and syscall == '$m'$(bk_rec_backend)"
		done

		at_netns -- sh -c '"$0" connect 127.0.0.1 1; "$0" connect 127.0.0.1 1; "$0" connect 192.0.2.1 9; "$0" sendto 192.0.2.1 53; exit 0' "$TRY" >"$OUT" 2>"$ERR"
		assert_rec "${BK}egress: an allowed destination with its count" \
			"event == 'summary' and {'family': 'inet', 'addr': '127.0.0.1', 'port': 1, 'host': None, 'allowed': 2, 'denied': 0} in egress"
		assert_rec "${BK}egress: denied destinations first" \
			"event == 'summary' and [(d['addr'], d['port'], d['denied']) for d in egress[:2]] == [('192.0.2.1', 9, 1), ('192.0.2.1', 53, 1)] and egress_other == {'allowed': 0, 'denied': 0}"
		at_netns -- "$PYTHON" -c "
import socket
for p in range(1, 301):
    s = socket.socket()
    try:
        s.connect(('127.0.0.1', p))
    except OSError:
        pass
    s.close()" >"$OUT" 2>"$ERR"
		assert_rec "${BK}egress: 256 destinations listed, the other 44 connects counted" \
			"event == 'summary' and len(egress) == 256 and egress_other == {'allowed': 44, 'denied': 0}"

		# A command-line rule admits it.
		at_netns --allow-net 192.0.2.1:9 -- "$TRY" connect 192.0.2.1 9 >"$OUT" 2>"$ERR"
		assert_eq "${BK}--allow-net 192.0.2.1:9 admits it (refused by the kernel)" 111 $?
		assert_no_alert "${BK}--allow-net 192.0.2.1:9: no alert"
		at_netns --allow-net 192.0.2.1:9 -- "$TRY" connect 192.0.2.1 10 >"$OUT" 2>"$ERR"
		assert_eq "${BK}--allow-net 192.0.2.1:9 does not admit port 10" "$EACCES" $?

		# A static program: no libc call for the shim to wrap.
		if [ -z "$TRY_STATIC" ]; then
			skip "${BK}the static helper's connect 192.0.2.1:9" "no static helper"
		elif [ "$B" = auto ]; then
			at_netns -- "$TRY_STATIC" connect 192.0.2.1 9 >"$OUT" 2>"$ERR"
			assert_eq "${BK}the static helper's connect 192.0.2.1:9: EACCES" "$EACCES" $?
			assert_rec "${BK}the static helper's connect: deny record" "$(deny_expr net net.) and addr == '192.0.2.1'"
		else
			at_netns -- "$TRY_STATIC" connect 192.0.2.1 9 >"$OUT" 2>"$ERR"
			assert_eq "${BK}the static helper's connect 192.0.2.1:9 is NOT stopped (refused by the kernel)" 111 $?
			assert_no_alert "${BK}the static helper's connect: no alert"
			assert_rec "${BK}the static helper: listed as unseen" "$BYPASSABLE and '$TRY_STATIC' in unseen"
		fi
	else
		skip "${BK}denied destinations in a network namespace" "unshare -n or ip unavailable here"
	fi
done

# --- abstract unix sockets: one name in both backends -------------------------
# A byte that is not printable is written \xHH by the ptrace decoder and
# by the shim alike (rules_unix_abstract_text), so one rule and one record
# text serve both.
cat >"$SANDBOX/abstract.json" <<'JSON'
{ "agenttrace": 1, "extends": "default",
  "net": { "deny": [ { "id": "net.test-abstract", "addr": "unix:@agenttrace-test-*" } ] } }
JSON
ABSTRACT='
import errno, os, socket, sys
name = b"\0agenttrace-test-%d\x01x" % os.getpid()
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(name)
srv.listen(1)
c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    c.connect(name)
    print("connected")
except OSError as e:
    print(errno.errorcode[e.errno])
'
for backend in ptrace preload; do
	at --backend $backend --policy "$SANDBOX/abstract.json" -- "$PYTHON" -c "$ABSTRACT" >"$OUT" 2>"$ERR"
	assert_file_content "abstract socket, --backend $backend: connect denied (EACCES)" "$OUT" EACCES
	assert_rec "abstract socket, --backend $backend: record names it with \\x01" \
		"$(deny_expr net net.test-abstract) and backend == '$backend' and pre(path or addr, '@agenttrace-test-') and (path or addr).endswith('\\\\x01x')"
done
