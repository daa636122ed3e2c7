# bindings/python/local.mk - the Python binding (CFFI, out-of-line API mode), from the
# preprocessed header bindings/local.mk makes.


# The importable package in the build tree: PYTHONPATH=$(top_builddir)/bindings/python/lib
py_pkg = %reldir%/lib/uevent
py_sources = %reldir%/uevent/__init__.py %reldir%/uevent/py.typed %reldir%/uevent/_uevent.pyi \
	%reldir%/uevent/_helpers.py %reldir%/uevent/symbolize.py
# The record classes are generated from uevent.h's record structs (libuevent/gen-records.py).
$(py_pkg)/.built: $(UEVENT_CDEF) %reldir%/uevent_build.py $(py_sources) libuevent/libuevent.la \
		$(top_srcdir)/libuevent/gen-records.py
	$(AM_V_GEN)$(MKDIR_P) $(py_pkg) && \
	for f in $(py_sources); do \
		rm -f $(py_pkg)/`basename $$f` && cp $(srcdir)/$$f $(py_pkg)/ || exit 1; \
	done && \
	$(PYTHON) $(top_srcdir)/libuevent/gen-records.py --python \
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

if HAVE_PYTHON_CFFI
py_all = $(py_pkg)/.built
else
py_all =
endif
all-local: $(py_all)
clean-local: clean-local-python
clean-local-python:
	rm -rf %reldir%/lib
.PHONY: clean-local-python

TESTS += %reldir%/python.test %reldir%/reader.test %reldir%/spawn.test %reldir%/pip.test \
	%reldir%/symbolize.test
EXTRA_DIST += %reldir%/python.test %reldir%/reader.test %reldir%/spawn.test %reldir%/pip.test \
	%reldir%/symbolize.test %reldir%/tests/test_symbolize.py \
	%reldir%/uevent_build.py %reldir%/uevent_backend.py %reldir%/setup.py %reldir%/pyproject.toml %reldir%/README.md \
	$(py_sources) %reldir%/tests/tap.py %reldir%/tests/test_uevent.py \
	%reldir%/tests/test_reader.py %reldir%/tests/test_spawn.py
