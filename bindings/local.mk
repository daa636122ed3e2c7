# bindings/local.mk - what the bindings share: the preprocessed header, and the test that
# drives all three into perf. Each binding's own folder has its local.mk.

# The one source of declarations for CFFI and ffi.cdef: uevent.h without includes and
# C-only macros. ($(CPP) is GNU make's built-in `$(CC) -E` unless configure sets it.)
UEVENT_CDEF = %reldir%/uevent.cdef
$(UEVENT_CDEF): $(top_srcdir)/libuevent/uevent.h
	$(AM_V_GEN)$(MKDIR_P) $(@D) && \
	$(CPP) -P -DUEVENT_CDEF -I$(top_srcdir)/kernel/include/uapi \
		$(top_srcdir)/libuevent/uevent.h > $@.tmp && mv $@.tmp $@
CLEANFILES += $(UEVENT_CDEF)

# All three bindings through the usdt transport into perf (root only).
TESTS += %reldir%/usdt.test
host_TESTS += %reldir%/usdt.test
EXTRA_DIST += %reldir%/usdt.test
