# s20-env.sh - sourced by session 20's device scripts, from the tree's root: the carried
# libraries first on LD_LIBRARY_PATH, `perf` (carried in bench/device/perf with the
# libraries it links beyond libc) on PATH where it was carried, tracefs mounted.
top=$PWD
OUT=${OUT:-$(mktemp -d)}
export LD_LIBRARY_PATH="$top/libuevent/.libs:$top/bench/device/.libs"
if [ -x "$top/bench/device/perf/perf" ]; then
	mkdir -p /tmp/pbin
	printf '#!/bin/sh\nLD_LIBRARY_PATH=%s:$LD_LIBRARY_PATH exec %s "$@"\n' \
		"$top/bench/device/perf/lib" "$top/bench/device/perf/perf" >/tmp/pbin/perf
	chmod +x /tmp/pbin/perf
	PATH=/tmp/pbin:$PATH
fi
[ -e /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing
uev=$top/tools/.libs/uevent
