#!/bin/bash
# The connect race: a thread flips a connect address between 127.0.0.1
# (allowed by --allow-net) and 192.0.2.10 (denied: a TEST-NET address on the lo of a
# network namespace the test makes, with a listener on both), so that the
# supervisor may judge one and the kernel connect to the other.  Under
# the notify engine such a caller's connect is made by the supervisor on
# a copy of its socket, to the address judged: no connection reaches
# 192.0.2.10.  Under the ptrace engine the race stays (doc/THREAT-MODEL.md).
. "${top_srcdir:-.}/tests/lib.sh"
need_agenttrace

unset AGENTTRACE_TEST_ENGINE
have unshare && have ip || skip_all "no unshare or ip"
unshare -n sh -c 'ip link set lo up && ip addr add 192.0.2.10/32 dev lo' 2>/dev/null ||
	skip_all "cannot make a network namespace here"
at_q --engine notify -- true || skip_all "no notify engine on this kernel: $(cat "$ERR")"

RACE=$ROOT/bin/race-connect
cp "$PROGS/race-connect" "$RACE" || exit 99
PORT=4${RANDOM:0:3}
N=${RACE_N:-3000}

# in_netns CMD...: CMD in a new network namespace whose lo has 192.0.2.10
# and a listener accepting on every address of PORT.
in_netns() {
	unshare -n sh -c '
		ip link set lo up && ip addr add 192.0.2.10/32 dev lo || exit 99
		"$0" -c "
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((\"0.0.0.0\", int(sys.argv[1]))); s.listen(4096)
print(\"ready\", flush=True)
while True:
    c, _ = s.accept(); c.close()
" "$1" >"$2" 2>&1 &
		listener=$!
		for i in $(seq 100); do grep -q ready "$2" && break; sleep 0.05; done
		shift 2
		cd "$ROOT" && "$@"; st=$?
		kill "$listener" 2>/dev/null
		exit $st' "$PYTHON" "$PORT" "$SANDBOX/listener.out" "$@"
}

in_netns "$RACE" 127.0.0.1 192.0.2.10 "$PORT" 200 >"$OUT" 2>&1
diag "native: $(cat "$OUT")"

for E in notify ptrace; do
	rm -f "$LOG"
	# The listener was started outside the session: 127.0.0.1 is
	# admitted by name, as a server the user trusts would be.
	in_netns timeout -k 5 "$AT_TIMEOUT" "$AGENTTRACE" --log "$LOG" --engine "$E" \
		--allow-net "127.0.0.1:$PORT" -- \
		"$RACE" 127.0.0.1 192.0.2.10 "$PORT" "$N" >"$OUT" 2>"$ERR"
	assert_eq "$E: the race helper ran" 0 $?
	diag "$E: $(cat "$OUT")"
	assert_rec "$E: tries of 192.0.2.10 are denied and recorded" \
		"event == 'alert' and action == 'deny' and kind == 'net' and addr == '192.0.2.10'"
	won=$(sed -n 's/.* bad=\([0-9]*\).*/\1/p' "$OUT")
	if [ "$E" = notify ]; then
		assert_eq "notify: no connection reached 192.0.2.10" 0 "${won:-x}"
		assert_match "notify: connections to 127.0.0.1 were made" " good=[1-9]" "$(cat "$OUT")"
	elif [ "${won:-0}" -gt 0 ]; then
		ok "ptrace: the race is won (${won} connections reached 192.0.2.10): doc/THREAT-MODEL.md says so"
	else
		ok "ptrace: the race was not won in $N tries"
	fi
done

# The family flipped instead: AF_UNSPEC names no destination (the connect
# dissolves an association), AF_INET names 192.0.2.10.  Made by the
# supervisor with the bytes judged, no connection reaches it.
for E in notify ptrace; do
	rm -f "$LOG"
	in_netns timeout -k 5 "$AT_TIMEOUT" "$AGENTTRACE" --log "$LOG" --engine "$E" \
		--allow-net "127.0.0.1:$PORT" -- \
		"$RACE" 127.0.0.1 192.0.2.10 "$PORT" "$N" family >"$OUT" 2>"$ERR"
	assert_eq "$E, family flipped: the race helper ran" 0 $?
	diag "$E, family flipped: $(cat "$OUT")"
	won=$(sed -n 's/.* bad=\([0-9]*\).*/\1/p' "$OUT")
	if [ "$E" = notify ]; then
		assert_eq "notify, family flipped: no connection reached 192.0.2.10" 0 "${won:-x}"
		assert_rec "notify, family flipped: the AF_INET tries are denied and recorded" \
			"event == 'alert' and action == 'deny' and kind == 'net' and addr == '192.0.2.10'"
	elif [ "${won:-0}" -gt 0 ]; then
		ok "ptrace, family flipped: the race is won (${won} connections reached 192.0.2.10): doc/THREAT-MODEL.md says so"
	else
		ok "ptrace, family flipped: the race was not won in $N tries"
	fi
done

# The address flipped by a second process rather than a thread: through a
# shared mapping, or through a file whose pages the caller mapped private
# and another process rewrites.  The caller has one thread; the memory the
# address lies in is what makes its connect one that can race, with the
# kernel's PROCMAP_QUERY (Linux 6.11) and with the maps text read instead.
for M in process file; do
	for Q in 1 0; do
		rm -f "$LOG"
		AGENTTRACE_TEST_PROCMAP_QUERY=$Q in_netns timeout -k 5 "$AT_TIMEOUT" "$AGENTTRACE" \
			--log "$LOG" --engine notify --allow-net "127.0.0.1:$PORT" -- \
			"$RACE" 127.0.0.1 192.0.2.10 "$PORT" "$N" "$M" >"$OUT" 2>"$ERR"
		assert_eq "notify, $M flips (PROCMAP_QUERY $Q): the race helper ran" 0 $?
		diag "notify, $M flips (PROCMAP_QUERY $Q): $(cat "$OUT")"
		won=$(sed -n 's/.* bad=\([0-9]*\).*/\1/p' "$OUT")
		assert_eq "notify, $M flips (PROCMAP_QUERY $Q): no connection reached 192.0.2.10" 0 "${won:-x}"
		assert_match "notify, $M flips (PROCMAP_QUERY $Q): connections to 127.0.0.1 were made" \
			" good=[1-9]" "$(cat "$OUT")"
		assert_rec "notify, $M flips (PROCMAP_QUERY $Q): the tries of 192.0.2.10 are recorded" \
			"event == 'alert' and action == 'deny' and kind == 'net' and addr == '192.0.2.10'"
	done
done
