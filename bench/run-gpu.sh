#!/usr/bin/env bash
# Everything the GPU machine has to measure, in one command (device time is scarce):
#   the GPU test suite, test-cuda small + large, vlc bench on the four workloads with the
#   PyTorch peer on the same data (screened assign, the default) and again with the direct
#   assign only, and an end-to-end compress of a 1,000,000×128 f32 .npy with m=2048 (with a CPU
#   profile of the host side). Logs and JSON go to $OUT (default bench/out); results-gpu.json is
#   what gets committed as bench/results/<date>-h100-gpu.json.
# Run from the repository root on the GPU machine, after `source .gpu/activate.sh`, with
# VLC_COMMIT=<the commit measured> when that machine's copy of .git may be older than the tree
# (see /work/shared/gpu/README.md: Node and node_modules travel in .gpu/; without .gpu/peers the
# PyTorch peer is skipped). Usage: bench/run-gpu.sh [SECTIONS], SECTIONS a comma-separated subset
# of tests,testcuda,bench,speed,compress,ncu,ncustall (default: all but the ncu ones).
set -uo pipefail
OUT=${OUT:-bench/out}
mkdir -p "$OUT"
log="$OUT/run.log"
say() { echo "== $*" | tee -a "$log"; }
vlc() { node bin/vlc.js "$@"; }
PEER=.gpu/peers/torch_kmeans.py
peer_args=(); [ -f "$PEER" ] && peer_args=(--peer "$PEER")
SECTIONS=",${1:-tests,testcuda,bench,speed,compress},"
want() { [[ "$SECTIONS" == *",$1,"* ]]; }

say "machine"; { nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv; node --version; } 2>&1 | tee -a "$log"
say "vlc devices"; { vlc devices; vlc devices --json; } 2>&1 | tee -a "$log"

if want tests; then
say "GPU test suite"
node_modules/.bin/vitest run --config vitest.gpu.config.ts 2>&1 | tee "$OUT/gpu-tests.log" | tail -25 | tee -a "$log"

fi
if want testcuda; then
say "test-cuda (small, large)"
vlc test-cuda 2>&1 | tee -a "$log"
vlc test-cuda --large --json > "$OUT/test-cuda-large.json" 2>>"$log"; echo "exit $?" | tee -a "$log"
vlc test-cuda --large 2>&1 | tee -a "$log"

fi
if want bench; then
say "bench (default: screened assign where it pays), with the PyTorch peer"
vlc bench --device cuda "${peer_args[@]}" --out "$OUT/bench-gpu.json" 2>&1 | tee -a "$log"
say "bench (the portable mma.sync screen instead of the wgmma kernels)"
VLC_CUDA_WGMMA=0 vlc bench --device cuda --workloads seed-large,mnemo,prod --out "$OUT/bench-gpu-mmasync.json" 2>&1 | tee -a "$log"
say "bench (direct assign only)"
VLC_CUDA_SCREEN=0 vlc bench --device cuda --workloads seed-large,mnemo,prod --out "$OUT/bench-gpu-direct.json" 2>&1 | tee -a "$log"

fi
if want speed; then
say "per iteration against PyTorch and Flash-KMeans, same data, same command (bench/speed-vs-peers.mjs)"
node bench/speed-vs-peers.mjs --out "$OUT/speed-vs-peers.json" 2>&1 | tee -a "$log"
fi
if want compress; then
say "compress 1,000,000x128 f32 .npy, m=2048, end to end"
python3 - <<'PY'
import numpy as np
rng = np.random.default_rng(7)
c = rng.standard_normal((512, 128)).astype(np.float32)
x = c[rng.integers(0, 512, 1_000_000)] + 0.35 * rng.standard_normal((1_000_000, 128), dtype=np.float32)
np.save('/tmp/prod.npy', x.astype(np.float32))
PY
rm -rf /tmp/prof
timeout 300 /usr/bin/time -v node --cpu-prof --cpu-prof-dir=/tmp/prof bin/vlc.js compress /tmp/prod.npy -o /tmp/prod.vlc --anchors 2048 --residual none --device cuda --json \
  > "$OUT/compress-prod.json" 2> /tmp/compress-prod.err; echo "exit $?" | tee -a "$log"
grep -E "Elapsed|Maximum resident" /tmp/compress-prod.err | tee -a "$log"; grep -v "^\s" /tmp/compress-prod.err | tail -3 | tee -a "$log"
node bench/cpuprofile-top.mjs /tmp/prof/*.cpuprofile 30 > "$OUT/compress-profile.txt" 2>&1; head -12 "$OUT/compress-profile.txt" | tee -a "$log"
fi
if want ncu; then
say "ncu: the assign kernels on mnemo (one launch each)"
for k in screen_h90 assign_top2 exact_h reduce_points; do
  VLC_CUDA_SCREEN=$([ $k = assign_top2 ] && echo 0 || echo 1) timeout 120 ncu --target-processes all -k "regex:$k" -c 1 \
    --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats \
    node bin/vlc.js bench --device cuda --workloads mnemo --iters 1 -q 2>&1 | grep -vE "^==PROF==|^\s*$" >> "$OUT/ncu.txt"
done
tail -60 "$OUT/ncu.txt" | tee -a "$log"
fi
if want ncustall; then
say "ncu: stall reasons and instruction mix of the tiled kernels on mnemo"
for k in screen_h90 assign_top2; do
  VLC_CUDA_SCREEN=$([ $k = assign_top2 ] && echo 0 || echo 1) timeout 150 ncu --target-processes all -k "regex:$k" -c 1 \
    --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio',smsp__inst_executed.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,smsp__sass_thread_inst_executed_op_fadd_pred_on.sum,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum,smsp__inst_executed_op_global_ld.sum,smsp__inst_executed_op_branch.sum,sm__cycles_elapsed.avg,smsp__issue_active.avg.pct_of_peak_sustained_active \
    node bin/vlc.js bench --device cuda --workloads mnemo --iters 1 -q 2>&1 | grep -vE "^==PROF==|^\s*$" >> "$OUT/ncu-stall.txt"
done
cat "$OUT/ncu-stall.txt" | tee -a "$log"
fi
node bench/merge-gpu-results.mjs "$OUT" > "$OUT/results-gpu.json"
say "done"
