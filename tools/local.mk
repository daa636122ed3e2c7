# tools/local.mk - the uevent CLI.
bin_PROGRAMS += tools/uevent
tools_uevent_SOURCES = %reldir%/uevent.c %reldir%/uevent-json.h %reldir%/cli.h %reldir%/cli.c \
	%reldir%/probe.c %reldir%/emit.c %reldir%/dump.c %reldir%/export.c %reldir%/record.c %reldir%/report.c \
	%reldir%/profile.c %reldir%/profile.h %reldir%/export-profile.c \
	%reldir%/jit-clean.c %reldir%/jit-clean.h %reldir%/inject-env.c %reldir%/inject-env.h \
	%reldir%/probe-lib.c
tools_uevent_LDADD = libuevent/libuevent.la
EXTRA_tools_uevent_DEPENDENCIES = install-dirs.stamp
EXTRA_DIST += %reldir%/profile.proto

# export --pprof: pprof's profile.proto through protobuf-c, generated at build time
if HAVE_PPROF
nodist_tools_uevent_SOURCES = %reldir%/profile.pb-c.c %reldir%/profile.pb-c.h
tools_uevent_LDADD += $(PROTOBUF_C_LIBS)
tools_uevent_CPPFLAGS = $(AM_CPPFLAGS) -I$(builddir)/%reldir% $(PROTOBUF_C_CFLAGS)
%reldir%/profile.pb-c.c %reldir%/profile.pb-c.h: %reldir%/profile.proto
	$(AM_V_GEN)$(MKDIR_P) %reldir% && $(PROTOC_C) --c_out=%reldir% \
		--proto_path=$(srcdir)/%reldir% $(srcdir)/%reldir%/profile.proto
%reldir%/uevent-export-profile.$(OBJEXT): %reldir%/profile.pb-c.h
CLEANFILES += %reldir%/profile.pb-c.c %reldir%/profile.pb-c.h
endif

# uevent-json.h is generated from the record model of uevent.h (gen_json.py) and
# committed (the CLI builds without Python), as is the Rust crate's records.rs (cargo
# builds without it); t/records.test fails when either is stale. make regenerates them
# when uevent.h or a generator is newer and Python is there; `make records` (Makefile.am)
# forces both through their own rules.
%reldir%/uevent-json.h: $(top_srcdir)/libuevent/uevent.h $(RECORDS_MODEL) %reldir%/gen_json.py
	$(AM_V_GEN)if test -n '$(PYTHON)'; then \
		$(PYTHON) $(srcdir)/%reldir%/gen_json.py \
			$(top_srcdir)/libuevent/uevent.h > $(srcdir)/$@.tmp && \
		mv $(srcdir)/$@.tmp $(srcdir)/$@; else touch -c $(srcdir)/$@; fi
records_files += %reldir%/uevent-json.h
EXTRA_DIST += %reldir%/gen_json.py

# uevent(1), kept true to the commands by t/man.test
dist_man1_MANS = %reldir%/uevent.1

# bash completion, where bash-completion loads it by the command's name
bashcompletiondir = $(datadir)/bash-completion/completions
dist_bashcompletion_DATA = %reldir%/bash-completion/uevent
