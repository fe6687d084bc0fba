#!/usr/bin/env bash
# Device run r7 (4 GPUs, nvidia-h200-x4): issue 31's 4-GPU figures and the billion. Steps, each its
# own device command on one warm machine (results in $OUT/r7-STEP.tgz, summary.txt there):
#   a   the billion's 80 shards into /dev/shm (.dev/r5-bill31.sh gen) and a 10M x 128 file; 50M (the
#       first 4 shards) every default, --anchors 65536, on --gpu 0 and --gpu 0,1,2,3; 10M
#       (--anchors 16384) int8 and every default on --gpu 0, --gpu 0,1,2,3 and mpirun -n 4
#   b   .dev/r5-bill31.sh check (25M streamed = whole file on 4 GPUs; the 100M subset on one GPU)
#   c   .dev/r5-bill31.sh run (the billion)
#   d   .dev/r5-bill31.sh search; 25M int8 on mpirun -n 4 = --gpu 0,1,2,3; the GPU suite
# Usage (repository root): bash .dev/r7.sh a|b|c|d
set -uo pipefail
source .gpu/activate.sh
step=$1; OUT=${OUT:-/tmp/out}; W=/tmp/r7; mkdir -p $W $OUT
trap 'cp -r /tmp/b31/bill31 $W/ 2>/dev/null; tar czf $OUT/r7-$step.tgz -C $W .' EXIT
T0=$(date +%s)
source .dev/r6-lib.sh
case $step in
a)
  { nvidia-smi -L; nproc; free -g; df -h /dev/shm /tmp; git log -1 --format=%H; } > $W/machine.txt 2>&1
  (python3 .dev/r3-data.py 10000000 /tmp/e.npy /tmp/eq.npy > $W/data10.log 2>&1) &
  OUT=/tmp/b31 bash .dev/r5-bill31.sh gen; say "gen done after $(( $(date +%s) - T0 )) s"
  wait
  mkdir -p /dev/shm/sub4; rm -f /dev/shm/sub4/*; for k in 0 1 2 3; do ln -s /dev/shm/shards/part-000$k.npy /dev/shm/sub4/; done
  KEEP=1
  C x1 120 '/dev/shm/sub4/*.npy' --anchors 65536 --gpu 0
  C x4 120 '/dev/shm/sub4/*.npy' --anchors 65536 --gpu 0,1,2,3
  same x1 x4; grep -h "uses [0-9]* of\|fewer GPUs\|step:" $W/x4.err | sed 's/^/    /' | tee -a $W/summary.txt
  rm -f /dev/shm/x1.vlc /dev/shm/x4.vlc
  E="/tmp/e.npy --anchors 16384"
  for c in int8 default; do
    R=$([ $c = default ] || echo "--residual $c")
    C $c-g1 60 $E $R --gpu 0; C $c-g4 60 $E $R --gpu 0,1,2,3; NP=4 C $c-m4 60 mpirun $E $R
    same $c-g1 $c-g4 $c-m4
    grep -h "uses [0-9]* of\|fewer GPUs" $W/$c-g4.err $W/$c-m4.err | sed 's/^/    /' | tee -a $W/summary.txt
    rm -f /dev/shm/$c-*.vlc
  done
  ;;
b) OUT=/tmp/b31 bash .dev/r5-bill31.sh check ;;
c) OUT=/tmp/b31 bash .dev/r5-bill31.sh run ;;
d)
  ST=240 OUT=/tmp/b31 bash .dev/r5-bill31.sh search
  rm -f /tmp/b.vlc
  C s-g4 120 '/dev/shm/sub2/*.npy' --anchors 65536 --residual int8 --gpu 0,1,2,3
  NP=4 C s-m4 150 mpirun '/dev/shm/sub2/*.npy' --anchors 65536 --residual int8
  same s-g4 s-m4
  suite 200
  ;;
esac
say "step $step done after $(( $(date +%s) - T0 )) s"
