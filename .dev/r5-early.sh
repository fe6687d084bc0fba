#!/usr/bin/env bash
# Device run r5-early (4 GPUs, main after merging enc31 and bill31): the new GPU tests of the
# streamed path while 2 shards of the billion's data (25M x 128 f16, .dev/r5-shards.py) are made and
# timed; bill31's check step (25M streamed against the whole-file path on 4 GPUs: the same bytes);
# then .dev/r5-enc31.sh (10M: int8, bits, default on --gpu 0, --gpu 0,1,2,3, mpirun -n 4).
set -uo pipefail
source .gpu/activate.sh
OUT=${OUT:-/tmp/out}; mkdir -p $OUT/early; E=$OUT/early/summary.txt
say() { echo "$*" | tee -a $E; }
nvidia-smi -L | tee $OUT/early/gpus.txt; free -g >> $OUT/early/gpus.txt; df -h /dev/shm /tmp >> $OUT/early/gpus.txt
SH=/dev/shm/shards; mkdir -p $SH /dev/shm/sub2
t0=$(date +%s.%N)
(for p in 0 1; do python3 .dev/r5-shards.py $SH 2 12500000 $p 2 $p > $OUT/early/gen-$p.log 2>&1 & done; wait; echo "gen 2 shards (2 processes): $(awk "BEGIN{print $(date +%s.%N) - $t0}") s" >> $E) &
G=$!
timeout 150 node_modules/.bin/vitest run --config vitest.gpu.config.ts test/gpu/stream.test.ts > $OUT/early/gpu-stream.log 2>&1
say "test/gpu/stream rc $?"; sed 's/\x1b\[[0-9;]*m//g' $OUT/early/gpu-stream.log | grep -E "Test Files|Tests |FAIL|×|AssertionError|Error" | head -20 | tee -a $E
wait $G; ls -l $SH | tee -a $E
for k in 0 1; do ln -sf $SH/part-000$k.npy /dev/shm/sub2/; done
timeout 200 bash .dev/r5-bill31.sh check 2>&1 | tail -20
cat $OUT/bill31/summary.txt >> $E 2>/dev/null
timeout 250 bash .dev/r5-enc31.sh > $OUT/early/enc31.log 2>&1; say "enc31 rc $?"
cat $OUT/enc31/summary.txt >> $E 2>/dev/null
cat $E
