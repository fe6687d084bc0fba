#!/usr/bin/env bash
# Device run r4d (4 GPUs, after the session's merges): the GPU suite; then .dev/r31-run.sh (mpirun -n 4
# against --gpu 0 at 10M x 128, same bytes, peak RSS per rank) and, on its data, --gpu 0,1,2,3 in one
# process (every default: the GPU-count prediction decides how many of the four it uses). SKIP_SUITE=1: the runs only.
set -uo pipefail
source .gpu/activate.sh
W=/tmp/w; RUN=r4d
source .dev/lib.sh
nvidia-smi -L | tee $W/gpus.txt
[ -n "${SKIP_SUITE:-}" ] || timeout 280 node_modules/.bin/vitest run --config vitest.gpu.config.ts > $W/gpu-tests.log 2>&1; sed 's/\x1b\[[0-9;]*m//g' $W/gpu-tests.log | grep -E "FAIL|×|Error" | head -20; sed 's/\x1b\[[0-9;]*m//g' $W/gpu-tests.log | grep -E "Test Files|Tests " | tee $W/gpu-summary.txt
pack
sed -i 's#^rm -f /dev/shm/t1.vlc.*#C g4 /dev/shm/t.npy -o /dev/shm/g4.vlc -f --anchors 16384 --gpu 0,1,2,3; S g4; cmp /dev/shm/g4.vlc /dev/shm/t1.vlc \&\& echo "10M default: --gpu 0,1,2,3 = --gpu 0" | tee -a $W/summary.txt#' .dev/r31-run.sh
sed -i 's#^timeout 400 node_modules/.bin/vitest run test/mpi.*#echo "(MPI tests: run on the development machine)"#' .dev/r31-run.sh
timeout 400 bash .dev/r31-run.sh; cp /tmp/w31/* $W/ 2>/dev/null; cat $W/summary.txt
