# libuevent/local.mk - the core library.
lib_LTLIBRARIES += libuevent/libuevent.la
include_HEADERS += libuevent/uevent.h
pkgconfig_DATA += libuevent/libuevent.pc

libuevent_libuevent_la_SOURCES = \
	%reldir%/internal.h \
	%reldir%/fs-trust.h \
	%reldir%/emit.c \
	%reldir%/transport.h \
	%reldir%/transport-prctl.c \
	%reldir%/transport-user-events.c \
	%reldir%/transport-usdt.c \
	%reldir%/transport-ftrace.c \
	%reldir%/transport-file.c \
	%reldir%/codec.c \
	%reldir%/context.c \
	%reldir%/process-context.c \
	%reldir%/probe.c \
	%reldir%/reason.c \
	%reldir%/perf-internal.h \
	%reldir%/attr.c \
	%reldir%/decode.c \
	%reldir%/ring.c \
	%reldir%/sdt.c \
	%reldir%/session-internal.h \
	%reldir%/session.c \
	%reldir%/session-record.c \
	%reldir%/session-spawn.c \
	%reldir%/perfdata.c \
	%reldir%/tls-deferred.c \
	%reldir%/batch.c \
	%reldir%/tp-fields.c \
	%reldir%/symbolize.c \
	%reldir%/jit.c
libuevent_libuevent_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden $(TLS_CFLAGS) $(LIBTRACEEVENT_CFLAGS) $(LIBDW_CFLAGS)
libuevent_libuevent_la_LIBADD = $(LIBTRACEEVENT_LIBS) $(LIBDW_LIBS)
libuevent_libuevent_la_LDFLAGS = -version-info 0:0:0 \
	-Wl,--version-script=$(top_srcdir)/%reldir%/libuevent.map -Wl,-z,relro,-z,now
EXTRA_libuevent_libuevent_la_DEPENDENCIES = %reldir%/libuevent.map install-dirs.stamp
# The record model goes beside the header, for `pip install` of the binding (whose
# emitter, bindings/python/gen_records.py, reads it); each emitter's rule depends on it.
dist_pkgdata_DATA = %reldir%/records_model.py
RECORDS_MODEL = $(top_srcdir)/%reldir%/records_model.py
EXTRA_DIST += %reldir%/libuevent.map %reldir%/libuevent.pc.in

# libuevent(3), which t/man.test checks names every exported function
dist_man3_MANS = %reldir%/libuevent.3
# ... and `man uevent_range_begin` finds it: a .so link per exported function.
install-data-local: install-man3-links
uninstall-local: uninstall-man3-links
.PHONY: install-man3-links uninstall-man3-links
uevent_man3_names = sed -n 's/^[[:space:]]*\(uevent_[a-z0-9_]*\);.*/\1/p' $(srcdir)/%reldir%/libuevent.map
install-man3-links:
	$(MKDIR_P) '$(DESTDIR)$(man3dir)'
	for f in `$(uevent_man3_names)`; do \
		echo '.so man3/libuevent.3' > '$(DESTDIR)$(man3dir)/'"$$f.3" || exit 1; \
	done
uninstall-man3-links:
	for f in `$(uevent_man3_names)`; do rm -f '$(DESTDIR)$(man3dir)/'"$$f.3"; done
