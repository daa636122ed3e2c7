# bench/local.mk - benchmarks, run by `make bench`, never by `make check`.
EXTRA_PROGRAMS += bench/emit
bench_programs += bench/emit
bench_emit_LDADD = libuevent/libuevent.la
# Static, so one binary holds both probe sites bench/usdt-hit.sh attaches to.
bench_emit_LDFLAGS = -static-libtool-libs
CLEANFILES += bench/emit
EXTRA_DIST += %reldir%/usdt-hit.sh %reldir%/guest.sh %reldir%/bench.h %reldir%/report.sh \
	%reldir%/guest-emit-cost.c %reldir%/guest-enable-word.c
bench_scripts += %reldir%/usdt-hit.sh %reldir%/guest.sh %reldir%/report.sh
# perf.data decode rate against perf script, live session throughput.
EXTRA_PROGRAMS += bench/decode
bench_programs += bench/decode
bench_decode_LDADD = libuevent/libuevent.la
CLEANFILES += bench/decode
# The symbolizer reading a perf map and a jitdump of n and 4n entries: the ratio.
EXTRA_PROGRAMS += bench/symbolize-scale
bench_programs += bench/symbolize-scale
bench_symbolize_scale_LDADD = libuevent/libuevent.la
CLEANFILES += bench/symbolize-scale
# How often a forked child of a traced process loses its usdt probes (a kernel race).
EXTRA_PROGRAMS += bench/usdt-fork
bench_programs += bench/usdt-fork
bench_usdt_fork_LDADD = libuevent/libuevent.la -lpthread
CLEANFILES += bench/usdt-fork

# `make bench`: bench/bindings runs the C baseline and each built binding's mark loop.
# (This file is included after the bindings': the rule needs their *_all variables.)
EXTRA_PROGRAMS += %reldir%/bindings-c
bench_bindings_c_LDADD = libuevent/libuevent.la
bench_programs += %reldir%/bindings
%reldir%/bindings: %reldir%/bindings.sh %reldir%/bindings-c$(EXEEXT) $(py_all) $(lua_all) $(rust_all)
	$(AM_V_GEN)$(SED) -e 's|%ABS_TOP_SRCDIR%|$(abs_top_srcdir)|g' \
		-e 's|%ABS_TOP_BUILDDIR%|$(abs_top_builddir)|g' -e 's|%PYTHON%|$(PYTHON)|g' \
		-e 's|%LUAJIT%|$(LUAJIT)|g' -e 's|%CARGO%|$(CARGO)|g' \
		$(srcdir)/%reldir%/bindings.sh > $@.tmp && chmod +x $@.tmp && mv $@.tmp $@
CLEANFILES += %reldir%/bindings %reldir%/bindings-c$(EXEEXT)
EXTRA_DIST += %reldir%/bindings.sh %reldir%/bindings.py %reldir%/bindings.lua

# make bench: µs per code_load, and the LuaJIT hook's overhead (hook on vs off, one run).
EXTRA_PROGRAMS += %reldir%/jit
bench_programs += %reldir%/jit
bench_jit_CPPFLAGS = $(AM_CPPFLAGS) -DBENCH_SRCDIR='"$(abs_top_srcdir)"' \
	-DBENCH_BUILDDIR='"$(abs_top_builddir)"' -DBENCH_LUAJIT='"$(LUAJIT)"'
bench_jit_LDADD = libuevent/libuevent.la
CLEANFILES += %reldir%/jit
# jit-luajit-parts.lua, run by hand, splits the hook's cost a trace into its parts;
# jit-luajit-ab.lua, by hand, sets two builds of the library against each other.
EXTRA_DIST += %reldir%/jit-luajit.lua %reldir%/jit-luajit-parts.lua %reldir%/jit-floor.lua \
	%reldir%/jit-workload.lua %reldir%/jit-luajit-ab.lua

# make bench: the Numba hook's cost on compiles and on running code, on against off.
bench_scripts += %reldir%/jit-numba.sh
EXTRA_DIST += %reldir%/jit-numba.sh %reldir%/jit-numba.py

# make bench: the Python readers (per record, NumPy batches) against perf script/report.
bench_scripts += %reldir%/arrays.sh
EXTRA_DIST += %reldir%/arrays.sh %reldir%/arrays.py
# PyTorch under `uevent record --nvtx`, for a machine with PyTorch (not run by make bench).
EXTRA_DIST += %reldir%/device/nvtx-pytorch.sh %reldir%/device/nvtx_pytorch.py

# ns per uevent_thread_context_set() (OTEP 4947 record) against a plain store; the shared
# library (PLT + TLSDESC) and libuevent.a (the linker relaxes TLSDESC to local-exec).
EXTRA_PROGRAMS += %reldir%/thread-context %reldir%/thread-context-static
bench_programs += %reldir%/thread-context %reldir%/thread-context-static
bench_thread_context_LDADD = libuevent/libuevent.la
bench_thread_context_static_SOURCES = %reldir%/thread-context.c
bench_thread_context_static_LDADD = libuevent/libuevent.la
bench_thread_context_static_LDFLAGS = -static-libtool-libs
CLEANFILES += %reldir%/thread-context %reldir%/thread-context-static

# make bench: each shared path's throughput as threads are added (1, 2, 4, ... 2x CPUs);
# scale-record.sh floods usdt marks from as many threads under uevent record and perf.
EXTRA_PROGRAMS += %reldir%/scale
bench_programs += %reldir%/scale
bench_scale_LDADD = libuevent/libuevent.la
bench_scale_LDFLAGS = -static-libtool-libs -pthread
CLEANFILES += %reldir%/scale
bench_scripts += %reldir%/scale-record.sh
bench_scripts += %reldir%/scale-profile.sh
# record-drain.sh: uevent record's records per CPU second against RECORD_BASE's, losses
# against perf record; cpus-read.sh: the readers on recordings of 1 to 64 CPUs.
bench_scripts += %reldir%/record-drain.sh %reldir%/cpus-read.sh
# report-memory.sh: uevent report's peak RSS and wall time against perf report's on a
# 37 MB recording (REPORT_MEM_BASE: an older build beside it).
bench_scripts += %reldir%/report-memory.sh
EXTRA_DIST += %reldir%/report-memory.sh
EXTRA_DIST += %reldir%/record-drain.sh %reldir%/cpus-read.sh %reldir%/cpus-synth.py
EXTRA_DIST += %reldir%/scale-record.sh %reldir%/scale-profile.sh %reldir%/device/scale.sh \
	%reldir%/device/all.sh %reldir%/device/scale-base.sh %reldir%/device/s12.sh \
	%reldir%/device/jit-scale.sh %reldir%/device/s20.sh %reldir%/device/s20b.sh \
	%reldir%/device/s20c.sh %reldir%/device/s20d.sh %reldir%/device/s20-env.sh \
	%reldir%/device/s26.sh %reldir%/device/s26b.sh \
	%reldir%/device/s26c.sh %reldir%/device/s27.sh %reldir%/device/s27b.sh \
	%reldir%/device/s27d.sh %reldir%/device/s28.sh %reldir%/device/s28b.sh \
	%reldir%/device/s28c.sh %reldir%/device/s28d.sh %reldir%/device/s28e.sh \
	%reldir%/device/s28f.sh %reldir%/device/s28g.sh %reldir%/device/s28h.sh \
	%reldir%/device/build-variant.sh

# make bench: a live session's open and close, alone and beside another; a killed
# process's exit with sessions open (root; SKIPs otherwise).
EXTRA_PROGRAMS += %reldir%/session-open
bench_programs += %reldir%/session-open
bench_session_open_LDADD = libuevent/libuevent.la
CLEANFILES += %reldir%/session-open

# make bench: a sample's cost with the BPF context reader against sampling without it.
EXTRA_PROGRAMS += %reldir%/bpf-context
bench_programs += %reldir%/bpf-context
bench_bpf_context_CFLAGS = $(AM_CFLAGS) -pthread
bench_bpf_context_LDADD = libuevent/libuevent.la $(LIBBPF_LIBS) -lpthread
CLEANFILES += %reldir%/bpf-context
