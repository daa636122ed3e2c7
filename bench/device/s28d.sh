#!/bin/sh
# s28d.sh - session 28's last device run (issue 24): the C reader against `perf script`
# on files made here (bench/decode, 3 runs a file): perf's own (`perf record -g` of four
# shell loops) and `uevent record`'s (the usdt flood, 2 threads); then the batched JIT
# load's threads sweep; then the 16-thread flood 6 more times with the defaults.
# Carry: tools/.libs libuevent/.libs bench/.libs bench/scale bench/device/.libs
# bench/device/perf.
set -u
cd "$(dirname "$0")/../.." || exit 1
. bench/device/s20-env.sh
mkdir -p "$OUT" || exit 1
tmp=$(mktemp -d)
echo "== $(date -u) $(uname -r) $(nproc) CPUs; $(grep -m1 'model name' /proc/cpuinfo)"
loop='i=0; while [ $i -lt 1500000 ]; do i=$((i+1)); done'
timeout 120 perf record -q -g -F 20000 -o "$tmp/pg.data" -- \
	sh -c "for k in 1 2 3 4; do sh -c '$loop' & done; wait" >/dev/null 2>&1
"$uev" record -o "$tmp/b.data" -- bench/scale --flood 2 100000 >/dev/null 2>&1
for f in pg b; do
	for r in 1 2 3; do
		echo "== $f.data, run $r"
		timeout 120 bench/.libs/decode "$tmp/$f.data" 2>&1 | grep -E '^(perf.data|libuevent|perf script|floor|speedup|ceiling)'
	done
done | tee "$OUT/decode.txt"
echo "== the batched JIT load's sweep"
SCALE_PATHS="=jit code_load_func, batched" SCALE_REPEAT=3 SCALE_SECONDS=0.3 SCALE_MAX_THREADS=32 \
	timeout 60 bench/scale 2>&1 | grep -v 'operations in all runs' | tee "$OUT/sweep.txt"
echo "== the 16-thread flood, defaults"
for r in 1 2 3 4 5 6; do
	rm -f "$tmp/f.data"
	timeout 60 "$uev" record -o "$tmp/f.data" -- bench/scale --flood 16 100000 >"$tmp/ro" 2>"$tmp/re"
	echo "r$r: $(sed 's/flood 16 threads 100000 marks each: //' "$tmp/ro"); $(grep -o 'lost [0-9]*' "$tmp/re" | head -1)"
done | tee "$OUT/flood.txt"
rm -rf "$tmp"
echo "== done $(date -u)"
