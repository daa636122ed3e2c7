# jit-hooks/local.mk - the runtime hooks (LuaJIT, Python) on the C JIT API that
# libuevent/jit.c is; their tests are t/jit-*, their benchmark bench/jit.
EXTRA_DIST += %reldir%/README.md %reldir%/luajit/uevent/jit.lua %reldir%/luajit/jit/uevent.lua \
	%reldir%/luajit/uevent/jit_core.c \
	%reldir%/luajit/tests/hot.lua \
	%reldir%/luajit/tests/test_jit.lua %reldir%/python/uevent_jit.py \
	%reldir%/python/tests/tinyjit.py %reldir%/python/tests/test_uevent_jit.py \
	%reldir%/python/uevent_jit_numba.py %reldir%/python/uevent-jit-numba.pth \
	%reldir%/python/tests/numba_app.py %reldir%/python/tests/test_numba.py

# make install: the LuaJIT module where LuaJIT's package.path looks (luadir, from
# ./configure --with-luadir, default LuaJIT's INSTALL_LMOD under $(prefix); the binding
# it needs goes there too, from bindings/lua/local.mk) and the Python hook
# (--with-pythondir, default $(libdir)/pythonX.Y/site-packages).
luajithookdir = $(luadir)/uevent
luajithook_DATA = %reldir%/luajit/uevent/jit.lua
# ... and jit/uevent.lua, which `luajit -juevent` loads as LuaJIT's -j modules (jit/v.lua).
luajitjdir = $(luadir)/jit
luajitj_DATA = %reldir%/luajit/jit/uevent.lua
# ... and its C part, the trace handler (uevent.jit_core), where LuaJIT's package.cpath
# looks (luacdir). It links nothing but LuaJIT's API, which luajit itself exports: the
# library's entry points come from the FFI binding at start(). In the build tree it is
# copied beside the .la as uevent/jit_core.so, for LUA_CPATH=jit-hooks/luajit/?.so.
if HAVE_LUAJIT_DEV
luajitcoredir = $(luacdir)/uevent
luajitcore_LTLIBRARIES = %reldir%/luajit/uevent/jit_core.la
%canon_reldir%_luajit_uevent_jit_core_la_SOURCES = %reldir%/luajit/uevent/jit_core.c
%canon_reldir%_luajit_uevent_jit_core_la_CFLAGS = $(AM_CFLAGS) $(LUAJIT_DEV_CFLAGS) \
	-fvisibility=hidden
%canon_reldir%_luajit_uevent_jit_core_la_LDFLAGS = -module -avoid-version -shared
EXTRA_%canon_reldir%_luajit_uevent_jit_core_la_DEPENDENCIES = install-dirs.stamp
%reldir%/luajit/uevent/jit_core.so: %reldir%/luajit/uevent/jit_core.la
	$(AM_V_GEN)cp -f %reldir%/luajit/uevent/.libs/jit_core.so $@.tmp && mv -f $@.tmp $@
luajit_core_so = %reldir%/luajit/uevent/jit_core.so
CLEANFILES += %reldir%/luajit/uevent/jit_core.so
else
luajit_core_so =
endif
# The Numba hook beside it as uevent_jit_numba, and the .pth that turns it on at start
# for UEVENT_JIT_NUMBA=1 (read only when pyhookdir is a site directory of the interpreter).
pyhook_DATA = %reldir%/python/uevent_jit.py %reldir%/python/uevent_jit_numba.py \
	%reldir%/python/uevent-jit-numba.pth
# ... and beside the header, where `pip install` of the binding finds them for uevent.jit.
dist_pkgdata_DATA += %reldir%/python/uevent_jit.py %reldir%/python/uevent_jit_numba.py \
	%reldir%/python/uevent-jit-numba.pth

# In the build tree the binding's package has them as uevent.jit and uevent.jit.numba
# (pip install does the same).
py_jit_pkg = bindings/python/lib/uevent/jit
$(py_jit_pkg)/.built: %reldir%/python/uevent_jit.py %reldir%/python/uevent_jit_numba.py \
		bindings/python/lib/uevent/.built
	$(AM_V_GEN)rm -f bindings/python/lib/uevent/jit.py && $(MKDIR_P) $(py_jit_pkg) && \
	cp $(srcdir)/%reldir%/python/uevent_jit.py $(py_jit_pkg)/__init__.py && \
	cp $(srcdir)/%reldir%/python/uevent_jit_numba.py $(py_jit_pkg)/numba.py && \
	touch $@
if HAVE_PYTHON_CFFI
py_jit = $(py_jit_pkg)/.built
else
py_jit =
endif
all-local: $(py_jit) $(luajit_core_so)

# t/jit-install.test installs just these two into a DESTDIR and loads them from there.
.PHONY: jit-install-dirs
jit-install-dirs:
	@echo '$(luajithookdir)'; echo '$(pyhookdir)'; echo '$(luadir)'; echo '$(libdir)'; \
	echo '$(luacdir)'

# make installcheck (and so distcheck): both modules are where they were put.
installcheck-local: installcheck-jit-hooks
.PHONY: installcheck-jit-hooks
installcheck-jit-hooks:
	test -f '$(DESTDIR)$(luajithookdir)/jit.lua'
	test -f '$(DESTDIR)$(luajitjdir)/uevent.lua'
	test -z '$(luajitcore_LTLIBRARIES)' || test -f '$(DESTDIR)$(luajitcoredir)/jit_core.so'
	test -f '$(DESTDIR)$(pyhookdir)/uevent_jit.py'
	test -f '$(DESTDIR)$(pyhookdir)/uevent_jit_numba.py'
	test -f '$(DESTDIR)$(pyhookdir)/uevent-jit-numba.pth'
