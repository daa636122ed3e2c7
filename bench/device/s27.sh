#!/bin/sh
# s27.sh - session 27's device run (issue 24.3): the usdt flood under `uevent record`
# with the default rings, 16 threads 8 times and 32 twice, recorder CPU by perf stat
# --no-inherit, then `perf record -e libuevent:emit` (perf's default rings) on the same
# flood. Carry: tools/.libs libuevent/.libs bench/scale bench/device/.libs
# bench/device/perf.
set -u
cd "$(dirname "$0")/../.." || exit 1
. bench/device/s20-env.sh
mkdir -p "$OUT" || exit 1
tmp=$(mktemp -d)
echo "== $(date -u) $(uname -r) $(nproc) CPUs; ulimit -l $(ulimit -l);" \
	"perf_event_mlock_kb $(cat /proc/sys/kernel/perf_event_mlock_kb)"
for t in 16 16 16 16 32 16 16 16 16 32; do
	rm -f "$tmp/f.data"
	timeout 60 perf stat --no-inherit -x, -e task-clock -o "$tmp/rs" -- \
		"$uev" record -o "$tmp/f.data" -- bench/scale --flood "$t" 100000 >"$tmp/ro" 2>"$tmp/re"
	ms=$(awk -F, '/task-clock/ { print $1 }' "$tmp/rs")
	echo "$t threads: $(cat "$tmp/ro"); $(grep 'uevent record:' "$tmp/re" | sed 's/.*(//; s/;.*//'), $(grep -o 'lost [0-9]*' "$tmp/re" | head -1); recorder CPU $ms ms"
done | tee "$OUT/flood.txt"
if "$uev" probe --perf-event "$top/bench/scale" >/dev/null 2>&1; then
	for t in 16 16 16; do
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
