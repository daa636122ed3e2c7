# jit-hooks/local.mk - the JIT hooks' documentation. The hooks live in their bindings:
# Python's uevent.jit and uevent.jit.numba in bindings/python/, LuaJIT's uevent.jit (with
# its C part) and jit/uevent.lua in bindings/lua/; their tests are t/jit-*, their
# benchmark bench/jit.
EXTRA_DIST += %reldir%/README.md
