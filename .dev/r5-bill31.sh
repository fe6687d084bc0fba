#!/usr/bin/env bash
# Device run r5 (4 GPUs, issue 31's billion): a streamed compress of 1,000,000,000 x 128 f16 vectors
# in 80 .npy shards in /dev/shm on --gpu 0,1,2,3. Four steps, each its own device command on one
# warm machine (each under 9 minutes; results under $OUT/bill31/, summary.txt there):
#   gen    80 shards of 12,500,000 rows (256 GB) into /dev/shm/shards/ by 8 torch processes (2 a
#          GPU), 10,000 queries in /dev/shm/q.npy; /dev/shm/sub8 and /dev/shm/sub2 hold links to
#          the first 8 shards (100M rows) and the first 2 (25M)
#   check  25M: streamed (--stream) against the whole-file path on 4 GPUs, the same bytes or STOP
#          (the run step then refuses); then the 100M subset streamed on one GPU (its energy: the
#          billion's must be within 1 %)
#   run    the billion: vlc compress '/dev/shm/shards/*.npy' --anchors 65536 --gpu 0,1,2,3
#          --residual int8 --json -v to /tmp/b.vlc, wall, phases, peak RSS
#   search vlc info, and vlc search of the 10,000 queries over /tmp/b.vlc on a GPU, timed
# Usage (repository root, after `source .gpu/activate.sh`): bash .dev/r5-bill31.sh gen|check|run|search
set -uo pipefail
[ -f .gpu/activate.sh ] && source .gpu/activate.sh
step=${1:?usage: bash .dev/r5-bill31.sh gen|check|run|search}
OUT=${OUT:-/tmp/out}; W=$OUT/bill31; mkdir -p $W
SH=/dev/shm/shards; ROWS=12500000; COUNT=80
S() { echo "$*" | tee -a $W/summary.txt; }
# Peak RSS (VmHWM, kB; the largest of the command's process, children and grandchildren: timeout,
# bash, node), polled, and its wall seconds.
peak() {
  local tag=$1; shift; local t0=$(date +%s.%N); "$@" & local pid=$!; local hwm=0
  while kill -0 $pid 2>/dev/null; do
    for p in $pid $(pgrep -P $pid) $(for c in $(pgrep -P $pid); do pgrep -P $c; done); do
      h=$(awk '/VmHWM/{print $2}' /proc/$p/status 2>/dev/null); [ -n "$h" ] && [ "$h" -gt "$hwm" ] && hwm=$h
    done; sleep 0.5
  done
  wait $pid; local rc=$?
  S "$tag rc $rc wall_s $(awk "BEGIN{print $(date +%s.%N) - $t0}") peak_rss_gb $(awk "BEGIN{print $hwm / 1048576}")"
  return $rc
}
# A compress with --json -v: stdout to $W/TAG.json, stderr timestamped to $W/TAG.err.
C() { local tag=$1; shift; peak $tag timeout ${T:-520} node bin/vlc.js compress "$@" --json -v > $W/$tag.json 2> >(python3 -u .dev/ts.py > $W/$tag.err); }
J() { python3 -c "
import json; d=json.loads(open('$W/$1.json').readline())
print('$1', 'total_s', round(d['total_seconds'],2), 'energy', d.get('energy'), 'n', d['n'], 'bytes', d.get('bytes'), 'iters', d.get('iterations'))
print('  phases', {k: round(v,2) for k,v in d['phases'].items()})" 2>&1 | tee -a $W/summary.txt; }

case $step in
gen)
  nvidia-smi -L > $W/gpus.txt; nproc >> $W/gpus.txt; free -g >> $W/gpus.txt; df -h /dev/shm /tmp >> $W/gpus.txt; git log -1 --format=%H >> $W/gpus.txt
  need=$((COUNT * ROWS * 256 + (1 << 30)))
  have=$(df -B1 --output=avail /dev/shm | tail -1)
  [ -d $SH ] && have=$((have + $(du -sb $SH | cut -f1)))
  if [ "$have" -lt "$need" ]; then S "gen: /dev/shm has $have bytes free, $need needed: STOP"; exit 1; fi
  rm -rf $SH; mkdir -p $SH
  t0=$(date +%s.%N)
  for p in 0 1 2 3 4 5 6 7; do
    timeout 500 python3 .dev/r5-shards.py $SH $COUNT $ROWS $p 8 $((p % 4)) > $W/gen-$p.log 2>&1 &
  done
  wait
  S "gen: $(ls $SH/part-*.npy | wc -l) of $COUNT shards, $(du -sh $SH | cut -f1), $(awk "BEGIN{print $(date +%s.%N) - $t0}") s"
  mkdir -p /dev/shm/sub8 /dev/shm/sub2; rm -f /dev/shm/sub8/* /dev/shm/sub2/*
  for k in 0 1 2 3 4 5 6 7; do ln -s $SH/part-000$k.npy /dev/shm/sub8/; done
  for k in 0 1; do ln -s $SH/part-000$k.npy /dev/shm/sub2/; done
  ls -la /dev/shm/q.npy | tee -a $W/summary.txt; free -g | tee -a $W/summary.txt
  ;;
check)
  rm -f /tmp/r5-check-ok
  A="--anchors 65536 --residual int8 --gpu 0,1,2,3"
  T=240 C c25-stream '/dev/shm/sub2/*.npy' -o /dev/shm/c25s.vlc -f $A --stream; J c25-stream
  T=240 C c25-memory '/dev/shm/sub2/*.npy' -o /dev/shm/c25m.vlc -f $A --all-gpus; J c25-memory
  grep -h "streaming [0-9]* rows\|codes are kept" $W/c25-stream.err | tee -a $W/summary.txt
  sha256sum /dev/shm/c25s.vlc /dev/shm/c25m.vlc | tee -a $W/summary.txt
  streamed=$(grep -c "streaming [0-9]* rows in blocks" $W/c25-stream.err); inmem=$(grep -c "streaming [0-9]* rows in blocks" $W/c25-memory.err)
  if [ "$streamed" -lt 1 ] || [ "$inmem" -ne 0 ]; then S "25M: the runs did not take the paths compared (streaming lines: $streamed and $inmem): FAIL"
  elif cmp /dev/shm/c25s.vlc /dev/shm/c25m.vlc; then S "25M x 128 f16, 4 GPUs: streamed = whole-file path (same bytes): PASS"; touch /tmp/r5-check-ok
  else S "25M: streamed and whole-file files DIFFER: FAIL (the run step will refuse)"; fi
  rm -f /dev/shm/c25s.vlc /dev/shm/c25m.vlc
  T=300 C s100 '/dev/shm/sub8/*.npy' -o /dev/shm/s100.vlc -f --anchors 65536 --residual int8 --gpu 0 --stream; J s100
  rm -f /dev/shm/s100.vlc
  ;;
run)
  [ -f /tmp/r5-check-ok ] || { S "run: the check step has not passed: STOP"; exit 1; }
  avail=$(df -B1 --output=avail /tmp | tail -1)
  S "run: /tmp has $avail bytes free (the file: about 132 GB); $(free -g | awk '/Mem/{print "memory free", $4, "available", $7, "GB"}')"
  rm -f /tmp/b.vlc
  T=${BT:-530} C b1 '/dev/shm/shards/*.npy' -o /tmp/b.vlc --anchors 65536 --gpu 0,1,2,3 --residual int8; J b1
  grep -h "streaming [0-9]* rows\|codes are kept\|sample of\|using" $W/b1.err | head -5 | tee -a $W/summary.txt
  grep -h "step:" $W/b1.err | tee -a $W/summary.txt  # each step's start, timestamped
  ls -l /tmp/b.vlc | tee -a $W/summary.txt
  python3 -c "
import json; b=json.loads(open('$W/b1.json').readline())
try: s=json.loads(open('$W/s100.json').readline())
except Exception: s=None
if s: print('energy per vector: billion', b['energy'], '100M on one GPU', s['energy'], 'ratio', b['energy']/s['energy'])" 2>&1 | tee -a $W/summary.txt
  ;;
search)
  t0=$(date +%s.%N); timeout ${IT:-120} node bin/vlc.js info /tmp/b.vlc > $W/info.txt 2>&1; S "info rc $? $(awk "BEGIN{print $(date +%s.%N) - $t0}") s"; head -30 $W/info.txt
  T=500; peak search timeout ${ST:-500} bash -c "node bin/vlc.js search /tmp/b.vlc --queries /dev/shm/q.npy -k 10 --device cuda -v > /dev/shm/res.jsonl 2> >(python3 -u .dev/ts.py > $W/search.err)"
  S "search: $(wc -l < /dev/shm/res.jsonl) result lines; first: $(head -c 300 /dev/shm/res.jsonl)"
  tail -5 $W/search.err | tee -a $W/summary.txt
  ;;
*) echo "unknown step $step"; exit 2 ;;
esac
