#!/usr/bin/env bash
# Device run r5-enc31 (4 GPUs, branch enc31: residual encoding on every GPU of --gpu and every MPI
# rank, each on its own rows). 10,000,000 x 128 f16 (.dev/r3-data.py), --anchors 16384, with
# --residual int8, --residual bits and every default (the default goal chose `none` at this size in
# r4d), each on --gpu 0, --gpu 0,1,2,3 --all-gpus and mpirun -n 4 (a GPU a rank): the sha256 of every
# output (the same bytes within a codec), the residual phase and total_seconds of each, and the -v
# lines of the encoders (upload, plan, codes, download per GPU). Then the GPU tests of the branch's
# files (test/gpu/residual.test.ts, test/gpu/sharded.test.ts) in the time left.
# At most about 4 minutes: a timeout on each step; no run starts after 140 s, the tests end by 230 s (at least 30 s of them).
# Usage (repository root, after `source .gpu/activate.sh`, $OUT set): bash .dev/r5-enc31.sh
set -uo pipefail
[ -f .gpu/activate.sh ] && source .gpu/activate.sh
OUT=${OUT:-/tmp/out}/enc31; W=/tmp/w-enc31; mkdir -p "$OUT" $W
SUM=$OUT/summary.txt; : > $SUM
T0=$(date +%s)
trap 'cp $W/*.err $W/*.json $W/*.log $OUT/ 2>/dev/null' EXIT
say() { echo "$*" | tee -a $SUM; }
left() { [ $(( $(date +%s) - T0 )) -lt 140 ]; }
nvidia-smi -L > $OUT/gpus.txt 2>&1; nproc >> $OUT/gpus.txt; git log -1 --format=%H >> $OUT/gpus.txt 2>/dev/null

timeout 40 python3 .dev/r3-data.py 10000000 /dev/shm/e31.npy /dev/shm/e31q.npy > $W/data.log 2>&1; say "data rc $? after $(( $(date +%s) - T0 )) s"

# One compress: tag, how (g1 | g4 | m4), then compress options. Its phases from --json, its sha256.
run() {
  local tag=$1 how=$2; shift 2
  left || { say "$tag: skipped (time)"; return; }
  local o=/dev/shm/$tag.vlc; rm -f $o
  local t=$(date +%s.%N)
  case $how in
    g1) timeout 60 node bin/vlc.js compress /dev/shm/e31.npy -o $o --anchors 16384 --gpu 0 "$@" --json -v > $W/$tag.json 2> $W/$tag.err ;;
    g4) timeout 60 node bin/vlc.js compress /dev/shm/e31.npy -o $o --anchors 16384 --gpu 0,1,2,3 --all-gpus "$@" --json -v > $W/$tag.json 2> $W/$tag.err ;;
    m4) timeout 60 mpirun -n 4 --allow-run-as-root --oversubscribe node bin/vlc.js compress /dev/shm/e31.npy -o $o --anchors 16384 "$@" --distributed --json -v > $W/$tag.json 2> $W/$tag.err ;;
  esac
  local rc=$? wall=$(awk "BEGIN{print $(date +%s.%N) - $t}")
  local sha=$( [ -f $o ] && sha256sum $o | cut -c1-16 || echo none)
  python3 - "$W/$tag.json" "$tag" "$rc" "$wall" "$sha" <<'EOF' | tee -a $SUM
import json, sys
f, tag, rc, wall, sha = sys.argv[1:]
try:
    d = json.loads(open(f).readline())
    ph = d['phases']
    print(f"{tag}: rc {rc} wall {float(wall):.2f} s, total_seconds {d['total_seconds']:.2f}, codec {d['codec']}, residual {ph.get('residual', 0):.2f} s, write {ph.get('write', 0):.2f}, quality {ph.get('quality', 0):.2f}, sha256 {sha}")
except Exception as e:
    print(f"{tag}: rc {rc} wall {float(wall):.2f} s, no --json result ({e}), sha256 {sha}")
EOF
  grep -h "residuals of\|on the host: they need" $W/$tag.err | sed 's/^/    /' | head -8 | tee -a $SUM
  [ $rc -eq 0 ] || tail -3 $W/$tag.err | sed 's/^/    ! /' | tee -a $SUM
}
same() { # tags of one codec: the same bytes?
  local a=/dev/shm/$1.vlc; shift
  for b in "$@"; do [ -f $a ] && [ -f /dev/shm/$b.vlc ] && { cmp -s $a /dev/shm/$b.vlc && say "  same bytes: $(basename $a .vlc) = $b" || say "  DIFFERENT: $(basename $a .vlc) != $b"; }; done
}

for codec in int8 bits; do
  run $codec-g1 g1 --residual $codec
  run $codec-g4 g4 --residual $codec
  run $codec-m4 m4 --residual $codec
  same $codec-g1 $codec-g4 $codec-m4
done
run def-g1 g1
run def-g4 g4
run def-m4 m4
same def-g1 def-g4 def-m4
say "runs done after $(( $(date +%s) - T0 )) s"
rm -f /dev/shm/int8-*.vlc /dev/shm/bits-*.vlc /dev/shm/def-*.vlc /dev/shm/e31.npy /dev/shm/e31q.npy
LEFT=$(( 230 - ($(date +%s) - T0) )); [ $LEFT -lt 30 ] && LEFT=30
timeout $LEFT node_modules/.bin/vitest run --config vitest.gpu.config.ts test/gpu/residual.test.ts test/gpu/sharded.test.ts > $W/gpu-tests.log 2>&1
say "GPU tests (test/gpu/residual.test.ts, test/gpu/sharded.test.ts; timeout $LEFT s), rc $?:"
sed 's/\x1b\[[0-9;]*m//g' $W/gpu-tests.log | grep -E "Test Files|Tests |FAIL|×|AssertionError|↓|skipped" | head -30 | tee -a $SUM
say "elapsed $(( $(date +%s) - T0 )) s"
