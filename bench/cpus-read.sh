#!/bin/sh
# cpus-read.sh - the readers' records/s on recordings of 1, 2, 4, 16 and 64 CPUs with the
# same records: a usdt flood recorded here (or CPUS_READ_FILE, a pipe-mode perf.data of
# uevent record's), made into NCPUS interleaved per-CPU streams by cpus-synth.py (each
# record's CPU id set, each round written CPU after CPU, as a recorder of NCPUS rings
# writes it), then read by the C reader (bench/decode --no-script, best of 5), by
# `uevent dump`, by the Python batch reader (uevent.read_arrays, bench/arrays.py) and by
# Rust's read_all_columns (bindings/rust's columns example, release build); and `uevent
# report` on a -F recording of t/burn made into as many CPUs the same way; each timed by
# its CPU time (user + sys), which a loaded host disturbs less (Rust: its wall time).
# Prints each reader's best records/s over CPUS_READ_ROUNDS rounds (3) and the ratio to
# the 1-CPU file: a reader that merges per CPU falls.
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
# the Python batch reader: a python3 with NumPy and CFFI, the binding built for it
# (binding_for, as arrays.sh)
pylib= NPY=
if [ -f "$top_builddir/bindings/python/lib/uevent/.built" ]; then
	. "$top_srcdir/t/jit-lib.sh"
	for p in ${PYTHON:-} /usr/bin/python3; do
		"$p" -c 'import numpy, cffi' >/dev/null 2>&1 && { NPY=$p; break; }
	done
	[ -n "$NPY" ] && pylib=$(binding_for "$NPY" "$tmp/lib" 2>/dev/null)
fi
[ -n "$pylib" ] || echo "# python: skipped (no python3 with numpy and cffi, or no binding)"
best_ns() { # the least CPU time (user + sys) of three runs of CMD..., in ns: wait4's
	# rusage, in microseconds (/usr/bin/time prints 10 ms steps, too coarse for report)
	python3 -c 'import resource as r, subprocess as s, sys
b = None
for _ in range(3):
    u0 = r.getrusage(r.RUSAGE_CHILDREN)
    s.run(sys.argv[1:], stdout=s.DEVNULL, stderr=s.DEVNULL)
    u1 = r.getrusage(r.RUSAGE_CHILDREN)
    t = (u1.ru_utime + u1.ru_stime) - (u0.ru_utime + u0.ru_stime)
    b = t if b is None or t < b else b
print(int(b * 1e9))' "$@"
}
# uevent report's: cpu-clock samples with callchains (t/burn under record -F), or
# CPUS_READ_SAMPLES, made into as many CPUs
ssrc=${CPUS_READ_SAMPLES:-}
burn=$top_builddir/t/.libs/burn
if [ -z "$ssrc" ] && [ "$(id -u)" = 0 ] && [ -x "$burn" ]; then
	ssrc=$tmp/burn.data
	LD_LIBRARY_PATH=$top_builddir/libuevent/.libs "$uevent" record -o "$ssrc" -F 20000 -- \
		"$burn" "${CPUS_READ_BURN_SECS:-3}" >/dev/null 2>&1 || ssrc=
fi
[ -n "$ssrc" ] || echo "# uevent report: skipped (no samples: make check builds t/burn; root)"
# Rust's read_all_columns, when the crate's release examples are built (wall time)
rc=$top_builddir/bindings/rust/target/release/examples/columns
[ -x "$rc" ] || echo "# rust: skipped (bindings/rust's release examples not built)"
cpus="1 2 4 16 64"
for n in $cpus; do
	python3 "$top_srcdir/bench/cpus-synth.py" "$src" "$tmp/c$n.data" "$n" >/dev/null || exit 1
	[ -z "$ssrc" ] || python3 "$top_srcdir/bench/cpus-synth.py" "$ssrc" "$tmp/s$n.data" "$n" \
		>/dev/null || exit 1
done
# rounds over the files in turn, the best of each reader per file: the host's load
# moves between rounds, not between the files
r=0
while [ "$r" -lt "${CPUS_READ_ROUNDS:-3}" ]; do
	for n in $cpus; do
		set -- $("$top_builddir/bench/decode" "$tmp/c$n.data" --no-script)
		echo "$2" >"$tmp/recs.$n"
		echo "$4" >>"$tmp/c.$n"
		d=$(best_ns "$uevent" dump "$tmp/c$n.data")
		echo "$2 $d" | awk '{ print $1 / $2 * 1e9 }' >>"$tmp/d.$n"
		if [ -n "$ssrc" ]; then
			sn=$("$uevent" dump "$tmp/s$n.data" 2>&1 >/dev/null | sed -n 's/^\([0-9]*\) records.*/\1/p')
			t=$(best_ns "$uevent" report -i "$tmp/s$n.data")
			echo "${sn:-0} $t" | awk '{ print $1 / $2 * 1e9 }' >>"$tmp/r.$n"
		else
			echo 0 >>"$tmp/r.$n"
		fi
		if [ -x "$rc" ]; then
			LD_LIBRARY_PATH=$top_builddir/libuevent/.libs "$rc" "$tmp/c$n.data" 1 |
				awk '$1 == "rust_columns" { print $2 / $3 }' >>"$tmp/rs.$n"
		else
			echo 0 >>"$tmp/rs.$n"
		fi
		if [ -n "$pylib" ]; then
			PYTHONPATH=$pylib LD_LIBRARY_PATH=$top_builddir/libuevent/.libs ARRAYS_CPU=1 \
				"$NPY" "$top_srcdir/bench/arrays.py" "$tmp/c$n.data" 1 |
				awk '$1 == "batch" { print $2 / $3 }' >>"$tmp/p.$n"
		else
			echo 0 >>"$tmp/p.$n"
		fi
	done
	r=$((r + 1))
done
max() { sort -g "$1" | tail -1; }
ratio() { echo "$1 $2" | awk '{ print ($2 > 0 ? $1 / $2 : 0) }'; }
echo "# records/s (CPU time), best of ${CPUS_READ_ROUNDS:-3}; ratio: to the 1-CPU file"
printf '%-5s %8s %11s %5s %11s %5s %11s %5s %11s %5s %12s %5s\n' cpus records 'C reader' \
	ratio 'dump' ratio 'python' ratio 'rust (wall)' ratio 'report (smp)' ratio
for n in $cpus; do
	c=$(max "$tmp/c.$n") d=$(max "$tmp/d.$n") p=$(max "$tmp/p.$n") rr=$(max "$tmp/r.$n")
	rs=$(max "$tmp/rs.$n")
	[ "$n" = 1 ] && { c1=$c; d1=$d; p1=$p; r1=$rr; rs1=$rs; }
	printf '%-5d %8d %11.0f %5.2f %11.0f %5.2f %11.0f %5.2f %11.0f %5.2f %12.0f %5.2f\n' \
		"$n" "$(cat "$tmp/recs.$n")" "$c" "$(ratio "$c" "$c1")" "$d" "$(ratio "$d" "$d1")" \
		"$p" "$(ratio "$p" "$p1")" "$rs" "$(ratio "$rs" "$rs1")" "$rr" "$(ratio "$rr" "$r1")"
done
