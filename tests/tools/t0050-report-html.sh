#!/bin/bash
# agenttrace-report --format html: one self-contained page (no external
# resource), rendered in real headless Chromium: the DOM after its script
# ran, and a screenshot.
. "$top_srcdir/tests/tools/lib-tools.sh"

cd "$DATA" || exit 99
html=$SANDBOX/report.html
"$REPORT" -q run.jsonl --format html -o "$html"
assert_eq "exit 0" 0 $?
assert_eq "self-contained: no src=, href=, <link>, @import or url()" "" \
	"$(grep -Eo '(src|href)=|<link|@import|url\(' "$html" | head -n 3)"
assert_eq "inline style and script" "1 1" "$(grep -c '<style>' "$html") $(grep -c '<script>' "$html")"

# The summary's egress: a row per destination, the denied one marked.
"$PYTHON" - "$html" >"$OUT" 2>&1 <<'PY'
import re, sys
page = open(sys.argv[1]).read()
sec = re.search(r'<section id="egress">(.*?)</section>', page, re.S)
assert sec, "no egress section"
rows = re.findall(r"<tr( class=\"deny\")?><td>(?:<code>)?(.*?)(?:</code>)?</td><td class=\"n\">(\d+)</td><td class=\"n\">(\d+)</td></tr>", sec.group(1))
assert rows[0] == (' class="deny"', "example.com:443 (93.184.216.34)", "0", "1"), rows
assert ("", "unix:/run/app.sock", "1", "0") in rows and len(rows) == 6, rows
print("ok")
PY
assert_eq "egress: a row per destination, denied ones marked" ok "$(cat "$OUT")"

# The log's strings never become markup.
printf '%s\n' '{"v":1,"time":"2026-01-15T10:00:00.000Z","session":"e","seq":1,"event":"alert","pid":7,"ppid":1,"exe":"/bin/x","argv":["x","<img src=x onerror=alert(1)>"],"cwd":"/","action":"deny","mode":"enforce","kind":"write","path":"/a<script>alert(1)</script>","rule":"write.fallback","why":"\"><em class=x>","context":null,"backend":"ptrace"}' >"$SANDBOX/evil.jsonl"
"$REPORT" -q "$SANDBOX/evil.jsonl" -f html >"$OUT"
assert_eq "no markup from the log" "" "$(grep -F -e '<script>alert' -e '<img src=x' -e '<em class=x>' "$OUT")"

CHROMIUM=
for c in chromium chromium-browser google-chrome; do
	have "$c" && { CHROMIUM=$(command -v "$c"); break; }
done
if [ -z "$CHROMIUM" ] && need_apt_package "command -v chromium" chromium; then
	CHROMIUM=$(command -v chromium)
fi
if [ -z "$CHROMIUM" ]; then
	skip "rendered in headless Chromium" "chromium not installed"
	exit 0
fi

# Chromium's singleton socket lives in $TMPDIR, whose path in the sandbox
# can be longer than a UNIX socket path may be.
chrome() {
	TMPDIR=/tmp timeout -k 5 90 "$CHROMIUM" --headless --no-sandbox --disable-gpu \
		--disable-background-networking --disable-component-update --disable-sync \
		--no-first-run --user-data-dir="$SANDBOX/chrome.$1" "${@:2}" "file://$html"
}
chrome dom --dump-dom >"$SANDBOX/dom.html" 2>"$SANDBOX/chrome.err"
assert_eq "chromium --dump-dom: exit 0" 0 $?
out=$("$PYTHON" - "$SANDBOX/dom.html" <<'PY' 2>&1
import sys
from html.parser import HTMLParser
class P(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags = []
        self.stack = []
        self.text = []
    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs), list(self.stack)))
        if tag not in ("meta", "br", "input", "line", "rect", "circle", "link"):
            self.stack.append((tag, dict(attrs)))
    def handle_endtag(self, tag):
        while self.stack:
            t, _ = self.stack.pop()
            if t == tag:
                break
    def handle_data(self, d):
        self.text.append(d)
p = P()
p.feed(open(sys.argv[1], encoding="utf-8").read())
tags = p.tags
html = [a for t, a, _ in tags if t == "html"][0]
assert html.get("data-report-ready") == "1", "the inline script did not run"
tree = [(a, s) for t, a, s in tags if t == "details" and "proc" in (a.get("class") or "")]
assert len(tree) == 3, "tree <details>: %d" % len(tree)
nested = [a for a, s in tree if any(t == "details" for t, _ in s)]
assert len(nested) == 2, "nested <details>: %d" % len(nested)
procs = [a.get("data-pid") for t, a, _ in tags if a.get("data-pid")]
assert sorted(procs) == ["100", "101", "102", "103", "104", "105"], procs
svg = [a for t, a, _ in tags if t == "svg"]
assert svg and svg[0].get("id") == "timeline-svg", svg
rows = [a for t, a, _ in tags if t == "g" and a.get("class") == "row"]
assert len(rows) == 6, "timeline rows: %d" % len(rows)
marks = [a for t, a, _ in tags if t == "circle"]
assert len([m for m in marks if m.get("class") == "deny"]) == 6, marks
assert len([m for m in marks if m.get("class") == "alert"]) == 1, marks
findings = [a for t, a, _ in tags if t == "tr" and "finding" in (a.get("class") or "")]
assert len(findings) == 6, "finding rows: %d" % len(findings)
text = "".join(p.text)
for s in ("write.git-hooks", "shell startup files run in every new shell",
          "__connect+0x1f", "2 malformed lines skipped"):
    assert s in text, s
print("ok")
PY
)
assert_eq "DOM: tree of <details>, SVG timeline, findings, script ran" "ok" "$out"

chrome shot --hide-scrollbars --window-size=1280,1400 --screenshot="$SANDBOX/report-html.png" \
	>/dev/null 2>"$SANDBOX/chrome.err"
assert_eq "chromium --screenshot: exit 0" 0 $?
size=$(stat -c %s "$SANDBOX/report-html.png" 2>/dev/null || echo 0)
assert_match "screenshot is a PNG of some size" "^[0-9]{5,}$" "$size"
assert_eq "screenshot is a PNG" "89504e47" "$(head -c 4 "$SANDBOX/report-html.png" | od -An -tx1 | tr -d ' \n')"
# AGENTTRACE_SCREENSHOT=FILE keeps it (doc/report-html.png for the README).
if [ -n "${AGENTTRACE_SCREENSHOT:-}" ]; then
	cp "$SANDBOX/report-html.png" "$AGENTTRACE_SCREENSHOT"
fi
