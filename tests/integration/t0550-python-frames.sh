#!/bin/bash
# A denial raised by a CPython process carries its Python-level location
# ("python": file, line, function, innermost first), read from the
# interpreter's structures in the caller's memory; other processes carry
# none; a process that breaks or loops its own frame chain gets fewer
# frames and the supervisor goes on (tracer/inspect/pyframes.h).
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

[ -n "$PYTHON" ] || skip_all "no python3"

# The CPythons to try: AGENTTRACE_TEST_PYTHONS, else the test's python3,
# Debian's, and pyenv's where there is one; each once (by its real
# executable, as sys.executable names it outside agenttrace).
pythons=()
for c in ${AGENTTRACE_TEST_PYTHONS:-"$PYTHON" /usr/bin/python3 /usr/bin/python3.1[0-9] \
	$(command -v pyenv >/dev/null && printf '%s ' "$(pyenv root)"/versions/3.*/bin/python3)}; do
	[ -x "$c" ] || continue
	exe=$("$c" -c 'import os, sys; print(os.path.realpath(sys.executable))' 2>/dev/null) || continue
	case " ${pythons[*]} " in *" $exe "*) continue ;; esac
	pythons+=("$exe")
done

# The line of the first line of FILE that holds MARK.
line_of() {
	grep -n -- "$2" "$1" | head -n 1 | cut -d: -f1
}

# py_frames: the first denial's python frames, "function@file:line" lines.
py_frames() {
	rec_field 'event == "alert" and action == "deny"' python |
		"$PYTHON" -c 'import json,sys; [print("%s@%s:%s" % (f["function"], f["file"], f["line"])) for f in json.load(sys.stdin)]'
}

# want_frames DESC EXPECTED: the frames, innermost first, start with EXPECTED.
want_frames() {
	local got
	got=$(py_frames 2>&1)
	if [ "$(head -n "$(wc -l <<<"$2")" <<<"$got")" = "$2" ]; then
		ok "$1"
	else
		not_ok "$1" "want:" "$2" "got:" "$got"
		rec_dump
	fi
}

script=$ROOT/pyfile.py
cat >"$script" <<'EOF'
import os, sys, threading

class Saver:
    def save(self, path):
        try:
            open(path, "a")  # MARK-write
        except OSError:
            sys.exit(13)

def read_key(path):
    try:
        open(path, "rb").read()  # MARK-read
    except OSError:
        sys.exit(13)

def worker(path):
    try:
        open(path, "a")  # MARK-thread
    except OSError:
        pass

def in_thread(path):
    t = threading.Thread(target=worker, args=(path,))
    t.start()
    t.join()  # MARK-join
    sys.exit(13)

def main():
    what, path = sys.argv[1], sys.argv[2]
    if what == "write":
        Saver().save(path)  # MARK-call
    elif what == "read":
        read_key(path)  # MARK-rcall
    else:
        in_thread(path)  # MARK-tcall

main()  # MARK-main
EOF

bashrc=$HOME/.bashrc

# A broken frame chain: the script breaks its own _PyInterpreterFrame
# links with ctypes (PyFrameObject.f_frame at 24; in the frame f_code and
# previous at 32 and 48 in 3.11, at 0 and 8 in 3.12 and 3.13), makes two
# denied calls, and leaves without returning through them.
broken=$ROOT/pybroken.py
cat >"$broken" <<'EOF'
import ctypes, os, sys

CODE, PREV = (32, 48) if sys.version_info[:2] == (3, 11) else (0, 8)

def frame_of(f):
    return ctypes.c_void_p.from_address(id(f) + 24).value

def victim(how, path):
    me = frame_of(sys._getframe())
    caller = frame_of(sys._getframe(1))
    if how == "loop":
        ctypes.c_void_p.from_address(me + PREV).value = me
    elif how == "wild":
        ctypes.c_void_p.from_address(me + PREV).value = 0x10
    elif how == "badcode":
        ctypes.c_void_p.from_address(caller + CODE).value = 0xdead0000
    elif how == "fakecode":
        # The caller's code: a copy whose strings and line table lie
        # (huge lengths, wild pointers).
        fake = ctypes.create_string_buffer(4096)
        code = ctypes.c_void_p.from_address(caller + CODE).value
        ctypes.memmove(fake, code, 256)
        ctypes.c_ssize_t.from_address(ctypes.addressof(fake) + 136).value = 0x40
        ctypes.c_void_p.from_address(ctypes.addressof(fake) + 112).value = id(b"x" * 64)
        ctypes.c_void_p.from_address(caller + CODE).value = ctypes.addressof(fake)
        globals()["keep"] = fake
    elif how == "hugeline":
        # The caller's line table: three deltas of 2**31 - 1 (a line past
        # any int), then entries of no change up to 16 KiB of code.
        big = bytes([0x80 | 13 << 3 | 7]) + bytes([0x7e, 0x7f, 0x7f, 0x7f, 0x7f, 0x03])
        table = big * 3 + bytes([0x80 | 7, 0]) * 1000
        code = ctypes.c_void_p.from_address(caller + CODE).value
        ctypes.c_void_p.from_address(code + 136).value = id(table)
        globals()["keep"] = table
    for _ in range(2):
        try:
            open(path, "a")  # MARK-victim
        except OSError:
            pass
    sys.stdout.flush()
    os._exit(7)

def outer(how, path):
    victim(how, path)

outer(sys.argv[1], sys.argv[2])
EOF
# cases PY V: the denials of CPython PY (version V, known layout).
cases() {
	local py=$1 v=$2 how
	PY="$v: "
	L_write=$(line_of "$script" MARK-write) L_call=$(line_of "$script" MARK-call)
	L_main=$(line_of "$script" MARK-main)

	# --- a denied write: the function, its caller, the module -----------------
	at_q -- "$py" "$script" write "$bashrc"
	assert_eq "${PY}denied write: the script sees it" 13 $?
	assert_file_absent "${PY}denied write: no .bashrc" "$bashrc"
	want_frames "${PY}denied write: Saver.save, main, <module> at their lines" \
	"Saver.save@$script:$L_write
main@$script:$L_call
<module>@$script:$L_main"
	assert_rec "${PY}denied write: the native backtrace is still there" \
		'event == "alert" and action == "deny" and isinstance(backtrace, list) and len(backtrace) >= 1'

	# --- a denied read ------------------------------------------------------
	mkdir -p "$HOME/.ssh"
	echo secret >"$HOME/.ssh/id_ed25519"
	at_q -- "$py" "$script" read "$HOME/.ssh/id_ed25519"
	assert_eq "${PY}denied read: the script sees it" 13 $?
	want_frames "${PY}denied read: read_key, main at their lines" \
"read_key@$script:$(line_of "$script" MARK-read)
main@$script:$(line_of "$script" MARK-rcall)"

	# --- a second thread: its own frames, not the main thread's -------------
	at_q -- "$py" "$script" thread "$bashrc"
	assert_eq "${PY}thread: the script ran to its end" 13 $?
	want_frames "${PY}thread: the frames are the calling thread's (worker)" \
"worker@$script:$(line_of "$script" MARK-thread)"
	assert_no_rec "${PY}thread: no frame of the main thread's" \
		"event == 'alert' and python and any(f['function'] in ('in_thread', 'main') for f in python)"

	# --- a broken frame chain: fewer frames, the supervisor goes on -------
	L_victim=$(line_of "$broken" MARK-victim)
	for how in loop wild badcode fakecode hugeline; do
		at_q -- "$py" "$broken" "$how" "$bashrc"
		assert_eq "${PY}broken chain ($how): the script ran to its end" 7 $?
		assert_eq "${PY}broken chain ($how): both calls denied and recorded" 2 \
			"$(rec_count "$(deny_expr write write. "$bashrc")")"
		assert_rec "${PY}broken chain ($how): the summary was written" 'event == "summary"'
		want_frames "${PY}broken chain ($how): the innermost frame is still right" \
			"victim@$broken:$L_victim"
		assert_no_rec "${PY}broken chain ($how): at most 8 frames" \
			"event == 'alert' and python and len(python) > 8"
		case $how in
		hugeline)
			assert_rec "${PY}broken chain ($how): a line past any int is no line" \
				"event == 'alert' and python and len(python) >= 2 and python[1]['function'] == 'outer' and python[1]['line'] is None"
			;;
		fakecode)
			# The forged code object is read as far as it holds: its file
			# is no str, its line table no bytes.
			assert_rec "${PY}broken chain ($how): the forged caller has no file, no line" \
				"event == 'alert' and python and len(python) >= 2 and python[1]['file'] == '?' and python[1]['line'] is None"
			;;
		*)
			# The loop: the frame is not repeated; the others end the walk.
			assert_rec "${PY}broken chain ($how): one frame, the walk ends there" \
				"event == 'alert' and python and len(python) == 1"
			;;
		esac
	done
}

for py in "${pythons[@]}"; do
	v=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	case $v in
	3.11 | 3.12 | 3.13)
		cases "$py" "$v ($py)"
		;;
	*)
		# No known layout: no frames, and nothing else changes.
		at_q -- "$py" "$script" write "$bashrc"
		assert_eq "$v ($py), unknown layout: the script sees the denial" 13 $?
		assert_rec "$v ($py), unknown layout: the denial is recorded" "$(deny_expr write write. "$bashrc")"
		assert_no_rec "$v ($py), unknown layout: no python key" 'event == "alert" and has("python")'
		;;
	esac
done

# --- an exec in the same process: the new interpreter's frames --------
# What was found about a process is dropped at its exec: a stale runtime
# address (another version, or the same one loaded elsewhere) would read
# the new interpreter's memory with the old one's layout.
known=()
for py in "${pythons[@]}"; do
	case $("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])') in
	3.11 | 3.12 | 3.13) known+=("$py") ;;
	esac
done
if [ ${#known[@]} -ge 1 ]; then
	first=${known[0]} second=${known[${#known[@]}-1]}
	cat >"$ROOT/pyexec1.py" <<'EOF'
import os, sys

def before_exec(path, then):
    try:
        open(path, "a")  # MARK-before
    except OSError:
        pass
    os.execv(then, [then, os.path.join(os.path.dirname(__file__), "pyexec2.py"), path])

before_exec(sys.argv[1], sys.argv[2])
EOF
	cat >"$ROOT/pyexec2.py" <<'EOF'
import sys

def after_exec(path):
    try:
        open(path, "a")  # MARK-after
    except OSError:
        sys.exit(13)

after_exec(sys.argv[1])
EOF
	at_q -- "$first" "$ROOT/pyexec1.py" "$bashrc" "$second"
	assert_eq "exec ($first, then $second): the second script ran" 13 $?
	assert_rec "exec: the first denial names the first script" \
		"event == 'alert' and python and python[0]['function'] == 'before_exec' and python[0]['line'] == $(line_of "$ROOT/pyexec1.py" MARK-before)"
	assert_rec "exec: the second names the second script, in the same process" \
		"event == 'alert' and python and python[0]['function'] == 'after_exec' and python[0]['file'] == '$ROOT/pyexec2.py' and python[0]['line'] == $(line_of "$ROOT/pyexec2.py" MARK-after)"
	assert_eq "exec: both denials are of the one process" \
		"$(rec_field "event == 'alert' and python and python[0]['function'] == 'before_exec'" pid)" \
		"$(rec_field "event == 'alert' and python and python[0]['function'] == 'after_exec'" pid)"
else
	skip "exec: the new interpreter's frames" "no CPython of a known version"
fi

# --- no Python, no python frames -----------------------------------------
at_q -- sh -c 'echo x >> "$HOME/.bashrc"'
assert_rec "sh: a denial" "$(deny_expr write write. "$bashrc")"
assert_no_rec "sh: no python key" 'event == "alert" and has("python")'
# A program named python that is not CPython.
mkdir -p "$ROOT/bin"
cp "$(command -v sh)" "$ROOT/bin/python3.11"
at_q -- "$ROOT/bin/python3.11" -c 'echo x >> "$HOME/.bashrc"'
assert_rec "sh named python3.11: a denial" "$(deny_expr write write. "$bashrc")"
assert_no_rec "sh named python3.11: no python key" 'event == "alert" and has("python")'

