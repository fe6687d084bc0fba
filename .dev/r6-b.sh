#!/usr/bin/env bash
# Device run r6-b (2 GPUs, nvidia-h200-x2, after r6-a on the same warm machine): issue 31's sizes
# that fit two GPUs. 50M x 128 f16 (r3-data.py), --anchors 65536, every default, on --gpu 0 and
# --gpu 0,1 twice each (wall, phases and their sum, sha256); 100M x 128 f16 on one GPU, every
# default but --residual none (every phase but reading under 20 s is the goal). Results: $OUT/r6b.tgz.
set -uo pipefail
source .gpu/activate.sh
OUT=${OUT:-/tmp/out}; W=/tmp/r6b; mkdir -p $W $OUT; trap 'tar czf $OUT/r6b.tgz -C $W .' EXIT
T0=$(date +%s)
say() { echo "$*" | tee -a $W/summary.txt; }
rm -rf /dev/shm/shards /dev/shm/*.vlc /dev/shm/e.npy
(python3 .dev/r3-data.py 100000000 /dev/shm/h.npy /dev/shm/hq.npy > $W/data100.log 2>&1; echo "100M made after $(( $(date +%s) - T0 )) s" >> $W/data100.log) &
G=$!
timeout 100 python3 .dev/r3-data.py 50000000 /dev/shm/x.npy /dev/shm/xq.npy > $W/data50.log 2>&1; say "50M made rc $? after $(( $(date +%s) - T0 )) s"
C() {
  local tag=$1 tmo=$2; shift 2; local o=/dev/shm/$tag.vlc; rm -f $o
  local t=$(date +%s.%N)
  timeout $tmo node bin/vlc.js compress "$@" -o $o --json -v > $W/$tag.json 2> $W/$tag.err
  local rc=$? wall=$(awk "BEGIN{print $(date +%s.%N) - $t}")
  local sha=$( [ -f $o ] && sha256sum $o | cut -c1-16 || echo none); rm -f $o
  python3 -c "
import json
try:
  d=json.loads(open('$W/$tag.json').readline()); ph=d['phases']; s=sum(ph.values())
  print('$tag rc $rc wall %.2f total %.2f phases_sum %.2f codec %s sha %s' % ($wall, d['total_seconds'], s, d['codec'], '$sha'))
  print('   ', {k: round(v,2) for k,v in ph.items()})
except Exception as e: print('$tag rc $rc wall $wall no json (%s) sha $sha' % e)" | tee -a $W/summary.txt
  grep -h "uses [0-9]* of\|fewer GPUs\|one GPU" $W/$tag.err | head -3 | sed 's/^/    /' | tee -a $W/summary.txt
  [ $rc -eq 0 ] || tail -3 $W/$tag.err | sed 's/^/    ! /' | tee -a $W/summary.txt
}
X="/dev/shm/x.npy --anchors 65536"
C g1 90 $X --gpu 0; C g2 90 $X --gpu 0,1; C g1b 90 $X --gpu 0; C g2b 90 $X --gpu 0,1
rm -f /dev/shm/x.npy
wait $G; tail -1 $W/data100.log | tee -a $W/summary.txt
C h1 150 /dev/shm/h.npy --anchors 65536 --residual none --gpu 0
say "done after $(( $(date +%s) - T0 )) s"
