#!/bin/sh
# report.sh - uevent report against perf report on the same recording, in the same run:
# t/burn recorded with uevent record -F (callchains, side-band), then the best of three
# wall times of each reader over it. Prints the ratios (uevent / perf).
set -u
top_builddir=${top_builddir:-.}
PERF=${PERF:-perf}
UEVENT=$top_builddir/tools/uevent
BURN=$top_builddir/t/.libs/burn
[ "$(id -u)" = 0 ] || { echo "report                     skipped: needs root to record"; exit 0; }
command -v "$PERF" >/dev/null 2>&1 || { echo "report                     skipped: no perf"; exit 0; }
[ -x "$BURN" ] || { echo "report                     skipped: make check builds t/burn"; exit 0; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
LD_LIBRARY_PATH=$top_builddir/libuevent/.libs "$UEVENT" record -o "$tmp/b.data" --period 100us -- \
	"$BURN" "${BENCH_REPORT_SECS:-2}" 2>"$tmp/rec"
samples=$(sed -n 's/.*uevents, \([0-9]*\) samples.*/\1/p' "$tmp/rec")

best() { # best CMD...: the least wall time of three runs, in ms
	b=
	for _ in 1 2 3; do
		t0=$(date +%s%N)
		"$@" >/dev/null 2>&1
		t1=$(date +%s%N)
		t=$(( (t1 - t0) / 1000000 ))
		[ -z "$b" ] || [ "$t" -lt "$b" ] && b=$t
	done
	echo "$b"
}
u=$(best "$UEVENT" report "$tmp/b.data")
p=$(best "$PERF" report -i "$tmp/b.data" --stdio --no-children -g none --sort comm,dso,sym)
uc=$(best "$UEVENT" report --children "$tmp/b.data")
pc=$(best "$PERF" report -i "$tmp/b.data" --stdio --children -g none --sort comm,dso,sym)
uf=$(best "$UEVENT" export --folded "$tmp/f" "$tmp/b.data")
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }
echo "report: $samples samples with callchains ($(wc -c < "$tmp/b.data") bytes)"
echo "  uevent report              ${u} ms   perf report --no-children ${p} ms   ratio $(ratio "$u" "$p")"
echo "  uevent report --children   ${uc} ms   perf report --children    ${pc} ms   ratio $(ratio "$uc" "$pc")"
echo "  uevent export --folded     ${uf} ms"
exit 0
