#!/bin/sh
# scale.sh - the threads sweep on a many-core machine, from carried build outputs: each
# shared path's throughput at 1, 2, 4, ... 2x the CPUs, this build against main's (where
# bench/device/scale-main was built), and a usdt flood under `uevent record` with the
# default rings against the old 256 pages. Output: $OUT/scale.txt. Under 4 minutes.
#
# Carry (all built here first: make bench/scale tools/uevent):
#   bench/scale  bench/device/scale-main  tools/.libs  libuevent/.libs  bench/device/lib
# bench/device/scale-main: bench/scale.o linked against main's JIT code, for the same run:
#   sh bench/device/scale-base.sh BASE_COMMIT (builds it from libuevent/.libs/libuevent.a)
# bench/device/lib holds what tools/.libs/uevent links beyond libc (libprotobuf-c.so.1):
#   mkdir -p bench/device/lib && cp /usr/lib/x86_64-linux-gnu/libprotobuf-c.so.1 bench/device/lib/
set -u
cd "$(dirname "$0")/../.." || exit 1
top=$(pwd)
OUT=${OUT:-/tmp}
mkdir -p "$OUT" && out=$OUT/scale.txt || exit 1
export LD_LIBRARY_PATH="$top/libuevent/.libs:$top/bench/device/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export TMPDIR=${TMPDIR:-/tmp}
exec >"$out" 2>&1
echo "# $(date -u) $(uname -r) $(nproc) CPUs; $(grep -m1 'model name' /proc/cpuinfo)"
# uprobes and the usdt path: tracefs where perf and uevent look for it
if ! [ -e /sys/kernel/tracing/events ]; then
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null ||
		echo "# cannot mount tracefs: $(mount -t tracefs nodev /sys/kernel/tracing 2>&1)"
fi
echo "# perf_event_mlock_kb $(cat /proc/sys/kernel/perf_event_mlock_kb), memlock $(ulimit -l)"

# 1. in-process paths: this build, then main's (same machine, back to back)
for b in bench/scale bench/device/scale-main; do
	if [ -x "$b" ]; then
		echo "## $b"
		SCALE_REPEAT=${SCALE_REPEAT:-3} SCALE_SECONDS=${SCALE_SECONDS:-0.3} timeout 120 "$b" \
			>"$OUT/scale-$(basename "$b").txt" 2>&1 || echo "# $b failed: $?"
		cat "$OUT/scale-$(basename "$b").txt"
		# the ratios the issue asks for: ops/s in all at N threads over one thread's
		echo "## $b: ratio to one thread (issue 24.1: JIT code_load >= 4 at 16 threads)"
		awk -v n="$(nproc)" '/^#/ || /^path/ { next }
			{ t = $(NF - 4); r = $(NF - 1); p = $0; sub(/ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+$/, "", p)
			  if (t == 2 || t == 16 || t == n) printf "%-36s %3d threads: %s\n", p, t, r }' \
			"$OUT/scale-$(basename "$b").txt"
	else
		echo "## $b: not carried, skipped"
	fi
done

# 1b. where the JIT paths' threads wait: syscalls and futex calls a load (needs perf)
if command -v perf >/dev/null 2>&1; then
	echo "## bench/scale-profile.sh (1 to 2x the CPUs)"
	t=1; list=
	while [ "$t" -le $((2 * $(nproc))) ]; do list="$list $t"; t=$((t * 2)); done
	SCALE_REPEAT=1 timeout 120 sh bench/scale-profile.sh bench/scale $list
else
	echo "## bench/scale-profile.sh skipped: no perf here"
fi

# 2. the usdt flood under uevent record: default rings, then -m 256 (the old default)
uev=tools/.libs/uevent
if ! "$uev" --version >/dev/null 2>&1; then
	echo "## flood skipped: $uev does not run: $("$uev" --version 2>&1 | head -2)"
	ldd "$uev" 2>&1 | grep "not found"
	exit 0
fi
t=1
max=$((2 * $(nproc)))
tmp=$(mktemp -d)
echo "## usdt flood, 100000 marks a thread (lost = made - read back)"
printf '%-14s %7s %10s %10s %14s %8s\n' rings threads marks lost 'marks/s all' seconds
while [ "$t" -le "$max" ]; do
	for m in default 256; do
		opt=; [ "$m" = default ] || opt="-m $m"
		rm -f "$tmp/f.data"
		s0=$(date +%s.%N)
		rate=$(timeout 60 "$uev" record $opt -o "$tmp/f.data" -- bench/scale --flood "$t" 100000 \
			2>"$tmp/err" | sed -n 's/.*each: \([0-9]*\) marks\/s/\1/p')
		s1=$(date +%s.%N)
		got=$("$uev" dump "$tmp/f.data" 2>&1 >/dev/null |
			sed -n 's/.* records, \([0-9]*\) uevents.*/\1/p')
		printf '%-14s %7d %10d %10d %14s %8.2f\n' "$m" "$t" $((t * 100000)) \
			$((t * 100000 - ${got:-0})) "${rate:-failed}" "$(awk "BEGIN { print $s1 - $s0 }")"
		[ -n "$rate" ] || tail -3 "$tmp/err"
		grep -h "record:" "$tmp/err" | tail -1
	done
	t=$((t * 2))
done
rm -rf "$tmp"
