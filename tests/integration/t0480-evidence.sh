#!/bin/bash
# The script in the audit record and --evidence DIR (agenttrace(1),
# --evidence; doc/RECORDS.md): an exec of an interpreter given a script
# file carries its size and SHA-256; with --evidence a content-addressed
# copy of every script run and of every program the session wrote and then
# ran is kept in DIR and named by the exec record (recorded without
# --record too), bounded in size, out of the command's reach, and linked
# from the HTML report.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

REPORT_BIN=$top_builddir/agenttrace-report
ev=$SANDBOX/evidence
sha() { sha256sum "$1" | cut -c1-64; }

printf 'echo from-script\n' >"$ROOT/build.sh"
s_sha=$(sha "$ROOT/build.sh")

# Without --evidence: size and hash in the exec record, no copy.
at --record -- sh build.sh >"$OUT" 2>"$ERR"
assert_rec "--record: the exec of sh build.sh has the script's size and sha256" \
	"event == 'exec' and script_path == '$ROOT/build.sh' and script_size == 17 and script_sha256 == '$s_sha' and not has('evidence')"
assert_rec "no --evidence: none kept" "event == 'summary' and evidence_kept is None"

# --evidence DIR, without --record: scripts and written programs.
at --evidence "$ev" -- sh -c '
	sh build.sh
	printf "#!/bin/sh\necho dropped\n" > prog && chmod +x prog && ./prog
	cp "$1" mytool && ./mytool exit 0
	printf "#!/bin/sh\necho moved\n" > tmp.x && chmod +x tmp.x && mv tmp.x moved && ./moved
	"$1" exit 0
	{ echo x > "$2/planted"; } 2>/dev/null
	exit 0' sh "$TRY" "$ev" >"$OUT" 2>"$ERR"
assert_eq "--evidence: the command runs as before" 0 $?
assert_eq "--evidence: its output" "from-script dropped moved" "$(tr '\n' ' ' <"$OUT" | sed 's/ $//')"
assert_rec "--evidence: the script run is recorded without --record, its copy named" \
	"event == 'exec' and script_path == '$ROOT/build.sh' and script_sha256 == '$s_sha' and evidence == ['$ev/$s_sha']"
assert_eq "--evidence: the copy is the script, named by its sha256" "$s_sha" "$(sha "$ev/$s_sha")"
p_sha=$(sha "$ROOT/prog")
assert_rec "--evidence: a program the session wrote and ran is kept" \
	"event == 'exec' and exe == '$ROOT/prog' and program_written == True and program_sha256 == '$p_sha' and evidence == ['$ev/$p_sha']"
t_sha=$(sha "$ROOT/mytool")
assert_rec "--evidence: a binary copied in the session and run is kept" \
	"event == 'exec' and exe == '$ROOT/mytool' and program_written and program_sha256 == '$t_sha' and '$ev/$t_sha' in evidence"
cmp -s "$ROOT/mytool" "$ev/$t_sha"
assert_eq "--evidence: the binary's copy has its bytes" 0 $?
assert_rec "--evidence: a program renamed into place and run is kept" \
	"event == 'exec' and exe == '$ROOT/moved' and program_written"
assert_no_rec "--evidence: a program the session did not write is not" "event == 'exec' and exe == '$TRY'"
assert_rec "--evidence: the directory is out of the command's reach" "$(deny_expr write write.agenttrace-evidence "$ev/planted")"
assert_file_absent "--evidence: nothing planted" "$ev/planted"
assert_rec "--evidence: the summary counts the copies" \
	"event == 'summary' and evidence_kept['dir'] == '$ev' and evidence_kept['files'] == 4 and evidence_kept['skipped'] == 0"
assert_eq "--evidence: only the copies, private" "4 700" "$(ls "$ev" | wc -l) $(stat -c %a "$ev")"

# A denied exec: the script that was refused is kept as evidence too.
printf 'echo never\n' >"$TMPDIR/x.sh"
x_sha=$(sha "$TMPDIR/x.sh")
at --evidence "$ev" -- sh "$TMPDIR/x.sh" >"$OUT" 2>"$ERR"
assert_rec "--evidence: a refused script's alert names its copy" \
	"event == 'alert' and action == 'deny' and script_path == '$TMPDIR/x.sh' and script_sha256 == '$x_sha' and evidence == ['$ev/$x_sha']"

# Bounded: a script over 16 MiB is neither hashed nor copied.
{ printf 'echo big\nexit 0\n'; head -c $((17 * 1024 * 1024)) /dev/zero | tr '\0' '#'; } >"$ROOT/big.sh"
at --evidence "$ev" -- sh big.sh >"$OUT" 2>"$ERR"
assert_rec "a script over 16 MiB: size only" \
	"event == 'exec' and script_path == '$ROOT/big.sh' and script_size == $((17 * 1024 * 1024 + 16)) and not has('script_sha256') and not has('evidence')"
assert_rec "a script over 16 MiB: counted as skipped" "event == 'summary' and evidence_kept['skipped'] == 1"

# A FIFO in a script's place is not opened for reading by agenttrace: a
# writer already waiting would write into agenttrace's read end, the
# bytes would be lost when it closes it, and the interpreter would wait
# for ever.  (The pause only lets the writer be first in its open.)
rm -f "$ROOT/f.sh"
mkfifo "$ROOT/f.sh"
at --evidence "$ev" -- sh -c '(echo "echo fed" > f.sh &) ; sleep 0.5; sh f.sh' >"$OUT" 2>"$ERR"
assert_eq "a FIFO as the script: it runs" "fed" "$(cat "$OUT")"
assert_rec "a FIFO as the script: no size, no copy" "event == 'exec' and script_path == '$ROOT/f.sh' and not has('script_size') and not has('evidence')"

# The HTML report links each copy, relative to where the report is.
at --evidence "$ev" -- sh build.sh >/dev/null 2>&1
"$REPORT_BIN" -q "$LOG" --format html -o "$SANDBOX/report.html"
assert_match "HTML report: the copy is linked, relative to the report" \
	"<a href=\"evidence/$s_sha\"><code>${s_sha:0:12}</code></a>" "$(cat "$SANDBOX/report.html")"

# Usage.
: >"$SANDBOX/a-file"
at --evidence "$SANDBOX/a-file/x" -- true >"$OUT" 2>"$ERR"
assert_eq "--evidence under a file: 125" 125 $?
