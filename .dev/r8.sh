#!/usr/bin/env bash
# Device run r8 (4 GPUs, nvidia-h200-x4): the billion again after the streamed blocks' anchors go up
# once a GPU (BlockAnchors), then mpirun -n 4 over the same shards: the same bytes? Steps, each its
# own device command on one warm machine (results in $OUT/r8-STEP.tgz, summary.txt there):
#   a   the 80 shards into /dev/shm (.dev/r5-bill31.sh gen); the 100M subset streamed on --gpu 0,
#       int8, under node --cpu-prof (where the main thread's time goes); the billion on
#       --gpu 0,1,2,3 --residual int8 to /tmp/b.vlc
#   b   /tmp/b.vlc hashed in chunks (.dev/chunk-sha.py); vlc info and vlc search of the 10,000
#       queries over it, timed; the file removed (the disk holds one)
#   c   mpirun -n 4 over the same shards to /tmp/m.vlc. The machine cannot hold the 239 GiB of
#       shards in /dev/shm, the ranks' own copy of their rows (239 GiB) and the codes (rank 0 every
#       row's, 119 GiB, each rank its own) at once: once every rank has read its rows (rank 0's
#       "training on a sample" line follows a collective over the rows read), the shards are
#       removed, as pages of an input on disk would be evicted. Then m.vlc hashed the same way, and
#       the GPU suite.
# Usage (repository root): bash .dev/r8.sh a|b|c
set -uo pipefail
source .gpu/activate.sh
step=$1; OUT=${OUT:-/tmp/out}; W=/tmp/r8; mkdir -p $W $OUT
trap 'cp -r /tmp/b31/bill31 $W/ 2>/dev/null; tar czf $OUT/r8-$step.tgz -C $W --exclude=prof .; [ -d $W/prof ] && tar czf $OUT/r8-prof.tgz -C $W prof' EXIT
T0=$(date +%s)
source .dev/r6-lib.sh
mem() { while sleep 2; do free -b | awk -v t=$(date +%s) '/Mem/{print t, $3, $7}'; done; }
case $step in
a)
  { nvidia-smi -L; nproc; free -g; df -h /dev/shm /tmp; git log -1 --format=%H; } > $W/machine.txt 2>&1
  OUT=/tmp/b31 bash .dev/r5-bill31.sh gen; say "gen done after $(( $(date +%s) - T0 )) s"
  t=$(date +%s.%N)
  timeout 150 node --cpu-prof --cpu-prof-dir=$W/prof bin/vlc.js compress '/dev/shm/sub8/*.npy' -o /dev/shm/s100.vlc -f --anchors 65536 --residual int8 --gpu 0 --stream --json -v > $W/s100.json 2> >(python3 -u .dev/ts.py > $W/s100.err)
  say "s100 (--cpu-prof) rc $? wall $(awk "BEGIN{print $(date +%s.%N) - $t}")"
  python3 -c "import json; d=json.loads(open('$W/s100.json').readline()); print('s100 total', d['total_seconds'], 'energy', d['energy'], {k: round(v,2) for k,v in d['phases'].items()})" | tee -a $W/summary.txt
  rm -f /dev/shm/s100.vlc
  touch /tmp/r5-check-ok  # r7's check step (25M streamed = whole file) passed; r8 changes no bytes (test/cuda-host/residual)
  BT=$(( 585 - ($(date +%s) - T0) )) OUT=/tmp/b31 bash .dev/r5-bill31.sh run
  ;;
b)
  t=$(date +%s.%N); python3 .dev/chunk-sha.py /tmp/b.vlc 32 > $W/b.sha; say "b.vlc $(cat $W/b.sha) in $(awk "BEGIN{print $(date +%s.%N) - $t}") s"
  IT=200 ST=300 OUT=/tmp/b31 bash .dev/r5-bill31.sh search
  rm -f /tmp/b.vlc
  ;;
c)
  [ -f $W/b.sha ] || cp .dev/r8-b.sha $W/b.sha  # step b's hash, carried when the machine is a fresh one
  [ -d /dev/shm/shards ] || { OUT=/tmp/b31 bash .dev/r5-bill31.sh gen; say "shards made again (a fresh machine)"; }
  mem > $W/mem.log & MP=$!
  t=$(date +%s.%N)
  timeout 480 mpirun -n 4 --allow-run-as-root --oversubscribe node bin/vlc.js compress '/dev/shm/shards/*.npy' -o /tmp/m.vlc --anchors 65536 --residual int8 --distributed --json -v > $W/m4.json 2> >(python3 -u .dev/ts.py > $W/m4.err) &
  J=$!
  while kill -0 $J 2>/dev/null && ! grep -q "training on a sample" $W/m4.err 2>/dev/null; do sleep 0.5; done
  rm -rf /dev/shm/shards; say "shards removed $(awk "BEGIN{print $(date +%s.%N) - $t}") s in; $(free -g | awk '/Mem/{print "used", $3, "available", $7, "GB"}')"
  wait $J; say "mpirun -n 4 billion rc $? wall $(awk "BEGIN{print $(date +%s.%N) - $t}")"
  kill $MP
  awk 'BEGIN{m=0} {if ($2>m) m=$2} END{print "peak used memory (free -b, every 2 s) GB", m/1e9}' $W/mem.log | tee -a $W/summary.txt
  python3 -c "import json; d=json.loads(open('$W/m4.json').readline()); print('m4 total', d['total_seconds'], 'energy', d['energy'], 'bytes', d['bytes'], {k: round(v,2) for k,v in d['phases'].items()})" | tee -a $W/summary.txt
  tail -4 $W/m4.err | tee -a $W/summary.txt
  ls -l /tmp/m.vlc | tee -a $W/summary.txt
  t=$(date +%s.%N); python3 .dev/chunk-sha.py /tmp/m.vlc 32 > $W/m.sha; say "m.vlc $(cat $W/m.sha) in $(awk "BEGIN{print $(date +%s.%N) - $t}") s"
  [ -f $W/b.sha ] && { cmp -s $W/b.sha $W/m.sha && say "SAME BYTES: mpirun -n 4 = --gpu 0,1,2,3 over the billion" || say "DIFFERENT: mpirun -n 4 vs --gpu 0,1,2,3"; }
  rm -f /tmp/m.vlc
  left=$(( 590 - ($(date +%s) - T0) )); [ $left -gt 120 ] && suite $left || say "GPU suite not run: $left s left"
  ;;
esac
say "step $step done after $(( $(date +%s) - T0 )) s"
