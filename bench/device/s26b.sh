#!/bin/sh
# s26b.sh - session 26's second device run (issue 24.1): what the batched JIT load's
# merge does under the session's lock at 16 threads: the dump's file system, the sweep
# point at 1 and 16 threads with the dump on /tmp and on /dev/shm, and a call-graph
# profile (children) of the merge's parts. Carry as s26.sh. Output under $OUT.
set -u
cd "$(dirname "$0")/../.." || exit 1
. bench/device/s20-env.sh
mkdir -p "$OUT" || exit 1
echo "== $(date -u) $(uname -r) $(nproc) CPUs"
df -T /tmp /dev/shm 2>&1 | sed 's/^/# /'
for d in /tmp /dev/shm; do
	for t in 1 16 1 16; do
		printf '%-9s %2d threads: ' "$d" "$t"
		TMPDIR=$d SCALE_THREADS=$t SCALE_PATHS="=jit code_load_func, batched" SCALE_REPEAT=2 \
			SCALE_SECONDS=0.3 timeout 30 bench/scale 2>&1 | awk '/^jit/ { print $(NF - 3), "loads/s,", $NF, "CPU ns/op" }'
	done
done
tmp=$(mktemp -d)
SCALE_THREADS=16 SCALE_PATHS="=jit code_load_func, batched" SCALE_REPEAT=1 SCALE_SECONDS=0.4 \
	timeout 60 perf record -q -F 999 --call-graph dwarf,16384 -o "$tmp/g.data" -- bench/scale >/dev/null 2>&1
timeout 150 perf report -i "$tmp/g.data" --stdio --children --sort sym 2>/dev/null |
	grep -E '^ +[0-9]' | head -120 >"$OUT/children.txt"
grep -E 'stage_merge|stage_flush|staged_load|dump_|map_|merge_sift|pwrite|win_|out_|memcpy|memmove|func_piece|debug_record|slab|mutex|yield|futex|fallocate|mmap|page_fault|handoff|pool|compact|clock' \
	"$OUT/children.txt" | head -60
rm -rf "$tmp"
echo "== done $(date -u)"
