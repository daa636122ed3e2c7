#!/bin/sh
# s27d.sh - session 27's JIT device runs (issue 24.1, calls 4-6, 8, 9): the batched load
# (the hooks' path) of this build (bench/scale) against bench/device/scale-main
# (scale-base.sh 7ef3f82, main before the session) and any bench/device/scale-v*
# (commits between: scale-base.sh COMMIT, then move scale-main to scale-vN), at
# $S27_THREADS threads (1 16), the builds alternating, $S27_ROUNDS rounds (5); this
# build's threads sweep; then where its batched load spends its time at 16 threads
# (call graph, children). Call 4: S27_ROUNDS=6 S27_THREADS="1 4 16", no scale-v*;
# calls 8, 9: S27_ROUNDS=4 (no perf carried: no call graph).
# Carry: bench/scale bench/device/scale-main bench/device/scale-v1 bench/device/.libs
# bench/device/perf.
set -u
cd "$(dirname "$0")/../.." || exit 1
. bench/device/s20-env.sh
mkdir -p "$OUT" || exit 1
P="=jit code_load_func, batched"
echo "== $(date -u) $(uname -r) $(nproc) CPUs"
echo "== batched, loads/s in all (CPU ns a load), alternating"
for r in $(seq "${S27_ROUNDS:-5}"); do
	for b in bench/device/scale-main bench/device/scale-v* bench/scale; do
		[ -x "$b" ] || continue
		for t in ${S27_THREADS:-1 16}; do
			printf 'r%d %-24s %2d threads: ' "$r" "$b" "$t"
			SCALE_THREADS=$t SCALE_PATHS="$P" SCALE_REPEAT=3 SCALE_SECONDS=0.3 \
				timeout 30 "$b" 2>&1 | awk '/^jit/ { print $(NF - 3), "(" $NF ")" }'
		done
	done
done | tee "$OUT/alternate.txt"
echo "== this build's sweep"
SCALE_PATHS="$P" SCALE_REPEAT=3 SCALE_SECONDS=0.3 SCALE_MAX_THREADS=32 timeout 60 bench/scale 2>&1 |
	grep -v 'operations in all runs' | tee "$OUT/sweep.txt"
tmp=$(mktemp -d)
SCALE_THREADS=16 SCALE_PATHS="$P" SCALE_REPEAT=1 SCALE_SECONDS=0.4 \
	timeout 60 perf record -q -F 999 --call-graph dwarf,16384 -o "$tmp/g.data" -- bench/scale >/dev/null 2>&1
timeout 150 perf report -i "$tmp/g.data" --stdio --children --sort sym 2>/dev/null |
	grep -E '^ +[0-9]' | head -150 >"$OUT/children.txt"
echo "== this build, 16 threads, children"
grep -E 'stage_merge|stage_flush|staged_load|stage_wait|dump_|map_|merge_sift|pwrite|win_|out_|memcpy|memmove|func_piece|debug_record|mutex|yield|page_fault|filemap|anonymous|handoff|cp_' \
	"$OUT/children.txt" | head -45
rm -rf "$tmp"
echo "== done $(date -u)"
