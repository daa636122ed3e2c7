# bench/local.mk - benchmarks, run by `make bench`, never by `make check`.
EXTRA_PROGRAMS += bench/emit
bench_programs += bench/emit
bench_emit_LDADD = libuevent/libuevent.la
# Static, so one binary holds both probe sites bench/usdt-hit.sh attaches to.
bench_emit_LDFLAGS = -static-libtool-libs
CLEANFILES += bench/emit
EXTRA_DIST += %reldir%/usdt-hit.sh %reldir%/guest.sh %reldir%/bench.h
bench_scripts += %reldir%/usdt-hit.sh %reldir%/guest.sh
# perf.data decode rate against perf script, live session throughput.
EXTRA_PROGRAMS += bench/decode
bench_programs += bench/decode
bench_decode_LDADD = libuevent/libuevent.la
CLEANFILES += bench/decode
