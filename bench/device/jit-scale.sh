#!/bin/sh
# jit-scale.sh - issue 24.1 on a many-core machine in one run (about 2 minutes): the JIT
# paths' threads sweep, 1 to 2x the CPUs, this build (bench/scale) against main's JIT
# (bench/device/scale-main), in alternate rounds on the same machine, then the ratio
# each path reaches at 2 and 16 threads and the CPU count's (the goal: 16 threads >= 4x
# one thread's loads/s in all; never below one thread at 2), and where perf is there,
# the session-lock merges a batched load costs (bench/scale's merge uprobe).
#
# Build here first (in-tree): make bench/scale && sh bench/device/scale-base.sh BASE
# (BASE: main's commit before this branch; it builds bench/device/scale-main). Carry:
#   bench/scale bench/device/scale-main bench/device/.libs
# both link libtraceevent, libbpf, libelf and zlib dynamically: bench/device/.libs holds
# them where the device lacks them (nvtx-pytorch.sh --bundle, or copy the four .so.N).
# Output: $OUT/jit-scale.txt and a summary on stdout.
set -u
cd "$(dirname "$0")/../.." || exit 1
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT" || exit 1
export LD_LIBRARY_PATH="$PWD/bench/device/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export TMPDIR=${TMPDIR:-/tmp}
n=$(nproc)
echo "# $(date -u) $(uname -r) $n CPUs; $(grep -m1 'model name' /proc/cpuinfo)" |
	tee "$OUT/jit-scale.txt"
for r in 1 2; do
	for b in bench/scale bench/device/scale-main; do
		[ -x "$b" ] || { echo "# $b: not carried, skipped"; continue; }
		SCALE_PATHS=jit SCALE_REPEAT=${SCALE_REPEAT:-3} SCALE_SECONDS=${SCALE_SECONDS:-0.3} \
			SCALE_MAX_THREADS=$((2 * n)) timeout 150 "$b" \
			>"$OUT/jit-$(basename "$b")-$r.txt" 2>&1 || echo "# $b round $r failed: $?"
		echo "## $b, round $r" >>"$OUT/jit-scale.txt"
		grep -v 'operations in all runs' "$OUT/jit-$(basename "$b")-$r.txt" >>"$OUT/jit-scale.txt"
	done
done
echo "## ratio in all to one thread (this = bench/scale, main = scale-main; two rounds each)"
for b in scale scale-main; do
	for r in 1 2; do
		f=$OUT/jit-$b-$r.txt
		[ -f "$f" ] || continue
		awk -v n="$n" -v b="$b" -v r="$r" '/^#/ || /^path/ { next }
			{ t = $(NF - 4); x = $(NF - 1); p = $0
			  sub(/ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+$/, "", p)
			  if (t == 2 || t == 16 || t == n)
				printf "%-10s r%d %-34s %3d threads: %5s  %s\n", b, r, p, t, x,
				  (t == 16 && x + 0 >= 4) ? "(>= 4)" : (t == 16 ? "(< 4)" : "") }' "$f"
	done
done | tee -a "$OUT/jit-scale.txt"
# The serial part of a batched load: the merges under the session's lock, a load.
if command -v perf >/dev/null 2>&1 && perf probe -q -x bench/scale -a jitmerge=_uevent_jit_stage_merge \
	>/dev/null 2>&1; then
	echo "## merges (session lock) a batched load, bench/scale" | tee -a "$OUT/jit-scale.txt"
	for t in 1 16 "$n"; do
		SCALE_PATHS="=jit code_load_func, batched" SCALE_THREADS=$t SCALE_REPEAT=1 \
			perf stat -x, -e 'probe_scale:jitmerge' -o "$OUT/merge-$t.csv" bench/scale \
			>/dev/null 2>"$OUT/merge-$t.err"
		ops=$(sed -n 's/.*: \([0-9]*\) operations in all runs/\1/p' "$OUT/merge-$t.err")
		m=$(grep jitmerge "$OUT/merge-$t.csv" | cut -d, -f1)
		echo "$t threads: ${ops:-?} loads, ${m:-?} merges" | tee -a "$OUT/jit-scale.txt"
	done
	perf probe -q -d 'probe_scale:jitmerge' >/dev/null 2>&1
else
	echo "# no perf uprobes here: merges a load not counted" | tee -a "$OUT/jit-scale.txt"
fi
