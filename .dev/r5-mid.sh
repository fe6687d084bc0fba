#!/usr/bin/env bash
# Device run r5-mid (4 GPUs, same warm machine as r5-early; main after enc31 + bill31): the whole GPU
# suite while 50M x 128 f16 is made (.dev/r3-data.py); then 50M every default on --gpu 0 and on
# --gpu 0,1,2,3 (phases, wall, sha256). Results: $OUT/mid.tgz.
set -uo pipefail
source .gpu/activate.sh
OUT=${OUT:-/tmp/out}; W=/tmp/wmid; mkdir -p $W; trap 'tar czf $OUT/mid.tgz -C $W .' EXIT
(python3 .dev/r3-data.py 50000000 /dev/shm/x.npy /dev/shm/q.npy > $W/data.log 2>&1; echo "data done" >> $W/data.log) &
timeout 300 node_modules/.bin/vitest run --config vitest.gpu.config.ts > $W/gpu-tests.log 2>&1; echo "suite rc $?" >> $W/summary.txt
sed 's/\x1b\[[0-9;]*m//g' $W/gpu-tests.log | grep -E "Test Files|Tests |FAIL|×|AssertionError" | head -30 | tee -a $W/summary.txt
wait
for run in g1:0 g4:0,1,2,3 g1b:0 g4b:0,1,2,3; do
  tag=${run%%:*}; gpus=${run#*:}; rm -f /dev/shm/$tag.vlc
  t=$(date +%s.%N); timeout 90 node bin/vlc.js compress /dev/shm/x.npy -o /dev/shm/$tag.vlc --anchors 65536 --gpu $gpus --json -v > $W/$tag.json 2> $W/$tag.err; rc=$?
  wall=$(awk "BEGIN{print $(date +%s.%N) - $t}")
  python3 -c "import json; d=json.loads(open('$W/$tag.json').readline()); print('$tag rc $rc wall $wall total', round(d['total_seconds'],2), d['codec'], {k: round(v,2) for k,v in d['phases'].items()})" | tee -a $W/summary.txt
  sha256sum /dev/shm/$tag.vlc | cut -c1-16 | tee -a $W/summary.txt; rm -f /dev/shm/$tag.vlc
done
cat $W/summary.txt
