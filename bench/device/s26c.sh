#!/bin/sh
# s26c.sh - session 26's third device run (issue 24.1): the JIT paths' sweep, this build
# (bench/scale: the merge's copies made with the waiting threads) against
# bench/device/scale-main (scale-base.sh cee8e95, the session's start), by jit-scale.sh;
# then the batched load at 1 and 16 threads, the builds alternating, 4 rounds; then
# where this build's batched load spends its time at 16 threads (call graph, children).
# Carry: bench/scale bench/device/scale-main bench/device/.libs bench/device/perf, and any
# bench/device/scale-v* (a commit between, to tell the cuts apart: scale-base.sh COMMIT,
# then move scale-main to scale-vN), which the alternating rounds run too.
set -u
cd "$(dirname "$0")/../.." || exit 1
. bench/device/s20-env.sh
mkdir -p "$OUT" || exit 1
echo "== $(date -u) $(uname -r) $(nproc) CPUs"
SCALE_REPEAT=3 timeout 200 sh bench/device/jit-scale.sh | grep -v '^#' | tail -30
echo "== batched, loads/s in all (CPU ns a load), alternating"
for r in 1 2 3 4; do
	for b in bench/device/scale-main bench/device/scale-v* bench/scale; do
		[ -x "$b" ] || continue
		for t in 1 16; do
			printf 'r%d %-24s %2d threads: ' "$r" "$b" "$t"
			SCALE_THREADS=$t SCALE_PATHS="=jit code_load_func, batched" SCALE_REPEAT=3 \
				SCALE_SECONDS=0.3 timeout 30 "$b" 2>&1 |
				awk '/^jit/ { print $(NF - 3), "(" $NF ")" }'
		done
	done
done | tee "$OUT/alternate.txt"
tmp=$(mktemp -d)
SCALE_THREADS=16 SCALE_PATHS="=jit code_load_func, batched" SCALE_REPEAT=1 SCALE_SECONDS=0.4 \
	timeout 60 perf record -q -F 999 --call-graph dwarf,16384 -o "$tmp/g.data" -- bench/scale >/dev/null 2>&1
timeout 150 perf report -i "$tmp/g.data" --stdio --children --sort sym 2>/dev/null |
	grep -E '^ +[0-9]' | head -150 >"$OUT/children.txt"
echo "== this build, 16 threads, children"
grep -E 'stage_merge|stage_flush|staged_load|dump_|map_|merge_sift|pwrite|win_|out_|memcpy|memmove|func_piece|debug_record|slab|mutex|yield|futex|fallocate|mmap|page_fault|handoff|pool|compact|clock|cp_' \
	"$OUT/children.txt" | head -50
rm -rf "$tmp"
echo "== done $(date -u)"
