#!/bin/bash
# The agent policy against the real agent CLIs (agenttrace(1), EXAMPLES;
# agenttrace-policy(5), "agent"): the current @anthropic-ai/claude-code and
# @openai/codex, installed from the npm registry into the test's project,
# run what works offline under --policy agent and natively, under both
# engines: the same output and exit status, no denial and no alert, and a
# summary that counts the agents' own state (agent_state) apart from the
# user's files (changed_outside, empty).  Where the test runs as root,
# tracefs is mounted in a mount namespace of its own, as on a machine with
# debugfs mounted, where Claude Code's Bun binary opens the kernel trace
# marker at every start.  Codex's own sandbox (bubblewrap: new namespaces)
# is refused with a record that says why and a summary line that says
# to turn it off, and runs its command when the sandbox is off (t0510 has
# a program's own seccomp filter and Landlock ruleset, which work).
#
# A registry that cannot be reached, or an install that fails, is a plain
# TAP skip even with AGENTTRACE_MUST_WORK=1: the registry lies outside the
# machine, and its outage says nothing of agenttrace.  The install is
# about 700 MB and takes under a minute; AGENTTRACE_AGENT_CLIS=DIR uses a
# directory where both are installed already (DIR/node_modules/.bin).
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace
unset AGENTTRACE_TEST_ENGINE

have npm || skip_all "npm not installed: cannot install the agent CLIs"

# The agents read these; a developer's own must not leak in.
unset ANTHROPIC_API_KEY ANTHROPIC_BASE_URL CLAUDE_CONFIG_DIR OPENAI_API_KEY OPENAI_BASE_URL CODEX_HOME
# No update checks, telemetry or error reports: nothing a test can reach.
export DISABLE_AUTOUPDATER=1 DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1

PKGS=${AGENTTRACE_AGENT_CLIS:-}
if [ -z "$PKGS" ]; then
	PKGS=$ROOT
	npm_env=(env HOME="$SANDBOX/npm-home" npm_config_cache="$SANDBOX/npm-cache" npm_config_update_notifier=false)
	mkdir -p "$SANDBOX/npm-home"
	if ! timeout 60 "${npm_env[@]}" npm view @openai/codex version >"$SANDBOX/npm.log" 2>&1; then
		ok "the agent CLIs # SKIP the npm registry cannot be reached: $(tail -n 1 "$SANDBOX/npm.log")"
		exit 0
	fi
	diag "npm install @anthropic-ai/claude-code @openai/codex into the project"
	if ! (cd "$ROOT" && timeout 600 "${npm_env[@]}" npm install --no-audit --no-fund --no-save \
		--loglevel=error @anthropic-ai/claude-code @openai/codex) >"$SANDBOX/npm.log" 2>&1; then
		ok "the agent CLIs # SKIP npm install failed: $(tail -n 1 "$SANDBOX/npm.log")"
		exit 0
	fi
fi
BIN=$PKGS/node_modules/.bin
for p in claude codex; do
	[ -x "$BIN/$p" ] || skip_all "the install has no $BIN/$p"
done
diag "claude $("$BIN/claude" --version 2>&1 | head -n 1), $("$BIN/codex" --version 2>&1 | head -n 1)"

# Root: tracefs mounted in a namespace of the test's (native runs too), so
# that the runtimes find the trace marker as on a machine with debugfs.
NS=()
if [ "$(id -u)" = 0 ] && have unshare &&
	unshare -m --propagation private sh -c '[ -e /sys/kernel/debug/tracing/trace_marker ] ||
		mount -t debugfs none /sys/kernel/debug' 2>/dev/null; then
	# Either may be mounted already (it often is): then it stays.
	NS=(unshare -m --propagation private sh -c '
		[ -e /sys/kernel/debug/tracing/trace_marker ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null
		[ -e /sys/kernel/tracing/trace_marker ] || mount -t tracefs none /sys/kernel/tracing 2>/dev/null
		exec "$@"' sh)
else
	diag "tracefs not mounted: not root, or it cannot be mounted here"
fi

# Each run starts from an empty HOME (the same path natively and under
# agenttrace, so that output naming it compares), in ROOT.
home_reset() {
	chmod -R u+rwx "$HOME" 2>/dev/null
	find "$HOME" -mindepth 1 -maxdepth 1 -exec rm -rf {} +
}

# native NAME CMD...: the command's stdout, stderr and status in
# $SANDBOX/native.{out,err,st}.
run_native() {
	home_reset
	(cd "$ROOT" && exec "${NS[@]}" timeout -k 5 "$AT_TIMEOUT" "$@") \
		</dev/null >"$SANDBOX/native.out" 2>"$SANDBOX/native.err"
	echo $? >"$SANDBOX/native.st"
}

# traced ENGINE CMD...: the same under agenttrace --policy agent (and the
# options in TRACED_OPTS); its own lines (agenttrace: ...) left out of
# stderr.
TRACED_OPTS=()
run_traced() {
	local e=$1 st
	shift
	home_reset
	rm -f "$LOG"
	(cd "$ROOT" && exec "${NS[@]}" timeout -k 5 "$AT_TIMEOUT" "$AGENTTRACE" --log "$LOG" \
		--engine "$e" --policy agent "${TRACED_OPTS[@]}" -- "$@") </dev/null >"$OUT" 2>"$SANDBOX/traced.err"
	st=$?
	at_runs=$((at_runs + 1))
	[ -f "$LOG" ] && cp "$LOG" "$SANDBOX/log.$at_runs.jsonl"
	grep -v '^agenttrace: ' "$SANDBOX/traced.err" >"$ERR"
	return $st
}

# same ENGINE AGENT CMD...: native and traced agree, and the traced run
# changed nothing of the user's.
same() {
	local e=$1 agent=$2 d st
	shift 2
	d="$e: $(basename "$1") ${*:2}"
	run_native "$@"
	run_traced "$e" "$@"
	st=$?
	assert_eq "$d: exit status as natively" "$(cat "$SANDBOX/native.st")" "$st"
	if cmp -s "$SANDBOX/native.out" "$OUT" && cmp -s "$SANDBOX/native.err" "$ERR"; then
		ok "$d: output as natively"
	else
		not_ok "$d: output as natively" \
			"$(diff -u "$SANDBOX/native.out" "$OUT" | head -n 20)" \
			"$(diff -u "$SANDBOX/native.err" "$ERR" | head -n 20)"
	fi
	assert_rec "$d: no denial, no alert" "event == 'summary' and denials == 0 and alerts == 0"
	assert_rec "$d: nothing of the user's changed" "event == 'summary' and changed_outside == []"
	assert_rec "$d: the state written is the agents' own" \
		"event == 'summary' and set(agent_state) <= {'claude', 'codex'}"
	if [ -n "$agent" ]; then
		assert_rec "$d: $agent's state counted apart" \
			"event == 'summary' and (agent_state or {}).get('$agent', 0) > 0"
	fi
}

for E in ptrace notify; do
	if [ "$E" = notify ] && ! "$AGENTTRACE" --engine notify --log "$SANDBOX/probe.jsonl" -- true \
		>/dev/null 2>&1; then
		skip "notify engine" "no notify engine on this kernel"
		continue
	fi
	# What works offline: versions, help, the local configuration (no
	# MCP server, no plugin, not logged in), Codex's feature flags and
	# its bundled model catalog.
	same "$E" "" "$BIN/claude" --version
	same "$E" "" "$BIN/claude" --help
	same "$E" claude "$BIN/claude" mcp list
	same "$E" "" "$BIN/claude" auth status
	same "$E" "" "$BIN/claude" plugin list
	same "$E" codex "$BIN/codex" --version
	same "$E" codex "$BIN/codex" --help
	same "$E" codex "$BIN/codex" login status
	same "$E" codex "$BIN/codex" mcp list
	same "$E" codex "$BIN/codex" features list
	same "$E" codex "$BIN/codex" debug models

	# Codex's own sandbox: bubblewrap makes new namespaces, which
	# agenttrace refuses; the sandboxed command does not run, and the
	# record and agenttrace's line say why.
	run_native "$BIN/codex" sandbox -c sandbox_mode=workspace-write -- /bin/sh -c 'echo hi >made.txt'
	rm -f "$ROOT/made.txt"
	if [ "$(cat "$SANDBOX/native.st")" != 0 ]; then
		skip "$E: codex sandbox" "it does not run here natively: $(tail -n 1 "$SANDBOX/native.err")"
	else
		run_traced "$E" "$BIN/codex" sandbox -c sandbox_mode=workspace-write -- /bin/sh -c 'echo hi >made.txt'
		assert_ne "$E: codex sandbox: fails" 0 $?
		assert_file_absent "$E: codex sandbox: its command did not run" "$ROOT/made.txt"
		assert_rec "$E: codex sandbox: bubblewrap's namespaces refused, recorded" \
			"$(deny_expr syscall syscall.namespace) and pre(str(exe).rsplit('/', 1)[-1], 'bwrap')"
		assert_match "$E: codex sandbox: agenttrace's line says why" \
			"denied syscall [a-z0-9_]+ \\(syscall\\.namespace: .* bwrap" "$(cat "$SANDBOX/traced.err")"
		# bubblewrap's own message blames the kernel's settings; the
		# summary says what to do instead.
		assert_match "$E: codex sandbox: the summary says to run it with its sandbox off" \
			"agenttrace: a sandbox of the program's own \\(bwrap\\) cannot run inside agenttrace: .*run the program with its sandbox off" \
			"$(cat "$SANDBOX/traced.err")"
		# Its legacy Landlock helper does not take bubblewrap's place:
		# in a restricted mode it stops, natively as here.
		run_native "$BIN/codex" sandbox --enable use_legacy_landlock -c sandbox_mode=workspace-write -- \
			/bin/sh -c 'echo hi >made.txt'
		rm -f "$ROOT/made.txt"
		run_traced "$E" "$BIN/codex" sandbox --enable use_legacy_landlock -c sandbox_mode=workspace-write -- \
			/bin/sh -c 'echo hi >made.txt'
		st=$?
		assert_eq "$E: codex sandbox, legacy Landlock: exit status as natively" \
			"$(cat "$SANDBOX/native.st")" "$st"
		assert_file_absent "$E: codex sandbox, legacy Landlock: its command did not run" "$ROOT/made.txt"
		assert_rec "$E: codex sandbox, legacy Landlock: no denial" "event == 'summary' and denials == 0"
		rm -f "$ROOT/made.txt"
		# With Codex's sandbox off, agenttrace is the sandbox.
		run_traced "$E" "$BIN/codex" sandbox -c sandbox_mode=danger-full-access -- \
			/bin/sh -c 'echo hi >made.txt'
		assert_eq "$E: codex sandbox, danger-full-access: the command runs" 0 $?
		assert_file_content "$E: codex sandbox, danger-full-access: written" "$ROOT/made.txt" hi
		assert_no_alert "$E: codex sandbox, danger-full-access: no alert"
		rm -f "$ROOT/made.txt"
		run_traced "$E" "$BIN/codex" sandbox -c sandbox_mode=danger-full-access -- \
			/bin/sh -c 'echo x >>"$HOME/.bashrc"'
		assert_ne "$E: codex sandbox, danger-full-access: still supervised" 0 $?
		assert_rec "$E: codex sandbox, danger-full-access: HOME/.bashrc denied" \
			"$(deny_expr write write. "$HOME/.bashrc")"
		# A user's file the session may change (--allow-write) is
		# listed as changed, the agent's state beside it is not.
		TRACED_OPTS=(--allow-write '${HOME}/notes/**')
		run_traced "$E" "$BIN/codex" sandbox -c sandbox_mode=danger-full-access -- \
			/bin/sh -c 'mkdir -p "$HOME/notes" && echo hi >"$HOME/notes/n.txt"'
		st=$?
		TRACED_OPTS=()
		assert_eq "$E: codex sandbox, a user's file: written" 0 "$st"
		assert_rec "$E: codex sandbox, a user's file: in changed_outside, the agent's state not" \
			"event == 'summary' and '$HOME/notes/n.txt' in changed_outside and set(changed_outside) <= {'$HOME/notes', '$HOME/notes/n.txt'}"
		assert_rec "$E: codex sandbox, a user's file: codex's state apart" \
			"event == 'summary' and (agent_state or {}).get('codex', 0) > 0"
		assert_match "$E: codex sandbox, a user's file: its summary line" \
			"^agenttrace: changed outside the project and temp dirs: .*$HOME/notes/n.txt" \
			"$(cat "$SANDBOX/traced.err")"
		assert_match "$E: codex sandbox, a user's file: the agent's state on its own line" \
			"^agenttrace: the agents' own state, paths written: codex [0-9]+$" \
			"$(cat "$SANDBOX/traced.err")"
	fi
done
home_reset
