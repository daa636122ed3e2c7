# lib.sh - TAP helpers for the shell tests; source it.
tap_n=0
tap_fail=0
plan() { echo "1..$1"; }
skip_all() { echo "1..0 # SKIP $*"; exit 0; }
ok() { # ok COND-STATUS DESCRIPTION
	tap_n=$((tap_n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $tap_n - $2"; else echo "not ok $tap_n - $2"; tap_fail=$((tap_fail + 1)); fi
}
check() { # check DESCRIPTION CMD...
	d=$1; shift
	if "$@" >/dev/null 2>&1; then ok 0 "$d"; else ok 1 "$d"; fi
}
skip() { # skip N REASON
	i=0; while [ $i -lt "$1" ]; do tap_n=$((tap_n + 1)); echo "ok $tap_n # SKIP $2"; i=$((i + 1)); done
}
diag() { echo "# $*"; }
done_testing() { [ $tap_fail -eq 0 ]; exit $?; }

: "${top_srcdir:=..}" "${top_builddir:=..}"
UEVENT="$top_builddir/tools/uevent"
LIBUEVENT_SO=$(readlink -f "$top_builddir/libuevent/.libs/libuevent.so" 2>/dev/null)
TRACEFS=
for d in /sys/kernel/tracing /sys/kernel/debug/tracing; do
	[ -e "$d/trace" ] && { TRACEFS=$d; break; }
done
is_root() { [ "$(id -u)" = 0 ]; }
# lua_test SCRIPT: runs bindings/lua/tests/SCRIPT with LuaJIT (the binding on LUA_PATH),
# in a directory of its own for its files ($UEVENT_TEST_TMP: tap.tmpname()), which goes
# however the script ends (LuaJIT's os.tmpname() always writes to /tmp).
lua_test() {
	[ -n "$LUAJIT" ] || skip_all "no luajit (configure LUAJIT=)"
	[ -f "$top_builddir/bindings/lua/uevent/cdef.lua" ] || skip_all "LuaJIT binding not built"
	LUA_PATH="$top_srcdir/bindings/lua/?.lua;$top_builddir/bindings/lua/?.lua;;"
	UEVENT_TEST_TMP=$(mktemp -d "${TMPDIR:-/tmp}/uevent-lua.XXXXXX") || exit 1
	export LUA_PATH UEVENT_TEST_TMP
	trap 'rm -rf "$UEVENT_TEST_TMP"' EXIT
	trap 'exit 1' HUP INT TERM
	"$LUAJIT" "$top_srcdir/bindings/lua/tests/$1"
}
# perf_maps_of DIR...: the /tmp/perf-PID.map of each process that wrote a jitdump under
# DIR (jit-PID.dump, at any depth: a JITDUMPDIR, a jitdump directory), for a test's EXIT
# trap. A JIT session writes its perf map at perf's fixed path, not in the test's
# directory; the jitdump's PID is what makes that map ours, so no other is removed.
perf_maps_of() {
	find "$@" -name 'jit-*.dump' 2>/dev/null | sed -n 's|.*/jit-\([0-9][0-9]*\)\.dump$|/tmp/perf-\1.map|p'
}
