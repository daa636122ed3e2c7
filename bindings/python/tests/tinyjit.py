"""tinyjit.py - a tiny x86-64 JIT: writes a count-down loop into executable memory,
announces it with uevent.jit and calls it through ctypes.

usage: python3 tinyjit.py SECONDS     (prints "dump PATH", "map PATH", "load NAME ADDR")
"""
import ctypes
import mmap
import sys
import time

import uevent.jit

# long f(long n): mov rax, rdi; 1: sub rax, 1; jnz 1b; ret
CODE = bytes([0x48, 0x89, 0xf8, 0x48, 0x83, 0xe8, 0x01, 0x75, 0xfa, 0xc3])
NAME = "pyjit_countdown"

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]


def compile_code(code=CODE):
    """Executable memory holding code (W^X: written RW, then made RX); returns
    (mapping, address, callable)."""
    mem = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE)
    mem.write(code)
    addr = ctypes.addressof(ctypes.c_char.from_buffer(mem))
    if _libc.mprotect(addr, mmap.PAGESIZE, mmap.PROT_READ | mmap.PROT_EXEC) != 0:
        raise OSError(ctypes.get_errno(), "mprotect")
    fn = ctypes.CFUNCTYPE(ctypes.c_long, ctypes.c_long)(addr)
    return mem, addr, fn


def main():
    secs = float(sys.argv[1]) if len(sys.argv) > 1 else 0.5
    with uevent.jit.session() as jit:
        print("dump", jit.dump_path)
        print("map", jit.perf_map_path)
        mem, addr, fn = compile_code()
        jit.debug_info(addr, [(addr, 1, "tinyjit.py")])
        jit.code_load(NAME, addr, len(CODE), CODE)       # before the first call
        print("load %s 0x%x" % (NAME, addr), flush=True)
        end = time.monotonic() + secs
        while time.monotonic() < end:
            fn(2000000)
    return 0


if __name__ == "__main__":
    sys.exit(main())
