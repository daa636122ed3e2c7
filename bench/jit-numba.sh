#!/bin/sh
# jit-numba.sh - bench/jit-numba: the Numba hook's cost, on against off in one run
# (bench/jit-numba.py says how). Runs under the python3 that has numba, with the
# binding built for it (t/jit-lib.sh). ROUNDS (default 21) and N (20) from the environment.
. "$top_srcdir/t/jit-lib.sh"
NPY=$(numba_python)
[ -n "$NPY" ] || { echo "bench/jit-numba: skipped (no python3 with numba and cffi)"; exit 0; }
[ -f "$top_builddir/bindings/python/lib/uevent/.built" ] ||
	{ echo "bench/jit-numba: skipped (the Python binding is not built)"; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
lib=$(binding_for "$NPY" "$tmp/lib") || { echo "bench/jit-numba: the binding does not build for $NPY"; exit 1; }
PYTHONPATH=$lib PYTHONDONTWRITEBYTECODE=1 NUMBA_CACHE_DIR=$tmp/cache \
	"$NPY" "$top_srcdir/bench/jit-numba.py" "${ROUNDS:-21}" "${N:-20}"
