#!/bin/bash
# The datagram race on a UNIX socket: a thread flips a sendto's sun_path
# between a socket the session bound (allowed) and one a process outside
# the session bound (net.local-outside), so that the supervisor may judge
# one and the kernel send to the other.  Under the notify engine such a
# caller's send is made by the supervisor, on a copy of its socket, to the
# socket file judged (opened exactly), with the caller's credentials and
# descriptors: a receiver sees what it would see natively.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

unset AGENTTRACE_TEST_ENGINE
at_q --engine notify -- true || skip_all "no notify engine on this kernel: $(cat "$ERR")"
[ "$(id -u)" = 0 ] || skip_all "not root: the supervisor cannot send with the caller's credentials"
N=${RACE_N:-3000}
GOOD=$ROOT/g.sock
BAD=$ROOT/b.sock

cat >"$ROOT/race.py" <<'PY'
import ctypes, os, socket, sys, threading
good, bad, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
rx = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
rx.bind(good)
rx.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
tx = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
class SA(ctypes.Structure):
    _fields_ = [("family", ctypes.c_ushort), ("path", ctypes.c_char * 108)]
sa = SA(socket.AF_UNIX, good.encode())
stop = False
def flip():
    g, b = good.encode(), bad.encode()
    while not stop:
        sa.path = b
        sa.path = g
th = threading.Thread(target=flip)
th.start()
libc = ctypes.CDLL(None, use_errno=True)
ok = eacces = other = got = 0
for i in range(n):
    r = libc.sendto(tx.fileno(), b"x", 1, 0, ctypes.byref(sa), ctypes.sizeof(SA))
    if r == 1:
        ok += 1
    elif ctypes.get_errno() == 13:
        eacces += 1
    else:
        other += 1
    rx.setblocking(False)
    try:
        while True:
            rx.recv(16)
            got += 1
    except BlockingIOError:
        pass
stop = True
th.join()
print("tries=%d ok=%d eacces=%d other=%d got=%d" % (n, ok, eacces, other, got))
PY

# The outside receiver: bound before the session, counts what reaches it.
rm -f "$GOOD" "$BAD" "$SANDBOX/bad.count"
"$PYTHON" -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1]); s.settimeout(0.5)
open(sys.argv[2] + ".ready", "w").write("ready")
n = 0
end = time.time() + 120
while time.time() < end and not __import__("os").path.exists(sys.argv[2] + ".stop"):
    try:
        s.recv(16); n += 1
    except socket.timeout:
        pass
open(sys.argv[2], "w").write(str(n))' "$BAD" "$SANDBOX/bad.count" &
RX=$!
wait_file "$SANDBOX/bad.count.ready" 10 || { kill $RX; skip_all "the outside receiver did not start"; }
at_q --engine notify -- "$PYTHON" "$ROOT/race.py" "$GOOD" "$BAD" "$N"
assert_eq "notify, sun_path flipped: the helper ran" 0 $?
touch "$SANDBOX/bad.count.stop"
wait $RX
diag "notify, sun_path flipped: $(cat "$OUT"); outside receiver got $(cat "$SANDBOX/bad.count")"
assert_eq "notify, sun_path flipped: no datagram reached the outside socket" 0 "$(cat "$SANDBOX/bad.count")"
assert_match "notify, sun_path flipped: the allowed sends were made" " ok=[1-9]" "$(cat "$OUT")"
assert_rec "notify, sun_path flipped: the tries of the outside socket are denied and recorded" \
	"event == 'alert' and action == 'deny' and kind == 'net'"

# The socket files themselves exchanged (renameat2 RENAME_EXCHANGE) by a
# second process, between the session's socket and a hard link of the
# outside one: what is connected to is the socket file judged, not the
# one at the name later.
cat >"$ROOT/swap.py" <<'PY'
import ctypes, os, socket, sys
d, outside, n, mode = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
a, b = d + "/a.sock", d + "/b.sock"
for f in (a, b):
    if os.path.lexists(f):
        os.unlink(f)
kind = socket.SOCK_STREAM if mode == "stream" else socket.SOCK_DGRAM
rs = socket.socket(socket.AF_UNIX, kind)
rs.bind(a)
if mode == "stream":
    rs.listen(4096)
rs.setblocking(False)
os.link(outside, b)
libc = ctypes.CDLL(None, use_errno=True)
pid = os.fork()
if pid == 0:
    while True:
        libc.syscall(316, -100, a.encode(), -100, b.encode(), 2)
ok = 0
for i in range(n):
    s = socket.socket(socket.AF_UNIX, kind)
    try:
        s.connect(a)
        s.send(b"ATTACK")
        ok += 1
    except OSError:
        pass
    s.close()
    try:
        while True:
            if mode == "stream":
                rs.accept()[0].close()
            else:
                rs.recv(64)
    except BlockingIOError:
        pass
os.kill(pid, 9)
print("tries=%d ok=%d" % (n, ok))
PY
for MODE in dgram stream; do
	rm -f "$TMPDIR/srv.sock" "$SANDBOX/srv.count" "$SANDBOX/srv.count.ready" "$SANDBOX/srv.count.stop"
	"$PYTHON" -c '
import os, select, socket, sys, time
kind = socket.SOCK_STREAM if sys.argv[3] == "stream" else socket.SOCK_DGRAM
s = socket.socket(socket.AF_UNIX, kind)
s.bind(sys.argv[1])
if kind == socket.SOCK_STREAM:
    s.listen(4096)
open(sys.argv[2] + ".ready", "w").write("ready")
n, conns, end = 0, [], time.time() + 120
while time.time() < end and not os.path.exists(sys.argv[2] + ".stop"):
    r, _, _ = select.select([s] + conns, [], [], 0.2)
    for x in r:
        if x is s and kind == socket.SOCK_STREAM:
            conns.append(s.accept()[0])
            continue
        data = x.recv(64)
        if x is not s and not data:
            conns.remove(x)
            x.close()
        n += data.count(b"ATTACK")
open(sys.argv[2], "w").write(str(n))' "$TMPDIR/srv.sock" "$SANDBOX/srv.count" "$MODE" &
	RX=$!
	wait_file "$SANDBOX/srv.count.ready" 10 || { kill $RX; not_ok "$MODE socket files exchanged" "no server"; continue; }
	at_q --engine notify -- "$PYTHON" "$ROOT/swap.py" "$TMPDIR" "$TMPDIR/srv.sock" "$N" "$MODE"
	touch "$SANDBOX/srv.count.stop"
	wait $RX
	diag "$MODE, socket files exchanged: $(cat "$OUT"); outside server got $(cat "$SANDBOX/srv.count")"
	assert_eq "$MODE, socket files exchanged: nothing reached the outside server" 0 "$(cat "$SANDBOX/srv.count")"
	assert_match "$MODE, socket files exchanged: the session's own were reached" " ok=[1-9]" "$(cat "$OUT")"
done

# What a receiver sees of a racing caller's sends: its pid and uid
# (SO_PASSCRED), the descriptors it passes, a relative name, as natively.
cat >"$ROOT/peer.py" <<'PY'
import array, os, socket, sys, threading
threading.Thread(target=threading.Event().wait, daemon=True).start()
os.chdir(sys.argv[1])
rx = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
rx.bind("p.sock")
rx.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
tx = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
r, w = os.pipe()
os.write(w, b"through-the-pipe")
tx.sendmsg([b"hello"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [r]))], 0, "p.sock")
msg, anc, flags, addr = rx.recvmsg(64, 256)
out = [msg.decode()]
for level, kind, data in anc:
    if kind == socket.SCM_RIGHTS:
        fd = array.array("i", data[:4])[0]
        out.append(os.read(fd, 64).decode())
    elif kind == socket.SCM_CREDENTIALS:
        pid, uid, gid = array.array("i", data[:12])
        out.append("pid-is-mine" if pid == os.getpid() else "pid-%d" % pid)
        out.append("uid=%d" % uid)
tx.sendto(b"second", "p.sock")
msg, anc, flags, addr = rx.recvmsg(64, 256)
out.append(msg.decode())
# A datagram longer than any inet one goes whole.
tx.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 20)
rx.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
out.append("big=%d" % tx.sendto(b"x" * 400000, "p.sock"))
out.append("got=%d" % len(rx.recv(1 << 20)))
# A stream connect: the server learns its peer's uid and gid from it.
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind("s.sock")
srv.listen(1)
cl = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
cl.connect("s.sock")
conn, _ = srv.accept()
pid, uid, gid = array.array("i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
out.append("peer-uid=%d peer-gid=%d" % (uid, gid))
print(" ".join(out))
os.unlink("p.sock")
os.unlink("s.sock")
PY
mkdir -p "$ROOT/peer"
"$PYTHON" "$ROOT/peer.py" "$ROOT/peer" >"$SANDBOX/native.peer" 2>&1
at_q --engine notify -- "$PYTHON" "$ROOT/peer.py" "$ROOT/peer"
diag "natively: $(cat "$SANDBOX/native.peer"); supervised: $(cat "$OUT")"
assert_eq "notify: a racing caller's UNIX datagrams as natively (credentials, descriptors, a relative name)" \
	"$(cat "$SANDBOX/native.peer")" "$(cat "$OUT")"
# The same as nobody (--user), whose uid the receiver learns.
mkdir -p "$ROOT/peerN"
chmod 0777 "$ROOT/peerN"
chmod 0755 "$ROOT" "$SANDBOX"
if have setpriv && [ -x /usr/bin/python3 ] && setpriv --reuid=nobody --regid=nogroup --clear-groups \
	/usr/bin/python3 "$ROOT/peer.py" "$ROOT/peerN" >"$SANDBOX/native.peerN" 2>&1; then
	at_q --engine notify --user nobody -- /usr/bin/python3 "$ROOT/peer.py" "$ROOT/peerN"
	diag "nobody natively: $(cat "$SANDBOX/native.peerN"); supervised: $(cat "$OUT")"
	assert_eq "notify --user nobody: a racing caller's UNIX datagrams as natively" \
		"$(cat "$SANDBOX/native.peerN")" "$(cat "$OUT")"
else
	skip "nobody's UNIX datagrams" "cannot run as nobody natively: $(cat "$SANDBOX/native.peerN")"
fi
