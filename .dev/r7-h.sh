#!/usr/bin/env bash
# Device run r7-h (2 GPUs, nvidia-h200-x2; the fallback when no 4-GPU kind is lent): r6-f.sh again on session 7's main. The GPU suite
# while the data are made; 10M x 128 f16 (--anchors 16384) with int8 and every default on --gpu 0,
# --gpu 0,1 and mpirun -n 2 (the same bytes within a codec); 50M every default on --gpu 0 and 0,1;
# 100M --anchors 65536 --residual none on --gpu 0 twice (issue 31: every phase but reading under
# 20 s). Results: $OUT/r7h.tgz.
set -uo pipefail
source .gpu/activate.sh
OUT=${OUT:-/tmp/out}; W=/tmp/r7h; mkdir -p $W $OUT; trap 'tar czf $OUT/r7h.tgz -C $W .' EXIT
T0=$(date +%s)
source .dev/r6-lib.sh
{ nvidia-smi -L; nproc; free -g; git log -1 --format=%H; } > $W/machine.txt 2>&1
(python3 .dev/r3-data.py 10000000 /dev/shm/e.npy /dev/shm/eq.npy > $W/data10.log 2>&1
 python3 .dev/r3-data.py 50000000 /dev/shm/x.npy /dev/shm/xq.npy > $W/data50.log 2>&1
 python3 .dev/r3-data.py 100000000 /dev/shm/h.npy /dev/shm/hq.npy > $W/data100.log 2>&1; echo "data after $(( $(date +%s) - T0 )) s" >> $W/data100.log) &
G=$!
suite 200
wait $G; tail -1 $W/data100.log | tee -a $W/summary.txt
E="/dev/shm/e.npy --anchors 16384"
for c in int8 bits default; do
  R=$([ $c = default ] || echo "--residual $c")
  C $c-g1 60 $E $R --gpu 0; C $c-g2 60 $E $R --gpu 0,1; C $c-m2 60 mpirun $E $R
  same $c-g1 $c-g2 $c-m2
  grep -h "on cores\|quality:\|bytes of .vlc\|uses [0-9]* of\|fewer GPUs" $W/$c-g2.err $W/$c-m2.err | sed 's/^/    /' | tee -a $W/summary.txt
done
rm -f /dev/shm/*.vlc
KEEP=0
C x1 90 /dev/shm/x.npy --anchors 65536 --gpu 0; C x2 90 /dev/shm/x.npy --anchors 65536 --gpu 0,1
C h1 120 /dev/shm/h.npy --anchors 65536 --residual none --gpu 0
C h2 120 /dev/shm/h.npy --anchors 65536 --residual none --gpu 0
say "done after $(( $(date +%s) - T0 )) s"
