#!/usr/bin/env bash
# Device run r31 (4 GPUs, issue 31's "never slower" under MPI): mpirun -n 4 (one GPU a rank) against
# --gpu 0 at 10,000,000 x 128 f16, --anchors 16384, every other option default (the default goal),
# then --residual int8: the same bytes, wall and phases of each, and the peak RSS of every process
# (rank 0 no longer gathers every row: it should hold its own rows, the ~120,000 rows it measures
# and the codes). Runs are interleaved (1, 4, 1, 4) so that page-cache and clock effects fall on
# both. Also the MPI tests and the in-process spread-encoder test on the device's CPUs.
# Usage (device tool, repository root): bash .dev/r31-run.sh   (results: $OUT/r31.tgz, summary.txt)
set -uo pipefail
[ -f .gpu/activate.sh ] && source .gpu/activate.sh
OUT=${OUT:-/tmp/out}; W=/tmp/w31; mkdir -p "$OUT" $W
trap 'tar czf $OUT/r31.tgz -C $W .' EXIT
# Peak RSS (VmHWM, kB) of the command's node processes (the ranks under mpirun), polled.
peak() {
  local tag=$1; shift; local t0=$(date +%s.%N); "$@" & local pid=$!
  declare -A hwm=()
  while kill -0 $pid 2>/dev/null; do
    for p in $pid $(pgrep -P $pid) $(for c in $(pgrep -P $pid); do pgrep -P $c; done); do
      h=$(awk '/VmHWM/{print $2}' /proc/$p/status 2>/dev/null); c=$(tr '\0' ' ' < /proc/$p/cmdline 2>/dev/null | cut -c1-40)
      [ -n "$h" ] && [[ "$c" == *node* ]] && hwm[$p]=$h
    done; sleep 0.2
  done
  wait $pid; local rc=$?
  echo "$tag rc $rc wall_s $(awk "BEGIN{print $(date +%s.%N) - $t0}") peak_rss_kb_per_node_process ${hwm[*]}" | tee -a $W/peaks.txt
}
C() { local tag=$1; shift; peak $tag node bin/vlc.js compress "$@" --json -v > $W/$tag.json 2> >(python3 -u .dev/ts.py > $W/$tag.err); }
M() { local tag=$1; shift; peak $tag mpirun --allow-run-as-root -n 4 node bin/vlc.js compress "$@" --distributed --json -v > $W/$tag.json 2> >(python3 -u .dev/ts.py > $W/$tag.err); }
S() { python3 -c "import json; d=json.loads(open('$W/$1.json').readline()); print('$1', round(d['total_seconds'],2), d['codec'], {k: round(v,2) for k,v in d['phases'].items()})" | tee -a $W/summary.txt; }

nvidia-smi -L > $W/gpus.txt; nproc >> $W/gpus.txt; git log -1 --format=%H >> $W/gpus.txt 2>/dev/null
timeout 400 node_modules/.bin/vitest run test/mpi test/api/rank-encode.test.ts test/api/rank-share.test.ts > $W/tests.log 2>&1
sed 's/\x1b\[[0-9;]*m//g' $W/tests.log | grep -E "Test Files|Tests |FAIL|×" | head -20 | tee -a $W/summary.txt

python3 .dev/r3-data.py 10000000 /dev/shm/t.npy /dev/shm/q.npy > /dev/null 2>&1
for rep in 1 2; do
  C t1-$rep /dev/shm/t.npy -o /dev/shm/t1.vlc -f --anchors 16384 --gpu 0; S t1-$rep
  M m4-$rep /dev/shm/t.npy -o /dev/shm/m4.vlc -f --anchors 16384; S m4-$rep
  cmp /dev/shm/t1.vlc /dev/shm/m4.vlc && echo "10M default, rep $rep: --gpu 0 = mpirun -n 4" | tee -a $W/summary.txt
done
sha256sum /dev/shm/t1.vlc | tee -a $W/summary.txt
grep -h "gathered\|gathers every row" $W/m4-1.err | tee -a $W/summary.txt
C i1 /dev/shm/t.npy -o /dev/shm/i1.vlc -f --anchors 16384 --gpu 0 --residual int8; S i1
M i4 /dev/shm/t.npy -o /dev/shm/i4.vlc -f --anchors 16384 --residual int8; S i4
cmp /dev/shm/i1.vlc /dev/shm/i4.vlc && echo "10M int8: --gpu 0 = mpirun -n 4" | tee -a $W/summary.txt
rm -f /dev/shm/t1.vlc /dev/shm/m4.vlc /dev/shm/i1.vlc /dev/shm/i4.vlc /dev/shm/t.npy /dev/shm/q.npy
cat $W/peaks.txt
