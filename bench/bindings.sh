#!/bin/sh
# bindings.sh - bench/bindings: ns per disabled and enabled mark from C, Python, LuaJIT and
# Rust in one run, each against the bare call and what a user would write by hand.
# Enabled marks go through the file transport to a file on tmpfs when there is one. A write
# costs 300-500 ns here and moves by a third between runs, so the four languages run
# interleaved, ROUNDS times (default 5), and each row keeps its fastest round.
# No assertions: ratios only.
: "${top_srcdir:=%ABS_TOP_SRCDIR%}" "${top_builddir:=%ABS_TOP_BUILDDIR%}"
: "${PYTHON:=%PYTHON%}" "${LUAJIT:=%LUAJIT%}" "${CARGO:=%CARGO%}"
tmp=$(mktemp)
trap 'rm -f "$tmp" "$UEVENT_BENCH_FILE"' EXIT
LD_LIBRARY_PATH="$top_builddir/libuevent/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LD_LIBRARY_PATH
d=/dev/shm; [ -d "$d" ] && [ -w "$d" ] || d=${TMPDIR:-/tmp}
UEVENT_BENCH_FILE=$(mktemp -p "$d"); export UEVENT_BENCH_FILE
r=0
while [ $r -lt "${ROUNDS:-5}" ]; do
	r=$((r + 1))
	: > "$UEVENT_BENCH_FILE"
	"$top_builddir/bench/bindings-c" >> "$tmp" || echo "# C baseline failed"
	if [ -n "$PYTHON" ] && [ -f "$top_builddir/bindings/python/lib/uevent/.built" ]; then
		PYTHONPATH="$top_builddir/bindings/python/lib" "$PYTHON" "$top_srcdir/bench/bindings.py" >> "$tmp"
	else echo "# python: skipped (binding not built)"; fi
	if [ -n "$LUAJIT" ] && [ -f "$top_builddir/bindings/lua/uevent/cdef.lua" ]; then
		LUA_PATH="$top_srcdir/bindings/lua/?.lua;$top_builddir/bindings/lua/?.lua;;" \
			"$LUAJIT" "$top_srcdir/bench/bindings.lua" >> "$tmp"
	else echo "# luajit: skipped (binding not built)"; fi
	rb="$top_builddir/bindings/rust/target/release/examples/bench"
	if [ -x "$rb" ]; then "$rb" >> "$tmp"; else echo "# rust: skipped (not built)"; fi
done
awk '
	/^#/ { if (!seen[$0]++) print; next }
	{ k = $1 " " $2 " " $3; if (!(k in v)) order[n++] = k; if (!(k in v) || $4 < v[k]) v[k] = $4 }
	END {
		cd = v["c disabled UEVENT_MARK"]; cf = v["c disabled uevent_mark"]; ce = v["c enabled uevent_mark"]
		printf "%-40s %10s  %s\n", "bench/bindings (ns per mark)", "ns", "ratio"
		for (i = 0; i < n; i++) {
			k = order[i]; split(k, p, " "); r = ""
			if (p[2] == "enabled" && ce > 0) r = sprintf("%.2fx C uevent_mark", v[k] / ce)
			else if (p[2] == "disabled" && p[1] == "python" && v["python disabled cffi-noop"] > 0)
				r = sprintf("%.2fx a CFFI no-op call", v[k] / v["python disabled cffi-noop"])
			else if (p[2] == "disabled" && p[1] == "rust" && cd > 0)
				r = sprintf("%.2fx C UEVENT_MARK", v[k] / cd)
			else if (p[2] == "disabled" && cf > 0) r = sprintf("%.2fx C uevent_mark() call", v[k] / cf)
			printf "%-40s %10.2f  %s\n", k, v[k], r
		}
	}' "$tmp"
