# tools/local.mk - the uevent CLI.
bin_PROGRAMS += tools/uevent
tools_uevent_SOURCES = %reldir%/uevent.c %reldir%/uevent-json.h %reldir%/cli.h %reldir%/report.c
tools_uevent_LDADD = libuevent/libuevent.la

# uevent-json.h is generated from the record structs of uevent.h and committed (the CLI
# builds without Python), as is the Rust crate's records.rs (cargo builds without it);
# t/records.test fails when either is stale. After changing uevent.h: make records
# make regenerates them when uevent.h or the generator is newer and Python is there.
%reldir%/uevent-json.h: $(top_srcdir)/libuevent/uevent.h $(top_srcdir)/libuevent/gen-records.py
	$(AM_V_GEN)if test -n '$(PYTHON)'; then \
		$(PYTHON) $(top_srcdir)/libuevent/gen-records.py --c-json \
			$(top_srcdir)/libuevent/uevent.h > $(srcdir)/$@.tmp && \
		mv $(srcdir)/$@.tmp $(srcdir)/$@; else touch -c $(srcdir)/$@; fi
.PHONY: records
records:
	$(PYTHON) $(top_srcdir)/libuevent/gen-records.py --c-json $(top_srcdir)/libuevent/uevent.h \
		> $(top_srcdir)/%reldir%/uevent-json.h.tmp && \
	mv $(top_srcdir)/%reldir%/uevent-json.h.tmp $(top_srcdir)/%reldir%/uevent-json.h
	$(PYTHON) $(top_srcdir)/libuevent/gen-records.py --rust $(top_srcdir)/libuevent/uevent.h \
		> $(top_srcdir)/bindings/rust/uevent/src/perf/records.rs.tmp && \
	mv $(top_srcdir)/bindings/rust/uevent/src/perf/records.rs.tmp \
		$(top_srcdir)/bindings/rust/uevent/src/perf/records.rs
