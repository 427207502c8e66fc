#!/bin/bash
# Issue #7: calls the seccomp filter lets through without a stop, and the
# decisions that still happen where they must (doc/SYSCALLS.md, "What the
# filter decides alone").
#
# A read-only O_PATH open does not stop under a policy with read rules: an
# O_PATH descriptor reads no byte and lists no name.  Nor does a read-only
# O_DIRECTORY open: it lists names but reads no file's bytes (t0030 shows
# the opens relative to such a descriptor being judged).  What it can lead to
# stops on its own: a reopen through /proc/self/fd/N, an openat relative to
# it, execveat and linkat with AT_EMPTY_PATH.
#
# How a skipped stop is seen: with -vv agenttrace says "cannot decode" for
# a call whose path pointer is bad.  Such a call says so when it stops, and
# is silent when the filter let it through (the kernel then fails it with
# EFAULT on its own).
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace
[ -n "$PYTHON" ] || skip_all "no python3"

mkdir -p "$HOME/.ssh"
key=$HOME/.ssh/id_ed25519
printf 'SECRET-KEY-MATERIAL' >"$key"
cp "$TRY" "$ROOT/bin/sudo"

# py SCRIPT [ARGS]: run a Python script under agenttrace with -vv.
py() {
	local script=$1
	shift
	at -vv -- "$PYTHON" -c "$script" "$@" >"$OUT" 2>"$ERR"
}

# --- the stop is skipped --------------------------------------------------------
bad_open='
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
flags = {"path": os.O_PATH, "read": os.O_RDONLY, "dir": os.O_RDONLY | os.O_DIRECTORY}[sys.argv[1]]
# openat(AT_FDCWD, (char *)8, flags): a pointer the kernel cannot read
r = libc.syscall(257, -100, ctypes.c_void_p(8), flags | os.O_CLOEXEC)
sys.exit(ctypes.get_errno() if r < 0 else 0)
'
py "$bad_open" read
assert_eq "read-only open of a bad pointer fails with EFAULT" 14 $?
if grep -q 'cannot decode openat' "$ERR"; then
	ok "read-only open stops (the supervisor could not decode it)"
else
	not_ok "read-only open stops (the supervisor could not decode it)" "stderr:" "$(head -c 2000 "$ERR")"
fi

for how in path:O_PATH dir:O_DIRECTORY; do
	py "$bad_open" "${how%%:*}"
	assert_eq "${how#*:} open of a bad pointer fails with EFAULT" 14 $?
	if grep -q 'cannot decode openat' "$ERR"; then
		not_ok "read-only ${how#*:} open does not stop" "stderr:" "$(head -c 2000 "$ERR")"
	else
		ok "read-only ${how#*:} open does not stop"
	fi
done

# --- counted: the summary's "stops" -------------------------------------------------
# 200 listings of a directory add no stop; 200 read-only opens of a file add
# 200 (the summary counts the seccomp stops the supervisor decided).
many='
import os, sys
what, d = sys.argv[1], sys.argv[2]
for _ in range(200):
    if what == "list":
        os.listdir(d)
    elif what == "read":
        os.close(os.open(d + "/id_ed25519.pub", os.O_RDONLY))
'
printf 'public' >"$HOME/.ssh/id_ed25519.pub"
stops_of() {
	at -- "$PYTHON" -c "$many" "$1" "$HOME/.ssh" >"$OUT" 2>"$ERR" || diag "stderr:" "$(head -c 2000 "$ERR")"
	rec_field "event == 'summary'" stops
}
s_none=$(stops_of none)
s_list=$(stops_of list)
s_read=$(stops_of read)
diag "summary stops: no loop $s_none, 200 listings $s_list, 200 reads $s_read"
assert_match "summary counts the stops" '^[1-9][0-9]*$' "$s_none"
if [ -n "$s_list" ] && [ -n "$s_none" ] && [ "$s_list" -lt $((s_none + 20)) ]; then
	ok "200 directory listings add no stop"
else
	not_ok "200 directory listings add no stop" "stops: $s_none without, $s_list with"
fi
if [ -n "$s_read" ] && [ -n "$s_none" ] && [ "$s_read" -ge $((s_none + 200)) ]; then
	ok "200 read-only opens of a file stop 200 times"
else
	not_ok "200 read-only opens of a file stop 200 times" "stops: $s_none without, $s_read with"
fi

# --- what an O_PATH descriptor leads to still stops --------------------------------
opath='
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
what, key = sys.argv[1], sys.argv[2]
fd = os.open(key, os.O_PATH)           # no stop, allowed: no bytes
try:
    if what == "reopen":
        os.close(os.open("/proc/self/fd/%d" % fd, os.O_RDONLY))
    elif what == "openat":
        d = os.open(os.path.dirname(key), os.O_PATH | os.O_DIRECTORY)
        os.close(os.open(os.path.basename(key), os.O_RDONLY, dir_fd=d))
    elif what == "read":
        os.read(fd, 10)
    elif what == "link":
        # linkat(fd, "", AT_FDCWD, newpath, AT_EMPTY_PATH)
        r = libc.linkat(fd, b"", -100, sys.argv[3].encode(), 0x1000)
        if r < 0:
            sys.exit(ctypes.get_errno())
    elif what == "execveat":
        argv = (ctypes.c_char_p * 3)(b"sudo", b"exit-0", None)
        env = (ctypes.c_char_p * 1)(None)
        libc.syscall(322, fd, b"", argv, env, 0x1000)
        sys.exit(ctypes.get_errno())
except OSError as e:
    sys.exit(e.errno)
sys.exit(0)
'
py "$opath" open-only "$key"
assert_eq "O_PATH open of the key: allowed (it reads nothing)" 0 $?
assert_no_alert "O_PATH open of the key: no alert"
py "$opath" reopen "$key"
assert_eq "reopen of an O_PATH fd of the key through /proc/self/fd: EACCES" "$EACCES" $?
assert_rec "reopen: deny record names the key" "$(deny_expr read read. "$key")"

py "$opath" openat "$key"
assert_eq "openat of the key relative to an O_PATH dirfd: EACCES" "$EACCES" $?
assert_rec "openat relative to an O_PATH dirfd: deny record names the key" \
	"$(deny_expr read read. "$key")"

py "$opath" read "$key"
assert_eq "read(2) on an O_PATH fd fails with EBADF (the kernel's own answer)" 9 $?
assert_no_alert "read(2) on an O_PATH fd: nothing to decide"

py "$opath" link "$key" "$ROOT/stolen"
assert_eq "linkat(AT_EMPTY_PATH) of an O_PATH fd of the key: EACCES" "$EACCES" $?
assert_rec "linkat(AT_EMPTY_PATH): deny record (write)" "$(deny_expr write write. "$key")"
assert_file_absent "linkat(AT_EMPTY_PATH): no link made" "$ROOT/stolen"

py "$opath" execveat "$ROOT/bin/sudo"
assert_eq "execveat(AT_EMPTY_PATH) of an O_PATH fd of a denied program: EACCES" "$EACCES" $?
assert_rec "execveat(AT_EMPTY_PATH): deny record (exec)" \
	"event == 'alert' and action == 'deny' and kind == 'exec' and pre(rule_id, 'exec.')"

# --- ordinary reads are still decided -----------------------------------------------
expect_denied "plain read of the key still stops and is denied" "$EACCES" read read. "$key" -- \
	"$TRY" open-read "$key"
