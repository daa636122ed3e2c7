#!/bin/sh
# perf-guest.sh - perf itself in the patched guest (busybox sh): tools/perf built from the
# patched tree with the series' perf patch (kernel/build-perf) records a program's marks
# with `perf record --uevents`, and `perf script --show-uevent-events` and `perf report`
# print its PERF_RECORD_UEVENT records: type, payload and the emitting thread; then
# `perf record --tls-user=32` of perf-context (a thread with an OpenTelemetry thread
# context set by libuevent), and `perf script` prints each sample's context, joined from
# its PERF_RECORD_TLS_USER_DEFERRED record, equal to what the program registered.
# Run by t/kernel/guest-perf.test (make check-kernel-perf), with perf, the static
# uevent CLI and perf-context in /bin.
flavour=${1:-${UEVENT_KERNEL:-patched}}
perf=$(command -v perf)
cli=$(command -v uevent-cli)
ctx=$(command -v perf-context)
echo "1..13"
if [ -z "$perf" ] || [ -z "$cli" ] || [ -z "$ctx" ] || [ "$flavour" = stock ]; then
	for i in 1 2 3 4 5 6 7 8 9 10 11 12 13; do
		echo "ok $i # SKIP needs perf, uevent-cli and perf-context in /bin and the patched kernel"
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

# 8-13: the thread context. perf-context sets an OTEP 4947 record with libuevent (the
# thread's PR_PERF_TLS_AREA area) and prints its first 32 bytes; each task-clock sample
# carries a cookie, the bytes come in the PERF_RECORD_TLS_USER_DEFERRED record with it.
cdata=/tmp/perf-ctx.data
trace=4bf92f3577b34da6a3ce929d0e0e4736
span=00f067aa0ba902b7
"$perf" record --tls-user=32 -e task-clock -c 1000000 -o $cdata -- \
	"$ctx" 300 32 >/tmp/perf-ctx.out 2>&1
st=$?
sed 's/^/# /' /tmp/perf-ctx.out
want=$(sed -n 's/^context //p' /tmp/perf-ctx.out)
grep -q '^registered 1$' /tmp/perf-ctx.out && [ $st = 0 ] && [ -n "$want" ]
ok $? "perf record --tls-user=32 -e task-clock -- perf-context: exit $st, area registered"

"$perf" script -i $cdata -F comm,tid,time,event,tls >/tmp/perf-script-ctx.out 2>&1
st=$?
sed 's/^/# /; 6q' /tmp/perf-script-ctx.out
ok $st "perf script -F comm,tid,time,event,tls: exit $st"
samples=$(grep -c '^ *perf-context .*task-clock' /tmp/perf-script-ctx.out)
ctxs=$(grep -c "^ *perf-context .*task-clock: *tls_user size 32 dyn_size 32 data $want otel trace_id $trace span_id $span trace_flags 01\$" \
	/tmp/perf-script-ctx.out)
norec=$(grep -c '^ *perf-context .* tls_user cookie 0x[0-9a-f]* no record$' /tmp/perf-script-ctx.out)
grep -m 1 ' otel trace_id' /tmp/perf-script-ctx.out | sed 's/^/# /'
[ "$ctxs" -ge 1 ]
ok $? "perf script prints the registered context with the samples: bytes, trace and span id ($ctxs of $samples samples; $norec without a record)"
# Every context perf prints is the registered one (samples before the registration
# have none, those of the exit syscall say "no record": their task work never runs).
other=$(grep ' tls_user size' /tmp/perf-script-ctx.out | grep -vc "data $want otel")
[ "$other" = 0 ]
ok $? "no sample shows another context (found $other)"

"$perf" report -i $cdata --stats >/tmp/perf-stats-ctx.out 2>&1
grep -i tls_user /tmp/perf-stats-ctx.out | sed 's/^/# /'
grep -q "TLS_USER_DEFERRED events: *[1-9]" /tmp/perf-stats-ctx.out
ok $? "perf report --stats counts TLS_USER_DEFERRED events"
"$perf" report -i $cdata -D >/tmp/perf-dump-ctx.out 2>/dev/null
recs=$(grep -c "PERF_RECORD_TLS_USER_DEFERRED [0-9]*/[0-9]* cookie 0x[0-9a-f]* size 32 dyn_size 32 data $want otel trace_id $trace" \
	/tmp/perf-dump-ctx.out)
cookies=$(grep -c '^\.\.\. tls_user: cookie 0x' /tmp/perf-dump-ctx.out)
[ "$recs" -ge 1 ] && [ "$cookies" -ge 1 ]
ok $? "perf report -D dumps the deferred records ($recs) and the samples' cookies ($cookies)"
