#!/usr/bin/env bash
# Device run 2: GPU suite (cubins), 50M x 128 int8 on 1 and 4 GPUs (cubins, timestamps), 10M default
# on --gpu 0,1,2,3 (predicted: one GPU), --all-gpus, --gpu 0; cold-JIT setup with VLC_CUDA_CUBIN=0.
set -uo pipefail
source .gpu/activate.sh
OUT=${OUT:-/tmp/out}; W=/tmp/w; mkdir -p "$OUT" $W
peak() { local tag=$1; shift; local t0=$(date +%s.%N); "$@" & local pid=$! hwm=0 h; while kill -0 $pid 2>/dev/null; do h=$(awk '/VmHWM/{print $2}' /proc/$pid/status 2>/dev/null); [ -n "$h" ] && hwm=$h; sleep 0.2; done; wait $pid; local rc=$?; echo "$tag rc $rc peak_rss_kb $hwm wall_s $(awk "BEGIN{print $(date +%s.%N) - $t0}")" | tee -a "$W/peaks.txt"; }
C() { local tag=$1; shift; peak $tag node bin/vlc.js compress "$@" --json -v > $W/$tag.json 2> >(python3 -u .dev/ts.py > $W/$tag.err); }
nvidia-smi -L > $W/gpus.txt
python3 .dev/r3-data.py 200000 /dev/shm/s.npy /dev/shm/sq.npy > /dev/null 2>&1
C jit_cold /dev/shm/s.npy -o /dev/shm/s1.vlc --anchors 1024 --gpu 0 --residual none; sed -i 's/^/CUBIN=1 /' $W/jit_cold.err
VLC_CUDA_CUBIN=0 peak ptx_cold node bin/vlc.js compress /dev/shm/s.npy -o /dev/shm/s2.vlc --anchors 1024 --gpu 0 --residual none --json -v > $W/ptx_cold.json 2> >(python3 -u .dev/ts.py > $W/ptx_cold.err)
VLC_CUDA_CUBIN=0 peak ptx_warm node bin/vlc.js compress /dev/shm/s.npy -o /dev/shm/s3.vlc --anchors 1024 --gpu 0 --residual none --json -v > $W/ptx_warm.json 2> >(python3 -u .dev/ts.py > $W/ptx_warm.err)
cmp /dev/shm/s1.vlc /dev/shm/s2.vlc && echo "cubin and PTX: same bytes" | tee -a $W/summary.txt
timeout 300 node_modules/.bin/vitest run --config vitest.gpu.config.ts > $W/gpu-tests.log 2>&1; tail -5 $W/gpu-tests.log | tee -a $W/summary.txt
python3 .dev/r3-data.py 50000000 /dev/shm/x.npy /dev/shm/q.npy > /dev/null 2>&1
C c1 /dev/shm/x.npy -o /dev/shm/a1.vlc --anchors 65536 --residual int8 --gpu 0
C c4 /dev/shm/x.npy -o /dev/shm/a4.vlc --anchors 65536 --residual int8 --gpu 0,1,2,3
cmp /dev/shm/a1.vlc /dev/shm/a4.vlc && echo "50M int8: same bytes 1 and 4 GPUs" | tee -a $W/summary.txt; sha256sum /dev/shm/a4.vlc >> $W/summary.txt
rm -f /dev/shm/a*.vlc /dev/shm/x.npy
python3 .dev/r3-data.py 10000000 /dev/shm/y.npy /dev/shm/q2.npy > /dev/null 2>&1
C t1 /dev/shm/y.npy -o /dev/shm/t1.vlc --anchors 16384 --gpu 0
C t4auto /dev/shm/y.npy -o /dev/shm/t4a.vlc --anchors 16384 --gpu 0,1,2,3
C t4all /dev/shm/y.npy -o /dev/shm/t4.vlc --anchors 16384 --gpu 0,1,2,3 --all-gpus
cmp /dev/shm/t1.vlc /dev/shm/t4.vlc && cmp /dev/shm/t1.vlc /dev/shm/t4a.vlc && echo "10M default: same bytes 1, auto, 4 GPUs" | tee -a $W/summary.txt
for f in c1 c4 t1 t4auto t4all jit_cold ptx_cold ptx_warm; do python3 -c "import json; d=json.loads(open('$W/$f.json').readline()); print('$f', round(d['total_seconds'],2), d['codec'], {k: round(v,2) for k,v in d['phases'].items()})" | tee -a $W/summary.txt; done
cat $W/peaks.txt
tar czf $OUT/r3e.tgz -C $W .
