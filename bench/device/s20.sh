#!/bin/sh
# s20.sh - session 20's device run, issue 24 items 1-4 on a many-core host, each part
# bounded in time:
#   1. scale.sh: the threads sweep (this build against bench/device/scale-main), the JIT
#      paths' syscalls and futex calls per load (with perf), the usdt flood under
#      `uevent record` with the default rings and with -m 256;
#   2. the recorder: its own CPU (perf stat --no-inherit) and records drained per CPU
#      second on the 16-thread flood, a profile of it (perf record -g), and the same flood
#      under `perf record -e libuevent:emit` with perf's default rings (losses);
#   3. the readers on a recording of N CPUs' rings against one of 2 CPUs' rings with as
#      many records: the C reader, `uevent dump` and `uevent report`, CPU time each.
# Carry: tools/.libs libuevent/.libs bench/.libs bench/scale bench/device/scale-main
# bench/device/.libs (nvtx-pytorch.sh --bundle) bench/device/perf (perf and the libraries
# it links beyond libc, copied: optional). Output under $OUT, a summary to stdout.
set -u
cd "$(dirname "$0")/../.." || exit 1
top=$PWD
OUT=${OUT:-$(mktemp -d)}
export OUT
ncpu=$(nproc)
echo "== $(date -u) $(uname -r) $ncpu CPUs; $(grep -m1 'model name' /proc/cpuinfo)"
df -h /tmp | tail -1
export LD_LIBRARY_PATH="$top/libuevent/.libs:$top/bench/device/.libs"
if [ -x bench/device/perf/perf ]; then
	mkdir -p /tmp/pbin
	printf '#!/bin/sh\nLD_LIBRARY_PATH=%s:$LD_LIBRARY_PATH exec %s "$@"\n' "$top/bench/device/perf/lib" \
		"$top/bench/device/perf/perf" >/tmp/pbin/perf
	chmod +x /tmp/pbin/perf
	PATH=/tmp/pbin:$PATH
	perf version
fi
uev=$top/tools/.libs/uevent
flood=$top/bench/scale

echo "== 1. scale"
SCALE_REPEAT=2 timeout 250 sh bench/device/scale.sh
echo "rc=$?"
cat "$OUT/scale.txt"

echo "== 2. recorder, 16 threads x 100000 marks"
tmp=$(mktemp -d)
if command -v perf >/dev/null 2>&1; then
	for i in 1 2; do
		timeout 60 perf stat --no-inherit -x, -e task-clock -o "$tmp/stat" -- \
			"$uev" record -o "$tmp/f.data" -- "$flood" --flood 16 100000 2>&1 | tail -2
		ms=$(awk -F, '/task-clock/ { print $1 }' "$tmp/stat")
		got=$("$uev" dump "$tmp/f.data" 2>&1 >/dev/null | sed -n 's/.* records, \([0-9]*\) uevents.*/\1/p')
		echo "recorder CPU ms $ms, uevents in the file $got: $(echo "$got $ms" |
			awk '{ printf "%.0f", $1 / $2 * 1000 }') records per recorder CPU second"
	done
	timeout 60 perf record -q -g --no-inherit -F 4000 -o "$tmp/prof.data" -- \
		"$uev" record -o "$tmp/f.data" -- "$flood" --flood 16 100000 2>&1 | tail -2
	timeout 40 perf report -i "$tmp/prof.data" --stdio --no-children -g none --sort dso,sym \
		2>/dev/null | grep -v '^$' | grep '%' | head -40 >"$OUT/record-profile.txt"
	head -25 "$OUT/record-profile.txt"
	echo "-- perf record -e libuevent:emit (perf's default rings), 16 and 32 threads"
	if "$uev" probe --perf-event "$flood" >/dev/null 2>"$tmp/probe"; then
		for t in 16 32; do
			rm -f "$tmp/p.data"
			timeout 60 perf record -q -e libuevent:emit -o "$tmp/p.data" -- "$flood" --flood "$t" 100000 2>&1 | tail -2
			n=$(timeout 60 perf script -i "$tmp/p.data" -F event 2>/dev/null | grep -c emit)
			echo "perf record, $t threads: $n of $((t * 100000)) marks in the file, lost $((t * 100000 - n))"
		done
		"$uev" probe --perf-event-remove >/dev/null 2>&1
	else
		echo "no perf probe: $(cat "$tmp/probe")"
	fi
else
	echo "no perf: recorder CPU and profile skipped"
fi

echo "== 3. readers: $ncpu CPUs' rings against 2 CPUs' rings, the same marks"
m=$((1600000 / ncpu))
timeout 60 "$uev" record -m 4096 -o "$tmp/n.data" -- "$flood" --flood "$ncpu" "$m" 2>&1 | tail -1
timeout 60 taskset -c 0,1 "$uev" record -m 4096 -o "$tmp/two.data" -- "$flood" --flood 2 800000 2>&1 | tail -1
ls -la "$tmp/n.data" "$tmp/two.data"
cpu() {	# the CPU seconds (user + sys) a command takes, best of 3
	bash -c 'TIMEFORMAT="%U %S"; for i in 1 2 3; do { time "$@" >/dev/null 2>&1; } 2>&1; done' _ "$@" |
		awk '{ t = $1 + $2; if (NR == 1 || t < b) b = t } END { print b }'
}
for f in two n; do
	recs=$("$uev" dump -a "$tmp/$f.data" 2>&1 >/dev/null | sed -n 's/^\([0-9]*\) records.*/\1/p')
	echo "$f.data: $recs records"
	# the C reader prints its own best CPU time: NAME RECORDS SECONDS RECORDS/S MB/S
	bench/.libs/decode "$tmp/$f.data" --no-script 2>&1 | tail -1 | sed "s/^/$f decode: /"
	for r in dump report; do
		case $r in
		dump) s=$(cpu "$uev" dump -a "$tmp/$f.data") ;;
		report) s=$(cpu "$uev" report "$tmp/$f.data") ;;
		esac
		echo "$f $r $recs $s" | awk '{ printf "%-6s %-7s %9d records %8.3f CPU s %12.0f records/s\n",
			$1, $2, $3, $4, ($4 > 0 ? $3 / $4 : 0) }'
	done
done | tee "$OUT/readers.txt"
rm -rf "$tmp"
echo "== done $(date -u)"
