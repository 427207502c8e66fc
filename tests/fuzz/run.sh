#!/bin/sh
# Build the policy-loader fuzz target with clang (libFuzzer + ASan +
# UBSan) and run it for SECONDS (default 60) with a seed corpus made from
# the shipped policies and the test policies.  See doc/FUZZING.md.
#
#   tests/fuzz/run.sh [SECONDS] [WORKDIR]     (WORKDIR default: ./fuzz)
#
# Crashes are written to WORKDIR as crash-*; the corpus grows in
# WORKDIR/corpus and is reused by the next run.
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
secs=${1:-60}
work=${2:-$top/fuzz}
CC=${CLANG:-clang}

mkdir -p "$work/corpus" "$work/seeds"
sh "$top/rules/embed.sh" "$work/builtin.c" \
	default="$top/rules/default.json" strict="$top/rules/strict.json" \
	ci="$top/rules/ci.json" audit="$top/rules/audit.json" agent="$top/rules/agent.json"

# shellcheck disable=SC2046
$CC -g -O1 -std=gnu11 -D_GNU_SOURCE -I"$top" \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	$(pkg-config --cflags jansson) \
	"$top"/tests/fuzz/fuzz-policy.c \
	"$top"/rules/load.c "$top"/rules/jsonpos.c "$top"/rules/schema.c \
	"$top"/rules/vars.c "$top"/rules/compile.c "$top"/rules/explain.c \
	"$top"/rules/error.c "$work"/builtin.c \
	"$top"/rules/match-*.c "$top"/rules/shell-*.c "$top"/rules/decide.c "$top"/rules/check.c \
	$(pkg-config --libs jansson) \
	-o "$work/fuzz-policy"

n=0
for f in "$top"/rules/*.json "$top"/tests/policies/*/*/policy.json; do
	n=$((n + 1))
	cp "$f" "$work/seeds/seed-$n.json"
done

cd "$work"
./fuzz-policy -max_total_time="$secs" -max_len=16384 -timeout=10 -rss_limit_mb=2048 \
	-dict="$top/tests/fuzz/policy.dict" -print_final_stats=1 \
	corpus seeds
