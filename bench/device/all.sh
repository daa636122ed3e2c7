#!/bin/sh
# all.sh - the device checks of 2026-11-26 in one run, each part bounded in time:
# NVTX under PyTorch (nvtx-pytorch.sh), the threads sweep and flood (scale.sh), symbol
# insertion at n and 4n (symbolize-scale), and set() of the OTEP 4947 record
# (thread-context). Carry: tools/.libs libuevent/.libs inject/.libs bench/.libs
# bench/scale bench/device/scale-main bench/device/lib bench/device/.libs
# (nvtx-pytorch.sh --bundle and scale.sh's header say how to make the last three).
# Each part's output goes to $OUT; a summary to stdout.
set -u
cd "$(dirname "$0")/../.." || exit 1
OUT=${OUT:-$(mktemp -d)}
export OUT
mkdir -p "$OUT/nvtx"
echo "== $(date -u) $(uname -r) $(nproc) CPUs"
echo "== nvtx-pytorch"
OUT=$OUT/nvtx timeout 170 sh bench/device/nvtx-pytorch.sh >"$OUT/nvtx.log" 2>&1
echo "rc=$?"; tail -40 "$OUT/nvtx.log"
# the CLI in scale.sh's flood links libdw and libtraceevent: the bundle has them
export LD_LIBRARY_PATH="$PWD/bench/device/.libs"
echo "== scale"
SCALE_REPEAT=2 timeout 220 sh bench/device/scale.sh; echo "rc=$?"
cat "$OUT/scale.txt" 2>/dev/null | tail -80
export LD_LIBRARY_PATH="$PWD/libuevent/.libs:$LD_LIBRARY_PATH"
echo "== symbolize-scale"
for a in "50000" "200000" "200000 ascending"; do
	# shellcheck disable=SC2086
	timeout 40 bench/.libs/symbolize-scale $a 2>&1 | tail -6
done
echo "== thread-context"
timeout 20 bench/.libs/thread-context 2>&1 | tail -8
