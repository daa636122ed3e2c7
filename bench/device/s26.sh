#!/bin/sh
# s26.sh - session 26's device run (issue 24.1): jit-scale.sh (the JIT paths' threads
# sweep, this build against bench/device/scale-main, built by scale-base.sh from the
# session 20 end, 09ed677), then where the time of the batched and the unbatched load
# goes at 16 threads (perf, flat by symbol) and where the batched load's threads sleep.
# Carry: bench/scale bench/device/scale-main bench/device/.libs bench/device/perf
# (bench/device/s20c.sh says how the perf bundle is made). Output under $OUT.
set -u
cd "$(dirname "$0")/../.." || exit 1
. bench/device/s20-env.sh
echo "== $(date -u) $(uname -r) $(nproc) CPUs"
SCALE_REPEAT=3 timeout 240 sh bench/device/jit-scale.sh | tail -40
tmp=$(mktemp -d)
for p in "code_load_func, batched" "code_load"; do
	f=$OUT/profile-$(echo "$p" | tr -c 'a-z_\n' '-').txt
	echo "== where the time goes: jit $p, 16 threads"
	SCALE_THREADS=16 SCALE_PATHS="=jit $p" SCALE_REPEAT=1 SCALE_SECONDS=0.5 \
		timeout 40 perf record -q -F 1999 -o "$tmp/p.data" -- bench/scale >/dev/null 2>&1
	timeout 60 perf report -i "$tmp/p.data" --stdio --no-children --sort sym 2>/dev/null |
		grep '%' | head -40 >"$f"
	head -25 "$f"
done
echo "== where the batched load's threads sleep, 16 threads"
SCALE_THREADS=16 SCALE_PATHS="=jit code_load_func, batched" SCALE_REPEAT=1 SCALE_SECONDS=0.3 \
	timeout 40 perf record -q -e sched:sched_switch --call-graph dwarf,8192 -o "$tmp/s.data" \
	-- bench/scale >/dev/null 2>&1
timeout 90 perf report -i "$tmp/s.data" --stdio --no-children --sort sym -G 2>/dev/null |
	grep -v '^$' | grep -v '^#' | head -150 >"$OUT/jit-batched-sleeps.txt"
grep -E -- '--[0-9.]+%--' "$OUT/jit-batched-sleeps.txt" | head -25
rm -rf "$tmp"
echo "== done $(date -u)"
