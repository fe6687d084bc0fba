#!/usr/bin/env bash
# Device run r31 (one H200, session 13): where the codec choice's 5.8 s go at 50M x 128 f16, every
# default --anchors 65536 --gpu 0: one run under node --cpu-prof (the host's view; GPU waits show as
# idle or in the sync calls). $OUT/keep/summary.txt, the profile gzipped, the -v log.
set -uo pipefail
source .gpu/activate.sh
OUT=${OUT:-/tmp/out}; W=$OUT/r31; mkdir -p $W $OUT/keep
source .dev/r6-lib.sh
say "commit $(cat .dev/commit 2>/dev/null) + work tree $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
python3 .dev/r3-data.py 50000000 /dev/shm/f.npy /dev/shm/fq.npy > $W/data50.log 2>&1
NODE_ARGS="--cpu-prof --cpu-prof-dir=$W/prof --cpu-prof-interval 200" C p1 120 /dev/shm/f.npy --anchors 65536 --gpu 0
gzip -c $W/prof/*.cpuprofile > $OUT/keep/p1.cpuprofile.gz
cp $W/p1.err $OUT/keep/ ; cp $W/summary.txt $OUT/keep/
rm -f /dev/shm/*.vlc
