#!/bin/bash
# git works under the default policy, and git's configuration is judged by
# what it says (agenttrace-policy(5), "Content"): init, clone into the
# project and below, remote add, config of keys that run nothing,
# submodule add, worktree add, branch and commit run with no record and
# leave the configuration git leaves natively; each variable that makes
# git run a program is refused, with a record naming it.  The replacement
# is the supervisor's own, with the bytes it judged: a second process
# holding config.lock open, a shared mapping, a hard link, a symbolic
# link, another file renamed onto .git/config, renameat2 with flags, an
# open for writing, a rename of .git itself: refused or harmless, under
# both engines.  The preload backend cannot make the replacement: it
# refuses the write as a plain deny rule.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace
have git || skip_all "no git"

# No configuration of the host's or the user's: the sandbox HOME has none.
# And no repository above the sandbox: the build tree may lie in one, and
# a git command run where a repository failed to appear must not find it.
export GIT_CONFIG_NOSYSTEM=1 GIT_CEILING_DIRECTORIES=$SANDBOX
unset GIT_CONFIG_GLOBAL GIT_CONFIG_COUNT GIT_CONFIG_PARAMETERS GIT_DIR GIT_WORK_TREE
export GIT_AUTHOR_DATE='2020-01-01T00:00:00Z' GIT_COMMITTER_DATE='2020-01-01T00:00:00Z'
unset AGENTTRACE_TEST_ENGINE

engines=ptrace
if at_q --engine notify -- true; then
	engines="ptrace notify"
else
	skip "notify engine" "no seccomp user notification on this kernel: $(head -c 300 "$ERR")"
fi

# The work an agent does with git, in the directory it is run in: the
# same script natively and supervised.
# A local bare repository to clone, made natively beforehand (a removal of
# the repository it was made from would be a write of its .git/config).
remote_repo() {
	(cd "$1" && git init -q --bare -b main remote.git && git init -q -b main seed &&
		git -C seed -c user.email=s@example.com -c user.name=S commit -q --allow-empty -m seed &&
		git -C seed push -q ../remote.git main && rm -rf seed)
}
cat >"$SANDBOX/gitwork.sh" <<'SH'
set -e
git init -q -b main proj && cd proj
git config user.email a@example.com
git config user.name "A U Thor"
echo one >f && git add f && git commit -q -m one
git branch feature
git remote add up ../remote.git
git clone -q ../remote.git cloned
mkdir sub && git clone -q ../remote.git sub/c2
git -c protocol.file.allow=always submodule add -q ../remote.git sm
git commit -q -m sm
git -c protocol.file.allow=always clone -q --recurse-submodules "$(pwd)" ../withsub
git worktree add -q ../wt feature
cd ../wt && echo two >g && git add g && git commit -q -m two
cd ../proj && git log --oneline feature | wc -l
SH

# The configuration files the work leaves, with the directory's own path
# written as DIR, and their modes.
configs() {
	local d=$1 f
	for f in proj/.git/config proj/.gitmodules proj/.git/modules/sm/config \
		proj/cloned/.git/config proj/sub/c2/.git/config proj/sm/.git \
		proj/.git/worktrees/wt/gitdir wt/.git withsub/.gitmodules withsub/sm/.git; do
		printf '== %s %s\n' "$f" "$(stat -c %a "$d/$f" 2>/dev/null)"
		sed "s|$d|DIR|g" "$d/$f" 2>/dev/null || echo MISSING
	done
}

native=$SANDBOX/native
mkdir -p "$native"
remote_repo "$native"
(cd "$native" && sh "$SANDBOX/gitwork.sh") >/dev/null 2>&1 || diag "the work failed natively"
want=$(configs "$native")
assert_match "natively: the work leaves a config with the submodule" 'submodule "sm"' "$want"

# Natively, an alias that does not start with "!" runs a shell command
# through the options git reads from it.
assert_eq "natively: an alias of options runs a shell command" alias-options \
	"$(git -C "$native/proj" -c 'alias.lg=-c "alias.y=!echo alias-options" y' lg 2>&1)"

# Natively, a commondir file in .git makes git read the configuration of
# the directory it names (what write.git-commondir refuses below).
cp -r "$native/proj/.git" "$native/other.git"
printf '[alias]\n\tpwn = !echo commondir-alias\n' >>"$native/other.git/config"
echo "$native/other.git" >"$native/proj/.git/commondir"
assert_eq "natively: a commondir file makes git read another directory's configuration" \
	commondir-alias "$(git -C "$native/proj" pwn 2>&1)"
rm -rf "$native/proj/.git/commondir" "$native/other.git"

# A config as an agent would try to set it: each variable that runs a
# program, and the name the record gives it.  The program does not exist:
# should a value ever land, nothing runs.
nohook=$SANDBOX/no-such-program
dangerous=(
	"core.fsmonitor|$nohook|core.fsmonitor"
	"core.hooksPath|$nohook|core.hookspath"
	"core.sshCommand|$nohook|core.sshcommand"
	"core.pager|$nohook|core.pager"
	"core.editor|$nohook|core.editor"
	"core.askPass|$nohook|core.askpass"
	"core.gitProxy|$nohook|core.gitproxy"
	"sequence.editor|$nohook|sequence.editor"
	"credential.helper|!$nohook|credential.helper"
	"credential.https://example.com.helper|store|credential.https://example.com.helper"
	"alias.st|!$nohook|alias.st"
	"alias.lg|-c alias.y=!$nohook y|alias.lg"
	"alias.co|'--exec-path=$SANDBOX' co|alias.co"
	"filter.f.clean|$nohook|filter.f.clean"
	"filter.f.smudge|$nohook|filter.f.smudge"
	"filter.f.process|$nohook|filter.f.process"
	"diff.d.textconv|$nohook|diff.d.textconv"
	"diff.d.command|$nohook|diff.d.command"
	"merge.m.driver|$nohook|merge.m.driver"
	"gpg.program|$nohook|gpg.program"
	"gpg.ssh.program|$nohook|gpg.ssh.program"
	"include.path|$nohook|include.path"
	"includeIf.gitdir:/.path|$nohook|includeif.gitdir:/.path"
	"remote.up.uploadpack|$nohook|remote.up.uploadpack"
	"remote.up.receivepack|$nohook|remote.up.receivepack"
	"pager.log|$nohook|pager.log"
)

for E in $engines; do
	at_e() { at --engine "$E" "$@"; }
	# expect_denied and expect_allowed run agenttrace without --engine.
	export AGENTTRACE_TEST_ENGINE=$E
	sandbox_reset
	remote_repo "$ROOT"

	# --- ordinary work: no record, the configuration git leaves natively ---
	at_e -- sh "$SANDBOX/gitwork.sh" >"$OUT" 2>"$ERR"
	st=$?
	assert_eq "$E: git init, clone, remote add, config, submodule add, a clone with its submodules, worktree add, branch, commit" 0 "$st"
	[ "$st" = 0 ] || diag "stderr:" "$(head -c 3000 "$ERR")"
	assert_no_alert "$E: the work raises no record"
	assert_eq "$E: the configuration files are as natively, modes too" "$want" "$(configs "$ROOT")"
	assert_eq "$E: the worktree's commit is there" 2 "$(tail -n 1 "$OUT" | tr -d ' ')"
	leftover=$(find "$ROOT" -name '*.agenttrace-*' | head -n 3)
	assert_eq "$E: no file of the supervisor's is left" "" "$leftover"

	# A recorded run: the replacements the supervisor made are recorded as
	# such, and the tools decide them as it did.  learn keeps no exception
	# of .git/config (which would admit any writer and any variable), and
	# replay under default finds nothing decided differently.
	at_e --record -- sh -c 'git init -q rec && git -C rec config user.name X' >"$OUT" 2>"$ERR"
	assert_eq "$E: --record: git init and config run" 0 $?
	assert_rec "$E: --record: the replacement is recorded with the check it passed" \
		"event == 'write' and action == 'allow' and path2 == '$ROOT/rec/.git/config' and content == 'git-config'"
	cp "$LOG" "$SANDBOX/rec.jsonl"
	"$top_builddir/agenttrace-policy" learn "$SANDBOX/rec.jsonl" -o "$SANDBOX/learned.json" 2>"$ERR"
	assert_eq "$E: learn: exit 0" 0 $?
	if grep -q 'overrides' "$SANDBOX/learned.json"; then
		not_ok "$E: learn: no exception of write.git-config" "$(grep overrides "$SANDBOX/learned.json")"
	else
		ok "$E: learn: no exception of write.git-config"
	fi
	"$top_builddir/agenttrace-policy" replay "$SANDBOX/rec.jsonl" --policy default >"$OUT" 2>"$ERR"
	assert_eq "$E: replay under default: nothing decided differently" 0 $?
	[ -s "$OUT" ] && diag "$(head -c 1000 "$OUT")"
	at_e --policy "$SANDBOX/learned.json" -- git -C "$ROOT/rec" config core.pager "$nohook" >"$OUT" 2>"$ERR"
	assert_ne "$E: under the learned policy, core.pager is still refused" 0 $?
	rm -rf "$ROOT/rec"

	P=$ROOT/proj
	CFG=$P/.git/config
	if [ ! -f "$CFG" ]; then
		not_ok "$E: the project's repository is there for the cases below" "no $CFG"
		continue
	fi
	cp "$CFG" "$SANDBOX/cfg.before"

	# --- each variable that runs a program: refused, named ---------------
	for d in "${dangerous[@]}"; do
		IFS='|' read -r key value name <<<"$d"
		at_e -- git -C "$P" config "$key" "$value" >"$OUT" 2>"$ERR"
		st=$?
		assert_ne "$E: git config $key: refused" 0 "$st"
		assert_rec "$E: git config $key: the record names $name" \
			"$(deny_expr write write.git-config "$P/.git/config") and '$name' in why and ' sets ' in why"
		check "$E: git config $key: .git/config unchanged" cmp -s "$SANDBOX/cfg.before" "$CFG"
	done

	# The refusal's suggestion is a layer that admits that very write
	# (the user's exception), and only that.
	at_e -- git -C "$P" config core.pager "$nohook" >"$OUT" 2>"$ERR"
	layer=$(rec_field "event == 'alert' and action == 'deny' and has('suggest')" suggest)
	printf '%s\n' "$layer" >"$SANDBOX/fix.json"
	at_e --policy "$SANDBOX/fix.json" -- git -C "$P" config core.pager "$nohook" >"$OUT" 2>"$ERR"
	assert_eq "$E: the suggested layer admits the refused config" 0 $?
	assert_match "$E: ... it is written" "pager = $nohook" "$(cat "$CFG")"
	cp "$SANDBOX/cfg.before" "$CFG"
	at_e --policy "$SANDBOX/fix.json" -- git -C "$P/cloned" config core.pager "$nohook" >"$OUT" 2>"$ERR"
	assert_ne "$E: ... and no other repository's" 0 $?

	# A key the repository already had passes, unchanged; changed, it
	# does not.
	printf '[core]\n\tpager = less\n' >>"$CFG"
	at_e -- git -C "$P" config user.name "Other Name" >"$OUT" 2>"$ERR"
	assert_eq "$E: with a pager already there, git config user.name runs" 0 $?
	assert_no_alert "$E: ... and raises no record"
	assert_match "$E: ... the pager stays" 'pager = less' "$(cat "$CFG")"
	at_e -- git -C "$P" config core.pager more >"$OUT" 2>"$ERR"
	assert_ne "$E: changing the pager is refused" 0 $?
	assert_rec "$E: ... with a record naming core.pager" "'core.pager' in why"
	at_e -- git -C "$P" config --unset core.pager >"$OUT" 2>"$ERR"
	assert_eq "$E: removing the pager runs" 0 $?
	assert_no_alert "$E: ... and raises no record"
	cp "$CFG" "$SANDBOX/cfg.before"

	# --- attacks on the lock -------------------------------------------
	cat >"$SANDBOX/lock.py" <<'PY'
import ctypes, mmap, os, signal, socket, sys, time
op, gitdir = sys.argv[1], sys.argv[2]
cfg = os.path.join(gitdir, "config")
lock = cfg + ".lock"
clean = open(cfg, "rb").read() + b"[user]\n\tname = Clean\n"
evil = b"[core]\n\tfsmonitor = /nonexistent/agenttrace-test-program\n"
libc = ctypes.CDLL(None, use_errno=True)

def renameat2(a, b, flags):
    r = libc.syscall(316, -100, a.encode(), -100, b.encode(), flags)
    return 0 if r == 0 else ctypes.get_errno()

def make_lock(data, mode=0o644):
    fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_EXCL, mode)
    os.write(fd, data)
    return fd

def rename():
    try:
        os.rename(lock, cfg)
        return 0
    except OSError as e:
        return e.errno

if op == "kept-fd":
    # A second process holds the lock open for writing (passed over a
    # UNIX socket) and rewrites it once the rename has returned.
    fd = make_lock(clean)
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    pid = os.fork()
    if pid == 0:
        a.close()
        msg, fds, _, _ = socket.recv_fds(b, 16, 1)
        b.recv(1)  # the rename has returned
        os.pwrite(fds[0], evil + b"#" * len(clean), 0)
        os._exit(0)
    b.close()
    socket.send_fds(a, [b"fd"], [fd])
    os.close(fd)
    r = rename()
    a.send(b"g")
    os.waitpid(pid, 0)
    print("rename", r)
elif op == "mmap":
    # The caller maps the lock shared and writes through the mapping
    # after the rename.
    fd = make_lock(clean)
    m = mmap.mmap(fd, len(clean))
    r = rename()
    m[: len(evil)] = evil
    m.flush()
    st = os.fstat(fd)
    print("rename", r, "links", st.st_nlink)
elif op == "racing-writer":
    # A second process keeps rewriting the lock while the rename runs.
    fd = make_lock(clean)
    pid = os.fork()
    if pid == 0:
        while True:
            os.pwrite(fd, evil + b"#" * len(clean), 0)
            os.pwrite(fd, clean, 0)
    r = rename()
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    print("rename", r)
elif op == "racing-thread":
    # A second thread of the caller keeps rewriting the lock while the
    # rename runs.
    import threading
    fd = make_lock(clean)
    stop = []
    def writer():
        while not stop:
            os.pwrite(fd, evil + b"#" * len(clean), 0)
            os.pwrite(fd, clean, 0)
    th = threading.Thread(target=writer)
    th.start()
    r = rename()
    stop.append(1)
    th.join()
    print("rename", r)
elif op == "hard-link":
    fd = make_lock(clean)
    try:
        os.link(lock, os.path.join(os.path.dirname(gitdir), "lock-link"))
    except OSError as e:
        os.unlink(lock)
        print("link", e.errno)
        sys.exit(0)
    r = rename()
    os.unlink(lock)
    print("rename", r)
elif op == "symlink":
    other = os.path.join(os.path.dirname(gitdir), "evil.cfg")
    open(other, "wb").write(clean)
    os.symlink(other, lock)
    r = rename()
    os.unlink(lock)
    print("rename", r)
elif op == "fifo":
    os.mkfifo(lock)
    r = rename()
    os.unlink(lock)
    print("rename", r)
elif op == "odd":
    # git's syntax at its oddest: section and name in any case, a comment
    # on the header's line, a quoted value continued on the next line.
    make_lock(clean + b'[CoRe] ; x\n\tFsMonitor = "/nonexistent/agenttrace-\\\ntest-program"\n')
    r = rename()
    if r:
        os.unlink(lock)
    print("rename", r)
elif op == "nul":
    make_lock(clean + b"\0")
    r = rename()
    os.unlink(lock)
    print("rename", r)
elif op == "exchange":
    make_lock(clean)
    r = renameat2(lock, cfg, 2)  # RENAME_EXCHANGE
    os.unlink(lock)
    print("rename", r)
elif op == "noreplace":
    make_lock(clean)
    r = renameat2(lock, cfg, 1)  # RENAME_NOREPLACE
    os.unlink(lock)
    print("rename", r)
elif op == "mode":
    make_lock(clean, 0o640)
    os.chmod(lock, 0o640)
    print("rename", rename())
PY
	lock_op() { # OP [AGENTTRACE OPTIONS]
		rm -f "$P/.git/config.lock"
		at_e "${@:2}" -- "$PYTHON" "$SANDBOX/lock.py" "$1" "$P/.git" >"$OUT" 2>"$ERR"
	}

	# Natively (the kernel renames the lock, whatever check came before),
	# both writes below land in .git/config: what the test shows is that
	# under agenttrace they do not.
	if [ "$E" = ptrace ]; then
		for op in kept-fd mmap; do
			cp "$native/proj/.git/config" "$SANDBOX/native.cfg"
			"$PYTHON" "$SANDBOX/lock.py" "$op" "$native/proj/.git" >/dev/null 2>&1
			assert_match "natively, $op: the write after the rename lands in .git/config" \
				'fsmonitor' "$(cat "$native/proj/.git/config")"
			cp "$SANDBOX/native.cfg" "$native/proj/.git/config"
		done
	fi

	lock_op kept-fd
	assert_eq "$E: a lock another process keeps open: the rename runs" "rename 0" "$(cat "$OUT")"
	assert_match "$E: ... the bytes judged are the bytes that land" 'name = Clean' "$(cat "$CFG")"
	assert_no_alert "$E: ... and raises no record"
	if grep -q fsmonitor "$CFG"; then
		not_ok "$E: ... no fsmonitor in .git/config" "$(cat "$CFG")"
	else
		ok "$E: ... no fsmonitor in .git/config"
	fi
	cp "$SANDBOX/cfg.before" "$CFG"

	lock_op mmap
	assert_eq "$E: a lock mapped shared: the rename runs, the lock has no name" "rename 0 links 0" \
		"$(cat "$OUT")"
	if grep -q fsmonitor "$CFG" || ! grep -q 'name = Clean' "$CFG"; then
		not_ok "$E: ... the bytes judged land, no write through the mapping" "$(cat "$CFG")"
	else
		ok "$E: ... the bytes judged land, no write through the mapping"
	fi
	cp "$SANDBOX/cfg.before" "$CFG"

	lock_op racing-writer
	if grep -q fsmonitor "$CFG"; then
		not_ok "$E: a lock rewritten while the rename runs: no fsmonitor lands" "$(cat "$CFG")"
	else
		ok "$E: a lock rewritten while the rename runs: no fsmonitor lands"
	fi
	if [ "$(cat "$OUT")" != "rename 0" ]; then
		assert_rec "$E: ... and when refused, the record names core.fsmonitor" "'core.fsmonitor' in why"
	fi
	cp "$SANDBOX/cfg.before" "$CFG"

	lock_op racing-thread
	if grep -q fsmonitor "$CFG"; then
		not_ok "$E: a lock a second thread rewrites while the rename runs: no fsmonitor lands" "$(cat "$CFG")"
	else
		ok "$E: a lock a second thread rewrites while the rename runs: no fsmonitor lands"
	fi
	if [ "$(cat "$OUT")" != "rename 0" ]; then
		assert_rec "$E: ... and when refused, the record names core.fsmonitor" "'core.fsmonitor' in why"
	fi
	cp "$SANDBOX/cfg.before" "$CFG"

	# With the masks, .git is a mount of its own: the kernel refuses the
	# link out of it.  Without them, the supervisor refuses the rename.
	lock_op hard-link
	assert_match "$E: masked, a hard link out of .git: refused by the kernel (EXDEV)" "^link 18$" "$(cat "$OUT")"
	rm -f "$P/lock-link"
	lock_op hard-link --mask off
	assert_eq "$E: a lock with a hard link elsewhere: refused" "rename 13" "$(cat "$OUT")"
	assert_rec "$E: ... with a record" "$(deny_expr write write.git-config "$CFG") and 'hard link' in why"
	check "$E: ... .git/config unchanged" cmp -s "$SANDBOX/cfg.before" "$CFG"
	rm -f "$P/lock-link"

	lock_op symlink
	assert_eq "$E: a symbolic link as config.lock: refused" "rename 13" "$(cat "$OUT")"
	assert_rec "$E: ... with a record" "$(deny_expr write write.git-config "$CFG") and 'symbolic link' in why"
	assert_eq "$E: ... .git/config is no link" "" "$(find "$CFG" -type l)"

	lock_op fifo
	assert_eq "$E: a FIFO as config.lock: refused, nothing waits" "rename 13" "$(cat "$OUT")"
	assert_rec "$E: ... with a record" "$(deny_expr write write.git-config "$CFG") and 'not a regular file' in why"

	# natively, git reads it as core.fsmonitor
	cp "$native/proj/.git/config" "$SANDBOX/native.cfg"
	"$PYTHON" "$SANDBOX/lock.py" odd "$native/proj/.git" >/dev/null 2>&1
	assert_eq "$E: natively, the odd spelling is core.fsmonitor" /nonexistent/agenttrace-test-program \
		"$(git -C "$native/proj" config core.fsmonitor)"
	cp "$SANDBOX/native.cfg" "$native/proj/.git/config"
	lock_op odd
	assert_eq "$E: core.fsmonitor spelled oddly: refused" "rename 13" "$(cat "$OUT")"
	assert_rec "$E: ... the record names core.fsmonitor" "'core.fsmonitor' in why"
	check "$E: ... .git/config unchanged" cmp -s "$SANDBOX/cfg.before" "$CFG"

	lock_op nul
	assert_eq "$E: a config with a NUL byte: refused" "rename 13" "$(cat "$OUT")"
	assert_rec "$E: ... with a record" "'NUL byte' in why"

	lock_op exchange
	assert_eq "$E: renameat2(RENAME_EXCHANGE) of the lock and the config: refused" "rename 13" \
		"$(cat "$OUT")"
	assert_rec "$E: ... with a record" "$(deny_expr write write.git-config "$CFG") and 'renameat2' in why"
	check "$E: ... .git/config unchanged" cmp -s "$SANDBOX/cfg.before" "$CFG"

	lock_op noreplace
	assert_eq "$E: renameat2(RENAME_NOREPLACE): refused" "rename 13" "$(cat "$OUT")"

	lock_op mode
	assert_eq "$E: a lock of mode 0640: the rename runs" "rename 0" "$(cat "$OUT")"
	assert_eq "$E: ... .git/config has its mode" 640 "$(stat -c %a "$CFG")"
	assert_eq "$E: ... and the caller's owner" "$(id -u)" "$(stat -c %u "$CFG")"
	cp "$SANDBOX/cfg.before" "$CFG"
	chmod 0644 "$CFG"

	# --- other writers of .git/config ----------------------------------------
	printf '[core]\n\tfsmonitor = /nonexistent/agenttrace-test-program\n' >"$ROOT/evil.cfg"
	expect_denied "$E: another file renamed onto .git/config" "$EACCES" write write.git-config "$CFG" -- \
		"$TRY" rename "$ROOT/evil.cfg" "$CFG"
	cp "$ROOT/evil.cfg" "$P/.git/other.lock"
	expect_denied "$E: another .lock renamed onto .git/config" "$EACCES" write write.git-config "$CFG" -- \
		"$TRY" rename "$P/.git/other.lock" "$CFG"
	expect_denied "$E: open(O_WRONLY) of .git/config" "$EACCES" write write.git-config "$CFG" -- \
		"$TRY" open-write "$CFG"
	expect_denied "$E: truncate .git/config" "$EACCES" write write.git-config "$CFG" -- \
		"$TRY" truncate "$CFG"
	# The tools an agent would reach for; and the same bytes put in
	# config.lock by cp and renamed by mv are judged as git's own would be.
	for how in "cp '$ROOT/evil.cfg' '$CFG'" "tee '$CFG' <'$ROOT/evil.cfg' >/dev/null" \
		"tee -a '$CFG' <'$ROOT/evil.cfg' >/dev/null" \
		"'$PYTHON' -c 'import sys; open(sys.argv[1], \"ab\").write(open(sys.argv[2], \"rb\").read())' '$CFG' '$ROOT/evil.cfg'" \
		"cp '$ROOT/evil.cfg' '$P/.git/config.lock' && mv '$P/.git/config.lock' '$CFG'"; do
		at_e -- sh -c "$how" >"$OUT" 2>"$ERR"
		assert_ne "$E: $how: refused" 0 $?
		assert_rec "$E: $how: a deny record" "$(deny_expr write write.git-config "$CFG")"
		check "$E: $how: .git/config unchanged" cmp -s "$SANDBOX/cfg.before" "$CFG"
		rm -f "$P/.git/config.lock"
	done
	assert_rec "$E: ... the lock's record names core.fsmonitor" "'core.fsmonitor' in why"

	# A fresh clone's configuration is judged as well (git reports the
	# refused write and goes on, as it would natively for any failed one).
	at_e -- git clone -q -c core.hooksPath="$nohook" "$ROOT/remote.git" "$P/sub/evilclone" >"$OUT" 2>"$ERR"
	assert_match "$E: git clone -c core.hooksPath=...: git is told the write failed" \
		'could not write config file' "$(cat "$ERR")"
	assert_rec "$E: ... the record names core.hookspath" \
		"$(deny_expr write write.git-config "$P/sub/evilclone/.git/config") and 'core.hookspath' in why"
	if grep -qs hooksPath "$P/sub/evilclone/.git/config"; then
		not_ok "$E: ... no hooksPath in the clone's config" "$(cat "$P/sub/evilclone/.git/config")"
	else
		ok "$E: ... no hooksPath in the clone's config"
	fi
	rm -rf "$P/sub/evilclone"

	mkdir -p "$P/sub/fresh/.git"
	expect_denied "$E: a hard link made at a .git/config's name" "$EACCES" write write.git-config \
		"$P/sub/fresh/.git/config" -- "$TRY" link "$ROOT/evil.cfg" "$P/sub/fresh/.git/config"
	expect_denied "$E: a symbolic link made at a .git/config's name" "$EACCES" write write.git-config \
		"$P/sub/fresh/.git/config" -- "$TRY" symlink "$ROOT/evil.cfg" "$P/sub/fresh/.git/config"
	assert_file_absent "$E: ... neither is there" "$P/sub/fresh/.git/config"
	expect_denied "$E: unlink .git/config" "$EACCES" write write.git-config "$CFG" -- \
		"$TRY" unlink "$CFG"
	check "$E: .git/config unchanged by all of them" cmp -s "$SANDBOX/cfg.before" "$CFG"

	# A commondir file makes git read the configuration (and the hooks)
	# of the directory it names: natively, an alias of such a directory
	# runs in the project.  Refused outright; a worktree's own is git's.
	expect_denied "$E: a commondir file in .git" "$EACCES" write write.git-commondir \
		"$P/.git/commondir" -- "$TRY" open-write "$P/.git/commondir"
	assert_file_absent "$E: ... it is not there" "$P/.git/commondir"
	expect_denied "$E: a commondir file in a submodule's git directory" "$EACCES" write \
		write.git-commondir-modules "$P/.git/modules/sm/commondir" -- \
		"$TRY" open-write "$P/.git/modules/sm/commondir"
	printf '../..\n' >"$ROOT/commondir"
	expect_denied "$E: a commondir file renamed into .git" "$EACCES" write write.git-commondir \
		"$P/.git/commondir" -- "$TRY" rename "$ROOT/commondir" "$P/.git/commondir"
	assert_file_absent "$E: ... it is not there" "$P/.git/commondir"
	rm -f "$ROOT/commondir"

	# --- the directories on the way --------------------------------------------
	expect_denied "$E: a rename of .git away" "$EACCES" write write.git-config "$P/.git" -- \
		"$TRY" rename "$P/.git" "$P/.git-away"
	assert_file_present "$E: ... .git is still there" "$CFG"
	assert_no_rec "$E: ... no suggestion: naming .git would not admit it" "has('suggest')"
	mkdir -p "$ROOT/x"
	cp "$ROOT/evil.cfg" "$ROOT/x/config"
	expect_denied "$E: a directory renamed to sub/.git" "$EACCES" write write.git-config "$P/sub/newrepo/.git" -- \
		sh -c "mkdir -p '$P/sub/newrepo' && $TRY rename '$ROOT/x' '$P/sub/newrepo/.git'"
	assert_file_absent "$E: ... no such repository" "$P/sub/newrepo/.git"
	expect_denied "$E: a symbolic link named .git" "$EACCES" write write.git-config "$P/sub/linked/.git" -- \
		sh -c "mkdir -p '$P/sub/linked' && $TRY symlink '$ROOT/x' '$P/sub/linked/.git'"
	assert_file_absent "$E: ... no such link" "$P/sub/linked/.git"
	expect_denied "$E: a submodule's git directory renamed out of .git/modules" "$EACCES" write \
		write.git-config-modules "$P/.git/modules/sm" -- "$TRY" rename "$P/.git/modules/sm" "$P/smx"
	assert_file_present "$E: ... it is still there" "$P/.git/modules/sm/config"
	# From one judged place to another, as git mv of a submodule would.
	expect_allowed "$E: a submodule's git directory renamed within .git/modules" -- \
		"$TRY" rename "$P/.git/modules/sm" "$P/.git/modules/sm2"
	mv "$P/.git/modules/sm2" "$P/.git/modules/sm"
	rm -rf "$ROOT/x"

	# A tree made where no check of content reaches (the temp dir,
	# node_modules), holding a repository, renamed into the project.
	mkdir -p "$TMPDIR/made/deep/.git" "$ROOT/node_modules/pkg/.git" "$TMPDIR/plain/src"
	cp "$ROOT/evil.cfg" "$TMPDIR/made/deep/.git/config"
	cp "$ROOT/evil.cfg" "$ROOT/node_modules/pkg/.git/config"
	echo x >"$TMPDIR/plain/src/x.c"
	expect_denied "$E: a tree holding a repository renamed from TMPDIR into the project" "$EACCES" \
		write write.git-config "$P/imported" -- "$TRY" rename "$TMPDIR/made" "$P/imported"
	assert_rec "$E: ... the record names the config it would bring" "'$P/imported/deep/.git/config' in why"
	assert_file_absent "$E: ... nothing arrived" "$P/imported"
	expect_denied "$E: a package's repository renamed out of node_modules" "$EACCES" \
		write write.git-config "$ROOT/pkg" -- "$TRY" rename "$ROOT/node_modules/pkg" "$ROOT/pkg"
	expect_allowed "$E: a tree without one renamed in from TMPDIR" -- \
		"$TRY" rename "$TMPDIR/plain" "$P/plain"
	assert_file_present "$E: ... it arrived" "$P/plain/src/x.c"
	expect_allowed "$E: a repository moved within the project" -- "$TRY" rename "$P/sub/c2" "$P/sub/c3"
	rm -rf "$TMPDIR/made" "$ROOT/node_modules" "$P/plain"

	# --- audit mode: nothing refused, the bytes judged land, an alert --------
	at_e --mode audit -- git -C "$P" config core.fsmonitor "$nohook" >"$OUT" 2>"$ERR"
	assert_eq "$E: audit: git config core.fsmonitor runs" 0 $?
	assert_match "$E: audit: ... it is in .git/config" "fsmonitor = $nohook" "$(cat "$CFG")"
	assert_rec "$E: audit: ... an alert names it" \
		"event == 'alert' and action == 'alert' and rule_id == 'write.git-config' and 'core.fsmonitor' in why"
	cp "$SANDBOX/cfg.before" "$CFG"

	# --- the caller's identity: a config made by nobody is nobody's -----------
	if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
		chmod 0755 "$ROOT" "$SANDBOX"
		mkdir -p "$ROOT/nobody" && chown nobody "$ROOT/nobody"
		at_e --user nobody -- git init -q "$ROOT/nobody/r" >"$OUT" 2>"$ERR"
		assert_eq "$E: --user nobody: git init runs" 0 $?
		assert_eq "$E: --user nobody: .git/config is nobody's" nobody \
			"$(stat -c %U "$ROOT/nobody/r/.git/config" 2>/dev/null)"
		mkdir -p "$ROOT/rootonly/.git" && chmod 0755 "$ROOT/rootonly/.git"
		printf '[core]\n' >"$ROOT/rootonly/.git/config.lock" && chmod 0644 "$ROOT/rootonly/.git/config.lock"
		at_e --user nobody -- "$TRY" rename "$ROOT/rootonly/.git/config.lock" \
			"$ROOT/rootonly/.git/config" >"$OUT" 2>"$ERR"
		assert_eq "$E: --user nobody: a rename in root's directory fails as nobody's would" "$EACCES" $?
		assert_file_absent "$E: --user nobody: ... nothing made" "$ROOT/rootonly/.git/config"
	else
		skip "$E: --user nobody" "not root, or no user nobody"
	fi
done

unset AGENTTRACE_TEST_ENGINE

# --- the preload backend: no replacement it can make soundly --------------
sandbox_reset
at_q --backend preload -- git init -q pre
assert_rec "preload: git init's config is refused as a plain deny" \
	"$(deny_expr write write.git-config "$ROOT/pre/.git/config") and backend == 'preload'"
assert_file_absent "preload: ... .git/config is absent" "$ROOT/pre/.git/config"
