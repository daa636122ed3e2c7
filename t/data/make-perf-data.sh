#!/bin/sh
# make-perf-data.sh - regenerate the golden perf.data files in t/data/ (root, perf, uprobes).
#   usdt.perf.data       perf record (file mode) of 3 marks "golden mark" and a counter
#                        golden=7 through the usdt probe, with the payload fetched as
#                        libuevent's session does (type, size, d0=u64[16])
#   usdt.pipe.perf.data  the same in pipe mode (perf record -o -)
#   clock.perf.data      task-clock samples of a short shell loop
#   perf-data.expect     what perf script counts in each, for t/perfdata.test
# Usage: t/data/make-perf-data.sh [BUILDDIR]   (BUILDDIR has tools/uevent and libuevent)
set -e
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../..}
PERF=${PERF:-perf}
UEVENT=$(readlink -f "$build/tools/uevent")
LIB=$(readlink -f "$build/libuevent/.libs/libuevent.so")
T=/sys/kernel/tracing; [ -e $T/uprobe_events ] || T=/sys/kernel/debug/tracing
cleanup() { echo "-:sdt_libuevent/emit" >> $T/uprobe_events 2>/dev/null || :; }
trap cleanup EXIT
cleanup
$PERF probe -q -x "$LIB" -a sdt_libuevent:emit
line=$(grep "^p:sdt_libuevent/emit" $T/uprobe_events)
loc=$(echo "$line" | awk '{print $2}')
a1=$(echo "$line" | sed -n 's/.* arg1=\([^ :]*\):u32.*/\1/p')
a2=$(echo "$line" | sed -n 's/.* arg2=\([^ :]*\):u64.*/\1/p')
a3=$(echo "$line" | sed -n 's/.* arg3=\([^ :]*\):u64.*/\1/p')
echo "-:sdt_libuevent/emit" >> $T/uprobe_events
echo "p:sdt_libuevent/emit $loc type=$a1:u32 size=$a3:u64 d0=+0($a2):u64[16]" >> $T/uprobe_events
run="$UEVENT emit -n 3 golden mark; $UEVENT emit --counter golden=7"
UEVENT_TRANSPORT=usdt $PERF record -q -e sdt_libuevent:emit -o "$here/usdt.perf.data" -- sh -c "$run"
UEVENT_TRANSPORT=usdt $PERF record -q -e sdt_libuevent:emit -o - -- sh -c "$run" > "$here/usdt.pipe.perf.data"
$PERF record -q -e task-clock -c 200000 -o "$here/clock.perf.data" -- \
	sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done'
{
	for f in usdt.perf.data usdt.pipe.perf.data clock.perf.data; do
		echo "$f samples $($PERF script -i "$here/$f" 2>/dev/null | wc -l)"
	done
} > "$here/perf-data.expect"
chmod 644 "$here"/*.perf.data
cat "$here/perf-data.expect"
