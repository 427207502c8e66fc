#!/bin/bash
# agenttrace-report --format junit: well-formed XML (python3 xml.etree),
# one testcase per rule, a failure for each rule that denied.
. "$top_srcdir/tests/tools/lib-tools.sh"

cd "$DATA" || exit 99
"$REPORT" -q run.jsonl --format junit >"$OUT"
assert_eq "exit 0" 0 $?
out=$("$PYTHON" - "$OUT" <<'PY' 2>&1
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "testsuites", root.tag
suite, = root.findall("testsuite")
cases = suite.findall("testcase")
names = [c.get("name") for c in cases]
assert len(names) == len(set(names)), "a rule twice"
failed = sorted(c.get("name") for c in cases if c.find("failure") is not None)
assert failed == sorted(["write.home.bashrc", "write.git-hooks", "net.fallback",
                         "syscall.io_uring", "exec.download-and-run"]), failed
assert int(suite.get("tests")) == len(cases) == 11, (suite.get("tests"), len(cases))
assert int(suite.get("failures")) == 5
assert int(root.get("failures")) == 5
assert "exec.pip-install" in names and "write.root" in names
f = [c for c in cases if c.get("name") == "write.home.bashrc"][0].find("failure")
assert f.get("message").startswith("2 denied: write /home/u/.bashrc"), f.get("message")
assert "suggest:" in f.text
alert = [c for c in cases if c.get("name") == "exec.pip-install"][0]
assert alert.find("failure") is None and "pip3 install" in alert.find("system-out").text
props = {p.get("name"): p.get("value") for p in suite.find("properties")}
assert props["policy"] == "default" and props["exit_code"] == "2", props
out = suite.find("system-out").text.splitlines()
assert out[:3] == ["egress (destination: allowed, denied):", "example.com:443 (93.184.216.34): 0, 1",
                   "pypi.org:443 (151.101.0.223): 3, 0"], out
assert out[-1] == "other destinations, not told apart: 2, 0", out
print("ok")
PY
)
assert_eq "JUnit XML: one testcase per rule, failures for denials, the egress as the suite's output" "ok" "$out"

# Control characters and markup in the log stay well-formed XML.
printf '%s\n' '{"v":1,"time":"2026-01-15T10:00:00.000Z","session":"e","seq":1,"event":"alert","pid":7,"ppid":1,"exe":"/bin/x","argv":["x"],"cwd":"/","action":"deny","mode":"enforce","kind":"write","path":"/a\u0001b<c>&\"d]]>","rule":"write.fallback","why":"\u001b[31mred","context":null,"backend":"ptrace"}' >"$SANDBOX/ctl.jsonl"
"$REPORT" -q "$SANDBOX/ctl.jsonl" -f junit >"$OUT"
out=$("$PYTHON" -c 'import sys, xml.etree.ElementTree as ET; ET.parse(sys.argv[1]); print("ok")' "$OUT" 2>&1)
assert_eq "control characters and markup: still well-formed" "ok" "$out"
