#!/bin/bash
# What the session installed (doc/RECORDS.md, "installed"): read from what
# pip, npm, yarn, pnpm, cargo, gem and go leave behind (a dist-info an installer wrote, npm's hidden
# lockfile), with where each package came from; an install from a URL, a
# git repository or a path outside the project is flagged; npm's install
# scripts and pip's builds of a source tree are listed with their
# commands; a session that installs nothing shows nothing.  No registry is
# reached: local wheels, a loopback web server, local npm tarballs.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

[ -n "$PYTHON" ] && "$PYTHON" -m pip --version >/dev/null 2>&1 && have_pip=1
have npm && have_npm=1

REPORT_BIN=$top_builddir/agenttrace-report
# reports NAME: the five reports of $LOG as $SANDBOX/NAME.FORMAT.
reports() {
	local f
	for f in text md html junit sarif; do
		"$REPORT_BIN" -q --root "$ROOT" "$LOG" --format "$f" -o "$SANDBOX/$1.$f"
	done
}
# sarif_own FILE: the results of the install rules, one a line.
sarif_own() {
	"$PYTHON" -c 'import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
for r in run["results"]:
    if r["ruleId"].startswith("dependency.install"):
        a = r["locations"][0]["physicalLocation"]["artifactLocation"]
        assert rules[r["ruleIndex"]] == r["ruleId"]
        print(r["ruleId"], r["level"], r["properties"]["package"], a["uri"], a.get("uriBaseId"))' "$1"
}

# Nothing installed: nothing shown.
at_q -- sh -c 'echo hello >notes.txt'
assert_rec "nothing installed: the summary's installed lists nothing" \
	"event == 'summary' and installed == {'packages': [], 'scripts': [], 'flagged': 0, 'truncated': False}"
reports none
assert_eq "nothing installed: no section in any report" "" \
	"$(grep -l '^Installed:\|^### Installed\|id="installed"\|^installed:' "$SANDBOX"/none.*; sarif_own "$SANDBOX/none.sarif")"

# A dist-info the session did not write, or one no installer marked, is not listed.
mkdir -p "$ROOT/site/old-1.0.dist-info"
echo pip >"$ROOT/site/old-1.0.dist-info/INSTALLER"
printf 'Name: old\nVersion: 1.0\n\n' >"$ROOT/site/old-1.0.dist-info/METADATA"
at_q -- sh -c 'mkdir -p build/lib/fake-2.0.dist-info && printf "Name: fake\nVersion: 2.0\n\n" >build/lib/fake-2.0.dist-info/METADATA'
assert_rec "a dist-info not written in the session, or without INSTALLER: not listed" \
	"event == 'summary' and installed['packages'] == []"

# Hostile leftovers: a METADATA of junk, a direct_url.json that is no JSON,
# a METADATA that is a FIFO, a dist-info that is a link: no crash, no hang.
at_q -- sh -c '
	d=site/junk-1.0.dist-info; mkdir -p $d; echo pip >$d/INSTALLER
	head -c 3000 /dev/urandom >$d/METADATA; printf "{\"url\": " >$d/direct_url.json
	d=site/fifo-1.0.dist-info; mkdir -p $d; echo pip >$d/INSTALLER; mkfifo $d/METADATA
	ln -s old-1.0.dist-info site/link-1.0.dist-info'
assert_rec "hostile dist-infos: the junk one listed by its dir's name, from the registry; a FIFO's and a link's not" \
	"event == 'summary' and ('junk-1.0.dist-info', 'registry', None) in [(p['name'], p['source'], p['version']) for p in installed['packages']] and not [p for p in installed['packages'] if 'fifo' in p['location'] or 'link' in p['location']]"


if [ -n "${have_pip:-}" ]; then
	mkdir -p "$SANDBOX/outside" "$SANDBOX/srv" "$ROOT/wheels" "$ROOT/index"
	make_wheel "$SANDBOX/outside" alpha 1.0
	make_wheel "$ROOT/index" beta 2.0
	make_wheel "$ROOT/wheels" epsilon 0.5
	make_wheel "$SANDBOX/srv" zeta 3.0
	mkdir -p "$ROOT/srcpkg"
	printf 'from setuptools import setup\nsetup(name="delta", version="0.4", py_modules=[])\n' >"$ROOT/srcpkg/setup.py"
	"$PYTHON" -c 'import http.server, os, sys
os.chdir(sys.argv[1])
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
open(sys.argv[2] + ".tmp", "w").write(str(s.server_address[1]))
os.rename(sys.argv[2] + ".tmp", sys.argv[2])
s.serve_forever()' "$SANDBOX/srv" "$SANDBOX/port" 2>/dev/null &
	bg_track $!
	wait_file "$SANDBOX/port" 10
	port=$(cat "$SANDBOX/port")
	# pip's own configuration stays out: no index, no find-links, no cache.
	pipenv="PIP_CONFIG_FILE=/dev/null PIP_NO_INDEX=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_FIND_LINKS="
	pip="env $pipenv $PYTHON -m pip install -q --no-deps --prefix $ROOT/pfx"
	# The web server was started by the test, outside the session: named.
	at_q --allow-net "127.0.0.1:$port" -- sh -c "
		$pip $SANDBOX/outside/alpha-1.0-py3-none-any.whl &&
		$pip --find-links $ROOT/index beta &&
		$pip wheels/epsilon-0.5-py3-none-any.whl &&
		$pip http://127.0.0.1:$port/zeta-3.0-py3-none-any.whl &&
		{ $pip --no-build-isolation ./srcpkg >/dev/null 2>&1; true; }"
	assert_eq "pip: the installs ran" 0 $?
	pkg='[p for p in installed["packages"] if p["name"] == N][0]'
	pkg() { echo "${pkg/N/\'$1\'}"; }
	assert_rec "pip: a wheel from a path outside the project: flagged, with its URL" \
		"event == 'summary' and $(pkg alpha)['version'] == '1.0' and $(pkg alpha)['source'] == 'path' and $(pkg alpha)['flagged'] and $(pkg alpha)['url'] == 'file://$SANDBOX/outside/alpha-1.0-py3-none-any.whl'"
	assert_rec "pip: a package found in an index (--find-links): from the registry, not flagged" \
		"event == 'summary' and $(pkg beta)['version'] == '2.0' and $(pkg beta)['source'] == 'registry' and not $(pkg beta)['flagged'] and $(pkg beta)['url'] is None"
	assert_rec "pip: a wheel from a path in the project: not flagged" \
		"event == 'summary' and $(pkg epsilon)['source'] == 'path' and not $(pkg epsilon)['flagged']"
	assert_rec "pip: a wheel from a URL: flagged" \
		"event == 'summary' and $(pkg zeta)['source'] == 'url' and $(pkg zeta)['flagged'] and $(pkg zeta)['url'] == 'http://127.0.0.1:$port/zeta-3.0-py3-none-any.whl'"
	assert_rec "pip: where each was installed" \
		"event == 'summary' and pre($(pkg beta)['location'], '$ROOT/pfx/') and $(pkg beta)['location'].endswith('/beta-2.0.dist-info') and $(pkg beta)['ecosystem'] == 'pypi'"
	assert_rec "pip: the flagged count" "event == 'summary' and installed['flagged'] == 2 and len(installed['packages']) == 4"
	assert_rec "pip: a build of a source tree is listed with its command" \
		"event == 'summary' and [s for s in installed['scripts'] if s['ecosystem'] == 'pypi' and '_in_process.py' in s['command'] and s['cwd'] == '$ROOT/srcpkg']"
	assert_match "pip: the human lines name the flagged installs" "installed pypi zeta 3.0 from http://127.0.0.1:$port/zeta-3.0-py3-none-any.whl \(url\)" "$(cat "$ERR")"
else
	skip "pip installs" "no pip for $PYTHON"
fi

if [ -n "${have_npm:-}" ]; then
	# npm_pkg DIR NAME VERSION [SCRIPT]: a package dir and its tarball (npm pack, offline).
	npm_pkg() {
		mkdir -p "$1/$2"
		if [ -n "${4:-}" ]; then
			printf '{"name":"%s","version":"%s","scripts":{"postinstall":"%s"}}\n' "$2" "$3" "$4" >"$1/$2/package.json"
		else
			printf '{"name":"%s","version":"%s"}\n' "$2" "$3" >"$1/$2/package.json"
		fi
		(cd "$1/$2" && npm pack --offline --silent >/dev/null 2>&1)
	}
	npm_pkg "$SANDBOX/outside" gamma 3.1.4 "echo ran > postinstall-ran"
	npm_pkg "$ROOT/vendored" kappa 0.0.1
	mkdir -p "$ROOT/web"
	printf '{"name":"web","version":"1.0.0"}\n' >"$ROOT/web/package.json"
	at_q -- sh -c "cd web && npm install --offline --no-audit --no-fund $SANDBOX/outside/gamma/gamma-3.1.4.tgz ../vendored/kappa/kappa-0.0.1.tgz"
	assert_eq "npm: the install ran" 0 $?
	assert_file_present "npm: the postinstall script ran" "$ROOT/web/node_modules/gamma/postinstall-ran"
	pkg='[p for p in installed["packages"] if p["name"] == N][0]'
	pkg() { echo "${pkg/N/\'$1\'}"; }
	assert_rec "npm: a tarball outside the project: flagged, its install script said" \
		"event == 'summary' and $(pkg gamma)['ecosystem'] == 'npm' and $(pkg gamma)['version'] == '3.1.4' and $(pkg gamma)['source'] == 'path' and $(pkg gamma)['flagged'] and $(pkg gamma)['install_script'] and $(pkg gamma)['location'] == '$ROOT/web/node_modules/gamma'"
	assert_rec "npm: a tarball in the project: not flagged" \
		"event == 'summary' and $(pkg kappa)['source'] == 'path' and not $(pkg kappa)['flagged'] and not $(pkg kappa)['install_script']"
	assert_rec "npm: the postinstall script is listed with its command" \
		"event == 'summary' and {'ecosystem': 'npm', 'package': 'gamma', 'command': 'echo ran > postinstall-ran', 'cwd': '$ROOT/web/node_modules/gamma'} in installed['scripts']"
	assert_rec "npm: the lockfile diff says the same" \
		"event == 'summary' and [f for f in dependencies['files'] if f['path'] == 'web/package-lock.json' and f['added'] == 2]"
	reports npm
	assert_match "npm reports: markdown, the flagged install in the table" \
		'^\| <code>gamma</code> \| <code>3.1.4</code> \| npm \| \*\*path\*\* \| <code>file:.*gamma-3.1.4.tgz</code> \| flagged, install scripts \|$' \
		"$(cat "$SANDBOX/npm.md")"
	assert_match "npm reports: markdown, the script with its command" \
		'^\| npm <code>gamma</code> \| <code>echo ran &gt; postinstall-ran</code> \|$' "$(cat "$SANDBOX/npm.md")"
	assert_match "npm reports: html, the section with the flagged row" \
		'<section id="installed">.*<tr class="flagged"><td><code>gamma</code>' "$(tr '\n' ' ' <"$SANDBOX/npm.html")"
	assert_match "npm reports: text and junit list them" "! npm gamma 3.1.4 \(path: file:.*gamma: echo ran > postinstall-ran" \
		"$(grep -A20 '^Installed:' "$SANDBOX/npm.text" | tr '\n' ' ') $(grep -A6 '^installed:' "$SANDBOX/npm.junit" | tr '\n' ' ' | sed 's/&gt;/>/g')"
	assert_eq "npm reports: sarif, a warning for the flagged install and a note for the script" \
"dependency.install-source warning gamma web/node_modules/gamma/package.json %SRCROOT%
dependency.install-script note gamma web/node_modules/gamma/package.json %SRCROOT%" "$(sarif_own "$SANDBOX/npm.sarif")"
	# Installing again what is there: nothing new is listed.
	at_q -- sh -c "cd web && npm install --offline --no-audit --no-fund"
	assert_rec "npm: a second install of what node_modules holds lists nothing" \
		"event == 'summary' and installed['packages'] == []"
else
	skip "npm installs" "npm not installed"
fi

# yarn 1 and pnpm: what their records of node_modules list that they did
# not list before (yarn's .yarn-integrity with yarn.lock's versions,
# pnpm's .pnpm/lock.yaml).  Local tarballs, a directory in the project, a
# git repository on disk; the registry is a closed loopback port.
yarn_works() { [ -n "${have_npm:-}" ] && yarn --version 2>/dev/null | grep -q '^1\.'; }
pnpm_works() { [ -n "${have_npm:-}" ] && pnpm --version >/dev/null 2>&1; }
if yarn_works || pnpm_works; then
	npm_pkg "$SANDBOX/outside" lefty 1.2.3 "echo ran > postinstall-ran"
	npm_pkg "$SANDBOX/outside" depb 0.1.0
	mkdir -p "$ROOT/dirpkg"
	printf '{"name":"dirpkg","version":"2.0.0"}\n' >"$ROOT/dirpkg/package.json"
	# In the project: a local clone hard-links the repository's objects.
	git init -q "$ROOT/jsrepo"
	printf '{"name":"gitpkg","version":"3.1.4"}\n' >"$ROOT/jsrepo/package.json"
	(cd "$ROOT/jsrepo" && git add . && git -c user.name=t -c user.email=t@t commit -qm one)
	export npm_config_registry=http://127.0.0.1:9/ YARN_REGISTRY=http://127.0.0.1:9/ \
		YARN_CACHE_FOLDER=$HOME/.cache/yarn YARN_DISABLE_SELF_UPDATE_CHECK=true \
		npm_config_update_notifier=false
	# node_pkgs: the listed packages as (name, version, source, flagged, install_script).
	node_pkgs="sorted((p['name'], p['version'], p['source'], p['flagged'], p['install_script']) for p in installed['packages'])"
	first_want="[('dirpkg', '2.0.0', 'path', False, False), ('gitpkg', '3.1.4', 'git', True, False), ('lefty', '1.2.3', 'path', True, TOOL_SCRIPT)]"
fi
for tool in yarn pnpm; do
	if ! "${tool}_works"; then
		skip "$tool installs" "no $tool here (yarn 1, pnpm)"
		continue
	fi
	mkdir -p "$ROOT/$tool-web"
	printf '{"name":"web","version":"1.0.0"}\n' >"$ROOT/$tool-web/package.json"
	at_q -- sh -c "cd $tool-web && $tool add --offline file:$SANDBOX/outside/lefty/lefty-1.2.3.tgz file:../dirpkg git+file://$ROOT/jsrepo"
	assert_eq "$tool: the install ran" 0 $?
	assert_file_present "$tool: the postinstall script ran" "$ROOT/$tool-web/node_modules/lefty/postinstall-ran"
	# yarn's record names the packages whose scripts ran; pnpm's does not.
	want=${first_want/TOOL_SCRIPT/$([ "$tool" = yarn ] && echo True || echo False)}
	assert_rec "$tool: the three packages, their versions and sources; the outside tarball and git flagged" \
		"event == 'summary' and $node_pkgs == $want"
	assert_rec "$tool: where they are" \
		"event == 'summary' and sorted(p['location'] for p in installed['packages']) == ['$ROOT/$tool-web/node_modules/dirpkg', '$ROOT/$tool-web/node_modules/gitpkg', '$ROOT/$tool-web/node_modules/lefty']"
	assert_rec "$tool: the git source's URL with its commit" \
		"event == 'summary' and [p['url'] for p in installed['packages'] if p['name'] == 'gitpkg'][0].startswith('git+file://$ROOT/jsrepo#')"
	assert_rec "$tool: the postinstall script is listed with its command" \
		"event == 'summary' and [(x['package'], x['command']) for x in installed['scripts']] == [('lefty', 'echo ran > postinstall-ran')]"
	assert_no_rec "$tool: no denial" "event == 'alert' and action == 'deny'"
	at_q -- sh -c "cd $tool-web && $tool add --offline file:$SANDBOX/outside/depb/depb-0.1.0.tgz"
	assert_rec "$tool: a second add lists only what it added" \
		"event == 'summary' and $node_pkgs == [('depb', '0.1.0', 'path', True, False)]"
	at_q -- sh -c "cd $tool-web && $tool install --offline"
	assert_eq "$tool: an install with nothing to do ran" 0 $?
	assert_rec "$tool: an install with nothing to do lists nothing" \
		"event == 'summary' and installed['packages'] == []"
done

# yarn 2 and later (Berry, here as yarn-berry): the project's yarn.lock
# against the snapshot's once it writes its install state; everything in
# it at a first install.  node-modules and Plug'n'Play linkers.  (Paths
# relative: yarn 4 takes an absolute file: path for a relative one.)
if [ -n "${have_npm:-}" ] && yarn-berry --version >/dev/null 2>&1; then
	# yarn 1's settings, which yarn 4 refuses as legacy ones.
	unset YARN_REGISTRY YARN_CACHE_FOLDER YARN_DISABLE_SELF_UPDATE_CHECK
	for linker in node-modules pnp; do
		w=berry-$linker
		mkdir -p "$ROOT/$w"
		printf '{"name":"%s","version":"1.0.0"}\n' "$w" >"$ROOT/$w/package.json"
		printf 'nodeLinker: %s\nenableGlobalCache: false\nenableTelemetry: false\nnpmRegistryServer: "http://127.0.0.1:9"\n' \
			"$linker" >"$ROOT/$w/.yarnrc.yml"
		at_q -- sh -c "cd $w && yarn-berry add lefty@file:../../outside/lefty/lefty-1.2.3.tgz dirpkg@file:../dirpkg"
		assert_eq "yarn 4, $linker: the add ran" 0 $?
		want_loc=$([ "$linker" = pnp ] && echo "'$ROOT/$w'" || echo "'$ROOT/$w/node_modules/' + p['name']")
		assert_rec "yarn 4, $linker: the two packages, versions and sources; the outside tarball flagged; not the project itself" \
			"event == 'summary' and sorted((p['name'], p['version'], p['source'], p['flagged']) for p in installed['packages']) == [('dirpkg', '2.0.0', 'path', False), ('lefty', '1.2.3', 'path', True)]"
		assert_rec "yarn 4, $linker: where they are" \
			"event == 'summary' and all(p['location'] == $want_loc for p in installed['packages']) and installed['packages']"
		assert_no_rec "yarn 4, $linker: no denial" "event == 'alert' and action == 'deny'"
		at_q -- sh -c "cd $w && yarn-berry add depb@file:../../outside/depb/depb-0.1.0.tgz"
		assert_rec "yarn 4, $linker: a second add lists only what it added" \
			"event == 'summary' and [p['name'] for p in installed['packages']] == ['depb']"
		at_q -- sh -c "cd $w && yarn-berry install"
		assert_rec "yarn 4, $linker: an install with nothing to do lists nothing" \
			"event == 'summary' and installed['packages'] == []"
		rm -rf "$ROOT/$w/node_modules" "$ROOT/$w/.yarn/install-state.gz" "$ROOT/$w/.pnp.cjs"
		at_q -- sh -c "cd $w && yarn-berry install"
		assert_rec "yarn 4, $linker: a first install from the lockfile lists all three" \
			"event == 'summary' and sorted(p['name'] for p in installed['packages']) == ['depb', 'dirpkg', 'lefty']"
	done
else
	skip "yarn 4 installs" "no yarn-berry here"
fi

# cargo install: the crates a root's .crates2.json lists that it did not
# list before, from a path outside the project here (flagged).
rustup_home=${RUSTUP_HOME:-}
if have cargo && [ -z "$rustup_home" ]; then
	rustup_home=$(cd "$(dirname "$(command -v cargo)")/../.." 2>/dev/null && pwd)/.rustup
fi
cargoenv="RUSTUP_HOME=$rustup_home CARGO_HOME=$SANDBOX/cargo-home CARGO_TARGET_DIR=$TMPDIR/target"
if have cargo && env $cargoenv cargo --version >/dev/null 2>&1; then
	mkdir -p "$SANDBOX/hello/src"
	printf '[package]\nname = "hello"\nversion = "0.1.0"\nedition = "2021"\n' >"$SANDBOX/hello/Cargo.toml"
	echo 'fn main() {}' >"$SANDBOX/hello/src/main.rs"
	at_q -- env $cargoenv cargo install -q --offline --path "$SANDBOX/hello" --root "$ROOT/croot"
	assert_eq "cargo: the install ran" 0 $?
	assert_rec "cargo: the crate installed, from a path outside the project: flagged" \
		"event == 'summary' and installed['packages'] == [{'ecosystem': 'crates', 'name': 'hello', 'version': '0.1.0', 'source': 'path', 'url': 'file://$SANDBOX/hello', 'location': '$ROOT/croot', 'flagged': True}]"
	at_q -- env $cargoenv cargo install -q --offline --force --path "$SANDBOX/hello" --root "$ROOT/croot"
	assert_rec "cargo: installing it again lists nothing new" "event == 'summary' and installed['packages'] == []"
else
	skip "cargo installs" "no cargo that runs here"
fi

# gem install: every specifications/NAME-VERSION.gemspec the session wrote
# in a gem home (a gem built here; --local: no source is reached).
if have gem; then
	mkdir -p "$SANDBOX/gemsrc"
	cat >"$SANDBOX/gemsrc/hello-world.gemspec" <<'RUBY'
Gem::Specification.new do |s|
  s.name = "hello-world"; s.version = "1.2.0"; s.summary = "a test gem"
  s.authors = ["agenttrace tests"]; s.files = []
end
RUBY
	(cd "$SANDBOX/gemsrc" && gem build -q hello-world.gemspec >/dev/null 2>&1)
	at_q -- env GEM_HOME="$ROOT/gems" gem install -q --local --no-document "$SANDBOX/gemsrc/hello-world-1.2.0.gem"
	assert_eq "gem: the install ran" 0 $?
	assert_rec "gem: the gem installed, its name and version from the gemspec's name" \
		"event == 'summary' and installed['packages'] == [{'ecosystem': 'rubygems', 'name': 'hello-world', 'version': '1.2.0', 'source': 'registry', 'url': None, 'location': '$ROOT/gems/gems/hello-world-1.2.0', 'flagged': False}]"
	assert_no_rec "gem: no denial" "event == 'alert' and action == 'deny'"
else
	skip "gem installs" "no gem here"
fi

# go get: every GOMODCACHE/cache/download/MODULE/@v/VERSION.ziphash the
# session wrote.  A module proxy in a local dir (GOPROXY=file://), and a
# module fetched from its git repository (GOPROXY=direct; a local bare
# repository stands in for https://example.com/repo): no network.
if have go && [ -n "$PYTHON" ]; then
	# go_module DIR MODULE ESCAPED VERSION: MODULE at VERSION in the proxy DIR.
	go_module() {
		local d=$1/$3/@v
		mkdir -p "$d"
		printf 'module %s\n\ngo 1.19\n' "$2" >"$d/$4.mod"
		printf '{"Version":"%s","Time":"2026-01-01T00:00:00Z"}\n' "$4" >"$d/$4.info"
		echo "$4" >>"$d/list"
		"$PYTHON" -c 'import sys, zipfile
d, mod, ver = sys.argv[1:4]
with zipfile.ZipFile(d + "/" + ver + ".zip", "w") as z:
    z.writestr(mod + "@" + ver + "/go.mod", open(d + "/" + ver + ".mod").read())
    z.writestr(mod + "@" + ver + "/x.go", "package x\n")' "$d" "$2" "$4"
	}
	go_module "$SANDBOX/goproxy" example.com/Greet example.com/!greet v1.4.0
	git init -q "$SANDBOX/gorepo"
	printf 'module example.com/repo.git\n\ngo 1.19\n' >"$SANDBOX/gorepo/go.mod"
	printf 'package repo\n' >"$SANDBOX/gorepo/repo.go"
	(cd "$SANDBOX/gorepo" && git add . && git -c user.name=t -c user.email=t@t commit -qm one && git tag v0.2.0)
	git config --global url."file://$SANDBOX/gorepo".insteadOf https://example.com/repo
	git config --global protocol.file.allow always
	mkdir -p "$ROOT/goproj"
	printf 'module example.com/proj\n\ngo 1.19\n' >"$ROOT/goproj/go.mod"
	goenv="GOPROXY=file://$SANDBOX/goproxy GOSUMDB=off GOFLAGS=-mod=mod GOPRIVATE=example.com/repo.git GOTOOLCHAIN=local"
	# shellcheck disable=SC2086
	at_q -- sh -c "cd goproj && env $goenv go get example.com/Greet@v1.4.0 example.com/repo.git@v0.2.0"
	assert_eq "go: the get ran" 0 $?
	assert_rec "go: a module from the proxy, its path and version unescaped, from the registry" \
		"event == 'summary' and {'ecosystem': 'go', 'name': 'example.com/Greet', 'version': 'v1.4.0', 'source': 'registry', 'url': None, 'location': '$HOME/go/pkg/mod/example.com/!greet@v1.4.0', 'flagged': False} in installed['packages']"
	assert_rec "go: a module fetched from its git repository: git, its URL, flagged" \
		"event == 'summary' and [(p['name'], p['version'], p['source'], p['url'], p['flagged']) for p in installed['packages'] if p['name'].endswith('repo.git')] == [('example.com/repo.git', 'v0.2.0', 'git', 'https://example.com/repo', True)] and installed['flagged'] == 1"
	assert_rec "go: go.mod's diff names both modules" \
		"event == 'summary' and [c['added'] for c in dependencies['files'] if c['path'] == 'goproj/go.mod'] == [2]"
	assert_no_rec "go: no denial" "event == 'alert' and action == 'deny'"
	# shellcheck disable=SC2086
	at_q -- sh -c "cd goproj && env $goenv go build ./... && env $goenv go mod download"
	assert_rec "go: a module already in the cache is not listed again" \
		"event == 'summary' and installed['packages'] == []"
else
	skip "go module downloads" "no go here"
fi
