#!/usr/bin/env bash
# Round 3 session 2, device run 1: 50M x 128 f16, m 65,536, int8 on 4 GPUs and 1 (same bytes, phases,
# peak RSS), the 4-GPU file read by info/search/eval; 10M x 128 m 16,384 every default on 1 and 4 GPUs.
set -uo pipefail
source .gpu/activate.sh
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
peak() { local tag=$1; shift; local t0=$(date +%s.%N); "$@" & local pid=$! hwm=0 h; while kill -0 $pid 2>/dev/null; do h=$(awk '/VmHWM/{print $2}' /proc/$pid/status 2>/dev/null); [ -n "$h" ] && hwm=$h; sleep 0.2; done; wait $pid; local rc=$?; echo "$tag rc $rc peak_rss_kb $hwm wall_s $(awk "BEGIN{print $(date +%s.%N) - $t0}")" | tee -a "$OUT/peaks.txt"; }
nvidia-smi -L | tee "$OUT/gpus.txt"; free -g | tee -a "$OUT/gpus.txt"
t=$(date +%s); python3 .dev/r3-data.py 50000000 /dev/shm/x.npy /dev/shm/q.npy > "$OUT/data.log" 2>&1; echo "data $(( $(date +%s) - t )) s" | tee -a "$OUT/summary.txt"
G4=0,1,2,3
peak c4 node bin/vlc.js compress /dev/shm/x.npy -o /dev/shm/a4.vlc --anchors 65536 --residual int8 --gpu $G4 --json -v > "$OUT/c4.json" 2> "$OUT/c4.err"
peak c1 node bin/vlc.js compress /dev/shm/x.npy -o /dev/shm/a1.vlc --anchors 65536 --residual int8 --gpu 0 --json -v > "$OUT/c1.json" 2> "$OUT/c1.err"
cmp /dev/shm/a1.vlc /dev/shm/a4.vlc && echo "50M int8: same bytes on 1 GPU and on $G4" | tee -a "$OUT/summary.txt"
ls -l /dev/shm/*.vlc | tee -a "$OUT/summary.txt"; sha256sum /dev/shm/a4.vlc | tee -a "$OUT/summary.txt"
rm -f /dev/shm/a1.vlc
peak info node bin/vlc.js info /dev/shm/a4.vlc --json > "$OUT/info.json" 2> "$OUT/info.err"
peak search node bin/vlc.js search /dev/shm/a4.vlc --queries /dev/shm/q.npy -k 10 --device cuda --json > "$OUT/search.json" 2> "$OUT/search.err"
peak eval node bin/vlc.js eval /dev/shm/x.npy /dev/shm/a4.vlc --queries 1000 --device cuda --json > "$OUT/eval.json" 2> "$OUT/eval.err"
head -c 300 "$OUT/search.json"; echo
rm -f /dev/shm/*.vlc /dev/shm/x.npy
python3 .dev/r3-data.py 10000000 /dev/shm/y.npy /dev/shm/q2.npy > "$OUT/data10.log" 2>&1
peak t4 node bin/vlc.js compress /dev/shm/y.npy -o /dev/shm/t4.vlc --anchors 16384 --gpu $G4 --json -v > "$OUT/t4.json" 2> "$OUT/t4.err"
peak t1 node bin/vlc.js compress /dev/shm/y.npy -o /dev/shm/t1.vlc --anchors 16384 --gpu 0 --json -v > "$OUT/t1.json" 2> "$OUT/t1.err"
cmp /dev/shm/t1.vlc /dev/shm/t4.vlc && echo "10M default: same bytes on 1 GPU and on $G4" | tee -a "$OUT/summary.txt"
for f in c4 c1 t4 t1; do python3 -c "import json,sys; d=json.load(open('$OUT/$f.json')); print('$f', d.get('total_seconds'), d.get('codec'), json.dumps(d.get('phases')))" | tee -a "$OUT/summary.txt"; done
cat "$OUT/peaks.txt"
