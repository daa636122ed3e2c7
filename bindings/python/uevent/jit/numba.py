"""uevent.jit.numba - announce every function Numba compiles, so perf names it.

    import uevent.jit.numba          # on; or uevent.jit.numba.enable(dir=..., ...)
    import numba                     # (either order)

or, for a program left unchanged, ``python3 -m uevent.jit.numba app.py [ARG...]``, or
``UEVENT_JIT_NUMBA=1 python3 app.py`` with the ``uevent-jit-numba.pth`` file in a site
directory of that interpreter (see docs/jit.md). Then ``perf record -k mono ...; perf inject --jit ...; perf
report``: samples in jitted code read ``__main__.hot(int64, float64)``.

How. Numba compiles through LLVM's MCJIT, which hands every object it loads to the GDB
JIT interface (``__jit_debug_descriptor``, as gdb reads it): an ELF copy whose section
headers carry the addresses the code was loaded at. Each function symbol there is one
announcement: address, size (the ELF symbol's), name. Names come from Numba's own event
API (``numba:compile``: the dispatcher, its ``module.qualname``, the signature, the
source file and first line, given as a DEBUG_INFO line entry), so the native function,
its ``[cpython wrapper]`` and ``[cfunc wrapper]`` and every copy of it linked into a
caller are named alike; code no compile event named (a disk-cache load, Numba's
runtime helpers) is named by demangling. Announcements are made when a compile ends
and when the compiler lock is released: before the new code is first called. Objects
LLVM drops (a dispatcher freed) are unloaded (a uevent; jitdump has no unload).

Code compiled before the hook went on is announced when it goes on, named by demangling
(without a source line).
"""
from __future__ import annotations

import ctypes
import errno
import os
import struct
import sys
import threading
from typing import Dict, List, Optional, Tuple

from . import Session as _Session, _binding

__all__ = ["enable", "disable", "enabled", "session", "ENV"]

ENV = "UEVENT_JIT_NUMBA"

_lock = threading.RLock()
_state = None          # the _Hook while enabled
_state_atexit: list = []


def demangle(sym: str) -> str:
    """A readable name for a symbol in Numba's code: 'mod.qualname(int64, float64)', with
    ' [cpython wrapper]' / ' [cfunc wrapper]' for the wrappers; other symbols as they are."""
    ffi, lib = _binding().ffi, _binding().lib
    raw = sym.encode("utf-8", "surrogateescape")     # NUMBA: numba/core/itanium_mangler.py
    buf = ffi.new("char[]", lib.uevent_demangle(raw, lib.UEVENT_DEMANGLE_NUMBA, ffi.NULL, 0) + 1)
    lib.uevent_demangle(raw, lib.UEVENT_DEMANGLE_NUMBA, buf, len(buf))
    return ffi.string(buf).decode("utf-8", "replace")


# ---------------------------------------------------------------------------------------
# The GDB JIT interface: where MCJIT puts every object it loads

class _Descriptor(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("action_flag", ctypes.c_uint32),
                ("relevant_entry", ctypes.c_void_p), ("first_entry", ctypes.c_void_p)]


def _elf_symbols(buf: bytes, flags: int = 0):
    """(name, address, size) of each function of an ELF object in memory, at the address
    its section was loaded at; with UEVENT_ELF_FILE, of a file read whole (objects too,
    st_value): uevent_elf_symbol_next(). Truncated or foreign data yields nothing."""
    u = _binding()
    obj, pos, s = u.ffi.from_buffer(buf), u.ffi.new("uint64_t *"), u._out("struct uevent_elf_symbol *")
    while u.lib.uevent_elf_symbol_next(obj, len(buf), flags, pos, s) == 1:
        yield u.ffi.string(s.name), s.addr, s.size


def _elf_symbol(path: str, name: bytes) -> Optional[int]:
    """st_value of a symbol in an ELF file's .symtab (for an LLVM linked statically into
    libllvmlite.so, whose dynamic table may not export the descriptor)."""
    try:
        with open(path, "rb") as f:
            buf = f.read()
    except OSError:
        return None
    found = (v for n, v, _ in _elf_symbols(buf, _binding().lib.UEVENT_ELF_FILE) if n == name)
    return next(found, None)


def _load_base(path: str) -> Optional[int]:
    real = os.path.realpath(path)
    with open("/proc/self/maps") as f:
        for line in f:
            fields = line.split()
            if len(fields) >= 6 and os.path.realpath(fields[5]) == real and int(fields[2], 16) == 0:
                return int(fields[0].split("-")[0], 16)
    return None


def _find_descriptor() -> _Descriptor:
    """LLVM's __jit_debug_descriptor in this process (llvmlite's LLVM)."""
    from llvmlite.binding import ffi as llffi
    libpath = llffi.lib._name
    if not os.environ.get("UEVENT_JIT_NUMBA_SYMTAB"):   # tests force the fallback
        try:
            return _Descriptor.in_dll(ctypes.CDLL(libpath), "__jit_debug_descriptor")
        except (OSError, ValueError):
            pass
    # Not exported: look in the .symtab of llvmlite's library and the LLVM it maps.
    cands = [libpath]
    with open("/proc/self/maps") as f:
        cands += sorted({ln.split()[5] for ln in f if len(ln.split()) >= 6 and "LLVM" in ln.split()[5]})
    for p in cands:
        v = _elf_symbol(p, b"__jit_debug_descriptor")
        base = _load_base(p) if v else None
        if v and base is not None:
            return _Descriptor.from_address(base + v)
    raise OSError(2, "uevent.jit.numba: LLVM's __jit_debug_descriptor not found in %s" % libpath)


# ---------------------------------------------------------------------------------------

class _Hook:
    def __init__(self, jit):
        from numba.core import event as ev
        self.ev, self.jit = ev, jit
        self.desc = _find_descriptor()
        self.mem = os.open("/proc/self/mem", os.O_RDONLY | os.O_CLOEXEC)
        self.names: Dict[str, Tuple[str, Optional[str], int]] = {}   # symbol -> (name, file, line)
        self.seen: Dict[Tuple[int, int, int], List[int]] = {}       # entry -> announced addrs
        self.head = None
        self.loads = 0
        self.unloads = 0
        self.errors = 0
        self.pid = os.getpid()
        self.draining = threading.local()
        hook = self

        class Compile(ev.Listener):
            def on_start(self, event):
                pass

            def on_end(self, event):
                hook.on_compile(event)

        class Lock(ev.Listener):
            def on_start(self, event):
                pass

            def on_end(self, event):
                from numba.core.compiler_lock import global_compiler_lock
                if not global_compiler_lock.is_locked():
                    hook.drain()

        self.listeners = [("numba:compile", Compile()), ("numba:compiler_lock", Lock())]
        for kind, li in self.listeners:
            ev.register(kind, li)

    def close(self):
        for kind, li in self.listeners:
            try:
                self.ev.unregister(kind, li)
            except Exception:
                pass
        os.close(self.mem)

    def read(self, addr: int, size: int) -> bytes:
        try:
            b = os.pread(self.mem, size, addr)
        except OSError:
            return b""
        return b

    def _walk(self):
        """(entry, symfile, size) of each object in the list, oldest first; read through
        /proc/self/mem, so an entry freed under us reads as garbage, never a crash."""
        out = []
        p = self.desc.first_entry
        n = 0
        while p and n < 1 << 20:
            raw = self.read(p, 32)
            if len(raw) != 32:
                break
            nxt, _prev, addr, size = struct.unpack("<QQQQ", raw)
            out.append((p, addr, size))
            p, n = nxt, n + 1
        out.reverse()
        return out

    def on_compile(self, event):
        """Names for the code a compile made, then announce it (nested compiles end
        before their caller's; the caller's code is announced at its own end)."""
        try:
            data = event.data
            disp = data["dispatcher"]
            cres = disp.overloads.get(tuple(data["args"]))
            if cres is None:
                return
            fd = cres.fndesc
            sig = "%s.%s(%s)" % (fd.modname, fd.qualname, ", ".join(str(a) for a in cres.signature.args))
            if type(disp).__name__ == "LiftedLoop":       # object mode's loop, compiled alone
                sig += " [lifted loop]"
            code = getattr(getattr(disp, "py_func", None), "__code__", None)
            fname = code.co_filename if code else None
            line = code.co_firstlineno if code else 0
            func_ir = getattr(disp, "func_ir", None)         # a lifted loop: its own line
            if func_ir is not None and getattr(func_ir, "loc", None) is not None:
                line = func_ir.loc.line or line
            with _lock:
                self.names[fd.llvm_func_name] = (sig, fname, line)
                self.names[fd.llvm_cpython_wrapper_name] = (sig + " [cpython wrapper]", fname, line)
                self.names[fd.llvm_cfunc_wrapper_name] = (sig + " [cfunc wrapper]", fname, line)
        except Exception as e:       # never break the program's compile: say so
            self.error(e)
        self.drain()

    def error(self, e: BaseException) -> None:
        """A failure inside a compile event (a full disk, a closed session) is counted in
        stats() and said once on stderr; raising it would fail the program's compile."""
        self.errors += 1
        if self.errors == 1:
            print("uevent.jit.numba: %s: %s (announcing goes on; stats() counts errors)"
                  % (type(e).__name__, e), file=sys.stderr)

    def drain(self):
        """Announce objects LLVM loaded since the last call, unload those it dropped."""
        if getattr(self.draining, "on", False):
            return
        self.draining.on = True
        try:
            with _lock:
                if _state is not self:
                    return
                import gc
                was = gc.isenabled()
                gc.disable()       # no library finalizer may free an entry while we read
                try:
                    head = (self.desc.first_entry, self.desc.relevant_entry, self.desc.action_flag)
                    if head == self.head and os.getpid() == self.pid:
                        return
                    entries = self._walk()
                    # (a size past 64 MiB is an entry read while LLVM freed it)
                    new = [(k, self.read(k[1], k[2]) if k[2] <= 1 << 26 else b"")
                           for k in entries if k not in self.seen]
                finally:
                    if was:
                        gc.enable()
                self.head, self.pid = head, os.getpid()
                live = set(entries)
                for k in [k for k in self.seen if k not in live]:
                    for addr in self.seen.pop(k):
                        try:
                            self.jit.code_unload(addr)
                            self.unloads += 1
                        except OSError as e:
                            if e.errno != errno.ENOENT:   # replaced by a later load
                                self.error(e)
                for k, buf in new:
                    try:
                        self.seen[k] = self.announce(buf)
                    except OSError as e:
                        self.seen[k] = []
                        self.error(e)
        finally:
            self.draining.on = False

    def announce(self, buf: bytes) -> List[int]:
        done = []
        for raw, addr, size in _elf_symbols(buf):
            sym = raw.decode("utf-8", "replace")
            name, fname, line = self.names.get(sym) or (demangle(sym), None, 0)
            if fname and line > 0:
                # perf inject ends the line table's sequence at the last entry: a second
                # entry at the end makes the line cover the whole function
                self.jit.debug_info(addr, [(addr, line, fname), (addr + size, line, fname)])
            self.jit.code_load(name, addr, size)
            self.loads += 1
            done.append(addr)
        return done


def enable(**session_kw) -> _Session:
    """Turn the hook on (again a no-op while on): opens a uevent.jit Session with these
    keyword arguments (dir, perf_map, jitdump, uevent, perf_map_path) and announces every
    function Numba compiles from now on. Imports numba. Returns the Session; raises
    OSError (the session or LLVM's descriptor) or ImportError (no numba)."""
    global _state
    with _lock:
        if _state is not None:
            return _state.jit
        # This import is the one the finder waits for: it must not turn the hook on
        # with the default options under us.
        sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _AfterNumba)]
        import numba.core.event  # noqa: F401  (ImportError: no numba here)
        jit = _Session(**session_kw)
        try:
            _state = _Hook(jit)
        except BaseException:
            jit.close()
            raise
        _state.drain()          # what Numba compiled before now
        if not _state_atexit:
            import atexit
            atexit.register(disable)     # JIT_CODE_CLOSE ends the dump
            _state_atexit.append(True)
        return jit


def disable() -> None:
    """Turn the hook off and close its session (the files stay for perf inject)."""
    global _state
    with _lock:
        st, _state = _state, None
    if st is not None:
        st.close()
        st.jit.close()


def enabled() -> bool:
    return _state is not None


def session() -> Optional[_Session]:
    """The hook's uevent.jit Session while enabled, else None."""
    st = _state
    return st.jit if st is not None else None


def stats() -> Dict[str, int]:
    """Functions announced and unloaded, and failures, so far (while enabled)."""
    st = _state
    if st is None:
        return {"loads": 0, "unloads": 0, "errors": 0}
    return {"loads": st.loads, "unloads": st.unloads, "errors": st.errors}


# ---------------------------------------------------------------------------------------
# Importing this module turns the hook on: now if numba is already imported, else the
# moment it is (so `import uevent.jit.numba` before `import numba` costs no numba import
# in a program that never uses it).

class _AfterNumba:
    """A meta-path finder that runs enable() right after numba's own import."""

    def __init__(self, on_error):
        self.on_error = on_error
        self.busy = False

    def find_spec(self, name, path=None, target=None):
        if name != "numba" or self.busy:
            return None
        self.busy = True
        try:
            import importlib.util
            spec = importlib.util.find_spec(name)
        finally:
            self.busy = False
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = _Loader(spec.loader, self)
        return spec


class _Loader:
    def __init__(self, inner, finder):
        self.inner, self.finder = inner, finder

    def create_module(self, spec):
        return self.inner.create_module(spec)

    def exec_module(self, module):
        self.inner.exec_module(module)
        module.__loader__ = self.inner        # numba sees its own loader from now on
        if getattr(module, "__spec__", None) is not None:
            module.__spec__.loader = self.inner
        try:
            sys.meta_path.remove(self.finder)
        except ValueError:
            pass
        try:
            enable()
        except Exception as e:
            self.finder.on_error(e)

    def __getattr__(self, name):
        return getattr(self.inner, name)


def _raise(e):
    raise e


def _warn(e):
    print("uevent.jit.numba: not enabled (%s=%s): %s: %s"
          % (ENV, os.environ.get(ENV, ""), type(e).__name__, e), file=sys.stderr)


def _activate(on_error) -> None:
    if "numba" in sys.modules:
        try:
            enable()
        except Exception as e:
            on_error(e)
    elif not any(isinstance(f, _AfterNumba) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterNumba(on_error))


def _main(argv: List[str]) -> int:
    """python3 -m uevent.jit.numba APP.py [ARG...] (or -m MODULE [ARG...]): runs the
    program as python3 would, with the hook on, and needs no .pth."""
    import runpy
    if not argv or argv[0] in ("-h", "--help") or argv == ["-m"]:
        print("usage: python3 -m %s APP.py [ARG...]  or  -m MODULE [ARG...]"
              % (__spec__.name if __spec__ else "uevent.jit.numba"), file=sys.stderr)
        return 2
    # one hook: an `import uevent.jit.numba` in the program finds this one
    if __spec__ is not None:
        sys.modules.setdefault(__spec__.name, sys.modules[__name__])
    if argv[0] == "-m":
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = argv
        sys.path[0] = os.path.dirname(os.path.abspath(argv[0]))
        runpy.run_path(argv[0], run_name="__main__")
    return 0


# With UEVENT_JIT_NUMBA set (uevent-jit-numba.pth imports this module at interpreter
# start for it) a failure to turn on is a warning on stderr and the program runs on
# unprofiled; without it, `import uevent.jit.numba` raises.
_activate(_warn if os.environ.get(ENV, "") not in ("", "0") else _raise)

if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
