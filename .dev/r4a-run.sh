#!/usr/bin/env bash
# Device run r4a (one GPU, session 4): ec's GPU decoder with the GPU filled (bench/ec-gpu.mjs --repeat:
# the coded blocks taken many times over, about 10M rows), and 100,000,000 x 128 f16, m 65,536,
# --residual none on one GPU (issue 31's "every phase but reading under 20 s").
set -uo pipefail
source .gpu/activate.sh
W=/tmp/w; RUN=r4a
source .dev/lib.sh
trap 'cp $W/*.json $OUT/ 2>/dev/null; pack' EXIT
nvidia-smi -L | tee $W/gpus.txt; nproc
(python3 .dev/r3-data.py 100000000 /dev/shm/h.npy /dev/shm/hq.npy > $W/data.log 2>&1; echo data done) &
DATA=$!
timeout 200 node bench/ec-gpu.mjs --n 500000 --repeat 20 --layout axis --out $W/ec-gpu-axis.json > $W/ec-axis.log 2>&1; tail -2 $W/ec-axis.log
timeout 200 node bench/ec-gpu.mjs --n 245760 --repeat 40 --layout rotated --out $W/ec-gpu-rotated.json > $W/ec-rot.log 2>&1; tail -2 $W/ec-rot.log
pack
wait $DATA
C h1 /dev/shm/h.npy -o /dev/shm/h1.vlc --anchors 65536 --residual none --gpu 0; S h1 iterations
grep -E "final|sample|loop|iteration 10" $W/h1.err | head -20
cat $W/peaks.txt
