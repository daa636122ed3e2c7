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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import uevent_build  # noqa: E402

uevent_build.write_records()
uevent_build.write_jit()

setup(
    name="uevent",
    version=uevent_build.version(),
    description="Put your own events into the Linux perf stream (libuevent binding)",
    packages=["uevent"],
    package_data={"uevent": ["py.typed", "_uevent.pyi"]},
    python_requires=">=3.7",
    install_requires=["cffi>=1.15"],
    cffi_modules=["uevent_build.py:ffibuilder"],
    zip_safe=False,
)
