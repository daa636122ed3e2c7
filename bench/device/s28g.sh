#!/bin/sh
# s28g.sh - session 28: recordings made on 16 CPUs, brought back to be read on the 2-core
# host (issue 24 item 4: readers on a 16-CPU recording): `perf record -g` of 16 shell
# loops, and `uevent record` of the usdt flood at 16 threads x 10,000 marks, each
# compressed with xz into $OUT. Carry: tools/.libs libuevent/.libs bench/scale
# bench/device/.libs bench/device/perf.
set -u
cd "$(dirname "$0")/../.." || exit 1
. bench/device/s20-env.sh
mkdir -p "$OUT" || exit 1
tmp=$(mktemp -d)
echo "== $(date -u) $(uname -r) $(nproc) CPUs"
loop='i=0; while [ $i -lt 1500000 ]; do i=$((i+1)); done'
timeout 120 perf record -q -g -F 4000 -o "$tmp/pg16.data" -- \
	sh -c "for k in \$(seq 16); do sh -c '$loop' & done; wait" >/dev/null 2>&1
"$uev" record -o "$tmp/u16.data" -- bench/scale --flood 16 10000 2>&1 | tail -1
for f in pg16 u16; do
	ls -l "$tmp/$f.data"
	xz -T0 -3 -c "$tmp/$f.data" >"$OUT/$f.data.xz" || gzip -c "$tmp/$f.data" >"$OUT/$f.data.gz"
done
ls -l "$OUT"
rm -rf "$tmp"
echo "== done $(date -u)"
