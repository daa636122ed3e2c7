# bindings/lua/local.mk - the LuaJIT binding: generated cdef and _records modules plus uevent.lua.
# From the build tree: LUA_PATH="$(srcdir)/bindings/lua/?.lua;$(builddir)/bindings/lua/?.lua;;"

# uevent/cdef.lua wraps the preprocessed header (and where the in-tree library is).
%reldir%/uevent/cdef.lua: $(UEVENT_CDEF)
	$(AM_V_GEN)$(MKDIR_P) $(@D) && { \
	echo '-- cdef.lua - generated from libuevent/uevent.h by make; do not edit.'; \
	echo 'return { build_library = "$(abs_top_builddir)/libuevent/.libs/libuevent.so",'; \
	echo 'declarations = [==['; cat $(UEVENT_CDEF); echo ']==] }'; \
	} > $@.tmp && mv $@.tmp $@

# make install: the binding and its JIT hook uevent.jit where LuaJIT's package.path looks
# (luadir, from ./configure --with-luadir, default LuaJIT's INSTALL_LMOD under $(prefix)),
# with its own cdef.lua: the same declarations, no build-tree library; the library is
# libuevent on the loader's path, else the installed one in libdir.
luabinddir = $(luadir)
luabind_DATA = %reldir%/uevent.lua
luabindcdefdir = $(luadir)/uevent
nodist_luabindcdef_DATA = %reldir%/install/uevent/cdef.lua %reldir%/uevent/_records.lua
luabindcdef_DATA = %reldir%/uevent/symbolize.lua %reldir%/uevent/_notes.lua %reldir%/uevent/jit.lua
# ... and jit/uevent.lua, which `luajit -juevent` loads as LuaJIT's -j modules (jit/v.lua).
luabindjitdir = $(luadir)/jit
luabindjit_DATA = %reldir%/jit/uevent.lua
# ... and the hook's C part, the trace handler (uevent.jit_core), where LuaJIT's
# package.cpath looks (luacdir). It links nothing but LuaJIT's API, which luajit itself
# exports: the library's entry points come from the FFI binding at start(). In the build
# tree it is copied beside the .la as uevent/jit_core.so, for LUA_CPATH=bindings/lua/?.so.
if HAVE_LUAJIT_DEV
luabindcoredir = $(luacdir)/uevent
luabindcore_LTLIBRARIES = %reldir%/uevent/jit_core.la
%canon_reldir%_uevent_jit_core_la_SOURCES = %reldir%/uevent/jit_core.c
%canon_reldir%_uevent_jit_core_la_CFLAGS = $(AM_CFLAGS) $(LUAJIT_DEV_CFLAGS) -fvisibility=hidden
%canon_reldir%_uevent_jit_core_la_LDFLAGS = -module -avoid-version -shared
EXTRA_%canon_reldir%_uevent_jit_core_la_DEPENDENCIES = install-dirs.stamp
%reldir%/uevent/jit_core.so: %reldir%/uevent/jit_core.la
	$(AM_V_GEN)cp -f %reldir%/uevent/.libs/jit_core.so $@.tmp && mv -f $@.tmp $@
lua_core_so = %reldir%/uevent/jit_core.so
CLEANFILES += %reldir%/uevent/jit_core.so
else
lua_core_so =
endif
all-local: $(lua_core_so)
# t/jit-install.test asks where the hook goes.
.PHONY: jit-install-dirs
jit-install-dirs:
	@echo '$(luadir)'; echo '$(libdir)'; echo '$(luacdir)'
%reldir%/install/uevent/cdef.lua: $(UEVENT_CDEF) $(top_srcdir)/libuevent/uevent.h install-dirs.stamp
	$(AM_V_GEN)$(MKDIR_P) $(@D) && { \
	echo '-- cdef.lua - generated from libuevent/uevent.h by make; do not edit.'; \
	echo 'return { installed_library = "$(libdir)/libuevent.so",'; \
	echo 'declarations = [==['; cat $(UEVENT_CDEF); echo ']==],'; \
	echo 'header = [==['; cat $(top_srcdir)/libuevent/uevent.h; echo ']==] }'; \
	} > $@.tmp && mv $@.tmp $@
CLEANFILES += %reldir%/install/uevent/cdef.lua
installcheck-local: installcheck-lua-binding
.PHONY: installcheck-lua-binding
installcheck-lua-binding:
	test -f '$(DESTDIR)$(luabinddir)/uevent.lua'
	test -f '$(DESTDIR)$(luabindcdefdir)/cdef.lua'
	test -f '$(DESTDIR)$(luabindcdefdir)/_records.lua'
	test -f '$(DESTDIR)$(luabindcdefdir)/_notes.lua'
	test -f '$(DESTDIR)$(luabindcdefdir)/jit.lua'
	test -f '$(DESTDIR)$(luabindjitdir)/uevent.lua'
	test -z '$(luabindcore_LTLIBRARIES)' || test -f '$(DESTDIR)$(luabindcoredir)/jit_core.so'
# uevent/_records.lua: the record converters and payload decoders, generated from the
# record model (libuevent/records_model.py) by gen_records.py; they call uevent/_notes.lua.
%reldir%/uevent/_records.lua: $(top_srcdir)/libuevent/uevent.h $(RECORDS_MODEL) \
		%reldir%/gen_records.py
	$(AM_V_GEN)$(MKDIR_P) $(@D) && $(PYTHON) $(srcdir)/%reldir%/gen_records.py \
		$(top_srcdir)/libuevent/uevent.h > $@.tmp && mv $@.tmp $@

# The C program checking LuaJIT's view of every struct, field offset and constant.
%reldir%/ctest.c: $(UEVENT_CDEF) %reldir%/gen-ctest.lua
	$(AM_V_GEN)$(LUAJIT) $(srcdir)/%reldir%/gen-ctest.lua $(UEVENT_CDEF) > $@.tmp && mv $@.tmp $@

if HAVE_LUAJIT
lua_all = %reldir%/uevent/cdef.lua %reldir%/uevent/_records.lua
check_PROGRAMS += %reldir%/ctest
nodist_bindings_lua_ctest_SOURCES = %reldir%/ctest.c
else
lua_all =
endif
all-local: $(lua_all)
CLEANFILES += %reldir%/uevent/cdef.lua %reldir%/uevent/_records.lua %reldir%/ctest.c

TESTS += %reldir%/lua.test %reldir%/lua-reader.test %reldir%/lua-spawn.test %reldir%/lua-abi.test \
	%reldir%/lua-symbolize.test
TESTS += %reldir%/lua-session-life.test
host_TESTS += %reldir%/lua-reader.test %reldir%/lua-spawn.test %reldir%/lua-session-life.test
EXTRA_DIST += %reldir%/lua-session-life.test %reldir%/tests/test_session_life.lua
EXTRA_DIST += %reldir%/uevent.lua %reldir%/gen-ctest.lua %reldir%/gen_records.py %reldir%/lua.test \
	%reldir%/lua-abi.test %reldir%/lua-reader.test %reldir%/tests/test_uevent.lua \
	%reldir%/tests/tap.lua \
	%reldir%/tests/test_reader.lua %reldir%/tests/test_spawn.lua %reldir%/lua-spawn.test \
	%reldir%/README.md %reldir%/lua-symbolize.test \
	%reldir%/uevent/symbolize.lua %reldir%/uevent/_notes.lua %reldir%/tests/test_symbolize.lua \
	%reldir%/tests/hot.lua %reldir%/tests/test_jit.lua %reldir%/tests/jit_drop.lua \
	%reldir%/uevent/jit.lua \
	%reldir%/jit/uevent.lua %reldir%/uevent/jit_core.c
