#!/bin/sh
# probe-guest.sh - `uevent probe` inside the guest (busybox sh): the patched features are
# reported present on the patched kernel and absent on the stock one.
flavour=${1:-${UEVENT_KERNEL:-patched}}
cli=$(command -v uevent-cli || echo /tests/uevent-cli)
out=/tmp/probe.out
echo "1..6"
if [ ! -x "$cli" ]; then
	for i in 1 2 3 4 5 6; do echo "ok $i # SKIP no static uevent CLI in the initramfs"; done
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
