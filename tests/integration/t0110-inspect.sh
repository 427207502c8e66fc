#!/bin/bash
# A denial's backtrace names the functions of the code
# that made the call (libunwind-ptrace, names from libelf), and exec records
# carry ELF facts (static or dynamic, interpreter, build-id, set-id bits).
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

helpers=$top_builddir/tests/progs-inspect
mkdir -p "$ROOT/bin"
for h in bt-helper bt-helper-static bt-helper-stripped; do
	[ -x "$helpers/$h" ] && cp "$helpers/$h" "$ROOT/bin/$h"
done
[ -x "$ROOT/bin/bt-helper" ] || skip_all "tests/progs-inspect/bt-helper not built"

# has_frames EXPR: the first denial's backtrace, as "sym@object" lines.
frames() {
	rec_field 'event == "alert" and action == "deny"' backtrace |
		"$PYTHON" -c 'import json,sys; [print("%s@%s" % (f["sym"], f["object"])) for f in json.load(sys.stdin)]'
}

# Under both backends (the shim unwinds in the process itself); a static
# program is out of the shim's sight.
for B in auto preload; do
	backend_use "$B"
	for h in bt-helper bt-helper-static; do
		[ -x "$ROOT/bin/$h" ] || { skip "${BK}$h: backtrace" "not built"; continue; }
		if [ "$B" = preload ] && [ $h = bt-helper-static ]; then
			rm -f "$HOME/.bashrc"
			bk_escapes "$h's open" 0 -- "$ROOT/bin/$h" open "$HOME/.bashrc"
			assert_file_present "${BK}$h: .bashrc WAS written" "$HOME/.bashrc"
			assert_rec "${BK}$h: listed as unseen" "$BYPASSABLE and '$ROOT/bin/$h' in unseen"
			rm -f "$HOME/.bashrc"
			continue
		fi
		bk_q -- "$ROOT/bin/$h" open "$HOME/.bashrc"
		assert_eq "${BK}$h: the denied open fails in the program" 1 $?
		assert_file_absent "${BK}$h: no .bashrc written" "$HOME/.bashrc"
		assert_rec "${BK}$h: the denial has a backtrace" 'event == "alert" and kind == "write" and isinstance(backtrace, list) and len(backtrace) >= 3'
		f=$(frames)
		for fn in inner_fn outer_fn main; do
			if grep -q "^$fn@$ROOT/bin/$h\$" <<<"$f"; then
				ok "${BK}$h: a frame names $fn in $h"
			else
				not_ok "${BK}$h: a frame names $fn in $h" "frames:" "$f"
			fi
		done
		# Frames run from the call outwards.
		order=$(grep -nE '^(inner_fn|outer_fn|main)@' <<<"$f" | cut -d@ -f1 | tr '\n' ' ')
		assert_match "${BK}$h: inner_fn, outer_fn, main in that order" "inner_fn.*outer_fn.*main" "$order"
		assert_rec "${BK}$h: every frame has pc and offset" 'event == "alert" and backtrace and all(x["pc"].startswith("0x") and x["offset"] >= 0 for x in backtrace)'
	done
done

if [ -x "$ROOT/bin/bt-helper-stripped" ]; then
	at_q -- "$ROOT/bin/bt-helper-stripped" open "$HOME/.bashrc"
	assert_rec "stripped program: still a backtrace with its object" \
		"event == 'alert' and any(x['object'] == '$ROOT/bin/bt-helper-stripped' for x in backtrace)"
fi

# A bypass attempt gets a backtrace too.
if [ -x "$PROGS/try-syscall" ]; then
	cp "$PROGS/try-syscall" "$ROOT/bin/try-syscall"
	at_q -- "$ROOT/bin/try-syscall" io_uring_setup
	assert_rec "a bypass denial has a backtrace" 'kind == "syscall" and isinstance(backtrace, list) and len(backtrace) >= 1'
fi

# ELF facts on exec records (--record) and exec alerts.
at_q --record -- "$ROOT/bin/bt-helper" write
assert_rec "exec record of a dynamic program: elf.static false, interp set" \
	"event == 'exec' and exe == '$ROOT/bin/bt-helper' and elf['format'] == 'elf' and elf['static'] == False and pre(elf['interp'], '/')"
assert_rec "exec record carries the build-id" \
	"event == 'exec' and exe == '$ROOT/bin/bt-helper' and isinstance(elf.get('build_id'), str) and len(elf['build_id']) >= 32"
if [ -x "$ROOT/bin/bt-helper-static" ]; then
	at_q --record -- "$ROOT/bin/bt-helper-static" write
	assert_rec "exec record of a static program says static" \
		"event == 'exec' and exe == '$ROOT/bin/bt-helper-static' and elf['static'] == True and not elf.get('interp')"
else
	skip "exec record of a static program says static" "no static helper"
fi
printf '#!/bin/sh\nexit 0\n' >"$ROOT/bin/script.sh"
chmod +x "$ROOT/bin/script.sh"
at_q --record -- "$ROOT/bin/script.sh"
assert_rec "exec record of a script: its #! line" \
	"event == 'exec' and elf is not None and elf['format'] in ('script', 'elf')"
cp "$ROOT/bin/bt-helper" "$ROOT/bin/suid-helper"
chmod u+s "$ROOT/bin/suid-helper"
at_q --record -- "$ROOT/bin/suid-helper" write
assert_rec "exec record of a set-uid program says setuid" \
	"event == 'exec' and exe == '$ROOT/bin/suid-helper' and elf['setuid'] == True"
mkdir -p "$ROOT/bin/sudo-dir"
cp "$ROOT/bin/bt-helper" "$ROOT/bin/sudo-dir/sudo"
at_q -- "$ROOT/bin/sudo-dir/sudo" write
assert_rec "an exec alert carries the ELF facts of its target" \
	"event == 'alert' and kind == 'exec' and elf['format'] == 'elf' and elf['static'] == False"
