#!/bin/sh
# perf-guest.sh - perf itself in the patched guest (busybox sh): tools/perf built from the
# patched tree with the series' perf patch (kernel/build-perf) records a program's marks
# with `perf record --uevents`, and `perf script --show-uevent-events` and `perf report`
# print its PERF_RECORD_UEVENT records: type, payload and the emitting thread.
# Run by t/kernel/guest-perf.test (make check-kernel-perf), with perf and the static
# uevent CLI in /bin.
flavour=${1:-${UEVENT_KERNEL:-patched}}
perf=$(command -v perf)
cli=$(command -v uevent-cli)
echo "1..7"
if [ -z "$perf" ] || [ -z "$cli" ] || [ "$flavour" = stock ]; then
	for i in 1 2 3 4 5 6 7; do
		echo "ok $i # SKIP needs perf and uevent-cli in /bin and the patched kernel"
	done
	exit 0
fi
data=/tmp/perf.data
text="perf in the guest"
# The payload's bytes as perf prints them (the guest's busybox has no od)
hex="70 65 72 66 20 69 6e 20 74 68 65 20 67 75 65 73 74"
n=1
ok() {	# ok STATUS DESCRIPTION
	if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi
	n=$((n + 1))
}

# 1: perf record --uevents of a program emitting three marks of type 0x1234
"$perf" record --uevents -e dummy -o $data -- \
	"$cli" emit -t prctl -T 4660 -n 3 "$text" >/tmp/perf-record.out 2>&1
st=$?
sed 's/^/# /' /tmp/perf-record.out
ok $st "perf record --uevents -e dummy -- uevent-cli emit -n 3: exit $st"

# 2-4: perf script --show-uevent-events prints them, with type, payload and thread
"$perf" script -i $data --show-uevent-events -F comm,tid,time >/tmp/perf-script.out 2>&1
st=$?
sed 's/^/# /; 20q' /tmp/perf-script.out
ok $st "perf script --show-uevent-events: exit $st"
got=$(grep -c "PERF_RECORD_UEVENT type 0x1234 format 1 flags 0 size [0-9]* data $hex" \
	/tmp/perf-script.out)
[ "$got" = 3 ]
ok $? "perf script prints the 3 PERF_RECORD_UEVENT records, type 0x1234 and payload (got $got)"
got=$(grep -c "^ *uevent-cli  *[0-9][0-9]*  *[0-9.]*: *PERF_RECORD_UEVENT .*\"$text\"" \
	/tmp/perf-script.out)
[ "$got" = 3 ]
ok $? "each with the emitting thread's comm and tid, a time and the payload as text (got $got)"

# 5: without --show-uevent-events perf script leaves them out, as other side-band records
"$perf" script -i $data >/tmp/perf-script2.out 2>&1
st=$?
! grep -q PERF_RECORD_UEVENT /tmp/perf-script2.out && [ $st = 0 ]
ok $? "perf script without --show-uevent-events: exit $st, no PERF_RECORD_UEVENT line"

# 6-7: perf report counts and dumps them
"$perf" report -i $data --stats >/tmp/perf-stats.out 2>&1
sed 's/^/# /' /tmp/perf-stats.out | grep -i uevent
grep -q "UEVENT events: *3" /tmp/perf-stats.out
ok $? "perf report --stats: UEVENT events: 3"
got=$("$perf" report -i $data -D 2>/dev/null | grep -c "PERF_RECORD_UEVENT type 0x1234 .*data $hex")
[ "$got" = 3 ]
ok $? "perf report -D dumps the 3 records (got $got)"
