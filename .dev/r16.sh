#!/usr/bin/env bash
# Device run r16 (4 x H200, 64 cores, session 10): the checksum threads' cap (min(32, cores),
# io/vlc/checksums.ts) measured: 100M x 128 f16 (.dev/r3-data.py) compressed with --residual int8
# on --gpu 0 (13 GB .vlc), then `vlc info` of it under taskset on 8, 16, 32 and 64 cores,
# interleaved twice. $OUT/r16/summary.txt.
set -uo pipefail
source .gpu/activate.sh
OUT=${OUT:-/tmp/out}; W=$OUT/r16; mkdir -p $W
source .dev/r6-lib.sh
{ nvidia-smi -L; nproc; free -g; } > $W/machine.txt 2>&1
[ -f /dev/shm/h.npy ] || python3 .dev/r3-data.py 100000000 /dev/shm/h.npy /dev/shm/hq.npy > $W/data100.log 2>&1
KEEP=1
C i8 120 /dev/shm/h.npy --anchors 65536 --residual int8 --gpu 0
rm -f /dev/shm/h.npy
for r in 1 2; do
  for c in 0-7 0-15 0-31 0-63; do
    t=$(date +%s.%N); taskset -c $c node bin/vlc.js info /dev/shm/i8.vlc > /dev/null 2>$W/info-$c-$r.err
    say "info cores $c run $r rc $? wall $(awk "BEGIN{print $(date +%s.%N) - $t}")"
  done
done
