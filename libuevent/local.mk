# libuevent/local.mk - the core library.
lib_LTLIBRARIES += libuevent/libuevent.la
include_HEADERS += libuevent/uevent.h
pkgconfig_DATA += libuevent/libuevent.pc

libuevent_libuevent_la_SOURCES = \
	%reldir%/internal.h \
	%reldir%/emit.c \
	%reldir%/transport.h \
	%reldir%/transport-prctl.c \
	%reldir%/transport-user-events.c \
	%reldir%/transport-usdt.c \
	%reldir%/transport-ftrace.c \
	%reldir%/transport-file.c \
	%reldir%/codec.c \
	%reldir%/context.c \
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
	%reldir%/batch.c \
	%reldir%/tp-fields.c \
	%reldir%/symbolize.c \
	%reldir%/jit.c
libuevent_libuevent_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden $(LIBTRACEEVENT_CFLAGS) $(LIBDW_CFLAGS)
libuevent_libuevent_la_LIBADD = $(LIBTRACEEVENT_LIBS) $(LIBDW_LIBS)
libuevent_libuevent_la_LDFLAGS = -version-info 0:0:0 \
	-Wl,--version-script=$(top_srcdir)/%reldir%/libuevent.map -Wl,-z,relro,-z,now
EXTRA_libuevent_libuevent_la_DEPENDENCIES = %reldir%/libuevent.map
# The record model goes beside the header, for `pip install` of the binding (whose
# emitter, bindings/python/gen_records.py, reads it); each emitter's rule depends on it.
dist_pkgdata_DATA = %reldir%/records_model.py
RECORDS_MODEL = $(top_srcdir)/%reldir%/records_model.py
EXTRA_DIST += %reldir%/libuevent.map %reldir%/libuevent.pc.in

# libuevent(3), which t/man.test checks names every exported function
dist_man3_MANS = %reldir%/libuevent.3
