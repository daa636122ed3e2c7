#!/bin/sh
# scale-record.sh - a usdt mark flood from 1, 2, 4, ... threads under `uevent record`
# (and, where perf is installed, under `perf record -e libuevent:emit`): marks lost of
# those made, and the flood's marks/s in all, per thread and against one thread.
set -u
top_builddir=${top_builddir:-.}
PERF=${PERF:-perf}
N=${SCALE_FLOOD_MARKS:-100000}
bin=$(readlink -f "$top_builddir/bench/scale")
uevent=$(readlink -f "$top_builddir/tools/uevent")
ncpu=$(getconf _NPROCESSORS_ONLN)
max=${SCALE_MAX_THREADS:-$((2 * ncpu))}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/uevent-bench-flood-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
skip() { echo "usdt flood                   skipped: $1"; exit 0; }
[ "$(id -u)" = 0 ] || skip "needs root for uprobes"
[ -x "$bin" ] && [ -x "$uevent" ] || skip "build bench/scale and tools/uevent first"

echo "# usdt flood, $N marks a thread, on $ncpu CPUs (ratio = marks/s in all / 1 thread)"
printf '%-22s %7s %10s %10s %14s %12s %7s\n' recorder threads marks lost 'marks/s all' \
	'per thread' ratio
sweep() {	# $1: name, $2: command to run the flood under, the thread count appended
	one=
	t=1
	while [ "$t" -le "$max" ]; do
		rm -f "$tmp/data"
		out=$(eval "$2 $t $N" 2>"$tmp/err")
		rate=$(echo "$out" | sed -n 's/.*each: \([0-9]*\) marks\/s/\1/p')
		# what the file holds, read back: lost = made - there
		got=$("$uevent" dump "$tmp/data" 2>&1 >/dev/null |
			sed -n 's/.* records, \([0-9]*\) uevents.*/\1/p')
		lost=$((t * N - ${got:-0}))
		[ -n "$rate" ] || { echo "$1: the flood failed: $(tail -2 "$tmp/err")"; return; }
		[ -n "$one" ] || one=$rate
		printf '%-22s %7d %10d %10s %14d %12d %7.2f\n' "$1" "$t" $((t * N)) "$lost" \
			"$rate" $((rate / t)) "$(echo "$rate $one" | awk '{ print $1 / $2 }')"
		[ "$t" -ge "$max" ] && break
		t=$((t * 2)); [ "$t" -gt "$max" ] && t=$max
	done
}
sweep "uevent record" "'$uevent' record -o '$tmp/data' -- '$bin' --flood"
if command -v "$PERF" >/dev/null 2>&1; then
	if "$uevent" probe --perf-event "$bin" >/dev/null 2>"$tmp/probe"; then
		sweep "perf record -e emit" \
			"'$PERF' record -e libuevent:emit -o '$tmp/data' -- '$bin' --flood"
		"$uevent" probe --perf-event-remove >/dev/null 2>&1
	else
		echo "perf record            skipped: uevent probe --perf-event: $(cat "$tmp/probe")"
	fi
else
	echo "perf record            skipped: no perf"
fi
exit 0
