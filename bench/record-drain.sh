#!/bin/sh
# record-drain.sh - how fast `uevent record` drains its rings: a usdt mark flood recorded,
# the recorder's own CPU time counted (perf stat --no-inherit: not the command's, not the
# reaper's), records written per CPU second of the recorder, and the ratio of this build
# to a baseline recorder (RECORD_BASE: another build's tools/uevent) run on the same
# flood in the same run, interleaved. Then the same flood with small rings, where marks
# are lost, against `perf record -e libuevent:emit` with rings of the same size: marks
# lost of those made and the recorder's CPU. Needs root (uprobes) and perf; else says so.
# Usage: RECORD_BASE=/path/to/base/tools/uevent record-drain.sh
set -u
top_builddir=${top_builddir:-.}
PERF=${PERF:-perf}
N=${DRAIN_MARKS:-200000}	# marks a thread
T=${DRAIN_THREADS:-2}
R=${DRAIN_REPEAT:-3}
SMALL=${DRAIN_SMALL_PAGES:-8}
bin=$(readlink -f "$top_builddir/bench/scale")
this=$(readlink -f "$top_builddir/tools/uevent")
base=${RECORD_BASE:-}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/uevent-bench-drain-XXXXXX") || exit 1
trap 'rm -rf "$tmp"; "$this" probe --perf-event-remove >/dev/null 2>&1' EXIT
skip() { echo "record drain                 skipped: $1"; exit 0; }
[ "$(id -u)" = 0 ] || skip "needs root for uprobes"
[ -x "$bin" ] && [ -x "$this" ] || skip "build bench/scale and tools/uevent first"
"$PERF" stat -e task-clock -- true >/dev/null 2>&1 || skip "no perf stat"

# run NAME CMD...: the recorder's task-clock (ms) and the records the file holds
run() {
	name=$1
	shift
	rm -f "$tmp/data"
	"$PERF" stat --no-inherit -x, -e task-clock -o "$tmp/stat" -- "$@" \
		>"$tmp/out" 2>"$tmp/err" || { echo "$name: failed: $(tail -2 "$tmp/err")"; return 1; }
	ms=$(awk -F, '/task-clock/ { print $1 }' "$tmp/stat")
	got=$("$this" dump "$tmp/data" 2>&1 >/dev/null |
		sed -n 's/.* records, \([0-9]*\) uevents.*/\1/p')
	made=$((T * N))
	rate=$(sed -n 's/.*: \([0-9]*\) marks\/s/\1/p' "$tmp/out")
	size=$(stat -c %s "$tmp/data" 2>/dev/null || echo 0)
	printf '%-34s %9d %9d %9s %10.1f %13.0f %11s %6d\n' "$name" "$made" "${got:-0}" \
		$((made - ${got:-0})) "$ms" "$(echo "${got:-0} $ms" | awk '{ print ($2 > 0 ? $1 / $2 * 1000 : 0) }')" \
		"${rate:-?}" $((size / (${got:-0} + 1)))
	echo "${got:-0} $ms" | awk '{ print ($2 > 0 ? $1 / $2 * 1000 : 0) }' \
		>>"$tmp/rate.$(echo "$name" | tr -c 'a-z0-9\n' _)"
}

echo "# usdt flood, $T threads x $N marks, $R rounds, on $(getconf _NPROCESSORS_ONLN) CPUs"
printf '%-34s %9s %9s %9s %10s %13s %11s %6s\n' recorder made recorded lost 'cpu ms' \
	'records/cpu-s' 'flood/s' 'B/mark'
i=0
while [ "$i" -lt "$R" ]; do
	[ -n "$base" ] && run "base uevent record" "$base" record -o "$tmp/data" -- \
		"$bin" --flood "$T" "$N"
	run "this uevent record" "$this" record -o "$tmp/data" -- "$bin" --flood "$T" "$N"
	i=$((i + 1))
done
median() { sort -n "$1" | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
if [ -s "$tmp/rate.base_uevent_record" ] && [ -s "$tmp/rate.this_uevent_record" ]; then
	b=$(median "$tmp/rate.base_uevent_record")
	t=$(median "$tmp/rate.this_uevent_record")
	printf 'drained records per recorder CPU second, median: this %.0f, base %.0f: ratio %.2f\n' \
		"$t" "$b" "$(echo "$t $b" | awk '{ print $1 / $2 }')"
fi

echo "# the same flood into rings of $SMALL pages a CPU (-m $SMALL): losses"
if ! "$this" probe --perf-event "$bin" >/dev/null 2>"$tmp/probe"; then
	echo "perf record skipped: uevent probe --perf-event: $(cat "$tmp/probe")"
	perf_ok=
else
	perf_ok=1
fi
i=0
while [ "$i" -lt "$R" ]; do
	[ -n "$base" ] && run "base uevent record -m $SMALL" "$base" record -m "$SMALL" \
		-o "$tmp/data" -- "$bin" --flood "$T" "$N"
	run "this uevent record -m $SMALL" "$this" record -m "$SMALL" -o "$tmp/data" -- \
		"$bin" --flood "$T" "$N"
	[ -n "$perf_ok" ] && run "perf record -e emit -m $SMALL" "$PERF" record -q \
		-e libuevent:emit -m "$SMALL" -o "$tmp/data" -- "$bin" --flood "$T" "$N"
	i=$((i + 1))
done
exit 0
