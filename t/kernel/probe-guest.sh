#!/bin/sh
# probe-guest.sh - the CLI inside the guest (busybox sh): `uevent probe` reports the
# patched features present on the patched kernel and absent on the stock one; `uevent
# record -- CMD` then `uevent dump` works as on the host, through prctl (patched) or
# user_events (stock), with a thread's trace context in its samples where the kernel
# has PR_PERF_TLS_AREA.
flavour=${1:-${UEVENT_KERNEL:-patched}}
cli=$(command -v uevent-cli || echo /tests/uevent-cli)
out=/tmp/probe.out
echo "1..10"
if [ ! -x "$cli" ]; then
	for i in 1 2 3 4 5 6 7 8 9 10; do echo "ok $i # SKIP no static uevent CLI in the initramfs"; done
	exit 0
fi
"$cli" probe >$out 2>&1
st=$?
sed 's/^/# /' $out
n=1
check() {	# check DESCRIPTION PATTERN
	if grep -q "$2" $out; then echo "ok $n - $1"; else echo "not ok $n - $1"; fi
	n=$((n + 1))
}
[ $st = 0 ] && echo "ok 1 - uevent probe exits 0" || echo "not ok 1 - uevent probe exits $st"
n=2
if [ "$flavour" = stock ]; then
	check "prctl reported absent" '^prctl  *no '
	check "attr_uevents reported absent" '^attr_uevents  *no '
	check "sample_tls_user reported absent" '^sample_tls_user  *no '
	check "user_events reported present" '^user_events  *yes '
	check "transport is user_events" '^transport  *user_events '
else
	check "prctl reported present, with its enable word" '^prctl  *yes .*, enable word '
	check "attr_uevents reported present" '^attr_uevents  *yes '
	check "sample_tls_user reported present" '^sample_tls_user  *yes '
	check "user_events reported present" '^user_events  *yes '
	check "transport is prctl" '^transport  *prctl '
fi
# uevent record -- CMD, then uevent dump
rec=/tmp/rec.data
"$cli" record -o $rec -- "$cli" emit -n 7 "guest recorded" 2>/tmp/rec.err
st=$?
sed 's/^/# /' /tmp/rec.err
want=prctl; [ "$flavour" = stock ] && want=user_events
"$cli" dump --json $rec > /tmp/rec.json 2>/dev/null
got=$(grep -c "\"transport\": \"$want\".*\"text\": \"guest recorded\"" /tmp/rec.json)
if [ $st = 0 ] && [ "$got" = 7 ]; then
	echo "ok 7 - uevent record -- uevent emit: 7 marks through $want in the recorded perf.data"
else
	echo "not ok 7 - uevent record: exit $st, $got of 7 marks through $want"
fi
grep -q 'lost 0' /tmp/rec.err && echo "ok 8 - record says lost 0" || echo "not ok 8 - record says lost 0"
if [ "$flavour" = stock ]; then
	"$cli" record -o /tmp/tls.data -F 5000 --tls 64 -- true 2>/tmp/tls.err
	st=$?
	if [ $st = 1 ] && grep -q 'TLS_USER.*not supported' /tmp/tls.err; then
		echo "ok 9 - --tls on the stock kernel: exit 1, says TLS_USER is not supported"
	else
		echo "not ok 9 - --tls on the stock kernel: exit $st"; sed 's/^/# /' /tmp/tls.err
	fi
else
	# the workload sets its thread context with uevent_thread_context_set()
	lg=$(command -v lib-guest || echo /tests/lib-guest)
	"$cli" record -o /tmp/tls.data -F 5000 --tls 64 -- "$lg" spin-context 2>/tmp/tls.err
	tp=00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01
	"$cli" dump /tmp/tls.data >/tmp/tls.dump 2>/dev/null
	n=$(grep -c " SAMPLE .* tls=[0-9][0-9]*B traceparent=$tp" /tmp/tls.dump)
	all=$(grep ' SAMPLE ' /tmp/tls.dump | grep -c ' tls=')
	if [ "$n" -gt 5 ] && [ "$n" = "$all" ]; then
		echo "ok 9 - uevent record -F --tls 64: $n samples, each with the workload's OTEP 4947 record, traceparent $tp"
	else
		echo "not ok 9 - uevent record -F --tls 64: $n of $all samples with the context"
		sed 's/^/# /' /tmp/tls.err; grep ' SAMPLE ' /tmp/tls.dump | head -3 | sed 's/^/# /'
	fi
fi
n=10
if [ "$flavour" = stock ]; then
	check "thread_context reported absent, the call still works" '^thread_context  *no .*still works'
else
	check "thread_context reported present" '^thread_context  *yes '
fi
