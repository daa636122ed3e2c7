#!/bin/sh
# nvtx-pytorch.sh - PyTorch's NVTX ranges (emit_nvtx, torch.cuda.nvtx) recorded by
# `uevent record --nvtx` beside its CPU samples, then CPU time per op by `uevent report`.
#
# For a machine with PyTorch (a CUDA build: it carries NVTX; no GPU is used), as root,
# run from the repository root with the build outputs of this tree carried: tools/.libs,
# libuevent/.libs, inject/.libs (`make` with the NVTX headers found by configure).
# The libraries those link (libdw, libtraceevent, protobuf-c...) may be missing there:
# `bench/device/nvtx-pytorch.sh --bundle` here copies them into bench/device/.libs, which
# is then carried too and put on LD_LIBRARY_PATH.
# Writes to $OUT (default: a new temporary directory): env.txt, record.log, torch.data,
# dump-ranges.txt, report.txt, report-ops.txt (the range table grouped by op name: emit_nvtx
# names carry ", seq = N, op_id = ..., sizes = ..."), report-<name>.txt for some ranges.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$(mktemp -d)}
PY=${PYTHON:-python3}
FREQ_NS=${FREQ_NS:-100000}		# a cpu-clock sample every 100 µs
die() { echo "nvtx-pytorch: $*" >&2; exit 1; }

uevent=$root/tools/.libs/uevent
bundle=$root/bench/device/.libs
if [ "${1:-}" = --bundle ]; then
	mkdir -p "$bundle" || die "cannot make $bundle"
	LD_LIBRARY_PATH="$root/libuevent/.libs" ldd "$uevent" "$root/libuevent/.libs/libuevent.so.0" \
		"$root/inject/.libs/libuevent-nvtx.so" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' |
		grep -v '/libc\.so\|/libuevent\.so\|/libm\.so\|/ld-linux' | sort -u |
		while read -r lib; do cp -L "$lib" "$bundle/" || exit 1; done || die "copying failed"
	ls "$bundle"
	exit 0
fi
mkdir -p "$OUT" || die "cannot make $OUT"
[ -x "$uevent" ] || uevent=$root/tools/.libs/lt-uevent
[ -x "$uevent" ] || die "no tools/.libs/uevent: build the tree (make) and carry tools/.libs"
[ -r "$root/libuevent/.libs/libuevent.so.0" ] || die "no libuevent/.libs/libuevent.so.0: carry libuevent/.libs"
export UEVENT_NVTX_LIB="$root/inject/.libs/libuevent-nvtx.so"
[ -r "$UEVENT_NVTX_LIB" ] || die "no inject/.libs/libuevent-nvtx.so: configure found no NVTX headers (--with-nvtx-include=DIR), or inject/.libs was not carried"
# of the bundled libraries only those this system lacks: the rest would shadow its own
# in the traced program too
extra=$(mktemp -d)
trap 'rm -rf "$extra"' EXIT
mkdir -p "$extra"
for lib in "$bundle"/*.so*; do
	[ -e "$lib" ] || continue
	ldconfig -p 2>/dev/null | grep -q "^[[:space:]]*$(basename "$lib") " || ln -sf "$lib" "$extra/"
done
export LD_LIBRARY_PATH="$root/libuevent/.libs:$root/inject/.libs:$extra${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if ldd "$uevent" "$UEVENT_NVTX_LIB" | grep -q 'not found'; then
	ldd "$uevent" "$UEVENT_NVTX_LIB" | grep 'not found' >&2
	die "libraries missing: run bench/device/nvtx-pytorch.sh --bundle where it was built, carry bench/device/.libs"
fi
[ "$(id -u)" = 0 ] || die "uevent record needs root (uprobes)"
[ -e /sys/bus/event_source/devices/uprobe ] || die "this kernel has no uprobes"
if ! "$PY" -c 'import torch' 2>"$OUT/torch-import.err"; then
	die "$PY cannot import torch ($(tail -1 "$OUT/torch-import.err")): nothing to record"
fi
# the usdt probes are added through tracefs's uprobe_events
if [ ! -e /sys/kernel/tracing/uprobe_events ] && [ ! -e /sys/kernel/debug/tracing/uprobe_events ]; then
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null ||
		die "tracefs is not mounted and mounting it on /sys/kernel/tracing failed"
fi

{
	uname -a
	nproc
	"$PY" -c 'import torch, sys; print(sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda)'
	git -C "$root" log --oneline -1 2>/dev/null
} >"$OUT/env.txt" 2>&1

"$uevent" record --nvtx --sample-ns "$FREQ_NS" -o "$OUT/torch.data" -- \
	"$PY" "$root/bench/device/nvtx_pytorch.py" >"$OUT/record.log" 2>&1
rc=$?
cat "$OUT/record.log"
[ $rc -eq 0 ] || die "uevent record exited $rc (record.log)"

"$uevent" dump "$OUT/torch.data" >"$OUT/dump.txt" 2>&1
# range begins by name: how many of each (the ops' own, before their ", seq = ..." tail)
sed -n 's/.* range_begin .*"\(.*\)"$/\1/p' "$OUT/dump.txt" | sed 's/, .*//' | sort | uniq -c |
	sort -rn >"$OUT/dump-ranges.txt"
echo "== NVTX range begins by name (uevent dump)"
cat "$OUT/dump-ranges.txt"
echo "== marks"
grep ' text "' "$OUT/dump.txt" | head -5

"$uevent" report "$OUT/torch.data" >"$OUT/report.txt" 2>&1 || die "uevent report failed (report.txt)"
# The range table: Overhead Samples Count Wall-ms Range; grouped by the op's name.
awk '/^# Time per uevent range/ { t = 1; next }
	t && /^ +[0-9.]+%/ {
		name = $5; for (i = 6; i <= NF; i++) name = name " " $i
		sub(/,.*/, "", name)
		s[name] += $2; c[name] += $3; ms[name] += $4
	}
	END { for (n in s) printf "%8d %8d %12.3f  %s\n", s[n], c[n], ms[n], n }' \
	"$OUT/report.txt" | sort -k1,1nr >"$OUT/report-ops.body"
{ printf "%8s %8s %12s  %s\n" samples count "wall ms" range; cat "$OUT/report-ops.body"; } \
	>"$OUT/report-ops.txt"
rm -f "$OUT/report-ops.body"
echo "== time per op (uevent report's range table, grouped by op name)"
cat "$OUT/report-ops.txt"

for r in "round 0" "round 1" "round 2"; do
	f=$OUT/report-$(echo "$r" | tr ' :' '__').txt
	"$uevent" report --range "$r" "$OUT/torch.data" >"$f" 2>&1
	echo "== uevent report --range '$r' (top 12)"
	grep -v '^$' "$f" | head -18
done
echo "nvtx-pytorch: results in $OUT"
