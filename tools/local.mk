# tools/local.mk - the uevent CLI.
bin_PROGRAMS += tools/uevent
tools_uevent_SOURCES = %reldir%/uevent.c %reldir%/uevent-json.h
tools_uevent_LDADD = libuevent/libuevent.la

# uevent-json.h is generated from the record structs of uevent.h and committed (the CLI
# builds without Python); t/records.test fails when it is stale. After changing uevent.h:
.PHONY: records
records:
	$(PYTHON) $(top_srcdir)/libuevent/gen-records.py --c-json $(top_srcdir)/libuevent/uevent.h \
		> $(top_srcdir)/%reldir%/uevent-json.h.tmp && \
	mv $(top_srcdir)/%reldir%/uevent-json.h.tmp $(top_srcdir)/%reldir%/uevent-json.h
