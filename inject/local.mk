# inject/local.mk - injection libraries: a program's NVTX (libuevent-nvtx.so) and ITT
# (libuevent-itt.so) calls become uevents, with no change to the program.
inject_cflags = $(AM_CFLAGS) -fvisibility=hidden -pthread
inject_common = %reldir%/inject.c %reldir%/inject.h

# ITT: the collector protocol's structures are ours (itt.h); nothing to find.
lib_LTLIBRARIES += %reldir%/libuevent-itt.la
%canon_reldir%_libuevent_itt_la_SOURCES = %reldir%/itt.c %reldir%/itt.h $(inject_common)
%canon_reldir%_libuevent_itt_la_CFLAGS = $(inject_cflags)
%canon_reldir%_libuevent_itt_la_LIBADD = libuevent/libuevent.la -ldl -lpthread
%canon_reldir%_libuevent_itt_la_LDFLAGS = -module -avoid-version -shared

# Two ITT static parts in a client with no libuevent, and a second collector to chain to.
check_PROGRAMS += %reldir%/itt-client %reldir%/itt-check
%canon_reldir%_itt_client_CFLAGS = $(AM_CFLAGS) -pthread
%canon_reldir%_itt_client_LDADD = -ldl -lpthread
%canon_reldir%_itt_check_SOURCES = %reldir%/itt-check.c %reldir%/check.c %reldir%/check.h
%canon_reldir%_itt_check_CFLAGS = $(AM_CFLAGS) -I$(top_srcdir)/t
%canon_reldir%_itt_check_LDADD = libuevent/libuevent.la
check_LTLIBRARIES = %reldir%/itt-chain.la
%canon_reldir%_itt_chain_la_SOURCES = %reldir%/itt-chain.c %reldir%/chain-count.h
%canon_reldir%_itt_chain_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
TESTS += %reldir%/itt-check %reldir%/exports.test
EXTRA_DIST += %reldir%/exports.test

# NVTX is header-only: without its v3 headers there is nothing to build against, and
# nvtx-check SKIPs with the reason.
check_PROGRAMS += %reldir%/nvtx-check
%canon_reldir%_nvtx_check_SOURCES = %reldir%/nvtx-check.c %reldir%/check.c %reldir%/check.h %reldir%/inject.h
%canon_reldir%_nvtx_check_CFLAGS = $(AM_CFLAGS) -I$(top_srcdir)/t
%canon_reldir%_nvtx_check_LDADD = libuevent/libuevent.la
TESTS += %reldir%/nvtx-check %reldir%/record.test
host_TESTS += %reldir%/record.test
EXTRA_DIST += %reldir%/record.test %reldir%/nvtx-bench.c %reldir%/nvtx.c %reldir%/nvtx-client.c %reldir%/nvtx-module.c %reldir%/nvtx-chain.c %reldir%/chain-count.h

if HAVE_NVTX
lib_LTLIBRARIES += %reldir%/libuevent-nvtx.la
%canon_reldir%_libuevent_nvtx_la_SOURCES = %reldir%/nvtx.c $(inject_common)
%canon_reldir%_libuevent_nvtx_la_CPPFLAGS = $(AM_CPPFLAGS) $(NVTX_CFLAGS)
%canon_reldir%_libuevent_nvtx_la_CFLAGS = $(inject_cflags)
%canon_reldir%_libuevent_nvtx_la_LIBADD = libuevent/libuevent.la -ldl -lpthread
%canon_reldir%_libuevent_nvtx_la_LDFLAGS = -module -avoid-version -shared

# The test client: NVTX's own loader and nothing of ours (no libuevent), as in PyTorch.
check_PROGRAMS += %reldir%/nvtx-client
%canon_reldir%_nvtx_client_CPPFLAGS = $(NVTX_CFLAGS)
%canon_reldir%_nvtx_client_CFLAGS = -pthread
%canon_reldir%_nvtx_client_LDADD = -ldl -lpthread
# A second NVTX module and a second injection library to chain to.
check_LTLIBRARIES += %reldir%/nvtx-module.la %reldir%/nvtx-chain.la
%canon_reldir%_nvtx_module_la_CPPFLAGS = $(NVTX_CFLAGS)
%canon_reldir%_nvtx_module_la_LIBADD = -ldl
%canon_reldir%_nvtx_module_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
%canon_reldir%_nvtx_chain_la_CPPFLAGS = $(NVTX_CFLAGS)
%canon_reldir%_nvtx_chain_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere

# make bench: ns per NVTX call against the libuevent call it becomes.
EXTRA_PROGRAMS += %reldir%/nvtx-bench
bench_programs += %reldir%/nvtx-bench
%canon_reldir%_nvtx_bench_CPPFLAGS = $(AM_CPPFLAGS) $(NVTX_CFLAGS) -I$(top_srcdir)/bench
%canon_reldir%_nvtx_bench_LDADD = libuevent/libuevent.la -ldl
CLEANFILES += %reldir%/nvtx-bench
endif
