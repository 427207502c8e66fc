# tests/lib.sh: TAP helpers and a sandbox for the integration tests.
#
# Sourced by tests/integration/tNNNN-topic.sh.  The test harness
# (AM_TESTS_ENVIRONMENT) exports top_srcdir, top_builddir, AGENTTRACE and
# PROGS.  Every assertion prints one TAP line; the plan is printed at exit,
# so a test never has to count its own cases.
#
# Each test gets a sandbox under "$top_builddir/tests/tmp/<test>.XXXXXX"
# (never /tmp: the default policy denies running programs from there):
#   $ROOT    the project root, cwd of every `at` run (ROOT/bin: helpers)
#   $HOME    a temporary home (dotfiles and credentials live here)
#   $TMPDIR  a temporary TMPDIR
#   $LOG     the --log file of the last `at` run (outside ROOT)
# and removes it at exit unless a case failed or AGENTTRACE_KEEP=1.  The
# shared tests/tmp stays (make clean removes it): a test that removed it
# when empty would race another test's mkdir and mktemp under it.
#
# Skips: `skip DESC REASON` for one case, `skip_all REASON` for the file.
# With AGENTTRACE_MUST_WORK=1 (CI) every skip is a failure.

set -u

: "${top_builddir:?run through make check}" "${top_srcdir:?}" "${AGENTTRACE:?}" "${PROGS:?}"

TEST_NAME=$(basename "$0" .sh)
tap_n=0
tap_failed=0
tap_bg_pids=""

# --- TAP ----------------------------------------------------------------

diag() {
	printf '%s\n' "$@" | sed 's/^/# /'
}

ok() {
	tap_n=$((tap_n + 1))
	printf 'ok %d - %s\n' "$tap_n" "$1"
}

not_ok() {
	tap_n=$((tap_n + 1))
	tap_failed=$((tap_failed + 1))
	printf 'not ok %d - %s\n' "$tap_n" "$1"
	shift
	[ $# -gt 0 ] && diag "$@"
	return 0
}

skip() {
	if [ "${AGENTTRACE_MUST_WORK:-0}" = 1 ]; then
		not_ok "$1" "skipped ($2) but AGENTTRACE_MUST_WORK=1"
	else
		tap_n=$((tap_n + 1))
		printf 'ok %d - %s # SKIP %s\n' "$tap_n" "$1" "$2"
	fi
}

skip_all() {
	if [ "${AGENTTRACE_MUST_WORK:-0}" = 1 ]; then
		not_ok "$TEST_NAME" "skipped ($1) but AGENTTRACE_MUST_WORK=1"
	else
		echo "1..0 # SKIP $1"
		tap_plan_printed=1
	fi
	exit 0
}

# check DESC CMD...: ok when CMD exits 0.
check() {
	local desc=$1 out
	shift
	if out=$("$@" 2>&1); then
		ok "$desc"
	else
		not_ok "$desc" "command failed ($?): $*" "$out"
	fi
}

assert_eq() {
	if [ "$2" = "$3" ]; then
		ok "$1"
	else
		not_ok "$1" "expected: $2" "     got: $3"
	fi
}

assert_ne() {
	if [ "$2" != "$3" ]; then
		ok "$1"
	else
		not_ok "$1" "expected anything but: $2"
	fi
}

# assert_match DESC ERE TEXT
assert_match() {
	if printf '%s' "$3" | grep -Eq -- "$2"; then
		ok "$1"
	else
		not_ok "$1" "expected to match: $2" "got: $3"
	fi
}

assert_file_absent() {
	if [ -e "$2" ] || [ -L "$2" ]; then
		not_ok "$1" "$2 exists"
	else
		ok "$1"
	fi
}

assert_file_present() {
	if [ -e "$2" ] || [ -L "$2" ]; then
		ok "$1"
	else
		not_ok "$1" "$2 is missing"
	fi
}

# assert_file_content DESC PATH TEXT: PATH holds exactly TEXT.
assert_file_content() {
	local got
	if [ ! -f "$2" ]; then
		not_ok "$1" "$2 is missing"
		return 0
	fi
	got=$(cat "$2")
	assert_eq "$1" "$3" "$got"
}

# --- sandbox --------------------------------------------------------------

# Dirs a test made outside its sandbox (a place under /tmp or /dev/shm it
# needs): removed at the end, as the sandbox is.
tap_outside_dirs=
tap_cleanup() {
	local pid d
	for pid in $tap_bg_pids; do
		kill -KILL "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	done
	for d in $tap_outside_dirs; do
		rm -rf "$d"
	done
	if [ -z "${tap_plan_printed:-}" ]; then
		echo "1..$tap_n"
	fi
	if [ -n "${SANDBOX:-}" ] && [ -d "$SANDBOX" ]; then
		if [ "$tap_failed" -eq 0 ] && [ "${AGENTTRACE_KEEP:-0}" != 1 ]; then
			chmod -R u+rwx "$SANDBOX" 2>/dev/null
			rm -rf "$SANDBOX"
		else
			echo "# sandbox kept: $SANDBOX"
		fi
	fi
}
trap tap_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# bg_track PID: a background process of the test, killed at exit.
bg_track() {
	tap_bg_pids="$tap_bg_pids $1"
}

# The real python3 (a pyenv shim resolves through $HOME, which we replace).
PYTHON=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) || PYTHON=
[ -n "$PYTHON" ] || skip_all "python3 is required by the test helpers"
export PYTHON

# The sandbox must not lie beneath a root the default policy lets anyone
# write (/tmp, /var/tmp, /dev/shm): a HOME there would make every "write
# outside ROOT is denied" case pass through.  A build dir under /tmp (a CI
# clone there) moves the sandboxes to $AGENTTRACE_TEST_DIR, else
# /run/agenttrace-tests (root) or /var/lib/agenttrace-tests.
tap_base=$top_builddir/tests/tmp
case "$(cd -P "$top_builddir" && pwd)/" in
/tmp/* | /var/tmp/* | /dev/shm/*)
	tap_base=
	for d in "${AGENTTRACE_TEST_DIR:-}" /run/agenttrace-tests /var/lib/agenttrace-tests; do
		[ -n "$d" ] || continue
		case "$d/" in /tmp/* | /var/tmp/* | /dev/shm/*) continue ;; esac
		if mkdir -p "$d" 2>/dev/null && [ -w "$d" ]; then
			tap_base=$d
			break
		fi
	done
	[ -n "$tap_base" ] || { echo "Bail out! the build dir is under /tmp and no sandbox dir outside it is writable (set AGENTTRACE_TEST_DIR)"; exit 99; }
	;;
esac
mkdir -p "$tap_base" || exit 99
SANDBOX=$(mktemp -d "$tap_base/$TEST_NAME.XXXXXX") || exit 99
SANDBOX=$(cd -P "$SANDBOX" && pwd)
ROOT=$SANDBOX/root
HOME=$SANDBOX/home
TMPDIR=$SANDBOX/tmp
LOG=$SANDBOX/log.jsonl
OUT=$SANDBOX/out
ERR=$SANDBOX/err
mkdir -p "$ROOT/bin" "$HOME" "$TMPDIR" || exit 99
export ROOT HOME TMPDIR LOG
unset XDG_CONFIG_HOME XDG_CACHE_HOME XDG_DATA_HOME XDG_STATE_HOME XDG_RUNTIME_DIR \
	XDG_CONFIG_DIRS XDG_DATA_DIRS AGENTTRACE_CONTEXT SSH_AUTH_SOCK LD_PRELOAD

# Helpers run from ROOT/bin: the build dir may itself be under /tmp.
if [ ! -x "$PROGS/try-syscall" ]; then
	skip_all "helper $PROGS/try-syscall not built"
fi
cp "$PROGS/try-syscall" "$ROOT/bin/try-syscall" || exit 99
TRY=$ROOT/bin/try-syscall
TRY_STATIC=
if [ -x "$PROGS/try-syscall-static" ]; then
	cp "$PROGS/try-syscall-static" "$ROOT/bin/try-syscall-static" || exit 99
	TRY_STATIC=$ROOT/bin/try-syscall-static
fi

export TRY TRY_STATIC

# Likewise LeakSanitizer's suppressions file (a sanitizer build): a file it
# cannot read, as under a private /tmp, makes every program exit 1.
case ":${LSAN_OPTIONS:-}:" in
*:suppressions=*)
	tap_supp=${LSAN_OPTIONS##*suppressions=}
	tap_supp=${tap_supp%%:*}
	cp "$tap_supp" "$SANDBOX/lsan.supp" || exit 99
	LSAN_OPTIONS=${LSAN_OPTIONS/suppressions=$tap_supp/suppressions=$SANDBOX/lsan.supp}
	export LSAN_OPTIONS
	;;
esac

# make_wheel DIR NAME VERSION: DIR/NAME-VERSION-py3-none-any.whl, a wheel
# made by hand (a zip with its dist-info): pip installs it with no index.
make_wheel() {
	"$PYTHON" - "$@" <<'PY'
import base64, hashlib, sys, zipfile
d, name, ver = sys.argv[1:4]
def rec(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
files = {name + "/__init__.py": b"X = 1\n",
         "%s-%s.dist-info/METADATA" % (name, ver): ("Metadata-Version: 2.1\nName: %s\nVersion: %s\n\n" % (name, ver)).encode(),
         "%s-%s.dist-info/WHEEL" % (name, ver): b"Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
r = "".join("%s,%s,%d\n" % (k, rec(v), len(v)) for k, v in files.items()) + "%s-%s.dist-info/RECORD,,\n" % (name, ver)
files["%s-%s.dist-info/RECORD" % (name, ver)] = r.encode()
with zipfile.ZipFile("%s/%s-%s-py3-none-any.whl" % (d, name, ver), "w") as z:
    for k, v in files.items():
        z.writestr(k, v)
PY
}

need_agenttrace() {
	[ -x "$AGENTTRACE" ] || skip_all "$AGENTTRACE not built"
}

# errno values as a program's exit status (try-syscall exits with errno).
EPERM=1 ENOENT=2 EAGAIN=11 EACCES=13 ENOSYS=38

# --- running agenttrace -----------------------------------------------

AT_TIMEOUT=${AT_TIMEOUT:-60}
at_runs=0
export AT_TIMEOUT
# A backtrace stops at its 20 ms budget, which a loaded machine or a
# sanitizer build reaches after one frame: the tests give it more, so that
# what they assert does not depend on the load (check-backtrace tests the
# budget itself).
export AGENTTRACE_TEST_BACKTRACE_BUDGET_MS=${AGENTTRACE_TEST_BACKTRACE_BUDGET_MS:-5000}
# Likewise the walk of /proc that finds who listens behind a denied local
# endpoint (100 ms by default).
export AGENTTRACE_TEST_OWNER_WALK_MS=${AGENTTRACE_TEST_OWNER_WALK_MS:-5000}

# at [AGENTTRACE OPTIONS] -- COMMAND...: run agenttrace with --log "$LOG"
# (a fresh log each time) in $ROOT; returns its exit status.  A watchdog
# kills a hung run after $AT_TIMEOUT seconds (and says so).
at() {
	local st start
	rm -f "$LOG"
	start=$(date +%s)
	(cd "$ROOT" && exec timeout -k 5 "$AT_TIMEOUT" "$AGENTTRACE" --log "$LOG" "$@")
	st=$?
	# Every run's log stays in the sandbox (kept when a case fails).
	at_runs=$((at_runs + 1))
	[ -f "$LOG" ] && cp "$LOG" "$SANDBOX/log.$at_runs.jsonl"
	if [ $(( $(date +%s) - start )) -ge "$AT_TIMEOUT" ]; then
		diag "agenttrace ran into the ${AT_TIMEOUT}s test watchdog: $*"
	fi
	return $st
}

# at_q: like at, with the command's stdout and stderr in $OUT and $ERR.
at_q() {
	at "$@" >"$OUT" 2>"$ERR"
}

# --- reading the log ----------------------------------------------------

# The evaluator behind rec_*: each JSON line of $LOG is one record; EXPR is
# a Python expression over its keys (absent keys are None), plus
#   r        the record as a dict
#   rule_id  the rule's id whether "rule" is a string or {"id": ...}
#   pre(x, p)  x is a string starting with p
#   has(k)   the record has key k
tap_rec_py='
import builtins, json, sys
mode, path, expr = sys.argv[1], sys.argv[2], sys.argv[3]
class Rec(dict):
    # Names are looked up here first: builtins (str, len, ...) must win
    # over "absent key".
    def __missing__(self, key):
        return getattr(builtins, key, None)
def pre(x, p):
    return isinstance(x, str) and x.startswith(p)
recs = []
try:
    with open(path, "rb") as f:
        lines = f.read().split(b"\n")
except OSError:
    lines = []
for n, line in enumerate(lines, 1):
    if not line.strip():
        continue
    try:
        obj = json.loads(line.decode("utf-8"))
    except Exception as e:
        print("line %d is not JSON: %s" % (n, e), file=sys.stderr)
        continue
    r = Rec(obj)
    rule = r["rule"]
    r["rule_id"] = rule.get("id") if isinstance(rule, dict) else rule
    r["r"] = r
    r["pre"] = pre
    r["has"] = lambda k, r=r: k in r
    recs.append(r)
hits = []
for r in recs:
    try:
        if eval(expr, {"__builtins__": __builtins__}, r):
            hits.append(r)
    except Exception:
        pass
if mode == "count":
    print(len(hits))
elif mode == "field":
    if hits:
        v = hits[0][sys.argv[4]]
        print(v if isinstance(v, str) else json.dumps(v))
'

# rec_count EXPR: how many records of $LOG satisfy EXPR.
# python3 -S: the evaluator needs no site module, and starts in a third
# of the time (the integration tests make hundreds of these checks).
rec_count() {
	"$PYTHON" -S -c "$tap_rec_py" count "${REC_LOG:-$LOG}" "$1"
}

# rec_field EXPR KEY: KEY of the first record satisfying EXPR (JSON for
# non-strings; empty when none).
rec_field() {
	"$PYTHON" -S -c "$tap_rec_py" field "${REC_LOG:-$LOG}" "$1" "$2"
}

rec_dump() {
	if [ -s "${REC_LOG:-$LOG}" ]; then
		diag "log:" "$(head -c 4000 "${REC_LOG:-$LOG}")"
	else
		diag "log: (empty or missing)"
	fi
}

# assert_rec DESC EXPR: at least one record satisfies EXPR.
assert_rec() {
	local n
	n=$(rec_count "$2")
	if [ "${n:-0}" -ge 1 ]; then
		ok "$1"
	else
		not_ok "$1" "no record with: $2"
		rec_dump
	fi
}

# assert_no_rec DESC EXPR: no record satisfies EXPR.
assert_no_rec() {
	local n
	n=$(rec_count "$2")
	if [ "${n:-0}" -eq 0 ]; then
		ok "$1"
	else
		not_ok "$1" "$n record(s) with: $2"
		rec_dump
	fi
}

# The log is compact JSON (record.c): no parser needed for this one.
assert_no_alert() {
	if [ -f "${REC_LOG:-$LOG}" ] && grep -q '"event":"alert"' "${REC_LOG:-$LOG}"; then
		not_ok "$1" "an alert record in the log"
		rec_dump
	else
		ok "$1"
	fi
}

# The shape of a denial record (doc/RECORDS.md; the errnos of agenttrace(1)).
# deny_expr KIND RULE_PREFIX [PATH]
deny_expr() {
	local e="event == \"alert\" and action == \"deny\" and kind == \"$1\" and pre(rule_id, \"$2\")"
	if [ -n "${3:-}" ]; then
		e="$e and (path == \"$3\" or path2 == \"$3\")"
	fi
	printf '%s' "$e"
}

# expect_denied DESC ERRNO KIND RULE_PREFIX PATH -- COMMAND...
#   runs COMMAND under `at`, asserts the exit status is ERRNO (try-syscall
#   exits with the errno it saw) and one deny record of KIND whose rule id
#   starts with RULE_PREFIX and whose path or path2 is PATH (none: "").
expect_denied() {
	local desc=$1 want=$2 kind=$3 prefix=$4 path=$5 st
	shift 5
	[ "$1" = -- ] && shift
	at -- "$@" >"$OUT" 2>"$ERR"
	st=$?
	assert_eq "$desc: program sees errno $want" "$want" "$st"
	[ "$st" = "$want" ] || diag "stderr:" "$(head -c 2000 "$ERR")"
	assert_rec "$desc: deny record ($kind, $prefix*${path:+, $path})" "$(deny_expr "$kind" "$prefix" "$path")"
}

# expect_allowed DESC -- COMMAND...: exit 0 and no alert record.
expect_allowed() {
	local desc=$1 st
	shift
	[ "$1" = -- ] && shift
	at -- "$@" >"$OUT" 2>"$ERR"
	st=$?
	assert_eq "$desc: exit status 0" 0 "$st"
	[ "$st" = 0 ] || diag "stderr:" "$(head -c 2000 "$ERR")"
	assert_no_alert "$desc: no alert record"
}

# Helpers for cases needing a feature of the host.
have() {
	command -v "$1" >/dev/null 2>&1
}

# at_bg [OPTIONS] -- COMMAND...: start agenttrace in the background (stdout
# and stderr in $OUT and $ERR), with SIGINT and SIGQUIT at their defaults
# (a non-interactive shell would start it with both ignored); sets AT_PID.
at_bg() {
	rm -f "$LOG"
	(cd "$ROOT" && exec "$PYTHON" -c '
import os, signal, sys
for s in (signal.SIGINT, signal.SIGQUIT):
    signal.signal(s, signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])' "$AGENTTRACE" --log "$LOG" "$@") >"$OUT" 2>"$ERR" &
	AT_PID=$!
	bg_track "$AT_PID"
}

# wait_file PATH [SECONDS]: wait until PATH exists and is not empty.
wait_file() {
	local i n=$(( ${2:-10} * 20 ))
	for ((i = 0; i < n; i++)); do
		[ -s "$1" ] && return 0
		sleep 0.05
	done
	return 1
}

# wait_exit PID SECONDS: the exit status of background PID, or 255 after
# killing it when it did not end in time.
wait_exit() {
	local i n=$(( $2 * 20 ))
	for ((i = 0; i < n; i++)); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.05
	done
	if kill -0 "$1" 2>/dev/null; then
		diag "process $1 still running after $2 s: killed"
		kill -KILL "$1" 2>/dev/null
		wait "$1" 2>/dev/null
		return 255
	fi
	wait "$1"
}

# now_ms: a clock for elapsed-time assertions.
now_ms() {
	date +%s%3N
}

# assert_no_needed WHAT FILE REGEX: FILE (an ELF object) needs libc, and no
# library whose name matches REGEX (readelf -d's NEEDED entries).
assert_no_needed() {
	local needed
	if ! have readelf; then
		skip "$1 needs no $3" "no readelf"
		return
	fi
	needed=$(readelf -d "$2" | sed -n 's/.*(NEEDED).*\[\(.*\)\].*/\1/p' | tr '\n' ' ')
	assert_match "$1 needs libc" "libc\\.so" "$needed"
	if printf '%s' "$needed" | grep -Eq "$3"; then
		not_ok "$1 needs no $3" "DT_NEEDED: $needed"
	else
		ok "$1 needs no $3"
	fi
}

# --- one case, both backends ------------------------------------------------
# A file runs its cases once per backend: `for B in auto preload; do
# backend_use "$B"; ...; done`.  auto is agenttrace's default (ptrace,
# preload alongside); preload alone sees only what goes through libc, so a
# case states there what is true of it (bk_escapes).  BK prefixes the
# description of each case: "" for auto (the names the cases always had),
# "preload: " else.

# The summary of a preload-only run says that it was bypassable (doc/THREAT-MODEL.md).
BYPASSABLE="event == 'summary' and backend == 'preload' and bypassable == True"

# backend_use B: the `bk` runs that follow use --backend B (none for auto).
backend_use() {
	B=$1
	if [ "$1" = auto ]; then BK=; else BK="$1: "; fi
}

# bk [OPTIONS] -- COMMAND...: at under the current backend.
bk() {
	if [ "$B" = auto ]; then at "$@"; else at --backend "$B" "$@"; fi
}

# bk_q: bk with the command's stdout and stderr in $OUT and $ERR.
bk_q() {
	bk "$@" >"$OUT" 2>"$ERR"
}

# bk_rec_backend: what the current backend adds to a denial's record check.
bk_rec_backend() {
	[ "$B" = auto ] || printf " and backend == '%s'" "$B"
}

# bk_status DESC WANT -- COMMAND...: runs COMMAND under the current
# backend and asserts its exit status (stderr shown when it differs).
bk_status() {
	local desc=$1 want=$2 st
	shift 2
	[ "$1" = -- ] && shift
	bk_q -- "$@"
	st=$?
	assert_eq "$desc" "$want" "$st"
	[ "$st" = "$want" ] || diag "stderr:" "$(head -c 2000 "$ERR")"
}

# bk_denied DESC ERRNO KIND RULE_PREFIX PATH -- COMMAND...: expect_denied
# under the current backend (the record names that backend unless auto).
bk_denied() {
	local desc=$1 want=$2 kind=$3 prefix=$4 path=$5
	shift 5
	bk_status "$BK$desc: program sees errno $want" "$want" "$@"
	assert_rec "$BK$desc: deny record ($kind, $prefix*${path:+, $path})" \
		"$(deny_expr "$kind" "$prefix" "$path")$(bk_rec_backend)"
}

# bk_allowed DESC -- COMMAND...: expect_allowed under the current backend.
bk_allowed() {
	local desc=$1
	shift
	bk_status "$BK$desc: exit status 0" 0 "$@"
	assert_no_alert "$BK$desc: no alert record"
}

# bk_escapes DESC STATUS -- COMMAND...: under --backend preload, a call the
# shim cannot see (a static program, a raw syscall, a call it does not
# wrap) runs as it would natively (STATUS), leaves no alert, and the
# summary says the run was bypassable.
bk_escapes() {
	local desc=$1 want=$2
	shift 2
	bk_status "$BK$desc: NOT stopped (known limit), status $want as natively" "$want" "$@"
	# Both record checks from one python3 start.
	set -- $("$PYTHON" -S - "$LOG" <<'PY'
import json, sys
alerts = bypassable = 0
try:
    lines = open(sys.argv[1], "rb").read().split(b"\n")
except OSError:
    lines = []
for line in lines:
    try:
        r = json.loads(line)
    except ValueError:
        continue
    alerts += r.get("event") == "alert"
    bypassable += (r.get("event") == "summary" and r.get("backend") == "preload"
                   and r.get("bypassable") is True)
print(alerts, bypassable)
PY
)
	assert_eq "$BK$desc: no alert (the shim never saw it)" 0 "${1:-?}"
	assert_eq "$BK$desc: the summary says the run was bypassable" 1 "${2:-?}"
	[ "${1:-?}" = 0 ] && [ "${2:-?}" = 1 ] || rec_dump
}

# native COMMAND...: the status of COMMAND without agenttrace (in ROOT).
native() {
	(cd "$ROOT" && "$@") >/dev/null 2>&1
	echo $?
}

# native_race COMMAND...: a race helper run without agenttrace (in ROOT),
# its output into OUT, tried up to five times until it reports a won race
# (" bad=N", N > 0): on a loaded machine a whole run can fit in one time
# slice, the flipping thread or process never running beside the tries.
native_race() {
	local i
	for ((i = 0; i < 5; i++)); do
		(cd "$ROOT" && "$@") >"$OUT" 2>&1
		grep -q " bad=[1-9]" "$OUT" && return 0
	done
	return 0
}

# sandbox_reset: ROOT (but ROOT/bin), HOME and TMPDIR empty again, for a
# file whose cases change them to run again under the next backend.
sandbox_reset() {
	chmod -R u+rwx "$ROOT" "$HOME" "$TMPDIR" 2>/dev/null
	find "$ROOT" -mindepth 1 -maxdepth 1 ! -name bin -exec rm -rf {} +
	find "$HOME" "$TMPDIR" -mindepth 1 -maxdepth 1 -exec rm -rf {} +
}
