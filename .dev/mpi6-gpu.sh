#!/usr/bin/env bash
# Device run for branch mpi6 (issue 31: `mpirun -n 2` slower than `--gpu 0` after training), on
# nvidia-h200-x2: the GPU suite (the CUDA pass's partial sums now reuse their host arrays), then
# 10M x 128 f16 (r3-data.py), --anchors 16384, with int8, bits and every default, on --gpu 0 and
# under mpirun -n 2, twice, interleaved (the same bytes; wall, phases, median ms per iteration;
# the -v lines this branch adds: the ranks' cores, quality's parts, the write's checksum).
# Results: $OUT/mpi6.tgz (summary.txt first).
set -uo pipefail
source .gpu/activate.sh
OUT=${OUT:-/tmp/out}; W=/tmp/mpi6; mkdir -p $W $OUT; trap 'tar czf $OUT/mpi6.tgz -C $W .' EXIT
T0=$(date +%s)
say() { echo "$*" | tee -a $W/summary.txt; }
{ nvidia-smi -L; nproc; free -g; git log -1 --format=%H; } > $W/machine.txt 2>&1
(python3 .dev/r3-data.py 10000000 /dev/shm/e.npy /dev/shm/eq.npy > $W/data10.log 2>&1) &
G=$!
timeout 330 node_modules/.bin/vitest run --config vitest.gpu.config.ts > $W/gpu-suite.log 2>&1
say "GPU suite rc $? after $(( $(date +%s) - T0 )) s"
sed 's/\x1b\[[0-9;]*m//g' $W/gpu-suite.log | grep -E "Test Files|Tests |FAIL|×|AssertionError" | head -40 | tee -a $W/summary.txt
wait $G
C() {
  local tag=$1; shift; local o=/dev/shm/$tag.vlc; rm -f $o
  local t=$(date +%s.%N)
  if [ "$1" = mpirun ]; then shift; timeout 90 mpirun -n 2 --allow-run-as-root --oversubscribe node bin/vlc.js compress "$@" -o $o --distributed --json -v > $W/$tag.json 2> >(python3 .dev/ts.py > $W/$tag.err)
  else timeout 90 node bin/vlc.js compress "$@" -o $o --json -v > $W/$tag.json 2> >(python3 .dev/ts.py > $W/$tag.err); fi
  local rc=$? wall=$(awk "BEGIN{print $(date +%s.%N) - $t}"); sleep 0.5
  local sha=$( [ -f $o ] && sha256sum $o | cut -c1-16 || echo none)
  python3 -c "
import json, re, statistics
try:
  d=json.loads(open('$W/$tag.json').readline()); ph=d['phases']
  ms=[float(m) for m in re.findall(r'iteration iter=\d+ .* ms=([0-9.]+)', open('$W/$tag.err').read())]
  print('$tag rc $rc wall %.2f total %.2f codec %s sha %s iter_ms_median %.1f' % ($wall, d['total_seconds'], d['codec'], '$sha', statistics.median(ms) if ms else 0))
  print('   ', {k: round(v,2) for k,v in ph.items()})
except Exception as e: print('$tag rc $rc wall $wall no json (%s) sha $sha' % e)" | tee -a $W/summary.txt
  grep -h "residuals of\|on cores\|quality:\|bytes of .vlc\|gathered" $W/$tag.err | head -8 | sed 's/^/    /' | tee -a $W/summary.txt
  [ $rc -eq 0 ] || tail -3 $W/$tag.err | sed 's/^/    ! /' | tee -a $W/summary.txt
}
same() { local a=/dev/shm/$1.vlc; shift; for b in "$@"; do cmp -s $a /dev/shm/$b.vlc && say "  same bytes: $(basename $a .vlc) = $b" || say "  DIFFERENT or missing: $(basename $a .vlc) vs $b"; done; }
E="/dev/shm/e.npy --anchors 16384"
for round in 1 2; do
  for c in int8 bits; do C $c-g1-$round $E --residual $c --gpu 0; C $c-m2-$round mpirun $E --residual $c; same $c-g1-$round $c-m2-$round; done
  C def-g1-$round $E --gpu 0; C def-m2-$round mpirun $E; same def-g1-$round def-m2-$round
done
say "done after $(( $(date +%s) - T0 )) s"
