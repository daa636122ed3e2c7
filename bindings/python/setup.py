"""setup.py - `pip install --no-build-isolation bindings/python` (needs cffi, setuptools,
wheel and a C compiler; nothing is downloaded with --no-index --no-deps).

The extension is generated from libuevent's uevent.h: the source tree's (with the library
in libuevent/.libs, built in place), or the installed one pkg-config names. Override with
UEVENT_INCLUDE_DIR / UEVENT_LIB_DIR (os.pathsep lists); an in-tree or UEVENT_LIB_DIR
library is found at run time through the extension's rpath. See uevent_build.py.
"""
import os
import sys

from setuptools import setup
from setuptools.command.build_py import build_py

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import uevent_build  # noqa: E402

uevent_build.write_records()
PTH = uevent_build.write_jit()


class build_py_pth(build_py):
    """Also puts uevent-jit-numba.pth at the top of the install (site-packages), where
    site.py runs it at start: with UEVENT_JIT_NUMBA=1 it turns uevent.jit.numba on."""

    def run(self):
        super().run()
        if PTH:
            self.copy_file(PTH, os.path.join(self.build_lib, os.path.basename(PTH)),
                           preserve_mode=0)

    def get_outputs(self, include_bytecode=1):
        out = super().get_outputs(include_bytecode)
        return out + ([os.path.join(self.build_lib, os.path.basename(PTH))] if PTH else [])


setup(
    name="uevent",
    version=uevent_build.version(),
    description="Put your own events into the Linux perf stream (libuevent binding)",
    packages=["uevent", "uevent.jit"],
    cmdclass={"build_py": build_py_pth},
    package_data={"uevent": ["py.typed", "_uevent.pyi"]},
    python_requires=">=3.7",
    install_requires=["cffi>=1.15"],
    cffi_modules=["uevent_build.py:ffibuilder"],
    zip_safe=False,
)
