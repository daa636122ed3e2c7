# bindings/lua/local.mk - the LuaJIT binding: generated cdef and _records modules plus uevent.lua.
# From the build tree: LUA_PATH="$(srcdir)/bindings/lua/?.lua;$(builddir)/bindings/lua/?.lua;;"

# uevent/cdef.lua wraps the preprocessed header (and where the in-tree library is).
%reldir%/uevent/cdef.lua: $(UEVENT_CDEF)
	$(AM_V_GEN)$(MKDIR_P) $(@D) && { \
	echo '-- cdef.lua - generated from libuevent/uevent.h by make; do not edit.'; \
	echo 'return { build_library = "$(abs_top_builddir)/libuevent/.libs/libuevent.so",'; \
	echo 'declarations = [==['; cat $(UEVENT_CDEF); echo ']==] }'; \
	} > $@.tmp && mv $@.tmp $@

# make install: the binding beside the JIT hook that needs it, where LuaJIT looks
# (luadir, see jit-hooks/local.mk), with its own cdef.lua: the same declarations, no
# build-tree library; the library is libuevent on the loader's path, else the installed
# one in libdir.
luabinddir = $(luadir)
luabind_DATA = %reldir%/uevent.lua
luabindcdefdir = $(luadir)/uevent
nodist_luabindcdef_DATA = %reldir%/install/uevent/cdef.lua %reldir%/uevent/_records.lua
luabindcdef_DATA = %reldir%/uevent/symbolize.lua %reldir%/uevent/_notes.lua
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
EXTRA_DIST += %reldir%/lua-session-life.test %reldir%/tests/test_session_life.lua
EXTRA_DIST += %reldir%/uevent.lua %reldir%/gen-ctest.lua %reldir%/gen_records.py %reldir%/lua.test \
	%reldir%/lua-abi.test %reldir%/lua-reader.test %reldir%/tests/test_uevent.lua \
	%reldir%/tests/tap.lua \
	%reldir%/tests/test_reader.lua %reldir%/tests/test_spawn.lua %reldir%/lua-spawn.test \
	%reldir%/README.md %reldir%/lua-symbolize.test \
	%reldir%/uevent/symbolize.lua %reldir%/uevent/_notes.lua %reldir%/tests/test_symbolize.lua
