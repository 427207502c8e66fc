#!/bin/bash
# agenttrace-policy(5) "Exec identity": an exec is judged as the program
# that runs.  The dynamic loader run as a program is the program it runs;
# an interpreter given a script file is judged with the script too (so
# exec.temp-program covers `sh $TMPDIR/x.sh`); node's package.json names a
# script (npm-cli.js is npm).  Records name the loader and the script
# (agenttrace(1), RECORDS: loader, script_path, program_name).
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

cp "$TRY" "$TMPDIR/evil"
printf '#!/bin/sh\necho ran > "%s/ran"\n' "$ROOT" >"$TMPDIR/x.sh"
printf 'open("%s/ran", "w").write("ran")\n' "$ROOT" >"$TMPDIR/x.py"
printf 'echo built > "%s/built"\n' "$ROOT" >"$ROOT/build.sh"

# The loader of this machine's programs: /bin/sh's ELF interpreter.
loader=$("$PYTHON" - <<'PY'
import struct
with open("/bin/sh", "rb") as f:
    data = f.read()
if data[:4] == b"\x7fELF" and data[4] == 2:
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    for i in range(phnum):
        p_type, _, p_offset, _, _, p_filesz = struct.unpack_from("<IIQQQQ", data, phoff + i * phentsize)
        if p_type == 3:
            print(data[p_offset:p_offset + p_filesz].rstrip(b"\0").decode())
PY
)
if [ -n "$loader" ] && [ "$(native "$loader" "$TMPDIR/evil" exit 0)" != 0 ]; then
	loader=
fi

# exec_deny DESC RULE TARGET [KEY VALUE]: the deny record of an exec of
# TARGET by RULE (and KEY == VALUE), under the current backend.
exec_deny() {
	local extra=
	[ $# -ge 5 ] && extra=" and r.get('$4') == '$5'"
	assert_rec "$BK$1: deny record ($2, $3)" \
		"event == 'alert' and action == 'deny' and kind == 'exec' and rule_id == '$2' and target == '$3'$extra$(bk_rec_backend)"
}

npm_cli=
if have npm && have node; then
	npm_cli=$(readlink -f "$(command -v npm)")
	mkdir -p "$SANDBOX/pkg"
	printf '{"name": "localpkg", "version": "1.0.0"}\n' >"$SANDBOX/pkg/package.json"
fi
export npm_config_update_notifier=false npm_config_audit=false npm_config_fund=false

for B in auto preload; do
	backend_use "$B"
	sandbox_reset
	cp "$TRY" "$TMPDIR/evil"
	printf '#!/bin/sh\necho ran > "%s/ran"\n' "$ROOT" >"$TMPDIR/x.sh"
	printf 'open("%s/ran", "w").write("ran")\n' "$ROOT" >"$TMPDIR/x.py"
	printf 'echo built > "%s/built"\n' "$ROOT" >"$ROOT/build.sh"

	# --- the dynamic loader as a program -------------------------------------
	if [ -n "$loader" ]; then
		bk_status "${BK}ld.so \$TMPDIR/evil: EACCES" "$EACCES" -- "$TRY" exec "$loader" "$TMPDIR/evil" exit 0
		exec_deny "ld.so \$TMPDIR/evil" exec.temp-program.tmpdir "$TMPDIR/evil"
		assert_rec "${BK}ld.so \$TMPDIR/evil: the record names the loader" \
			"event == 'alert' and target == '$TMPDIR/evil' and loader == '$(readlink -f "$loader")' and target_argv == ['$loader', '$TMPDIR/evil', 'exit', '0']"

		bk_status "${BK}ld.so --library-path --argv0 \$TMPDIR/evil: EACCES" "$EACCES" -- \
			"$TRY" exec "$loader" --library-path /nonexistent --argv0 x --inhibit-cache "$TMPDIR/evil" exit 0
		exec_deny "ld.so with options" exec.temp-program.tmpdir "$TMPDIR/evil"

		bk_status "${BK}ld.so ld.so \$TMPDIR/evil: EACCES" "$EACCES" -- \
			"$TRY" exec "$loader" "$loader" "$TMPDIR/evil" exit 0
		exec_deny "ld.so ld.so" exec.temp-program.tmpdir "$TMPDIR/evil"

		bk_status "${BK}ld.so \$TMPDIR/evil as the command: not run (126)" 126 -- "$loader" "$TMPDIR/evil" exit 0
		exec_deny "ld.so as the command" exec.temp-program.tmpdir "$TMPDIR/evil"

		bk_allowed "ld.so of a program in the project runs" -- "$TRY" exec "$loader" "$ROOT/bin/try-syscall" exit 0
	else
		skip "${BK}ld.so \$TMPDIR/evil" "no ELF interpreter in /bin/sh, or it cannot run a program"
	fi

	# --- interpreters given a dropped script ----------------------------------
	for sh in sh bash; do
		bk_status "${BK}$sh \$TMPDIR/x.sh: EACCES" "$EACCES" -- "$TRY" exec "/bin/$sh" "$TMPDIR/x.sh"
		assert_rec "${BK}$sh \$TMPDIR/x.sh: deny record naming the script" \
			"event == 'alert' and action == 'deny' and rule_id == 'exec.temp-program.tmpdir' and script_path == '$TMPDIR/x.sh'$(bk_rec_backend)"
		assert_file_absent "${BK}$sh \$TMPDIR/x.sh: the script did not run" "$ROOT/ran"
	done
	bk_status "${BK}bash -e -o pipefail \$TMPDIR/x.sh: EACCES" "$EACCES" -- "$TRY" exec /bin/bash -e -o pipefail "$TMPDIR/x.sh"
	bk_status "${BK}sh -c 'cd \$TMPDIR && sh ./x.sh': refused" 126 -- sh -c 'cd "$TMPDIR" && sh ./x.sh'
	assert_rec "${BK}sh ./x.sh from the temp dir: resolved in the caller's view" \
		"event == 'alert' and action == 'deny' and script_path == '$TMPDIR/x.sh'"

	bk_status "${BK}python3 \$TMPDIR/x.py: EACCES" "$EACCES" -- "$TRY" exec "$PYTHON" -u "$TMPDIR/x.py"
	assert_rec "${BK}python3 \$TMPDIR/x.py: deny record naming the script" \
		"event == 'alert' and action == 'deny' and rule_id == 'exec.temp-program.tmpdir' and script_path == '$TMPDIR/x.py' and script and 'ran' in script$(bk_rec_backend)"
	assert_file_absent "${BK}python3 \$TMPDIR/x.py: the script did not run" "$ROOT/ran"

	# Inline code and scripts in the project stay allowed.
	bk_allowed "python3 -c with a temp-dir path as data" -- "$PYTHON" -c 'import sys' "$TMPDIR/x.py"

	bk_q --record -- sh ./build.sh
	assert_eq "${BK}sh ./build.sh in the project runs" 0 $?
	assert_file_content "${BK}sh ./build.sh: the script ran" "$ROOT/built" built
	assert_no_alert "${BK}sh ./build.sh: no alert"
	assert_rec "${BK}sh ./build.sh: the exec record names the script" \
		"event == 'exec' and script_path == '$ROOT/build.sh'"
	rm -f "$ROOT/built"
	bk_q --record -- sh -c 'bash ./build.sh'
	assert_eq "${BK}bash ./build.sh from a shell runs" 0 $?
	assert_rec "${BK}bash ./build.sh from a shell: the exec record names the script" \
		"event == 'exec' and script_path == '$ROOT/build.sh'"

	# --- npm is npm, whichever way it is run ------------------------------------
	if [ -n "$npm_cli" ]; then
		rm -rf "$ROOT/node_modules" "$ROOT/package.json" "$ROOT/package-lock.json"
		bk_q -- npm install --offline "$SANDBOX/pkg"
		assert_eq "${BK}npm install ./pkg: runs" 0 $?
		[ -e "$ROOT/node_modules/localpkg/package.json" ] || diag "$(tail -c 2000 "$ERR")"
		assert_file_present "${BK}npm install ./pkg: installed" "$ROOT/node_modules/localpkg/package.json"
		assert_rec "${BK}npm install ./pkg: exec.install.npm" \
			"event == 'alert' and action == 'alert' and rule_id == 'exec.install.npm'$(bk_rec_backend)"
		assert_eq "${BK}npm install ./pkg: one alert, not one per exec of its #! chain" 1 \
			"$(rec_count "event == 'alert' and rule_id == 'exec.install.npm'")"

		rm -rf "$ROOT/node_modules" "$ROOT/package.json" "$ROOT/package-lock.json"
		bk_q -- sh -c 'node "$1" install --offline "$2"' sh "$npm_cli" "$SANDBOX/pkg"
		assert_eq "${BK}node .../npm-cli.js install: runs" 0 $?
		if [ "$B" = auto ]; then
			assert_rec "${BK}node .../npm-cli.js install: exec.install.npm, the script named npm" \
				"event == 'alert' and rule_id == 'exec.install.npm' and program_name == 'npm' and script_path == '$npm_cli'"
		else
			# The shim reads no package.json (agenttrace(1), BACKENDS).
			assert_no_rec "${BK}node .../npm-cli.js install: NOT named npm by the shim (known limit)" \
				"event == 'alert' and rule_id == 'exec.install.npm'"
		fi
		bk_q -- sh -c 'node "$1" --version' sh "$npm_cli"
		assert_eq "${BK}node .../npm-cli.js --version: runs" 0 $?
		assert_no_rec "${BK}node .../npm-cli.js --version: no exec alert" \
			"event == 'alert' and kind == 'exec'"
	else
		skip "${BK}npm install raises exec.install.npm" "no npm and node"
	fi
done

# --- what a "#!" line runs (the supervisor, both engines) -----------------
# The kernel runs a script's interpreter with the line's argument and the
# script's name: a project script whose line names a temp program, or the
# loader or an interpreter given one, ran it with no record.  Each
# interpreter is judged as an exec of its own.  The shim does not follow
# "#!" lines (agenttrace(1), BACKENDS).
backend_use auto
sandbox_reset
cp "$TRY" "$TMPDIR/evil"
printf 'open("%s/ran", "w").write("ran")\n' "$ROOT" >"$TMPDIR/x.py"
mkdir -p "$ROOT/t"
printf '#!%s\n' "$TMPDIR/evil" >"$ROOT/t/direct"
printf '#!%s %s\n' "${loader:-/lib64/ld-linux-x86-64.so.2}" "$TMPDIR/evil" >"$ROOT/t/loader"
printf '#!%s %s\n' "$PYTHON" "$TMPDIR/x.py" >"$ROOT/t/interp"
printf '#!%s\n' "$ROOT/t/direct" >"$ROOT/t/nested"
printf '#!/bin/sh\necho "ok $1" >"%s/ok"\n' "$ROOT" >"$ROOT/t/ok.sh"
printf '#!/usr/bin/env sh\necho "ok $1" >"%s/ok"\n' "$ROOT" >"$ROOT/t/ok-env.sh"
printf '#!%s\n' "$ROOT/t/l2" >"$ROOT/t/l1"
printf '#!%s\n' "$ROOT/t/l3" >"$ROOT/t/l2"
printf '#!%s\n' "$ROOT/t/l4" >"$ROOT/t/l3"
printf '#!/bin/true\n' >"$ROOT/t/l4"
cp "$PYTHON" "$TMPDIR/py"
cat >"$ROOT/t/swap.py" <<'PY'
import os, subprocess, sys
script, n = sys.argv[1], int(sys.argv[2])
d = os.path.dirname(script)
good = b"#!/bin/sh" + b" " * 200 + b"\n"
bad = os.environ["TMPDIR"].encode() + b"/py"
bad = b"#!" + bad + b" " * (len(good) - 3 - len(bad)) + b"\n"
body = b'open("%s/marker" % __import__("os").environ["ROOT"], "a").write("x")\n'
for name, line in (("good", good), ("bad", bad)):
    with open(os.path.join(d, name), "wb") as f:
        f.write(line + body)
    os.chmod(os.path.join(d, name), 0o755)
for name in (script, os.path.join(d, "t.tmp")):
    try:
        os.unlink(name)
    except FileNotFoundError:
        pass
os.link(os.path.join(d, "good"), script)
pid = os.fork()
if pid == 0:
    t = os.path.join(d, "t.tmp")
    while True:
        for name in ("good", "bad"):
            try:
                os.unlink(t)
            except FileNotFoundError:
                pass
            os.link(os.path.join(d, name), t)
            os.rename(t, script)
for _ in range(n):
    try:
        subprocess.run([script], stderr=subprocess.DEVNULL)
    except OSError:
        pass
os.kill(pid, 9)
os.waitpid(pid, 0)
print("ran" if os.path.exists(os.path.join(os.environ["ROOT"], "marker")) else "clean")
PY
chmod +x "$ROOT"/t/*
line_deny() { # DESC TARGET [KEY VALUE]: the deny record says whose "#!" line
	local extra=
	[ $# -ge 4 ] && extra=" and r.get('$3') == '$4'"
	assert_rec "$E: $1: deny record" \
		"event == 'alert' and action == 'deny' and kind == 'exec' and rule_id == 'exec.temp-program.tmpdir' and target == '$2' and '\"#!\" line' in why$extra"
}
for E in notify ptrace; do
	rm -f "$ROOT/ran" "$ROOT/ok"
	at_q --engine "$E" -- "$TRY" exec "$ROOT/t/direct"
	assert_eq "$E: a script whose #! line is a temp program: EACCES" "$EACCES" $?
	line_deny "a script whose #! line is a temp program" "$TMPDIR/evil"
	# Its suggested layer admits the program the line runs, and so the
	# script.
	rec_field "event == 'alert' and action == 'deny'" suggest >"$SANDBOX/suggested.json"
	at_q --engine "$E" --policy "$SANDBOX/suggested.json" -- "$TRY" exec "$ROOT/t/direct"
	assert_no_rec "$E: a script whose #! line is a temp program: its suggest admits it" \
		"event == 'alert' and action == 'deny'"
	if [ -n "$loader" ]; then
		at_q --engine "$E" -- "$TRY" exec "$ROOT/t/loader"
		assert_eq "$E: #!ld.so TEMP-PROGRAM: EACCES" "$EACCES" $?
		line_deny "#!ld.so TEMP-PROGRAM" "$TMPDIR/evil" loader "$(readlink -f "$loader")"
	fi
	at_q --engine "$E" -- "$TRY" exec "$ROOT/t/interp"
	assert_eq "$E: #!python3 TEMP-SCRIPT: EACCES" "$EACCES" $?
	assert_rec "$E: #!python3 TEMP-SCRIPT: deny record naming the script" \
		"event == 'alert' and action == 'deny' and rule_id == 'exec.temp-program.tmpdir' and script_path == '$TMPDIR/x.py'"
	assert_file_absent "$E: #!python3 TEMP-SCRIPT: the script did not run" "$ROOT/ran"
	at_q --engine "$E" -- "$TRY" exec "$ROOT/t/nested"
	assert_eq "$E: a script whose #! line is such a script: EACCES" "$EACCES" $?
	line_deny "a script whose #! line is such a script" "$TMPDIR/evil"
	# Ordinary scripts: as natively, no record.
	at_q --engine "$E" -- "$ROOT/t/ok.sh" one
	assert_eq "$E: #!/bin/sh script: runs" 0 $?
	assert_file_present "$E: #!/bin/sh script: ran" "$ROOT/ok"
	assert_no_alert "$E: #!/bin/sh script: no record"
	at_q --engine "$E" -- "$ROOT/t/ok-env.sh" two
	assert_eq "$E: #!/usr/bin/env sh script: runs" 0 $?
	assert_no_alert "$E: #!/usr/bin/env sh script: no record"
	at_q --engine "$E" -- "$ROOT/t/l2"
	assert_eq "$E: three #! levels: run" 0 $?
	assert_no_alert "$E: three #! levels: no record"
	# A second process swaps the script between a benign line and one
	# that names a temp program (renames: the kernel runs no file open
	# for writing): the program never runs, whichever line the check
	# read (the exec event holds the kernel to the lines judged).
	rm -f "$ROOT/marker"
	at_q --engine "$E" -q -- "$PYTHON" "$ROOT/t/swap.py" "$ROOT/t/swapped" 300
	assert_eq "$E: a #! line swapped by a second process: the temp program never ran" \
		"clean" "$(cat "$OUT")"
	# More levels than the supervisor judges: refused, as the kernel
	# refuses more than it follows.
	at_q --engine "$E" -- "$TRY" exec "$ROOT/t/l1"
	assert_eq "$E: four #! levels: ELOOP" 40 $?
	assert_rec "$E: four #! levels: deny record" \
		"event == 'alert' and action == 'deny' and rule_id == 'exec.script-levels'"
done
