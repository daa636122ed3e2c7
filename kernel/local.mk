# kernel/local.mk - the patched Linux 6.12 test kernel and the guest tests run under QEMU.
#
# configure provides KERNEL_TARBALL, QEMU and BUSYBOX (empty when not found: the guest
# tests then SKIP). The kernel is built outside the tree, in
# $${UEVENT_KERNEL_CACHE:-$${XDG_CACHE_HOME:-$$HOME/.cache}/libuevent}.

kernel_guest_programs = \
	t/kernel/uevent-prctl \
	t/kernel/tls-user \
	t/kernel/user-events \
	t/kernel/lib-guest \
	t/kernel/session-guest \
	t/kernel/uevent-cli

# Static, so the initramfs needs nothing but busybox; the patched uapi headers first.
kernel_guest_cflags = $(AM_CFLAGS) -I$(top_srcdir)/t -I$(top_srcdir)/t/kernel
kernel_guest_ldflags = -all-static

check_PROGRAMS += $(kernel_guest_programs)
t_kernel_uevent_prctl_SOURCES = t/kernel/uevent-prctl.c t/kernel/kperf.h
t_kernel_uevent_prctl_CFLAGS = $(kernel_guest_cflags)
t_kernel_uevent_prctl_LDFLAGS = $(kernel_guest_ldflags)
t_kernel_tls_user_SOURCES = t/kernel/tls-user.c t/kernel/kperf.h
t_kernel_tls_user_CFLAGS = $(kernel_guest_cflags) -pthread
t_kernel_tls_user_LDFLAGS = $(kernel_guest_ldflags) -pthread
t_kernel_user_events_SOURCES = t/kernel/user-events.c t/kernel/kperf.h
t_kernel_user_events_CFLAGS = $(kernel_guest_cflags)
t_kernel_user_events_LDFLAGS = $(kernel_guest_ldflags)
# libuevent itself in the guest, linked statically, and a static build of the CLI
# (`uevent probe` runs in the guest from probe-guest.sh).
t_kernel_lib_guest_SOURCES = t/kernel/lib-guest.c t/kernel/kperf.h
t_kernel_lib_guest_CFLAGS = $(kernel_guest_cflags)
t_kernel_lib_guest_LDFLAGS = $(kernel_guest_ldflags)
t_kernel_lib_guest_LDADD = libuevent/libuevent.la
t_kernel_session_guest_SOURCES = t/kernel/session-guest.c t/kernel/kperf.h
t_kernel_session_guest_CFLAGS = $(kernel_guest_cflags) -pthread
t_kernel_session_guest_LDFLAGS = $(kernel_guest_ldflags) -pthread
t_kernel_session_guest_LDADD = libuevent/libuevent.la
t_kernel_uevent_cli_SOURCES = tools/uevent.c
t_kernel_uevent_cli_CFLAGS = $(AM_CFLAGS)
t_kernel_uevent_cli_LDFLAGS = $(kernel_guest_ldflags)
t_kernel_uevent_cli_LDADD = libuevent/libuevent.la

kernel_tests = \
	t/kernel/uapi-headers.test \
	t/kernel/guest.test \
	t/kernel/guest-stock.test
TESTS += $(kernel_tests)

EXTRA_DIST += \
	%reldir%/README.md \
	%reldir%/build-kernel \
	%reldir%/make-initramfs \
	%reldir%/run-qemu \
	%reldir%/config.fragment \
	%reldir%/patches \
	t/kernel/probe-guest.sh \
	$(kernel_tests)

CLEANFILES += \
	t/kernel/initramfs-*.cpio.gz \
	t/kernel/console-*.log \
	t/kernel/build-kernel-*.log \
	t/kernel/*.build.log

kernel_env = \
	tb='$(KERNEL_TARBALL)'; KERNEL_TARBALL=$${tb:-/usr/src/linux-source-6.12.tar.xz}; \
	export KERNEL_TARBALL;

.PHONY: kernel kernel-stock check-kernel check-kernel-stock
# Build (or bring up to date) the patched / stock kernel; prints the bzImage path.
kernel:
	$(AM_V_GEN)$(kernel_env) $(SHELL) $(top_srcdir)/%reldir%/build-kernel patched
kernel-stock:
	$(AM_V_GEN)$(kernel_env) $(SHELL) $(top_srcdir)/%reldir%/build-kernel stock

# Only the kernel tests: make check-kernel [TESTS=t/kernel/guest.test]
check-kernel:
	$(MAKE) $(AM_MAKEFLAGS) check TESTS='$(kernel_tests)'
check-kernel-stock:
	$(MAKE) $(AM_MAKEFLAGS) check TESTS='t/kernel/guest-stock.test'
