#!/bin/bash
# agenttrace-report --format sarif passes Microsoft's SARIF validator with
# GitHub's code-scanning rules (`sarif-multitool validate --rule-kind Gh`,
# the GH1xxx/GH2xxx rules that code-scanning upload applies) and its
# default SARIF rules with no error.
#
# The validator is the npm package @microsoft/sarif-multitool, whose
# platform package carries a self-contained .NET program (no runtime to
# install).  It is installed into this test's sandbox; the test skips,
# saying why, when npm is missing, the install fails or the program does
# not run.  AGENTTRACE_SARIF_MULTITOOL=PATH uses an installed one instead.
. "$top_srcdir/tests/tools/lib-tools.sh"
unset GITHUB_WORKSPACE GITHUB_WORKFLOW_REF

MT=${AGENTTRACE_SARIF_MULTITOOL:-}
if [ -z "$MT" ]; then
	have npm || skip_all "npm not installed: cannot install @microsoft/sarif-multitool"
	diag "npm install @microsoft/sarif-multitool into the sandbox"
	if ! timeout 300 npm install --prefix "$SANDBOX/npm" --cache "$SANDBOX/npm-cache" \
		--no-audit --no-fund --no-save --loglevel=error @microsoft/sarif-multitool \
		>"$SANDBOX/npm.log" 2>&1; then
		skip_all "npm install @microsoft/sarif-multitool failed: $(tail -n 1 "$SANDBOX/npm.log")"
	fi
	# The package's bin.js runs the program through a shell, which would
	# split "--rule-kind Sarif;Gh": run the platform program itself.
	MT=$SANDBOX/npm/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool
	[ -f "$MT" ] || skip_all "the install has no Linux multitool ($MT)"
	chmod u+x "$MT"
fi
# .NET keeps no state in the sandbox's HOME that a later run needs.
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
"$MT" --version >"$SANDBOX/mt-version" 2>&1 ||
	skip_all "sarif-multitool does not run here: $(head -n 3 "$SANDBOX/mt-version" | tr '\n' ' ')"
diag "$(head -n 1 "$SANDBOX/mt-version")"

# validate SARIF KINDS -> the validator's findings as "LEVEL RULE: TEXT"
# lines (none when clean).  Its exit status says nothing about findings:
# they are read from its own SARIF output.  The file comes first: the
# option lists would swallow it.
validate() {
	local in=$1 kinds=$2 res=$SANDBOX/validation.sarif
	[ -s "$in" ] || { echo "no SARIF to validate: $in"; return; }
	rm -f "$res"
	"$MT" validate "$in" --rule-kind "$kinds" -o "$res" >"$SANDBOX/mt.out" 2>&1
	[ -s "$res" ] || { echo "no validation output: $(tail -n 5 "$SANDBOX/mt.out")"; return; }
	"$PYTHON" - "$res" <<'PY'
import json, sys
for run in json.load(open(sys.argv[1]))["runs"]:
    for inv in run.get("invocations", []):
        for n in inv.get("toolExecutionNotifications", []) + inv.get("toolConfigurationNotifications", []):
            if n.get("level", "warning") == "error":
                print("tool error", n.get("message", {}).get("text"))
    for r in run.get("results", []):
        level = r.get("level", "warning")
        if level in ("error", "warning"):
            args = r.get("message", {}).get("arguments", [])
            print(level, r.get("ruleId"), ", ".join(args))
PY
}

cd "$DATA" || exit 99
"$REPORT" -q run.jsonl --format sarif -o "$SANDBOX/run.sarif"
assert_eq "report: exit 0" 0 $?
assert_eq "validate --rule-kind Gh: clean" "" "$(validate "$SANDBOX/run.sarif" Gh)"
# The default rules: no error.  (SARIF2005 warns that no informationUri
# names a web page of the tool: it has none.)
out=$(validate "$SANDBOX/run.sarif" Sarif | grep -v '^warning SARIF2005 ')
assert_eq "validate (SARIF rules): no error or warning but SARIF2005" "" "$out"

# The same with the workflow file as the anchor of outside results, and
# with the log inside the workspace.
GITHUB_WORKFLOW_REF=octo/proj/.github/workflows/test.yml@refs/heads/main \
	"$REPORT" -q run.jsonl --format sarif -o "$SANDBOX/wf.sarif"
assert_eq "GITHUB_WORKFLOW_REF: validate --rule-kind Gh: clean" "" \
	"$(validate "$SANDBOX/wf.sarif" Gh)"
mkdir -p "$SANDBOX/ws" && cp run.jsonl "$SANDBOX/ws/agenttrace.jsonl"
(cd "$SANDBOX/ws" && "$REPORT" -q agenttrace.jsonl --format sarif --root "$SANDBOX/ws" \
	-o "$SANDBOX/ws.sarif")
assert_eq "log in the workspace: validate --rule-kind Gh: clean" "" \
	"$(validate "$SANDBOX/ws.sarif" Gh)"
