#!/bin/sh
# scale-profile.sh - where threads wait on the JIT paths: for each point of the sweep,
# the syscalls an operation makes (perf stat: write/writev to the files, futex sleeps
# and wakes) and the CPU ns an operation costs. A path that shares one file and one lock
# shows it here on any number of CPUs: writes per load falling below 1 as threads are
# added means lines go out in groups; futex calls per load are what waiting costs.
# Usage: scale-profile.sh [BENCH [THREADS...]] (bench/scale; 1 2 4). Needs perf with
# the syscalls tracepoints (root or perf_event_paranoid <= -1); else says so.
set -u
b=${1:-${top_builddir:-.}/bench/scale}
perf=${PERF:-perf}
[ $# -gt 0 ] && shift
threads=${*:-1 2 4}
if ! "$perf" stat -e syscalls:sys_enter_writev -- true >/dev/null 2>&1; then
	echo "scale-profile: perf cannot count syscalls here (perf_event_paranoid, tracefs)"
	exit 0
fi
tmp=$(mktemp) || exit 1
trap 'rm -f "$tmp"' EXIT
printf '%-32s %7s %10s %10s %10s %10s %10s\n' path threads ops writes/op writev/op \
	futex/op 'CPU ns/op'
for p in 'jit code_load' 'jit code_load_func (debug info)' 'jit code_load_func, batched'; do
	for t in $threads; do
		SCALE_PATHS="=$p" SCALE_THREADS=$t SCALE_REPEAT=${SCALE_REPEAT:-3} \
			"$perf" stat -x, -o "$tmp" -e syscalls:sys_enter_write \
			-e syscalls:sys_enter_writev -e syscalls:sys_enter_futex -- "$b" \
			>"$tmp.out" 2>"$tmp.err" || { echo "$p $t: $b failed"; continue; }
		ops=$(sed -n 's/.*: \([0-9]*\) operations in all runs/\1/p' "$tmp.err")
		cpu=$(awk -v t="$t" '$0 ~ /^jit/ { print $NF }' "$tmp.out" | tail -1)
		awk -F, -v p="$p" -v t="$t" -v ops="${ops:-0}" -v cpu="$cpu" '
			/sys_enter_write,/ { w = $1 } /sys_enter_writev/ { v = $1 }
			/sys_enter_futex/ { f = $1 }
			END { if (ops > 0) printf "%-32s %7d %10d %10.3f %10.3f %10.3f %10s\n",
				p, t, ops, w / ops, v / ops, f / ops, cpu }' "$tmp"
	done
done
rm -f "$tmp.out" "$tmp.err"
