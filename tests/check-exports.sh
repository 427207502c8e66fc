#!/bin/sh
# libagenttrace-preload.so exports exactly the symbols of
# preload/exports.txt: the wrapped libc functions, nothing of the shim's
# own code or of the policy matchers linked into it (TAP).
: "${top_builddir:?run through make check}" "${top_srcdir:?}"
so=$top_builddir/preload/libagenttrace-preload.so
echo 1..2
if [ ! -f "$so" ]; then
	echo "not ok 1 - $so is built"
	echo "not ok 2 - exports match preload/exports.txt # $so missing"
	exit 0
fi
echo "ok 1 - $so is built"
want=$(sed -n '/global:/,/local:/p' "$top_srcdir/preload/exports.txt" |
	sed -n 's/^[[:space:]]*\([A-Za-z_][A-Za-z0-9_]*\);.*/\1/p' | LC_ALL=C sort -u)
got=$(nm -D --defined-only "$so" | awk '$2 ~ /^[TtWwiDdBb]$/ { sub(/@.*/, "", $3); print $3 }' |
	LC_ALL=C sort -u)
if [ "$want" = "$got" ]; then
	echo "ok 2 - exports match preload/exports.txt ($(echo "$got" | wc -l) symbols)"
else
	echo "not ok 2 - exports match preload/exports.txt"
	diff -u /dev/fd/3 /dev/fd/4 3<<E1 4<<E2 | sed 's/^/# /'
$want
E1
$got
E2
fi
