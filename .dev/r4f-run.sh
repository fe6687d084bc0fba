#!/usr/bin/env bash
# Device run r4f (4 GPUs, merged main): the GPU suite; then at 10M x 128 f16 --residual int8, --gpu 0
# against mpirun -n 4 again (each rank now encodes on its share of the cores).
set -uo pipefail
source .gpu/activate.sh
W=/tmp/w; RUN=r4f
source .dev/lib.sh
nvidia-smi -L | tee $W/gpus.txt
(python3 .dev/r3-data.py 10000000 /dev/shm/t.npy /dev/shm/q.npy > /dev/null 2>&1; echo data) &
timeout 330 node_modules/.bin/vitest run --config vitest.gpu.config.ts > $W/gpu-tests.log 2>&1; sed 's/\x1b\[[0-9;]*m//g' $W/gpu-tests.log | grep -E "FAIL|×|AssertionError" | head -20; sed 's/\x1b\[[0-9;]*m//g' $W/gpu-tests.log | grep -E "Test Files|Tests " | tee $W/gpu-summary.txt
pack
wait
peak i1 node bin/vlc.js compress /dev/shm/t.npy -o /dev/shm/i1.vlc --anchors 16384 --gpu 0 --residual int8 --json > $W/i1.json 2> $W/i1.err; S i1
peak i4 mpirun --allow-run-as-root -n 4 node bin/vlc.js compress /dev/shm/t.npy -o /dev/shm/i4.vlc --anchors 16384 --residual int8 --distributed --json > $W/i4.json 2> $W/i4.err; S i4
cmp /dev/shm/i1.vlc /dev/shm/i4.vlc && echo "10M int8: --gpu 0 = mpirun -n 4" | tee -a $W/summary.txt
cat $W/peaks.txt
