#!/bin/sh
# build-variant.sh NAME 'MACRO=VALUE ...' - bench/device/scale-vNAME: bench/scale.o linked
# against this build's static library with the tree's JIT files (libuevent/jit*.c)
# compiled again where jit-internal.h's #defines of the MACROs are given those VALUEs, so
# that one device run compares tunings of the same code. Run from the build directory
# after `make bench/scale` (an in-tree build).
set -eu
name=${1:?usage: build-variant.sh NAME 'MACRO=VALUE ...'}
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/libuevent"
cp libuevent/.libs/libuevent.a "$tmp/libuevent.a"
cp "$top/libuevent/jit-internal.h" "$tmp/libuevent/jit-internal.h"
for kv in ${2:-}; do
	k=${kv%%=*}
	v=${kv#*=}
	grep -q "^#define $k[[:space:]]" "$tmp/libuevent/jit-internal.h" ||
		{ echo "build-variant.sh: no #define $k in jit-internal.h" >&2; exit 1; }
	sed -i "s|^#define $k[[:space:]].*|#define $k $v|" "$tmp/libuevent/jit-internal.h"
done
for f in "$top"/libuevent/jit*.c; do
	n=$(basename "$f" .c)
	cp "$f" "$tmp/libuevent/$n.c"
	${CC:-gcc} -DHAVE_CONFIG_H -I"$tmp/libuevent" -I. -I"$top" -I"$top/kernel/include/uapi" \
		-I"$top/libuevent" -fvisibility=hidden -g -O2 -fPIC -c "$tmp/libuevent/$n.c" \
		-o "$tmp/libuevent_la-$n.o"
	ar r "$tmp/libuevent.a" "$tmp/libuevent_la-$n.o" 2>/dev/null
done
${CC:-gcc} -g -O2 -o "bench/device/scale-v$name" bench/scale.o "$tmp/libuevent.a" \
	-ltraceevent -lbpf -lz -ldw -lelf -liberty -pthread
echo "bench/device/scale-v$name: bench/scale with ${2:-no change}"
