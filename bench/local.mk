# bench/local.mk - benchmarks, run by `make bench`, never by `make check`.
EXTRA_PROGRAMS += bench/emit
bench_programs += bench/emit
bench_emit_LDADD = libuevent/libuevent.la
CLEANFILES += bench/emit
