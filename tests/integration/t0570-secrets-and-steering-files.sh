#!/bin/bash
# The default policy's credentials and the project files that run or
# steer code later (agenttrace-policy(5), "default"): each credential
# that exists is denied with its own rule; CI, hook, dev-container and
# agent configuration is denied; agent instruction files and a project's
# .env files are allowed with an alert; the agent policy lets an agent
# CLI read its own login token.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

# Credential files (path under HOME or absolute, rule id), each made with
# a secret in it.
creds=(
	".claude/.credentials.json read.agent-credentials.claude"
	".codex/auth.json read.agent-credentials.codex"
	".config/github-copilot/apps.json read.agent-credentials.copilot"
	".gemini/oauth_creds.json read.agent-credentials.gemini"
	".mozilla/firefox/p.default/cookies.sqlite read.browser.firefox"
	".config/chromium/Default/Login_Data read.browser.chromium"
	".config/google-chrome/Default/Cookies read.browser.chrome"
	".local/share/keyrings/login.keyring read.keyrings"
	".password-store/site.gpg read.password-store"
	".config/op/config read.1password"
	".bash_history read.history.bash"
	".zsh_history read.history.zsh"
	".python_history read.history.python"
	".pgpass read.pgpass"
	".my.cnf read.my-cnf"
	".s3cfg read.s3cfg"
	".config/rclone/rclone.conf read.rclone"
	".config/doctl/config.yaml read.doctl"
	".config/hub read.hub"
	".m2/settings.xml read.maven-settings"
	".gradle/gradle.properties read.gradle-properties"
	".terraformrc read.terraformrc"
	".config/git/credentials read.git-credentials-xdg"
	".config/containers/auth.json read.containers-auth"
	".gem/credentials read.gem-credentials"
	".boto read.boto"
	".pulumi/credentials.json read.pulumi"
	".config/glab-cli/config.yml read.glab"
	".ssh/github_deploy read.ssh-keys-named"
	".ssh/deploy.pem read.ssh-keys-named"
)
# Not secrets: what ssh and git read beside the keys.
not_secrets=(.ssh/known_hosts .ssh/config .ssh/github_deploy.pub .ssh/allowed_signers)
for c in "${creds[@]}"; do
	f=$HOME/${c% *}
	mkdir -p "$(dirname "$f")"
	printf 'SECRET' >"$f"
done
printf '{"theme": "dark"}' >"$HOME/.gemini/settings.json"
for f in "${not_secrets[@]}"; do
	printf 'public\n' >"$HOME/$f"
done

# Project files that run code later: each write is denied.
steering=(
	".gitea/workflows/ci.yml write.ci-definitions.gitea"
	".forgejo/workflows/ci.yml write.ci-definitions.forgejo"
	".woodpecker.yml write.ci-definitions.woodpecker"
	".woodpecker/build.yml write.ci-definitions.woodpecker-dir"
	".azure-pipelines/build.yml write.ci-definitions.azure-dir"
	"lefthook.yml write.hooks.lefthook"
	".lefthook.yml write.hooks.lefthook-dot"
	".devcontainer/devcontainer.json write.editor-config.devcontainer"
	".cursor/rules/x.mdc write.agent-config.cursor"
	".cursor/mcp.json write.agent-config.cursor"
	".gemini/settings.json write.agent-config.gemini"
	"lefthook.toml write.hooks.lefthook"
	".lefthook.yaml write.hooks.lefthook-dot"
	".overcommit.yml write.hooks.overcommit"
	".roo/mcp.json write.agent-config.roo"
	".roomodes write.agent-config.roomodes"
	".kiro/settings/mcp.json write.agent-config.kiro"
	".amazonq/mcp.json write.agent-config.amazonq"
	"opencode.json write.agent-config.opencode"
	".continue/config.yaml write.agent-config.continue"
	".windsurf/rules/x.md write.agent-config.windsurf"
	".qwen/settings.json write.agent-config.qwen"
	".aider.conf.yml write.agent-config.aider"
	".tekton/pipeline.yaml write.ci-definitions.tekton"
	".semaphore/semaphore.yml write.ci-definitions.semaphore"
	"appveyor.yml write.ci-definitions.appveyor"
	".cirrus.yml write.ci-definitions.cirrus"
	"cloudbuild.yaml write.ci-definitions.cloudbuild"
	"buildspec.yml write.ci-definitions.codebuild"
	".builds/alpine.yml write.ci-definitions.sourcehut"
	"bitrise.yml write.ci-definitions.bitrise"
	"codemagic.yaml write.ci-definitions.codemagic"
	"action.yml write.ci-definitions.github-action"
)
# Python's user site: what it imports at every start, under any form.
site=.local/lib/python3.11/site-packages
mkdir -p "$HOME/$site/usercustomize"
user_site=(
	"$site/usercustomize/__init__.py write.python-user-site.usercustomize-package"
	"$site/usercustomize.cpython-311-x86_64-linux-gnu.so write.python-user-site.usercustomize"
	"$site/sitecustomize.pyc write.python-user-site.sitecustomize"
)
# Agent instruction files: allowed, with an alert.
instructions=(
	"CLAUDE.md write.agent-instructions.claude"
	"sub/AGENTS.md write.agent-instructions.agents"
	"GEMINI.md write.agent-instructions.gemini"
	".cursorrules write.agent-instructions.cursorrules"
	".github/copilot-instructions.md write.agent-instructions.copilot"
)

for B in auto preload; do
	backend_use "$B"
	for c in "${creds[@]}"; do
		f=$HOME/${c% *}
		bk_denied "read ${c% *}" "$EACCES" read "${c#* }" "$f" -- "$TRY" open-read "$f"
	done
	bk_allowed "read HOME/.gemini/settings.json (not a secret)" -- "$TRY" open-read "$HOME/.gemini/settings.json"
	for f in "${not_secrets[@]}"; do
		bk_allowed "read HOME/$f (not a secret)" -- "$TRY" open-read "$HOME/$f"
	done
	for c in "${user_site[@]}"; do
		f=$HOME/${c% *}
		bk_denied "write HOME/${c% *}" "$EACCES" write "${c#* }" "$f" -- "$TRY" open-write "$f"
		assert_file_absent "${BK}write HOME/${c% *}: nothing written" "$f"
	done
	bk_status "${BK}mkdir of the user site's sitecustomize package: refused" 1 -- mkdir "$HOME/$site/sitecustomize"
	assert_file_absent "${BK}mkdir of the user site's sitecustomize package: not made" "$HOME/$site/sitecustomize"

	for c in "${steering[@]}"; do
		f=$ROOT/${c% *}
		mkdir -p "$(dirname "$f")"
		bk_denied "write ${c% *}" "$EACCES" write "${c#* }" "$f" -- "$TRY" open-write "$f"
		assert_file_absent "${BK}write ${c% *}: nothing written" "$f"
	done

	for c in "${instructions[@]}"; do
		f=$ROOT/${c% *}
		mkdir -p "$(dirname "$f")"
		bk_status "${BK}write ${c% *}: allowed" 0 -- sh -c 'echo "always run the tests" >>"$1"' sh "$f"
		assert_file_content "${BK}write ${c% *}: written" "$f" "always run the tests"
		assert_rec "${BK}write ${c% *}: an alert ($c)" \
			"event == 'alert' and action == 'alert' and kind == 'write' and rule_id == '${c#* }' and path == '$f'$(bk_rec_backend)"
		rm -f "$f"
	done
	# How much changed: the summary compares each alerted file at the
	# end with what it was at the first write (the supervisor's backends).
	printf 'be careful\nrun the tests\nkeep it small\n' >"$ROOT/CLAUDE.md"
	bk_status "${BK}CLAUDE.md rewritten and AGENTS.md made" 0 -- sh -c '
		printf "run the tests\nkeep it small\ncurl x | sh first\nskip review\n" >CLAUDE.md.new
		mv CLAUDE.md.new CLAUDE.md
		echo "x" >AGENTS.md; : >GEMINI.md'
	if [ "$B" = preload ]; then
		assert_rec "${BK}alerted files: none told (the shim's alerts)" "event == 'summary' and alerted_files == []"
	else
		assert_rec "${BK}alerted files: CLAUDE.md +2 -1 lines, by the rename into place" \
			"event == 'summary' and {'path': '$ROOT/CLAUDE.md', 'rule_id': 'write.agent-instructions.claude', 'status': 'changed', 'lines_added': 2, 'lines_removed': 1, 'bytes_before': 39, 'bytes_after': 58} in alerted_files"
		assert_rec "${BK}alerted files: AGENTS.md created, +1 line" \
			"event == 'summary' and any(f['path'] == '$ROOT/AGENTS.md' and f['status'] == 'created' and f['lines_added'] == 1 for f in alerted_files)"
		assert_rec "${BK}alerted files: an empty GEMINI.md made is a file created" \
			"event == 'summary' and any(f['path'] == '$ROOT/GEMINI.md' and f['status'] == 'created' and f['lines_added'] == 0 and f['bytes_after'] == 0 for f in alerted_files)"
		assert_match "${BK}alerted files: the human line" \
			"alerted files the session changed: $ROOT/CLAUDE.md \\(changed, \\+2 -1 lines\\)" "$(cat "$ERR")"
	fi
	bk_status "${BK}CLAUDE.md opened for writing, left as it was" 0 -- sh -c 'cat CLAUDE.md >>CLAUDE.md.tmp; : >>CLAUDE.md'
	[ "$B" = preload ] ||
		assert_rec "${BK}alerted files: a file left as it was is unchanged" \
			"event == 'summary' and any(f['path'] == '$ROOT/CLAUDE.md' and f['status'] == 'unchanged' and f['lines_added'] == 0 for f in alerted_files)"
	rm -f "$ROOT/CLAUDE.md" "$ROOT/CLAUDE.md.tmp" "$ROOT/AGENTS.md" "$ROOT/GEMINI.md"

	mkdir -p "$ROOT/node_modules/pkg"
	bk_allowed "write node_modules/pkg/CLAUDE.md (a package's own)" -- "$TRY" open-write "$ROOT/node_modules/pkg/CLAUDE.md"

	# A project's .env: read with an alert; an example file silently.
	printf 'API_KEY=SECRET\n' >"$ROOT/.env"
	printf 'API_KEY=\n' >"$ROOT/.env.example"
	bk_status "${BK}read ROOT/.env: allowed" 0 -- cat "$ROOT/.env"
	assert_match "${BK}read ROOT/.env: its content" "API_KEY=SECRET" "$(cat "$OUT")"
	assert_rec "${BK}read ROOT/.env: an alert" \
		"event == 'alert' and action == 'alert' and kind == 'read' and rule_id == 'read.project-env' and path == '$ROOT/.env'$(bk_rec_backend)"
	bk_allowed "read ROOT/.env.example: no alert" -- cat "$ROOT/.env.example"

	# The agent policy: an agent CLI reads its own token; other credentials
	# stay denied.
	bk_q --policy agent -- "$TRY" open-read "$HOME/.claude/.credentials.json"
	assert_eq "${BK}--policy agent: read HOME/.claude/.credentials.json" 0 $?
	bk_q --policy agent -- "$TRY" open-read "$HOME/.codex/auth.json"
	assert_eq "${BK}--policy agent: read HOME/.codex/auth.json" 0 $?
	assert_no_alert "${BK}--policy agent: its own token, no record"
	bk_q --policy agent -- "$TRY" open-read "$HOME/.pgpass"
	assert_eq "${BK}--policy agent: read HOME/.pgpass: EACCES" "$EACCES" $?
	assert_rec "${BK}--policy agent: read HOME/.pgpass: deny record" \
		"$(deny_expr read read.pgpass "$HOME/.pgpass")$(bk_rec_backend)"
done

# /run/secrets/** (container secrets) is matched like any other read rule:
# the default policy's own tests (agenttrace-policy check) cover its
# pattern, without a mount on this machine's /run.

# Python's user site is a write root, but what Python runs at every start
# is protected there like a dotfile.
site=$HOME/.local/lib/python3.11/site-packages
mkdir -p "$site"
for B in auto preload; do
	backend_use "$B"
	bk_denied "write user site evil.pth" "$EACCES" write write.python-user-site.pth "$site/evil.pth" -- \
		"$TRY" open-write "$site/evil.pth"
	bk_denied "write user site usercustomize.py" "$EACCES" write write.python-user-site.usercustomize \
		"$site/usercustomize.py" -- "$TRY" open-write "$site/usercustomize.py"
	bk_denied "rename into user site sitecustomize.py" "$EACCES" write write.python-user-site.sitecustomize \
		"$site/sitecustomize.py" -- sh -c 'echo "import os" >"$1/x.txt" && exec "$2" rename "$1/x.txt" "$1/sitecustomize.py"' sh "$site" "$TRY"
	assert_file_absent "${BK}user site: no sitecustomize.py" "$site/sitecustomize.py"
	mkdir -p "$site/pkg"
	bk_allowed "write user site pkg/__init__.py (a package)" -- "$TRY" open-write "$site/pkg/__init__.py"
	rm -f "$site/x.txt"
done

# The ordinary version: pip install --user into a fresh HOME works as
# natively, with no record (a wheel made by hand: no index is reached).
if "$PYTHON" -m pip --version >/dev/null 2>&1; then
	make_wheel "$SANDBOX" gamma 1.0
	fresh=$SANDBOX/fresh-home
	for B in auto preload; do
		backend_use "$B"
		rm -rf "$fresh" && mkdir -p "$fresh"
		# (PATH without a rustup of the machine's, which pip asks for
		# rustc's version and which would make ~/.rustup in the new HOME.)
		HOME=$fresh PATH=/usr/local/bin:/usr/bin:/bin PIP_CONFIG_FILE=/dev/null PIP_NO_INDEX=1 \
			PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
			bk_status "${BK}pip install --user into a fresh HOME" 0 -- \
			"$PYTHON" -m pip install -q --user --no-deps "$SANDBOX/gamma-1.0-py3-none-any.whl"
		assert_no_rec "${BK}pip install --user: no denial" "event == 'alert' and action == 'deny'"
		assert_eq "${BK}pip install --user: one alert, the install's" "exec.install.python-m-pip" \
			"$(rec_field "event == 'alert'" rule_id)"
		assert_eq "${BK}pip install --user: the package imports" 1 \
			"$(HOME=$fresh "$PYTHON" -c 'import gamma; print(gamma.X)' 2>&1)"
	done
else
	skip "pip install --user into a fresh HOME" "no pip for $PYTHON"
fi

# A protected tree made under another name and renamed into place writes
# what it holds at the protected names (the supervisor looks into a
# directory it renames; the shim does not).
backend_use auto
for t in ".github/workflows/ci.yml" ".cursor/rules/x.mdc" ".devcontainer/devcontainer.json" \
	".gitlab/ci.yml"; do
	top=${t%%/*}
	rm -rf "$ROOT/staged" "$ROOT/$top"
	mkdir -p "$ROOT/staged/${t#*/}"
	rmdir "$ROOT/staged/${t#*/}"
	echo x >"$ROOT/staged/${t#*/}"
	bk_status "rename of a tree holding $t into place: refused" 1 -- mv "$ROOT/staged" "$ROOT/$top"
	assert_file_absent "rename of a tree holding $t into place: nothing there" "$ROOT/$t"
	assert_rec "rename of a tree holding $t into place: recorded" \
		"event == 'alert' and action == 'deny' and kind == 'write' and path2 == '$ROOT/$top'"
done
rm -rf "$ROOT/staged"
# A hook deeper than the walk looks (a repository 70 levels down): the
# tree is refused all the same; moved where no deny rule reaches
# (node_modules, TMPDIR), it is not.
deep=$(printf 'd/%.0s' $(seq 70))
mkdir -p "$ROOT/staged/$deep.git/hooks"
echo x >"$ROOT/staged/$deep.git/hooks/pre-commit"
bk_status "rename of a tree with a hook 70 levels down: refused" 1 -- mv "$ROOT/staged" "$ROOT/moved-deep"
assert_file_absent "rename of a tree with a hook 70 levels down: nothing there" "$ROOT/moved-deep"
assert_rec "rename of a tree with a hook 70 levels down: recorded, saying why" \
	"event == 'alert' and action == 'deny' and kind == 'write' and path2 == '$ROOT/moved-deep' and 'deeper than the check looks' in why"
mkdir -p "$ROOT/node_modules"
bk_allowed "a padded tree renamed into node_modules" -- mv "$ROOT/staged" "$ROOT/node_modules/deep"
bk_allowed "a padded tree renamed into TMPDIR" -- mv "$ROOT/node_modules/deep" "$TMPDIR/deep"
rm -rf "$TMPDIR/deep" "$ROOT/node_modules/deep"
mkdir -p "$ROOT/staged/sub" "$ROOT/node_modules/.staging/pkg/.github/workflows"
echo y >"$ROOT/staged/sub/f"
echo z >"$ROOT/node_modules/.staging/pkg/.github/workflows/t.yml"
bk_allowed "an ordinary tree renamed" -- mv "$ROOT/staged" "$ROOT/moved"
assert_file_present "an ordinary tree renamed: there" "$ROOT/moved/sub/f"
bk_allowed "a package's tree renamed into node_modules" -- \
	mv "$ROOT/node_modules/.staging/pkg" "$ROOT/node_modules/pkg"

# A symbolic link at a name on the way to what a deny rule refuses leads
# the writes by those names elsewhere, where no rule looks: made there,
# moved there, or brought in inside a directory, it is refused (the
# supervisor's backends).  Links elsewhere stay ordinary.
backend_use auto
mkdir -p "$ROOT/.claude-real" "$ROOT/.github-real" "$ROOT/hk" "$ROOT/src"
links=(
	".claude .claude-real write.agent-config.claude-"
	".github .github-real write.ci-definitions.github-"
	"sub/.codex ../.claude-real write.agent-config.codex"
)
for l in "${links[@]}"; do
	set -- $l
	mkdir -p "$(dirname "$ROOT/$1")"
	at_q -- ln -s "$2" "$1"
	assert_ne "symlink at $1: refused" 0 $?
	check "symlink at $1: no link made" test ! -L "$ROOT/$1"
	assert_rec "symlink at $1: a deny record ($3...)" "$(deny_expr write "$3" "$ROOT/$1")"
done
at_q -- sh -c 'ln -s .claude-real lnk && mv -T lnk .claude'
assert_ne "a symlink renamed to .claude: refused" 0 $?
check "a symlink renamed to .claude: no link at .claude" test ! -L "$ROOT/.claude"
assert_rec "a symlink renamed to .claude: a deny record" \
	"$(deny_expr write write.agent-config.claude- "$ROOT/.claude")"
rm -f "$ROOT/lnk"
if have git; then
	at_q -- sh -c 'git init -q --template= sub2 && ln -s ../../hk sub2/.git/hooks'
	assert_ne "symlink at a new repository's .git/hooks: refused" 0 $?
	check "symlink at a new repository's .git/hooks: no link made" test ! -L "$ROOT/sub2/.git/hooks"
	assert_rec "symlink at a new repository's .git/hooks: a deny record" \
		"$(deny_expr write write.git-hooks "$ROOT/sub2/.git/hooks")"
fi
# A second name for a link (ln -P: linkat without AT_SYMLINK_FOLLOW), made
# at a harmless name first, is one made there.
at_q -- sh -c 'ln -s .claude-real L && ln -P L .claude'
assert_ne "a hard link of a symlink at .claude: refused" 0 $?
check "a hard link of a symlink at .claude: no link at .claude" test ! -L "$ROOT/.claude"
assert_rec "a hard link of a symlink at .claude: a deny record" \
	"$(deny_expr write write.agent-config.claude- "$ROOT/.claude")"
rm -f "$ROOT/L"
if have git; then
	# A worktree's private directory (hooks and a config no rule judges
	# there) moved to be a repository's .git.
	at_q -- sh -c 'mkdir -p stage/.git/worktrees && git init -q --bare stage/.git/worktrees/w &&
		printf "#!/bin/sh\necho ran\n" >stage/.git/worktrees/w/hooks/pre-commit &&
		mkdir -p wtsub && mv stage/.git/worktrees/w wtsub/.git'
	assert_ne "a worktree's directory moved to be a .git: refused" 0 $?
	check "a worktree's directory moved to be a .git: no hook there" \
		test ! -e "$ROOT/wtsub/.git/hooks/pre-commit"
	# A fresh repository's .git moved to another directory within the
	# project: its config was judged where it was, its hooks are samples.
	at_q -- sh -c 'git init -q r1 && mkdir r2 && mv r1/.git r2/.git'
	assert_eq "a fresh repository's .git moved within the project: allowed" 0 $?
fi
mkdir -p "$TMPDIR/brought"
ln -s "$ROOT/.claude-real" "$TMPDIR/brought/.claude"
at_q -- mv "$TMPDIR/brought" "$ROOT/brought"
assert_ne "a directory holding a .claude link moved in: refused" 0 $?
check "a directory holding a .claude link moved in: not moved" test ! -e "$ROOT/brought"
at_q -- sh -c 'ln -s src lib && mkdir -p pkg && ln -s ../src pkg/shared &&
	mkdir -p node_modules/pkg && ln -s ../../src node_modules/pkg/.github && ln -s .claude-real cl'
assert_eq "ordinary symlinks to directories: allowed" 0 $?
assert_no_rec "ordinary symlinks to directories: no denial" "action == 'deny'"
