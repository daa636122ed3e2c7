#!/bin/sh
# s20b.sh - session 20's second device run (issue 24.1-24.3), each part bounded in time:
#   A. group-append variants (bench/device/ga/scale-{base,a,b,c}: bench/scale linked with
#      each group-append.c) on the file transport and JIT code_load, 1 to 32 threads;
#   B. where the batched JIT path's threads go at 16 threads: perf stat of syscalls,
#      switches and faults at 1 and 16 threads, a CPU profile, and the stacks threads
#      sleep in (sched_switch, dwarf unwinding);
#   C. the recorder after the drain change: a 16-thread usdt flood with the default rings,
#      3 runs (lost, recorder CPU), a 32-thread one, and a CPU profile.
# Carry: tools/.libs libuevent/.libs bench/.libs bench/scale bench/device/.libs
# bench/device/perf bench/device/ga. Output under $OUT, a summary to stdout.
set -u
cd "$(dirname "$0")/../.." || exit 1
. bench/device/s20-env.sh
echo "== $(date -u) $(uname -r) $(nproc) CPUs; $(perf version)"
flood=$top/bench/scale
tmp=$(mktemp -d)

echo "== A. group-append variants: ops/s in all (CPU ns/op)"
sweep() {	# $1 threads list, $2 round
	for t in $1; do for v in base a b c; do
		printf 'r%s %-5s %2d ' "$2" $v $t
		SCALE_THREADS=$t SCALE_PATHS="file,=jit code_load" SCALE_REPEAT=2 SCALE_SECONDS=0.3 \
			timeout 20 bench/device/ga/scale-$v 2>&1 | grep -E '^(file|jit code_load ) ' |
			awk '{ printf "%s %9d (%6.0f)  ", ($1 == "file" ? "file" : "jit"), $(NF - 3), $NF }'
		echo
	done; done
}
sweep "${A_THREADS:-1 2 4 8 16 32}" 1
sweep "${A_THREADS2:-1 16}" 2
echo "== B. JIT batched, 1 and 16 threads"
for t in 1 ${B_THREADS:-16}; do
	SCALE_THREADS=$t SCALE_PATHS="=jit code_load_func, batched" SCALE_REPEAT=1 SCALE_SECONDS=0.5 \
		timeout 40 perf stat -x, -o "$tmp/st$t" -e task-clock,context-switches,cpu-migrations,page-faults \
		-e syscalls:sys_enter_futex,syscalls:sys_enter_write,syscalls:sys_enter_writev \
		-e syscalls:sys_enter_mmap,syscalls:sys_enter_munmap,syscalls:sys_enter_madvise \
		-e syscalls:sys_enter_brk,syscalls:sys_enter_mprotect -- "$flood" >"$tmp/o$t" 2>"$tmp/e$t"
	ops=$(sed -n 's/.*: \([0-9]*\) operations in all runs/\1/p' "$tmp/e$t")
	grep '^jit' "$tmp/o$t"
	awk -F, -v ops="$ops" -v t="$t" '$3 != "" && $1 ~ /^[0-9.]+$/ {
		printf "  %2d threads %-36s %14.0f  %10.4f /op\n", t, $3, $1, (ops > 0 ? $1 / ops : 0) }' "$tmp/st$t"
done
SCALE_THREADS=16 SCALE_PATHS="=jit code_load_func, batched" SCALE_REPEAT=1 SCALE_SECONDS=0.5 \
	timeout 40 perf record -q -F 1999 -o "$tmp/jp.data" -- "$flood" >/dev/null 2>&1
timeout 40 perf report -i "$tmp/jp.data" --stdio --no-children --sort sym 2>/dev/null |
	grep '%' | head -40 | tee "$OUT/jit-batched-profile.txt"
SCALE_THREADS=16 SCALE_PATHS="=jit code_load_func, batched" SCALE_REPEAT=1 SCALE_SECONDS=0.3 \
	timeout 40 perf record -q -e sched:sched_switch --call-graph dwarf,8192 -o "$tmp/js.data" \
	-- "$flood" >/dev/null 2>&1
timeout 90 perf report -i "$tmp/js.data" --stdio --no-children --sort sym -G 2>/dev/null |
	grep -v '^$' | grep -v '^#' | head -150 >"$OUT/jit-batched-sleeps.txt"
head -70 "$OUT/jit-batched-sleeps.txt"

echo "== C. recorder: usdt flood, default rings"
for t in ${C_THREADS:-16 16 16 32}; do
	rm -f "$tmp/f.data"
	timeout 60 perf stat --no-inherit -x, -e task-clock -o "$tmp/rs" -- \
		"$uev" record -o "$tmp/f.data" -- "$flood" --flood "$t" 100000 >"$tmp/ro" 2>"$tmp/re"
	ms=$(awk -F, '/task-clock/ { print $1 }' "$tmp/rs")
	echo "$t threads: $(cat "$tmp/ro"); $(grep 'uevent record:' "$tmp/re" | sed 's/.*(//; s/;.*//'), $(grep -o 'lost [0-9]*' "$tmp/re" | head -1); recorder CPU $ms ms"
done
rm -f "$tmp/f.data"
timeout 60 perf record -q -F 4000 --no-inherit -o "$tmp/rp.data" -- \
	"$uev" record -o "$tmp/f.data" -- "$flood" --flood 16 100000 2>&1 | tail -2
timeout 40 perf report -i "$tmp/rp.data" --stdio --no-children --sort dso,sym 2>/dev/null |
	grep '%' | head -30 | tee "$OUT/record-profile.txt"
rm -rf "$tmp"
echo "== done $(date -u)"
