#!/bin/bash
# The quick start's demo (demo/run-demo, as `./quickstart demo` runs it)
# says what really happened at every step, checked against its own log:
#   [refused]  names rules, and the log has those denials for that step;
#   [ran]      the step had no denial (its alerts, if any, are named);
#   [failed]   no denial, and the line says why (exit status, error).
# The denials of the log, in order, are exactly the refused lines' rules,
# in order: no denial is left unclaimed, so no [ran] or [failed] line hides
# one.  Run twice: on this host's programs, and with stand-ins first in
# PATH (a sudo that would succeed: refused; a cc that fails: failed).
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

# The demo connects to 192.0.2.1 (denied before any packet) and names an
# .invalid host: only inside a network namespace of its own (run-demo
# makes one where the kernel lets it).
if ! have unshare || ! unshare -n true 2>/dev/null; then
	skip_all "no network namespace (unshare -n)"
fi

steps=$(grep -c '^try ' "$top_srcdir/demo/agent-session.sh")

# demo_check OUT LOG: one "ok|DESC" or "not ok|DESC|DIAG" line per claim.
demo_check_py='
import json, re, sys
out_path, log_path, want_steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
def say(good, desc, diag=""):
    desc, diag = desc.replace("|", "/"), diag.replace("|", "/").replace("\n", " ")
    print("ok|%s" % desc if good else "not ok|%s|%s" % (desc, diag))
try:
    recs = [json.loads(l) for l in open(log_path, "rb") if l.strip()]
except (OSError, ValueError) as e:
    say(False, "the log of the demo", "%s: %s" % (log_path, e))
    sys.exit(0)
alerts = [r for r in recs if r.get("event") == "alert"]
denials = [r["rule"] for r in alerts if r.get("action") == "deny"]
alerted = {r["rule"] for r in alerts if r.get("action") == "alert"}
step_re = re.compile(r"^  \[(ran|refused|failed)\] +(.*)$")
lines = [l.rstrip("\n") for l in open(out_path, encoding="utf-8", errors="replace")]
steps = [(m.group(1), m.group(2)) for m in map(step_re.match, lines) if m]
say(len(steps) == want_steps, "one verdict line per step (%d)" % want_steps,
    "got %d: %r" % (len(steps), steps))
def rules_of(text, key):
    # "-- by agenttrace: a, b; alerted: c" -> the rules after KEY.
    m = re.search(re.escape(key) + r" ([^;]*)", text)
    return [x.strip() for x in m.group(1).split(",")] if m else []
pos = 0
for verdict, text in steps:
    what = text.split(" -- ")[0]
    if verdict == "refused":
        rules = rules_of(text, "by agenttrace:")
        seg = []
        while pos < len(denials) and denials[pos] in rules:
            if denials[pos] not in seg:
                seg.append(denials[pos])
            pos += 1
        say(rules and seg == rules, "[refused] %s: the log has its denials, rules %s" % (what, rules),
            "the next denials of the log: %s" % denials[pos:pos + 3])
    for rule in rules_of(text, "alerted:"):
        say(rule in alerted, "%s: alert record %s" % (what, rule))
    if verdict == "failed":
        say(re.search(r"-- not refused by agenttrace: exit [1-9][0-9]*: \S", text) is not None,
            "[failed] %s: says why" % what, text)
say(pos == len(denials), "every denial of the log is on a [refused] line, in order",
    "unclaimed: %s" % denials[pos:])
summary = [r for r in recs if r.get("event") == "summary"]
say(len(summary) == 1 and summary[0].get("denials") == len(denials),
    "the summary counts those denials", "%r" % summary[-1:])
'

# run_demo NAME [PATH]: runs the demo (its dir: $SANDBOX/NAME), checks
# every line against the log; leaves the step lines in $DEMO_OUT.
run_demo() {
	local name=$1 dir=$SANDBOX/$1 st result desc diag
	shift
	DEMO_OUT=$SANDBOX/$name.out
	(
		[ $# -gt 0 ] && export PATH=$1
		exec timeout -k 5 "$AT_TIMEOUT" env AGENTTRACE_DEMO_DIR="$dir" \
			"$top_srcdir/demo/run-demo"
	) >"$DEMO_OUT" 2>"$SANDBOX/$name.err"
	st=$?
	assert_eq "$name: run-demo exits 0" 0 "$st"
	[ "$st" = 0 ] || diag "$(tail -n 20 "$SANDBOX/$name.err")"
	while IFS='|' read -r result desc diag; do
		if [ "$result" = ok ]; then
			ok "$name: $desc"
		else
			not_ok "$name: $desc" "$diag"
		fi
	done < <("$PYTHON" -c "$demo_check_py" "$DEMO_OUT" "$dir/log.jsonl" "$steps" 2>&1 ||
		echo "not ok|checking the lines against the log|the checker failed")
	assert_file_content "$name: ~/.bashrc unchanged" "$dir/home/.bashrc" "# demo bashrc"
}

# step_line NAME: the verdict line of the step called NAME in $DEMO_OUT.
step_line() {
	grep -E "^  \[(ran|refused|failed)\] +$1( -- |$)" "$DEMO_OUT" | head -n 1
}

# --- on this host's programs -------------------------------------------
run_demo host
for what in "write src/hello.c" "compile it" "run it"; do
	if [ "$what" != "write src/hello.c" ] && ! have cc; then
		skip "host: $what ran" "no cc"
		continue
	fi
	assert_match "host: $what ran" '^  \[ran\] ' "$(step_line "$what")"
done
assert_match "host: pip install ran, alerted" '^  \[ran\] .* -- alerted: exec\.install\.pip$' \
	"$(step_line 'pip install requests \(a stand-in pip\)')"
assert_match "host: ~/.bashrc refused" 'by agenttrace: write\.home\.' "$(step_line 'append to ~/\.bashrc')"
assert_match "host: git hook refused" 'by agenttrace: write\.git-hooks' "$(step_line 'plant a git hook')"
assert_match "host: CI definitions refused" 'by agenttrace: write\.ci-definitions\.' "$(step_line 'edit CI definitions')"
assert_match "host: SSH key refused" 'by agenttrace: read\.ssh' "$(step_line 'read ~/\.ssh/id_ed25519')"
assert_match "host: connect refused" 'by agenttrace: net\.' "$(step_line 'connect to 192\.0\.2\.1:443')"
assert_match "host: curl | sh refused" 'by agenttrace: exec\.download-and-run' "$(step_line 'download and run')"
# git writes its own configuration under the default policy, which
# refuses one that runs a program.
if have git; then
	assert_match "host: git init, add and commit ran" '^  \[ran\] ' "$(step_line 'git init, add and commit')"
	assert_match "host: a git config that runs a program refused" 'by agenttrace: write\.git-config$' \
		"$(step_line 'make git run a program')"
else
	skip "host: git init, add and commit ran" "no git"
	skip "host: a git config that runs a program refused" "no git"
fi
if have sudo; then
	assert_match "host: sudo refused" 'by agenttrace: exec\.privilege' "$(step_line 'become root')"
else
	assert_match "host: no sudo here: failed, not refused" \
		'^  \[failed\] +become root -- not refused by agenttrace: exit 127: .*sudo.*not found' \
		"$(step_line 'become root')"
fi

# --- stand-ins: a sudo that would succeed, a cc that fails ----------------
stubs=$SANDBOX/stubs
mkdir -p "$stubs"
printf '#!/bin/sh\nexit 0\n' >"$stubs/sudo"
printf '#!/bin/sh\necho "cc: a stand-in that cannot compile" >&2\nexit 1\n' >"$stubs/cc"
chmod +x "$stubs/sudo" "$stubs/cc"
run_demo stand-ins "$stubs:$PATH"
assert_match "stand-ins: a sudo that would succeed is refused" \
	'^  \[refused\] +become root -- by agenttrace: exec\.privilege' "$(step_line 'become root')"
assert_match "stand-ins: a failing cc: failed, with its error" \
	'^  \[failed\] +compile it -- not refused by agenttrace: exit 1: cc: a stand-in that cannot compile$' \
	"$(step_line 'compile it')"
assert_match "stand-ins: nothing to run: failed, not found" \
	'^  \[failed\] +run it -- not refused by agenttrace: exit 127: .*not found' "$(step_line 'run it')"
