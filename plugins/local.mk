# plugins/local.mk - plugin_uevent.so: trace-cmd (libtraceevent) decodes the ftrace marks.
EXTRA_DIST += %reldir%/trace-cmd.test
TESTS += %reldir%/trace-cmd.test

if HAVE_LIBTRACEEVENT
tepplugin_LTLIBRARIES = %reldir%/plugin_uevent.la
%canon_reldir%_plugin_uevent_la_SOURCES = %reldir%/plugin_uevent.c
%canon_reldir%_plugin_uevent_la_CFLAGS = $(AM_CFLAGS) $(LIBTRACEEVENT_CFLAGS)
%canon_reldir%_plugin_uevent_la_LIBADD = libuevent/libuevent.la $(LIBTRACEEVENT_LIBS)
# libtraceevent dlopens plugin_*.so by name: no lib prefix, no version suffix.
%canon_reldir%_plugin_uevent_la_LDFLAGS = -module -avoid-version -shared
EXTRA_%canon_reldir%_plugin_uevent_la_DEPENDENCIES = install-dirs.stamp
else
EXTRA_DIST += %reldir%/plugin_uevent.c
endif
