#!/bin/bash
# What the session changed in the project's dependency files (doc/RECORDS.md,
# "dependencies"; doc/INTERNALS.md, "Dependency files"): the files are looked
# at before the command runs and after it ends, and the summary lists, per
# file, the packages added, removed and changed; files in node_modules or a
# virtual environment, links and FIFOs are not read; a file that does not
# parse is "changed, not parsed"; a session that changes none shows none.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

mkdir -p "$ROOT/web" "$ROOT/node_modules/x" "$ROOT/venv" "$ROOT/a/b/c/d/e"
printf '{"dependencies":{"left-pad":"^1.0.0","old":"1"}}\n' >"$ROOT/web/package.json"
printf 'requests==2.31.0\n' >"$ROOT/requirements.txt"
printf '[[package]]\nname = "serde"\nversion = "1.0.0"\n' >"$ROOT/Cargo.lock"
printf 'module m\nrequire golang.org/x/text v0.1.0\n' >"$ROOT/go.mod"
printf '{"dependencies":{"a":"1"}}\n' >"$ROOT/node_modules/x/package.json"
: >"$ROOT/venv/pyvenv.cfg"
printf 'x==1\n' >"$ROOT/venv/requirements.txt"
printf 'x==1\n' >"$ROOT/a/b/c/d/e/requirements.txt"
printf 'secret==1\n' >"$SANDBOX/outside.txt"

REPORT_BIN=$top_builddir/agenttrace-report
# report FORMAT NAME: the report of $LOG in $SANDBOX/NAME.
report() {
	"$REPORT_BIN" -q --root "$ROOT" "$LOG" --format "$1" -o "$SANDBOX/$2"
}
# sarif_deps FILE: the dependency results of a SARIF report, one a line.
sarif_deps() {
	"$PYTHON" -c 'import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
for r in run["results"]:
    if r["ruleId"] == "dependency.added":
        a = r["locations"][0]["physicalLocation"]["artifactLocation"]
        assert rules[r["ruleIndex"]] == "dependency.added"
        print(r["properties"]["package"], r["properties"]["version"], a["uri"], a.get("uriBaseId"), r["level"])' "$1"
}

# Nothing changed: nothing shown.
at_q -- sh -c 'cat requirements.txt >/dev/null'
assert_rec "no change: the summary's dependencies list no file" \
	"event == 'summary' and dependencies == {'root': '$ROOT', 'files': [], 'added': 0, 'removed': 0, 'changed': 0, 'truncated': False}"
for f in text md html junit sarif; do
	report "$f" "none.$f"
done
assert_eq "no change: no dependencies section in any report" "" \
	"$(grep -l '^Dependencies:\|^### Dependencies\|id="dependencies"\|<system-out>dependencies' "$SANDBOX"/none.*; sarif_deps "$SANDBOX/none.sarif")"

at_q -v -- sh -c '
	printf "{\"dependencies\":{\"left-pad\":\"^1.3.0\",\"evil\":\"git+https://g/e.git\",\"<img src=x>|y\":\"1\"}}\n" >web/package.json
	printf "requests==2.32.0\nflask>=3\n" >requirements.txt
	printf "[[package]]\nname = \"serde\"\nversion = \"1.0.0\"\n[[package]]\nname = \"rand\"\nversion = \"0.8.5\"\n" >Cargo.lock
	rm go.mod
	printf "GEM\n  specs:\n    rack (3.0.8)\n" >Gemfile.lock
	printf "[project\n" >pyproject.toml
	printf "{\"dependencies\":{\"a\":\"2\"}}\n" >node_modules/x/package.json
	printf "x==2\n" >venv/requirements.txt
	printf "x==2\n" >a/b/c/d/e/requirements.txt
	ln -s "$1" requirements-link.txt
	mkfifo requirements-fifo.txt' sh "$SANDBOX/outside.txt"
assert_eq "the command ran" 0 $?
py='[f for f in dependencies["files"] if f["path"] == P][0]'
file() { echo "${py/P/\'$1\'}"; }
assert_rec "package.json: added, removed and changed packages" \
	"event == 'summary' and $(file web/package.json)['packages'] == [{'name': '<img src=x>|y', 'from': None, 'to': '1'}, {'name': 'evil', 'from': None, 'to': 'git+https://g/e.git'}, {'name': 'left-pad', 'from': '^1.0.0', 'to': '^1.3.0'}, {'name': 'old', 'from': '1', 'to': None}]"
assert_rec "package.json: counts and status" \
	"event == 'summary' and $(file web/package.json)['added'] == 2 and $(file web/package.json)['removed'] == 1 and $(file web/package.json)['changed'] == 1 and $(file web/package.json)['status'] == 'changed' and $(file web/package.json)['format'] == 'package.json'"
assert_rec "requirements.txt: a version changed, a package added" \
	"event == 'summary' and $(file requirements.txt)['packages'] == [{'name': 'flask', 'from': None, 'to': '>=3'}, {'name': 'requests', 'from': '==2.31.0', 'to': '==2.32.0'}]"
assert_rec "Cargo.lock: a package added" \
	"event == 'summary' and $(file Cargo.lock)['packages'] == [{'name': 'rand', 'from': None, 'to': '0.8.5'}]"
assert_rec "go.mod removed: its packages removed" \
	"event == 'summary' and $(file go.mod)['status'] == 'removed' and $(file go.mod)['removed'] == 1"
assert_rec "Gemfile.lock created: its gems added" \
	"event == 'summary' and $(file Gemfile.lock)['status'] == 'added' and $(file Gemfile.lock)['packages'] == [{'name': 'rack', 'from': None, 'to': '3.0.8'}]"
assert_rec "a malformed pyproject.toml: added, not parsed" \
	"event == 'summary' and $(file pyproject.toml)['parsed'] == False and $(file pyproject.toml)['packages'] == []"
assert_rec "the totals over the files" \
	"event == 'summary' and dependencies['added'] == 5 and dependencies['removed'] == 2 and dependencies['changed'] == 2"
assert_rec "node_modules, a virtual environment, depth past four, a link, a FIFO: not read" \
	"event == 'summary' and sorted(f['path'] for f in dependencies['files']) == ['Cargo.lock', 'Gemfile.lock', 'go.mod', 'pyproject.toml', 'requirements.txt', 'web/package.json']"
assert_match "the human lines name each file" "dependency file web/package.json changed: 2 added, 1 removed, 1 changed" "$(cat "$ERR")"
assert_match "the human lines say what was not parsed" "dependency file pyproject.toml added \(not parsed\)" "$(cat "$ERR")"

# The reports: a section, a table per file, a SARIF result per package added.
for f in text md html junit sarif; do
	report "$f" "deps.$f"
done
assert_match "text: the totals and a package's change" \
	"Dependencies: 5 added, 2 removed, 2 changed.*requirements.txt \(changed\).*changed  requests ==2.31.0 -> ==2.32.0" \
	"$(tr '\n' ' ' <"$SANDBOX/deps.text")"
assert_match "markdown: a table row per package" \
	"\| <code>requests</code> \| changed \| <code>==2.31.0</code> \| <code>==2.32.0</code> \|" "$(cat "$SANDBOX/deps.md")"
assert_match "markdown: a file not parsed says so" \
	"<code>pyproject.toml</code> \(added\): not parsed" "$(cat "$SANDBOX/deps.md")"
assert_match "html: a dependencies section with the table" \
	'<section id="dependencies">.*<tr class="added"><td><code>rand</code></td><td>added</td><td><code></code></td><td><code>0.8.5</code>' \
	"$(tr '\n' ' ' <"$SANDBOX/deps.html")"
assert_eq "html: a hostile package name is escaped" 0 "$(grep -c '<img' "$SANDBOX/deps.html")"
assert_match "markdown: a hostile package name is escaped, the table kept" \
	'^\| <code>&lt;img src=x&gt;&#124;y</code> \| added \|  \| <code>1</code> \|$' "$(cat "$SANDBOX/deps.md")"
assert_match "junit: the changes in the suite's output" "added rand 0.8.5" "$(cat "$SANDBOX/deps.junit")"
assert_eq "sarif: one note per package added, at its file in the workspace" \
"<img src=x>|y 1 web/package.json %SRCROOT% note
evil git+https://g/e.git web/package.json %SRCROOT% note
flask >=3 requirements.txt %SRCROOT% note
rack 3.0.8 Gemfile.lock %SRCROOT% note
rand 0.8.5 Cargo.lock %SRCROOT% note" "$(sarif_deps "$SANDBOX/deps.sarif" | LC_ALL=C sort)"
