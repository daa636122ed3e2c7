# jit-hooks/local.mk - JIT hooks: jit.c is built into libuevent (see
# libuevent/local.mk); here are the LuaJIT and Python hooks, their tests and benchmarks.
jit_t_cflags = $(AM_CFLAGS) -I$(top_srcdir)/t

check_PROGRAMS += t/jit-dump t/jit-cjit t/jit-api
t_jit_dump_CFLAGS = $(jit_t_cflags)
t_jit_cjit_CFLAGS = $(jit_t_cflags)
t_jit_cjit_LDADD = libuevent/libuevent.la
t_jit_api_CFLAGS = $(jit_t_cflags) -pthread
t_jit_api_LDADD = libuevent/libuevent.la -lpthread

TESTS += t/jit-api t/jit-perf.test
EXTRA_DIST += t/jit-perf.test

TESTS += t/jit-luajit.test t/jit-python.test
EXTRA_DIST += t/jit-lib.sh t/jit-luajit.test t/jit-python.test \
	%reldir%/README.md %reldir%/luajit/uevent/jit.lua %reldir%/luajit/tests/hot.lua \
	%reldir%/luajit/tests/test_jit.lua %reldir%/python/uevent_jit.py \
	%reldir%/python/tests/tinyjit.py %reldir%/python/tests/test_uevent_jit.py

# make install: the LuaJIT module where LuaJIT's package.path looks (luadir, from
# ./configure --with-luadir, default $(datadir)/lua/5.1) and the Python hook
# (--with-pythondir, default $(libdir)/pythonX.Y/site-packages).
luajithookdir = $(luadir)/uevent
luajithook_DATA = %reldir%/luajit/uevent/jit.lua
pyhook_DATA = %reldir%/python/uevent_jit.py

# t/jit-install.test installs just these two into a DESTDIR and loads them from there.
TESTS += t/jit-install.test
EXTRA_DIST += t/jit-install.test
.PHONY: jit-install-dirs
jit-install-dirs:
	@echo '$(luajithookdir)'; echo '$(pyhookdir)'

# make installcheck (and so distcheck): both modules are where they were put.
installcheck-local: installcheck-jit-hooks
.PHONY: installcheck-jit-hooks
installcheck-jit-hooks:
	test -f '$(DESTDIR)$(luajithookdir)/jit.lua'
	test -f '$(DESTDIR)$(pyhookdir)/uevent_jit.py'

# make bench: µs per code_load, and the LuaJIT hook's overhead (hook on vs off, one run).
EXTRA_PROGRAMS += bench/jit
bench_programs += bench/jit
bench_jit_CPPFLAGS = $(AM_CPPFLAGS) -DBENCH_SRCDIR='"$(abs_top_srcdir)"' \
	-DBENCH_BUILDDIR='"$(abs_top_builddir)"' -DBENCH_LUAJIT='"$(LUAJIT)"'
bench_jit_LDADD = libuevent/libuevent.la
CLEANFILES += bench/jit
EXTRA_DIST += bench/jit-luajit.lua
