#!/bin/sh
# scale-base.sh COMMIT - bench/device/scale-main: bench/scale.o linked against this build's
# static library with COMMIT's JIT files (libuevent/jit*.c and jit-internal.h) compiled in
# their place, so that scale.sh compares this build with COMMIT's JIT in one run.
# Run from the build directory after `make bench/scale` (an in-tree build).
set -eu
base=${1:?usage: scale-base.sh COMMIT}
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/libuevent"
cp libuevent/.libs/libuevent.a "$tmp/libuevent.a"
git -C "$top" show "$base:libuevent/jit-internal.h" >"$tmp/libuevent/jit-internal.h"
for f in $(git -C "$top" ls-tree --name-only "$base" libuevent/ | grep '^libuevent/jit.*\.c$'); do
	n=$(basename "$f" .c)
	git -C "$top" show "$base:$f" >"$tmp/libuevent/$n.c"
	${CC:-gcc} -DHAVE_CONFIG_H -I"$tmp/libuevent" -I. -I"$top" -I"$top/kernel/include/uapi" \
		-I"$top/libuevent" -fvisibility=hidden -g -O2 -fPIC -c "$tmp/libuevent/$n.c" \
		-o "$tmp/libuevent_la-$n.o"
	ar r "$tmp/libuevent.a" "$tmp/libuevent_la-$n.o"
done
${CC:-gcc} -g -O2 -o bench/device/scale-main bench/scale.o "$tmp/libuevent.a" \
	-ltraceevent -lbpf -lz -ldw -lelf -liberty -pthread
echo "bench/device/scale-main: bench/scale against $base's JIT"
