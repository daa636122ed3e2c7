#!/bin/sh
# usdt-hit.sh - the usdt transport with a tracer attached, against a bare probe hit:
# attaches uprobes to libuevent:emit and to a bare probe in bench/emit (perf stat keeps
# both enabled, so the kernel raises both semaphores), then lets bench/emit time them.
set -u
top_builddir=${top_builddir:-.}
PERF=${PERF:-perf}
bin=$(readlink -f "$top_builddir/bench/emit")
[ "$(id -u)" = 0 ] || { echo "usdt hit                   skipped: needs root for uprobes"; exit 0; }
command -v "$PERF" >/dev/null 2>&1 || { echo "usdt hit                   skipped: no perf"; exit 0; }
"$PERF" probe -q -d 'sdt_uevent_bench:*' -d 'sdt_libuevent:*' >/dev/null 2>&1
"$PERF" probe -q -x "$bin" -a sdt_uevent_bench:bare >/dev/null 2>&1 &&
"$PERF" probe -q -x "$bin" -a sdt_libuevent:emit >/dev/null 2>&1 ||
	{ echo "usdt hit                   skipped: perf probe failed"; exit 0; }
"$PERF" stat -e sdt_uevent_bench:bare -e sdt_libuevent:emit -o /dev/null -- "$bin" --usdt-hit
"$PERF" probe -q -d 'sdt_uevent_bench:*' -d 'sdt_libuevent:*' >/dev/null 2>&1
exit 0
