# bench/local.mk - benchmarks, run by `make bench`, never by `make check`.
