# tools/local.mk - the uevent CLI.
bin_PROGRAMS += tools/uevent
tools_uevent_SOURCES = %reldir%/uevent.c
tools_uevent_LDADD = libuevent/libuevent.la
