#!/usr/bin/env bash
# Device run r9 (4 GPUs, nvidia-h200-x4), one command: the first 100M rows of the billion's shards
# (the same generator and seeds: .dev/r5-shards.py), streamed with --residual int8 on --gpu 0 and on
# --gpu 0,1,2,3 after the codes pass stopped joining each block's codes into a copy (fba472e) and
# touches their pages ahead; then vlc search of the 10,000 queries over that file on one GPU and on
# four (the rows split over the GPUs), the same results?; then the GPU suite with what time is left.
# Results: $OUT/r9.tgz (summary.txt there).
set -uo pipefail
source .gpu/activate.sh
OUT=${OUT:-/tmp/out}; W=/tmp/r9; mkdir -p $W $OUT
trap 'tar czf $OUT/r9.tgz -C $W .' EXIT
T0=$(date +%s)
source .dev/r6-lib.sh
{ nvidia-smi -L; nproc; free -g; git log -1 --format=%H; } > $W/machine.txt 2>&1
SH=/dev/shm/shards; mkdir -p $SH /dev/shm/sub8
t=$(date +%s.%N)
for p in 0 1 2 3 4 5 6 7; do python3 .dev/r5-shards.py $SH 8 12500000 $p 8 $((p % 4)) > $W/gen-$p.log 2>&1 & done; wait
for k in 0 1 2 3 4 5 6 7; do ln -sf $SH/part-000$k.npy /dev/shm/sub8/; done
say "gen: $(ls $SH/*.npy | wc -l) shards in $(awk "BEGIN{print $(date +%s.%N) - $t}") s"
C s1 150 '/dev/shm/sub8/*.npy' --anchors 65536 --residual int8 --gpu 0 --stream
C s4 150 '/dev/shm/sub8/*.npy' --anchors 65536 --residual int8 --gpu 0,1,2,3 --stream
same s1 s4
grep -h "codes are kept" $W/s1.err | head -1 | tee -a $W/summary.txt
for g in 0 0,1,2,3; do
  tag=q$(echo $g | tr -d ,); t=$(date +%s.%N)
  timeout 150 node bin/vlc.js search /dev/shm/s1.vlc --queries /dev/shm/q.npy -k 10 --device cuda --gpu $g -v > /dev/shm/$tag.txt 2> >(python3 -u .dev/ts.py > $W/$tag.err)
  say "search --gpu $g rc $? wall $(awk "BEGIN{print $(date +%s.%N) - $t}") lines $(wc -l < /dev/shm/$tag.txt) sha $(sha256sum < /dev/shm/$tag.txt | cut -c1-16)"
  grep -h "step:\|search done\|rows .* on cuda\|split" $W/$tag.err | head -12 | sed 's/^/    /' | tee -a $W/summary.txt
done
cmp -s /dev/shm/q0.txt /dev/shm/q0123.txt && say "search: --gpu 0,1,2,3 = --gpu 0 (the same results)" || say "search: results DIFFER between --gpu 0 and --gpu 0,1,2,3"
left=$(( 585 - ($(date +%s) - T0) )); [ $left -gt 120 ] && suite $left || say "GPU suite not run: $left s left"
say "done after $(( $(date +%s) - T0 )) s"
