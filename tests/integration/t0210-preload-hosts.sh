#!/bin/bash
# Host names in net rules: the shim reports what getaddrinfo
# answered, agenttrace matches "net" rules written with host names ("*."
# wildcards included) and records carry "host"; for a program without the
# shim (static) agenttrace's own lookup of the allow rules is used.
# Names come from a private /etc/hosts bind-mounted in a mount namespace,
# addresses live on the lo of a network namespace the test makes: no
# packet ever leaves it.
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

if ! have unshare || ! have ip || ! have mount ||
	! unshare -m -n sh -c 'mount --bind /dev/null /etc/hostname && ip link set lo up' 2>/dev/null; then
	skip_all "unshare -m -n, mount or ip unavailable here"
fi

HOSTS_FILE=$SANDBOX/hosts
cat >"$HOSTS_FILE" <<'H'
127.0.0.1 localhost
192.0.2.1 api.example.test
192.0.2.2 evil.example.org
192.0.2.3 cdn.bad.example.test
H
POLICY=$SANDBOX/hosts-policy.json
cat >"$POLICY" <<'J'
{
  "agenttrace": 1,
  "name": "hosts-test",
  "extends": "default",
  "net": {
    "allow": [{"id": "net.test-wildcard", "addr": "*.example.test:9"}],
    "deny": [{"id": "net.test-bad", "addr": "*.bad.example.test", "why": "test deny by name"}]
  }
}
J

# at_ns [OPTIONS] -- CMD...: agenttrace in a fresh mount + network
# namespace, with the private hosts file and 192.0.2.1-3 on lo.
at_ns() {
	rm -f "$LOG"
	unshare -m -n sh -c '
		mount --bind "$HOSTS_FILE" /etc/hosts || exit 99
		ip link set lo up && ip addr add 192.0.2.1/24 dev lo &&
		ip addr add 192.0.2.2/24 dev lo && ip addr add 192.0.2.3/24 dev lo || exit 99
		cd "$ROOT" && exec "$@"' sh \
		timeout -k 5 "$AT_TIMEOUT" "$AGENTTRACE" --log "$LOG" "$@"
}
export HOSTS_FILE

# py_connect HOST PORT: python3 resolves HOST (getaddrinfo) and connects;
# exits 0 connected, 111 refused, 13 denied.
py_connect() {
	printf '%s' "
import errno, socket, sys
try:
    socket.create_connection(('$1', $2), timeout=5).close()
except OSError as e:
    sys.exit(e.errno or 1)"
}

for backend in auto preload; do
	b=$backend
	[ $b = auto ] && rb=ptrace || rb=preload

	at_ns --backend $b -p "$POLICY" -- "$PYTHON" -c "$(py_connect api.example.test 9)" >"$OUT" 2>"$ERR"
	assert_eq "$b: *.example.test:9 admits api.example.test (refused by the kernel)" 111 $?
	assert_no_alert "$b: api.example.test: no alert"

	at_ns --backend $b -p "$POLICY" -- "$PYTHON" -c "$(py_connect api.example.test 10)" >"$OUT" 2>"$ERR"
	assert_eq "$b: *.example.test:9 does not admit port 10" "$EACCES" $?
	assert_rec "$b: port 10: deny record with host" \
		"event == 'alert' and action == 'deny' and kind == 'net' and host == 'api.example.test' and host_source == 'shim' and port == 10 and backend == '$rb'"

	at_ns --backend $b -p "$POLICY" -- "$PYTHON" -c "$(py_connect evil.example.org 9)" >"$OUT" 2>"$ERR"
	assert_eq "$b: evil.example.org matches no allow rule: EACCES" "$EACCES" $?
	assert_rec "$b: evil.example.org: record carries host and address" \
		"event == 'alert' and action == 'deny' and host == 'evil.example.org' and addr == '192.0.2.2' and rule_id == 'net.fallback' and suggest and 'evil.example.org:9' in suggest"

	at_ns --backend $b -p "$POLICY" -- "$PYTHON" -c "$(py_connect cdn.bad.example.test 9)" >"$OUT" 2>"$ERR"
	assert_eq "$b: deny rule *.bad.example.test beats the wildcard allow" "$EACCES" $?
	assert_rec "$b: cdn.bad.example.test: denied by its own rule" \
		"event == 'alert' and rule_id == 'net.test-bad' and host == 'cdn.bad.example.test' and why == 'test deny by name'"

	at_ns --backend $b --allow-net api.example.test:9 -- "$PYTHON" -c "$(py_connect api.example.test 9)" >"$OUT" 2>"$ERR"
	assert_eq "$b: --allow-net api.example.test:9 admits it" 111 $?

	# gethostbyname (not getaddrinfo) is followed too.
	at_ns --backend $b -p "$POLICY" -- "$PYTHON" -c "
import socket, sys
a = socket.gethostbyname('evil.example.org')
try:
    socket.create_connection((a, 9), timeout=5).close()
except OSError as e:
    sys.exit(e.errno or 1)" >"$OUT" 2>"$ERR"
	assert_eq "$b: address from gethostbyname, connect by address: EACCES" "$EACCES" $?
	assert_rec "$b: gethostbyname's name is in the record" "event == 'alert' and host == 'evil.example.org'"

	# The summary's egress names each destination by the name it was
	# resolved by: one allowed twice, one denied (agenttrace(1), RECORDS).
	at_ns --backend $b -p "$POLICY" -- "$PYTHON" -c "
import socket
for h, p in (('api.example.test', 9), ('api.example.test', 9), ('evil.example.org', 9)):
    try:
        socket.create_connection((h, p), timeout=5).close()
    except OSError:
        pass" >"$OUT" 2>"$ERR"
	assert_rec "$b: egress: api.example.test:9 allowed twice, by name" \
		"event == 'summary' and {'family': 'inet', 'addr': '192.0.2.1', 'port': 9, 'host': 'api.example.test', 'allowed': 2, 'denied': 0} in egress"
	assert_rec "$b: egress: evil.example.org:9 denied, listed first" \
		"event == 'summary' and egress[0] == {'family': 'inet', 'addr': '192.0.2.2', 'port': 9, 'host': 'evil.example.org', 'allowed': 0, 'denied': 1}"

	# A connect to an address nobody resolved says so.
	at_ns --backend $b -p "$POLICY" -- "$TRY" connect 192.0.2.2 9 >"$OUT" 2>"$ERR"
	assert_eq "$b: connect by address only: EACCES" "$EACCES" $?
	assert_rec "$b: address only: host null, host_source none" \
		"event == 'alert' and addr == '192.0.2.2' and has('host') and host is None and host_source == 'none'"
done

# A static program has no shim: agenttrace's own lookup of the allow
# rule's name decides (ptrace).
if [ -n "$TRY_STATIC" ]; then
	at_ns --allow-net api.example.test:9 -- "$TRY_STATIC" connect 192.0.2.1 9 >"$OUT" 2>"$ERR"
	assert_eq "static: allow rule by name, resolved by agenttrace: admitted" 111 $?
	at_ns --allow-net api.example.test:9 --record -- "$TRY_STATIC" connect 192.0.2.1 9 >"$OUT" 2>"$ERR"
	assert_rec "static: the connect record names the host from agenttrace's lookup" \
		"event == 'connect' and host == 'api.example.test' and host_source == 'resolver'"
	at_ns --allow-net api.example.test:9 -- "$TRY_STATIC" connect 192.0.2.2 9 >"$OUT" 2>"$ERR"
	assert_eq "static: another address stays denied" "$EACCES" $?
else
	skip "static program and agenttrace's own lookups" "no static helper"
fi

# While agenttrace resolves the allow rules' names at start (here made slow
# on purpose), the shim's events of the preload backend keep arriving on
# the same channel: they are records, none may be dropped.
AGENTTRACE_TEST_RESOLVER_DELAY_MS=400 at_ns --backend preload --allow-net api.example.test:9 -- \
	sh -c 'echo x >"$HOME/.bashrc"' >"$OUT" 2>"$ERR"
assert_ne "preload, slow start-up lookup: the write to ~/.bashrc is denied" 0 $?
assert_rec "preload, slow start-up lookup: its record is kept" \
	"$(deny_expr write write.) and backend == 'preload' and path.endswith('/.bashrc')"
