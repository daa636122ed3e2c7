#!/bin/sh
# arrays.sh - the Python readers against perf script and perf report on one recording, in
# the same run: t/burn under `uevent record -F` (cpu-clock samples with callchains, a
# few uevents), then records/s (samples + uevents) of perf script, of PerfData's
# per-record objects and of uevent.read_arrays (NumPy, filled in C), and of the Rust
# crate's owned records and read_all_columns (examples/columns.rs); best of three each.
# Prints each path's rate and its ratio to perf script's (and perf report's).
# BENCH_ARRAYS_FILE=path reads that perf.data instead (e.g. one perf record -g wrote).
. "$top_srcdir/t/jit-lib.sh"
PERF=${PERF:-perf}
BURN=$top_builddir/t/.libs/burn
say() { echo "arrays                     skipped: $1"; exit 0; }
data=${BENCH_ARRAYS_FILE:-}
[ -n "$data" ] || [ "$(id -u)" = 0 ] || say "needs root to record"
command -v "$PERF" >/dev/null 2>&1 || say "no perf"
[ -n "$data" ] || [ -x "$BURN" ] || say "make check builds t/burn"
[ -f "$top_builddir/bindings/python/lib/uevent/.built" ] || say "the Python binding is not built"
NPY=
for p in ${PYTHON:-} /usr/bin/python3; do
	"$p" -c 'import numpy, cffi' >/dev/null 2>&1 && { NPY=$p; break; }
done
[ -n "$NPY" ] || say "no python3 with numpy and cffi (python3-numpy)"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
lib=$(binding_for "$NPY" "$tmp/lib") || say "the binding does not build for $NPY"
if [ -n "$data" ]; then
	[ -r "$data" ] || say "cannot read $data"
	ln -s "$(cd "$(dirname "$data")" && pwd)/$(basename "$data")" "$tmp/b.data"
else
	LD_LIBRARY_PATH=$top_builddir/libuevent/.libs "$top_builddir/tools/uevent" record \
		-o "$tmp/b.data" --period "${BENCH_ARRAYS_PERIOD:-10000}" -- "$BURN" \
		"${BENCH_ARRAYS_SECS:-3}" 2>"$tmp/rec" || say "uevent record failed: $(tail -1 "$tmp/rec")"
fi

best() { # best CMD...: the least wall time of three runs, in ns
	b=
	for _ in 1 2 3; do
		t0=$(date +%s%N)
		"$@" >/dev/null 2>&1
		t1=$(date +%s%N)
		t=$((t1 - t0))
		[ -z "$b" ] || [ "$t" -lt "$b" ] && b=$t
	done
	echo "$b"
}
ps=$(best "$PERF" script -i "$tmp/b.data")
pr=$(best "$PERF" report -i "$tmp/b.data" --stdio --no-children -g none --sort comm,dso,sym)
PYTHONPATH=$lib PYTHONDONTWRITEBYTECODE=1 LD_LIBRARY_PATH=$top_builddir/libuevent/.libs \
	"$NPY" "$top_srcdir/bench/arrays.py" "$tmp/b.data" 3 > "$tmp/py" || say "bench/arrays.py failed"
rows=$(awk '$1 == "batch" { print $2 }' "$tmp/py")
# Rust's readers on the same file, when the crate's release examples are built
rc=$top_builddir/bindings/rust/target/release/examples/columns
if [ -x "$rc" ]; then
	LD_LIBRARY_PATH=$top_builddir/libuevent/.libs "$rc" "$tmp/b.data" 3 > "$tmp/rs" ||
		echo "# rust: bindings/rust's columns example failed"
	awk -v rows="$rows" '$2 != rows { print "# rust read " $2 " rows, Python " rows }' "$tmp/rs"
	cat "$tmp/rs" >> "$tmp/py"
else
	echo "# rust: skipped (bindings/rust not built)"
fi
awk -v ps="$ps" -v pr="$pr" -v rows="$rows" -v bytes="$(wc -c < "$tmp/b.data")" -v py="$NPY" '
	function rate(s) { return s > 0 ? rows / s : 0 }
	BEGIN { sps = ps / 1e9; spr = pr / 1e9
		printf "arrays: %d samples + uevents (%d bytes), %s\n", rows, bytes, py
		printf "  perf script              %8.0f ms %10.0f records/s\n", sps * 1000, rate(sps)
		printf "  perf report              %8.0f ms %10.0f records/s\n", spr * 1000, rate(spr)
		name["batch"] = "read_arrays (NumPy)"; name["per_record"] = "PerfData per record"
		name["rust_columns"] = "Rust read_all_columns"; name["rust_records"] = "Rust PerfData records" }
	{ s = $3; printf "  %-24s %8.1f ms %10.0f records/s   x%.1f perf script, x%.1f perf report\n",
		name[$1], s * 1000, rate(s),
		sps / s, spr / s }' "$tmp/py"
