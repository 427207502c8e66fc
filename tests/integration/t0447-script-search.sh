#!/bin/bash
# Interpreters that look for their script elsewhere than by its name from
# the working directory: bash searches PATH for a script it finds no file
# of, perl -S and ruby -S search PATH (ruby RUBYPATH first), ruby -C DIR
# and -xDIR change to DIR first.  The check judges the file they will
# run, found as they find it in the exec's own environment: a temp
# script found so is refused (exec.temp-program), as it is by its path.
# Before, the check judged the name from the working directory, where
# nothing was, and let each of these run a temp script with no record.
# A thread flipping the exec's PATH between the check and the kernel's
# copy of it never runs the other script: the new program's environment
# is compared at the exec event with the one judged (race.exec).
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

unset AGENTTRACE_TEST_ENGINE
M=$ROOT/marker
T=$TMPDIR/found
mkdir -p "$T" "$ROOT/bin" "$ROOT/sub"
for d in "$T" "$ROOT/bin" "$ROOT/sub"; do
	printf '#!/bin/sh\necho "%s" >> %s\n' "$d" "$M" > "$d/x.sh"
	printf 'open(F, ">>", "%s"); print F "%s\\n";\n' "$M" "$d" > "$d/x.pl"
	printf '#!/usr/bin/ruby\nFile.open("%s", "a") { |f| f.puts "%s" }\n' "$M" "$d" > "$d/x.rb"
	chmod +x "$d/x.sh" "$d/x.pl" "$d/x.rb"
done
have ruby && RUBY=1

engines="ptrace"
at_q --engine notify -- true && engines="ptrace notify"

# at_e OPTIONS -- COMMAND: at_q under engine E (the preload shim for
# "preload", which finds the script the same way).
at_e() {
	if [ "$E" = preload ]; then at_q --backend preload "$@"; else at_q --engine "$E" "$@"; fi
}

# ran DESC DIR -- COMMAND...: the command ran the DIR's script.
ran() {
	local desc=$1 dir=$2
	shift 3
	rm -f "$M"
	at_e -- "$@"
	assert_eq "$desc: runs" 0 $? || diag "$(cat "$ERR")"
	assert_eq "$desc: ... the script found" "$dir" "$(cat "$M" 2>/dev/null)"
	assert_no_alert "$desc: ... no record"
}

# refused DESC -- COMMAND...: the temp script did not run, with a record.
refused() {
	local desc=$1
	shift 2
	rm -f "$M"
	at_e -- "$@"
	assert_ne "$desc: refused" 0 $?
	assert_file_absent "$desc: ... the temp script did not run" "$M"
	assert_rec "$desc: ... a record naming the temp script" \
		"event == 'alert' and action == 'deny' and pre(rule_id, 'exec.temp-program') and pre(script_path, '$T/')"
}

for E in $engines preload; do
	refused "$E: bash x.sh found in a temp dir of PATH" -- env PATH="$T:$PATH" bash x.sh
	refused "$E: perl -S" -- env PATH="$T:$PATH" perl -S x.pl
	ran "$E: bash x.sh found in the project's PATH" "$ROOT/bin" -- \
		env PATH="$ROOT/bin:$PATH" bash x.sh
	ran "$E: perl -S in the project's PATH" "$ROOT/bin" -- env PATH="$ROOT/bin:$PATH" perl -S x.pl
	ran "$E: bash x.sh in the working directory, a temp dir in PATH" "$ROOT/sub" -- \
		sh -c 'cd sub && exec env PATH="$1:$PATH" bash x.sh' sh "$T"
	# An attacker helper's spellings: bash searches in POSIX mode too
	# and as sh; zsh's --emulate takes a value; perl's -0 and -l take
	# digits and go on; perl -S takes the first file it may run.
	refused "$E: bash --posix" -- env PATH="$T:$PATH" bash --posix x.sh
	refused "$E: bash as sh" -- env PATH="$T:$PATH" bash -c 'exec -a sh bash x.sh'
	if have zsh; then
		refused "$E: zsh --emulate sh" -- env PATH="$T:$PATH" zsh --emulate sh x.sh
		refused "$E: zsh -o pathscript" -- env PATH="$T:$PATH" zsh -o pathscript x.sh
	fi
	refused "$E: perl -0777S" -- env PATH="$T:$PATH" perl -0777S x.pl
	refused "$E: perl -l0S" -- env PATH="$T:$PATH" perl -l0S x.pl
	mkdir -p "$ROOT/decoy" && printf 'print "decoy\n";\n' > "$ROOT/decoy/x.pl" &&
		chmod 644 "$ROOT/decoy/x.pl"
	refused "$E: perl -S past a file it may not run" -- env PATH="$ROOT/decoy:$T:$PATH" perl -S x.pl
	mkdir -p "$T/nox" && cp "$ROOT/decoy/x.pl" "$T/nox/x.pl"
	ran "$E: perl -S past a temp file it may not run" "$ROOT/bin" -- \
		env PATH="$T/nox:$ROOT/bin:$PATH" perl -S x.pl
	if [ -n "${RUBY:-}" ]; then
		refused "$E: ruby -Eutf-8 -S" -- env PATH="$T:$PATH" ruby -Eutf-8 -S x.rb
		refused "$E: ruby --encoding utf-8 -S" -- env PATH="$T:$PATH" ruby --encoding utf-8 -S x.rb
		refused "$E: ruby -v -S" -- env PATH="$T:$PATH" ruby -v -S x.rb
		refused "$E: ruby -C / -S" -- env PATH="$T:$PATH" ruby -C / -S x.rb
		refused "$E: ruby -S, ~ in PATH" -- env HOME="$T" PATH="~:$PATH" ruby -S x.rb
		mkdir -p "$T/sub" && cp "$T/x.rb" "$T/sub/x.rb"
		refused "$E: ruby -S of a name with a /" -- env PATH="$T:$PATH" ruby -S sub/x.rb
		refused "$E: ruby -S" -- env PATH="$T:$PATH" ruby -S x.rb
		refused "$E: ruby -S, RUBYPATH" -- env RUBYPATH="$T" ruby -S x.rb
		refused "$E: ruby -C DIR" -- ruby -C "$T" x.rb
		refused "$E: ruby -CDIR" -- ruby -C"$T" x.rb
		refused "$E: ruby -xDIR" -- ruby -x"$T" x.rb
		ran "$E: ruby -C DIR in the project" "$ROOT/sub" -- ruby -C "$ROOT/sub" x.rb
		ran "$E: ruby -S in the project's PATH" "$ROOT/bin" -- env PATH="$ROOT/bin:$PATH" ruby -S x.rb
	else
		skip "$E: ruby's searches" "no ruby"
	fi
done

# The race: a thread flips the exec's one environment entry between
# PATH=GOOD and PATH=BAD (directories of one length: the shorter one is
# padded with '/'), where GOOD/NAME, in the project, exits 0 and BAD/NAME,
# in a temp dir, exits 42.  Judged with BAD the exec is refused; judged
# with GOOD and copied by the kernel with BAD, the program must not run.
GOOD=$ROOT/g1
BAD=$T
mkdir -p "$GOOD"
printf '#!/bin/sh\nexit 0\n' > "$GOOD/race.sh"
printf '#!/bin/sh\nexit 42\n' > "$BAD/race.sh"
chmod +x "$GOOD/race.sh" "$BAD/race.sh"
while [ ${#GOOD} -lt ${#BAD} ]; do GOOD=$GOOD/; done
while [ ${#BAD} -lt ${#GOOD} ]; do BAD=$BAD/; done
N=${RACE_N:-300}
# A copy in the project: the build tree may lie in a temp dir.
RACE=$ROOT/bin/race-exec
cp "$PROGS/race-exec" "$RACE" || exit 99
"$RACE" "$GOOD" "$BAD" 50 env race.sh >"$OUT" 2>&1
diag "native: $(cat "$OUT")"
for E in $engines; do
	at --engine "$E" -- "$RACE" "$GOOD" "$BAD" "$N" env race.sh >"$OUT" 2>"$ERR"
	assert_eq "$E: the race helper ran" 0 $?
	diag "$E: $(cat "$OUT")"
	assert_match "$E: the temp script never ran" " bad=0 " "$(cat "$OUT")"
	good=$(sed -n 's/.* good=\([0-9]*\).*/\1/p' "$OUT")
	if [ "${good:-0}" -gt 0 ]; then
		ok "$E: the judged script ran ($good times)"
	else
		not_ok "$E: the judged script ran" "$(cat "$OUT")"
	fi
	n=$(rec_count "event == 'alert' and rule_id == 'race.exec'")
	if [ "${n:-0}" -gt 0 ]; then
		ok "$E: a flipped environment was killed at the exec ($n race.exec records)"
	else
		skip "$E: race.exec records" "the race was never won in $N tries"
	fi
done
