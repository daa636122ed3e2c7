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
	%reldir%/group-append.h \
	%reldir%/group-append.c \
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
	%reldir%/session-open.c \
	%reldir%/session-uprobes.c \
	%reldir%/session-follow.c \
	%reldir%/session-order.c \
	%reldir%/session-fill.c \
	%reldir%/session-decode.c \
	%reldir%/session-filter.c \
	%reldir%/session-drain.c \
	%reldir%/rec-writer.h \
	%reldir%/session-record.c \
	%reldir%/session-spawn.c \
	%reldir%/perfdata-internal.h \
	%reldir%/perfdata.c \
	%reldir%/perfdata-order.c \
	%reldir%/perfdata-tracing.c \
	%reldir%/time-sort.c \
	%reldir%/tls-deferred.c \
	%reldir%/batch.c \
	%reldir%/tp-fields.c \
	%reldir%/symbolize-internal.h \
	%reldir%/symbolize.c \
	%reldir%/symbolize-code.c \
	%reldir%/symbolize-read.c \
	%reldir%/symbolize-elf.c \
	%reldir%/demangle.c \
	%reldir%/elf-object.c \
	%reldir%/jit-internal.h \
	%reldir%/jit.c \
	%reldir%/jit-stage.c \
	%reldir%/jit-code.c \
	%reldir%/jit-dump.c \
	%reldir%/jit-merge.c \
	%reldir%/jit-map.c \
	%reldir%/jit-marker.c \
	%reldir%/bpf-context.h \
	%reldir%/bpf-context.c
libuevent_libuevent_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden $(TLS_CFLAGS) $(LIBTRACEEVENT_CFLAGS) $(LIBDW_CFLAGS) \
	$(LIBBPF_CFLAGS) -I$(top_builddir)/%reldir%
# libbpf's own libraries (libelf, zlib) too: the guest tests link libuevent statically
libuevent_libuevent_la_LIBADD = $(LIBTRACEEVENT_LIBS) $(LIBBPF_STATIC_LIBS) $(LIBDW_LIBS) $(LIBIBERTY_LIBS)
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
# ... a page per function group (uevent_session(3)...), made from its sections by
# man3-pages.awk, whose output lists the group of each function; and `man
# uevent_range_begin` finds its group's page (else libuevent(3)): a .so link per
# exported function.
man3_pages = %reldir%/man3
$(man3_pages)/links: %reldir%/libuevent.3 %reldir%/libuevent.map %reldir%/man3-pages.awk
	$(AM_V_GEN)rm -rf $(man3_pages) && $(MKDIR_P) $(man3_pages) && \
	$(AWK) -v dir=$(man3_pages) -v map=$(srcdir)/%reldir%/libuevent.map \
		-f $(srcdir)/%reldir%/man3-pages.awk $(srcdir)/%reldir%/libuevent.3 > $@.tmp && \
	mv $@.tmp $@
all-local: $(man3_pages)/links
clean-local: clean-local-man3
clean-local-man3:
	rm -rf $(man3_pages)
EXTRA_DIST += %reldir%/man3-pages.awk
install-data-local: install-man3-links
uninstall-local: uninstall-man3-links
.PHONY: install-man3-links uninstall-man3-links clean-local-man3
uevent_man3_names = sed -n 's/^[[:space:]]*\(uevent_[a-z0-9_]*\);.*/\1/p' $(srcdir)/%reldir%/libuevent.map
install-man3-links: $(man3_pages)/links
	$(MKDIR_P) '$(DESTDIR)$(man3dir)'
	for p in $(man3_pages)/*.3; do \
		$(INSTALL_DATA) "$$p" '$(DESTDIR)$(man3dir)/' || exit 1; \
	done
	for f in `$(uevent_man3_names)`; do \
		p=`$(AWK) -v f="$$f" '$$1 == f { print $$2 }' $(man3_pages)/links`; \
		test "$$p" != "$$f" || continue; \
		echo ".so man3/$${p:-libuevent}.3" > '$(DESTDIR)$(man3dir)/'"$$f.3" || exit 1; \
	done
uninstall-man3-links:
	for f in `$(uevent_man3_names)`; do rm -f '$(DESTDIR)$(man3dir)/'"$$f.3"; done
	for p in `$(AWK) '{ print $$2 }' $(man3_pages)/links | sort -u`; do \
		rm -f '$(DESTDIR)$(man3dir)/'"$$p.3"; done

# The BPF reader of samples' thread context: clang's BPF target compiles the program
# (CO-RE: no vmlinux.h, the kernel's BTF relocates it at load), bpftool embeds the
# object in a skeleton header that bpf-context.c includes.
EXTRA_DIST += %reldir%/bpf/context.bpf.c %reldir%/bpf/context-shared.h
if HAVE_BPF_CONTEXT
nodist_libuevent_libuevent_la_SOURCES = %reldir%/bpf/context.skel.h
$(libuevent_libuevent_la_OBJECTS): %reldir%/bpf/context.skel.h
CLEANFILES += %reldir%/bpf/context.bpf.o %reldir%/bpf/context.skel.h
%reldir%/bpf/context.bpf.o: %reldir%/bpf/context.bpf.c %reldir%/bpf/context-shared.h
	$(AM_V_CC)$(MKDIR_P) $(@D) && \
	$(BPF_CLANG) -g -O2 -target bpf $(BPF_MULTIARCH_INCLUDE) -I$(srcdir)/%reldir%/bpf \
		-Wall -Werror -c $(srcdir)/%reldir%/bpf/context.bpf.c -o $@
%reldir%/bpf/context.skel.h: %reldir%/bpf/context.bpf.o
	$(AM_V_GEN)$(BPFTOOL) gen skeleton $< name uevent_ctx_bpf > $@.tmp && mv $@.tmp $@
endif
