#!/usr/bin/env bash
# Device run r32 (one H200, session 13): 50M x 128 f16, every default, --anchors 65536 --gpu 0: this
# tree (w: the chooser decodes ranges, pq cuts its columns through piece views, the bits step table on
# threads) against main at the start of the session (x: .dev/base, 6a33333), interleaved; same bytes.
# $OUT/keep/summary.txt, the rest in $OUT/keep/r32.tgz.
set -uo pipefail
source .gpu/activate.sh
OUT=${OUT:-/tmp/out}; W=$OUT/r32; mkdir -p $W
source .dev/r6-lib.sh
say "commit $(cat .dev/commit 2>/dev/null) + work tree; base $(ls .dev/base/dist/cli.js) $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
t=$(date +%s); python3 .dev/r3-data.py 50000000 /dev/shm/f.npy /dev/shm/fq.npy > $W/data50.log 2>&1
say "data $(( $(date +%s) - t )) s"
show() { grep -h "measured\|plan \|pq residuals\|chose" $W/$1.err | cut -c1-260 | tee -a $W/summary.txt; }
for tag in ${RUNS:-x1 w1 x2 w2}; do
  case $tag in x*) VLCBIN=.dev/base/bin/vlc.js;; *) VLCBIN=bin/vlc.js;; esac
  C $tag 120 /dev/shm/f.npy --anchors 65536 --gpu 0; show $tag
  [ -f /dev/shm/x1.vlc ] && [ $tag != x1 ] && same x1 $tag
  [ $tag != x1 ] && rm -f /dev/shm/$tag.vlc
done
rm -f /dev/shm/*.vlc
mkdir -p $OUT/keep && cp $W/summary.txt $OUT/keep/ && tar czf $OUT/keep/r32.tgz -C $OUT r32 && rm -rf $W
