#!/usr/bin/env bash
# Device run r30 (one H200, session 13): the whole GPU suite at HEAD (commits after r28 never ran on a
# GPU), then 50M x 128 f16 every default --anchors 65536 --gpu 0 twice with -v, to time the codec choice
# (pq's training engines) after the recall-prefix and -v changes. $OUT/keep/summary.txt, rest in r30.tgz.
set -uo pipefail
source .gpu/activate.sh
OUT=${OUT:-/tmp/out}; W=$OUT/r30; mkdir -p $W
source .dev/r6-lib.sh
say "commit $(cat .dev/commit 2>/dev/null) $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
suite 300
t=$(date +%s); python3 .dev/r3-data.py 50000000 /dev/shm/f.npy /dev/shm/fq.npy > $W/data50.log 2>&1
say "data $(( $(date +%s) - t )) s"
show() { grep -h "k-means++ in\|closed in\|chose\|choosing\|pq residuals" $W/$1.err | cut -c1-260 | tee -a $W/summary.txt; }
for tag in w1 w2; do
  C $tag 120 /dev/shm/f.npy --anchors 65536 --gpu 0; show $tag
  [ $tag != w1 ] && same w1 $tag
done
rm -f /dev/shm/*.vlc
mkdir -p $OUT/keep && cp $W/summary.txt $W/gpu-suite.log $OUT/keep/ && tar czf $OUT/keep/r30.tgz -C $OUT r30 && rm -rf $W
