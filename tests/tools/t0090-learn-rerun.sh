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

# git init writes .git/config, which default denies: allow it, as a user
# would.  Then something of the run tries to plant a hook, and is denied.
at --record --allow-write '${ROOT}/.git/config' \
	-- sh -c 'sh work.sh && { echo x >.git/hooks/pre-commit || true; }' >"$OUT" 2>"$ERR"
st=$?
assert_eq "recorded run: exit 0" 0 "$st"
[ "$st" = 0 ] || diag "$(cat "$ERR")"
cp "$LOG" "$SANDBOX/recorded.jsonl"
assert_rec "the log has exec records" 'event == "exec"'
assert_rec "the hook was denied in the recorded run" \
	"event == 'alert' and action == 'deny' and rule_id == 'write.git-hooks'"

# learn without --extends: layered on default, whose denials hold.
"$POLICY_TOOL" learn "$SANDBOX/recorded.jsonl" -o "$SANDBOX/learned.json" 2>"$ERR"
assert_eq "learn: exit 0" 0 $?
learned=$(cat "$SANDBOX/learned.json")
assert_match "learned: extends default unless told otherwise" '"extends": "default"' "$learned"
assert_match "learned: the project program by its path" '"\$\{ROOT\}/hello"' "$learned"
assert_match "learned: writes under \${ROOT}" '"\$\{ROOT\}/\*\*"' "$learned"
assert_match "learned: git by name" '"git", "\*\*"' "$learned"
assert_match "learned: .git/config, which the run was allowed, with overrides of write.git-config" \
	'"path": "\$\{ROOT\}/\.git/config", "overrides": \["write\.git-config"\]' "$learned"
assert_match "learn's account: the hook is still denied, by write.git-hooks" \
	"1 denied event of the run: 1 still denied \(write.git-hooks 1\)" "$(cat "$ERR")"
assert_match "learn's account: the exception it kept" '1 rule with "overrides" admits' "$(cat "$ERR")"

# --extends none: standalone, and the account says that it admits the
# hook the run was denied (its ${ROOT}/** generalises the run's writes).
"$POLICY_TOOL" learn "$SANDBOX/recorded.jsonl" --extends none -o "$SANDBOX/standalone.json" 2>"$ERR"
assert_eq "learn --extends none: exit 0" 0 $?
if grep -q '"extends"' "$SANDBOX/standalone.json"; then
	not_ok "learn --extends none: no extends"
else
	ok "learn --extends none: no extends"
fi
assert_match "learn --extends none: its account says the denied hook is admitted, and by which rule" \
	"1 denied event of the run: 0 still denied.*1 denied event of the run admitted by the learned policy \(learned.write.ROOT 1\)" \
	"$(tr '\n' ' ' <"$ERR")"

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

# ... and default's protections hold: a hook, a credential.
reset_root
mkdir -p "$ROOT/.git/hooks" "$HOME/.aws"
printf 'secret' >"$HOME/.aws/credentials"
at --policy "$SANDBOX/learned.json" -- sh -c 'echo x >.git/hooks/pre-commit; read x <"$HOME/.aws/credentials"' >"$OUT" 2>"$ERR"
assert_rec "under the learned policy a .git/hooks write is denied (write.git-hooks)" \
	"event == 'alert' and action == 'deny' and rule_id == 'write.git-hooks'"
assert_file_absent "under the learned policy: no hook" "$ROOT/.git/hooks/pre-commit"
assert_rec "under the learned policy a credential read is denied (read.aws)" \
	"event == 'alert' and action == 'deny' and rule_id == 'read.aws'"
rm -rf "$HOME/.aws"

"$POLICY_TOOL" replay "$SANDBOX/recorded.jsonl" --policy "$SANDBOX/learned.json" -q >"$OUT"
assert_eq "replay of the recorded run under its learned policy: exit 0" 0 $?
if [ -s "$OUT" ]; then diag "$(head -n 20 "$OUT")"; fi
