"""setup.py - `pip install --no-build-isolation bindings/python` (needs cffi and a C compiler).

The extension is generated from libuevent's uevent.h: the source tree's, or the installed
one pkg-config names (override with UEVENT_INCLUDE_DIR / UEVENT_LIB_DIR).
"""
from setuptools import setup

setup(
    name="uevent",
    version="0.1.0",
    description="Put your own events into the Linux perf stream (libuevent binding)",
    packages=["uevent"],
    package_data={"uevent": ["py.typed"]},
    python_requires=">=3.7",
    install_requires=["cffi>=1.15"],
    setup_requires=["cffi>=1.15"],
    cffi_modules=["uevent_build.py:ffibuilder"],
    zip_safe=False,
)
