#!/bin/bash
# The registries policy (agenttrace-policy(5), SHIPPED POLICIES): an
# install naming a URL, a git repository or another index or registry is
# refused before it runs, with a record; installs from the registries and
# from paths stay allowed (alerted, as every install).  Nothing is
# fetched: the refused ones never run, the allowed one installs a local
# wheel with no index.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

src_expr() { # RULE
	printf "event == 'alert' and action == 'deny' and kind == 'exec' and rule_id.startswith('%s')" "$1"
}
for B in auto preload; do
	backend_use "$B"
	bk_q --policy registries -- "$PYTHON" -m pip install git+https://example.com/x.git
	assert_ne "${BK}pip install git+URL: refused" 0 $?
	assert_rec "${BK}pip install git+URL: its record" "$(src_expr exec.install-source.python-m-pip)"
	bk_q --policy registries -- "$PYTHON" -m pip install --index-url https://example.com/simple x
	assert_ne "${BK}pip install --index-url URL: refused" 0 $?
	assert_rec "${BK}pip install --index-url URL: its record" "$(src_expr exec.install-source.python-m-pip)"
	if have npm; then
		for spec in github:example/x example/x "x@git+https://example.com/x.git" https://example.com/x.tgz; do
			bk_q --policy registries -- npm install --no-audit --offline "$spec"
			assert_ne "${BK}npm install $spec: refused" 0 $?
			assert_rec "${BK}npm install $spec: its record" "$(src_expr exec.install-source.npm)"
		done
	fi
	# Under the default policy the same command is only alerted.
	bk_q -- "$PYTHON" -m pip install --no-index git+https://example.com/x.git
	assert_no_rec "${BK}default policy: pip install git+URL is not refused by policy" \
		"event == 'alert' and action == 'deny' and kind == 'exec'"
done

# A local wheel, no index: installed, with only the install alert.
if "$PYTHON" -m pip --version >/dev/null 2>&1; then
	make_wheel "$ROOT" kappa 1.0
	backend_use auto
	PATH=/usr/local/bin:/usr/bin:/bin PIP_CONFIG_FILE=/dev/null PIP_NO_INDEX=1 PIP_NO_CACHE_DIR=1 \
		PIP_DISABLE_PIP_VERSION_CHECK=1 bk_status "a local wheel under registries: installed" 0 -- \
		"$PYTHON" -m pip install -q --no-deps --prefix "$ROOT/pfx" ./kappa-1.0-py3-none-any.whl
	assert_no_rec "a local wheel under registries: no denial" "event == 'alert' and action == 'deny'"
	assert_rec "a local wheel under registries: the install's alert" \
		"event == 'alert' and action == 'alert' and rule_id == 'exec.install.python-m-pip'"
else
	skip "a local wheel under registries" "no pip for $PYTHON"
fi
