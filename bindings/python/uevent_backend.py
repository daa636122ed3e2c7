"""uevent_backend.py - the PEP 517 build backend of bindings/python: setuptools', and a
wheel of our own where setuptools cannot make one. Nothing is downloaded when the
interpreter has setuptools and cffi.

pyproject.toml requires nothing, so pip's build isolation (a plain `pip install`) has
nothing to fetch; the isolated build then takes setuptools and cffi from the
interpreter's own site-packages, and asks pip for them only where they are missing.

setuptools before 70.1 makes wheels (and wheel metadata) only through the `wheel`
package's bdist_wheel, which not every interpreter has (pyenv's do not). Then this
backend runs `setup.py build` and zips the result into a wheel itself: the format is a
zip with a .dist-info of METADATA, WHEEL and RECORD (PEP 427, PEP 376).
"""
import base64
import csv
import hashlib
import importlib
import importlib.util
import io
import os
import shutil
import site
import subprocess
import sys
import sysconfig
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
NAME = "uevent"
SUMMARY = "Put your own events into the Linux perf stream (libuevent binding)"
REQUIRES_PYTHON = ">=3.7"
REQUIRES = ["cffi>=1.15"]
BUILD_REQUIRES = {"setuptools": "setuptools", "cffi": "cffi>=1.15"}


def _missing():
    return [m for m in BUILD_REQUIRES if importlib.util.find_spec(m) is None]


def _use_interpreter_packages():
    """Under pip's build isolation, the interpreter's own site-packages, after the
    isolated environment's (which holds whatever pip did install)."""
    if not _missing():
        return
    try:
        dirs = site.getsitepackages()
    except AttributeError:  # an old virtualenv's site.py
        dirs = [sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]
    for d in dirs:
        if os.path.isdir(d) and d not in sys.path:
            sys.path.append(d)
    importlib.invalidate_caches()


_use_interpreter_packages()


def _setuptools():
    from setuptools import build_meta
    return build_meta


def _need_cffi():
    """cffi is needed at run time too, so pip fetching it for the build alone would not
    do: one line saying where to get it rather than pip's failed download."""
    if "cffi" in _missing():
        sys.exit("uevent: this Python has no cffi: make the venv with --system-site-packages "
                 "(Debian: apt install python3-cffi) or pip install cffi first")


def get_requires_for_build_sdist(config_settings=None):
    _need_cffi()
    return [BUILD_REQUIRES[m] for m in _missing()]


def build_sdist(sdist_directory, config_settings=None):
    _need_cffi()
    return _setuptools().build_sdist(sdist_directory, config_settings)


def _have_bdist_wheel():
    for m in ("setuptools.command.bdist_wheel", "wheel.bdist_wheel"):   # setuptools >= 70.1
        try:
            importlib.import_module(m)
            return True
        except ImportError:
            pass
    return False


# not setuptools' answer, `wheel`: without it we build the wheel ourselves
get_requires_for_build_wheel = get_requires_for_build_sdist


if not _missing() and _have_bdist_wheel():
    def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
        return _setuptools().prepare_metadata_for_build_wheel(metadata_directory,
                                                              config_settings)
# else: no such hook, and pip takes the metadata from the wheel build_wheel makes


def _tag():
    """The interpreter's most specific wheel tag, as `wheel` would name it."""
    impl = "cp" if sys.implementation.name == "cpython" else sys.implementation.name[:2]
    ver = "%d%d" % sys.version_info[:2]
    abi = (sysconfig.get_config_var("SOABI") or "").split("-")
    abi = impl + ver if len(abi) > 1 and abi[0] == "cpython" else "none"
    if abi != "none" and sys.version_info < (3, 8) and sysconfig.get_config_var("Py_DEBUG"):
        abi += "d"
    plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return "%s%s-%s-%s" % (impl, ver, abi, plat)


def _record_line(arc, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return [arc, "sha256=" + digest.decode(), str(len(data))]


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    _need_cffi()
    if _have_bdist_wheel():
        return _setuptools().build_wheel(wheel_directory, config_settings, metadata_directory)
    sys.path.insert(0, HERE)
    import uevent_build

    version = uevent_build.version()
    tag = _tag()
    distinfo = "%s-%s.dist-info" % (NAME, version)
    wheel_name = "%s-%s-%s.whl" % (NAME, version, tag)
    tmp = tempfile.mkdtemp(prefix="uevent-wheel.")
    try:
        lib = os.path.join(tmp, "lib")
        # setup.py with the packages this process found (pip's isolation hides them
        # from a plain child): importing this module finds them again
        boot = ("import sys, runpy; sys.path.insert(0, '.'); import uevent_backend; "
                "sys.argv = sys.argv[1:]; runpy.run_path('setup.py', run_name='__main__')")
        subprocess.run([sys.executable, "-c", boot, "setup.py", "build", "--build-lib", lib,
                        "--build-temp", os.path.join(tmp, "temp")], cwd=HERE, check=True,
                       stdout=sys.stderr)
        meta = "".join(["Metadata-Version: 2.1\n", "Name: %s\n" % NAME,
                        "Version: %s\n" % version, "Summary: %s\n" % SUMMARY,
                        "Requires-Python: %s\n" % REQUIRES_PYTHON] +
                       ["Requires-Dist: %s\n" % r for r in REQUIRES])
        wheel = ("Wheel-Version: 1.0\nGenerator: uevent_backend\nRoot-Is-Purelib: false\n"
                 "Tag: %s\n" % tag)
        files = []
        for root, dirs, names in os.walk(lib):
            dirs.sort()
            for n in sorted(names):
                path = os.path.join(root, n)
                files.append((os.path.relpath(path, lib).replace(os.sep, "/"), path))
        os.makedirs(wheel_directory, exist_ok=True)
        out = os.path.join(wheel_directory, wheel_name)
        record = []
        with zipfile.ZipFile(out + ".tmp", "w", zipfile.ZIP_DEFLATED) as z:
            for arc, path in files:
                with open(path, "rb") as f:
                    data = f.read()
                info = zipfile.ZipInfo(arc, date_time=(1980, 1, 1, 0, 0, 0))
                info.external_attr = (os.stat(path).st_mode & 0o777 | 0o100000) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                z.writestr(info, data)
                record.append(_record_line(arc, data))
            for n, text in (("METADATA", meta), ("WHEEL", wheel)):
                arc = "%s/%s" % (distinfo, n)
                z.writestr(arc, text)
                record.append(_record_line(arc, text.encode()))
            buf = io.StringIO()
            w = csv.writer(buf, lineterminator="\n")
            w.writerows(record + [["%s/RECORD" % distinfo, "", ""]])
            z.writestr("%s/RECORD" % distinfo, buf.getvalue())
        os.replace(out + ".tmp", out)
        return wheel_name
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
