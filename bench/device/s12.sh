#!/bin/sh
# s12.sh - session 12's device run: the threads sweep and flood (scale.sh, this build
# against bench/device/scale-main), symbol insertion at n and 4n (symbolize-scale, each
# run cold in a child), and set() of the OTEP 4947 record (thread-context). Carry as
# all.sh says, less inject/.libs; no NVTX part. Output under $OUT, a summary to stdout.
set -u
cd "$(dirname "$0")/../.." || exit 1
OUT=${OUT:-$(mktemp -d)}
export OUT
echo "== $(date -u) $(uname -r) $(nproc) CPUs"
export LD_LIBRARY_PATH="$PWD/bench/device/.libs"
echo "== scale"
SCALE_REPEAT=2 timeout 230 sh bench/device/scale.sh; echo "rc=$?"
cat "$OUT/scale.txt" 2>/dev/null | tail -120
export LD_LIBRARY_PATH="$PWD/libuevent/.libs:$LD_LIBRARY_PATH"
echo "== symbolize-scale"
for a in "200000" "200000 ascending"; do
	# shellcheck disable=SC2086
	timeout 45 bench/.libs/symbolize-scale $a 2>&1 | tail -8
done
echo "== thread-context"
timeout 20 bench/.libs/thread-context 2>&1 | tail -8
