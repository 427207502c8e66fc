#!/bin/bash
# What survives the session: the summary record (and the stderr
# summary line) lists the paths changed outside ${ROOT} and the temp dirs,
# deduplicated and collapsed to directories when many, the agents' own
# state and the caches' churn counted apart (agent_state, cache_writes),
# and the processes still running when
# the command exited (killed, reaped).
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

# Outside ROOT and the temp dirs, and no cache: a directory the command
# is let write (the caches are counted apart, below).
mkdir -p "$HOME/data" "$HOME/.cache"

at_q --allow-write '${HOME}/data/**' -- sh -c 'mkdir -p "$HOME/data/pip" && echo 1 > "$HOME/data/pip/wheel" &&
	echo 2 > "$HOME/data/pip/wheel" && echo in > inroot && echo t > "$TMPDIR/t" &&
	echo t > /tmp/agenttrace-t0330-$$ && rm -f /tmp/agenttrace-t0330-$$ && echo > /dev/null'
assert_eq "writes to a cache: exit 0" 0 $?
changed=$(rec_field "event == 'summary'" changed_outside)
assert_match "summary: the cache file is listed" "\"$HOME/data/pip/wheel\"" "$changed"
assert_match "summary: the cache dir made is listed" "\"$HOME/data/pip\"" "$changed"
assert_eq "summary: listed once though written twice" 1 "$(printf '%s' "$changed" | grep -o "pip/wheel\"" | wc -l)"
for p in "$ROOT" "$TMPDIR" /tmp /dev/null; do
	case $changed in
	*"\"$p"*) not_ok "summary: nothing under $p" "$changed" ;;
	*) ok "summary: nothing under $p" ;;
	esac
done
assert_match "stderr: the summary lines name it" "changed outside the project and temp dirs: .*$HOME/data/pip" "$(cat "$ERR")"

# What changed, not what was allowed: mkdir -p of directories that exist,
# a file opened for writing and left as it was, a file made and removed
# again leave nothing; a file changed in place is listed.
mkdir -p "$HOME/data/kept"
printf 'old' >"$HOME/data/kept/same"
printf 'old' >"$HOME/data/kept/edited"
at_q --allow-write '${HOME}/data/**' -- sh -c 'mkdir -p "$HOME/data/kept" && : >>"$HOME/data/kept/same" &&
	echo new >>"$HOME/data/kept/edited" && echo t >"$HOME/data/gone" && rm "$HOME/data/gone"'
assert_eq "no-op writes: exit 0" 0 $?
changed=$(rec_field "event == 'summary'" changed_outside)
assert_eq "summary: only the edited file is listed" "[\"$HOME/data/kept/edited\"]" "$changed"
for p in "$(dirname "$HOME")" "$HOME" "$HOME/data"; do
	case $changed in
	*"\"$p\""*) not_ok "summary: an existing directory ($p) mkdir -p made again is not listed" "$changed" ;;
	*) ok "summary: an existing directory ($p) mkdir -p made again is not listed" ;;
	esac
done

# Many paths: collapsed to directories, bounded.
at_q --allow-write '${HOME}/data/**' -- sh -c 'mkdir -p "$HOME/data/many/a" "$HOME/data/many/b"; i=0
	while [ $i -lt 300 ]; do : > "$HOME/data/many/a/f$i"; : > "$HOME/data/many/b/g$i"; i=$((i+1)); done'
assert_eq "600 cache files: exit 0" 0 $?
n=$(rec_field "event == 'summary'" changed_outside | "$PYTHON" -c 'import json,sys; print(len(json.load(sys.stdin)))')
if [ "${n:-999}" -le 64 ] && [ "${n:-0}" -ge 1 ]; then ok "600 files: at most 64 entries ($n)"; else not_ok "600 files: at most 64 entries" "$n"; fi
assert_rec "600 files: collapsed to directories" "event == 'summary' and changed_outside_collapsed and ('$HOME/data/many/a/' in changed_outside or '$HOME/data/many/' in changed_outside)"

# A symlink made outside: its name is listed, its target (named, not
# written: Codex links its own binary into ~/.codex) is not.
mkdir -p "$SANDBOX/prog" && : >"$SANDBOX/prog/bin"
at_q --allow-write '${HOME}/data/**' -- sh -c "ln -s '$SANDBOX/prog/bin' \"\$HOME/data/lnk\""
assert_eq "a symlink in a cache: exit 0" 0 $?
assert_rec "a symlink: its name listed, not its target" \
	"event == 'summary' and changed_outside == ['$HOME/data/lnk']"

# The caches: their churn counted per cache rule, never listed.
at_q -- sh -c 'mkdir -p "$HOME/.cache/pip" && echo 1 >"$HOME/.cache/pip/wheel" &&
	echo 2 >"$HOME/.cache/pip/wheel" && mkdir -p "$HOME/.npm/_cacache" && : >"$HOME/.npm/_cacache/x"'
assert_eq "writes to the caches: exit 0" 0 $?
assert_rec "the caches: counted per cache rule, each path once" \
	"event == 'summary' and cache_writes == {'write.cache': 2, 'write.cache.npm': 2}"
assert_rec "the caches: not in changed_outside" "event == 'summary' and changed_outside == []"
assert_match "stderr: the caches apart" "the caches, paths written: write.cache 2, write.cache.npm 2" "$(cat "$ERR")"

# Nothing outside: an empty list.
at_q --allow-write '${HOME}/data/**' -- sh -c 'echo x > f'
assert_rec "only ROOT written: empty list" "event == 'summary' and changed_outside == []"

# --- the agents' own state --------------------------------------------------
# Under the agent policy, what the agents keep under HOME (write rules
# write.agent-state.NAME) is counted per agent in agent_state, not listed
# with the user's files; a write admitted by any other rule still is.
at_q --policy agent --allow-write '${HOME}/notes/**' -- sh -c '
	mkdir -p "$HOME/.codex/tmp/a" && : > "$HOME/.codex/tmp/a/x" && : > "$HOME/.codex/tmp/a/x" &&
	: > "$HOME/.claude.json" && mkdir -p "$HOME/.claude/projects" && mv "$HOME/.claude.json" "$HOME/.claude.json.backup" &&
	mkdir -p "$HOME/notes" && echo n > "$HOME/notes/n"'
assert_eq "agent state: exit 0" 0 $?
assert_no_alert "agent state: no alert record"
# ~/.codex, ~/.claude and ~/notes are Landlock roots that agenttrace made
# at start (mkdir -p finds them: EEXIST, no change of the command's).
assert_rec "agent state: counted per agent, each path once" \
	"event == 'summary' and agent_state == {'codex': 3, 'claude': 3}"
assert_rec "agent state: the user's files still listed, the agents' not" \
	"event == 'summary' and changed_outside == ['$HOME/notes/n']"
assert_match "stderr: the agents' state apart" "own state, paths written: codex 3, claude 3" "$(cat "$ERR")"
at_q -- sh -c 'echo x > f'
assert_rec "no agent state written: an empty object" "event == 'summary' and agent_state == {}"
assert_rec "no cache written: an empty object" "event == 'summary' and cache_writes == {}"

# --- processes left running ----------------------------------------------------
rm -f "$ROOT/daemon-pid"
at_q -- sh -c 'setsid sleep 60 </dev/null >/dev/null 2>&1 & echo $! > daemon-pid'
assert_eq "a daemonized child: the command's status" 0 $?
pid=$(cat "$ROOT/daemon-pid" 2>/dev/null)
assert_rec "summary: left_running names the daemon" "event == 'summary' and $pid in left_running"
assert_match "stderr: left running, killed" "1 left running, killed" "$(cat "$ERR")"
if [ -n "$pid" ] && [ -e "/proc/$pid" ]; then
	not_ok "the daemon is gone after the session" "$(cat /proc/$pid/status 2>/dev/null | head -3)"
	kill -KILL "$pid" 2>/dev/null
else
	ok "the daemon is gone after the session (not even a zombie)"
fi
