#!/bin/bash
# The race of a read-only open by a caller that can race (a second
# thread, or memory another process shares): the path is flipped between
# the supervisor's check and the kernel's read.  Where the masks are all
# in force and Landlock too, such an open is continued (doc/INTERNALS.md,
# "Callers that can race"): a credential that existed at the start is an
# empty file in the command's view, and the /proc files of a process
# outside the session are Landlock's to refuse.  Without either, the
# supervisor makes the open on what it judged.  No read gets the secret
# in any of them.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

unset AGENTTRACE_TEST_ENGINE
at_q --engine notify -- true || skip_all "no notify engine on this kernel: $(cat "$ERR")"

RACE=$ROOT/bin/race-read
cp "$PROGS/race-read" "$RACE" || exit 99
N=${RACE_N:-3000}
SECRET=SECRET-KEY-BYTES

# race_case LABEL GOOD BAD MARKER [race-read's MODE] -- [AGENTTRACE OPTIONS]:
# one run; no read may get MARKER.
race_case() {
	local label=$1 good=$2 bad=$3 marker=$4 mode=$5 won
	shift 5
	[ "$1" = -- ] && shift
	at --engine notify "$@" -- "$RACE" "$good" "$bad" "$marker" "$N" $mode >"$OUT" 2>"$ERR"
	assert_eq "$label: the helper ran" 0 $?
	diag "$label: $(cat "$OUT")"
	won=$(sed -n 's/.*bad=\([0-9]*\).*/\1/p' "$OUT")
	assert_eq "$label: no read got the secret" 0 "${won:-x}"
	assert_match "$label: reads of GOOD were made" " ok=[1-9]" "$(cat "$OUT")"
}

# --- a .env that arrives in a directory moved in -------------------------------
# A directory that holds a .env, moved into the project while a second
# process keeps exchanging it with a plain file where the rule does not
# apply (node_modules): what arrived is looked at once it has, not what
# stood at the old name a moment before (a check the exchange undoes).
# The helper lies outside the write roots, so that its own constants (the
# names it renames) are memory no process of the session can change and
# its single-threaded renamer's calls are continued; it checks the log
# after each read that got the bytes: none may be without its record.
# First, in a project that holds nothing else the look could stop at.
mkdir -p "$SANDBOX/fixed"
MOVEIN=$SANDBOX/fixed/race-move-in
cp "$PROGS/race-move-in" "$MOVEIN" || exit 99
for k in 1 2 3 4; do
	rm -rf "$ROOT/node_modules" "$ROOT/X" "$ROOT/.fnv"
	at --engine notify -- "$MOVEIN" "$LOG" "$N" >"$OUT" 2>"$ERR"
	assert_eq ".env moved in while exchanged ($k): the helper ran" 0 $?
	diag ".env moved in while exchanged ($k): $(cat "$OUT")"
	assert_match ".env moved in while exchanged ($k): reads of it were made" "bad=[1-9]" "$(cat "$OUT")"
	assert_match ".env moved in while exchanged ($k): none unrecorded" "unrecorded=0$" "$(cat "$OUT")"
done
rm -rf "$ROOT/node_modules" "$ROOT/X" "$ROOT/.fnv"

# --- a credential that exists at the start ------------------------------------
# GOOD and BAD differ in one byte: ROOT/a/.ssh/id_rsa (a decoy) and
# ROOT/b/.ssh/id_rsa, where ROOT/b is a symlink to HOME.
mkdir -p "$HOME/.ssh" "$ROOT/a/.ssh"
echo "$SECRET" >"$HOME/.ssh/id_rsa"
chmod 0600 "$HOME/.ssh/id_rsa"
echo decoy >"$ROOT/a/.ssh/id_rsa"
ln -sfn "$HOME" "$ROOT/b"
GOOD=$ROOT/a/.ssh/id_rsa
BAD=$ROOT/b/.ssh/id_rsa

native_race "$RACE" "$GOOD" "$BAD" "$SECRET" "$N"
diag "natively: $(cat "$OUT")"
assert_match "natively, the flipped path reaches the key" " bad=[1-9]" "$(cat "$OUT")"

for M in "" process; do
	for O in "" "--mask off" "--landlock off"; do
		race_case "key, ${M:-thread} flips${O:+, $O}" "$GOOD" "$BAD" "$SECRET" "$M" -- $O
		assert_rec "key, ${M:-thread} flips${O:+, $O}: the tries of the key are denied and recorded" \
			"event == 'alert' and action == 'deny' and path == '$HOME/.ssh/id_rsa'"
	done
done

# each_read_recorded LABEL ENV: the last race's reads that got the secret
# (its OUT's last line) are as many as the read alerts of ENV by an open
# (renames and links that made it have records of their own).
each_read_recorded() {
	local won recs
	diag "$1: $(cat "$OUT")"
	won=$(sed -n 's/.*bad=\([0-9]*\).*/\1/p' "$OUT" | tail -n 1)
	recs=$(rec_count "event == 'alert' and rule == 'read.project-env' and path == '$2' and syscall.startswith('open')")
	diag "$1: $recs records"
	[ -n "$won" ] && [ "$won" -gt 0 ] && [ "$recs" = "$won" ] &&
		ok "$1: each read of it is recorded" ||
		not_ok "$1: each read of it is recorded" "reads $won, records $recs"
}

# --- a read the policy alerts on ---------------------------------------------
# The project's .env is readable, with a record (read.project-env).  A
# continued open that the flip turns into .env would be read with no
# record; while such a file exists the supervisor makes the open on what
# it judged: each read of it has its record, and no record is of a read
# the kernel turned elsewhere.
echo "SECRET-ENV-BYTES" >"$ROOT/.env"
echo decoy >"$ROOT/.fnv"
native_race "$RACE" "$ROOT/.fnv" "$ROOT/.env" SECRET-ENV "$N"
diag "natively: $(cat "$OUT")"
assert_match "natively, the flipped path reaches .env" " bad=[1-9]" "$(cat "$OUT")"
for O in "" "--mask off"; do
	at --engine notify $O -- "$RACE" "$ROOT/.fnv" "$ROOT/.env" SECRET-ENV "$N" >"$OUT" 2>"$ERR"
	assert_eq ".env, thread flips${O:+, $O}: the helper ran" 0 $?
	each_read_recorded ".env, thread flips${O:+, $O}" "$ROOT/.env"
done
# An open for writing that reads (O_RDWR, "r+") is such a read too.
at --engine notify -- "$RACE" -w "$ROOT/.fnv" "$ROOT/.env" SECRET-ENV "$N" >"$OUT" 2>"$ERR"
assert_eq ".env opened O_RDWR, thread flips: the helper ran" 0 $?
each_read_recorded ".env opened O_RDWR, thread flips" "$ROOT/.env"
# And one that a flip turns to a file a read rule denies inside the write
# roots, where Landlock lets the open for writing through: without the
# masks it is the supervisor's check alone.
cat >"$SANDBOX/secret.json" <<'JSON'
{"agenttrace": 1, "extends": "default",
 "read": {"deny": [{"id": "read.test-secret", "path": "${ROOT}/secret", "why": "a test's secret"}]}}
JSON
echo "SECRET-FILE-BYTES" >"$ROOT/secret"
echo decoy >"$ROOT/wecret"
for O in "" "--mask off"; do
	L="denied file opened O_RDWR, thread flips${O:+, $O}"
	at --engine notify --policy "$SANDBOX/secret.json" $O -- \
		"$RACE" -w "$ROOT/wecret" "$ROOT/secret" SECRET-FILE "$N" >"$OUT" 2>"$ERR"
	assert_eq "$L: the helper ran" 0 $?
	diag "$L: $(cat "$OUT")"
	assert_match "$L: no read got the secret" " bad=0 " "$(cat "$OUT")"
	assert_match "$L: reads of the decoy were made" " ok=[1-9]" "$(cat "$OUT")"
	assert_rec "$L: the tries are denied and recorded" "$(deny_expr read read.test-secret "$ROOT/secret")"
done
rm -f "$ROOT/secret" "$ROOT/wecret"
rm -f "$ROOT/.env" "$ROOT/.fnv"

# A .env the session makes after the supervisor looked for one (at the
# first racing read, when there was none): written, renamed or linked
# into place, or brought in a directory moved into the project.  From
# then on each read of it has its record too.
echo decoy >"$ROOT/.fnv"
echo other >"$ROOT/.fnw"
mkdir -p "$TMPDIR/made"
echo "SECRET-ENV-BYTES" >"$TMPDIR/made/env-src"
# made_env HOW, sourced by the shell under agenttrace.
cat >"$SANDBOX/made-env.sh" <<SH
made_env() {
	case \$1 in
	written) printf 'SECRET-ENV-BYTES\\n' >"$ROOT/.env" ;;
	renamed) cp "$TMPDIR/made/env-src" "$ROOT/env.tmp" && mv "$ROOT/env.tmp" "$ROOT/.env" ;;
	linked) cp "$TMPDIR/made/env-src" "$ROOT/env.tmp" && ln "$ROOT/env.tmp" "$ROOT/.env" ;;
	moved) mkdir -p "$TMPDIR/made/stage" && cp "$TMPDIR/made/env-src" "$TMPDIR/made/stage/.env" &&
		mv "$TMPDIR/made/stage" "$ROOT/stage" && echo decoy >"$ROOT/stage/.fnv" ;;
	esac
}
SH
for how in written renamed linked moved; do
	rm -rf "$ROOT/.env" "$ROOT/env.tmp" "$ROOT/stage"
	good=$ROOT/.fnv bad=$ROOT/.env
	if [ "$how" = moved ]; then
		good=$ROOT/stage/.fnv bad=$ROOT/stage/.env
	fi
	# The first race reads only decoys: the look finds no .env.
	at --engine notify -- sh -c '"$1" "$2" "$3" other 200 >/dev/null && . "$4" && made_env "$5" &&
		exec "$1" "$6" "$7" SECRET-ENV "$8"' \
		sh "$RACE" "$ROOT/.fnv" "$ROOT/.fnw" "$SANDBOX/made-env.sh" "$how" "$good" "$bad" "$N" \
		>"$OUT" 2>"$ERR"
	assert_eq ".env $how after the look: the helper ran" 0 $?
	each_read_recorded ".env $how after the look" "$bad"
done
rm -rf "$ROOT/.env" "$ROOT/.fnv" "$ROOT/.fnw" "$ROOT/env.tmp" "$ROOT/stage" "$TMPDIR/made"

# An alerted read (its record takes the caller's backtrace) is made on
# what was judged too: flipped from a project's .env to a credential
# without masks, it never reads the credential.
mkdir -p "$HOME/.aws" "$ROOT/a/.aws"
echo "SECRET-AWS-BYTES" >"$HOME/.aws/.env"
echo decoy >"$ROOT/a/.aws/.env"
native_race "$RACE" "$ROOT/a/.aws/.env" "$ROOT/b/.aws/.env" SECRET-AWS "$N"
diag "natively: $(cat "$OUT")"
assert_match "natively, the flipped path reaches the credential" " bad=[1-9]" "$(cat "$OUT")"
for O in "--mask off" "--mask off --landlock off"; do
	race_case "alerted .env flipped to a credential, $O" "$ROOT/a/.aws/.env" "$ROOT/b/.aws/.env" \
		SECRET-AWS "" -- $O
	assert_rec "alerted .env flipped to a credential, $O: the tries are denied and recorded" \
		"event == 'alert' and action == 'deny' and path == '$HOME/.aws/.env'"
done
rm -rf "$HOME/.aws" "$ROOT/a/.aws"

# wait_sleeping PID: until PID has become sleep(1).  Before its exec the
# token is not yet in its environment (env(1) puts it there), or, after
# python's setresuid, the kernel keeps its /proc files from nobody.
wait_sleeping() {
	local i
	for ((i = 0; i < 200; i++)); do
		[ "$(cat /proc/$1/comm 2>/dev/null)" = sleep ] && return 0
		sleep 0.05
	done
	return 1
}

# --- another process's environment ---------------------------------------------
# A process outside the session holds a token in its environment; GOOD
# is a decoy file under ROOT/q/PID, BAD the same name under ROOT/p, a
# symlink to /proc.
# Its environment holds the token alone: the helper reads the first 4 KiB,
# and a CI job's environment alone can be longer than that.
env -i AT_RACE_TOKEN="$SECRET" "$(command -v sleep)" 300 </dev/null >/dev/null 2>&1 &
OUTSIDE=$!
bg_track $OUTSIDE
wait_sleeping $OUTSIDE || exit 99
mkdir -p "$ROOT/q/$OUTSIDE"
echo decoy >"$ROOT/q/$OUTSIDE/environ"
ln -sfn /proc "$ROOT/p"
GOOD=$ROOT/q/$OUTSIDE/environ
BAD=$ROOT/p/$OUTSIDE/environ

native_race "$RACE" "$GOOD" "$BAD" "$SECRET" "$N"
diag "natively: $(cat "$OUT")"
assert_match "natively, the flipped path reaches the other process's environment" " bad=[1-9]" \
	"$(cat "$OUT")"

for O in "" "--mask off" "--landlock off"; do
	race_case "environ, thread flips${O:+, $O}" "$GOOD" "$BAD" "$SECRET" "" -- $O
	assert_rec "environ, thread flips${O:+, $O}: the tries are denied and recorded" \
		"event == 'alert' and action == 'deny' and path == '/proc/$OUTSIDE/environ'"
done
kill $OUTSIDE 2>/dev/null
wait $OUTSIDE 2>/dev/null

# The same between two processes of one user without capabilities (the
# command as nobody, the outside process too), where only Landlock's
# ptrace rule stands between the command and the other's /proc files:
# root's process above is out of reach of a command without root's
# capabilities anyway.
if [ "$(id -u)" = 0 ] && have setpriv && id nobody >/dev/null 2>&1 && [ -x /usr/bin/python3 ]; then
	as_nobody() {
		setpriv --reuid nobody --regid "$(id -gn nobody)" --clear-groups "$@"
	}
	chmod 0755 "$SANDBOX" "$ROOT" "$ROOT/bin"
	# All three ids nobody's (setpriv keeps the saved one root's, and
	# the kernel then refuses even nobody's own reads of its /proc).
	env -i AT_RACE_TOKEN="$SECRET" SLEEP="$(command -v sleep)" /usr/bin/python3 -c 'import os, pwd, sys
u = pwd.getpwnam("nobody")
os.setgroups([]); os.setresgid(u.pw_gid, u.pw_gid, u.pw_gid); os.setresuid(u.pw_uid, u.pw_uid, u.pw_uid)
os.execv(os.environ.pop("SLEEP"), ["sleep", "300"])' </dev/null >/dev/null 2>&1 &
	OUTSIDE=$!
	bg_track $OUTSIDE
	wait_sleeping $OUTSIDE || exit 99
	mkdir -p "$ROOT/q/$OUTSIDE"
	echo decoy >"$ROOT/q/$OUTSIDE/environ"
	GOOD=$ROOT/q/$OUTSIDE/environ
	BAD=$ROOT/p/$OUTSIDE/environ
	native_race as_nobody "$RACE" "$GOOD" "$BAD" "$SECRET" "$N"
	diag "natively, as nobody: $(cat "$OUT")"
	assert_match "natively, as nobody: the flipped path reaches nobody's other process" \
		" bad=[1-9]" "$(cat "$OUT")"
	for O in "" "--landlock off"; do
		race_case "environ, --user nobody, thread flips${O:+, $O}" "$GOOD" "$BAD" "$SECRET" "" -- \
			--user nobody $O
	done
	kill $OUTSIDE 2>/dev/null
	wait $OUTSIDE 2>/dev/null
else
	skip "environ, --user nobody" "not root, or no setpriv, user nobody or /usr/bin/python3"
fi

# --- what a continued read gives: the kernel's own open --------------------------
# /dev/tty opened read-only by a caller with a second thread: continued,
# it is /dev/tty itself (5,0), as natively; made by the supervisor (no
# masks), it is the terminal's own device.
if have script; then
	TTYPROG=$ROOT/tty-rdev.py
	cat >"$TTYPROG" <<'PY'
import os, threading
stop = threading.Event()
threading.Thread(target=stop.wait, daemon=True).start()
st = os.fstat(os.open("/dev/tty", os.O_RDONLY))
print("rdev=%d,%d" % (os.major(st.st_rdev), os.minor(st.st_rdev)))
stop.set()
PY
	tty_rdev() {
		script -qec "cd '$ROOT' && '$AGENTTRACE' --log '$LOG' --engine notify $1 -- \
			'$PYTHON' '$TTYPROG'" /dev/null | tr -d '\r' | sed -n 's/^rdev=//p'
	}
	assert_eq "/dev/tty read by a caller with two threads: the kernel's open (5,0)" 5,0 \
		"$(tty_rdev "")"
	r=$(tty_rdev "--mask off")
	assert_match "/dev/tty, --mask off: the supervisor's open (the terminal's device)" \
		'^(136|[0-9]+),' "$r"
	[ "$r" != 5,0 ] && ok "/dev/tty, --mask off: not 5,0 ($r)" || not_ok "/dev/tty, --mask off: not 5,0" "$r"
else
	skip "/dev/tty read by a caller with two threads" "no script(1)"
fi
