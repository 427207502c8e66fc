#!/bin/bash
# CI's own channels (agenttrace(1), "CI channels"): under the default
# policy a step may write $GITHUB_ENV, $GITHUB_PATH, $GITHUB_OUTPUT and
# $GITHUB_STATE; when the session ends, an entry of $GITHUB_ENV that would
# load code into later steps, a $GITHUB_PATH entry outside the workspace
# and what is no entry at all are taken out again, each with a record.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

runner=$SANDBOX/runner
mkdir -p "$runner"
export GITHUB_ENV=$runner/set_env GITHUB_PATH=$runner/add_path GITHUB_OUTPUT=$runner/set_output \
	GITHUB_STATE=$runner/save_state
fresh() { : >"$GITHUB_ENV"; : >"$GITHUB_PATH"; : >"$GITHUB_OUTPUT"; : >"$GITHUB_STATE"; }
chan_expr() { # RULE DETAIL
	printf "event == 'alert' and action == '%s' and kind == 'write' and rule_id == '%s' and ' %s,' in why" \
		"${3:-deny}" "$1" "$2"
}

for B in auto preload; do
	backend_use "$B"
	fresh
	bk_q -- sh -c '
		echo "GREETING=hello" >>"$GITHUB_ENV"
		echo "LD_PRELOAD=$PWD/evil.so" >>"$GITHUB_ENV"
		printf "NODE_OPTIONS<<EOF\n--require ./x.js\nEOF\n" >>"$GITHUB_ENV"
		printf "NOTES<<END\nLD_PRELOAD=is only text here\nEND\n" >>"$GITHUB_ENV"
		echo "BASH_ENV=$PWD/x.sh" >>"$GITHUB_ENV"
		echo "GIT_CONFIG_GLOBAL=$PWD/g" >>"$GITHUB_ENV"
		echo "PATH=/tmp/evil:/usr/bin" >>"$GITHUB_ENV"
		echo "HOME=$PWD/fake-home" >>"$GITHUB_ENV"
		echo "GIT_TEMPLATE_DIR=$PWD/tpl" >>"$GITHUB_ENV"
		echo "RUSTC_WRAPPER=$PWD/w" >>"$GITHUB_ENV"
		echo "npm_config_script_shell=$PWD/sh" >>"$GITHUB_ENV"
		echo "$PWD/bin" >>"$GITHUB_PATH"
		echo /tmp/evil >>"$GITHUB_PATH"
		echo "$PWD/../outside" >>"$GITHUB_PATH"
		echo relative/bin >>"$GITHUB_PATH"
		echo "result=ok" >>"$GITHUB_OUTPUT"
		echo "LD_PRELOAD=as an output is a string" >>"$GITHUB_OUTPUT"
		echo "pid=1" >>"$GITHUB_STATE"'
	assert_eq "${BK}a step writing the channels: exit 0" 0 $?
	assert_eq "${BK}\$GITHUB_ENV keeps what loads nothing" \
		"$(printf 'GREETING=hello\nNOTES<<END\nLD_PRELOAD=is only text here\nEND')" "$(cat "$GITHUB_ENV")"
	for v in LD_PRELOAD NODE_OPTIONS BASH_ENV GIT_CONFIG_GLOBAL PATH HOME GIT_TEMPLATE_DIR RUSTC_WRAPPER \
		npm_config_script_shell; do
		assert_rec "${BK}\$GITHUB_ENV: $v taken out, recorded" "$(chan_expr write.ci-channel.github-env "$v")"
	done
	assert_eq "${BK}\$GITHUB_PATH keeps the workspace's entry" "$ROOT/bin" "$(cat "$GITHUB_PATH")"
	for p in /tmp/evil "$ROOT/../outside" relative/bin; do
		assert_rec "${BK}\$GITHUB_PATH: $p taken out, recorded" "$(chan_expr write.ci-channel.github-path "$p")"
	done
	assert_eq "${BK}\$GITHUB_OUTPUT is written, as the step wrote it" \
		"$(printf 'result=ok\nLD_PRELOAD=as an output is a string')" "$(cat "$GITHUB_OUTPUT")"
	assert_eq "${BK}\$GITHUB_STATE is written" "pid=1" "$(cat "$GITHUB_STATE")"
	assert_rec "${BK}the summary counts the channels' denials" "event == 'summary' and denials == 12"

	# What the runner could not read as an entry is not left for it.
	fresh
	bk_q -- sh -c 'printf "OK=1\njust text\nOPEN<<EOF\nLD_PRELOAD=x\n" >>"$GITHUB_ENV"'
	assert_eq "${BK}\$GITHUB_ENV: only the entry that parses stays" "OK=1" "$(cat "$GITHUB_ENV")"
	assert_eq "${BK}\$GITHUB_ENV: the line and the open heredoc recorded" 2 \
		"$(rec_count "event == 'alert' and rule_id == 'write.ci-channel.github-env'")"

	# A step that rewrites the file: what was there is put back, what it
	# wrote is judged.
	printf 'EARLIER=1\n' >"$GITHUB_ENV"
	bk_q -- sh -c 'printf "LATER=2\nLD_AUDIT=x\n" >"$GITHUB_ENV"'
	assert_eq "${BK}\$GITHUB_ENV rewritten: the earlier entry back, the harmless one kept" \
		"$(printf 'EARLIER=1\nLATER=2')" "$(cat "$GITHUB_ENV")"
	assert_rec "${BK}\$GITHUB_ENV rewritten: LD_AUDIT recorded" "$(chan_expr write.ci-channel.github-env LD_AUDIT)"

	# The channel replaced by what the runner would follow or block on: a
	# symlink to a file of the command's, a hard link to one, a FIFO, a
	# directory.  A regular file with the start's content is put back.
	# Landlock refuses the unlink in the runner's dir where the kernel has
	# it; these run as on a kernel without (the shim has none either).
	printf 'LD_PRELOAD=%s/evil.so\n' "$ROOT" >"$ROOT/evil-env"
	for how in symlink hardlink fifo dir; do
		printf 'EARLIER=1\n' >"$GITHUB_ENV"
		case $how in
		symlink) swap='rm -f "$GITHUB_ENV" && ln -s "$PWD/evil-env" "$GITHUB_ENV"' ;;
		hardlink) swap='rm -f "$GITHUB_ENV" && ln "$PWD/evil-env" "$GITHUB_ENV"' ;;
		fifo) swap='rm -f "$GITHUB_ENV" && mkfifo "$GITHUB_ENV"' ;;
		dir) swap='rm -f "$GITHUB_ENV" && mkdir "$GITHUB_ENV"' ;;
		esac
		AGENTTRACE_TEST_LANDLOCK_ABI=0 bk_q -- sh -c "$swap"
		assert_eq "${BK}\$GITHUB_ENV replaced by a $how: the command did it" 0 $?
		if [ -f "$GITHUB_ENV" ] && [ ! -L "$GITHUB_ENV" ] && [ "$(stat -c %h "$GITHUB_ENV")" = 1 ]; then
			ok "${BK}\$GITHUB_ENV replaced by a $how: a regular file of its own again"
		else
			not_ok "${BK}\$GITHUB_ENV replaced by a $how: a regular file of its own again" \
				"$(ls -ld "$GITHUB_ENV" 2>&1)"
		fi
		assert_eq "${BK}\$GITHUB_ENV replaced by a $how: the start's content" "EARLIER=1" \
			"$(timeout 5 cat "$GITHUB_ENV" 2>&1)"
		if [ "$how" = hardlink ]; then
			assert_rec "${BK}\$GITHUB_ENV replaced by a $how: its entry judged" \
				"$(chan_expr write.ci-channel.github-env LD_PRELOAD)"
		else
			assert_rec "${BK}\$GITHUB_ENV replaced by a $how: recorded" \
				"event == 'alert' and action == 'deny' and rule_id == 'write.ci-channel.github-env' and 'not a regular file' in why"
		fi
		assert_eq "${BK}\$GITHUB_ENV replaced by a $how: the command's file untouched" \
			"LD_PRELOAD=$ROOT/evil.so" "$(cat "$ROOT/evil-env")"
		rm -rf "$GITHUB_ENV"
		: >"$GITHUB_ENV"
	done
	assert_eq "${BK}nothing of the swaps left beside the channels" \
		"add_path save_state set_env set_output" "$(ls "$runner" | tr '\n' ' ' | sed 's/ $//')"
	# Taken away, it comes back with what the job had written before.
	printf 'EARLIER=1\n' >"$GITHUB_ENV"
	AGENTTRACE_TEST_LANDLOCK_ABI=0 bk_q -- sh -c 'rm "$GITHUB_ENV"'
	assert_eq "${BK}\$GITHUB_ENV removed: back with the start's content" "EARLIER=1" \
		"$(timeout 5 cat "$GITHUB_ENV" 2>&1)"

	# A process that outlives the command writes before the runner reads:
	# it is ended first, then the file is judged.
	fresh
	bk_q -- sh -c '(sleep 2; echo LD_PRELOAD=late >>"$GITHUB_ENV") >/dev/null 2>&1 & exit 0'
	sleep 3
	assert_eq "${BK}a process left running cannot write after the judgment" "" "$(cat "$GITHUB_ENV")"

	# Audit mode refuses nothing: the entries stay, the alerts say what.
	fresh
	bk_q --policy audit -- sh -c 'echo "LD_PRELOAD=x" >>"$GITHUB_ENV"'
	assert_eq "${BK}audit: the entry stays" "LD_PRELOAD=x" "$(cat "$GITHUB_ENV")"
	assert_rec "${BK}audit: an alert" "$(chan_expr write.ci-channel.github-env LD_PRELOAD alert)"

	# A harmless step leaves no record.
	fresh
	bk_q -- sh -c 'echo "A=1" >>"$GITHUB_ENV"; echo "$PWD/node_modules/.bin" >>"$GITHUB_PATH"; echo "o=1" >>"$GITHUB_OUTPUT"'
	assert_eq "${BK}a harmless step: exit 0" 0 $?
	assert_no_alert "${BK}a harmless step: no record"
done

# Without the variables nothing is allowed that was not: the files are
# outside every write root.
unset GITHUB_OUTPUT
backend_use auto
bk_q -- sh -c 'echo o=1 >>"$1"' sh "$runner/set_output"
assert_ne "no \$GITHUB_OUTPUT in the environment: its file is not writable" 0 $?

# --- GitLab CI: the job's dotenv reports ------------------------------------
# Their NAME=VALUE lines become variables of the later jobs: under
# GITLAB_CI the files .gitlab-ci.yml names as dotenv reports (or those
# AGENTTRACE_GITLAB_DOTENV names) are judged as $GITHUB_ENV is.
unset GITHUB_ENV GITHUB_PATH GITHUB_STATE
cat >"$ROOT/.gitlab-ci.yml" <<'YAML'
build:
  script: [make]
  artifacts:
    reports:
      dotenv: build.env
deploy:
  artifacts:
    reports:
      dotenv:
        - "deploy.env"   # a list
YAML
dotenv_expr() { # FILE NAME
	printf "event == 'alert' and action == 'deny' and kind == 'write' and rule_id == 'write.ci-channel.gitlab-dotenv' and ' %s,' in why and path == '%s'" "$2" "$ROOT/$1"
}
for B in auto preload; do
	backend_use "$B"
	rm -f "$ROOT/build.env" "$ROOT/deploy.env" "$ROOT/other.env"
	GITLAB_CI=true bk_q -- sh -c 'printf "VERSION=1.2\nLD_PRELOAD=/x.so\nNODE_OPTIONS=--require ./x.js\nPATH=/evil:/usr/bin\nURL=x\n" >build.env
		printf "BASH_ENV=./x.sh\nOK=1\n" >deploy.env'
	assert_eq "${BK}GitLab: the job ran" 0 $?
	assert_eq "${BK}GitLab: build.env keeps what loads nothing" "$(printf 'VERSION=1.2\nURL=x')" "$(cat "$ROOT/build.env")"
	assert_eq "${BK}GitLab: deploy.env (a list item) judged too" "OK=1" "$(cat "$ROOT/deploy.env")"
	for v in LD_PRELOAD NODE_OPTIONS PATH; do
		assert_rec "${BK}GitLab: $v taken out of build.env, recorded" "$(dotenv_expr build.env "$v")"
	done
	assert_rec "${BK}GitLab: BASH_ENV taken out of deploy.env, recorded" "$(dotenv_expr deploy.env BASH_ENV)"

	# Named by the variable instead of the CI file; not under GitLab: untouched.
	rm -f "$ROOT/other.env" "$ROOT/build.env"
	GITLAB_CI=true AGENTTRACE_GITLAB_DOTENV=other.env bk_q -- sh -c 'echo LD_AUDIT=x >other.env; echo LD_AUDIT=x >build.env'
	assert_eq "${BK}AGENTTRACE_GITLAB_DOTENV: its file judged" "" "$(cat "$ROOT/other.env")"
	assert_eq "${BK}AGENTTRACE_GITLAB_DOTENV: the CI file's names then not" "LD_AUDIT=x" "$(cat "$ROOT/build.env")"
	rm -f "$ROOT/build.env"
	bk_q -- sh -c 'echo LD_PRELOAD=x >build.env'
	assert_eq "${BK}not under GitLab CI: build.env as written" "LD_PRELOAD=x" "$(cat "$ROOT/build.env")"
	assert_no_alert "${BK}not under GitLab CI: no record"
	# A report the session did not change is not judged.
	printf 'LD_PRELOAD=from-an-earlier-job\n' >"$ROOT/build.env"
	GITLAB_CI=true bk_q -- sh -c 'echo hi'
	assert_eq "${BK}GitLab: a report left as it was is untouched" "LD_PRELOAD=from-an-earlier-job" "$(cat "$ROOT/build.env")"
	assert_no_alert "${BK}GitLab: a report left as it was: no record"
done
rm -f "$ROOT/.gitlab-ci.yml" "$ROOT/build.env" "$ROOT/deploy.env" "$ROOT/other.env"
