# kernel/local.mk - the patched Linux 6.12 test kernel (the guest tests that run under
# QEMU are t/kernel's).
#
# configure provides KERNEL_TARBALL, QEMU and BUSYBOX (empty when not found: the guest
# tests then SKIP). The kernel is built outside the tree, in
# $${UEVENT_KERNEL_CACHE:-$${XDG_CACHE_HOME:-$$HOME/.cache}/libuevent}.

EXTRA_DIST += \
	%reldir%/README.md \
	%reldir%/build-kernel \
	%reldir%/build-perf \
	%reldir%/check-series \
	%reldir%/make-initramfs \
	%reldir%/run-qemu \
	%reldir%/config.fragment \
	%reldir%/config-debug.fragment \
	%reldir%/patches \
	%reldir%/include/uapi/linux/perf_event.h \
	%reldir%/include/uapi/linux/perf_uevent.h \
	%reldir%/include/uapi/linux/user_events.h


kernel_env = \
	tb='$(KERNEL_TARBALL)'; KERNEL_TARBALL=$${tb:-/usr/src/linux-source-6.12.tar.xz}; \
	export KERNEL_TARBALL;

.PHONY: kernel kernel-stock kernel-debug kernel-perf check-kernel check-kernel-stock \
	check-kernel-debug check-kernel-perf check-kernel-series
# Build (or bring up to date) the patched / stock kernel; prints the bzImage path.
kernel:
	$(AM_V_GEN)$(kernel_env) $(SHELL) $(top_srcdir)/%reldir%/build-kernel patched
kernel-stock:
	$(AM_V_GEN)$(kernel_env) $(SHELL) $(top_srcdir)/%reldir%/build-kernel stock
kernel-debug:
	$(AM_V_GEN)$(kernel_env) $(SHELL) $(top_srcdir)/%reldir%/build-kernel debug
# tools/perf from the patched tree (the series' perf patch), static; prints its path.
kernel-perf:
	$(AM_V_GEN)$(kernel_env) $(SHELL) $(top_srcdir)/%reldir%/build-perf

# Only the kernel tests: make check-kernel [TESTS=t/kernel/guest.test]
check-kernel:
	$(MAKE) $(AM_MAKEFLAGS) check TESTS='$(kernel_tests)'
check-kernel-stock:
	$(MAKE) $(AM_MAKEFLAGS) check TESTS='t/kernel/guest-stock.test'
# The patched kernel with lockdep, KASAN, DEBUG_ATOMIC_SLEEP and preemption (a third
# kernel tree, ~2x the build time of the others): not part of make check.
check-kernel-debug:
	$(MAKE) $(AM_MAKEFLAGS) check TESTS='t/kernel/guest-debug.test'
# perf itself in the patched guest: perf record --uevents, perf script, perf report
# (t/kernel/guest-perf.test, kernel/build-perf). perf's build from empty caches takes
# 8-11 minutes on 2 cores: not part of make check nor .ci/run.
check-kernel-perf:
	$(MAKE) $(AM_MAKEFLAGS) check TESTS='t/kernel/guest-perf.test'

# Every prefix 1..N of the series built and booted with a smoke test, one TAP line each
# (kernel/check-series; logs in t/kernel/series-*.log). Minutes per prefix whose patch
# touches a widely included header: not part of make check or .ci/run.
# make check-kernel-series [SERIES='3 5'] runs only those prefixes.
check-kernel-series: t/kernel/series-smoke$(EXEEXT)
	@test -n '$(QEMU)' && test -n '$(BUSYBOX)' || \
		{ echo "check-kernel-series: needs qemu-system-x86_64 and busybox-static" >&2; exit 1; }
	$(AM_V_GEN)$(kernel_env) QEMU='$(QEMU)'; BUSYBOX='$(BUSYBOX)'; export QEMU BUSYBOX; \
	$(SHELL) $(top_srcdir)/%reldir%/check-series t/kernel/series-smoke$(EXEEXT) t/kernel $(SERIES)
