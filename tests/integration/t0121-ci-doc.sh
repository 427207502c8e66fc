#!/bin/bash
# doc/CI.md as written: the GitHub job's `run:` steps and the GitLab job's
# `script` and `after_script`, run in order in a checkout of the test's
# with the runners' environment variables set (the install steps and the
# actions are the runner's business, not agenttrace's).  Each step's
# effect is checked: annotations with file=, the step summary with the
# denials and the egress, the step outputs, the report files.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

REPORT_BIN=$top_builddir/agenttrace-report
[ -x "$REPORT_BIN" ] || skip_all "agenttrace-report not built"

# The programs as an installed package puts them on PATH.
mkdir -p "$SANDBOX/path"
ln -s "$AGENTTRACE" "$SANDBOX/path/agenttrace"
ln -s "$(cd "$(dirname "$REPORT_BIN")" && pwd)/agenttrace-report" "$SANDBOX/path/agenttrace-report"

# steps KIND: the commands of doc/CI.md's job of KIND (github, gitlab),
# one NUL-terminated shell text each, with the `${{ ... }}` of a step's
# env: as VAR=${{ steps.ID.outputs.NAME }} lines before its command.
steps() {
	"$PYTHON" - "$top_srcdir/doc/CI.md" "$1" <<'PY'
import re, sys
doc = open(sys.argv[1]).read()
blocks = re.findall(r"```yaml\n(.*?)```", doc, re.S)
kind = sys.argv[2]
block = [b for b in blocks if ("runs-on:" in b) == (kind == "github")][0]
lines = block.split("\n")
out = []
def take(i, indent):
    body = []
    while i < len(lines) and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > indent):
        body.append(lines[i][indent + 2:] if lines[i].strip() else "")
        i += 1
    return i, "\n".join(body).strip()
if kind == "github":
    i, step = 0, None
    while i < len(lines):
        l = lines[i]
        m = re.match(r"^(\s*)- name: (.*)$", l)
        if m:
            step = {"name": m.group(2), "env": []}
        m = re.match(r"^(\s*)run: (.*)$", l)
        if m and step is not None:
            indent = len(m.group(1))
            if m.group(2) == "|":
                i, cmd = take(i + 1, indent)
            else:
                cmd, i = m.group(2), i + 1
            if not step["name"].startswith("Install"):
                out.append("\n".join(step["env"] + [cmd]))
            continue
        m = re.match(r"^\s+([A-Z_]+): \$\{\{ steps\.(\w+)\.outputs\.(\w+) \}\}$", l)
        if m and step is not None:
            step["env"].append('%s=$(sed -n "s/^%s=//p" "$GITHUB_OUTPUT" | tail -n 1)' % (m.group(1), m.group(3)))
        i += 1
else:
    for key in ("script", "after_script"):
        m = re.search(r"^  %s:\n((?:    - .*\n)+)" % key, block + "\n", re.M)
        out += [l[6:] for l in m.group(1).splitlines()]
sys.stdout.write("".join(c + "\0" for c in out))
PY
}

# The project: a test suite that does honest work, plants a hook, reads
# a key, connects to a loopback port and fails.
git_init() {
	mkdir -p "$ROOT/.git/hooks" "$HOME/.ssh"
	printf 'key\n' >"$HOME/.ssh/id_ed25519"
	cat >"$ROOT/Makefile" <<'MK'
test:
	echo built > build.txt
	-echo x > .git/hooks/pre-commit
	-cat "$$HOME/.ssh/id_ed25519"
	python3 -c 'import socket; socket.socket().connect_ex(("127.0.0.1", 1))'
MK
}

# --- GitHub Actions ----------------------------------------------------------
git_init
gh=$SANDBOX/github
mkdir -p "$gh"
: >"$gh/summary.md"
: >"$gh/output"
n=0
while IFS= read -r -d '' cmd; do
	n=$((n + 1))
	(cd "$ROOT" && env PATH="$SANDBOX/path:$PATH" CI=true GITHUB_ACTIONS=true \
		GITHUB_WORKSPACE="$ROOT" GITHUB_STEP_SUMMARY="$gh/summary.md" GITHUB_OUTPUT="$gh/output" \
		GITHUB_WORKFLOW=test GITHUB_JOB=test GITHUB_REPOSITORY=o/r GITHUB_RUN_ID=1 \
		GITHUB_WORKFLOW_REF=o/r/.github/workflows/test.yml@refs/heads/main \
		bash -e -c "$cmd") >"$gh/step$n.out" 2>"$gh/step$n.err"
	echo "$?" >"$gh/step$n.rc"
done < <(steps github)
assert_eq "GitHub: the job's run steps (the upload steps are actions, not run here)" 4 "$n"
assert_eq "GitHub: the test step fails: make test passed, something was denied (--fail-on-alert)" 113 "$(cat "$gh/step1.rc")"
assert_match "GitHub: the hook denial is an annotation on the file" \
	'^::error file=\.git/hooks/pre-commit,title=agenttrace write\.git-hooks::denied write' "$(cat "$gh/step1.err")"
assert_match "GitHub: the key read is an annotation without file=" \
	'^::error title=agenttrace read\.[a-z.-]*::denied read .*id_ed25519' "$(cat "$gh/step1.err")"
assert_eq "GitHub: no plain line beside the annotations" "" "$(grep '^agenttrace: denied' "$gh/step1.err")"
assert_match "GitHub: the step summary lists the denials" \
	'#### Denials.*write\.git-hooks.*pre-commit' "$(tr '\n' ' ' <"$gh/summary.md")"
assert_match "GitHub: the step summary has the egress" \
	'#### Egress.*<code>127\.0\.0\.1:1</code> \| 1 \| 0 \|' "$(tr '\n' ' ' <"$gh/summary.md")"
assert_match "GitHub: the step outputs" '^denials=2$' "$(cat "$gh/output")"
assert_eq "GitHub: a later step reads an output" "connects and sends refused: 0" "$(cat "$gh/step2.out")"
assert_eq "GitHub: the job summary step" 0 "$(cat "$gh/step3.rc")"
assert_match "GitHub: the report's Markdown follows agenttrace's own" \
	'### agenttrace: 2 denied.*## agenttrace: .*2 denied' "$(tr '\n' ' ' <"$gh/summary.md")"
assert_eq "GitHub: SARIF, JUnit and HTML reports" "0 ok" \
	"$(cat "$gh/step4.rc") $(cd "$ROOT" && [ -s agenttrace.sarif ] && [ -s agenttrace-junit.xml ] && [ -s agenttrace.html ] && echo ok)"
sarif_uri=$("$PYTHON" -c '
import json, sys
doc = json.load(open(sys.argv[1]))
print(" ".join(sorted(set(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in doc["runs"][0]["results"]))))' "$ROOT/agenttrace.sarif")
assert_eq "GitHub: SARIF places the hook in the checkout, the key on the workflow" \
	".git/hooks/pre-commit .github/workflows/test.yml" "$sarif_uri"

# --- GitLab CI ---------------------------------------------------------------
sandbox_reset
git_init
gl=$SANDBOX/gitlab
mkdir -p "$gl"
n=0
while IFS= read -r -d '' cmd; do
	n=$((n + 1))
	(cd "$ROOT" && env -u GITHUB_ACTIONS PATH="$SANDBOX/path:$PATH" CI=true GITLAB_CI=true \
		CI_JOB_NAME=test CI_PROJECT_DIR="$ROOT" bash -e -c "$cmd") >"$gl/step$n.out" 2>"$gl/step$n.err"
	echo "$?" >"$gl/step$n.rc"
done < <(steps gitlab)
assert_eq "GitLab: script and after_script" 5 "$n"
assert_eq "GitLab: the test step fails: something was denied (--fail-on-alert)" 113 "$(cat "$gl/step1.rc")"
assert_eq "GitLab: no workflow commands" "" "$(grep -h '^::' "$gl"/step*.err "$gl"/step*.out)"
assert_match "GitLab: the text report in the job log, with the egress" \
	'2 denied.*Egress:.*127\.0\.0\.1:1' "$(tr '\n' ' ' <"$gl/step2.out")"
assert_match "GitLab: --context is the job's name" '"context":"test"' "$(cat "$ROOT/agenttrace.jsonl")"
assert_eq "GitLab: the artifacts" "ok" \
	"$(cd "$ROOT" && [ -s agenttrace.jsonl ] && [ -s agenttrace.html ] && [ -s gl-agenttrace.sarif ] && [ -s agenttrace-junit.xml ] && echo ok)"
"$PYTHON" -c 'import sys, xml.etree.ElementTree as ET; s = ET.parse(sys.argv[1]).getroot().find("testsuite"); assert int(s.get("failures")) == 2; print("ok")' \
	"$ROOT/agenttrace-junit.xml" >"$OUT" 2>&1
assert_eq "GitLab: the JUnit report fails the two denying rules" ok "$(cat "$OUT")"
