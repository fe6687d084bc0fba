#!/usr/bin/env bash
# Device run r5-scale2 (same warm machine, after r5-scale; the 200M shards still in /dev/shm/s200):
# --gpu 0 alone and mpirun -n 4 (a GPU a rank) on the same input and settings as r5-scale's m200.
set -uo pipefail
source .gpu/activate.sh
OUT=${OUT:-/tmp/out}; W=/tmp/wscale2; mkdir -p $W; trap 'tar czf $OUT/scale2.tgz -C $W .' EXIT
SH=/dev/shm/s200; ls $SH | wc -l | tee -a $W/summary.txt
run() {
  local tag=$1 T=$2; shift 2; local o=/dev/shm/$tag.vlc; rm -f $o
  local t=$(date +%s.%N)
  timeout $T "$@" -o $o --anchors 65536 --residual int8 --json -v > $W/$tag.json 2> $W/$tag.err &
  local pid=$!; sleep 2
  while kill -0 $pid 2>/dev/null; do for p in $(pgrep -f "bin/vlc.js compress"); do h=$(awk '/VmHWM/{print $2}' /proc/$p/status 2>/dev/null); [ -n "$h" ] && echo "$p $h"; done >> $W/$tag.rss; sleep 1; done
  wait $pid; local rc=$?
  local wall=$(awk "BEGIN{print $(date +%s.%N) - $t}")
  local hwm=$(sort -k2 -n $W/$tag.rss 2>/dev/null | tail -1 | cut -d' ' -f2)
  python3 -c "import json; d=json.loads(open('$W/$tag.json').readline()); print('$tag rc $rc wall $wall max_process_rss_gb', round(${hwm:-0}/1048576,1), 'total', round(d['total_seconds'],2), d['codec'], 'energy', d.get('energy'), {k: round(v,2) for k,v in d['phases'].items()})" 2>&1 | tee -a $W/summary.txt
  [ -f $o ] && sha256sum $o | cut -c1-16 | tee -a $W/summary.txt
}
run g1 230 node bin/vlc.js compress "$SH/*.npy" --gpu 0
rm -f /dev/shm/g1.vlc
run m4 200 mpirun -n 4 --allow-run-as-root --oversubscribe node bin/vlc.js compress "$SH/*.npy" --distributed
rm -f /dev/shm/*.vlc
cat $W/summary.txt
