#!/usr/bin/env bash
# Device run 3: GPU suite on merged main (layers + whole-first training), 50M int8 1 vs 4 GPUs,
# 10M default 1 vs 4 (--all-gpus) vs auto, 100M x 128 f16 on one GPU --residual none.
set -uo pipefail
source .gpu/activate.sh
OUT=${OUT:-/tmp/out}; W=/tmp/w; mkdir -p "$OUT" $W
peak() { local tag=$1; shift; local t0=$(date +%s.%N); "$@" & local pid=$! hwm=0 h; while kill -0 $pid 2>/dev/null; do h=$(awk '/VmHWM/{print $2}' /proc/$pid/status 2>/dev/null); [ -n "$h" ] && hwm=$h; sleep 0.2; done; wait $pid; local rc=$?; echo "$tag rc $rc peak_rss_kb $hwm wall_s $(awk "BEGIN{print $(date +%s.%N) - $t0}")" | tee -a "$W/peaks.txt"; }
C() { local tag=$1; shift; peak $tag node bin/vlc.js compress "$@" --json -v > $W/$tag.json 2> >(python3 -u .dev/ts.py > $W/$tag.err); }
trap 'tar czf $OUT/r3f.tgz -C $W .' EXIT
nvidia-smi -L > $W/gpus.txt
timeout 240 node_modules/.bin/vitest run --config vitest.gpu.config.ts > $W/gpu-tests.log 2>&1; grep -E "✗|×|FAIL" $W/gpu-tests.log | head -20; tail -5 $W/gpu-tests.log | tee -a $W/summary.txt
python3 .dev/r3-data.py 50000000 /dev/shm/x.npy /dev/shm/q.npy > /dev/null 2>&1
C c1 /dev/shm/x.npy -o /dev/shm/a1.vlc --anchors 65536 --residual int8 --gpu 0
C c4 /dev/shm/x.npy -o /dev/shm/a4.vlc --anchors 65536 --residual int8 --gpu 0,1,2,3
cmp /dev/shm/a1.vlc /dev/shm/a4.vlc && echo "50M int8: same bytes 1 and 4 GPUs" | tee -a $W/summary.txt; sha256sum /dev/shm/a4.vlc | tee -a $W/summary.txt
rm -f /dev/shm/a*.vlc /dev/shm/x.npy
python3 .dev/r3-data.py 10000000 /dev/shm/y.npy /dev/shm/q2.npy > /dev/null 2>&1
C t1 /dev/shm/y.npy -o /dev/shm/t1.vlc --anchors 16384 --gpu 0
C t4all /dev/shm/y.npy -o /dev/shm/t4.vlc --anchors 16384 --gpu 0,1,2,3 --all-gpus
C t2all /dev/shm/y.npy -o /dev/shm/t2.vlc --anchors 16384 --gpu 0,1 --all-gpus
cmp /dev/shm/t1.vlc /dev/shm/t4.vlc && cmp /dev/shm/t1.vlc /dev/shm/t2.vlc && echo "10M default: same bytes 1, 2, 4 GPUs" | tee -a $W/summary.txt
rm -f /dev/shm/t*.vlc /dev/shm/y.npy
python3 .dev/r3-data.py 100000000 /dev/shm/z.npy /dev/shm/q3.npy > /dev/null 2>&1
C h1 /dev/shm/z.npy -o /dev/shm/h1.vlc --anchors 65536 --residual none --gpu 0
for f in c1 c4 t1 t4all t2all h1; do python3 -c "import json; d=json.loads(open('$W/$f.json').readline()); print('$f', round(d['total_seconds'],2), d['codec'], d['iterations'], {k: round(v,2) for k,v in d['phases'].items()})" | tee -a $W/summary.txt; done
cat $W/peaks.txt
