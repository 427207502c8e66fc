#!/bin/bash
# Code put into a cache (agenttrace-policy(5), the default policy's
# caches; doc/THREAT-MODEL.md, "Caches that later runs execute from"): the
# writes are allowed, and every file made code there (created with an
# exec bit, given one, renamed or linked in with one, a .pth) raises an
# alert write.cache-code; the summary counts them.  Data in the caches,
# and code in the project or the temp dir, raise nothing.  Under the
# preload backend the shim does not look: nothing is told.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

code_expr() { # PATH [WHY-PART]
	printf "event == 'alert' and action == 'alert' and kind == 'write' and rule_id == 'write.cache-code' and path == '%s' and %s in why" \
		"$1" "$(printf '%s' "${2:-}" | "$PYTHON" -c 'import sys; print(repr(sys.stdin.read()))')"
}
cache=$HOME/.cache/tool
venv_site=$HOME/.local/share/virtualenvs/v/lib/python3.11/site-packages
mkdir -p "$cache" "$HOME/.npm/_x" "$venv_site" "$HOME/.m2/repository"

backend_use auto
bk_status "chmod +x of a script in ~/.cache" 0 -- sh -c 'printf "#!/bin/sh\n" >"$1"; chmod +x "$1"' sh "$cache/run.sh"
assert_rec "chmod +x in ~/.cache: an alert" "$(code_expr "$cache/run.sh" "made executable")"
assert_rec "chmod +x in ~/.cache: the summary counts it" "event == 'summary' and cache_code == 1"
assert_match "chmod +x in ~/.cache: the stderr summary says so" "files made code in the caches.*: 1" "$(cat "$ERR")"

bk_status "a file created 0755 in ~/.npm" 0 -- "$PYTHON" -c 'import os, sys; os.close(os.open(sys.argv[1], os.O_CREAT | os.O_WRONLY, 0o755))' "$HOME/.npm/_x/cli"
assert_rec "created 0755 in ~/.npm: an alert" "$(code_expr "$HOME/.npm/_x/cli" "created executable")"

bk_status "a .pth in a virtualenv of the cache" 0 -- sh -c 'echo "import os" >"$1"' sh "$venv_site/evil.pth"
assert_rec "a .pth in a cached virtualenv: an alert" "$(code_expr "$venv_site/evil.pth" ".pth")"

cp /bin/true "$TMPDIR/tool"
bk_status "an executable renamed from TMPDIR into ~/.m2" 0 -- mv "$TMPDIR/tool" "$HOME/.m2/repository/tool"
assert_rec "renamed into ~/.m2: an alert on the new name" "$(code_expr "$HOME/.m2/repository/tool" "moved in")"

mkdir -p "$TMPDIR/browser/bin"
cp /bin/true "$TMPDIR/browser/bin/chrome"
cp /bin/true "$TMPDIR/browser/chrome_crashpad"
echo data >"$TMPDIR/browser/resources.pak"
bk_status "a directory with two executables renamed into ~/.cache" 0 -- mv "$TMPDIR/browser" "$HOME/.cache/browser"
assert_rec "directory renamed into ~/.cache: one alert, two executables" \
	"$(code_expr "$HOME/.cache/browser" "with 2 executable files")"
assert_eq "directory renamed into ~/.cache: one record" 1 "$(rec_count "rule_id == 'write.cache-code'")"

bk_status "a hard link of an executable into ~/.cache" 0 -- sh -c 'cp /bin/true "$TMPDIR/t2" && ln "$TMPDIR/t2" "$1"' sh "$cache/t2"
assert_rec "hard link into ~/.cache: an alert" "$(code_expr "$cache/t2" "moved in")"

# Forty executables: the first 32 recorded, all counted.
bk_status "forty executables in ~/.cache" 0 -- sh -c 'for i in $(seq 40); do : >"$1/x$i"; chmod 755 "$1/x$i"; done' sh "$cache"
assert_eq "forty executables: 32 records" 32 "$(rec_count "rule_id == 'write.cache-code'")"
assert_rec "forty executables: the summary counts 40" "event == 'summary' and cache_code == 40 and counts['write']['alert'] == 40"

# --- ordinary work: nothing told ---------------------------------------------
bk_allowed "data in the caches, a chmod that adds no exec bit, one already executable" -- sh -c '
	echo data >"$1/blob"; mkdir -p "$1/d"; chmod 644 "$1/blob"; chmod 755 "$1/run.sh"
	echo x >"$2/_x/index.json"; cp "$1/blob" "$1/blob2"' sh "$cache" "$HOME/.npm"
assert_rec "ordinary cache work: cache_code 0" "event == 'summary' and cache_code == 0"
bk_allowed "executables in the project and TMPDIR" -- sh -c '
	printf "#!/bin/sh\n" >build.sh; chmod +x build.sh; cp /bin/true "$TMPDIR/t3"; chmod +x "$TMPDIR/t3"'

# A git clone in a cache (yarn's and go's are): its sample hooks and its
# config are executable and never run; a real hook there is code.
git init -q "$SANDBOX/repo" && git -C "$SANDBOX/repo" -c user.name=t -c user.email=t@t commit -q --allow-empty -m one
bk_allowed "a git clone in ~/.cache" -- git clone -q "file://$SANDBOX/repo" "$cache/clone"
assert_rec "a git clone in ~/.cache: cache_code 0" "event == 'summary' and cache_code == 0"
bk_allowed "a bare repository moved into ~/.cache" -- sh -c 'git init -q --bare "$TMPDIR/b.git" && mv "$TMPDIR/b.git" "$1"' sh "$cache/b.git"
assert_rec "a bare repository moved in: cache_code 0" "event == 'summary' and cache_code == 0"
bk_status "a hook written into the cached clone" 0 -- sh -c 'printf "#!/bin/sh\n" >"$1"; chmod +x "$1"' sh "$cache/clone/.git/hooks/post-checkout"
assert_rec "a real hook in a cached clone: an alert" "$(code_expr "$cache/clone/.git/hooks/post-checkout" "made executable")"

# The shim does not look into caches.
backend_use preload
bk_status "chmod +x in ~/.cache" 0 -- sh -c 'printf "#!/bin/sh\n" >"$1"; chmod +x "$1"' sh "$cache/run2.sh"
assert_rec "${BK}chmod +x in ~/.cache: not told" "event == 'summary' and cache_code == 0"
