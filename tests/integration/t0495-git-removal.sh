#!/bin/bash
# Removing a repository the session made: git's configuration is judged
# by what it says (t0490), and its removal is refused where the
# repository existed before the session (without its .git, a .git file
# naming a directory of the session's own could take its place).  In a
# repository whose .git the session made, nothing ran that
# configuration before, and its removal is the rest of the policy's:
# `rm -rf` of a clone (also with submodules) and git's own cleanup of a
# clone that failed run as natively.  Under the notify engine the unlink
# is made by the supervisor, which checks again, from the directory it
# removes the file from, that its .git is one the session made: a
# second process swapping the names of the two repositories between the
# check and the unlink never removes the old repository's configuration.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace
have git || skip_all "no git"
[ -n "$PYTHON" ] || skip_all "no python3"

export GIT_CONFIG_NOSYSTEM=1 GIT_CEILING_DIRECTORIES=$SANDBOX
unset GIT_CONFIG_GLOBAL GIT_CONFIG_COUNT GIT_CONFIG_PARAMETERS GIT_DIR GIT_WORK_TREE
export GIT_AUTHOR_NAME=A GIT_AUTHOR_EMAIL=a@example.com GIT_COMMITTER_NAME=A \
	GIT_COMMITTER_EMAIL=a@example.com
unset AGENTTRACE_TEST_ENGINE
stat -c %W "$ROOT" 2>/dev/null | grep -qv '^0$' ||
	skip_all "no birth times on this file system: removals stay refused"

engines=ptrace
at_q --engine notify -- true && engines="ptrace notify"

# Made natively, before any session, inside the project (a clone hard
# links a local repository's objects; from outside the write roots that
# would be a write there, refused): a repository to clone, one with a
# submodule, and the project's own nested repository.
R=$ROOT/r
mkdir -p "$R" && (cd "$R" && git init -q --bare -b main remote.git && git init -q -b main seed &&
	git -C seed commit -q --allow-empty -m seed && git -C seed push -q ../remote.git main &&
	git -C seed -c protocol.file.allow=always submodule add -q "$R/remote.git" sm &&
	git -C seed commit -q -m sm && git init -q --bare -b main withsub.git &&
	git -C seed push -q ../withsub.git main && rm -rf seed && mkdir notrepo) || exit 99
git init -q -b main "$ROOT/old" || exit 99
# An old repository with a submodule, and one more to move.
make_old() {
	rm -rf "$ROOT/olds" "$ROOT/old2" &&
	git -c protocol.file.allow=always clone -q --recurse-submodules "$R/withsub.git" \
		"$ROOT/olds" && git init -q -b main "$ROOT/old2" && sleep 0.1
}
make_old || exit 99
sleep 0.1 # a clock tick or more: the session starts after it
REMOTE=$R/remote.git
CFG=$ROOT/old/.git/config

for E in $engines; do
	rm -rf "$ROOT/c"
	at_q --engine "$E" -- sh -c 'git clone -q "$1" c && rm -rf c' sh "$REMOTE"
	assert_eq "$E: a clone made and removed in one session" 0 $?
	assert_file_absent "$E: the clone is gone" "$ROOT/c"
	assert_no_alert "$E: a clone made and removed: no record"

	at_q --engine "$E" -- sh -c 'git -c protocol.file.allow=always clone -q \
		--recurse-submodules "$1" c && test -f c/.git/modules/sm/config && rm -rf c' \
		sh "$R/withsub.git"
	assert_eq "$E: a clone with a submodule, removed" 0 $?
	assert_file_absent "$E: ... gone" "$ROOT/c"
	assert_no_alert "$E: ... no record"

	# A clone made in one session and removed in the next: that
	# session did not make it.
	at_q --engine "$E" -- git clone -q "$REMOTE" c
	sleep 0.1
	at_q --engine "$E" -- rm -rf c
	assert_ne "$E: a clone of an earlier session is not removed" 0 $?
	assert_file_present "$E: ... its configuration stays" "$ROOT/c/.git/config"
	assert_rec "$E: ... with a record" "$(deny_expr write write.git-config "$ROOT/c/.git/config")"
	rm -rf "$ROOT/c"

	# git's cleanup of a clone that failed: it made the repository, the
	# fetch failed, and git removes what it made, its configuration too.
	at_q --engine "$E" -- git clone -q "file://$R/notrepo" c
	assert_ne "$E: a clone of what is no repository fails" 0 $?
	assert_file_absent "$E: ... and git removes what it made" "$ROOT/c"
	assert_no_alert "$E: ... with no record"

	# A submodule added in the session to a repository that existed,
	# then removed: its git directory is the session's.
	at_q --engine "$E" -- sh -c 'cd old && git -c protocol.file.allow=always submodule add -q "$1" "$2" &&
		git submodule deinit -q -f "$2" && git rm -q -f "$2" && rm -rf ".git/modules/$2"' \
		sh "$REMOTE" "new-$E"
	assert_eq "$E: a submodule added and removed in one session" 0 $? || diag "$(cat "$ERR")"
	assert_file_absent "$E: ... its git directory is gone" "$ROOT/old/.git/modules/new-$E"
	assert_no_alert "$E: ... with no record"

	# An old git directory's configuration moved or linked into a new
	# one, to be removed there: the move and the link are refused.
	at_q --engine "$E" -- sh -c 'mkdir -p olds/.git/modules/n2 &&
		{ mv olds/.git/modules/sm/config olds/.git/modules/n2/config ||
		  ln olds/.git/modules/sm/config olds/.git/modules/n2/config; }
		rm -f olds/.git/modules/n2/config olds/.git/modules/sm/config'
	assert_file_present "$E: an old configuration moved to a new git directory stays" \
		"$ROOT/olds/.git/modules/sm/config"
	assert_rec "$E: ... with a record" "$(deny_expr write write.git-config)"
	rm -rf "$ROOT/olds/.git/modules/n2"

	at_q --engine "$E" -- rm -f "$CFG"
	assert_ne "$E: the configuration of a repository that existed stays" 0 $?
	assert_file_present "$E: ... $CFG" "$CFG"
	assert_rec "$E: ... with a record" "$(deny_expr write write.git-config "$CFG")"
done

# An attacker helper's routes around a first version, which looked at the
# nearest .git alone: an old submodule's git directory moved below a new
# directory named .git, and an old repository's .git moved below a new
# repository's .git/modules, then removed with it.  The file's own
# directory, the git directory it configures, must be new: both stay.
# No masks, which would refuse the moves themselves.
for E in $engines; do
	AGENTTRACE_TEST_MASK_NS=0 at_q --engine "$E" -- sh -c '
		mkdir olds/.git/modules/.git && mv olds/.git/modules/sm olds/.git/modules/.git/sm
		rm -f olds/.git/modules/.git/sm/config
		git init -q -b main newrepo && mkdir -p newrepo/.git/modules &&
			mv old2/.git newrepo/.git/modules/x
		rm -rf newrepo'
	for f in olds/.git/modules/.git/sm/config olds/.git/modules/sm/config; do
		[ -f "$ROOT/$f" ] && kept=$f
	done
	assert_file_present "$E: an old submodule moved below a new .git keeps its configuration" \
		"$ROOT/${kept:-olds/.git/modules/sm/config}"
	kept=
	for f in newrepo/.git/modules/x/config old2/.git/config; do
		[ -f "$ROOT/$f" ] && kept=$f
	done
	assert_file_present "$E: an old .git moved below a new repository keeps its configuration" \
		"$ROOT/${kept:-old2/.git/config}"
	rm -rf "$ROOT/newrepo"
	make_old || exit 99
done

# The attacker's race, where nothing else holds the old repository (no
# masks).  Within the session every rename waits for the supervisor, who
# answers one call at a time; a process outside it does not (a daemon the
# command asks).  The session makes repositories n0, n1, ...; the outside
# process exchanges the names of one of them and of "old" back and forth
# (renameat2 RENAME_EXCHANGE), while the session unlinks nI/.git/config
# over and over.  The check at the stop may see the session's
# repository; the unlink must never reach the old one's configuration.
cat >"$ROOT/remove.py" <<'PY'
import os, subprocess, sys
n, tries = int(sys.argv[1]), int(sys.argv[2])
for i in range(n):
    subprocess.run(["git", "init", "-q", "n%d" % i], check=True)
for i in range(n):
    with open("cur.new", "w") as f:
        f.write(str(i))
    os.replace("cur.new", "cur")
    for _ in range(tries):
        try:
            os.unlink("n%d/.git/config" % i)
        except OSError:
            pass
open("stop", "w").close()
PY
cat >"$SANDBOX/exchange.py" <<'PY'
import ctypes, os, sys
os.chdir(sys.argv[1])
libc = ctypes.CDLL(None, use_errno=True)
while not os.path.exists("stop"):
    try:
        with open("cur") as f:
            i = f.read().strip()
    except OSError:
        continue
    for _ in range(50):
        libc.renameat2(-100, ("n" + i).encode(), -100, b"old", 2)
PY
N=${RACE_N:-150}
if [[ " $engines " == *" notify "* ]]; then
	ino=$(stat -c %i "$ROOT/old/.git")
	rm -f "$ROOT/stop" "$ROOT/cur"
	"$PYTHON" "$SANDBOX/exchange.py" "$ROOT" &
	xpid=$!
	AGENTTRACE_TEST_MASK_NS=0 at --engine notify -- "$PYTHON" remove.py "$N" 40 >"$OUT" 2>"$ERR"
	assert_eq "notify, race: the attacker ran" 0 $?
	touch "$ROOT/stop"
	wait $xpid
	# Wherever the old repository's name ended (its .git's inode).
	oldat=
	for d in "$ROOT"/old "$ROOT"/n*; do
		[ "$(stat -c %i "$d/.git" 2>/dev/null)" = "$ino" ] && oldat=$d
	done
	removed=0
	for d in "$ROOT"/n*; do
		[ "$d" != "$oldat" ] && [ ! -f "$d/.git/config" ] && removed=$((removed + 1))
	done
	diag "notify, race: the old repository is at ${oldat#$ROOT/}; $removed of $N of the session's removed"
	assert_file_present "notify, race: the old repository keeps its configuration" \
		"${oldat:-$ROOT/old}/.git/config"
	n=$(rec_count "$(deny_expr write write.git-config) and syscall in ('unlink', 'unlinkat')")
	diag "notify, race: $n refused removals"
fi
