# tests/tools/lib-tools.sh: what the tools' tests share, on top of
# tests/lib.sh (TAP, sandbox with ROOT/HOME/TMPDIR).
#   REPORT       the agenttrace-report binary
#   DATA         the fixed logs and golden files (tests/tools/data)
#   POLICY_TOOL  agenttrace-policy (learn, replay)
. "$top_srcdir/tests/lib.sh"

REPORT=$top_builddir/agenttrace-report
DATA=$top_srcdir/tests/tools/data
[ -x "$REPORT" ] || skip_all "$REPORT not built"

POLICY_TOOL=${AGENTTRACE_POLICY_TOOL:-$top_builddir/agenttrace-policy}

# The Debian python3 (python3-jsonschema lives there), else the one
# tests/lib.sh found.
SYS_PYTHON=/usr/bin/python3
[ -x "$SYS_PYTHON" ] || SYS_PYTHON=$PYTHON

# assert_golden DESC GOLDEN FILE: FILE has exactly the bytes of GOLDEN.
assert_golden() {
	if cmp -s "$2" "$3"; then
		ok "$1"
	else
		not_ok "$1" "differs from $2:" "$(diff -u "$2" "$3" | head -n 60)"
	fi
}

# need_apt_package PROBE-COMMAND PACKAGE: true when the probe works,
# installing PACKAGE first where CI demands it (AGENTTRACE_MUST_WORK=1).
need_apt_package() {
	local probe=$1 pkg=$2
	if eval "$probe" >/dev/null 2>&1; then
		return 0
	fi
	if [ "${AGENTTRACE_MUST_WORK:-0}" = 1 ] && [ "$(id -u)" = 0 ] && have apt-get; then
		diag "installing $pkg"
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
			apt-get install -y -qq "$pkg") >/dev/null 2>&1
		eval "$probe" >/dev/null 2>&1 && return 0
	fi
	return 1
}

# help_options PROGRAM [ARG...]: the options PROGRAM ARG... --help lists,
# one a line, sorted: the "-x" and "--long" words of its option column
# (lines starting with blanks then '-', cut at the first run of two
# blanks that starts the description).
help_options() {
	"$@" --help 2>&1 | sed -n 's/^ \{1,\}\(-.*\)$/\1/p' | sed 's/  .*//' |
		grep -oE '(^|[ ,])--?[A-Za-z][A-Za-z-]*' | sed 's/^[ ,]*//' | sort -u
}
