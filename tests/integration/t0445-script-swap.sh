#!/bin/bash
# A program that opens the file it runs by a name it was given, after the
# kernel loaded only the loader or interpreter: `sh SCRIPT`, a "#!"
# script (the kernel hands the interpreter the script's name as called),
# `ld.so PROG`, `python3 SCRIPT`.  A second process of the session swaps a
# symlink at that name between an allowed file in the project and one the
# policy refuses (a temp program, exec.temp-program).  The name is judged
# at the exec; the program opens it later.  An open of that name must
# reach the file judged, else the file it reached is judged as the script
# or program it would be, and refused and recorded (race.exec) when the
# policy refuses that: the temp program never runs.  The notify engine
# makes the open itself; the ptrace engine looks at the descriptor the
# kernel returned, in the call's exit stop.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace
[ -n "$PYTHON" ] || skip_all "no python3"

unset AGENTTRACE_TEST_ENGINE
at_q --engine notify -- true || skip_all "no notify engine on this kernel"
N=${RACE_N:-200}

mkdir -p "$ROOT/g"
MARK=$ROOT/evil-ran
cat >"$ROOT/swap.py" <<'PY'
import os, sys
lnk, a, b, stop = sys.argv[1:5]
tmp = lnk + ".new"
while not os.path.exists(stop):
    for t in (a, b):
        try:
            os.unlink(tmp if t != "-" else lnk)
        except FileNotFoundError:
            pass
        if t != "-":
            os.symlink(t, tmp)
            os.replace(tmp, lnk)
PY
# ea.py DIR NAME: execveat(DIR's descriptor, NAME): the kernel hands a
# "#!" script's interpreter /dev/fd/N/NAME.
cat >"$ROOT/ea.py" <<'PY'
import ctypes, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
os.set_inheritable(fd, True)
name = sys.argv[2].encode()
argv = (ctypes.c_char_p * 2)(name, None)
env = [k.encode() + b"=" + v.encode() for k, v in os.environ.items()]
envp = (ctypes.c_char_p * (len(env) + 1))(*env, None)
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall(322, fd, name, argv, envp, 0)
sys.exit(127)
PY
# race ENGINE LABEL GOOD EVIL [OPTIONS --] COMMAND...: COMMAND run N times while
# $ROOT/lnk flips between GOOD and EVIL; OUT says how often EVIL ran.
# Agenttrace options may come first, ended by "--".
race() {
	local e=$1 label=$2 good=$3 evil=$4 opts=()
	shift 4
	case " $* " in *" -- "*)
		while [ "$1" != -- ]; do opts+=("$1"); shift; done
		shift ;;
	esac
	rm -f "$MARK" "$ROOT/stop" "$ROOT/lnk"
	[ "$good" = - ] || ln -s "$good" "$ROOT/lnk"
	at --engine "$e" "${opts[@]}" -- /bin/sh -c '
		"$0" "$ROOT/swap.py" "$ROOT/lnk" "$1" "$2" "$ROOT/stop" & s=$!
		shift 2
		i=0
		while [ $i -lt '"$N"' ]; do "$@" >/dev/null 2>&1; i=$((i + 1)); done
		touch "$ROOT/stop"
		wait $s' "$PYTHON" "$good" "$evil" "$@" >"$OUT" 2>"$ERR"
	# A line per run; touch (ld.so's program) only makes the file.
	ran=0
	if [ -f "$MARK" ]; then
		ran=$(($(wc -l <"$MARK") + 0))
		[ "$ran" -gt 0 ] || ran=1
	fi
	races=$(rec_count "event == 'alert' and rule_id == 'race.exec'")
	diag "$e, $label: the refused program ran $ran times in $N, $races race.exec records"
}

# The allowed files and the refused ones, each writing the mark.
printf 'exit 0\n' >"$ROOT/g/good.sh"
printf 'echo x >>"%s"\n' "$MARK" >"$TMPDIR/evil.sh"
printf '#!/bin/sh\nexit 0\n' >"$ROOT/g/good-x.sh"
printf '#!/bin/sh\necho x >>"%s"\n' "$MARK" >"$TMPDIR/evil-x.sh"
chmod +x "$ROOT/g/good-x.sh" "$TMPDIR/evil-x.sh"
printf 'pass\n' >"$ROOT/g/good.py"
printf 'open("%s", "a").write("x\\n")\n' "$MARK" >"$TMPDIR/evil.py"
cp /bin/true "$ROOT/g/prog"
LDSO=$(readelf -l /bin/true 2>/dev/null | sed -n 's/.*interpreter: \(.*\)]/\1/p')
[ -x "$LDSO" ] || LDSO=
cp /bin/touch "$TMPDIR/evil-prog" # makes the mark

# Each refused file is refused when judged as itself.
for f in "sh $TMPDIR/evil.sh" "$TMPDIR/evil-x.sh" "$PYTHON $TMPDIR/evil.py"; do
	at_q --engine notify -- $f
	assert_ne "refused as itself: $f" 0 $?
	assert_file_absent "refused as itself: $f: did not run" "$MARK"
done
# Unswapped, every form runs with no record.
ln -sfn "$ROOT/g/good.sh" "$ROOT/lnk"
at_q --engine notify -- /bin/sh -c '
	sh "$ROOT/lnk" && sh "$ROOT/g/good.sh" && cd "$ROOT/g" && sh good.sh &&
	./good-x.sh && "$0" good.py' "$PYTHON"
assert_eq "the forms run unswapped" 0 $?
assert_no_alert "the forms run unswapped: no record"
if [ -n "$LDSO" ]; then
	at_q --engine notify -- "$LDSO" "$ROOT/g/prog"
	assert_eq "ld.so PROG runs" 0 $?
	assert_no_alert "ld.so PROG: no record"
fi

# A running script replaced in the project (an edit saved by a rename)
# and read again by its name, as a traceback does: the new file is judged
# as the script it would be, allowed, with no record.
cat >"$ROOT/g/self.py" <<'PY'
import os, sys
with open(sys.argv[0] + ".new", "w") as f:
    f.write("# edited\n")
os.replace(sys.argv[0] + ".new", sys.argv[0])
print(open(sys.argv[0]).read().strip())
PY
at_q --engine notify -- "$PYTHON" g/self.py
assert_eq "a script edited while it runs reads itself again" "# edited" "$(cat "$OUT")"
assert_no_alert "a script edited while it runs: no record"

# Ordinary work that opens a name like the script's own: after a chdir
# (a copy of itself in a temp dir, read by the same relative name), and
# for writing (a file of that name made elsewhere): neither is the
# script, and both run as natively.
cat >"$ROOT/g/selfcopy.py" <<'PY'
import os, shutil, sys, tempfile
d = tempfile.mkdtemp()
shutil.copy(sys.argv[0], d)
os.chdir(d)
print(len(open(sys.argv[0]).read()) > 0)
PY
printf 'cd "$TMPDIR/out" && true >gen.sh && echo made\n' >"$ROOT/g/gen.sh"
mkdir -p "$TMPDIR/out" && echo data >"$TMPDIR/out/gen.sh"
for E in notify ptrace; do
	at_q --engine "$E" -- sh -c 'cd g && "$0" selfcopy.py && sh gen.sh' "$PYTHON"
	assert_eq "$E: a script's own name opened after a chdir, and for writing" \
		"True made" "$(tr '\n' ' ' <"$OUT" | sed 's/ $//')"
	assert_no_alert "$E: ... no record"
done

# In audit mode nothing is refused: a swapped open is let through and
# recorded as an alert.
race notify "audit, sh SCRIPT" "$ROOT/g/good.sh" "$TMPDIR/evil.sh" --mode audit -- \
	sh "$ROOT/lnk"
# The temp script also runs when the check itself saw it (an alert of
# exec.temp-program): only a race.exec alert tells of a swapped open.
n=$(rec_count "event == 'alert' and rule_id == 'race.exec' and action == 'alert'")
if [ "${n:-0}" -gt 0 ]; then
	ok "audit mode: swapped opens let through and recorded ($n race.exec alerts)"
else
	skip "audit mode: swapped opens" "the race was never won in $N tries"
fi
assert_no_rec "audit mode: nothing refused" "event == 'alert' and action == 'deny'"

forms="sh exec python appear execveat"
[ -n "$LDSO" ] && forms="$forms ldso"
for E in notify ptrace; do
	for form in $forms; do
		case $form in
		sh | appear) evil=$TMPDIR/evil.sh ;;
		execveat) evil=$TMPDIR/evil-x.sh ;;
		exec) evil=$TMPDIR/evil-x.sh ;;
		python) evil=$TMPDIR/evil.py ;;
		ldso) evil=$TMPDIR/evil-prog ;;
		esac
		case $form in
		sh) race "$E" "sh SCRIPT" "$ROOT/g/good.sh" "$TMPDIR/evil.sh" sh "$ROOT/lnk" ;;
		exec) race "$E" "#! script" "$ROOT/g/good-x.sh" "$TMPDIR/evil-x.sh" "$ROOT/lnk" ;;
		python) race "$E" "python3 SCRIPT" "$ROOT/g/good.py" "$TMPDIR/evil.py" \
			"$PYTHON" "$ROOT/lnk" ;;
		ldso) race "$E" "ld.so PROG" "$ROOT/g/prog" "$TMPDIR/evil-prog" \
			"$LDSO" "$ROOT/lnk" "$MARK" ;;
		appear) race "$E" "sh NAME, NAME absent at the check" - "$TMPDIR/evil.sh" \
			sh "$ROOT/lnk" ;;
		execveat) race "$E" "execveat of a #! script" "$ROOT/g/good-x.sh" \
			"$TMPDIR/evil-x.sh" "$PYTHON" "$ROOT/ea.py" "$ROOT" lnk ;;
		esac
		assert_eq "$E, $form: the refused program never ran" 0 "$ran"
		if [ "$races" -gt 0 ]; then
			ok "$E, $form: a swapped open was refused and recorded ($races race.exec)"
			named=$(rec_count "rule_id == 'race.exec' and action == 'deny' and errno == 'EACCES' and '$evil ' in why and 'exec.temp-program' in why")
			assert_eq "$E, $form: each record names the file reached and the rule" \
				"$races" "$named"
		else
			skip "$E, $form: race.exec records" "the race was never won in $N tries"
		fi
	done
done
