#!/bin/bash
# tests/valgrind.sh [TEST...]: the integration suite with the supervisor
# under valgrind memcheck: no invalid access, no definite leak.
#
# tests/lib.sh runs "$AGENTTRACE" as one program, so AGENTTRACE becomes a
# wrapper that execs valgrind on the real binary.  Each run writes its
# own valgrind log; any error makes valgrind exit 99 (--error-exitcode),
# which the test sees as a wrong exit status, and the logs are checked
# again at the end so nothing is missed.  Children that exec run natively
# (--trace-children=no): only the supervisor is checked.
#
# Run from the build dir:  top_srcdir=.. ../tests/valgrind.sh
# Environment: top_srcdir, top_builddir (default: .), VALGRIND (valgrind).
# Not part of `make check`: the suite takes several times as long under
# memcheck (see doc/HOWTO_TEST.md).
set -u

top_builddir=${top_builddir:-$(pwd)}
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
top_builddir=$(cd "$top_builddir" && pwd)
top_srcdir=$(cd "$top_srcdir" && pwd)
VALGRIND=${VALGRIND:-valgrind}
real=$top_builddir/agenttrace

command -v "$VALGRIND" >/dev/null 2>&1 || { echo "valgrind.sh: $VALGRIND not found" >&2; exit 77; }
[ -x "$real" ] || { echo "valgrind.sh: $real not built" >&2; exit 77; }

work=$top_builddir/tests/valgrind
rm -rf "$work"
mkdir -p "$work/logs" || exit 99
cat >"$work/agenttrace" <<EOF
#!/bin/sh
exec "$VALGRIND" -q --error-exitcode=99 --leak-check=full \\
	--errors-for-leak-kinds=definite --show-leak-kinds=definite \\
	--trace-children=no --child-silent-after-fork=yes \\
	--log-file="$work/logs/vg.%p.log" "$real" "\$@"
EOF
chmod +x "$work/agenttrace"

if [ $# -eq 0 ]; then
	set -- "$top_srcdir"/tests/integration/t[0-9]*.sh
fi

export top_srcdir top_builddir
export AGENTTRACE=$work/agenttrace
export AGENTTRACE_POLICY_TOOL=$top_builddir/agenttrace-policy
export PROGS=$top_builddir/tests/progs
# valgrind is some 20x slower: the floods run their short variant.
export AGENTTRACE_SKIP_SLOW=1 AT_TIMEOUT=${AT_TIMEOUT:-300}
# memcheck knows PTRACE_GETREGS but not what PTRACE_GET_SYSCALL_INFO
# writes: read registers the way it can follow.
export AGENTTRACE_TEST_REGS_FALLBACK=1

failed=0
for t in "$@"; do
	name=$(basename "$t" .sh)
	start=$(date +%s)
	bash "$t" >"$work/$name.tap" 2>&1
	nok=$(grep -c '^not ok' "$work/$name.tap")
	echo "$name: $(grep -c '^ok' "$work/$name.tap") ok, $nok not ok ($(( $(date +%s) - start )) s)"
	[ "$nok" -eq 0 ] || failed=1
done

# Every log that holds an error (valgrind -q prints only errors).
bad=0
for l in "$work"/logs/vg.*.log; do
	[ -s "$l" ] || continue
	if grep -q 'Invalid \|uninitialised\|definitely lost\|Syscall param\|Mismatched free\|Invalid free' "$l"; then
		bad=$((bad + 1))
		echo "== $l"
		head -n 40 "$l"
	fi
done
echo "valgrind: $(ls "$work"/logs | wc -l) supervisor runs, $bad with memcheck errors"
[ $bad -eq 0 ] && [ $failed -eq 0 ]
