#!/bin/sh
# s28.sh - session 28's first device run (issue 24.3): where the recorder's time goes on
# the 16-thread usdt flood, at main with its blocks allocated ahead (5ce6c76). The flood
# under `uevent record` with the default rings, the output alternating between /tmp and
# /dev/shm (no block allocation); recorder CPU, switches and hardware counters by perf
# stat --no-inherit; then a profile of the recorder alone (perf record --no-inherit).
# Carry: tools/.libs libuevent/.libs bench/scale bench/device/.libs bench/device/perf.
set -u
cd "$(dirname "$0")/../.." || exit 1
. bench/device/s20-env.sh
mkdir -p "$OUT" || exit 1
tmp=$(mktemp -d)
shm=$(mktemp -d /dev/shm/s28.XXXXXX)
echo "== $(date -u) $(uname -r) $(nproc) CPUs; /tmp on $(df -T /tmp | awk 'NR==2 { print $2 }')"
ev=task-clock,context-switches,cpu-migrations
perf stat -e cycles -- true >/dev/null 2>&1 && ev=$ev,cycles,instructions,cache-misses
for r in 1 2 3 4 5 6; do
	for d in "$tmp" "$shm"; do
		rm -f "$d/f.data"
		timeout 60 perf stat --no-inherit -x, -e $ev -o "$tmp/rs" -- \
			"$uev" record -o "$d/f.data" -- bench/scale --flood 16 100000 >"$tmp/ro" 2>"$tmp/re"
		st=$(awk -F, '$3 ~ /task-clock/ { printf "CPU %.0f ms", $1 } $3 ~ /^[a-z-]+$/ && $3 != "task-clock" { printf ", %s %s", $1, $3 }' "$tmp/rs")
		echo "r$r $d: $(sed 's/flood 16 threads 100000 marks each: //' "$tmp/ro"); $(grep -o 'lost [0-9]*' "$tmp/re" | head -1), woken $(grep -o 'woken up [0-9]*' "$tmp/re" | sed 's/woken up //'); $st"
		rm -f "$d/f.data"
	done
done | tee "$OUT/flood.txt"
for d in "$tmp" "$shm"; do
	rm -f "$d/f.data"
	timeout 60 perf record -q -F 4999 --no-inherit -o "$tmp/p.data" -- \
		"$uev" record -o "$d/f.data" -- bench/scale --flood 16 100000 >/dev/null 2>"$tmp/re"
	echo "== profile, output in $d: $(grep -o 'lost [0-9]*' "$tmp/re" | head -1)"
	timeout 60 perf report -i "$tmp/p.data" --stdio --no-children --sort dso,sym 2>/dev/null |
		grep -v '^#' | grep -v '^$' | head -45
	rm -f "$d/f.data"
done 2>&1 | tee "$OUT/profile.txt"
rm -rf "$tmp" "$shm"
echo "== done $(date -u)"
