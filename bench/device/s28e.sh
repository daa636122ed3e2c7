#!/bin/sh
# s28e.sh - session 28's device run on the unbatched JIT load (issue 24.1): `code_load`
# at 1 and 16 threads with the dump and perf map on ext4 (/tmp) and on tmpfs
# (/dev/shm), alternating, 3 rounds; then where a load's time goes at 16 threads on
# ext4 (call graph, children). Carry: bench/scale bench/device/.libs bench/device/perf.
set -u
cd "$(dirname "$0")/../.." || exit 1
. bench/device/s20-env.sh
mkdir -p "$OUT" || exit 1
P="=jit code_load"
shm=$(mktemp -d /dev/shm/s28e.XXXXXX)
echo "== $(date -u) $(uname -r) $(nproc) CPUs"
for r in 1 2 3; do
	for d in /tmp "$shm"; do
		for t in 1 16; do
			printf 'r%d %-22s %2d threads: ' "$r" "$d" "$t"
			TMPDIR=$d SCALE_THREADS=$t SCALE_PATHS="$P" SCALE_REPEAT=3 SCALE_SECONDS=0.3 \
				timeout 30 bench/scale 2>&1 | awk '/^jit/ { print $(NF - 3), "(" $NF ")" }'
		done
	done
done | tee "$OUT/unbatched.txt"
tmp=$(mktemp -d)
SCALE_THREADS=16 SCALE_PATHS="$P" SCALE_REPEAT=1 SCALE_SECONDS=0.4 \
	timeout 60 perf record -q -F 999 --call-graph dwarf,16384 -o "$tmp/g.data" -- bench/scale >/dev/null 2>&1
timeout 150 perf report -i "$tmp/g.data" --stdio --children --sort sym 2>/dev/null |
	grep -E '^ +[0-9]' | head -150 >"$OUT/children.txt"
echo "== 16 threads, ext4, children"
head -60 "$OUT/children.txt"
rm -rf "$tmp" "$shm"
echo "== done $(date -u)"
