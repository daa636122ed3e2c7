# t/local.mk - the TAP suite.
t_cflags = $(AM_CFLAGS) -I$(top_srcdir)/t
t_ldadd = libuevent/libuevent.la

check_PROGRAMS += t/codec t/emit t/mark-loop t/mark-loop-static t/ranges t/bt-load
t_ranges_LDADD = $(t_ldadd) -lpthread
t_mark_loop_LDADD = $(t_ldadd)
t_bt_load_LDADD = $(t_ldadd)
# the same program with libuevent.a linked in (t/record.test: probes in an executable)
t_mark_loop_static_SOURCES = t/mark-loop.c
t_mark_loop_static_LDADD = $(t_ldadd)
t_mark_loop_static_LDFLAGS = -static
t_codec_CFLAGS = $(t_cflags)
t_codec_LDADD = $(t_ldadd)
t_emit_CFLAGS = $(t_cflags) -pthread
t_emit_LDADD = $(t_ldadd) -lpthread
# the file transport opened again and closed while threads emit
check_PROGRAMS += t/file-reopen
t_file_reopen_CFLAGS = $(t_cflags) -pthread
t_file_reopen_LDADD = $(t_ldadd) -lpthread
TESTS += t/file-reopen
# ... and when a fork or a signal handler's mark comes in the middle of its work
check_PROGRAMS += t/file-edges
t_file_edges_CFLAGS = $(t_cflags) -pthread
t_file_edges_LDADD = $(t_ldadd) -lpthread
TESTS += t/file-edges

TESTS += t/codec t/emit
# what distcheck-ci leaves out (Makefile.am): live sessions, recordings, sanitizer
# builds and JIT runtimes on this host; make check runs them
host_TESTS += t/session t/session-life t/thread-context t/bpf-context t/asan.test \
	t/lsan.test t/ubsan-cli.test t/record-kill.test t/record-memlock.test \
	t/perf-event-guard.test t/record.test t/live-vs-perf.test t/perf-event.test \
	t/bpftrace.test t/event-names.test t/usdt.test t/perm.test t/report.test \
	t/report-context.test t/jit-perf.test t/jit-tsan.test t/jit-luajit.test \
	t/jit-python.test t/jit-numba.test t/cli-user.test t/tracefs-mount.test \
	t/usdt-path.test t/perf-event-path.test

EXTRA_DIST += %reldir%/tap.h %reldir%/files.h %reldir%/data %reldir%/kernel-abi.test %reldir%/fake-abi.c

TESTS += t/records.test t/version.test
EXTRA_DIST += %reldir%/records.test %reldir%/version.test
# docs/build.md's table of generated files against the makefiles
TESTS += t/generated.test
EXTRA_DIST += %reldir%/generated.test %reldir%/generated.py
TESTS += t/symbols.test t/cli.test t/usdt.test t/ftrace.test t/perm.test t/man.test t/kernel-abi.test \
	t/readme.test t/usdt-path.test t/perf-event-path.test
EXTRA_DIST += %reldir%/usdt-path.test %reldir%/perf-event-path.test
EXTRA_DIST += %reldir%/readme.test
EXTRA_DIST += %reldir%/lib.sh %reldir%/symbols.test %reldir%/cli.test %reldir%/usdt.test \
	%reldir%/ftrace.test %reldir%/perm.test %reldir%/man.test

# The reading side: decoders (also built with ASan by t/asan.test), live sessions.
check_PROGRAMS += t/perfdec t/session t/bpf-prog t/thread-context t/session-life t/names
t_session_life_CFLAGS = $(t_cflags) -pthread
t_session_life_LDADD = $(t_ldadd) -lpthread
TESTS += t/session-life
t_thread_context_CFLAGS = $(t_cflags) -pthread
t_thread_context_LDADD = $(t_ldadd) -lpthread
t_perfdec_CFLAGS = $(t_cflags)
t_perfdec_LDADD = $(t_ldadd)
t_names_CFLAGS = $(t_cflags)
t_names_LDADD = $(t_ldadd)
t_session_CFLAGS = $(t_cflags) -pthread
t_session_LDADD = $(t_ldadd) -lpthread
TESTS += t/perfdec t/session t/thread-context t/names t/asan.test t/lsan.test
# the thread context record against a handler's set or clear at every instruction
check_PROGRAMS += t/context-step
t_context_step_CFLAGS = $(t_cflags) -pthread
t_context_step_LDADD = $(t_ldadd) -lpthread
TESTS += t/context-step
# the time order's sort (libuevent/time-sort.c, built in) against a plain stable sort
check_PROGRAMS += t/time-sort
t_time_sort_SOURCES = t/time-sort.c libuevent/time-sort.c
t_time_sort_CFLAGS = $(t_cflags)
TESTS += t/time-sort
# samples -> spans through the BPF path on this (stock) kernel
check_PROGRAMS += t/bpf-context
t_bpf_context_CFLAGS = $(t_cflags) -pthread
t_bpf_context_LDADD = $(t_ldadd) -lpthread
TESTS += t/bpf-context
EXTRA_DIST += %reldir%/asan.test %reldir%/lsan.test
AM_TESTS_ENVIRONMENT += CC='$(CC)'; export CC;
.PHONY: check-asan
check-asan:
	$(MAKE) $(AM_MAKEFLAGS) check TESTS=t/asan.test
TESTS += t/record-kill.test t/record-memlock.test t/ubsan-cli.test t/perf-event-guard.test
EXTRA_DIST += %reldir%/record-kill.test %reldir%/record-memlock.test %reldir%/ubsan-cli.test \
	%reldir%/perf-event-guard.test
TESTS += t/perfdata.test t/record.test t/live-vs-perf.test t/export.test t/perf-event.test \
	t/bpftrace.test t/event-names.test
EXTRA_DIST += %reldir%/perfdata.test %reldir%/record.test %reldir%/live-vs-perf.test \
	%reldir%/export.test %reldir%/tef-check.py %reldir%/perf-event.test %reldir%/bpftrace.test \
	%reldir%/event-names.test
# Symbolization (libuevent/symbolize.c) and what reads it: uevent report, export --folded.
check_PROGRAMS += t/symbolize t/burn
t_symbolize_CFLAGS = $(t_cflags) -DSRCDIR='"$(abs_top_srcdir)"' -g -fno-inline
t_symbolize_LDADD = $(t_ldadd)
check_PROGRAMS += t/symbolize-sparse
t_symbolize_sparse_CFLAGS = $(t_cflags)
t_symbolize_sparse_LDADD = $(t_ldadd)
t_burn_CFLAGS = $(t_cflags) -g -O1 -fno-omit-frame-pointer -fno-inline -fno-optimize-sibling-calls
t_burn_LDADD = $(t_ldadd)
TESTS += t/symbolize t/symbolize-sparse t/report.test t/report-context.test t/export-spans.test
EXTRA_DIST += %reldir%/report.test %reldir%/report-context.test %reldir%/context-data.py \
	%reldir%/export-spans.test
# the code lists' lookup (libuevent/symbolize-code.c, built in) against a model of every code
check_PROGRAMS += t/symbolize-index
t_symbolize_index_SOURCES = t/symbolize-index.c libuevent/symbolize-code.c
t_symbolize_index_CFLAGS = $(t_cflags)
TESTS += t/symbolize-index
# The exports of captures made hostile (t/sample-data.py writes them): ranges left open
# (t/peak-rss measures the memory they take), a corrupt record, a write that fails.
check_PROGRAMS += t/peak-rss
TESTS += t/export-limits.test
EXTRA_DIST += %reldir%/export-limits.test %reldir%/sample-data.py

# The JIT API (libuevent/jit.c) and the runtime hooks (in bindings/python and bindings/lua).
jit_t_cflags = $(AM_CFLAGS) -I$(top_srcdir)/t

check_PROGRAMS += %reldir%/jit-dump %reldir%/jit-cjit %reldir%/jit-api
t_jit_dump_CFLAGS = $(jit_t_cflags)
t_jit_cjit_CFLAGS = $(jit_t_cflags)
t_jit_cjit_LDADD = libuevent/libuevent.la
t_jit_api_CFLAGS = $(jit_t_cflags) -pthread
t_jit_api_LDADD = libuevent/libuevent.la -lpthread

# The LuaJIT hook's C trace handler (bindings/lua/uevent/jit_core.so), in an embedded
# LuaJIT against stubs; without LuaJIT's headers it SKIPs.
check_PROGRAMS += %reldir%/jit-core
t_jit_core_CFLAGS = $(jit_t_cflags) $(LUAJIT_DEV_CFLAGS) \
	-DJIT_CORE_SO='"$(abs_top_builddir)/bindings/lua/uevent/jit_core.so"'
if HAVE_LUAJIT_DEV
t_jit_core_CFLAGS += -DHAVE_LUAJIT_DEV
t_jit_core_LDADD = $(LUAJIT_DEV_LIBS)
endif

TESTS += %reldir%/jit-api %reldir%/jit-core %reldir%/jit-perf.test
# Batched loads from threads while another flushes and forks (a batch written after the
# session's lock, waited for by flush and fork).
check_PROGRAMS += %reldir%/jit-threads-fork
t_jit_threads_fork_CFLAGS = $(jit_t_cflags) -pthread
t_jit_threads_fork_LDADD = libuevent/libuevent.la -lpthread
TESTS += %reldir%/jit-threads-fork
# ... into files that cannot take them all (a size limit, a full tmpfs), and fork while
# a load's thread holds a write's lock; t/jit-full-win.test builds it with other DUMP_WIN_*
check_PROGRAMS += %reldir%/jit-full
t_jit_full_CFLAGS = $(jit_t_cflags) -pthread
t_jit_full_LDADD = libuevent/libuevent.la -lpthread
TESTS += %reldir%/jit-full %reldir%/jit-full-win.test
EXTRA_DIST += %reldir%/jit-full-win.test %reldir%/jit-stubs.h
# ... a batch handed off that fails under a merge, a perf map that takes no line, a
# move's line, markers racing unloads, fork from a thread; t/jit-asan.test builds it
# with AddressSanitizer from the JIT files
check_PROGRAMS += %reldir%/jit-errors
t_jit_errors_CFLAGS = $(jit_t_cflags) -pthread
t_jit_errors_LDADD = libuevent/libuevent.la -lpthread -ldl
TESTS += %reldir%/jit-errors %reldir%/jit-asan.test
EXTRA_DIST += %reldir%/jit-asan.test
# The JIT files' threads under ThreadSanitizer (built by the test from the sources).
TESTS += %reldir%/jit-tsan.test
EXTRA_DIST += %reldir%/jit-tsan.test %reldir%/jit-tsan.c

# $JITDUMPDIR a symlink another user planted (libuevent/fs-trust.h)
check_PROGRAMS += %reldir%/jit-base-link
t_jit_base_link_CFLAGS = $(jit_t_cflags)
t_jit_base_link_LDADD = libuevent/libuevent.la
TESTS += %reldir%/jit-base-link
EXTRA_DIST += %reldir%/jit-perf.test

TESTS += %reldir%/jit-luajit.test %reldir%/jit-python.test %reldir%/jit-numba.test
EXTRA_DIST += %reldir%/jit-lib.sh %reldir%/jit-luajit.test %reldir%/jit-python.test \
	%reldir%/jit-numba.test

TESTS += %reldir%/jit-install.test %reldir%/jit-clean.test %reldir%/install.test %reldir%/cli-user.test %reldir%/demangle.test %reldir%/completion.test %reldir%/tracefs-mount.test
EXTRA_DIST += %reldir%/jit-install.test %reldir%/jit-clean.test %reldir%/install.test %reldir%/cli-user.test %reldir%/demangle.test %reldir%/completion.test %reldir%/tracefs-mount.test

include %reldir%/kernel/local.mk

# OpenTelemetry contexts (OTEP 4947, 4719) read from outside the process as the OTEPs
# say: libuevent.a linked in, otel_thread_ctx_v1 exported from the executable.
check_PROGRAMS += t/otel-child
t_otel_child_CFLAGS = $(t_cflags) -pthread
t_otel_child_LDADD = $(t_ldadd) -lpthread
t_otel_child_LDFLAGS = -static -Wl,--export-dynamic-symbol=otel_thread_ctx_v1
TESTS += t/otel-reader.test
EXTRA_DIST += %reldir%/otel-reader.test %reldir%/otel-reader.py
