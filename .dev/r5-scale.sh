#!/usr/bin/env bash
# Device run r5-scale (4 GPUs, warm after r5-mid): 200,000,000 x 128 f16 as 16 shards of 12.5M
# (.dev/r5-shards.py, 8 processes), then on --gpu 0,1,2,3 --anchors 65536 --residual int8: the
# whole-file path and the streamed path (--stream), wall, phases, peak RSS of the node process,
# sha256 (the same bytes). Results: $OUT/scale.tgz.
set -uo pipefail
source .gpu/activate.sh
OUT=${OUT:-/tmp/out}; W=/tmp/wscale; mkdir -p $W; trap 'tar czf $OUT/scale.tgz -C $W .' EXIT
rm -f /dev/shm/x.npy /dev/shm/q.npy /dev/shm/*.vlc
SH=/dev/shm/s200; rm -rf $SH; mkdir -p $SH
t0=$(date +%s.%N)
for p in 0 1 2 3 4 5 6 7; do timeout 200 python3 .dev/r5-shards.py $SH 16 12500000 $p 8 $((p % 4)) > $W/gen-$p.log 2>&1 & done; wait
echo "gen 16 shards (8 processes): $(awk "BEGIN{print $(date +%s.%N) - $t0}") s; $(du -sh $SH | cut -f1)" | tee -a $W/summary.txt
free -g >> $W/summary.txt
run() {
  local tag=$1; shift; local o=/dev/shm/$tag.vlc; rm -f $o
  local t=$(date +%s.%N)
  timeout 260 node bin/vlc.js compress "$SH/*.npy" -o $o --anchors 65536 --gpu 0,1,2,3 --residual int8 --json -v "$@" > $W/$tag.json 2> $W/$tag.err &
  local pid=$! hwm=0 h; sleep 1
  local npid=$(pgrep -P $pid node | head -1); [ -z "$npid" ] && npid=$pid
  while kill -0 $pid 2>/dev/null; do h=$(awk '/VmHWM/{print $2}' /proc/$npid/status 2>/dev/null); [ -n "$h" ] && [ "$h" -gt "$hwm" ] && hwm=$h; sleep 0.5; done
  wait $pid; local rc=$?
  local wall=$(awk "BEGIN{print $(date +%s.%N) - $t}")
  python3 -c "import json; d=json.loads(open('$W/$tag.json').readline()); print('$tag rc $rc wall $wall peak_rss_gb', round($hwm/1048576,1), 'total', round(d['total_seconds'],2), d['codec'], 'energy', d.get('energy'), {k: round(v,2) for k,v in d['phases'].items()})" 2>&1 | tee -a $W/summary.txt
  [ -f $o ] && sha256sum $o | cut -c1-16 | tee -a $W/summary.txt
}
run m200 --all-gpus
run s200 --all-gpus --stream
cmp /dev/shm/m200.vlc /dev/shm/s200.vlc && echo "200M: streamed = whole-file (same bytes)" | tee -a $W/summary.txt
rm -f /dev/shm/*.vlc
cat $W/summary.txt
