#!/bin/sh
# s28c.sh - session 28's JIT device run (issue 24.1): tunings of the batched load (the
# hooks' path), each built by build-variant.sh from the same tree, against this build
# (bench/scale), at 1 and 16 threads, the builds alternating, $S28_ROUNDS rounds (5).
# Builds: bench/scale and every bench/device/scale-v* carried (f128: stages of 256 KiB
# merged from 128 KiB; p16: 16 pieces a merge; b1m: batch and lines' buffer of 1 MiB;
# all: the three; the run in the results was made before they took the v). Carry:
# bench/scale bench/device/scale-vf128 bench/device/scale-vp16 bench/device/scale-vb1m
# bench/device/scale-vall bench/device/.libs.
set -u
cd "$(dirname "$0")/../.." || exit 1
. bench/device/s20-env.sh
mkdir -p "$OUT" || exit 1
P="=jit code_load_func, batched"
echo "== $(date -u) $(uname -r) $(nproc) CPUs"
echo "== batched, loads/s in all (CPU ns a load), alternating"
for r in $(seq "${S28_ROUNDS:-5}"); do
	for b in bench/scale bench/device/scale-vf128 bench/device/scale-vp16 bench/device/scale-vb1m \
		bench/device/scale-vall; do
		[ -x "$b" ] || continue
		for t in 1 16; do
			printf 'r%d %-24s %2d threads: ' "$r" "$b" "$t"
			SCALE_THREADS=$t SCALE_PATHS="$P" SCALE_REPEAT=3 SCALE_SECONDS=0.3 \
				timeout 30 "$b" 2>&1 | awk '/^jit/ { print $(NF - 3), "(" $NF ")" }'
		done
	done
done | tee "$OUT/alternate.txt"
echo "== done $(date -u)"
