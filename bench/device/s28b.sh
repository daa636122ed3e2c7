#!/bin/sh
# s28b.sh - session 28's second device run (issue 24.3): the usdt flood under `uevent
# record` with the default rings, alternating the recorder's new default priority (nice
# -10 against the command's) with --nice 0 (as before); 16 threads 10 times each, then 32
# threads 3 times each. Recorder CPU and switches by perf stat --no-inherit.
# Carry: tools/.libs libuevent/.libs bench/scale bench/device/.libs bench/device/perf.
set -u
cd "$(dirname "$0")/../.." || exit 1
. bench/device/s20-env.sh
mkdir -p "$OUT" || exit 1
tmp=$(mktemp -d)
echo "== $(date -u) $(uname -r) $(nproc) CPUs"
for t in 16 16 16 16 16 16 16 16 16 16 32 32 32; do
	for how in default "--nice 0"; do
		rm -f "$tmp/f.data"
		timeout 60 perf stat --no-inherit -x, -e task-clock,context-switches -o "$tmp/rs" -- \
			"$uev" record ${how#default} -o "$tmp/f.data" -- bench/scale --flood $t 100000 \
			>"$tmp/ro" 2>"$tmp/re"
		st=$(awk -F, '/task-clock/ { printf "CPU %.0f ms", $1 } /context-sw/ { printf ", %s switches", $1 }' "$tmp/rs")
		echo "$t threads, $how: $(sed 's/flood [0-9]* threads 100000 marks each: //' "$tmp/ro"); $(grep -o 'lost [0-9]*' "$tmp/re" | head -1); $st"
	done
done | tee "$OUT/flood-nice.txt"
rm -rf "$tmp"
echo "== done $(date -u)"
