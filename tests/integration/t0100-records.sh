#!/bin/bash
# Records (doc/RECORDS.md) and the options around them: JSON lines with stable keys,
# "v":1 first, increasing seq, a summary last, bytes escaped not dropped;
# --record, --context, --mode audit, --fail-on-alert, --explain; the log is
# out of the command's reach.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

# validate LOG: prints "ok" or the first problem found.  Under --backend
# preload also: every alert but a limit says backend "preload", and the
# summary says the run was bypassable.
validate() {
	"$PYTHON" - "$1" "$B" "$top_srcdir/doc/RECORDS.md" <<'PY'
import json, re, sys
preload = sys.argv[2] == "preload"
documented = set(re.findall(r"`([a-z_0-9]+)`", open(sys.argv[3]).read()))
lines = open(sys.argv[1], "rb").read().split(b"\n")
if lines and lines[-1] == b"":
    lines.pop()
if not lines:
    print("empty log"); sys.exit()
recs = []
for n, raw in enumerate(lines, 1):
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        print("line %d is not UTF-8: %s" % (n, e)); sys.exit()
    try:
        obj = json.loads(text, object_pairs_hook=lambda kv: kv)
    except ValueError as e:
        print("line %d is not JSON: %s" % (n, e)); sys.exit()
    if not isinstance(obj, list) or not obj:
        print("line %d is not an object" % n); sys.exit()
    if obj[0] != ("v", 1):
        print('line %d does not start with "v": 1 but %r' % (n, obj[0])); sys.exit()
    keys = [k for k, _ in obj]
    if len(keys) != len(set(keys)):
        print("line %d repeats a key" % n); sys.exit()
    recs.append(dict(obj))
every = ["v", "time", "session", "seq", "event", "pid", "ppid", "exe", "argv", "cwd"]
alert = ["action", "mode", "kind", "syscall", "rule", "why", "backend"]
timefmt = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
for n, r in enumerate(recs, 1):
    if r.get("event") == "summary":
        continue
    missing = [k for k in every if k not in r]
    if r.get("event") == "alert":
        missing += [k for k in alert if k not in r]
        # "suggest": the policy layer that would admit a denied event;
        # none for agenttrace's own protections, which nothing admits.
        if r.get("action") == "deny" and r.get("kind") in ("exec", "write", "read", "net") and \
                "suggest" not in r and not str(r.get("rule")).startswith("write.agenttrace-"):
            missing.append("suggest")
    if missing:
        print("line %d (%s) lacks %s" % (n, r.get("event"), ",".join(missing))); sys.exit()
    if not timefmt.match(str(r["time"])):
        print("line %d: time %r is not RFC 3339 UTC with milliseconds" % (n, r["time"])); sys.exit()
    if not isinstance(r["argv"], list):
        print("line %d: argv is not a list" % n); sys.exit()
    if r.get("event") == "alert" and r.get("action") == "deny" and r.get("kind") != "limit" and not r.get("errno"):
        print("line %d: a denial without errno" % n); sys.exit()
    if preload and r.get("event") == "alert" and r.get("kind") != "limit" and r.get("backend") != "preload":
        print("line %d: backend %r" % (n, r.get("backend"))); sys.exit()
# Every key agenttrace writes is in the schema page, events and kinds too.
for n, r in enumerate(recs, 1):
    for k in list(r) + [r.get("event"), r.get("kind")] + [k for k, _ in (r.get("elf") or [])]:
        if k is not None and k not in documented:
            print("line %d: %r is not in doc/RECORDS.md" % (n, k)); sys.exit()
seqs = [r.get("seq") for r in recs]
if any(not isinstance(s, int) for s in seqs) or any(b <= a for a, b in zip(seqs, seqs[1:])):
    print("seq is not increasing: %r" % seqs); sys.exit()
if len({r.get("session") for r in recs}) != 1:
    print("more than one session id in one run"); sys.exit()
last = recs[-1]
if last.get("event") != "summary":
    print("the last record is not the summary but %r" % last.get("event")); sys.exit()
for k in ("exit_code", "denials", "alerts"):
    if k not in last:
        print("the summary lacks %s" % k); sys.exit()
if preload and (last.get("backend") != "preload" or last.get("bypassable") is not True):
    print("the summary does not say preload, bypassable"); sys.exit()
if sum(1 for r in recs if r.get("event") == "summary") != 1:
    print("more than one summary"); sys.exit()
print("ok")
PY
}

bashrc=$HOME/.bashrc
cp "$TRY" "$ROOT/bin/sudo"

printf '#!/bin/sh\nexit 0\n' >"$ROOT/bin/pip"
chmod 0755 "$ROOT/bin/pip"

# Every case under both backends.
for B in auto preload; do
	backend_use "$B"
	if [ "$B" = auto ]; then SUMMARY="event == 'summary'"; else SUMMARY=$BYPASSABLE; fi
	rm -f "$bashrc"

	# A run with a denial, an alert and a clean exit.
	bk --context step-42 -- sh -c '"$0" open-write "$HOME/.bashrc"; "$1" install x; exit 0' "$TRY" "$ROOT/bin/pip" >"$OUT" 2>"$ERR"
	assert_eq "${BK}a run with a denial and an alert exits 0" 0 $?
	assert_eq "${BK}records are valid JSON lines with the doc/RECORDS.md keys, v:1 first, seq increasing, summary last" ok "$(validate "$LOG")"
	assert_rec "${BK}the denial record" "$(deny_expr write write. "$bashrc") and errno == 'EACCES' and backend == '${B/auto/ptrace}' and mode == 'enforce'"
	assert_rec "${BK}the denial record has why and suggest" "event == 'alert' and action == 'deny' and why and suggest"
	assert_rec "${BK}the alert record (pip install)" "event == 'alert' and action == 'alert' and kind == 'exec'$(bk_rec_backend)"
	assert_rec "${BK}the summary counts and exit code" "$SUMMARY and exit_code == 0 and denials == 1 and alerts == 1"
	assert_no_rec "${BK}--context is copied into every record" "event != 'summary' and context != 'step-42'"
	assert_rec "${BK}the record names the process" "event == 'alert' and kind == 'write' and pre(exe, '$ROOT/bin/try-syscall') and argv[0:2] == ['$TRY', 'open-write'] and cwd == '$ROOT'"

	AGENTTRACE_CONTEXT=from-env bk -- "$TRY" open-write "$bashrc" >"$OUT" 2>"$ERR"
	assert_rec "${BK}AGENTTRACE_CONTEXT is the default context" "event == 'alert' and context == 'from-env'"

	# Non-UTF-8 bytes in a path: escaped, never dropped.
	bad=$HOME/.bad$'\xff\xfe'name
	bk -- "$TRY" open-write "$bad" >"$OUT" 2>"$ERR"
	assert_eq "${BK}non-UTF-8 path: denied" "$EACCES" $?
	assert_eq "${BK}non-UTF-8 path: the log is still valid" ok "$(validate "$LOG")"
	assert_rec "${BK}non-UTF-8 path: bytes escaped, not dropped" \
		"event == 'alert' and pre(path, '$HOME/.bad') and path.endswith('name') and len(path) > len('$HOME/.badname')"

	# --record: every intercepted event, exec included.
	bk --record -- sh -c '/bin/true; "$0" open-write "$ROOT/rec.txt"' "$TRY" >"$OUT" 2>"$ERR"
	assert_eq "${BK}--record: exit 0" 0 $?
	assert_eq "${BK}--record: log valid" ok "$(validate "$LOG")"
	assert_rec "${BK}--record: exec event of /bin/true" "event == 'exec' and ('/bin/true' in (path, target, exe) or '/usr/bin/true' in (path, target, exe))"
	assert_rec "${BK}--record: exec event of the helper" "event == 'exec' and '$TRY' in (path, target, exe)"
	assert_no_alert "${BK}--record: no alert for allowed events"

	# Without --log: one human line per alert on stderr, and a summary line.
	(cd "$ROOT" && "$AGENTTRACE" ${BK:+--backend "$B"} -- "$TRY" open-write "$bashrc") >"$OUT" 2>"$ERR"
	assert_eq "${BK}without --log: denied write still EACCES" "$EACCES" $?
	assert_match "${BK}without --log: a human alert line names the path" "\.bashrc" "$(cat "$ERR")"
	if grep -q '^{' "$ERR"; then not_ok "${BK}without --log: no JSON on stderr" "$(cat "$ERR")"; else ok "${BK}without --log: no JSON on stderr"; fi
	assert_eq "${BK}without --log: the command's stdout is untouched" "" "$(cat "$OUT")"

	# The log cannot be written by the command, even when it lies under ROOT.
	rlog=$ROOT/run.jsonl
	rm -f "$rlog"
	(cd "$ROOT" && "$AGENTTRACE" ${BK:+--backend "$B"} --log "$rlog" -- sh -c '"$0" open-write "$1"; st=$?; "$0" truncate "$1"; "$0" unlink "$1"; exit $st' "$TRY" "$rlog") >"$OUT" 2>"$ERR"
	assert_eq "${BK}the log under ROOT: the command's write is denied" "$EACCES" $?
	assert_eq "${BK}the log under ROOT: still valid after write, truncate and unlink attempts" ok "$(validate "$rlog")"
	REC_LOG=$rlog assert_rec "${BK}the log under ROOT: the attempts are recorded" "$(deny_expr write "" "$rlog")"

	# --mode audit: the write happens, the record says "alert".
	bk --mode audit -- "$TRY" open-write "$bashrc" >"$OUT" 2>"$ERR"
	assert_eq "${BK}--mode audit: the write succeeds" 0 $?
	assert_file_present "${BK}--mode audit: the file was written" "$bashrc"
	assert_rec "${BK}--mode audit: record action alert, mode audit" \
		"event == 'alert' and action == 'alert' and mode == 'audit' and kind == 'write' and path == '$bashrc'$(bk_rec_backend)"
	assert_no_rec "${BK}--mode audit: no deny record" "event == 'alert' and action == 'deny'"
	rm -f "$bashrc"

	# --fail-on-alert (agenttrace(1), EXIT STATUS): 113 after a denial even
	# when the command exits 0; alerts (a package install) fail the run only
	# when the LIST names them.
	bk --fail-on-alert -- sh -c '"$0" open-write "$HOME/.bashrc"; exit 0' "$TRY" >"$OUT" 2>"$ERR"
	assert_eq "${BK}--fail-on-alert after a denial: 113" 113 $?
	bk --fail-on-alert -- "$TRY" open-write "$ROOT/fine.txt" >"$OUT" 2>"$ERR"
	assert_eq "${BK}--fail-on-alert without any alert: 0" 0 $?
	bk --fail-on-alert -- sh -c '"$0" open-write "$HOME/.bashrc"; exit 5' "$TRY" >"$OUT" 2>"$ERR"
	assert_eq "${BK}--fail-on-alert keeps a non-zero command status" 5 $?
	bk --fail-on-alert -- "$ROOT/bin/pip" install requests >"$OUT" 2>"$ERR"
	assert_eq "${BK}--fail-on-alert after an install alert only: 0" 0 $?
	assert_rec "${BK}--fail-on-alert: the install alert is still recorded" \
		"event == 'alert' and action == 'alert' and rule_id == 'exec.install.pip'"
	bk --fail-on-alert=deny,exec.install.* -- "$ROOT/bin/pip" install requests >"$OUT" 2>"$ERR"
	assert_eq "${BK}--fail-on-alert=deny,exec.install.*: an install alert fails the run (113)" 113 $?
	bk --fail-on-alert=alert -- "$ROOT/bin/pip" install requests >"$OUT" 2>"$ERR"
	assert_eq "${BK}--fail-on-alert=alert: any alert fails the run (113)" 113 $?
	bk --fail-on-alert=exec.install.* -- sh -c '"$0" open-write "$HOME/.bashrc"; exit 0' "$TRY" >"$OUT" 2>"$ERR"
	assert_eq "${BK}--fail-on-alert=exec.install.*: a denial alone does not fail the run" 0 $?
	bk --fail-on-alert=write.home.* -- sh -c '"$0" open-write "$HOME/.bashrc"; exit 0' "$TRY" >"$OUT" 2>"$ERR"
	assert_eq "${BK}--fail-on-alert=write.home.*: a denial of that rule fails the run" 113 $?
	bk --fail-on-alert=deny,, -- true >"$OUT" 2>"$ERR"
	assert_eq "${BK}--fail-on-alert with an empty selector: 125" 125 $?
	bk --fail-on-alert='exec install' -- true >"$OUT" 2>"$ERR"
	assert_eq "${BK}--fail-on-alert with a bad selector: 125" 125 $?
	assert_match "${BK}--fail-on-alert with a bad selector: says which" "exec install" "$(cat "$ERR")"

	# --explain: the effective policy as JSON, exit 0.
	(cd "$ROOT" && "$AGENTTRACE" ${BK:+--backend "$B"} --explain) >"$OUT" 2>"$ERR"
	assert_eq "${BK}--explain exits 0" 0 $?
	check "${BK}--explain prints JSON" "$PYTHON" -c 'import json, sys; json.load(open(sys.argv[1]))' "$OUT"
	assert_match "${BK}--explain expands \${ROOT}" "$ROOT" "$(cat "$OUT")"
	(cd "$ROOT" && "$AGENTTRACE" ${BK:+--backend "$B"} --explain --allow-write "$HOME/extra/**") >"$OUT" 2>"$ERR"
	assert_match "${BK}--explain shows a command-line rule" "$HOME/extra" "$(cat "$OUT")"
done
