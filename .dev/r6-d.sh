#!/usr/bin/env bash
# Device run r6-d (one H200, the nvidia-h200 kind): session 6's host-side cuts (the sample drawn on a
# thread, device memsets, no separate pass over the sample, ids on 2 MiB pages): the GPU suite while
# the data are made; 100M x 128 f16 --anchors 65536 --residual none --gpu 0 twice (the same bytes as
# r6-b's h1: sha256 d2861dbc8a639b38...), 50M every default (r6-b: 597b08776e98afa9...), 10M int8
# --anchors 16384 (r6-a: 706d1b798096bfe6...). Results: $OUT/r6d.tgz.
set -uo pipefail
source .gpu/activate.sh
OUT=${OUT:-/tmp/out}; W=/tmp/r6d; mkdir -p $W $OUT; trap 'tar czf $OUT/r6d.tgz -C $W .' EXIT
T0=$(date +%s)
source .dev/r6-lib.sh; KEEP=0
(python3 .dev/r3-data.py 10000000 /dev/shm/e.npy /dev/shm/eq.npy > $W/data10.log 2>&1
 python3 .dev/r3-data.py 50000000 /dev/shm/x.npy /dev/shm/xq.npy > $W/data50.log 2>&1
 python3 .dev/r3-data.py 100000000 /dev/shm/h.npy /dev/shm/hq.npy > $W/data100.log 2>&1; echo "data after $(( $(date +%s) - T0 )) s" >> $W/data100.log) &
G=$!
timeout 200 node_modules/.bin/vitest run --config vitest.gpu.config.ts > $W/gpu-suite.log 2>&1
say "GPU suite rc $? after $(( $(date +%s) - T0 )) s"
sed 's/\x1b\[[0-9;]*m//g' $W/gpu-suite.log | grep -E "Test Files|Tests |FAIL|×|AssertionError|skipped" | head -30 | tee -a $W/summary.txt
wait $G; tail -1 $W/data100.log | tee -a $W/summary.txt
C e8 60 /dev/shm/e.npy --anchors 16384 --residual int8 --gpu 0
C x1 90 /dev/shm/x.npy --anchors 65536 --gpu 0
rm -f /dev/shm/x.npy /dev/shm/e.npy; df -h /dev/shm >> $W/summary.txt
C h1 120 /dev/shm/h.npy --anchors 65536 --residual none --gpu 0
C h2 120 /dev/shm/h.npy --anchors 65536 --residual none --gpu 0
say "done after $(( $(date +%s) - T0 )) s"
