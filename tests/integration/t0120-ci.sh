#!/bin/bash
# doc/CI.md: in GitHub Actions (GITHUB_ACTIONS=true) alerts
# become workflow annotations and a Markdown summary is appended to
# $GITHUB_STEP_SUMMARY; --syslog sends alerts to syslog as well.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

summary=$SANDBOX/step-summary.md

# Under both backends: the supervisor writes the annotations of the shim's
# decisions too.
for B in auto preload; do
	backend_use "$B"
	printf '## earlier step\n' >"$summary"

	GITHUB_ACTIONS=true GITHUB_STEP_SUMMARY=$summary GITHUB_WORKFLOW=wf GITHUB_JOB=test \
		bk_q -- sh -c 'echo x > "$HOME/.bashrc"; ./bin/pip install x; exit 0'
	assert_eq "${BK}the command's own status" 0 $?
	assert_match "${BK}a denial is an ::error annotation" \
		'::error title=agenttrace write.home.bashrc::denied write .*/.bashrc' "$(cat "$ERR")"
	if grep -q '^::' "$OUT"; then not_ok "${BK}annotations stay off the command's stdout"; else ok "${BK}annotations stay off the command's stdout"; fi
	assert_eq "${BK}the step summary keeps what earlier steps wrote" '## earlier step' "$(head -n 1 "$summary")"
	assert_match "${BK}the step summary counts the denial" '### agenttrace: 1 denied' "$(cat "$summary")"
	assert_match "${BK}the step summary has a row per kind" '\| write \| 1 \| 0 \|' "$(cat "$summary")"
	assert_rec "${BK}--context defaults to the GitHub workflow and job" "event == 'alert' and context == 'wf/test'$(bk_rec_backend)"
done

# One line a denial on stderr (the annotation, not the human line as
# well); file= names a file of the workspace relative to it, nothing for
# a file outside; the step summary lists the denials, the most frequent
# first, and the egress; $GITHUB_OUTPUT gets the counts (doc/CI.md).
mkdir -p "$ROOT/.git/hooks"
printf '#!/bin/sh\nexit 0\n' >"$ROOT/bin/pip"
chmod 0755 "$ROOT/bin/pip"
outputs=$SANDBOX/github-output
for B in auto preload; do
	backend_use "$B"
	printf '## earlier step\n' >"$summary"
	printf 'earlier=1\n' >"$outputs"
	GITHUB_ACTIONS=true GITHUB_STEP_SUMMARY=$summary GITHUB_OUTPUT=$outputs GITHUB_WORKSPACE=$ROOT \
		bk_q -v -- sh -c '
			for i in 1 2 3; do { echo x > .git/hooks/pre-commit; } 2>/dev/null; done
			for i in 1 2 3 4 5 6 7 8 9 10 11; do echo x > .git/hooks/h$i; done
			echo x > "$HOME/.bashrc"; "$1" connect 127.0.0.1 1; ./bin/pip install x; exit 0' sh "$TRY"
	assert_eq "${BK}GitHub: the command's own status" 0 $?
	assert_eq "${BK}GitHub: one line on stderr for each denial" 3 "$(grep -c 'pre-commit' "$ERR")"
	assert_eq "${BK}GitHub: and for each alert" 1 "$(grep -c 'install' "$ERR")"
	assert_match "${BK}GitHub: file= names a file of the workspace, relative" \
		'^::error file=\.git/hooks/pre-commit,title=agenttrace write\.git-hooks::denied write '"$ROOT"'/\.git/hooks/pre-commit' "$(cat "$ERR")"
	assert_match "${BK}GitHub: no file= for a file outside the workspace" \
		'^::error title=agenttrace write\.home\.bashrc::denied write' "$(cat "$ERR")"
	assert_eq "${BK}GitHub: no human line beside an annotation" "" "$(grep '^agenttrace: denied' "$ERR")"
	# Markdown escapes '_' (a build dir named _build, as distcheck's).
	md_root=$(printf '%s' "$ROOT" | sed 's/_/\&#95;/g')
	assert_match "${BK}GitHub: the step summary lists the most frequent denial first" \
		'#### Denials.*\| <code>write\.git-hooks</code> \| <code>'"$md_root"'/\.git/hooks/pre-commit</code> \| 3 \|' "$(tr '\n' ' ' <"$summary")"
	assert_eq "${BK}GitHub: ten denials listed" 10 "$(grep -c '^| <code>write\.' "$summary")"
	assert_match "${BK}GitHub: the rest counted" 'and 3 more denials, not listed\.' "$(cat "$summary")"
	assert_match "${BK}GitHub: the step summary has the egress" \
		'#### Egress.*\| <code>127\.0\.0\.1:1</code> \| 1 \| 0 \|' "$(tr '\n' ' ' <"$summary")"
	assert_eq "${BK}GitHub: \$GITHUB_OUTPUT gets the counts, after what was there" \
		"earlier=1 denials=15 alerts=1 denials_exec=0 alerts_exec=1 denials_write=15 alerts_write=0" \
		"$(grep -E '^(earlier|denials|alerts|denials_exec|alerts_exec|denials_write|alerts_write)=' "$outputs" | tr '\n' ' ' | sed 's/ $//')"
	assert_match "${BK}GitHub: every kind has its count" 'denials_net=0' "$(cat "$outputs")"
done
# Without GitHub Actions -v prints the human line.
at_q -v -- sh -c '{ echo x > .git/hooks/pre-commit; } 2>/dev/null'
assert_eq "no GitHub: the human line" 1 "$(grep -c 'pre-commit' "$ERR")"
assert_match "no GitHub: the human line" '^agenttrace: denied write .*pre-commit' "$(cat "$ERR")"

# Outside GitHub Actions: no annotations, no summary file touched.
before=$(cat "$summary")
GITHUB_STEP_SUMMARY=$summary at_q -- sh -c 'echo x > "$HOME/.bashrc"'
if grep -q '^::' "$ERR"; then not_ok "no annotations without GITHUB_ACTIONS"; else ok "no annotations without GITHUB_ACTIONS"; fi
assert_eq "no summary without GITHUB_ACTIONS" "$before" "$(cat "$summary")"

# Annotation text escapes the runner's special characters.
mkdir -p "$HOME/a%b"
GITHUB_ACTIONS=true at_q -- sh -c 'echo x > "$HOME/a%b/.bashrc"; echo y > "$HOME/.profile"'
assert_match "'%' is escaped in annotations" 'a%25b' "$(cat "$ERR")"

# --syslog: a private /dev/log in a mount namespace, read by a listener;
# each backend writes the same line.
syslog_case() {
	local b=$1 dev=$SANDBOX/dev-$1 got=$SANDBOX/syslog-$1.txt
	mkdir -p "$dev"
	for n in null zero full random urandom tty; do
		[ -e "/dev/$n" ] && : >"$dev/$n"
	done
	"$PYTHON" - "$dev/log" "$got" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(20)
with open(sys.argv[2], "wb") as f:
    try:
        while True:
            f.write(s.recv(65536) + b"\n"); f.flush()
    except socket.timeout:
        pass
PY
	bg_track $!
	for _ in $(seq 100); do [ -S "$dev/log" ] && break; sleep 0.05; done
	unshare -m sh -c '
		for n in null zero full random urandom tty; do
			[ -e "$1/$n" ] && mount --bind "/dev/$n" "$1/$n"
		done
		mount --bind "$1" /dev
		cd "$2" && exec "$3" --backend "$4" --syslog -q -- sh -c "echo x > \"\$HOME/.bashrc\""
	' sh "$dev" "$ROOT" "$AGENTTRACE" "$b" 2>"$ERR"
	for _ in $(seq 50); do grep -q 'write.home.bashrc' "$got" 2>/dev/null && break; sleep 0.1; done
	assert_match "--syslog, --backend $b: the denial reaches syslog" \
		'agenttrace\[[0-9]+\]: denied write .*\.bashrc \(write.home.bashrc' "$(cat "$got" 2>/dev/null)"
}
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
	syslog_case ptrace
	syslog_case preload
else
	skip "--syslog: the denial reaches syslog" "needs root and a mount namespace"
fi
