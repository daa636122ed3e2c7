#!/bin/sh
# s20c.sh - session 20's third device run (issue 24.1-24.3): the threads sweep of
# bench/scale as built now against bench/device/ga/scale-base (bench/scale at the
# session's start, af0d9b2), interleaved; where the batched JIT path's time goes at 16
# threads; the 16-thread usdt flood under `uevent record` with the default rings.
# Carry: tools/.libs libuevent/.libs bench/scale bench/device/.libs bench/device/perf
# bench/device/ga. Output under $OUT, a summary to stdout. The baseline, built here:
#   git worktree add /tmp/base BASE && (cd /tmp/base && ./configure -q && make bench/scale)
#   mkdir -p bench/device/ga && cp /tmp/base/bench/scale bench/device/ga/scale-base
# perf: mkdir -p bench/device/perf/lib && cp /usr/bin/perf bench/device/perf/, and the
# libraries `ldd /usr/bin/perf` names beyond libc, libm and ld.so into its lib/.
set -u
cd "$(dirname "$0")/../.." || exit 1
. bench/device/s20-env.sh
echo "== $(date -u) $(uname -r) $(nproc) CPUs"
tmp=$(mktemp -d)
echo "== 1. sweep: ops/s in all (CPU ns/op), this build against the session's start"
for r in 1 2; do
	list="1 2 4 8 16 32"; [ $r = 2 ] && list="1 16"
	for t in $list; do for b in bench/device/ga/scale-base bench/scale; do
		printf 'r%s %-5s %2d ' $r "$( [ $b = bench/scale ] && echo now || echo start)" $t
		SCALE_THREADS=$t SCALE_REPEAT=2 SCALE_SECONDS=0.25 timeout 30 $b 2>&1 |
			grep -E '^(disabled|file|jit)' | grep -v '^#' |
			awk '{ p = $1 == "disabled" ? "off" : $1 == "file" ? "file" : $0 ~ /batched/ ? "batch" : $0 ~ /debug/ ? "func" : "load"
			       printf "%s %.0f (%.0f) ", p, $(NF - 3), $NF }'
		echo
	done; done
done | tee "$OUT/sweep.txt"
echo "== 2. JIT batched at 16 threads"
SCALE_THREADS=16 SCALE_PATHS="=jit code_load_func, batched" SCALE_REPEAT=1 SCALE_SECONDS=0.5 \
	timeout 40 perf record -q -F 1999 -o "$tmp/jp.data" -- bench/scale >/dev/null 2>&1
timeout 40 perf report -i "$tmp/jp.data" --stdio --no-children --sort sym 2>/dev/null |
	grep '%' | head -30 | tee "$OUT/jit-batched-profile.txt"
SCALE_THREADS=16 SCALE_PATHS="=jit code_load_func, batched" SCALE_REPEAT=1 SCALE_SECONDS=0.3 \
	timeout 40 perf record -q -e sched:sched_switch --call-graph dwarf,8192 -o "$tmp/js.data" \
	-- bench/scale >/dev/null 2>&1
timeout 90 perf report -i "$tmp/js.data" --stdio --no-children --sort sym -G 2>/dev/null |
	grep -v '^$' | grep -v '^#' | head -150 >"$OUT/jit-batched-sleeps.txt"
grep -E -- '--[0-9.]+%--' "$OUT/jit-batched-sleeps.txt" | head -30
echo "== 3. recorder: usdt flood, default rings"
for t in 16 16 16 32 32; do
	rm -f "$tmp/f.data"
	timeout 60 perf stat --no-inherit -x, -e task-clock -o "$tmp/rs" -- \
		"$uev" record -o "$tmp/f.data" -- bench/scale --flood "$t" 100000 >"$tmp/ro" 2>"$tmp/re"
	ms=$(awk -F, '/task-clock/ { print $1 }' "$tmp/rs")
	echo "$t threads: $(cat "$tmp/ro"); $(grep 'uevent record:' "$tmp/re" | sed 's/.*(//; s/;.*//'), $(grep -o 'lost [0-9]*' "$tmp/re" | head -1); recorder CPU $ms ms"
done | tee "$OUT/flood.txt"
if "$uev" probe --perf-event "$top/bench/scale" >/dev/null 2>&1; then
	for t in 16 16 32; do
		rm -f "$tmp/p.data"
		timeout 60 perf stat --no-inherit -x, -e task-clock -o "$tmp/rs" -- perf record -q \
			-e libuevent:emit -o "$tmp/p.data" -- bench/scale --flood "$t" 100000 >"$tmp/ro" 2>&1
		n=$(timeout 60 perf script -i "$tmp/p.data" -F event 2>/dev/null | grep -c emit)
		echo "perf record, $t threads: $(grep flood "$tmp/ro"); $n in the file, lost $((t * 100000 - n)); recorder CPU $(awk -F, '/task-clock/ { print $1 }' "$tmp/rs") ms"
	done | tee -a "$OUT/flood.txt"
	"$uev" probe --perf-event-remove >/dev/null 2>&1
fi
rm -rf "$tmp"
echo "== done $(date -u)"
