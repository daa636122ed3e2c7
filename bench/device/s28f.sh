#!/bin/sh
# s28f.sh - session 28's last flood run (issue 24.3): the usdt flood at 16 threads,
# `uevent record` with its defaults alternating with `perf record -e libuevent:emit`
# (perf's default rings), 4 rounds; then `uevent record` at 32 threads 4 times.
# Carry: tools/.libs libuevent/.libs bench/scale bench/device/.libs bench/device/perf.
set -u
cd "$(dirname "$0")/../.." || exit 1
. bench/device/s20-env.sh
mkdir -p "$OUT" || exit 1
tmp=$(mktemp -d)
echo "== $(date -u) $(uname -r) $(nproc) CPUs"
"$uev" probe --perf-event "$top/bench/scale" >/dev/null 2>&1 && perf=1 || perf=0
for r in 1 2 3 4; do
	rm -f "$tmp/f.data"
	timeout 60 "$uev" record -o "$tmp/f.data" -- bench/scale --flood 16 100000 >"$tmp/ro" 2>"$tmp/re"
	echo "r$r uevent record, 16 threads: $(sed 's/flood 16 threads 100000 marks each: //' "$tmp/ro"); $(grep -o 'lost [0-9]*' "$tmp/re" | head -1)"
	[ $perf = 1 ] || continue
	rm -f "$tmp/p.data"
	timeout 60 perf record -q -e libuevent:emit -o "$tmp/p.data" -- bench/scale --flood 16 100000 >"$tmp/ro" 2>&1
	n=$(timeout 60 perf script -i "$tmp/p.data" -F event 2>/dev/null | grep -c 'emit:')
	echo "r$r perf record, 16 threads: $(grep -o '[0-9]* marks/s' "$tmp/ro"); $n in the file, lost $((1600000 - n))"
done | tee "$OUT/flood.txt"
for r in 1 2 3 4; do
	rm -f "$tmp/f.data"
	timeout 60 "$uev" record -o "$tmp/f.data" -- bench/scale --flood 32 100000 >"$tmp/ro" 2>"$tmp/re"
	echo "r$r uevent record, 32 threads: $(sed 's/flood 32 threads 100000 marks each: //' "$tmp/ro"); $(grep -o 'lost [0-9]*' "$tmp/re" | head -1)"
done | tee -a "$OUT/flood.txt"
[ $perf = 1 ] && "$uev" probe --perf-event-remove >/dev/null 2>&1
rm -rf "$tmp"
echo "== done $(date -u)"
