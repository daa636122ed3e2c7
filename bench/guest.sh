#!/bin/sh
# guest.sh - bench/emit inside our QEMU guests, where the prctl (patched kernel) and
# user_events (both kernels) transports exist: each emit against its bare syscall, in
# the same run. TCG emulation makes every number slow; compare the ratios. On the patched
# kernel also the prctl's own ratios from t/kernel/uevent-prctl (a 4 KiB emit while only
# another task is watched against none watched; one listener against none), and
# bench/guest-emit-cost: prctl against user_events, no listener and one perf listener,
# 16 B and 4 KiB, each against getppid() of the same run (kernel/README.md's table).
# In both kernels bench/guest-enable-word: a mark nobody listens to through the library
# (patched: prctl with the kernel-written enable bit of patch 0007; stock: usdt with no
# probe attached); the ratio of the two is printed at the end.
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
prctl_bench='' cost_bench='' prctl_extra='' word_bench=''
if ${CC:-cc} -static -O2 -pthread -I"$top_srcdir/kernel/include/uapi" -I"$top_srcdir/libuevent" \
	-I"$top_builddir" -o "$tmp/guest-enable-word" "$top_srcdir/bench/guest-enable-word.c" "$lib"; then
	word_bench=$tmp/guest-enable-word
fi
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
	extra=$word_bench
	[ "$flavour" != patched ] || extra="$extra $cost_bench $prctl_bench $prctl_extra"
	# shellcheck disable=SC2086
	BUSYBOX=$busybox sh "$top_srcdir/kernel/make-initramfs" "$tmp/i.cpio.gz" "$tmp/bench-emit" \
		$extra >/dev/null 2>&1 || skip "make-initramfs failed"
	echo "# --- inside the $flavour kernel (QEMU TCG) ---"
	QEMU=$qemu QEMU_TIMEOUT=600 sh "$top_srcdir/kernel/run-qemu" "$kernel" "$tmp/i.cpio.gz" \
		"uevent.kernel=$flavour" | sed -n '/^### uevent-guest: run/,/^### uevent-guest: exit/p' |
		grep -v '^###' | tee "$tmp/out-$flavour" | grep -v '^enable-word-ns '
done
# The disabled mark: patched (prctl, kernel-written bit) against stock (idle usdt), in ns
# and in units of each boot's own plain-load loop (TCG's speed differs between boots).
p=$(grep -h '^enable-word-ns patched ' "$tmp/out-patched" 2>/dev/null | tail -n 1)
s=$(grep -h '^enable-word-ns stock ' "$tmp/out-stock" 2>/dev/null | tail -n 1)
if [ -n "$p" ] && [ -n "$s" ]; then
	echo "$p $s" | awk '{ printf "guest-enable-word: ratio disabled mark patched (prctl, " \
		"enable word) / stock (idle usdt): %.2f (%.2f / %.2f ns); per plain load of " \
		"its boot: %.2f (target <= 1.1)\n", $3 / $7, $3, $7, ($3 / $4) / ($7 / $8) }'
else
	echo "guest-enable-word: no ratio: a run is missing (patched: ${p:-none}; stock: ${s:-none})"
fi
exit 0
