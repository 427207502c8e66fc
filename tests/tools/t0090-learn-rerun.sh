#!/bin/bash
# End to end with the real supervisor: record a real workload (build and
# run a small C program; git init, add, commit in a temp ROOT with a temp
# HOME), learn a policy from the log, run the workload again under that
# policy alone in enforce mode: zero denials.
. "$top_srcdir/tests/tools/lib-tools.sh"
need_agenttrace
[ -n "$POLICY_TOOL" ] || skip_all "no program runs learn"
have cc || skip_all "no C compiler"
have git || skip_all "git is not installed"

cat >"$ROOT/hello.c" <<'C'
#include <stdio.h>
int main(void) { puts("hello"); return 0; }
C
cat >"$ROOT/work.sh" <<'SH'
set -e
cc -o hello hello.c
./hello >out.txt
git init -q .
git add hello.c out.txt
git commit -q -m init
git log --oneline >/dev/null
SH
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.invalid
export GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.invalid
export GIT_CONFIG_NOSYSTEM=1

reset_root() {
	rm -rf "$ROOT/.git" "$ROOT/hello" "$ROOT/out.txt"
}

# git init writes .git/config and copies hook samples into .git/hooks,
# which default denies: allow them, as a user would.
at --record --allow-write '${ROOT}/.git/config' --allow-write '${ROOT}/.git/hooks/**' \
	-- sh work.sh >"$OUT" 2>"$ERR"
st=$?
assert_eq "recorded run: exit 0" 0 "$st"
[ "$st" = 0 ] || diag "$(cat "$ERR")"
cp "$LOG" "$SANDBOX/recorded.jsonl"
assert_rec "the log has exec records" 'event == "exec"'

"$POLICY_TOOL" learn "$SANDBOX/recorded.jsonl" -o "$SANDBOX/learned.json" 2>"$ERR"
assert_eq "learn: exit 0" 0 $?
learned=$(cat "$SANDBOX/learned.json")
assert_match "learned: the project program by its path" '"\$\{ROOT\}/hello"' "$learned"
assert_match "learned: writes under \${ROOT}" '"\$\{ROOT\}/\*\*"' "$learned"
assert_match "learned: git by name" '"git", "\*\*"' "$learned"

reset_root
at --policy "$SANDBOX/learned.json" --mode enforce -- sh work.sh >"$OUT" 2>"$ERR"
st=$?
assert_eq "rerun under the learned policy: exit 0" 0 "$st"
[ "$st" = 0 ] || diag "$(cat "$ERR")"
assert_no_rec "rerun: zero denials" 'event == "alert" and action == "deny"'
assert_file_content "rerun: the program ran" "$ROOT/out.txt" "hello"

# The learned policy is an allow-list: what the run did not do is denied.
reset_root
at --policy "$SANDBOX/learned.json" -- sh -c 'echo x >"$HOME/.profile"; wget -q -O- http://127.0.0.1:9/ || true' >"$OUT" 2>"$ERR"
assert_rec "a write the run never made is denied" \
	"event == \"alert\" and action == \"deny\" and kind == \"write\" and path == \"$HOME/.profile\""

"$POLICY_TOOL" replay "$SANDBOX/recorded.jsonl" --policy "$SANDBOX/learned.json" -q >"$OUT"
assert_eq "replay of the recorded run under its learned policy: exit 0" 0 $?
if [ -s "$OUT" ]; then diag "$(head -n 20 "$OUT")"; fi
