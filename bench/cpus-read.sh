#!/bin/sh
# cpus-read.sh - the readers' records/s on recordings of 1, 2, 4, 16 and 64 CPUs with the
# same records: a usdt flood recorded here (or CPUS_READ_FILE, a pipe-mode perf.data of
# uevent record's), made into NCPUS interleaved per-CPU streams by cpus-synth.py (each
# record's CPU id set, each round written CPU after CPU, as a recorder of NCPUS rings
# writes it), then read by the C reader (bench/decode --no-script, best of 5), by
# `uevent dump` and by the Python batch reader (uevent.read_arrays, bench/arrays.py).
# Prints records/s and the ratio to the 1-CPU file: a reader that merges per CPU falls.
set -u
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
uevent=$top_builddir/tools/uevent
tmp=$(mktemp -d "${TMPDIR:-/tmp}/uevent-bench-cpus-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
say() { echo "cpus-read                    skipped: $1"; exit 0; }
[ -x "$top_builddir/bench/decode" ] || say "build bench/decode first"
command -v python3 >/dev/null || say "no python3"
src=${CPUS_READ_FILE:-}
if [ -z "$src" ]; then
	[ "$(id -u)" = 0 ] || say "needs root to record (or CPUS_READ_FILE)"
	[ -x "$top_builddir/bench/scale" ] || say "build bench/scale first"
	src=$tmp/flood.data
	"$uevent" record -o "$src" -- "$top_builddir/bench/scale" --flood 2 \
		"${CPUS_READ_MARKS:-200000}" >/dev/null 2>"$tmp/rec" ||
		say "uevent record failed: $(tail -1 "$tmp/rec")"
fi
py=
if [ -f "$top_builddir/bindings/python/lib/uevent/.built" ] &&
   PYTHONPATH=$top_builddir/bindings/python/lib python3 -c 'import uevent, numpy' 2>/dev/null; then
	py=1
fi
best_ns() { # the least wall time of three runs of CMD..., in ns
	b=
	for _ in 1 2 3; do
		t0=$(date +%s%N); "$@" >/dev/null 2>&1; t1=$(date +%s%N)
		[ -z "$b" ] || [ $((t1 - t0)) -lt "$b" ] && b=$((t1 - t0))
	done
	echo "$b"
}
printf '%-6s %9s %14s %7s %14s %7s %14s %7s\n' cpus records 'C reader/s' ratio \
	'dump rec/s' ratio 'python rec/s' ratio
for n in 1 2 4 16 64; do
	python3 "$top_srcdir/bench/cpus-synth.py" "$src" "$tmp/c$n.data" "$n" >/dev/null || exit 1
	set -- $("$top_builddir/bench/decode" "$tmp/c$n.data" --no-script)
	recs=$2 c=$4
	d=$(best_ns "$uevent" dump "$tmp/c$n.data")
	drate=$(echo "$recs $d" | awk '{ print $1 / $2 * 1e9 }')
	prate=0
	if [ -n "$py" ]; then
		prate=$(PYTHONPATH=$top_builddir/bindings/python/lib \
			LD_LIBRARY_PATH=$top_builddir/libuevent/.libs python3 \
			"$top_srcdir/bench/arrays.py" "$tmp/c$n.data" 1 |
			awk '$1 == "batch" { print $2 / $3 }')
	fi
	[ "$n" = 1 ] && { c1=$c; d1=$drate; p1=${prate:-0}; }
	printf '%-6d %9d %14.0f %7.2f %14.0f %7.2f %14.0f %7.2f\n' "$n" "$recs" "$c" \
		"$(echo "$c $c1" | awk '{ print $1 / $2 }')" "$drate" \
		"$(echo "$drate $d1" | awk '{ print $1 / $2 }')" "${prate:-0}" \
		"$(echo "${prate:-0} $p1" | awk '{ print ($2 > 0 ? $1 / $2 : 0) }')"
	rm -f "$tmp/c$n.data"
done
