#!/bin/bash
# agenttrace(1) --user: started as root, the command runs as USER (supplementary
# groups dropped, after the filter is in place); the log stays the
# supervisor's.  Without --user a command about to run as root gets a
# warning record (rule user.root) and a line in the summary.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

[ "$(id -u)" = 0 ] || skip_all "--user needs the tests to run as root"
id nobody >/dev/null 2>&1 || skip_all "no user 'nobody'"
NOBODY_UID=$(id -u nobody)
NOBODY_GID=$(id -g nobody)

# The user must reach ROOT and write there.
chmod 755 "$SANDBOX" "$ROOT/bin"
chmod 777 "$ROOT"

at_q --user nobody -- sh -c 'id -u; id -g; id -G; echo x > made-by-user'
assert_eq "--user nobody: exit 0" 0 $?
assert_eq "--user nobody: uid, gid, and no supplementary group" "$NOBODY_UID
$NOBODY_GID
$NOBODY_GID" "$(cat "$OUT")"
assert_eq "--user nobody: files are the user's" "$NOBODY_UID" "$(stat -c %u "$ROOT/made-by-user" 2>/dev/null)"
assert_eq "--user: the log stays root's" 0 "$(stat -c %u "$LOG")"
assert_rec "--user: the summary is written" "event == 'summary' and as_root == False"
assert_no_rec "--user nobody: no user.root warning" "rule_id == 'user.root'"

at_q --user nobody:root -- id -g
assert_eq "--user nobody:root: the group is root" 0 "$(cat "$OUT")"

# Still supervised after the switch: a denied write stays denied.
at_q --user nobody -- "$TRY" open-write "$HOME/.bashrc"
assert_eq "--user: a denied write is denied (EACCES)" "$EACCES" $?
assert_rec "--user: deny record" "$(deny_expr write write. "$HOME/.bashrc")"

# The user cannot get root back: NO_NEW_PRIVS makes setuid binaries inert.
if [ -u /bin/su ] || [ -u /usr/bin/su ]; then
	at_q --user nobody --allow-exec su -- sh -c 'su -c id root </dev/null; echo rc=$?'
	assert_match "--user: su cannot raise privileges" "rc=[1-9]" "$(cat "$OUT")"
fi

# A root supervisor with supplementary groups of its own (as sudo leaves
# root's): the calls it makes for a caller that can race (a second
# thread) are made with the caller's groups, not its own, and its own are
# back afterwards.  Group 4242 may write in g/; nobody is not in it.
if have setpriv && have python3; then
	cat >"$SANDBOX/at-grouped" <<EOF
#!/bin/sh
exec setpriv --groups 4242 "$AGENTTRACE" "\$@"
EOF
	chmod 755 "$SANDBOX/at-grouped"
	mkdir -p "$ROOT/g"
	chown root:4242 "$ROOT/g"
	chmod 775 "$ROOT/g"
	cat >"$ROOT/bin/grouped.py" <<'PYEOF'
import os, socket, sys, threading, time
threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
what = sys.argv[1]
try:
    if what == "bind":
        s = socket.socket(socket.AF_UNIX)
        s.bind("g/s.sock")
        print("bound")
    elif what == "bind-then-open":
        s = socket.socket(socket.AF_UNIX)
        s.bind("own.sock")
        os.unlink("own.sock")
        os.close(os.open("made-threaded", os.O_WRONLY | os.O_CREAT, 0o644))
        with open("/proc/%d/status" % os.getppid()) as f:
            print([l.split()[1:] for l in f if l.startswith(("Uid:", "Groups:"))])
    else:
        os.close(os.open("made-threaded", os.O_WRONLY | os.O_CREAT, 0o644))
        with open("/proc/%d/status" % os.getppid()) as f:
            print([l.split()[1:] for l in f if l.startswith("Groups:")][0])
except OSError as e:
    print(e.strerror)
PYEOF
	chmod 644 "$ROOT/bin/grouped.py"
	native_bind=$(cd "$ROOT" && setpriv --reuid "$NOBODY_UID" --regid "$NOBODY_GID" --clear-groups \
		/usr/bin/python3 bin/grouped.py bind 2>&1)
	rm -f "$ROOT/g/s.sock"
	saved_at=$AGENTTRACE
	AGENTTRACE=$SANDBOX/at-grouped
	at_q --user nobody -- /usr/bin/python3 bin/grouped.py open
	assert_eq "supervisor with groups: a threaded caller's open is made" 0 $?
	assert_eq "supervisor with groups: its own groups are back after a call made as nobody" \
		"['4242']" "$(cat "$OUT")"
	at_q --user nobody -- /usr/bin/python3 bin/grouped.py bind
	assert_eq "supervisor with groups: a threaded nobody's bind in a group-4242 directory" \
		"$native_bind" "$(cat "$OUT")"
	assert_file_absent "supervisor with groups: no socket made" "$ROOT/g/s.sock"
	# The first call made for the caller is a bind, by a thread that
	# gives up root for it: the supervisor's own identity is not read
	# there.
	at_q --user nobody -- /usr/bin/python3 bin/grouped.py bind-then-open
	assert_eq "supervisor with groups: its ids and groups after a bind, then an open, made as nobody" \
		"[['0', '0', '0', '0'], ['4242']]" "$(cat "$OUT")"
	AGENTTRACE=$saved_at
else
	skip "supervisor with groups" "no setpriv or python3"
fi

at_q --user no-such-user-here -- true
assert_eq "--user with an unknown user: 125" 125 $?
at_q --user nobody:no-such-group -- true
assert_eq "--user with an unknown group: 125" 125 $?

# --- without --user, as root --------------------------------------------------
at_q -- true
assert_eq "as root: exit 0" 0 $?
assert_rec "as root: warning record user.root" "event == 'warning' and rule_id == 'user.root'"
assert_rec "as root: the summary says as_root" "event == 'summary' and as_root == True"
(cd "$ROOT" && "$AGENTTRACE" -- true) >"$OUT" 2>"$ERR"
assert_match "as root: a summary line on stderr" "ran as root \\(no --user\\)" "$(cat "$ERR")"
(cd "$ROOT" && "$AGENTTRACE" -q -- true) >"$OUT" 2>"$ERR"
assert_eq "as root with -q: nothing on stderr" "" "$(cat "$ERR")"
