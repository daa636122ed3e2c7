#!/bin/sh
# s27b.sh - session 27's second device run (issue 24.3): is the 16-thread usdt flood's
# loss the recorder's CPU time or its share of a CPU? The flood under `uevent record`
# with the default rings, alternating: as is, and the recorder at nice -10 (the flood
# put back to nice 0). Recorder CPU, context switches and migrations by perf stat
# --no-inherit. Carry: tools/.libs libuevent/.libs bench/scale bench/device/.libs
# bench/device/perf.
set -u
cd "$(dirname "$0")/../.." || exit 1
. bench/device/s20-env.sh
mkdir -p "$OUT" || exit 1
tmp=$(mktemp -d)
echo "== $(date -u) $(uname -r) $(nproc) CPUs"
for r in 1 2 3 4 5 6; do
	for how in plain nice; do
		rm -f "$tmp/f.data"
		if [ $how = nice ]; then pre="nice -n -10"; post="nice -n 10"; else pre=; post=; fi
		timeout 60 $pre perf stat --no-inherit -x, -e task-clock,context-switches,cpu-migrations \
			-o "$tmp/rs" -- "$uev" record -o "$tmp/f.data" -- $post bench/scale --flood 16 100000 \
			>"$tmp/ro" 2>"$tmp/re"
		st=$(awk -F, '/task-clock/ { printf "CPU %.0f ms", $1 } /context-sw/ { printf ", %s switches", $1 } /migrations/ { printf ", %s migrations", $1 }' "$tmp/rs")
		echo "r$r $how: $(sed 's/flood 16 threads 100000 marks each: //' "$tmp/ro"); $(grep -o 'lost [0-9]*' "$tmp/re" | head -1), woken $(grep -o 'woken up [0-9]*' "$tmp/re" | sed 's/woken up //'); $st"
	done
done | tee "$OUT/flood-nice.txt"
rm -rf "$tmp"
echo "== done $(date -u)"
