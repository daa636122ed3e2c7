# fuzz/local.mk - libFuzzer targets for every decoder. They are built by the
# clang configure found (FUZZ_CC) with ASan and UBSan, from the library's own sources,
# whatever CC builds the library. `make check` runs each over its seeds and a fixed
# number of mutations (fuzz/fuzz.test); `make fuzz` runs each FUZZ_SECONDS.
fuzz_targets = perf-record perf-file uevent-file payload record names elf perf-map tracing cli
# the targets of the library alone; fuzz/cli also links the CLI's readers (tools/)
fuzz_lib_bins = fuzz/perf-record fuzz/perf-file fuzz/uevent-file fuzz/payload fuzz/record \
	fuzz/names fuzz/elf fuzz/perf-map fuzz/tracing
fuzz_bins = $(fuzz_lib_bins) fuzz/cli
fuzz_lib_sources = $(filter %.c,$(libuevent_libuevent_la_SOURCES))
fuzz_cli_sources = tools/cli.c tools/profile.c tools/report.c tools/export-profile.c \
	tools/export.c tools/dump.c
fuzz_cli_generated = $(filter %.c,$(nodist_tools_uevent_SOURCES))
FUZZ_CFLAGS = -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
	-fno-sanitize-recover=all -I$(top_builddir) -I$(top_srcdir)/kernel/include/uapi \
	-I$(top_srcdir)/libuevent -I$(top_builddir)/libuevent -I$(top_srcdir)/fuzz \
	$(LIBTRACEEVENT_CFLAGS) $(LIBDW_CFLAGS) $(LIBBPF_CFLAGS)
# seconds per target in make fuzz; FUZZ_RUNS (empty: fuzz.test's own, about 5 s a
# target) mutations per target in make check
FUZZ_SECONDS = 120
FUZZ_RUNS =

fuzz/libuevent-fuzz.a: $(fuzz_lib_sources) $(filter %.h,$(libuevent_libuevent_la_SOURCES)) \
		$(nodist_libuevent_libuevent_la_SOURCES) $(include_HEADERS) config.h
	$(AM_V_GEN)rm -rf fuzz/lib && $(MKDIR_P) fuzz/lib && \
	for s in $(fuzz_lib_sources); do \
		$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c "$(srcdir)/$$s" \
			-o "fuzz/lib/`echo $$s | tr / -`.o" || exit 1; \
	done && rm -f $@ && $(AR) rcs $@ fuzz/lib/*.o

$(fuzz_lib_bins): fuzz/%: fuzz/%.c fuzz/fuzz.h fuzz/libuevent-fuzz.a
	$(AM_V_CCLD)$(FUZZ_CC) $(FUZZ_CFLAGS) -Wall -Wextra -fsanitize=fuzzer -o $@ $< \
		fuzz/libuevent-fuzz.a $(LIBTRACEEVENT_LIBS) $(LIBBPF_STATIC_LIBS) $(LIBDW_LIBS) \
		$(LIBIBERTY_LIBS) -lpthread -ldl

# the CLI's commands that read a perf.data, and pprof's generated encoder
FUZZ_CLI_CFLAGS = $(FUZZ_CFLAGS) -I$(top_srcdir)/tools -I$(top_builddir)/tools \
	$(PROTOBUF_C_CFLAGS)
fuzz/uevent-cli-fuzz.a: $(fuzz_cli_sources) tools/cli.h tools/profile.h tools/uevent-json.h \
		$(fuzz_cli_generated) $(include_HEADERS) config.h
	$(AM_V_GEN)rm -rf fuzz/cli-lib && $(MKDIR_P) fuzz/cli-lib && \
	for s in $(addprefix $(srcdir)/,$(fuzz_cli_sources)) $(fuzz_cli_generated); do \
		$(FUZZ_CC) $(FUZZ_CLI_CFLAGS) -fsanitize=fuzzer-no-link -c "$$s" \
			-o "fuzz/cli-lib/`basename $$s .c`.o" || exit 1; \
	done && rm -f $@ && $(AR) rcs $@ fuzz/cli-lib/*.o

# its symbolizers see nothing of this machine: uevent_symbolizer__new() wrapped
fuzz/cli: fuzz/cli.c fuzz/fuzz.h fuzz/uevent-cli-fuzz.a fuzz/libuevent-fuzz.a
	$(AM_V_CCLD)$(FUZZ_CC) $(FUZZ_CLI_CFLAGS) -Wall -Wextra -fsanitize=fuzzer \
		-Wl,--wrap=uevent_symbolizer__new -o $@ $(srcdir)/fuzz/cli.c \
		fuzz/uevent-cli-fuzz.a fuzz/libuevent-fuzz.a $(LIBTRACEEVENT_LIBS) \
		$(LIBBPF_STATIC_LIBS) $(LIBDW_LIBS) $(LIBIBERTY_LIBS) $(PROTOBUF_C_LIBS) \
		-lpthread -ldl

TESTS += fuzz/fuzz.test fuzz/make-corpus.test
# a fixed seed: distcheck would repeat make check's very inputs
host_TESTS += fuzz/fuzz.test
EXTRA_DIST += fuzz/fuzz.test fuzz/fuzz.h fuzz/perf-record.c fuzz/perf-file.c \
	fuzz/uevent-file.c fuzz/payload.c fuzz/record.c fuzz/names.c fuzz/elf.c fuzz/perf-map.c \
	fuzz/tracing.c fuzz/cli.c fuzz/make-corpus.py fuzz/corpus
# fuzz/make-corpus.py on a copy of the tree keeps the seeds added by hand
EXTRA_DIST += fuzz/make-corpus.test
if HAVE_FUZZ
fuzz_enabled = yes
fuzz/fuzz.log: $(fuzz_bins)

# new inputs go to fuzz/found/TARGET (merge the useful ones into fuzz/corpus by hand),
# crashes to fuzz/crashes/TARGET-*
fuzz: $(fuzz_bins)
	@for t in $(fuzz_targets); do \
		$(MKDIR_P) fuzz/found/$$t fuzz/crashes || exit 1; \
		echo "fuzz/$$t: $(FUZZ_SECONDS) s"; \
		fuzz/$$t -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
			-artifact_prefix=fuzz/crashes/$$t- fuzz/found/$$t \
			"$(srcdir)/fuzz/corpus/$$t" > fuzz/found/$$t.log 2>&1; rc=$$?; \
		if [ $$rc = 0 ]; then grep -E '^(Done|stat::(new_units|peak))' fuzz/found/$$t.log; \
		else grep -v '^#[0-9]' fuzz/found/$$t.log | tail -n 40; \
			echo "fuzz/$$t failed: fuzz/found/$$t.log, fuzz/crashes/" >&2; exit 1; fi; \
	done
else
fuzz_enabled =
fuzz:
	@echo "make fuzz: configure found no clang that links libFuzzer targets" \
		"(Debian: clang libclang-rt-dev; or ./configure FUZZ_CC=...)" >&2; exit 1
endif
AM_TESTS_ENVIRONMENT += FUZZ_ENABLED='$(fuzz_enabled)'; FUZZ_RUNS='$(FUZZ_RUNS)'; \
	export FUZZ_ENABLED FUZZ_RUNS;
.PHONY: fuzz clean-local-fuzz
clean-local: clean-local-fuzz
clean-local-fuzz:
	rm -rf fuzz/lib fuzz/libuevent-fuzz.a fuzz/cli-lib fuzz/uevent-cli-fuzz.a $(fuzz_bins)
