#!/bin/bash
# Where git finds a repository (tracer/confine/gitfind.c): besides a
# repository's own .git/config, which the write rules judge, git finds a
# configuration through a .git file ("gitdir: PATH"), a worktree's
# commondir, a directory that looks like a git directory (a bare
# repository) and a symbolic link on the way.  Each route below planted
# a configuration that ran a program at the user's next `git status`,
# after the session, with no record.  When the session ends, what git
# would find where the session wrote such names is judged: a git
# directory whose configuration or hooks no rule judged must run
# nothing, else the name that leads there is renamed out of git's way,
# with a record.  Ordinary work (clone, submodule, worktree, a bare
# repository of its own) runs with no record.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace
have git || skip_all "no git"

export GIT_CONFIG_NOSYSTEM=1 GIT_CEILING_DIRECTORIES=$SANDBOX
unset GIT_CONFIG_GLOBAL GIT_CONFIG_COUNT GIT_CONFIG_PARAMETERS GIT_DIR GIT_WORK_TREE
export GIT_AUTHOR_NAME=A GIT_AUTHOR_EMAIL=a@example.com GIT_COMMITTER_NAME=A \
	GIT_COMMITTER_EMAIL=a@example.com
unset AGENTTRACE_TEST_ENGINE

PWNED=$SANDBOX/pwned
export PAYLOAD=$SANDBOX/payload.sh
printf '#!/bin/sh\necho "$PWD" > %s\nexit 1\n' "$PWNED" > "$PAYLOAD" && chmod +x "$PAYLOAD"
VHOME=$SANDBOX/victim-home
mkdir -p "$VHOME"
R=$ROOT/upstream
git init -q -b main "$R" && git -C "$R" commit -q --allow-empty -m up || exit 99

# The user's git status in DIR, after the session and outside it.
victim() {
	rm -f "$PWNED"
	(cd "$1" && HOME=$VHOME git status >/dev/null 2>&1)
	[ ! -e "$PWNED" ]
}

# A configuration that runs the payload at every git status.
EVIL_CFG="[core]
	repositoryformatversion = 0
	fsmonitor = $PAYLOAD"

# repo DIR: a repository made before the session, one commit.
repo() {
	git init -q -b main "$1" && git -C "$1" commit -q --allow-empty -m init
}

engines="ptrace preload"
at_q --engine notify -- true && engines="ptrace notify preload"

run() { # run ENGINE DIR SCRIPT: the script in DIR under the engine
	local e=$1 d=$2 s=$3
	if [ "$e" = preload ]; then
		at_q --backend preload -- sh -c "cd '$d' && $s"
	else
		at_q --engine "$e" -- sh -c "cd '$d' && $s"
	fi
}

for E in $engines; do
	P=$ROOT/p-$E
	rm -rf "$P"
	export EVIL_CFG

	# 1. The work tree made to look like a bare repository, its .git
	# made invalid: git takes the work tree's own config.
	repo "$P/bare" || exit 99
	run "$E" "$P/bare" 'mv .git/HEAD .git/HEAD.bak; mkdir objects refs &&
		echo "ref: refs/heads/main" > HEAD && printf "%s\n\tworktree = %s\n" "$EVIL_CFG" "$PWD" > config'
	assert_eq "$E: a work tree made a bare repository: the command ran" 0 $?
	victim "$P/bare"
	assert_eq "$E: ... the user's git status runs nothing" 0 $?
	assert_rec "$E: ... a record" "$(deny_expr write write.git-config "$P/bare/HEAD")"
	assert_file_present "$E: ... its HEAD moved out of git's way" "$P/bare/HEAD.agenttrace-refused"

	# 2. A worktree's commondir pointed at a directory of the session's.
	repo "$P/wtrepo" && git -C "$P/wtrepo" worktree add -q "$P/wtrepo/wt" || exit 99
	run "$E" "$P/wtrepo" 'E=$TMPDIR/evil-wt; rm -rf $E; git init -q --bare $E &&
		cp -r .git/objects/. $E/objects/ && cp -r .git/refs/. $E/refs/ &&
		printf "%s\n" "$EVIL_CFG" > $E/config && echo $E > .git/worktrees/wt/commondir'
	victim "$P/wtrepo/wt"
	assert_eq "$E: a worktree's commondir rewritten: the user's git status runs nothing" 0 $?
	assert_rec "$E: ... a record" "$(deny_expr write write.git-config)"

	# 3. A submodule's .git file rewritten.
	repo "$P/super" && git -C "$P/super" -c protocol.file.allow=always submodule add -q "$R" sm &&
		git -C "$P/super" commit -q -m sm || exit 99
	run "$E" "$P/super" 'E=$TMPDIR/evil-sm; rm -rf $E; git init -q --bare $E &&
		printf "%s\n\tworktree = %s/sm\n" "$EVIL_CFG" "$PWD" > $E/config && echo "gitdir: $E" > sm/.git'
	victim "$P/super"
	assert_eq "$E: a submodule's .git file rewritten: the superproject's git status runs nothing" 0 $?
	assert_rec "$E: ... a record" "$(deny_expr write write.git-config "$P/super/sm/.git")"
	assert_file_present "$E: ... the .git file moved out of git's way" \
		"$P/super/sm/.git.agenttrace-refused"

	# 4. A nested repository's work directory moved away, a .git file
	# in its place.
	repo "$P/outer" && repo "$P/outer/sub" || exit 99
	run "$E" "$P/outer" 'E=$TMPDIR/evil-sub; rm -rf $E; git init -q --bare $E &&
		printf "%s\n\tworktree = %s/sub\n" "$EVIL_CFG" "$PWD" > $E/config &&
		mv sub sub.old && mkdir sub && echo "gitdir: $E" > sub/.git'
	victim "$P/outer/sub"
	assert_eq "$E: a work directory replaced: the user's git status runs nothing" 0 $?
	assert_rec "$E: ... a record" "$(deny_expr write write.git-config "$P/outer/sub/.git")"

	# 5. A symbolic link at a submodule's git directory.
	repo "$P/super2" && git -C "$P/super2" -c protocol.file.allow=always submodule add -q "$R" sm &&
		git -C "$P/super2" commit -q -m sm || exit 99
	run "$E" "$P/super2" 'E=$TMPDIR/evil-mod; rm -rf $E; git init -q --bare $E &&
		printf "%s\n\tworktree = %s/sm\n" "$EVIL_CFG" "$PWD" > $E/config &&
		mv .git/modules/sm .git/modules/sm.old && ln -s $E .git/modules/sm'
	victim "$P/super2"
	assert_eq "$E: a link at a submodule's git directory: git status runs nothing" 0 $?
	assert_rec "$E: ... a record" "$(deny_expr write write.git-config "$P/super2/.git/modules/sm")"

	# 6. A tree made elsewhere and moved in, a .git file deep in it.
	repo "$P/host" || exit 99
	run "$E" "$P/host" 'E=$TMPDIR/evil-tree; rm -rf $E $TMPDIR/prep; git init -q --bare $E &&
		printf "%s\n\tworktree = %s/x/a/b\n" "$EVIL_CFG" "$PWD" > $E/config &&
		mkdir -p $TMPDIR/prep/a/b && echo "gitdir: $E" > $TMPDIR/prep/a/b/.git &&
		mv $TMPDIR/prep x'
	victim "$P/host/x/a/b"
	assert_eq "$E: a tree moved in with a .git file: git status in it runs nothing" 0 $?
	assert_rec "$E: ... a record" "$(deny_expr write write.git-config "$P/host/x/a/b/.git")"

	# 7. A bare repository of the session's own with a hook.
	run "$E" "$P/host" 'git init -q --bare b.git && printf "#!/bin/sh\n" > b.git/hooks/pre-receive'
	assert_rec "$E: a bare repository with a hook: a record" \
		"$(deny_expr write write.git-config "$P/host/b.git/HEAD")"
	assert_file_present "$E: ... its HEAD moved out of git's way" "$P/host/b.git/HEAD.agenttrace-refused"

	# 8. A link to a directory outside the project whose .git runs a
	# program: a `cd` through the link puts git there.
	run "$E" "$P/host" 'rm -rf $TMPDIR/ext && git init -q $TMPDIR/ext &&
		printf "%s\n" "$EVIL_CFG" >> $TMPDIR/ext/.git/config && ln -s $TMPDIR/ext ext'
	assert_rec "$E: a link to a repository that runs a program: a record" \
		"$(deny_expr write write.git-config "$P/host/ext")"
	assert_file_absent "$E: ... the link moved out of git's way" "$P/host/ext"

	# 9. A repository in node_modules, where the write rules judge no
	# configuration, made a gitlink of the project's index: git status
	# goes into it.
	repo "$P/nm" || exit 99
	run "$E" "$P/nm" 'git init -q node_modules/x &&
		git -C node_modules/x commit -q --allow-empty -m x &&
		git -C node_modules/x config core.fsmonitor "$PAYLOAD" &&
		git update-index --add --cacheinfo "160000,$(git -C node_modules/x rev-parse HEAD),node_modules/x"'
	victim "$P/nm"
	assert_eq "$E: a gitlink to a repository in node_modules: git status runs nothing" 0 $?
	assert_rec "$E: ... a record" "$(deny_expr write write.git-config "$P/nm/node_modules/x/.git/HEAD")"

	# 10. A submodule's .git file pointed into node_modules.
	repo "$P/super3" && git -C "$P/super3" -c protocol.file.allow=always submodule add -q "$R" sm &&
		git -C "$P/super3" commit -q -m sm || exit 99
	run "$E" "$P/super3" 'git init -q --bare node_modules/x/.git &&
		printf "%s\n\tworktree = %s/sm\n" "$EVIL_CFG" "$PWD" > node_modules/x/.git/config &&
		echo "gitdir: $PWD/node_modules/x/.git" > sm/.git'
	victim "$P/super3"
	assert_eq "$E: a submodule's .git file into node_modules: git status runs nothing" 0 $?
	assert_rec "$E: ... a record" "$(deny_expr write write.git-config)"

	# 11. The work tree moved outside the project by core.worktree, a
	# gitlink there leading to a repository of the session's.  (The
	# preload shim refuses every write of .git/config.)
	if [ "$E" != preload ]; then
		repo "$P/wtree" || exit 99
		run "$E" "$P/wtree" 'W=$TMPDIR/wtree; rm -rf $W; git init -q $W/sub &&
			git -C $W/sub commit -q --allow-empty -m x &&
			git -C $W/sub config core.fsmonitor "$PAYLOAD" && git config core.worktree $W &&
			git update-index --add --cacheinfo "160000,$(git -C $W/sub rev-parse HEAD),sub"'
		victim "$P/wtree"
		assert_eq "$E: core.worktree outside the project: git status runs nothing" 0 $?
		assert_rec "$E: ... a record" "$(deny_expr write write.git-config)"
	fi

	# A link to a sibling project of the user's, where no session can
	# write, that runs its own hooks: no record.
	rm -rf "$SANDBOX/sibling" && repo "$SANDBOX/sibling" &&
		git -C "$SANDBOX/sibling" config core.hooksPath .husky || exit 99
	run "$E" "$P/host" "ln -s '$SANDBOX/sibling' sib"
	assert_no_alert "$E: a link to a sibling project with hooks: no record"
	assert_file_present "$E: ... the link stays" "$P/host/sib"

	# Ordinary work: no record.  (The preload shim refuses every
	# write of a .git/config: git clone fails there.)
	ordinary="git clone -q '$R' c && git -c protocol.file.allow=always submodule add -q '$R' sm &&
		git commit -q -m sm && git worktree add -q wt &&"
	[ "$E" = preload ] && ordinary=
	run "$E" "$P/host" "$ordinary git init -q --bare own.git &&
		git -C own.git config remote.origin.url '$R' && mkdir -p d/e && ln -s d/e link && mv d d2"
	assert_eq "$E: clone, submodule, worktree, a bare repository, links, moves" 0 $?
	assert_no_alert "$E: ... no record"
	victim "$P/host"
	assert_eq "$E: ... git status there as before" 0 $?

	# A repository made before the session keeps what it has, however
	# it is configured: the session did not write it.
	repo "$P/own" && git -C "$P/own" config core.fsmonitor false || exit 99
	run "$E" "$P/own" 'mkdir new && echo x > new/f && mv new new2'
	assert_no_alert "$E: a repository made before the session, untouched: no record"
	rm -rf "$P"
done

# Audit mode: the record is an alert, and nothing is moved.
P=$ROOT/p-audit
repo "$P/bare" || exit 99
at_q --mode audit -- sh -c 'cd "$1" && mv .git/HEAD .git/HEAD.bak; mkdir objects refs &&
	echo "ref: refs/heads/main" > HEAD && printf "%s\n" "$EVIL_CFG" > config' sh "$P/bare"
assert_rec "audit: an alert" "event == 'alert' and action == 'alert' and rule_id == 'write.git-config' and path == '$P/bare/HEAD'"
assert_file_present "audit: ... nothing moved" "$P/bare/HEAD"
