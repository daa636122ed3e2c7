#!/bin/sh
# report-memory.sh - uevent report's peak RSS and wall time against perf report's on
# one big recording, in the same run: a busy mix (t/burn, a python3 loop, gcc compiles:
# few, deep and many distinct stacks; gcc compiles tools/profile.c) recorded with uevent record --period 40us for
# REPORT_MEM_SECS (60) seconds, about 37 MB (or REPORT_MEM_FILE, any perf.data with
# samples). Each reader runs REPORT_MEM_RUNS (3) times under /usr/bin/time; prints each
# run's maximum resident set size, wall time and CPU time (a loaded host disturbs it less). REPORT_MEM_BASE=/path/to/uevent (with
# REPORT_MEM_BASE_LIBS, its library directory) adds an older build, for before/after.
set -u
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
PERF=${PERF:-perf}
UEVENT=$top_builddir/tools/uevent
BURN=$top_builddir/t/.libs/burn
say() { echo "report-memory                skipped: $1"; exit 0; }
[ -x /usr/bin/time ] || say "no /usr/bin/time (Debian: time)"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/uevent-bench-repmem-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
data=${REPORT_MEM_FILE:-}
if [ -z "$data" ]; then
	[ "$(id -u)" = 0 ] || say "needs root to record (or REPORT_MEM_FILE)"
	[ -x "$BURN" ] || say "make check builds t/burn"
	command -v python3 >/dev/null || say "no python3"
	secs=${REPORT_MEM_SECS:-60}
	cat > "$tmp/work.sh" <<EOF
#!/bin/sh
"$BURN" $secs &
python3 -c '
import json, re, time
t = time.time()
while time.time() - t < $secs:
    sum(len(json.dumps({"a": [i, str(i)]})) for i in range(20000))
    re.findall(r"(\w+)\s", "ab cd ef " * 2000)
' &
t0=\$(date +%s)
while [ \$(( \$(date +%s) - t0 )) -lt $secs ]; do
	\${CC:-gcc} -O2 -I"$top_builddir" -I"$top_srcdir/include" -I"$top_srcdir/libuevent" \
		-c "$top_srcdir/tools/profile.c" -o "$tmp/p.o" 2>/dev/null
done
wait
EOF
	chmod +x "$tmp/work.sh"
	data=$tmp/big.data
	LD_LIBRARY_PATH=$top_builddir/libuevent/.libs "$UEVENT" record -o "$data" \
		--period 40us -- "$tmp/work.sh" >/dev/null 2>"$tmp/rec" ||
		say "uevent record failed: $(tail -1 "$tmp/rec")"
fi
samples=$("$UEVENT" report --no-pager "$data" 2>/dev/null | sed -n 's/^# Samples: \([0-9]*\).*/\1/p')
echo "report-memory: $(wc -c < "$data") bytes, ${samples:-?} samples"
runs() { # NAME CMD...: each run's peak RSS (MB), wall time and CPU time (user + sys)
	name=$1; shift
	line=
	for _ in $(seq 1 "${REPORT_MEM_RUNS:-3}"); do
		line="$line $(/usr/bin/time -f '%M %e %U %S' "$@" 2>&1 >/dev/null | tail -1 |
			awk '{ printf "%.1f MB %.2f s (cpu %.2f s),", $1 / 1024, $2, $3 + $4 }')"
	done
	printf '  %-28s%s\n' "$name" "$line"
}
runs "uevent report" "$UEVENT" report --no-pager "$data"
if [ -n "${REPORT_MEM_BASE:-}" ]; then
	runs "uevent report (base)" env LD_LIBRARY_PATH="${REPORT_MEM_BASE_LIBS:-}" \
		"$REPORT_MEM_BASE" report --no-pager "$data"
fi
if command -v "$PERF" >/dev/null 2>&1; then
	runs "perf report --stdio" "$PERF" report -i "$data" --stdio
	runs "perf report --no-children" "$PERF" report -i "$data" --stdio --no-children -g none \
		--sort comm,dso,sym
else
	echo "  perf report: skipped (no perf)"
fi
exit 0
