# jit-hooks/local.mk - the runtime hooks (LuaJIT, Python) on the C JIT API that
# libuevent/jit.c is; their tests are t/jit-*, their benchmark bench/jit.
EXTRA_DIST += %reldir%/README.md %reldir%/luajit/uevent/jit.lua %reldir%/luajit/jit/uevent.lua \
	%reldir%/luajit/tests/hot.lua \
	%reldir%/luajit/tests/test_jit.lua %reldir%/python/uevent_jit.py \
	%reldir%/python/tests/tinyjit.py %reldir%/python/tests/test_uevent_jit.py

# make install: the LuaJIT module where LuaJIT's package.path looks (luadir, from
# ./configure --with-luadir, default LuaJIT's INSTALL_LMOD under $(prefix); the binding
# it needs goes there too, from bindings/lua/local.mk) and the Python hook
# (--with-pythondir, default $(libdir)/pythonX.Y/site-packages).
luajithookdir = $(luadir)/uevent
luajithook_DATA = %reldir%/luajit/uevent/jit.lua
# ... and jit/uevent.lua, which `luajit -juevent` loads as LuaJIT's -j modules (jit/v.lua).
luajitjdir = $(luadir)/jit
luajitj_DATA = %reldir%/luajit/jit/uevent.lua
pyhook_DATA = %reldir%/python/uevent_jit.py
# ... and beside the header, where `pip install` of the binding finds it for uevent.jit.
dist_pkgdata_DATA += %reldir%/python/uevent_jit.py

# In the build tree the binding's package has it as uevent.jit (pip install does the same).
bindings/python/lib/uevent/jit.py: %reldir%/python/uevent_jit.py bindings/python/lib/uevent/.built
	$(AM_V_GEN)cp $(srcdir)/%reldir%/python/uevent_jit.py $@
if HAVE_PYTHON_CFFI
py_jit = bindings/python/lib/uevent/jit.py
else
py_jit =
endif
all-local: $(py_jit)
CLEANFILES += bindings/python/lib/uevent/jit.py

# t/jit-install.test installs just these two into a DESTDIR and loads them from there.
.PHONY: jit-install-dirs
jit-install-dirs:
	@echo '$(luajithookdir)'; echo '$(pyhookdir)'; echo '$(luadir)'; echo '$(libdir)'

# make installcheck (and so distcheck): both modules are where they were put.
installcheck-local: installcheck-jit-hooks
.PHONY: installcheck-jit-hooks
installcheck-jit-hooks:
	test -f '$(DESTDIR)$(luajithookdir)/jit.lua'
	test -f '$(DESTDIR)$(luajitjdir)/uevent.lua'
	test -f '$(DESTDIR)$(pyhookdir)/uevent_jit.py'
