# bindings/python/local.mk - the Python binding (CFFI, out-of-line API mode), from the
# preprocessed header bindings/local.mk makes.


# The importable package in the build tree: PYTHONPATH=$(top_builddir)/bindings/python/lib
py_pkg = %reldir%/lib/uevent
py_sources = %reldir%/uevent/__init__.py %reldir%/uevent/py.typed %reldir%/uevent/_uevent.pyi \
	%reldir%/uevent/symbolize.py %reldir%/uevent/_arrays.py %reldir%/uevent/_recordbase.py \
	%reldir%/uevent/jit/__init__.py %reldir%/uevent/jit/numba.py
# The record classes are generated from the record model of uevent.h (gen_records.py).
$(py_pkg)/.built: $(UEVENT_CDEF) %reldir%/uevent_build.py $(py_sources) libuevent/libuevent.la \
		$(RECORDS_MODEL) %reldir%/gen_records.py
	$(AM_V_GEN)$(MKDIR_P) $(py_pkg)/jit && \
	for f in $(py_sources); do \
		d=$(py_pkg)/$${f#%reldir%/uevent/} && rm -f $$d && cp $(srcdir)/$$f $$d || exit 1; \
	done && \
	$(PYTHON) $(srcdir)/%reldir%/gen_records.py \
		$(top_srcdir)/libuevent/uevent.h > $(py_pkg)/_records.py && \
	$(PYTHON) $(srcdir)/%reldir%/uevent_build.py --cdef $(UEVENT_CDEF) \
		--emit-c $(py_pkg)/_uevent.c \
		--lib $(top_builddir)/libuevent/.libs/libuevent.so >/dev/null && \
	inc=`$(PYTHON) -c 'import sysconfig; print(sysconfig.get_paths()["include"])'` && \
	ext=`$(PYTHON) -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))'` && \
	rm -f $(py_pkg)/_uevent.*.so && \
	$(CC) -shared -fPIC $(CFLAGS) -I"$$inc" -I$(top_srcdir)/libuevent \
		-o $(py_pkg)/_uevent$$ext $(py_pkg)/_uevent.c \
		-L$(top_builddir)/libuevent/.libs -luevent \
		-Wl,-rpath,$(abs_top_builddir)/libuevent/.libs && \
	echo '$(PYTHON)' > $@

# make install: the package, with uevent.jit and uevent.jit.numba, into pyexecdir
# (AM_PATH_PYTHON's; the package holds a C extension), and beside it uevent-jit-numba.pth,
# which turns uevent.jit.numba on at start for UEVENT_JIT_NUMBA=1 (where pyexecdir is a
# site directory of the interpreter). The installed extension is the
# same C compiled again with its RUNPATH at $(libdir), never the build tree's.
py_inst = %reldir%/install
$(py_inst)/.built: $(py_pkg)/.built install-dirs.stamp
	$(AM_V_GEN)rm -rf $(py_inst) && $(MKDIR_P) $(py_inst) && \
	inc=`$(PYTHON) -c 'import sysconfig; print(sysconfig.get_paths()["include"])'` && \
	ext=`$(PYTHON) -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))'` && \
	$(CC) -shared -fPIC $(CFLAGS) -I"$$inc" -I$(top_srcdir)/libuevent \
		-o $(py_inst)/_uevent$$ext $(py_pkg)/_uevent.c \
		-L$(top_builddir)/libuevent/.libs -luevent -Wl,-rpath,$(libdir) && \
	touch $@
py_inst_files = __init__.py py.typed _uevent.pyi _records.py _recordbase.py symbolize.py _arrays.py \
	jit/__init__.py jit/numba.py

if HAVE_PYTHON_CFFI
py_all = $(py_pkg)/.built $(py_inst)/.built
py_install = install-python-binding
py_uninstall = uninstall-python-binding
py_installcheck = installcheck-python-binding
else
py_all =
endif
install-exec-local: $(py_install)
uninstall-local: $(py_uninstall)
installcheck-local: $(py_installcheck)
.PHONY: install-python-binding uninstall-python-binding installcheck-python-binding \
	python-install-dirs
install-python-binding: $(py_inst)/.built
	$(MKDIR_P) '$(DESTDIR)$(pyexecdir)/uevent/jit'
	$(INSTALL_DATA) $(srcdir)/%reldir%/uevent-jit-numba.pth '$(DESTDIR)$(pyexecdir)/'
	for f in $(py_inst_files); do \
		$(INSTALL_DATA) $(py_pkg)/$$f '$(DESTDIR)$(pyexecdir)/uevent/'"$$f" || exit 1; \
	done
	$(INSTALL) -m 755 $(py_inst)/_uevent*.so '$(DESTDIR)$(pyexecdir)/uevent/'
uninstall-python-binding:
	for f in $(py_inst_files); do rm -f '$(DESTDIR)$(pyexecdir)/uevent/'"$$f"; done
	rm -f '$(DESTDIR)$(pyexecdir)/uevent/'_uevent*.so '$(DESTDIR)$(pyexecdir)/uevent-jit-numba.pth'
	-rmdir '$(DESTDIR)$(pyexecdir)/uevent/jit' '$(DESTDIR)$(pyexecdir)/uevent'
installcheck-python-binding:
	test -f '$(DESTDIR)$(pyexecdir)/uevent/__init__.py'
	test -f '$(DESTDIR)$(pyexecdir)/uevent/jit/numba.py'
	test -f '$(DESTDIR)$(pyexecdir)/uevent-jit-numba.pth'
	ls '$(DESTDIR)$(pyexecdir)/uevent/'_uevent*.so
# bindings/python/install.test asks where the package goes.
python-install-dirs:
	@echo '$(pyexecdir)'; echo '$(libdir)'
CLEANFILES += $(py_inst)/.built
clean-local: clean-local-python-install
clean-local-python-install:
	rm -rf %reldir%/install
.PHONY: clean-local-python-install
all-local: $(py_all)
clean-local: clean-local-python
clean-local-python:
	rm -rf %reldir%/lib
.PHONY: clean-local-python

TESTS += %reldir%/python.test %reldir%/reader.test %reldir%/spawn.test %reldir%/pip.test \
	%reldir%/symbolize.test %reldir%/install.test %reldir%/arrays.test
EXTRA_DIST += %reldir%/python.test %reldir%/reader.test %reldir%/spawn.test %reldir%/pip.test \
	%reldir%/symbolize.test %reldir%/install.test %reldir%/tests/test_symbolize.py \
	%reldir%/uevent_build.py %reldir%/gen_records.py %reldir%/uevent_backend.py %reldir%/setup.py %reldir%/pyproject.toml %reldir%/README.md \
	%reldir%/uevent-jit-numba.pth %reldir%/tests/tinyjit.py %reldir%/tests/test_uevent_jit.py \
	%reldir%/tests/numba_app.py %reldir%/tests/test_numba.py \
	$(py_sources) %reldir%/tests/tap.py %reldir%/tests/test_uevent.py \
	%reldir%/tests/test_reader.py %reldir%/tests/test_spawn.py \
	%reldir%/arrays.test %reldir%/tests/test_arrays.py
TESTS += %reldir%/session-life.test
host_TESTS += %reldir%/reader.test %reldir%/spawn.test %reldir%/session-life.test
EXTRA_DIST += %reldir%/session-life.test %reldir%/tests/test_session_life.py
