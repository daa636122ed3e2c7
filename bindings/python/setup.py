"""setup.py - `pip install --no-build-isolation bindings/python` (needs cffi, setuptools
and a C compiler; `wheel` is used if there, see uevent_backend.py; nothing is downloaded
with --no-index --no-deps).

The extension is generated from libuevent's uevent.h: the source tree's (with the library
in libuevent/.libs, built in place), or the installed one pkg-config names. Override with
UEVENT_INCLUDE_DIR / UEVENT_LIB_DIR (os.pathsep lists). The library found is copied into
the package (uevent/libuevent.so.N, the extension's RUNPATH is $ORIGIN): the installed
package, or a wheel on another machine, needs no make install and no LD_LIBRARY_PATH.
See uevent_build.py.
"""
import os
import sys

from setuptools import setup
from setuptools.command.build_py import build_py

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import uevent_build  # noqa: E402
from uevent_backend import NAME, REQUIRES, REQUIRES_PYTHON, SUMMARY  # noqa: E402

uevent_build.write_package()
PTH = uevent_build.PTH


class build_py_pth(build_py):
    """Also puts uevent-jit-numba.pth at the top of the install (site-packages), where
    site.py runs it at start: with UEVENT_JIT_NUMBA=1 it turns uevent.jit.numba on."""

    def run(self):
        super().run()
        self.copy_file(PTH, os.path.join(self.build_lib, os.path.basename(PTH)), preserve_mode=0)

    def get_outputs(self, include_bytecode=1):
        out = super().get_outputs(include_bytecode)
        return out + [os.path.join(self.build_lib, os.path.basename(PTH))]


setup(
    name=NAME,
    version=uevent_build.version(),
    description=SUMMARY,
    packages=["uevent", "uevent.jit"],
    cmdclass={"build_py": build_py_pth},
    package_data={"uevent": ["py.typed", "_uevent.pyi", "libuevent.so.*"]},
    python_requires=REQUIRES_PYTHON,
    install_requires=REQUIRES,
    cffi_modules=["uevent_build.py:ffibuilder"],
    zip_safe=False,
)
