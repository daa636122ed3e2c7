#!/bin/sh
# guest.sh - bench/emit inside our QEMU guests, where the prctl (patched kernel) and
# user_events (both kernels) transports exist: each emit against its bare syscall, in
# the same run. TCG emulation makes every number slow; compare the ratios. On the patched
# kernel also the prctl's own ratios from t/kernel/uevent-prctl (a 4 KiB emit while only
# another task is watched against none watched; one listener against none), and
# bench/guest-emit-cost: prctl against user_events, no listener and one perf listener,
# 16 B and 4 KiB, each against getppid() of the same run (kernel/README.md's table).
set -u
: "${top_srcdir:=.}" "${top_builddir:=.}"
tarball=${KERNEL_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
qemu=${QEMU:-$(command -v qemu-system-x86_64 || true)}
busybox=${BUSYBOX:-$(command -v busybox || true)}
lib=$top_builddir/libuevent/.libs/libuevent.a
skip() { echo "guest bench                skipped: $*"; exit 0; }
[ -r "$tarball" ] || skip "no kernel source"
[ -n "$qemu" ] || skip "no qemu-system-x86_64"
[ -n "$busybox" ] || skip "no busybox"
[ -f "$lib" ] || skip "no static libuevent.a"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
${CC:-cc} -static -O2 -pthread -I"$top_srcdir/kernel/include/uapi" -I"$top_srcdir/libuevent" \
	-I"$top_builddir" -o "$tmp/bench-emit" "$top_srcdir/bench/emit.c" "$lib" ||
	skip "cannot build a static bench"
printf '#!/bin/sh\nexec /tests/bench-emit --quick\n' > "$tmp/bench-emit.sh"
prctl_bench='' cost_bench='' prctl_extra=''
if ${CC:-cc} -static -O2 -I"$top_srcdir/kernel/include/uapi" -I"$top_srcdir/t" \
	-I"$top_srcdir/t/kernel" -o "$tmp/guest-emit-cost" "$top_srcdir/bench/guest-emit-cost.c"; then
	cost_bench=$tmp/guest-emit-cost
fi
if ${CC:-cc} -static -O2 -pthread -I"$top_srcdir/kernel/include/uapi" -I"$top_srcdir/t" \
	-I"$top_srcdir/t/kernel" -o "$tmp/uevent-prctl" "$top_srcdir/t/kernel/uevent-prctl.c"; then
	printf '#!/bin/sh\n/bin/uevent-prctl patched | grep "^# ratio" | sed "s/^# /uevent-prctl: /"\n' \
		> "$tmp/prctl-ratios"
	chmod +x "$tmp/prctl-ratios"
	prctl_bench="$tmp/prctl-ratios"
	prctl_extra="-- $tmp/uevent-prctl"
fi
for flavour in patched stock; do
	kernel=$(KERNEL_TARBALL=$tarball sh "$top_srcdir/kernel/build-kernel" "$flavour" 2>"$tmp/build.log" | tail -n 1)
	[ -f "$kernel" ] || { echo "guest bench ($flavour)      skipped: kernel build failed"; continue; }
	extra=
	[ "$flavour" != patched ] || extra="$cost_bench $prctl_bench $prctl_extra"
	# shellcheck disable=SC2086
	BUSYBOX=$busybox sh "$top_srcdir/kernel/make-initramfs" "$tmp/i.cpio.gz" "$tmp/bench-emit" \
		$extra >/dev/null 2>&1 || skip "make-initramfs failed"
	echo "# --- inside the $flavour kernel (QEMU TCG) ---"
	QEMU=$qemu QEMU_TIMEOUT=600 sh "$top_srcdir/kernel/run-qemu" "$kernel" "$tmp/i.cpio.gz" \
		"uevent.kernel=$flavour" | sed -n '/^### uevent-guest: run/,/^### uevent-guest: exit/p' |
		grep -v '^###'
done
exit 0
