#!/bin/sh
# probe-guest.sh - the CLI inside the guest (busybox sh): `uevent probe` reports the
# patched features present on the patched kernel and absent on the stock one; `uevent
# record -- CMD` then `uevent dump` works as on the host, through prctl (patched) or
# user_events (stock), with TLS context in samples where the kernel has it.
flavour=${1:-${UEVENT_KERNEL:-patched}}
cli=$(command -v uevent-cli || echo /tests/uevent-cli)
out=/tmp/probe.out
echo "1..9"
if [ ! -x "$cli" ]; then
	for i in 1 2 3 4 5 6 7 8 9; do echo "ok $i # SKIP no static uevent CLI in the initramfs"; done
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
	check "prctl reported present" '^prctl  *yes '
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
	"$cli" record -o /tmp/tls.data -F 200000 --tls 64 -- true 2>/tmp/tls.err
	st=$?
	if [ $st = 1 ] && grep -q 'TLS_USER.*not supported' /tmp/tls.err; then
		echo "ok 9 - --tls on the stock kernel: exit 1, says TLS_USER is not supported"
	else
		echo "not ok 9 - --tls on the stock kernel: exit $st"; sed 's/^/# /' /tmp/tls.err
	fi
else
	"$cli" record -o /tmp/tls.data -F 200000 --tls 64 -- sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done' 2>/tmp/tls.err
	n=$("$cli" dump /tmp/tls.data 2>/dev/null | grep -c ' SAMPLE .* tls=64B')
	if [ "$n" -gt 5 ]; then
		echo "ok 9 - uevent record -F --tls 64: $n samples each with 64 bytes of TLS"
	else
		echo "not ok 9 - uevent record -F --tls 64: $n samples with TLS"; sed 's/^/# /' /tmp/tls.err
	fi
fi
