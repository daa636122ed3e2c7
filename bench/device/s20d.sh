#!/bin/sh
# s20d.sh - session 20: the 16- and 32-thread usdt flood under `uevent record` with the
# default rings, recorder CPU by perf stat --no-inherit (the final drain). Carry:
# tools/.libs libuevent/.libs bench/scale bench/device/.libs bench/device/perf.
set -u
cd "$(dirname "$0")/../.." || exit 1
. bench/device/s20-env.sh
for t in 16 16 16 16 32; do rm -f /tmp/f.data; perf stat --no-inherit -x, -e task-clock -o /tmp/rs -- tools/.libs/uevent record -o /tmp/f.data -- bench/scale --flood $t 100000 >/tmp/ro 2>/tmp/re; echo "$t: $(cat /tmp/ro); $(grep -o 'lost [0-9]*' /tmp/re | head -1); CPU $(awk -F, '/task-clock/ {print $1}' /tmp/rs) ms"; done | tee $OUT/final-flood.txt
