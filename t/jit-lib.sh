# jit-lib.sh - shared steps of the JIT end-to-end tests: perf record -k mono, perf inject
# --jit, and checking that samples in announced code carry the announced names.
. "${top_srcdir:-..}/t/lib.sh"
JITDUMP="$top_builddir/t/jit-dump"

# Why perf end-to-end cannot run here, or empty. Needs a working cpu-clock sampler
# with CLOCK_MONOTONIC timestamps (as root, or with perf_event_paranoid <= 2).
jit_perf_why() {
	[ -n "$PERF" ] || { echo "perf not installed"; return; }
	[ "$(uname -m)" = x86_64 ] || { echo "test JITs emit x86-64 code"; return; }
	_d=$(mktemp -d) || { echo "no temporary directory"; return; }
	if ! "$PERF" record -q -k mono -e cpu-clock -N -o "$_d/p" -- true >"$_d/err" 2>&1; then
		is_root || { echo "not root and perf record failed: $(head -c 120 "$_d/err")"; rm -rf "$_d"; return; }
		echo "cpu-clock sampling unavailable: $(head -c 120 "$_d/err")"
	fi
	rm -rf "$_d"
}

# jit_record DIR CMD...: record CMD with JITDUMPDIR=DIR, so the jitdump lands in DIR.
jit_record() {
	_dir=$1; shift
	JITDUMPDIR=$_dir "$PERF" record -q -k mono -e cpu-clock -N -o "$_dir/perf.data" -- "$@"
}

# The one jitdump the recorded process wrote under DIR.
jit_dump_file() {
	find "$1/.debug/jit" -name 'jit-*.dump' 2>/dev/null | head -1
}

# perf inject --jit copies each jitted .so that got samples into perf's build-id cache,
# ~/.debug unless perf is told otherwise. perf reads no variable for that (it only sets
# PERF_BUILDID_DIR for its children): PERF_BUILDID_DIR, which uevent jit-clean reads too,
# is passed on here, and the JIT tests point it into their own directory.
jit_inject() {
	"$PERF" ${PERF_BUILDID_DIR:+--buildid-dir "$PERF_BUILDID_DIR"} inject --jit \
		-i "$1/perf.data" -o "$1/perf.jit.data"
}

# jit_samples DIR: "NS IP SYM" per sample of the injected data (SYM may have spaces).
jit_samples() {
	"$PERF" script -i "$1/perf.jit.data" -F time,ip,sym --ns 2>/dev/null |
		awk '{ t = $1; sub(/:$/, "", t); split(t, a, "."); ip = $2; $1 = ""; $2 = "";
			sub(/^  */, ""); print a[1] a[2], ip, ($0 == "" ? "[unknown]" : $0) }'
}

# jit_check_samples DUMP_TXT SAMPLES: for every sample whose IP lies in announced code,
# the newest load of that address at or before the sample must exist (ordering) and
# its name must be the sample's symbol (naming, address reuse). Prints
# "injit=N early=N misnamed=N" and the first few offenders on stderr.
# The loads are stamped with clock_gettime(CLOCK_MONOTONIC), the samples by perf -k mono
# with the kernel's NMI-safe ktime_get_mono_fast_ns(), which may lag the former by a
# little around timekeeping updates: a sample up to SKEW_NS (10 us) before a load counts
# as after it. Samples from before the jitdump was opened (code a JIT made before it
# started the hook: LuaJIT compiles traces while the hook module loads, and start()
# announces them late) are not counted.
jit_check_samples() {
	awk '
	function hex(s,   i, c, v) { v = 0; s = tolower(s); sub(/^0x/, "", s)
		for (i = 1; i <= length(s); i++) { c = index("0123456789abcdef", substr(s, i, 1)) - 1; v = v * 16 + c }
		return v }
	FNR == NR {
		if ($1 == "header") for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == "ts") start = kv[2] + 0 }
		if ($1 != "load") next
		n++; for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		ts[n] = f["ts"] + 0; lo[n] = hex(f["addr"]); hi[n] = lo[n] + f["size"]
		nm = $0; sub(/.* name=/, "", nm); name[n] = nm
		next
	}
	{
		t = $1 + 0; ip = hex($2); sym = $0; sub(/^[^ ]* [^ ]* /, "", sym)
		best = 0; inr = 0
		for (k = 1; k <= n; k++) if (ip >= lo[k] && ip < hi[k]) { inr = 1; if (ts[k] <= t + 10000 && (!best || ts[k] >= ts[best])) best = k }
		if (!inr) next
		if (t < start) next	# before the JIT session began: nothing could be announced
		injit++
		if (!best) { early++; if (early < 4) { first = 0; for (k = 1; k <= n; k++) if (ip >= lo[k] && ip < hi[k] && (!first || ts[k] < ts[first])) first = k
			print "early: " $0 " (" ts[first] - t " ns before the load of " name[first] ")" > "/dev/stderr" } ; next }
		if (sym != name[best]) { bad++; if (bad < 4) print "misnamed: " $0 " expected " name[best] > "/dev/stderr" }
	}
	END { printf "injit=%d early=%d misnamed=%d\n", injit, early, bad }' "$1" "$2"
}

# The python3 that has numba and cffi (Debian's python3-numba serves /usr/bin/python3,
# which need not be configure's PYTHON): NUMBA_PYTHON, PYTHON, /usr/bin/python3; or empty.
numba_python() {
	for _p in ${NUMBA_PYTHON:-} ${PYTHON:-} /usr/bin/python3; do
		"$_p" -c 'import numba, cffi' 2>/dev/null && { echo "$_p"; return; }
	done
}

# binding_for PY DIR: prints the PYTHONPATH entry where `import uevent` (with uevent.jit)
# works under PY: the build tree's binding when PY is configure's PYTHON, else its
# CFFI module compiled for PY into DIR (as bindings/python/local.mk does). Fails, with
# the reason on stderr, when that does not build or import.
binding_for() {
	_real() { "$1" -c 'import os, sys; print(os.path.realpath(sys.executable))' 2>/dev/null; }
	_lib=$top_builddir/bindings/python/lib
	if [ -n "${PYTHON:-}" ] && [ "$(_real "$1")" = "$(_real "$PYTHON")" ]; then
		echo "$_lib"; return 0
	fi
	mkdir -p "$2/uevent/jit" &&
	cp "$_lib"/uevent/*.py "$2/uevent/" && cp "$_lib"/uevent/jit/*.py "$2/uevent/jit/" &&
	"$1" "$top_srcdir/bindings/python/uevent_build.py" --cdef "$top_builddir/bindings/uevent.cdef" \
		--emit-c "$2/uevent/_uevent.c" --lib "$LIBUEVENT_SO" >/dev/null &&
	_inc=$("$1" -c 'import sysconfig; print(sysconfig.get_paths()["include"])') &&
	_ext=$("$1" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))') &&
	${CC:-cc} -shared -fPIC -O1 -I"$_inc" -I"$top_srcdir/libuevent" -o "$2/uevent/_uevent$_ext" \
		"$2/uevent/_uevent.c" -L"$top_builddir/libuevent/.libs" -luevent \
		-Wl,-rpath,"$top_builddir/libuevent/.libs" &&
	PYTHONPATH=$2 "$1" -c 'import uevent.jit' && echo "$2"
}
