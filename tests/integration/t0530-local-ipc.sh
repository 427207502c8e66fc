#!/bin/bash
# Session endpoints (agenttrace-policy(5), "Local endpoints"): a connect
# or a datagram to a UNIX socket, an abstract name or a loopback port
# reaches only what the session's own processes bound, plus the outside
# exceptions the policy names; a bind beyond loopback is refused.
#
# The servers "outside" are small python3 stand-ins started by the test
# before the session (a tmux-like server that runs what it is sent, an
# SSH ControlMaster socket, a debugger port, an abstract bus name), all in
# the sandbox or on loopback; the real machine's are never touched.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace
[ -n "$PYTHON" ] || skip_all "python3 not found"

# serve KIND ADDR: an outside server that writes what it receives into
# $SANDBOX/served (what a tmux server would run); sets SERVE_PORT.
serve() {
	local portfile=$SANDBOX/port.$RANDOM
	"$PYTHON" - "$1" "$2" "$portfile" "$SANDBOX/served" >/dev/null 2>&1 <<'PY' &
import os, socket, sys
kind, addr, portfile, served = sys.argv[1:5]
if kind == "unix":
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(addr.replace("@", "\0", 1) if addr.startswith("@") else addr)
    port = 0
else:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((addr, 0))
    port = s.getsockname()[1]
s.listen(16)
with open(portfile + ".tmp", "w") as f:
    f.write(str(port))
os.rename(portfile + ".tmp", portfile)
s.settimeout(120)
while True:
    try:
        c, _ = s.accept()
        data = c.recv(1000)
        with open(served, "ab") as f:
            f.write(data + b"\n")
        c.close()
    except Exception:
        break
PY
	bg_track $!
	SERVE_PORT=
	for _ in $(seq 200); do
		[ -s "$portfile" ] && break
		sleep 0.05
	done
	SERVE_PORT=$(cat "$portfile" 2>/dev/null)
}

# A client that sends one line to an endpoint: "sent" or the errno name.
SEND='
import errno, socket, sys
where, msg = sys.argv[1], sys.argv[2].encode()
if where.startswith("unix:"):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    a = where[5:]
    a = a.replace("@", "\0", 1) if a.startswith("@") else a
else:
    h, p = where.rsplit(":", 1)
    fam = socket.AF_INET6 if h.startswith("[") else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    a = (h.strip("[]"), int(p))
try:
    s.connect(a)
    s.sendall(msg)
    print("sent")
except OSError as e:
    print(errno.errorcode[e.errno])
'

tmux_sock=$TMPDIR/tmux-0/default
mkdir -p "$(dirname "$tmux_sock")" "$HOME/.ssh"
serve unix "$tmux_sock"
[ -S "$tmux_sock" ] || not_ok "the stand-in tmux server did not start"
# ssh's "cm-%r@%h:%p", short: a distcheck build's sandbox path is long,
# and a UNIX socket's name has 107 bytes at most.
cm_sock=$HOME/.ssh/cm-g@h:22
serve unix "$cm_sock"
[ -S "$cm_sock" ] || not_ok "the stand-in ControlMaster did not start"
serve tcp 127.0.0.1
dbg_port=$SERVE_PORT
[ -n "$dbg_port" ] || not_ok "the stand-in debugger port did not start"
bus="@agenttrace-bus-$$"
serve unix "$bus"

# Sanity: without agenttrace the stand-ins take what they are sent.
"$PYTHON" -c "$SEND" "unix:$tmux_sock" "native" >"$OUT"
assert_file_content "sanity: the tmux stand-in takes a message natively" "$OUT" sent

# A session server and its client, in two processes of the session: a
# dev server on a port the kernel picks, a UNIX path, an abstract name.
INSIDE='
import os, socket, subprocess, sys, time
kind = sys.argv[1]
here = os.path.dirname(os.path.abspath(sys.argv[0])) if sys.argv[0] != "-c" else os.getcwd()
srv = r"""
import os, socket, sys
kind, out = sys.argv[1], sys.argv[2]
if kind == "tcp":
    s = socket.socket(); s.bind(("127.0.0.1", 0)); addr = "127.0.0.1:%d" % s.getsockname()[1]
elif kind == "tcp6":
    s = socket.socket(socket.AF_INET6); s.bind(("::1", 0)); addr = "[::1]:%d" % s.getsockname()[1]
elif kind == "udp":
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0))
    addr = "127.0.0.1:%d" % s.getsockname()[1]
elif kind == "unix":
    s = socket.socket(socket.AF_UNIX); s.bind("app.sock"); addr = "unix:app.sock"
else:
    name = "\0agenttrace-own-%d" % os.getpid()
    s = socket.socket(socket.AF_UNIX); s.bind(name); addr = "unix:@" + name[1:]
if kind != "udp":
    s.listen(4)
open(out + ".tmp", "w").write(addr); os.rename(out + ".tmp", out)
if kind == "udp":
    print(s.recv(100).decode(), flush=True)
else:
    c, _ = s.accept(); print(c.recv(100).decode(), flush=True)
"""
out = "addr.%d" % os.getpid()
p = subprocess.Popen([sys.executable, "-c", srv, kind, out])
for _ in range(400):
    if os.path.exists(out):
        break
    time.sleep(0.02)
addr = open(out).read()
if kind == "udp":
    h, port = addr.rsplit(":", 1)
    c = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    c.sendto(b"hello", (h, int(port)))
else:
    c = subprocess.run([sys.executable, "-c", sys.argv[2], addr, "hello"], capture_output=True, text=True)
    if c.stdout.strip() != "sent":
        print("client:", c.stdout.strip()); p.kill(); sys.exit(1)
sys.exit(p.wait(timeout=30))
'

for B in auto preload; do
	backend_use "$B"

	# --- servers started outside the session ----------------------------------
	rm -f "$SANDBOX/served"
	bk -- "$PYTHON" -c "$SEND" "unix:$tmux_sock" "send-keys -t work 'echo pwned >> ~/.bashrc' Enter" >"$OUT" 2>"$ERR"
	assert_file_content "${BK}send-keys to an outside tmux server: EACCES" "$OUT" EACCES
	assert_rec "${BK}outside tmux server: the record names the socket and who listens there" \
		"$(deny_expr net net.local-outside) and addr == '$tmux_sock' and endpoint == 'outside' and isinstance(listener_pid, int) and listener_pid > 0 and 'python' in (listener_exe or '')$(bk_rec_backend)"
	assert_rec "${BK}outside tmux server: the suggestion admits exactly it" \
		"$(deny_expr net net.local-outside) and suggest_option == \"--allow-net 'unix:$tmux_sock'\""
	assert_file_absent "${BK}outside tmux server: it got nothing to run" "$SANDBOX/served"

	bk -- "$PYTHON" -c "$SEND" "unix:$cm_sock" "new session" >"$OUT" 2>"$ERR"
	assert_file_content "${BK}an SSH ControlMaster socket: EACCES" "$OUT" EACCES
	assert_rec "${BK}ControlMaster socket: deny record" \
		"$(deny_expr net net.local-outside) and addr == '$cm_sock'$(bk_rec_backend)"

	bk -- "$PYTHON" -c "$SEND" "127.0.0.1:$dbg_port" "eval" >"$OUT" 2>"$ERR"
	assert_file_content "${BK}a debugger port started outside: EACCES" "$OUT" EACCES
	assert_rec "${BK}debugger port: the record names the port and its listener" \
		"$(deny_expr net net.local-outside) and addr == '127.0.0.1' and port == $dbg_port and endpoint == 'outside' and listener_pid is not None$(bk_rec_backend)"

	bk -- "$PYTHON" -c "$SEND" "unix:$bus" "UpdateActivationEnvironment" >"$OUT" 2>"$ERR"
	assert_file_content "${BK}an abstract bus name started outside: EACCES" "$OUT" EACCES
	assert_rec "${BK}abstract bus name: deny record" \
		"$(deny_expr net net.local-outside) and addr == '$bus' and endpoint == 'outside'$(bk_rec_backend)"
	assert_file_absent "${BK}the outside servers got nothing" "$SANDBOX/served"

	# The suggestion, taken: each admits its own endpoint only.
	bk --allow-net "unix:$tmux_sock" -- "$PYTHON" -c "$SEND" "unix:$tmux_sock" "allowed" >"$OUT" 2>"$ERR"
	assert_file_content "${BK}--allow-net unix:PATH admits the tmux server" "$OUT" sent
	assert_no_alert "${BK}--allow-net unix:PATH: no alert"
	bk --allow-net "unix:$bus" -- "$PYTHON" -c "$SEND" "unix:$bus" "allowed" >"$OUT" 2>"$ERR"
	assert_file_content "${BK}--allow-net unix:@NAME admits the abstract name" "$OUT" sent
	bk --allow-net "unix:$bus" -- "$PYTHON" -c "$SEND" "unix:$tmux_sock" "x" >"$OUT" 2>"$ERR"
	assert_file_content "${BK}--allow-net unix:@NAME does not admit another socket" "$OUT" EACCES

	# Audit mode: the call goes, with an alert.
	bk --mode audit -- "$PYTHON" -c "$SEND" "127.0.0.1:$dbg_port" "audited" >"$OUT" 2>"$ERR"
	assert_file_content "${BK}audit mode: the outside port is reached" "$OUT" sent
	assert_rec "${BK}audit mode: an alert record" \
		"event == 'alert' and action == 'alert' and rule_id == 'net.local-outside' and port == $dbg_port"

	# --- the session's own endpoints --------------------------------------------
	for kind in tcp tcp6 udp unix abstract; do
		rm -f "$ROOT/app.sock"
		bk -- "$PYTHON" -c "$INSIDE" "$kind" "$SEND" >"$OUT" 2>"$ERR"
		st=$?
		if [ "$kind" = tcp6 ] && grep -q 'EADDRNOTAVAIL\|Cannot assign' "$ERR"; then
			skip "${BK}a session server on ::1" "no IPv6 loopback here"
			continue
		fi
		assert_eq "${BK}a $kind server of the session and its client in another process" 0 $st
		[ $st = 0 ] || diag "out:" "$(cat "$OUT")" "stderr:" "$(head -c 2000 "$ERR")"
		assert_file_content "${BK}$kind: the server got the message" "$OUT" hello
		assert_no_alert "${BK}$kind: no alert"
	done

	# A UDP server of the session answers a client of the session whose
	# socket the kernel bound at its first send (no bind call).
	bk -- "$PYTHON" -c '
import os, socket, subprocess, sys, time
srv = """
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0))
print(s.getsockname()[1], flush=True)
data, peer = s.recvfrom(100)
s.sendto(b"re:" + data, peer)
"""
p = subprocess.Popen([sys.executable, "-c", srv], stdout=subprocess.PIPE, text=True)
port = int(p.stdout.readline())
c = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); c.settimeout(20)
c.sendto(b"ping", ("127.0.0.1", port))
print(c.recv(100).decode())
p.wait(timeout=20)' >"$OUT" 2>"$ERR"
	assert_file_content "${BK}a UDP answer to a session client's autobound port arrives" "$OUT" re:ping
	assert_no_alert "${BK}UDP answer: no alert"

	# --- inbound: binds ---------------------------------------------------------
	bk_denied "bind 0.0.0.0:0 (a bind shell)" "$EACCES" net net.inbound "" -- "$TRY" bind 0.0.0.0 0
	assert_rec "${BK}bind 0.0.0.0: the record names the bind" \
		"$(deny_expr net net.inbound) and syscall == 'bind' and addr == '0.0.0.0'"
	bk_allowed "bind 127.0.0.1:0 and listen" -- "$TRY" bind 127.0.0.1 0
	bk --mode audit -- "$TRY" bind 0.0.0.0 0 >"$OUT" 2>"$ERR"
	assert_eq "${BK}audit mode: bind 0.0.0.0 goes" 0 $?
	assert_rec "${BK}audit mode: bind 0.0.0.0 alerts" \
		"event == 'alert' and action == 'alert' and rule_id == 'net.inbound'"
	bk --allow-net "bind:0.0.0.0" -- "$TRY" bind 0.0.0.0 0 >"$OUT" 2>"$ERR"
	assert_eq "${BK}--allow-net bind:0.0.0.0 admits a wide bind" 0 $?
	# listen on a socket bound to nothing binds every interface.
	bk_denied "listen on an unbound TCP socket (0.0.0.0)" "$EACCES" net net.inbound "" -- "$TRY" listen-unbound
done

# --- the agent policy: the IDE's port, where the IDE names it -----------------
CLAUDE_CODE_SSE_PORT=$dbg_port at --policy agent -- "$PYTHON" -c "$SEND" "127.0.0.1:$dbg_port" "ide" >"$OUT" 2>"$ERR"
assert_file_content "agent policy: the port CLAUDE_CODE_SSE_PORT names is reached" "$OUT" sent
assert_no_alert "agent policy, the IDE's port: no alert"
CLAUDE_CODE_SSE_PORT=$dbg_port at --policy agent -- "$PYTHON" -c "$SEND" "unix:$tmux_sock" "x" >"$OUT" 2>"$ERR"
assert_file_content "agent policy: other outside servers stay denied" "$OUT" EACCES
unset CLAUDE_CODE_SSE_PORT
at --policy agent -- "$PYTHON" -c "$SEND" "127.0.0.1:$dbg_port" "x" >"$OUT" 2>"$ERR"
assert_file_content "agent policy without CLAUDE_CODE_SSE_PORT: the port is denied" "$OUT" EACCES

# --- attacks on the protection (the supervised backend) ------------------------
backend_use auto

# A second thread rewrites the bind's address between the check and the
# kernel's read: no socket ends up listening on 0.0.0.0.
at -- "$TRY" race-bind 300 >"$OUT" 2>"$ERR"
assert_eq "raced bind: nothing listens on 0.0.0.0" 0 $?
[ -s "$ERR" ] && diag "$(head -c 300 "$ERR")"

# A raw bind syscall (no libc for a shim to wrap) is judged all the same.
if [ -n "$TRY_STATIC" ]; then
	at -- "$TRY_STATIC" bind 0.0.0.0 0 >"$OUT" 2>"$ERR"
	assert_eq "a static program's bind 0.0.0.0: EACCES" "$EACCES" $?
else
	skip "a static program's bind 0.0.0.0" "no static helper"
fi

# A path the session bound, taken over by an outside server after the
# session's socket closed: the destination is not the session's any more.
rm -f "$ROOT/swap.sock" "$ROOT/swap.ready" "$ROOT/swap.go"
(
	for _ in $(seq 400); do [ -e "$ROOT/swap.go" ] && break; sleep 0.05; done
	rm -f "$ROOT/swap.sock"
	serve unix "$ROOT/swap.sock"
	: >"$ROOT/swap.ready"
	wait
) &
bg_track $!
at -- sh -c '
	"$0" -c "import socket; s = socket.socket(socket.AF_UNIX); s.bind(\"swap.sock\"); s.listen(1)"
	: >swap.go
	for i in $(seq 400); do [ -e swap.ready ] && break; sleep 0.05; done
	exec "$0" -c "$1" "unix:swap.sock" "after the swap"' "$PYTHON" "$SEND" >"$OUT" 2>"$ERR"
assert_file_content "a session path taken over from outside: EACCES" "$OUT" EACCES
assert_rec "taken over: deny record, outside" \
	"$(deny_expr net net.local-outside) and addr == '$ROOT/swap.sock' and endpoint == 'outside'"

# Nothing listens: the kernel's own answer, no record.
at -- "$PYTHON" -c "$SEND" "unix:$ROOT/nobody.sock" "x" >"$OUT" 2>"$ERR"
assert_file_content "a socket file that does not exist: ENOENT" "$OUT" ENOENT
assert_no_alert "nothing there: no alert"

# --- sockets inherited from agenttrace's caller --------------------------------
"$PYTHON" - "$AGENTTRACE" "$LOG" "$tmux_sock" "$ROOT" <<'PY' >"$OUT" 2>"$ERR"
import os, socket, sys
agenttrace, log, path, root = sys.argv[1:5]
s = socket.socket(socket.AF_UNIX)
s.connect(path)
os.set_inheritable(s.fileno(), True)
os.chdir(root)
os.execv(agenttrace, [agenttrace, "--log", log, "--", "true"])
PY
assert_eq "a run with an inherited connected socket exits 0" 0 $?
assert_rec "an inherited socket: a warning names its address" \
	"event == 'warning' and rule == 'fd.inherited-socket' and '$tmux_sock' in (why or '')"

# --- the caller's close ends its connection ----------------------------
# A client connects to a session server, sends, closes, then waits for
# the server to say it saw the end.  A copy of the client's socket that
# the supervisor kept past the connect's answer held the connection open
# until its next stop: none came, and both waited for ever.  With a
# second thread the connect is made by the supervisor, on its own copy.
cat >"$ROOT/eof.py" <<'PY'
import os, socket, sys, threading
if sys.argv[1] == "thread":
    threading.Thread(target=threading.Event().wait, daemon=True).start()
ls = socket.socket(); ls.bind(("127.0.0.1", 0)); ls.listen(1)
r, w = os.pipe()
if os.fork() == 0:
    c, _ = ls.accept()
    data = b""
    while True:
        b = c.recv(100)
        if not b:
            break
        data += b
    os.write(w, b"the server saw the end after " + data)
    os._exit(0)
s = socket.create_connection(ls.getsockname())
s.sendall(b"hi")
s.close()
print(os.read(r, 100).decode())
os.wait()
PY
for how in alone thread; do
	AT_TIMEOUT=30 at -- "$PYTHON" eof.py "$how" >"$OUT" 2>"$ERR"
	assert_eq "a client $how closes its connection: exit 0" 0 $?
	assert_file_content "a client $how closes its connection: the server sees the end" "$OUT" \
		"the server saw the end after hi"
done
