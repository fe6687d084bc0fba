#!/usr/bin/env bash
# Round 3 device run: the GPU suite, then 50M x 128 f16 (m 65,536, int8) on 1 and 4 GPUs: same bytes,
# phases, peak RSS; info, decompress | wc -c, eval, search. Part A or B (device calls are 10 min each).
set -uo pipefail
source .gpu/activate.sh
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
# Runs a command, samples its peak RSS (VmHWM) until it exits; prints rc and peak.
peak() { local tag=$1; shift; local t0=$(date +%s.%N); "$@" & local pid=$! hwm=0 h; while kill -0 $pid 2>/dev/null; do h=$(awk '/VmHWM/{print $2}' /proc/$pid/status 2>/dev/null); [ -n "$h" ] && hwm=$h; sleep 0.2; done; wait $pid; local rc=$?; echo "$tag rc $rc peak_rss_kb $hwm wall_s $(awk "BEGIN{print $(date +%s.%N) - $t0}")" >> "$OUT/peaks.txt"; }
N=${N:-50000000}; GPUS=${GPUS:-0,1,2,3}
X=/dev/shm/x.npy; Q=/dev/shm/q.npy
case "${1:-A}" in
A)
  nvidia-smi -L | tee "$OUT/gpus.txt"; git log --oneline -1 > "$OUT/commit.txt" 2>/dev/null
  node_modules/.bin/vitest run --config vitest.gpu.config.ts > "$OUT/gpu-tests.log" 2>&1; tail -6 "$OUT/gpu-tests.log" | tee -a "$OUT/summary.txt"
  t=$(date +%s); python3 .dev/r3-data.py $N $X $Q > "$OUT/data.log" 2>&1; echo "data $(( $(date +%s) - t )) s" | tee -a "$OUT/summary.txt"; ls -l $X $Q | tee -a "$OUT/summary.txt"
  peak cN node bin/vlc.js compress $X -o /dev/shm/aN.vlc --anchors 65536 --residual int8 --gpu $GPUS --json -v > "$OUT/cN.json" 2> "$OUT/cN.err"
  peak c1 node bin/vlc.js compress $X -o /dev/shm/a1.vlc --anchors 65536 --residual int8 --gpu 0 --json -v > "$OUT/c1.json" 2> "$OUT/c1.err"
  cmp /dev/shm/a1.vlc /dev/shm/aN.vlc && echo "same bytes on 1 GPU and on $GPUS" | tee -a "$OUT/summary.txt"; ls -l /dev/shm/*.vlc | tee -a "$OUT/summary.txt"
  for f in "$OUT/c1.err" "$OUT/cN.err"; do tail -n 3 "$f"; done | tee -a "$OUT/summary.txt"
  ;;
B)
  peak info node bin/vlc.js info /dev/shm/a1.vlc --json > "$OUT/info.json" 2> "$OUT/info.err"
  peak decompress node bin/vlc.js decompress /dev/shm/a1.vlc -o - --format npy > >(wc -c > "$OUT/decompress-bytes.txt") 2> "$OUT/decompress.err"
  peak search node bin/vlc.js search /dev/shm/a1.vlc --queries $Q -k 10 --device cuda --json > "$OUT/search.json" 2> "$OUT/search.err"
  peak eval node bin/vlc.js eval $X /dev/shm/a1.vlc --queries 1000 --device cuda --json > "$OUT/eval.json" 2> "$OUT/eval.err"
  peak q4 node bin/vlc.js compress $X -o /dev/shm/d4.vlc --anchors 65536 --gpu $GPUS --json -v > "$OUT/d4.json" 2> "$OUT/d4.err"
  tail -2 "$OUT"/*.err | tee -a "$OUT/summary.txt"
  ;;
esac
cat "$OUT/peaks.txt"
