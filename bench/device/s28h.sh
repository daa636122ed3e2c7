#!/bin/sh
# s28h.sh - session 28: issue 24 item 4's full-size recording, made on 16 CPUs and
# brought back to be read on the 2-core host: `uevent record` of the usdt flood at 16
# threads x 100,000 marks (the issue's flood), compressed with xz into $OUT.
# Carry: tools/.libs libuevent/.libs bench/scale bench/device/.libs.
set -u
cd "$(dirname "$0")/../.." || exit 1
. bench/device/s20-env.sh
mkdir -p "$OUT" || exit 1
tmp=$(mktemp -d)
echo "== $(date -u) $(uname -r) $(nproc) CPUs"
"$uev" record -o "$tmp/u16big.data" -- bench/scale --flood 16 100000 2>&1 | tail -2
ls -l "$tmp/u16big.data"
xz -T0 -1 -c "$tmp/u16big.data" >"$OUT/u16big.data.xz"
ls -l "$OUT"
rm -rf "$tmp"
echo "== done $(date -u)"
