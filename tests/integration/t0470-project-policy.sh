#!/bin/bash
# The project's own policy, ${ROOT}/.agenttrace.json (agenttrace(1),
# PROJECT POLICY): layered over default or the --policy layers; the
# project is untrusted, so without --trust-project-policy it may only add
# deny and alert rules, and a file that would widen anything is refused
# (125), never dropped silently; --no-project-policy ignores it; it is
# write-protected in the session, also while it does not exist; -v and the
# summary say it was used; even trusted it cannot unprotect agenttrace's
# own files.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

proj=$ROOT/.agenttrace.json
mkdir -p "$ROOT/secret" "$ROOT/.git/hooks"

for B in auto preload; do
	backend_use "$B"
	rm -f "$proj" "$ROOT/secret/a" "$ROOT/x.txt" "$HOME/.bashrc"

	# No project policy: nothing changes, and the name is protected so
	# that a session cannot plant one for the next.
	bk -- sh -c '{ echo "{}" > .agenttrace.json; } 2>/dev/null; exit 0' >"$OUT" 2>"$ERR"
	assert_file_absent "${BK}a session cannot create the project policy" "$proj"
	assert_rec "${BK}creating it: denied by agenttrace's own rule" \
		"$(deny_expr write write.agenttrace-project-policy "$proj")"
	assert_rec "${BK}no project policy: the summary says none" "event == 'summary' and has('project_policy') and project_policy is None"

	# A project policy that restricts: its deny rule holds; -v says so.
	cat >"$proj" <<'J'
{ "agenttrace": 1,
  "write": { "deny": [ { "id": "write.project-secret", "path": "${ROOT}/secret/**", "why": "the project keeps it" } ] },
  "exec": { "alert": [ { "id": "exec.project-curl", "argv": ["curl", "**"] } ] } }
J
	bk -v -- sh -c '{ echo x > secret/a; } 2>/dev/null; echo ok > x.txt; exit 0' >"$OUT" 2>"$ERR"
	assert_eq "${BK}restricting project policy: the command runs" 0 $?
	assert_file_absent "${BK}its deny rule holds" "$ROOT/secret/a"
	assert_file_present "${BK}the rest is as under default" "$ROOT/x.txt"
	assert_rec "${BK}the denial names the project's rule" "$(deny_expr write write.project-secret "$ROOT/secret/a") and why == 'the project keeps it'"
	assert_match "${BK}-v says it was used, and how" "project policy $proj: its deny and alert rules added" "$(cat "$ERR")"
	assert_rec "${BK}the summary names it, untrusted" \
		"event == 'summary' and project_policy == {'path': '$proj', 'trusted': False} and '$proj' in policy"

	# In the session it cannot be changed, replaced or removed.
	bk -- sh -c '{ echo "{}" > .agenttrace.json; } 2>/dev/null; echo "{}" > n.json; mv n.json .agenttrace.json 2>/dev/null; rm -f .agenttrace.json 2>/dev/null; exit 0' >"$OUT" 2>"$ERR"
	assert_match "${BK}it is left as it was" 'write.project-secret' "$(cat "$proj")"
	assert_match "${BK}each write, rename and unlink refused" '^[3-9]$' "$(rec_count "$(deny_expr write write.agenttrace-project-policy "$proj")")"

	# --no-project-policy: ignored.
	bk --no-project-policy -- sh -c 'echo x > secret/a' >"$OUT" 2>"$ERR"
	assert_eq "${BK}--no-project-policy: its rule is not in force" 0 $?
	assert_rec "${BK}--no-project-policy: the summary says none" "event == 'summary' and project_policy is None"
	rm -f "$ROOT/secret/a"

	# The attack: a repository (or an agent of an earlier session) ships a
	# policy that allows what default denies.  Refused, loudly, and the
	# command does not run.
	for widen in \
		'"write": { "allow": [ { "path": "${HOME}/.bashrc", "overrides": ["write.home.bashrc"] } ] }' \
		'"mode": "audit"' \
		'"extends": "audit"' \
		'"net": { "allow": ["*:443"] }' \
		'"limits": { "timeout": 100000 }' \
		'"record": false' \
		'"name": "default"'; do
		printf '{ "agenttrace": 1, %s }\n' "$widen" >"$proj"
		bk -- sh -c 'echo x >> "$HOME/.bashrc"' >"$OUT" 2>"$ERR"
		assert_eq "${BK}a widening project policy ($widen): 125" 125 $?
		assert_file_absent "${BK}... and the command did not run" "$HOME/.bashrc"
		assert_match "${BK}... saying why and what to do" \
			'could widen what the session allows.*--trust-project-policy.*--no-project-policy' "$(tr '\n' ' ' <"$ERR")"
	done

	# The user vouches for it: used as written.
	printf '%s\n' '{ "agenttrace": 1, "write": { "allow": [ { "path": "${HOME}/.bashrc", "overrides": ["write.home.bashrc"] } ] } }' >"$proj"
	: >"$HOME/.bashrc" # Landlock grants a layer's new root only where it exists
	bk --trust-project-policy -- sh -c 'echo x >> "$HOME/.bashrc"' >"$OUT" 2>"$ERR"
	assert_eq "${BK}--trust-project-policy: its allow rule holds" 0 $?
	assert_file_content "${BK}--trust-project-policy: written" "$HOME/.bashrc" x
	assert_rec "${BK}--trust-project-policy: the summary says trusted" "event == 'summary' and project_policy == {'path': '$proj', 'trusted': True}"

	# Even trusted, it cannot unprotect itself, the log or agenttrace.
	cat >"$proj" <<J
{ "agenttrace": 1,
  "write": { "allow": [ "\${ROOT}/.agenttrace.json", "$LOG", "$AGENTTRACE" ] } }
J
	bk --trust-project-policy -- sh -c '{ echo "{}" > .agenttrace.json; echo x >> "$0"; echo x >> "$1"; } 2>/dev/null; exit 0' "$LOG" "$AGENTTRACE" >"$OUT" 2>"$ERR"
	assert_match "${BK}trusted: still cannot rewrite itself" '"agenttrace": 1' "$(cat "$proj")"
	assert_rec "${BK}trusted: its own file stays protected" "$(deny_expr write write.agenttrace-project-policy "$proj")"
	assert_rec "${BK}trusted: the log stays protected" "$(deny_expr write write.agenttrace-log)"
	assert_rec "${BK}trusted: agenttrace stays protected" "$(deny_expr write write.agenttrace-self)"
	rm -f "$proj" "$HOME/.bashrc"
done

# Over --policy: the project layer comes last of the policy layers.
printf '%s\n' '{ "agenttrace": 1, "write": { "deny": [ { "id": "write.project-secret", "path": "${ROOT}/secret/**" } ] } }' >"$proj"
(cd "$ROOT" && "$AGENTTRACE" --policy strict --explain) >"$OUT" 2>"$ERR"
assert_match "--explain: the project layer over --policy strict" "\"layers\": \"default\\+strict\\+$proj\"" "$(cat "$OUT")"
"$AGENTTRACE" --no-project-policy --trust-project-policy -- true >"$OUT" 2>"$ERR"
assert_eq "--no-project-policy with --trust-project-policy: 125" 125 $?

# A project policy that is not JSON: the loader's file:line:col.
printf '{ "agenttrace": 1,\n  "write": }\n' >"$proj"
at -- true >"$OUT" 2>"$ERR"
assert_eq "a broken project policy: 125" 125 $?
assert_match "a broken project policy: file:line" "$proj:2" "$(cat "$ERR")"
# Not a regular file: refused rather than read without end.
rm -f "$proj"
mkfifo "$proj"
at -- true >"$OUT" 2>"$ERR"
assert_eq "a FIFO as project policy: 125" 125 $?
assert_match "a FIFO as project policy: said" 'not a regular file' "$(cat "$ERR")"
rm -f "$proj"
