#!/bin/bash
# Rules with "under" (agenttrace-policy(5), RULES): a rule that matches
# only below a program.  The registries policy refuses a git fetch that an
# installer runs, whichever file named the repository, and lets the same
# git command run by anyone else.  The line of programs survives what a
# process can do to leave it: an exec of another program, a cleared
# environment, a double fork that orphans the fetch, a line of execs
# deeper than the supervisor keeps.  Nothing is fetched: the repositories
# are local.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace
have git || skip_all "no git"

git init -q "$SANDBOX/repo"
echo hello >"$SANDBOX/repo/README"
(cd "$SANDBOX/repo" && git add . && git -c user.name=t -c user.email=t@t commit -qm one)
URL=file://$SANDBOX/repo

# A stand-in installer: a script named pip that runs what follows its
# subcommand
# (the name is what the rule matches, as for pip's own script).
cat >"$ROOT/bin/pip" <<'EOF'
#!/bin/sh
shift
exec "$@"
EOF
chmod +x "$ROOT/bin/pip"
# deep N CMD...: N execs of itself, then CMD.
cat >"$ROOT/bin/deep" <<'EOF'
#!/bin/sh
n=$1; shift
if [ "$n" -gt 0 ]; then exec "$0" $((n - 1)) "$@"; fi
exec "$@"
EOF
chmod +x "$ROOT/bin/deep"

fetch_denied="event == 'alert' and action == 'deny' and kind == 'exec' and rule_id == 'exec.install-source.git-fetch'"

# The URL stays out of the installer's own command line, as when a file
# names it (else the command-line rules refuse the install itself).
export REPO_URL=$URL
n=0
next_clone() { n=$((n + 1)); C=$ROOT/clone$n; }
backend_use auto

next_clone
at_q --policy registries -- git clone -q "$URL" "$C"
assert_eq "git clone by the user: runs" 0 $?
assert_no_rec "git clone by the user: no denial" "$fetch_denied"

next_clone
at_q --policy registries -- "$ROOT/bin/pip" install sh -c 'exec git clone -q "$REPO_URL" "$0"' "$C"
assert_ne "git clone under pip install: refused" 0 $?
assert_rec "git clone under pip install: its record names the rule" "$fetch_denied and target_argv[:2] == ['git', 'clone']"
[ ! -d "$C" ]
assert_eq "git clone under pip install: nothing cloned" 0 $?

# Replayed, the record's own process is the line: the same policy decides
# the same, one without the rule admits the clone.  (The repository by
# its path: a URL on pip's command line is refused before it runs.)
next_clone
at_q --policy registries -- "$ROOT/bin/pip" install git clone -q "$SANDBOX/repo" "$C"
assert_rec "git clone run by pip itself: refused" "$fetch_denied"
cp "$LOG" "$SANDBOX/under.jsonl"
"$top_builddir/agenttrace-policy" replay "$SANDBOX/under.jsonl" --policy registries -q >"$OUT" 2>"$ERR"
assert_eq "replay under registries: decided the same (exit 0)" 0 $?
"$top_builddir/agenttrace-policy" replay "$SANDBOX/under.jsonl" --policy ci -q >"$OUT" 2>"$ERR"
assert_eq "replay under ci: decided otherwise (exit 1)" 1 $?
assert_match "replay under ci: the clone was denied, now allowed" "^was deny, now allow: exec /usr/bin/git clone" "$(cat "$OUT")"

at_q --policy registries -- "$ROOT/bin/pip" install git -C "$SANDBOX/repo" log -1 --format=%s
assert_eq "git log under pip install: runs" 0 $?
assert_no_rec "git log under pip install: no denial" "$fetch_denied"

next_clone
at_q --policy registries -- "$ROOT/bin/pip" list sh -c 'exec git clone -q "$REPO_URL" "$0"' "$C"
assert_eq "git clone under pip list (no install): runs" 0 $?

# The denial's fix admits the next run too, whose clone goes to a new
# temp dir, as pip's does (the temp path is a glob in the suggestion).
clone_tmp='exec git clone -q "$REPO_URL" "$(mktemp -d)/c"'
at_q --policy registries -- "$ROOT/bin/pip" install sh -c "$clone_tmp"
layer=$(rec_field "$fetch_denied and has('suggest')" suggest)
printf '%s\n' "$layer" >"$SANDBOX/fix.json"
assert_match "the suggestion exempts the rule, the temp dir a glob" \
	'"overrides":\["exec.install-source.git-fetch"\]' "$layer"
assert_match "the suggestion: the clone's dir is a glob" '"\$\{TMPDIR\}/\*"' "$layer"
at_q --policy "$SANDBOX/fix.json" -- "$ROOT/bin/pip" install sh -c "$clone_tmp"
assert_eq "under the suggested layer, the next clone (a new temp dir) runs" 0 $?
assert_no_rec "under the suggested layer: no denial" "$fetch_denied"

# Ways out of the line that do not leave it.
next_clone
at_q --policy registries -- "$ROOT/bin/pip" install sh -c 'exec env -i /usr/bin/git clone -q "$REPO_URL" "$0"' "$C"
assert_rec "under pip: env -i, then exec git: refused" "$fetch_denied"
assert_eq "under pip: env -i, then exec git: nothing cloned" no "$([ -d "$C" ] && echo yes || echo no)"
next_clone
at_q --policy registries -- "$ROOT/bin/pip" install sh -c '
	(setsid sh -c "git clone -q \"\$REPO_URL\" \"$0\"; echo \$? >\"$0.rc\"" &)
	while [ ! -f "$0.rc" ]; do sleep 0.05; done' "$C"
assert_ne "under pip: a double fork, its parent gone, then git clone: refused" 0 "$(cat "$C.rc")"
assert_rec "under pip: the orphan's clone has its record" "$fetch_denied"
next_clone
at_q --policy registries -- "$ROOT/bin/pip" install "$ROOT/bin/deep" 20 sh -c 'exec git clone -q "$REPO_URL" "$0"' "$C"
assert_rec "under pip: 20 execs deep, git clone: refused" "$fetch_denied"
# Other ways git fetches: the command named by argv[0] (git-clone, as git's
# own exec dir has it, or exec -a), the plumbing (fetch-pack, archive
# --remote, what clone runs on the other side: upload-pack).
gitdir=$(git --exec-path)
next_clone
at_q --policy registries -- "$ROOT/bin/pip" install sh -c 'exec "$1/git-clone" -q "$REPO_URL" "$0"' "$C" "$gitdir"
assert_rec "under pip: git's exec dir's git-clone: refused" "$fetch_denied or rule_id == 'exec.install-source.git-dashed'"
assert_eq "under pip: git-clone: nothing cloned" no "$([ -d "$C" ] && echo yes || echo no)"
next_clone
at_q --policy registries -- "$ROOT/bin/pip" install bash -c 'exec -a git-clone "$(command -v git)" -q "$REPO_URL" "$0"' "$C"
assert_rec "under pip: exec -a git-clone git: refused" "rule_id == 'exec.install-source.git-dashed'"
assert_eq "under pip: exec -a git-clone: nothing cloned" no "$([ -d "$C" ] && echo yes || echo no)"
next_clone
at_q --policy registries -- "$ROOT/bin/pip" install sh -c 'git init -q "$0" && cd "$0" && git fetch-pack "$REPO_URL" HEAD' "$C"
assert_rec "under pip: git fetch-pack: refused" "$fetch_denied and 'fetch-pack' in target_argv"
assert_eq "under pip: fetch-pack: no objects came" "" "$(find "$C/.git/objects" -type f 2>/dev/null | grep -v '/info/\|/pack/' | head -1)"
next_clone
mkdir -p "$C"
at_q --policy registries -- "$ROOT/bin/pip" install sh -c 'git archive --remote="$REPO_URL" HEAD | tar -x -C "$0"' "$C"
assert_rec "under pip: git archive --remote: refused" "rule_id == 'exec.install-source.git-archive'"
assert_file_absent "under pip: git archive --remote: nothing extracted" "$C/README"

# Past the 128 programs a line keeps, what ran above is not known: the
# rule matches (fail closed), even with no installer above.
next_clone
at_q --policy registries -- "$ROOT/bin/pip" install "$ROOT/bin/deep" 140 sh -c 'exec git clone -q "$REPO_URL" "$0"' "$C"
assert_rec "under pip: 140 execs deep, git clone: refused" "$fetch_denied"
next_clone
at_q --policy registries -- "$ROOT/bin/deep" 140 sh -c 'exec git clone -q "$REPO_URL" "$0"' "$C"
assert_rec "no installer, 140 execs deep: refused too (the line was cut)" "$fetch_denied"
next_clone
at_q --policy registries -- "$ROOT/bin/deep" 100 sh -c 'exec git clone -q "$REPO_URL" "$0"' "$C"
assert_eq "no installer, 100 execs deep: runs" 0 $?

# A net rule with "under": a connection to the session's own loopback
# listener, refused only below pip.
cat >"$SANDBOX/net-under.json" <<'EOF'
{"agenttrace": 1, "extends": "default",
 "net": {"deny": [{"id": "net.test.under-pip", "addr": "127.0.0.1", "under": ["pip"]}]}}
EOF
self_connect='import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(); c = socket.socket(); c.connect(s.getsockname()); print("connected")'
at_q --policy "$SANDBOX/net-under.json" -- "$PYTHON" -c "$self_connect"
assert_eq "net under pip: the same connect outside pip runs" connected "$(cat "$OUT")"
at_q --policy "$SANDBOX/net-under.json" -- "$ROOT/bin/pip" install "$PYTHON" -c "$self_connect"
assert_ne "net under pip: refused below pip" connected "$(cat "$OUT")"
assert_rec "net under pip: its record" "event == 'alert' and action == 'deny' and kind == 'net' and rule_id == 'net.test.under-pip'"

# Real installers, where they are here: the repository named in a file.
if [ -n "$PYTHON" ] && "$PYTHON" -m pip --version >/dev/null 2>&1; then
	mkdir -p "$SANDBOX/pyrepo"
	printf 'from setuptools import setup\nsetup(name="gamma", version="0.1", py_modules=[])\n' >"$SANDBOX/pyrepo/setup.py"
	(cd "$SANDBOX/pyrepo" && git init -q && git add . && git -c user.name=t -c user.email=t@t commit -qm one)
	echo "git+file://$SANDBOX/pyrepo#egg=gamma" >"$ROOT/requirements.txt"
	PIP_CONFIG_FILE=/dev/null PIP_NO_INDEX=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
		at_q --policy registries -- "$PYTHON" -m pip install -q --no-build-isolation --prefix "$ROOT/pfx" -r requirements.txt
	assert_ne "pip install -r requirements.txt naming a git repository: refused" 0 $?
	assert_rec "pip: the installer's clone has its record" "$fetch_denied and target_argv[:2] == ['git', 'clone']"
	# Under the default policy pip clones it (whether it then builds
	# depends on this machine's setuptools and wheel).
	PIP_CONFIG_FILE=/dev/null PIP_NO_INDEX=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
		at_q -- "$PYTHON" -m pip install -q --no-build-isolation --prefix "$ROOT/pfx" -r requirements.txt
	assert_no_rec "pip, the same requirements under the default policy: the clone is not refused" \
		"event == 'alert' and action == 'deny' and kind == 'exec'"
else
	skip "pip and a requirements file" "no pip for $PYTHON"
fi
if have npm; then
	mkdir -p "$SANDBOX/jsrepo" "$ROOT/web"
	printf '{"name":"jsgit","version":"1.0.0"}\n' >"$SANDBOX/jsrepo/package.json"
	(cd "$SANDBOX/jsrepo" && git init -q && git add . && git -c user.name=t -c user.email=t@t commit -qm one)
	printf '{"name":"web","version":"1.0.0","dependencies":{"jsgit":"git+file://%s"}}\n' "$SANDBOX/jsrepo" >"$ROOT/web/package.json"
	npm_config_registry=http://127.0.0.1:9/ npm_config_update_notifier=false \
		at_q --policy registries -- sh -c 'cd web && npm install --no-audit --no-fund'
	assert_ne "npm install of a package.json naming a git repository: refused" 0 $?
	assert_rec "npm: the installer's git has its record" "$fetch_denied"
	# npm's own "git" setting, in the project's .npmrc, naming a wrapper
	# that runs git under a dashed name.
	printf '#!/bin/bash\nwhile [ "${1#-}" != "$1" ]; do [ "$1" = -c ] && shift; shift; done\ns=$1; shift\nexec -a "git-$s" /usr/bin/git "$@"\n' >"$ROOT/web/vcs"
	chmod +x "$ROOT/web/vcs"
	echo "git=$ROOT/web/vcs" >"$ROOT/web/.npmrc"
	npm_config_registry=http://127.0.0.1:9/ npm_config_update_notifier=false \
		at_q --policy registries -- sh -c 'cd web && npm install --no-audit --no-fund'
	assert_ne "npm, git= in .npmrc naming a wrapper: refused" 0 $?
	assert_rec "npm, git= in .npmrc: the wrapper's git has its record" \
		"event == 'alert' and action == 'deny' and rule_id.startswith('exec.install-source.git')"
	assert_file_absent "npm, git= in .npmrc: nothing installed" "$ROOT/web/node_modules/jsgit/package.json"
else
	skip "npm and a package.json" "no npm"
fi

# The preload backend does not know the line: the rule does not apply,
# and the summary says so.
backend_use preload
next_clone
bk_q --policy registries -- "$ROOT/bin/pip" install sh -c 'exec git clone -q "$REPO_URL" "$0"' "$C"
assert_no_rec "preload: no git-fetch denial" "$fetch_denied"
assert_rec "preload: the summary says rules with under are not judged" "event == 'summary' and 'under' in note"

# A write rule and a read rule with "under" hold below their program and
# nowhere else: the line is walked for every kind that has such a rule.
cat >"$SANDBOX/under-fs.json" <<'JSON'
{ "agenttrace": 1, "extends": "default",
  "write": {"deny": [{"id": "write.t-under", "path": "${ROOT}/w-*", "under": ["pip"]}]},
  "read": {"deny": [{"id": "read.t-under", "path": "${ROOT}/r-*", "under": ["pip"]}]} }
JSON
echo secret >"$ROOT/r-1"
at_q --policy "$SANDBOX/under-fs.json" -- sh -c 'echo x >w-1 && cat r-1'
assert_eq "write and read rules with under: the user's own write and read run" 0 $?
assert_file_content "write and read rules with under: the user's write happened" "$ROOT/w-1" x
at_q --policy "$SANDBOX/under-fs.json" -- "$ROOT/bin/pip" install sh -c 'echo x >w-2'
assert_rec "a write rule with under: refused below pip" "event == 'alert' and action == 'deny' and kind == 'write' and rule_id == 'write.t-under'"
assert_file_absent "a write rule with under: nothing written below pip" "$ROOT/w-2"
at_q --policy "$SANDBOX/under-fs.json" -- "$ROOT/bin/pip" install cat r-1
assert_rec "a read rule with under: refused below pip" "event == 'alert' and action == 'deny' and kind == 'read' and rule_id == 'read.t-under'"
assert_ne "a read rule with under: nothing read below pip" secret "$(cat "$OUT")"
