#!/bin/bash
# Attacks on two protections, as a hostile command under the default
# policy would make them: the judgment of the CI channels at the end of a
# session (agenttrace(1), ENVIRONMENT "GITHUB_ENV") and the default task
# ceiling (--max-procs 15%).
#
# The channels are read back as the GitHub Actions runner reads them on
# Linux (runner_reads below): $GITHUB_ENV through File.ReadAllText, which
# honours a byte order mark, split at "\n" only (a "\r" stays part of the
# line, of a heredoc's delimiter too); $GITHUB_PATH through
# File.ReadAllLines, which also breaks lines at a lone "\r"; its entries
# are joined with ":" in front of PATH.  A case passes when the runner
# gets no variable that loads code and no PATH component outside the
# workspace.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

runner=$SANDBOX/runner
mkdir -p "$runner"
export GITHUB_ENV=$runner/set_env GITHUB_PATH=$runner/add_path
fresh() { : >"$GITHUB_ENV"; : >"$GITHUB_PATH"; }

# runner_reads: what the runner would apply to the later steps, one line
# each: "env NAME" for every variable set, "path DIR" for every PATH
# component the entries add, "error ..." where it stops reading.
runner_reads() {
	"$PYTHON" - "$GITHUB_ENV" "$GITHUB_PATH" <<'EOF'
import codecs, sys
def text(path):
    b = open(path, 'rb').read()
    for bom, enc in ((codecs.BOM_UTF32_LE, 'utf-32-le'), (codecs.BOM_UTF32_BE, 'utf-32-be'),
                     (codecs.BOM_UTF8, 'utf-8'), (codecs.BOM_UTF16_LE, 'utf-16-le'),
                     (codecs.BOM_UTF16_BE, 'utf-16-be')):
        if b.startswith(bom):
            return b[len(bom):].decode(enc, 'replace')
    return b.decode('utf-8', 'replace')
def line(t, i):
    if i >= len(t):
        return None, i, 0
    lf = t.find('\n', i)
    if lf < 0:
        return t[i:], len(t), 0
    return t[i:lf], lf + 1, 1
t = text(sys.argv[1])
i = 0
l, i, _ = line(t, i)
try:
    while l is not None:
        if l:
            eq, hd = l.find('='), l.find('<<')
            if eq >= 0 and (hd < 0 or eq < hd):
                print('env', l.split('=', 1)[0])
            elif hd >= 0:
                name, delim = l.split('<<', 1)
                if not name or not delim:
                    raise ValueError(l)
                k, i, _ = line(t, i)
                while k != delim:
                    if k is None:
                        raise ValueError(delim)
                    k, i, _ = line(t, i)
                print('env', name)
            else:
                raise ValueError(l)
        l, i, _ = line(t, i)
except ValueError as e:
    print('error', repr(str(e)))
p = text(sys.argv[2]).replace('\r\n', '\n').replace('\r', '\n').split('\n')
for entry in reversed([e for e in p if e]):
    for c in entry.split(':'):
        print('path', c)
EOF
}

# reaches_runner DESC VAR...: ok when none of VAR reaches the runner and
# every PATH component is beneath $ROOT.
reaches_runner() {
	local desc=$1 got bad=
	shift
	got=$(runner_reads)
	for v in "$@"; do
		grep -qxF "env $v" <<<"$got" && bad="$bad $v"
	done
	while read -r kind dir; do
		[ "$kind" = path ] || continue
		case $dir in "$ROOT"/*) ;; *) bad="$bad PATH:'$dir'" ;; esac
	done <<<"$got"
	if [ -z "$bad" ]; then
		ok "$desc"
	else
		not_ok "$desc" "the runner gets:$bad" "$(od -c "$GITHUB_ENV" | head -20)" \
			"$(od -c "$GITHUB_PATH" | head -10)"
	fi
}

# --- $GITHUB_ENV: what the runner parses otherwise --------------------

# The runner does not strip "\r" on Linux: "EOF\r" does not end a heredoc
# opened by "X<<EOF", so what agenttrace reads as the body of a second
# heredoc is, for the runner, a line of its own.
fresh
at_q -- sh -c 'printf "X<<EOF\nEOF\r\nY<<Z=1\nEOF\nLD_PRELOAD=%s/evil.so\nZ=1\n" "$PWD" >>"$GITHUB_ENV"'
reaches_runner "\$GITHUB_ENV: a heredoc's delimiter with a \\r does not smuggle LD_PRELOAD" LD_PRELOAD

# A byte order mark at the start: the runner decodes and drops it.
fresh
at_q -- sh -c 'printf "\357\273\277LD_PRELOAD=%s/evil.so\n" "$PWD" >>"$GITHUB_ENV"'
reaches_runner "\$GITHUB_ENV: a UTF-8 byte order mark does not hide LD_PRELOAD" LD_PRELOAD
fresh
at_q -- "$PYTHON" -c 'import os; open(os.environ["GITHUB_ENV"], "ab").write("NODE_OPTIONS=--require ./x.js\nA=1\n".encode("utf-16"))'
reaches_runner "\$GITHUB_ENV: UTF-16 with a byte order mark does not hide NODE_OPTIONS" NODE_OPTIONS

# The job's earlier entry without its "\n": the runner reads the session's
# first line as the rest of it, and the session's heredoc body as entries.
printf 'EARLIER=1' >"$GITHUB_ENV"
: >"$GITHUB_PATH"
at_q -- sh -c 'printf "X<<EOF=1\nLD_PRELOAD=%s/evil.so\nEOF=1\n" "$PWD" >>"$GITHUB_ENV"'
reaches_runner "\$GITHUB_ENV: an earlier entry left without its newline does not open a way" LD_PRELOAD
case $(cat "$GITHUB_ENV") in
EARLIER=1*) ok "\$GITHUB_ENV: the earlier entry is kept" ;;
*) not_ok "\$GITHUB_ENV: the earlier entry is kept" "$(cat "$GITHUB_ENV")" ;;
esac

# The same with a heredoc of the job's left open: the session's first
# line is, for the runner, the body of it, and its delimiter the end.
printf 'EARLIER<<END\nbody\n' >"$GITHUB_ENV"
: >"$GITHUB_PATH"
at_q -- sh -c 'printf "X<<EOF\nEND\nLD_PRELOAD=%s/evil.so\nEOF\n" "$PWD" >>"$GITHUB_ENV"'
reaches_runner "\$GITHUB_ENV: a heredoc of the job's left open does not open a way" LD_PRELOAD

# bash, the shell of every later `run:` step, runs code from these: an
# exported function overrides a command (git, make, ...) by name; xtrace
# from SHELLOPTS expands PS4, command substitutions and all (not as root).
fresh
at_q -- sh -c 'printf "BASH_FUNC_git%%%%=() { id; }\nSHELLOPTS=xtrace\nBASHOPTS=extdebug\nPS4=\$(id)\nGREETING=hello\n" >>"$GITHUB_ENV"'
reaches_runner "\$GITHUB_ENV: bash's exported functions and SHELLOPTS/PS4 are taken out" \
	'BASH_FUNC_git%%' SHELLOPTS BASHOPTS PS4
assert_match "\$GITHUB_ENV: the harmless entry stays" '^GREETING=hello$' "$(cat "$GITHUB_ENV")"

# --- $GITHUB_PATH: one entry for agenttrace, two for the runner ---------

fresh
at_q -- sh -c 'printf "%s/bin\r/tmp/evil\n" "$PWD" >>"$GITHUB_PATH"'
reaches_runner "\$GITHUB_PATH: a lone \\r does not hide an outside directory"
fresh
at_q -- sh -c 'echo "$PWD/bin:/tmp/evil" >>"$GITHUB_PATH"; echo "$PWD/lib:" >>"$GITHUB_PATH"'
reaches_runner "\$GITHUB_PATH: a ':' does not add an outside (or an empty) PATH component"
fresh
at_q -- sh -c 'echo "$PWD/bin" >>"$GITHUB_PATH"'
assert_eq "\$GITHUB_PATH: a plain workspace entry stays" "$ROOT/bin" "$(cat "$GITHUB_PATH")"

# --- the judged content cannot be written back --------------------------

# A full file system (the runner's files share the disk with the
# workspace): the rewrite fails, and what it was to take out must not be
# left for the runner anyway.
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
	small=$SANDBOX/small
	mkdir -p "$small"
	unshare -m sh -c '
		mount -t tmpfs -o size=1m tmpfs "$1" || exit 99
		mkdir "$1/root" "$1/runner" && : >"$1/runner/set_env" && : >"$1/runner/add_path"
		cd "$1/root" && GITHUB_ENV=$1/runner/set_env GITHUB_PATH=$1/runner/add_path \
			"$2" --log "$3" -- sh -c "
			echo OK=1 >>\"\$GITHUB_ENV\"; echo LD_PRELOAD=\$PWD/evil.so >>\"\$GITHUB_ENV\"
			echo \$PWD/bin >>\"\$GITHUB_PATH\"; echo /tmp/evil >>\"\$GITHUB_PATH\"
			head -c 2000000 /dev/zero >fill 2>/dev/null; exit 0" >/dev/null 2>&1
		cp "$1/runner/set_env" "$1/runner/add_path" "$4/"' sh "$small" "$AGENTTRACE" "$LOG" "$runner"
	assert_eq "a full file system: the session ran" 0 $?
	save_root=$ROOT
	ROOT=$small/root
	reaches_runner "a full file system: LD_PRELOAD and /tmp/evil are not left for the runner" LD_PRELOAD
	ROOT=$save_root
else
	skip "a full file system: nothing is left for the runner" "needs root and a mount namespace"
fi

# --- the supervisor killed before it judges ----------------------------

# fcntl(F_SETOWN) names the process the kernel signals on I/O: SIGIO,
# whose default ends a process, or with F_SETSIG any signal, SIGKILL
# included.  The permission is checked with the caller's credentials
# (as root, CAP_KILL), so it takes root; aimed at agenttrace, no judgment
# is made, no summary written.
cat >"$ROOT/sigio.py" <<'EOF2'
import fcntl, os, signal, struct, sys, time
open(os.environ['GITHUB_ENV'], 'a').write('LD_PRELOAD=%s/evil.so\n' % os.getcwd())
r, w = os.pipe()
if sys.argv[1] == 'F_SETSIG':
    fcntl.fcntl(r, fcntl.F_SETOWN, os.getppid())
    fcntl.fcntl(r, 10, signal.SIGKILL)  # F_SETSIG
else:
    fcntl.fcntl(r, 15, struct.pack('ii', 1, os.getppid()))  # F_SETOWN_EX, F_OWNER_PID
fcntl.fcntl(r, fcntl.F_SETFL, os.O_ASYNC | os.O_NONBLOCK)
os.write(w, b'x')
time.sleep(0.3)
EOF2
if [ "$(id -u)" = 0 ]; then
	for how in F_SETSIG F_SETOWN_EX; do
		fresh
		at_q -- "$PYTHON" sigio.py "$how"
		assert_rec "$how aimed at agenttrace: it lives on to write its summary" "event == 'summary'"
		reaches_runner "$how aimed at agenttrace: LD_PRELOAD is not left for the runner" LD_PRELOAD
	done
else
	skip "F_SETOWN aimed at agenttrace" "needs root (CAP_KILL)"
fi
# A program's own SIGIO still comes.
at_q -- "$PYTHON" -c '
import fcntl, os, signal, time
got = []
signal.signal(signal.SIGIO, lambda *a: got.append(1))
r, w = os.pipe()
fcntl.fcntl(r, fcntl.F_SETOWN, os.getpid())
fcntl.fcntl(r, fcntl.F_SETFL, os.O_ASYNC | os.O_NONBLOCK)
os.write(w, b"x")
time.sleep(0.2)
print("sigio" if got else "none")'
assert_eq "F_SETOWN to the program itself: its SIGIO comes" sigio "$(cat "$OUT")"

# --- the task ceiling ---------------------------------------------------

# What the ceiling must not end: ordinary parallel work under the default
# 15% (make -j8 of many files, 32 worker processes, 200 threads).
if have make && have cc; then
	mkdir -p "$ROOT/mk"
	for i in $(seq 1 120); do echo "int f$i(void) { return $i; }" >"$ROOT/mk/f$i.c"; done
	printf 'OBJ=$(patsubst %%.c,%%.o,$(wildcard *.c))\nall: $(OBJ)\n%%.o: %%.c\n\t$(CC) -c $< -o $@\n' \
		>"$ROOT/mk/Makefile"
	at_q -- make -s -j8 -C mk
	assert_eq "make -j8 of 120 files under the default ceiling: exit 0" 0 $?
	assert_eq "make -j8: every object made" 120 "$(ls "$ROOT"/mk/*.o 2>/dev/null | wc -l)"
	assert_no_rec "make -j8: no limit record" "kind == 'limit'"
else
	skip "make -j8 under the default ceiling" "no make or cc"
fi
cat >"$ROOT/work.py" <<'EOF'
import multiprocessing, threading, time
def square(x):
    return x * x
if __name__ == '__main__':
    with multiprocessing.Pool(32) as p:
        assert sum(p.map(square, range(1000))) == sum(x * x for x in range(1000))
    ts = [threading.Thread(target=time.sleep, args=(0.2,)) for _ in range(200)]
    [t.start() for t in ts]
    [t.join() for t in ts]
    print('done')
EOF
at_q -- "$PYTHON" work.py
assert_eq "32 worker processes and 200 threads under the default ceiling: exit 0" 0 $?
assert_eq "32 workers, 200 threads: done" done "$(cat "$OUT")"
assert_no_rec "32 workers, 200 threads: no limit record" "kind == 'limit'"

# A bomb that first tries to leave its cgroup or lift the ceiling (another
# cgroup's cgroup.procs or tasks, pids.max, a child cgroup of its own, a
# cgroup namespace), then forks on: still ended, with one record, nothing
# left running.
cat >"$SANDBOX/escape-bomb.sh" <<'EOF2'
for f in /sys/fs/cgroup/pids/cgroup.procs /sys/fs/cgroup/pids/tasks /sys/fs/cgroup/cgroup.procs \
	/sys/fs/cgroup/unified/cgroup.procs /sys/fs/cgroup/*/agenttrace.*/cgroup.procs; do
	echo $$ >"$f"
done 2>/dev/null
for f in /sys/fs/cgroup/pids/agenttrace.*/pids.max /sys/fs/cgroup/agenttrace.*/pids.max; do
	echo max >"$f"
done 2>/dev/null
mkdir /sys/fs/cgroup/pids/agenttrace.*/own 2>/dev/null
unshare -C true 2>/dev/null
b() { b & b & wait; }
b
EOF2
at -v --max-procs 1% -- bash "$SANDBOX/escape-bomb.sh" >"$OUT" 2>"$ERR"
st=$?
if grep -q "the process ceiling of 1% of the kernel's task limit is not applied" "$ERR"; then
	skip "a bomb trying to leave its cgroup first: ended" "no cgroup with the pids controller here"
else
	assert_eq "a bomb trying to leave its cgroup first: killed (137)" 137 "$st"
	assert_eq "a bomb trying to leave its cgroup first: one limit record" 1 \
		"$(rec_count "kind == 'limit' and rule_id == 'limit.max-procs'")"
	sleep 0.2
	assert_eq "a bomb trying to leave its cgroup first: nothing left running" "" \
		"$(pgrep -f escape-bomb.sh || true)"
fi
