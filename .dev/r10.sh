#!/usr/bin/env bash
# Device run r10 (4 GPUs, nvidia-h200-x4): the billion again, then vlc search over it now that the
# codes go up from page-locked buffers, read several blocks at once on libuv's threads and every
# GPU's range at the same time (backend/cuda/upload-blocks.ts). Steps, each its own device command
# on one warm machine (results in $OUT/r10-STEP.tgz, summary.txt there):
#   a   the 80 shards into /dev/shm (.dev/r5-bill31.sh gen); the billion streamed on --gpu 0,1,2,3
#       --residual int8 to /tmp/b.vlc (after the codes pass keeps the encoder's pieces: fba472e),
#       hashed in chunks: the same bytes as r8's (.dev/r8-b.sha)?
#   b   the shards removed (search reads /tmp/b.vlc alone); vlc info; vlc search of the 10,000
#       queries over the billion on --gpu 0,1,2,3 and on --gpu 0, timed: the same results?; the GPU
#       suite with what time is left
# Usage (repository root): bash .dev/r10.sh a|b
set -uo pipefail
source .gpu/activate.sh
step=$1; OUT=${OUT:-/tmp/out}; W=/tmp/r10; mkdir -p $W $OUT
trap 'cp -r /tmp/b31/bill31 $W/ 2>/dev/null; tar czf $OUT/r10-$step.tgz -C $W .' EXIT
T0=$(date +%s)
source .dev/r6-lib.sh
case $step in
a)
  { nvidia-smi -L; nproc; free -g; df -h /dev/shm /tmp; git log -1 --format=%H; } > $W/machine.txt 2>&1
  OUT=/tmp/b31 bash .dev/r5-bill31.sh gen; say "gen done after $(( $(date +%s) - T0 )) s"
  touch /tmp/r5-check-ok  # r7's check step (25M streamed = whole file) passed; the r8-b.sha comparison below checks the bytes
  BT=$(( 540 - ($(date +%s) - T0) )) OUT=/tmp/b31 bash .dev/r5-bill31.sh run
  t=$(date +%s.%N); python3 .dev/chunk-sha.py /tmp/b.vlc 32 > $W/b.sha; say "b.vlc $(cat $W/b.sha | head -c 80) in $(awk "BEGIN{print $(date +%s.%N) - $t}") s"
  cmp -s $W/b.sha .dev/r8-b.sha && say "SAME BYTES as r8's billion (.dev/r8-b.sha)" || say "DIFFERENT from r8's billion (.dev/r8-b.sha)"
  ;;
b)
  rm -rf /dev/shm/shards /dev/shm/sub8 /dev/shm/sub2; say "$(free -g | awk '/Mem/{print "memory used", $3, "available", $7, "GB"}'); $(ls -l /tmp/b.vlc)"
  t=$(date +%s.%N); timeout 90 node bin/vlc.js info /tmp/b.vlc > $W/info.txt 2>&1; say "info rc $? $(awk "BEGIN{print $(date +%s.%N) - $t}") s"
  for g in 0,1,2,3 0; do
    tag=q$(echo $g | tr -d ,); t=$(date +%s.%N); left=$(( 560 - ($(date +%s) - T0) ))
    timeout $left node bin/vlc.js search /tmp/b.vlc --queries /dev/shm/q.npy -k 10 --device cuda --gpu $g -v > /dev/shm/$tag.txt 2> >(python3 -u .dev/ts.py > $W/$tag.err)
    say "search --gpu $g rc $? wall $(awk "BEGIN{print $(date +%s.%N) - $t}") (limit $left s) lines $(wc -l < /dev/shm/$tag.txt) sha $(sha256sum < /dev/shm/$tag.txt | cut -c1-16)"
    grep -h "step:\|search done\|on cuda\|GB of codes\|checked\|searched" $W/$tag.err | head -14 | sed 's/^/    /' | tee -a $W/summary.txt
    tail -2 $W/$tag.err | sed 's/^/    /' | tee -a $W/summary.txt
  done
  cmp -s /dev/shm/q0.txt /dev/shm/q0123.txt && say "search: --gpu 0,1,2,3 = --gpu 0 (the same results)" || say "search: results DIFFER (or one did not finish) between --gpu 0 and --gpu 0,1,2,3"
  rm -f /tmp/b.vlc
  left=$(( 590 - ($(date +%s) - T0) )); [ $left -gt 130 ] && suite $left || say "GPU suite not run: $left s left"
  ;;
esac
say "step $step done after $(( $(date +%s) - T0 )) s"
