# t/kernel/local.mk - the guest tests: static programs run in the patched and the stock
# kernel under QEMU (kernel/ builds the kernels; the tests SKIP where it cannot).

kernel_guest_programs = \
	%reldir%/uevent-prctl \
	%reldir%/uevent-stress \
	%reldir%/tls-user \
	%reldir%/enable-word \
	%reldir%/uevent-adversary \
	%reldir%/user-events \
	%reldir%/lib-guest \
	%reldir%/session-guest \
	%reldir%/uevent-cli

# Static, so the initramfs needs nothing but busybox; the patched uapi headers first.
kernel_guest_cflags = $(AM_CFLAGS) -I$(top_srcdir)/t -I$(top_srcdir)/t/kernel
kernel_guest_ldflags = -all-static

check_PROGRAMS += $(kernel_guest_programs)
t_kernel_uevent_prctl_SOURCES = %reldir%/uevent-prctl.c %reldir%/kperf.h
t_kernel_uevent_prctl_CFLAGS = $(kernel_guest_cflags)
t_kernel_uevent_prctl_LDFLAGS = $(kernel_guest_ldflags)
t_kernel_uevent_stress_SOURCES = %reldir%/uevent-stress.c %reldir%/kperf.h
t_kernel_uevent_stress_CFLAGS = $(kernel_guest_cflags) -pthread
t_kernel_uevent_stress_LDFLAGS = $(kernel_guest_ldflags) -pthread
t_kernel_tls_user_SOURCES = %reldir%/tls-user.c %reldir%/kperf.h
t_kernel_tls_user_CFLAGS = $(kernel_guest_cflags) -pthread
t_kernel_tls_user_LDFLAGS = $(kernel_guest_ldflags) -pthread
t_kernel_enable_word_SOURCES = %reldir%/enable-word.c %reldir%/kperf.h
t_kernel_enable_word_CFLAGS = $(kernel_guest_cflags)
t_kernel_enable_word_LDFLAGS = $(kernel_guest_ldflags)
t_kernel_uevent_adversary_SOURCES = %reldir%/uevent-adversary.c %reldir%/kperf.h
t_kernel_uevent_adversary_CFLAGS = $(kernel_guest_cflags) -pthread
t_kernel_uevent_adversary_LDFLAGS = $(kernel_guest_ldflags) -pthread
t_kernel_user_events_SOURCES = %reldir%/user-events.c %reldir%/kperf.h
t_kernel_user_events_CFLAGS = $(kernel_guest_cflags)
t_kernel_user_events_LDFLAGS = $(kernel_guest_ldflags)
# libuevent itself in the guest, linked statically, and a static build of the CLI
# (`uevent probe` runs in the guest from probe-guest.sh).
t_kernel_lib_guest_SOURCES = %reldir%/lib-guest.c %reldir%/kperf.h
t_kernel_lib_guest_CFLAGS = $(kernel_guest_cflags)
t_kernel_lib_guest_LDFLAGS = $(kernel_guest_ldflags)
t_kernel_lib_guest_LDADD = libuevent/libuevent.la
t_kernel_session_guest_SOURCES = %reldir%/session-guest.c %reldir%/kperf.h
t_kernel_session_guest_CFLAGS = $(kernel_guest_cflags) -pthread
t_kernel_session_guest_LDFLAGS = $(kernel_guest_ldflags) -pthread
t_kernel_session_guest_LDADD = libuevent/libuevent.la
t_kernel_uevent_cli_SOURCES = $(tools_uevent_SOURCES)
t_kernel_uevent_cli_CFLAGS = $(AM_CFLAGS)
t_kernel_uevent_cli_LDFLAGS = $(kernel_guest_ldflags)
t_kernel_uevent_cli_LDADD = libuevent/libuevent.la $(LIBDW_STATIC_LIBS)
if HAVE_PPROF
nodist_t_kernel_uevent_cli_SOURCES = $(nodist_tools_uevent_SOURCES)
t_kernel_uevent_cli_LDADD += $(PROTOBUF_C_LIBS)
t_kernel_uevent_cli_CPPFLAGS = $(tools_uevent_CPPFLAGS)
tools/t_kernel_uevent_cli-export-profile.$(OBJEXT): tools/profile.pb-c.h
endif

# The smoke test of each series prefix (make check-kernel-series, kernel/check-series).
check_PROGRAMS += %reldir%/series-smoke
t_kernel_series_smoke_SOURCES = %reldir%/series-smoke.c %reldir%/kperf.h
t_kernel_series_smoke_CFLAGS = $(kernel_guest_cflags)
t_kernel_series_smoke_LDFLAGS = $(kernel_guest_ldflags)

kernel_tests = \
	%reldir%/uapi-headers.test \
	%reldir%/guest.test \
	%reldir%/guest-stock.test
TESTS += $(kernel_tests)

EXTRA_DIST += %reldir%/probe-guest.sh %reldir%/kperf.h $(kernel_tests) %reldir%/guest-debug.test \
	%reldir%/guest-perf.test %reldir%/perf-guest.sh %reldir%/perf-context.c

CLEANFILES += \
	%reldir%/initramfs-*.cpio.gz \
	%reldir%/console-*.log \
	%reldir%/build-kernel-*.log \
	%reldir%/build-perf.log \
	%reldir%/*.build.log \
	%reldir%/series-build-*.log \
	%reldir%/series-console-*.log \
	%reldir%/kselftest-uevent \
	%reldir%/perf-context


# The guest tests build a kernel first when its cache is cold or stale (minutes), and
# their output shows only at the end: before the tests run (check_SCRIPTS are made
# first), say so, and for how long. The file is rewritten on every make check.
check_SCRIPTS += %reldir%/kernel-notice
CLEANFILES += %reldir%/kernel-notice
.PHONY: t-kernel-notice-always
%reldir%/kernel-notice: t-kernel-notice-always
	@: > $@; test -n '$(QEMU)' && test -n '$(BUSYBOX)' || exit 0; \
	$(kernel_env) \
	for f in patched stock; do \
		case $$f in patched) t=%reldir%/guest.test ;; *) t=%reldir%/guest-stock.test ;; esac; \
		case ' $(TESTS) ' in *" $$t "*) ;; *) continue ;; esac; \
		s=`$(SHELL) $(top_srcdir)/kernel/build-kernel --status $$f 2>/dev/null` || continue; \
		case $$s in \
		build:*) echo "make check: $$t builds a kernel first:$${s#build:}" \
			"(progress: tail -f %reldir%/build-kernel-$$f.log)" | tee -a $@ ;; \
		esac; \
	done
