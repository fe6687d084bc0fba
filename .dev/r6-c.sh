#!/usr/bin/env bash
# Device run r6-c (one GPU of the nvidia-h200-x2 kind): where the host's time goes in 100M x 128 f16,
# --anchors 65536 --residual none --gpu 0 (issue 31: every phase but reading under 20 s): the run
# under node --cpu-prof with -v lines timestamped (ts.py); then .dev/narrow-bench.mjs (the write
# layout's first-touch cost on this CPU). Results: $OUT/r6c.tgz.
set -uo pipefail
source .gpu/activate.sh
OUT=${OUT:-/tmp/out}; W=/tmp/r6c; mkdir -p $W/prof $OUT; trap 'tar czf $OUT/r6c.tgz -C $W .' EXIT
T0=$(date +%s)
[ -f /dev/shm/h.npy ] || python3 .dev/r3-data.py 100000000 /dev/shm/h.npy /dev/shm/hq.npy > $W/data100.log 2>&1
echo "data after $(( $(date +%s) - T0 )) s" >> $W/summary.txt
t=$(date +%s.%N)
timeout 150 node --cpu-prof --cpu-prof-dir=$W/prof bin/vlc.js compress /dev/shm/h.npy -o /dev/shm/h1.vlc --anchors 65536 --residual none --gpu 0 --json -v > $W/h1.json 2> >(python3 -u .dev/ts.py > $W/h1.err)
echo "h1 rc $? wall $(awk "BEGIN{print $(date +%s.%N) - $t}")" >> $W/summary.txt
sleep 1; rm -f /dev/shm/h1.vlc
[ -n "${NARROW:-}" ] && node .dev/narrow-bench.mjs >> $W/summary.txt 2>&1
cat $W/summary.txt; tail -5 $W/h1.err
