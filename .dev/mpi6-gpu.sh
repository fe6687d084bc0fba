#!/usr/bin/env bash
# Device run for branch mpi6 (issue 31: `mpirun -n 2` slower than `--gpu 0` after training), on
# nvidia-h200-x2: the GPU suite (the CUDA pass's partial sums now reuse their host arrays), then
# 10M x 128 f16 (r3-data.py), --anchors 16384, with int8, bits and every default, on --gpu 0 and
# under mpirun -n 2, twice, interleaved: the same bytes (cmp), total seconds, iter_ms_median and
# phases (lib.sh S), and the -v lines this branch adds (the ranks' cores, quality's two parts, the
# write's checksum on threads). Results: $OUT/mpi6.tgz (summary.txt first).
set -uo pipefail
source .gpu/activate.sh
W=/tmp/mpi6; RUN=mpi6; source .dev/lib.sh
T0=$(date +%s)
say() { echo "$*" | tee -a $W/summary.txt; }
{ nvidia-smi -L; nproc; free -g; git log -1 --format=%H; } > $W/machine.txt 2>&1
(python3 .dev/r3-data.py 10000000 /dev/shm/e.npy /dev/shm/eq.npy > $W/data10.log 2>&1) &
G=$!
timeout 330 node_modules/.bin/vitest run --config vitest.gpu.config.ts > $W/gpu-suite.log 2>&1
say "GPU suite rc $? after $(( $(date +%s) - T0 )) s"
sed 's/\x1b\[[0-9;]*m//g' $W/gpu-suite.log | grep -E "Test Files|Tests |FAIL|×|AssertionError" | head -40 | tee -a $W/summary.txt
wait $G
# M TAG ARGS...: C's compress as `mpirun -n 2` (rank 0's JSON and stamped stderr).
M() { local tag=$1; shift; peak $tag mpirun -n 2 --allow-run-as-root --oversubscribe node bin/vlc.js compress "$@" --distributed --json -v > $W/$tag.json 2> >(python3 -u .dev/ts.py > $W/$tag.err); }
E="/dev/shm/e.npy --anchors 16384"
for round in 1 2; do
  for c in int8 bits default; do
    x=$( [ $c = default ] || echo "--residual $c" )
    C $c-g1-$round $E $x --gpu 0 -o /dev/shm/$c-g1.vlc -f; S $c-g1-$round iter_ms_median
    M $c-m2-$round $E $x -o /dev/shm/$c-m2.vlc -f; S $c-m2-$round iter_ms_median
    grep -h "on cores\|quality:\|bytes of .vlc\|gathered\|residuals of" $W/$c-g1-$round.err $W/$c-m2-$round.err | sed 's/^/    /' | tee -a $W/summary.txt
    cmp -s /dev/shm/$c-g1.vlc /dev/shm/$c-m2.vlc && say "  same bytes: $c g1 = m2" || say "  DIFFERENT or missing: $c g1 vs m2"
  done
done
say "done after $(( $(date +%s) - T0 )) s"
