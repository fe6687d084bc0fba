#!/usr/bin/env bash
# Device run r6-a (2 GPUs, nvidia-h200-x2; branch r6 = main + enc31 + bill31, their GPU commits
# never run on a GPU before): the whole GPU suite while the data are made (10M x 128 f16 by
# r3-data.py, 2 shards of 12.5M by r5-shards.py); the streamed path against the whole-file path at
# 25M on 2 GPUs (the same bytes); 10M with int8, bits and every default on --gpu 0, --gpu 0,1
# --all-gpus and mpirun -n 2 (sha256, phases, wall). Results: $OUT/r6a.tgz (summary.txt first).
set -uo pipefail
source .gpu/activate.sh
OUT=${OUT:-/tmp/out}; W=/tmp/r6a; mkdir -p $W $OUT; trap 'tar czf $OUT/r6a.tgz -C $W .' EXIT
T0=$(date +%s)
source .dev/r6-lib.sh
{ nvidia-smi -L; nproc; free -g; df -h /dev/shm /tmp; git log -1 --format=%H; } > $W/machine.txt 2>&1
SH=/dev/shm/shards; mkdir -p $SH
(python3 .dev/r3-data.py 10000000 /dev/shm/e.npy /dev/shm/eq.npy > $W/data10.log 2>&1
 for p in 0 1; do python3 .dev/r5-shards.py $SH 2 12500000 $p 2 $p > $W/gen-$p.log 2>&1 & done; wait
 echo "data done after $(( $(date +%s) - T0 )) s" >> $W/data10.log) &
G=$!
timeout 330 node_modules/.bin/vitest run --config vitest.gpu.config.ts > $W/gpu-suite.log 2>&1
say "GPU suite rc $? after $(( $(date +%s) - T0 )) s"
sed 's/\x1b\[[0-9;]*m//g' $W/gpu-suite.log | grep -E "Test Files|Tests |FAIL|×|AssertionError|skipped" | head -40 | tee -a $W/summary.txt
wait $G; tail -1 $W/data10.log | tee -a $W/summary.txt; ls -l $SH /dev/shm/e.npy >> $W/summary.txt


A25="--anchors 65536 --residual int8 --gpu 0,1"
C s25 150 "$SH/*.npy" $A25 --stream; C m25 150 "$SH/*.npy" $A25 --all-gpus; same s25 m25
grep -c "streaming [0-9]* rows in blocks" $W/s25.err $W/m25.err | tee -a $W/summary.txt
rm -f /dev/shm/s25.vlc /dev/shm/m25.vlc
E="/dev/shm/e.npy --anchors 16384"
for c in int8 bits; do
  C $c-g1 60 $E --residual $c --gpu 0; C $c-g2 60 $E --residual $c --gpu 0,1 --all-gpus; C $c-m2 60 mpirun $E --residual $c
  same $c-g1 $c-g2 $c-m2
done
C def-g1 60 $E --gpu 0; C def-g2 60 $E --gpu 0,1; C def-m2 60 mpirun $E; same def-g1 def-g2 def-m2
say "done after $(( $(date +%s) - T0 )) s"
