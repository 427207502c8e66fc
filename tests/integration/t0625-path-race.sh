#!/bin/bash
# Calls that change a name (rename, link, symlink, unlink, rmdir, mkdir,
# mknod) or a file's mode or size (chmod, truncate), by a caller whose arguments
# another thread or process could rewrite: under the notify engine they
# are made by the supervisor on the paths it judged (doc/INTERNALS.md,
# "Callers that can race").  A name the policy protects that does not
# exist at the start (no mask covers it) is never reached by a rewritten
# path, whatever the name ends in and however the call names its file
# (linkat of a descriptor); and every call ends as natively: results,
# errno values, modes under the umask, trailing slashes, ".", "..",
# flags the kernel refuses, the caller's identity.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

unset AGENTTRACE_TEST_ENGINE
at_q --engine notify -- true || skip_all "no notify engine on this kernel: $(cat "$ERR")"

cat >"$ROOT/paths.py" <<'PY'
import ctypes, errno, os, stat, threading

# A second thread makes every call of this process one that could race.
threading.Thread(target=threading.Event().wait, daemon=True).start()
libc = ctypes.CDLL(None, use_errno=True)

def tell(name, fn):
    try:
        r = fn()
        print(name, "ok" if r is None else r)
    except OSError as e:
        print(name, "error", errno.errorcode.get(e.errno, e.errno))

def renameat2(a, b, flags):
    if libc.syscall(316, -100, a.encode(), -100, b.encode(), flags) < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))

def put(p, data=b"x"):
    with open(p, "wb") as f:
        f.write(data)

def mode(p):
    return oct(stat.S_IMODE(os.lstat(p).st_mode))

os.umask(0o027)
put("f"); put("g"); os.mkdir("d"); os.mkdir("e"); put("e/x")
tell("rename-new", lambda: os.rename("f", "f2"))
tell("rename-replace", lambda: os.rename("f2", "g"))
tell("rename-same", lambda: os.rename("g", "g"))
tell("rename-missing", lambda: os.rename("nope", "n2"))
tell("rename-into-missing", lambda: os.rename("g", "no/such"))
tell("rename-dir-onto-nonempty", lambda: os.rename("d", "e"))
tell("rename-file-onto-dir", lambda: os.rename("g", "d"))
tell("rename-dir-onto-file", lambda: os.rename("d", "g"))
tell("rename-file-slash", lambda: os.rename("g", "h/"))
tell("rename-dir-into-itself", lambda: os.rename("d", "d/sub"))
tell("renameat2-noreplace", lambda: renameat2("g", "e/x", 1))
put("s1", b"one"); put("s2", b"two")
tell("renameat2-exchange", lambda: renameat2("s1", "s2", 2))
tell("after-exchange", lambda: open("s1").read() + open("s2").read())
tell("link-new", lambda: os.link("g", "g-link"))
tell("link-count", lambda: os.stat("g").st_nlink)
tell("link-existing", lambda: os.link("g", "g-link"))
tell("link-dir", lambda: os.link("d", "d-link"))
tell("link-missing", lambda: os.link("nope", "n3"))
os.symlink("g", "sym")
tell("link-symlink-nofollow", lambda: os.link("sym", "sym-link", follow_symlinks=False))
tell("link-symlink-follow", lambda: os.link("sym", "sym-link2", follow_symlinks=True))
tell("link-kinds", lambda: (os.path.islink("sym-link"), os.path.islink("sym-link2")))
def unlinkat(p, flags):
    if libc.syscall(263, -100, p.encode(), flags) < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
tell("unlinkat-bad-flags", lambda: unlinkat("g-link", 0x4000))
tell("unlink", lambda: os.unlink("g-link"))
tell("unlink-dir", lambda: os.unlink("d"))
tell("unlink-missing", lambda: os.unlink("g-link"))
tell("unlink-slash", lambda: os.unlink("g/"))
tell("rmdir-nonempty", lambda: os.rmdir("e"))
tell("rmdir-file", lambda: os.rmdir("g"))
tell("rmdir-dot", lambda: os.rmdir("d/."))
tell("rmdir", lambda: os.rmdir("d"))
tell("mkdir", lambda: os.mkdir("m", 0o777))
tell("mkdir-mode", lambda: mode("m"))
tell("mkdir-existing", lambda: os.mkdir("m"))
tell("mkdir-missing-parent", lambda: os.mkdir("no/such"))
tell("mkdir-slash", lambda: os.mkdir("m2/"))
tell("chmod", lambda: os.chmod("g", 0o640))
tell("chmod-mode", lambda: mode("g"))
tell("chmod-through-symlink", lambda: os.chmod("sym", 0o600))
tell("chmod-target-mode", lambda: mode("g"))
tell("chmod-missing", lambda: os.chmod("nope", 0o600))
put("t", b"0123456789")
tell("truncate-shrink", lambda: os.truncate("t", 3))
tell("truncate-grow", lambda: os.truncate("t", 100))
tell("truncate-size", lambda: os.stat("t").st_size)
tell("truncate-dir", lambda: os.truncate("m", 0))
tell("truncate-missing", lambda: os.truncate("nope", 0))
tell("truncate-negative", lambda: os.truncate("t", -1))
os.mkfifo("fifo")
tell("truncate-fifo", lambda: os.truncate("fifo", 0))
tell("truncate-through-symlink", lambda: os.truncate("sym", 1))
tell("symlink-relative", lambda: os.symlink("../up/there", "rel"))
tell("symlink-text", lambda: os.readlink("rel"))
tell("symlink-existing", lambda: os.symlink("g", "rel"))
tell("symlink-into-missing", lambda: os.symlink("g", "no/such"))
tell("symlink-slash", lambda: os.symlink("g", "rel2/"))
tell("mkfifo", lambda: os.mkfifo("fifo2", 0o666))
tell("mkfifo-mode", lambda: mode("fifo2"))
tell("mkfifo-existing", lambda: os.mkfifo("fifo2"))
tell("mknod-regular", lambda: os.mknod("plain", 0o644 | stat.S_IFREG))
tell("mknod-kind", lambda: (stat.S_ISREG(os.lstat("plain").st_mode), mode("plain")))
# Names that end in "/", "." or "..": the kernel's own meaning of each.
os.mkdir("o"); os.mkdir("o/sub"); put("of"); os.symlink("o", "ol"); os.symlink("of", "ofl")
tell("rename-dir-slashes", lambda: os.rename("o/sub/", "o/sub2//"))
tell("rename-dir-back", lambda: os.rename("o/sub2", "o/sub"))
tell("rename-onto-dot", lambda: os.rename("of", "o/."))
tell("rename-dotdot", lambda: os.rename("o/sub/..", "o2"))
tell("rename-symlink-slash", lambda: os.rename("ol/", "ol2"))
tell("rename-file-slash-old", lambda: os.rename("of/", "of2"))
tell("rmdir-dotdot", lambda: os.rmdir("o/sub/.."))
tell("rmdir-symlink-slash", lambda: os.rmdir("ol/"))
tell("unlink-dir-slash", lambda: os.unlink("o/"))
tell("unlink-dot", lambda: os.unlink("o/."))
tell("mkdir-dot", lambda: os.mkdir("o/."))
tell("mkdir-dotdot", lambda: os.mkdir("o/sub/.."))
tell("mkdir-symlink-slash", lambda: os.mkdir("ol/"))
tell("link-new-slash", lambda: os.link("of", "o/n/"))
tell("link-from-dot", lambda: os.link("o/.", "n4"))
tell("symlink-dot", lambda: os.symlink("x", "o/."))
tell("mkfifo-slash", lambda: os.mkfifo("nf/"))
tell("chmod-file-slash", lambda: os.chmod("of/", 0o600))
tell("chmod-dot", lambda: os.chmod("o/.", 0o750))
tell("chmod-dot-mode", lambda: mode("o"))
tell("chmod-symlink-slash", lambda: os.chmod("ol/", 0o700))
tell("chmod-symlink-slash-mode", lambda: mode("o"))
tell("truncate-file-slash", lambda: os.truncate("of/", 0))
tell("rmdir-slash", lambda: os.rmdir("o/sub/"))
# Flags: the kernel's EINVAL; fchmodat2's AT_SYMLINK_NOFOLLOW (Linux 6.6).
def linkat(a, b, flags):
    if libc.syscall(265, -100, a.encode(), -100, b.encode(), flags) < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
def fchmodat2(p, m, flags):
    if libc.syscall(452, -100, p.encode(), m, flags) < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
tell("linkat-bad-flags", lambda: linkat("of", "n5", 0x100))
tell("fchmodat2-nofollow-symlink", lambda: fchmodat2("ofl", 0o600, 0x100))
tell("fchmodat2-nofollow-file", lambda: fchmodat2("of", 0o604, 0x100))
tell("fchmodat2-mode", lambda: mode("of"))
tell("fchmodat2-bad-flags", lambda: fchmodat2("of", 0o600, 0x2))
# Owners and extended attributes, made on the object as the caller.
tell("chown-same", lambda: os.chown("of", os.getuid(), os.getgid()))
tell("lchown-symlink", lambda: os.lchown("ofl", os.getuid(), os.getgid()))
tell("chown-missing", lambda: os.chown("nope", 0, 0))
def xattrs():
    try:
        os.setxattr("of", "user.t", b"v1")
    except OSError as e:
        if e.errno == errno.ENOTSUP:
            return "unsupported"
        raise
    r = os.getxattr("of", "user.t")
    os.removexattr("of", "user.t")
    return r, "user.t" in os.listxattr("of")
tell("xattr-set-remove", xattrs)
tell("xattr-remove-missing", lambda: os.removexattr("of", "user.none"))
tell("xattr-bad-name", lambda: os.setxattr("of", "user." + "n" * 300, b"v"))
tell("xattr-symlink-itself", lambda: os.setxattr("ofl", "user.t", b"v", follow_symlinks=False))
def times(p, t, **kw):
    os.utime(p, t, **kw)
    return int(os.lstat(p).st_mtime)
tell("utime-set", lambda: times("of", (5, 7)))
tell("utime-ns", lambda: (os.utime("of", ns=(1, 2_000_000_123)), os.stat("of").st_mtime_ns)[1])
tell("utime-symlink-itself", lambda: times("ofl", (9, 11), follow_symlinks=False))
tell("utime-target-untouched", lambda: int(os.stat("of").st_mtime))
tell("utime-missing", lambda: os.utime("nope", (1, 1)))
def utimes_bad_usec():
    class TV(ctypes.Structure):
        _fields_ = [("s", ctypes.c_long), ("us", ctypes.c_long)]
    tv = (TV * 2)((1, 2000000), (1, 0))
    if libc.utimes(b"of", tv) < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
tell("utimes-bad-usec", utimes_bad_usec)
tell("utime-now", lambda: os.utime("of") or int(os.stat("of").st_mtime) > 1000000)
tell("left", lambda: sorted(os.listdir(".")))
PY

native=$SANDBOX/native
mkdir -p "$native"
(cd "$native" && "$PYTHON" "$ROOT/paths.py") >"$SANDBOX/native.out" 2>&1
for E in notify ptrace; do
	rm -rf "$ROOT/work" && mkdir -p "$ROOT/work"
	at_q --engine "$E" -- sh -c 'cd work && exec "$0" "$1"' "$PYTHON" "$ROOT/paths.py"
	assert_eq "$E: the program ran" 0 $?
	if diff -u "$SANDBOX/native.out" "$OUT" >"$SANDBOX/diff.$E"; then
		ok "$E: every call as natively"
	else
		not_ok "$E: every call as natively" "$(cat "$SANDBOX/diff.$E")"
	fi
	assert_no_rec "$E: nothing denied" "event == 'alert'"
done

# The caller's identity: as nobody, no name is made in a directory only
# root may write, even when the supervisor (root) makes the call.
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1 && [ -x /usr/bin/python3 ]; then
	mkdir -p "$ROOT/rootonly" && chmod 0755 "$ROOT/rootonly" && : >"$ROOT/rootonly/f"
	mkdir -p "$ROOT/open" && chmod 0777 "$ROOT/open" && : >"$ROOT/open/g"
	chmod 0755 "$ROOT" "$SANDBOX"
	cat >"$ROOT/asuser.py" <<'PY'
import errno, os, threading
threading.Thread(target=threading.Event().wait, daemon=True).start()
for name, fn in (("rename", lambda: os.rename("open/g", "rootonly/g")),
                 ("link", lambda: os.link("open/g", "rootonly/h")),
                 ("unlink", lambda: os.unlink("rootonly/f")),
                 ("mkdir", lambda: os.mkdir("rootonly/d")),
                 ("chmod", lambda: os.chmod("rootonly/f", 0o777)),
                 ("truncate", lambda: os.truncate("rootonly/f", 10))):
    try:
        fn()
        print(name, "done")
    except OSError as e:
        print(name, errno.errorcode[e.errno])
PY
	(cd "$ROOT" && setpriv --reuid nobody --regid "$(id -gn nobody)" --clear-groups \
		/usr/bin/python3 "$ROOT/asuser.py") >"$SANDBOX/nobody.out" 2>&1
	at_q --engine notify --user nobody -- /usr/bin/python3 "$ROOT/asuser.py"
	assert_eq "notify --user nobody: each call fails as nobody's would" \
		"$(cat "$SANDBOX/nobody.out")" "$(cat "$OUT")"
	assert_match "notify --user nobody: and nobody's fail" "rename EACCES" "$(cat "$OUT")"
	assert_eq "notify --user nobody: nothing changed in the root-only directory" "f" \
		"$(ls "$ROOT/rootonly")"
else
	skip "notify --user nobody" "not root, no user nobody or no /usr/bin/python3"
fi

# The race: a thread (or a second process) flips the new name between
# ROOT/.gitlab-ci.ymk (allowed) and ROOT/.gitlab-ci.yml (a CI definition,
# refused, and absent at the start, so that no mask covers it).
RACE=$ROOT/bin/race-path
cp "$PROGS/race-path" "$RACE" || exit 99
GOOD=$ROOT/.gitlab-ci.ymk
BAD=$ROOT/.gitlab-ci.yml
N=${RACE_N:-3000}
# linkfd: linkat(2) of an open descriptor (AT_EMPTY_PATH), which needs
# CAP_DAC_READ_SEARCH (kept by --keep-caps all).
for OP in rename link linkfd symlink; do
	CAPS=
	if [ "$OP" = linkfd ]; then
		[ "$(id -u)" = 0 ] || { skip "linkfd" "not root: no CAP_DAC_READ_SEARCH to keep"; continue; }
		CAPS="--keep-caps all"
	fi
	for M in thread process; do
		rm -f "$GOOD" "$BAD" "$ROOT/src" "$LOG"
		at --engine notify $CAPS -- "$RACE" "$OP" "$ROOT/src" "$GOOD" "$BAD" "$N" \
			$([ "$M" = thread ] || echo "$M") >"$OUT" 2>"$ERR"
		assert_eq "notify, $OP, $M flips: the helper ran" 0 $?
		diag "notify, $OP, $M flips: $(cat "$OUT")"
		won=$(sed -n 's/.* bad=\([0-9]*\).*/\1/p' "$OUT")
		assert_eq "notify, $OP, $M flips: no new name reached .gitlab-ci.yml" 0 "${won:-x}"
		assert_file_absent "notify, $OP, $M flips: .gitlab-ci.yml never made" "$BAD"
		assert_match "notify, $OP, $M flips: the allowed calls were made" " ok=[1-9]" \
			"$(cat "$OUT")"
		assert_rec "notify, $OP, $M flips: the tries of .gitlab-ci.yml are denied and recorded" \
			"event == 'alert' and action == 'deny' and '$BAD' in (path, path2)"
	done
	rm -f "$GOOD" "$BAD" "$ROOT/src"
	at --engine ptrace $CAPS -- "$RACE" "$OP" "$ROOT/src" "$GOOD" "$BAD" "$N" >"$OUT" 2>"$ERR"
	won=$(sed -n 's/.* bad=\([0-9]*\).*/\1/p' "$OUT")
	if [ "${won:-0}" -gt 0 ]; then
		ok "ptrace, $OP: the race is won (${won} calls reached .gitlab-ci.yml): doc/THREAT-MODEL.md says so"
	else
		ok "ptrace, $OP: the race was not won in $N tries"
	fi
done

# O_TMPFILE given a name by linkat(fd, "", AT_EMPTY_PATH), by a caller
# with a second thread, without CAP_DAC_READ_SEARCH: what the kernel
# allows (since Linux 6.10 for the credentials that opened the file) the
# supervisor's link must allow too; a flag the kernel does not know is
# its EINVAL.  Natively with the capability dropped from the bounding set.
cat >"$ROOT/linkfd.py" <<'PY'
import ctypes, os, sys, threading
libc = ctypes.CDLL(None, use_errno=True)
d = sys.argv[1]
threading.Thread(target=threading.Event().wait, daemon=True).start()
fd = os.open(d, os.O_TMPFILE | os.O_WRONLY, 0o600)
os.write(fd, b"tmpfile-bytes")
for name, flags in (("made", 0x1000), ("made2", 0x1000 | 0x40000)):
    r = libc.linkat(fd, b"", -100, os.path.join(d, name).encode(), flags)
    print(name, "ok" if r == 0 else os.strerror(ctypes.get_errno()), end=" ")
print(open(os.path.join(d, "made")).read() if os.path.exists(os.path.join(d, "made")) else "-")
PY
mkdir -p "$ROOT/lt"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	rm -f "$ROOT/lt/made" "$ROOT/lt/made2"
	setpriv --bounding-set -dac_read_search "$PYTHON" "$ROOT/linkfd.py" "$ROOT/lt" >"$SANDBOX/native.linkfd" 2>&1
	rm -f "$ROOT/lt/made" "$ROOT/lt/made2"
	at_q --engine notify -- "$PYTHON" "$ROOT/linkfd.py" "$ROOT/lt"
	diag "linkfd natively: $(cat "$SANDBOX/native.linkfd"); supervised: $(cat "$OUT")"
	assert_eq "notify: a racing caller's O_TMPFILE linked by its descriptor, as natively" \
		"$(cat "$SANDBOX/native.linkfd")" "$(cat "$OUT")"
else
	skip "linkfd as natively" "not root, or no setpriv to drop CAP_DAC_READ_SEARCH natively"
fi

# A judged name that ends in "/", "." or "..", where the kernel gives the
# call a meaning of its own (EBUSY, ENOTDIR): made by the supervisor too,
# in the directory judged, never let run on memory that now names
# .gitlab-ci.yml.
for G in "zzzzzzzzzzzz/." "zzzzzzzzzzzzz/" "zzzzzzzzzzz/.."; do
	rm -f "$BAD" "$ROOT/src" "$LOG"
	at --engine notify -- "$RACE" rename "$ROOT/src" "$ROOT/$G" "$BAD" "$N" >"$OUT" 2>"$ERR"
	assert_eq "notify, rename onto '$G', thread flips: the helper ran" 0 $?
	diag "notify, rename onto '$G': $(cat "$OUT")"
	won=$(sed -n 's/.* bad=\([0-9]*\).*/\1/p' "$OUT")
	assert_eq "notify, rename onto '$G': no new name reached .gitlab-ci.yml" 0 "${won:-x}"
	assert_file_absent "notify, rename onto '$G': .gitlab-ci.yml never made" "$BAD"
	assert_rec "notify, rename onto '$G': the tries of .gitlab-ci.yml are denied and recorded" \
		"event == 'alert' and action == 'deny' and path2 == '$BAD'"
done

# A UNIX socket bound to a name flipped onto .gitlab-ci.yml: bound by the
# supervisor in the directory judged.  And a racing caller's UNIX names
# as natively: relative to its own working directory, in its umask, what
# getsockname() gives back, the errors.
rm -f "$GOOD" "$BAD" "$LOG"
at --engine notify -- "$RACE" bind /dev/null "$GOOD" "$BAD" "$N" >"$OUT" 2>"$ERR"
assert_eq "notify, bind, thread flips: the helper ran" 0 $?
diag "notify, bind: $(cat "$OUT")"
assert_match "notify, bind: no socket made at .gitlab-ci.yml" " bad=0 " "$(cat "$OUT")"
assert_match "notify, bind: the allowed binds were made" " ok=[1-9]" "$(cat "$OUT")"
assert_rec "notify, bind: the tries of .gitlab-ci.yml are denied and recorded" \
	"event == 'alert' and action == 'deny' and path == '$BAD'"
cat >"$ROOT/unix.py" <<'PY'
import os, socket, stat, threading
threading.Thread(target=threading.Event().wait, daemon=True).start()
os.umask(0o077)
os.makedirs("w/d1")
os.chdir("w")
here = os.getcwd()
for name in ("d1/s1", here + "/d1/s2", "s3"):
    l = socket.socket(socket.AF_UNIX)
    l.bind(name)
    l.listen(1)
    m = os.lstat(name).st_mode
    print("bind", name.replace(here, "HERE"), l.getsockname().replace(here, "HERE"),
          stat.S_ISSOCK(m), oct(m & 0o777))
    c = socket.socket(socket.AF_UNIX)
    c.connect(name)
    print("connect", name.replace(here, "HERE"), "ok")
for name, fn in (("bind-existing", lambda s: s.bind("d1/s1")),
                 ("bind-no-dir", lambda s: s.bind("nodir/s")),
                 ("connect-missing", lambda s: s.connect("nope"))):
    try:
        fn(socket.socket(socket.AF_UNIX))
        print(name, "ok")
    except OSError as e:
        print(name, e.errno)
a = socket.socket(socket.AF_UNIX)
a.bind("\0agenttrace-t0625-%d" % os.getpid())
print("abstract", a.getsockname()[:16])
PY
mkdir -p "$SANDBOX/unix-native"
(cd "$SANDBOX/unix-native" && "$PYTHON" "$ROOT/unix.py") >"$SANDBOX/unix.native" 2>&1
rm -rf "$ROOT/w"
at_q --engine notify -- "$PYTHON" "$ROOT/unix.py"
if diff -u "$SANDBOX/unix.native" "$OUT" >"$SANDBOX/diff.unix"; then
	ok "notify: a racing caller's UNIX names as natively"
else
	not_ok "notify: a racing caller's UNIX names as natively" "$(cat "$SANDBOX/diff.unix")"
fi
rm -rf "$ROOT/w"

# An owner, an extended attribute or times set on a name flipped from
# ROOT/.bashrc (allowed) to HOME/.bashrc (a dotfile the policy protects,
# which Landlock cannot: it governs neither call).  As root, for chown.
echo mine >"$ROOT/.bashrc"
for OP in chown setxattr utimes; do
	if [ "$OP" = chown ] && [ "$(id -u)" != 0 ]; then
		skip "notify, $OP" "not root"
		continue
	fi
	echo theirs >"$HOME/.bashrc"
	rm -f "$LOG"
	at --engine notify -- "$RACE" "$OP" /dev/null "$ROOT/.bashrc" "$HOME/.bashrc" "$N" \
		>"$OUT" 2>"$ERR"
	assert_eq "notify, $OP, thread flips: the helper ran" 0 $?
	diag "notify, $OP: $(cat "$OUT")"
	if grep -q "ok=0 " "$OUT" && [ "$OP" = setxattr ]; then
		skip "notify, $OP" "no user extended attributes on this file system"
		continue
	fi
	assert_match "notify, $OP: HOME/.bashrc never reached" " bad=0 " "$(cat "$OUT")"
	assert_rec "notify, $OP: the tries of HOME/.bashrc are denied and recorded" \
		"event == 'alert' and action == 'deny' and path == '$HOME/.bashrc'"
done
rm -f "$ROOT/.bashrc" "$HOME/.bashrc"

# What else the kernel checks of the caller, which the supervisor making
# the call must check too: the capabilities a root caller dropped, its
# RLIMIT_FSIZE, and a working directory whose parent it may not search
# (a relative name is looked up from there).
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	cat >"$ROOT/limits.py" <<'PY'
import ctypes, errno, os, resource, signal, sys, threading
threading.Thread(target=threading.Event().wait, daemon=True).start()
libc = ctypes.CDLL(None, use_errno=True)
def tell(name, fn):
    try:
        fn()
        print(name, "ok")
    except OSError as e:
        print(name, errno.errorcode.get(e.errno, e.errno))
class Head(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]
class Data(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]
if sys.argv[1] == "caps":
    h, d = Head(0x20080522, 0), (Data * 2)()
    libc.syscall(125, ctypes.byref(h), d)
    d[0].effective &= ~((1 << 1) | (1 << 2) | (1 << 3))  # DAC_OVERRIDE, DAC_READ_SEARCH, FOWNER
    libc.syscall(126, ctypes.byref(h), d)
    tell("mkdir-in-0555", lambda: os.mkdir("ro/x"))
    tell("rename-into-0555", lambda: os.rename("seed", "ro/y"))
    tell("chmod-others", lambda: os.chmod("nbf", 0o777))
    tell("truncate-unwritable", lambda: os.truncate("nbf", 0))
elif sys.argv[1] == "fsize":
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
    tell("truncate-past-fsize", lambda: os.truncate("big", 1 << 20))
    tell("truncate-within-fsize", lambda: os.truncate("big", 100))
    print("size", os.stat("big").st_size)
elif sys.argv[1] == "cwd":
    os.makedirs("p/q")
    os.chdir("p/q")
    os.chmod("..", 0)
    tell("mkdir-in-cwd", lambda: os.mkdir("x"))
    tell("rename-in-cwd", lambda: os.rename("x", "y"))
    tell("rmdir-in-cwd", lambda: os.rmdir("y"))
    tell("open-in-cwd", lambda: os.close(os.open("f", os.O_CREAT | os.O_WRONLY, 0o644)))
    os.chmod("..", 0o755)
PY
	prep() {
		rm -rf "$1" && mkdir -p "$1/ro" && chmod 0755 "$1" &&
			chown nobody "$1/ro" && chmod 0555 "$1/ro" && : >"$1/seed" &&
			: >"$1/nbf" && chown nobody "$1/nbf" && chmod 0644 "$1/nbf" &&
			: >"$1/big" && chown nobody "$1"
	}
	for K in caps fsize cwd; do
		prep "$SANDBOX/native-$K" && prep "$ROOT/lim"
		if [ "$K" = cwd ]; then
			# nobody's own python: the test's may lie under root's HOME.
			[ -x /usr/bin/python3 ] || { skip "notify, cwd" "no /usr/bin/python3"; continue; }
			(cd "$SANDBOX/native-$K" && setpriv --reuid nobody --regid "$(id -gn nobody)" \
				--clear-groups /usr/bin/python3 "$ROOT/limits.py" "$K") >"$SANDBOX/native.$K" 2>&1
			at_q --engine notify --user nobody -- sh -c 'cd lim && exec "$0" "$1" "$2"' \
				/usr/bin/python3 "$ROOT/limits.py" "$K"
		else
			(cd "$SANDBOX/native-$K" && "$PYTHON" "$ROOT/limits.py" "$K") \
				>"$SANDBOX/native.$K" 2>&1
			at_q --engine notify -- sh -c 'cd lim && exec "$0" "$1" "$2"' \
				"$PYTHON" "$ROOT/limits.py" "$K"
		fi
		if diff -u "$SANDBOX/native.$K" "$OUT" >"$SANDBOX/diff.$K"; then
			ok "notify, $K: as natively ($(tr '\n' ' ' <"$OUT"))"
		else
			not_ok "notify, $K: as natively" "$(cat "$SANDBOX/diff.$K")"
		fi
	done
	chmod -R u+rwx "$ROOT/lim" "$SANDBOX"/native-* 2>/dev/null
else
	skip "the caller's capabilities, RLIMIT_FSIZE and working directory" "not root, or no nobody"
fi

# A truncate of a file another process of the session holds a lease on
# waits for the lease's break; the processes of the session go on being
# served meanwhile: the holder lets the lease go only once a bystander
# has made its calls, so a supervisor that waited would see the bystander
# finish after the truncate (the kernel breaks a lease after 45 s).
cat >"$ROOT/lease.py" <<'PY'
import fcntl, os, signal, threading
with open("leased", "w") as f:
    f.write("x")
done_r, done_w = os.pipe()
held_r, held_w = os.pipe()
order_r, order_w = os.pipe()
if os.fork() == 0:
    signal.signal(signal.SIGIO, signal.SIG_IGN)
    fd = os.open("leased", os.O_RDONLY)
    fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)
    os.write(held_w, b"h")
    os.read(done_r, 1)
    fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
    os._exit(0)
os.read(held_r, 1)
if os.fork() == 0:
    import time
    time.sleep(0.3)
    for i in range(50):
        os.mkdir("by"); os.rmdir("by")
    os.write(order_w, b"bystander ")
    os.write(done_w, b"d")
    os._exit(0)
threading.Thread(target=threading.Event().wait, daemon=True).start()
os.truncate("leased", 0)
os.write(order_w, b"truncate ")
os.wait(); os.wait()
os.close(order_w)
print(os.read(order_r, 100).decode().strip())
PY
rm -rf "$ROOT/lease" && mkdir -p "$ROOT/lease"
at_q --engine notify -- sh -c 'cd lease && exec "$0" "$1"' "$PYTHON" "$ROOT/lease.py"
assert_eq "notify: a lease's wait holds nobody else up (the bystander first)" \
	"bystander truncate" "$(cat "$OUT")"
