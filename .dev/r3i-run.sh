#!/usr/bin/env bash
# Device run r3i (4 GPUs): uploads and codes through page-locked host memory (cuda/pin.ts) against
# pageable copies, 50M x 128 f16 m 65,536 on 1 and 4 GPUs (same bytes), 100M on one GPU, and the
# peers in the same command: Flash-KMeans fp16/fp32 at 50M and speed-vs-peers on two workloads.
# Stage a: 50M pinned vs pageable, Flash at 50M; b: peers' workloads and 100M; c: 50M again after fixes, then b.
set -uo pipefail
source .gpu/activate.sh
OUT=${OUT:-/tmp/out}; W=/tmp/w; mkdir -p "$OUT" $W
peak() { local tag=$1; shift; local t0=$(date +%s.%N); "$@" & local pid=$! hwm=0 h; while kill -0 $pid 2>/dev/null; do h=$(awk '/VmHWM/{print $2}' /proc/$pid/status 2>/dev/null); [ -n "$h" ] && hwm=$h; sleep 0.2; done; wait $pid; local rc=$?; echo "$tag rc $rc peak_rss_kb $hwm wall_s $(awk "BEGIN{print $(date +%s.%N) - $t0}")" | tee -a "$W/peaks.txt"; }
C() { local tag=$1; shift; peak $tag node bin/vlc.js compress "$@" --json -v > $W/$tag.json 2> >(python3 -u .dev/ts.py > $W/$tag.err); }
S() { python3 -c "import json; d=json.loads(open('$W/$1.json').readline()); print('$1', round(d['total_seconds'],2), d['codec'], d.get('iterations'), d.get('device'), {k: round(v,2) for k,v in d['phases'].items()})" | tee -a $W/summary.txt; grep -h "uploaded in\|residuals on the GPU\|GPUs\|using" $W/$1.err | head -12 >> $W/summary.txt; }
STAGE=${1:-a}
trap 'tar czf $OUT/r3i-$STAGE.tgz -C $W .' EXIT
nvidia-smi -L > $W/gpus.txt; git log -1 --format=%h > $W/commit.txt 2>/dev/null; nproc >> $W/gpus.txt; free -g >> $W/gpus.txt
if [ $STAGE = a ]; then
python3 .dev/r3-data.py 50000000 /dev/shm/x.npy /dev/shm/q.npy > /dev/null 2>&1
C c1 /dev/shm/x.npy -o /dev/shm/a1.vlc --anchors 65536 --gpu 0; S c1
C c4 /dev/shm/x.npy -o /dev/shm/a4.vlc --anchors 65536 --gpu 0,1,2,3; S c4
VLC_CUDA_PIN=0 C c4p0 /dev/shm/x.npy -o /dev/shm/a4p0.vlc --anchors 65536 --gpu 0,1,2,3; S c4p0
VLC_CUDA_PIN=0 C c1p0 /dev/shm/x.npy -o /dev/shm/a1p0.vlc --anchors 65536 --gpu 0; S c1p0
for f in a4 a4p0 a1p0; do cmp /dev/shm/a1.vlc /dev/shm/$f.vlc && echo "50M default: a1 = $f" | tee -a $W/summary.txt; done
sha256sum /dev/shm/a1.vlc | tee -a $W/summary.txt
rm -f /dev/shm/a4p0.vlc /dev/shm/a1p0.vlc /dev/shm/a4.vlc
timeout 150 python3 .dev/flash-iter.py /dev/shm/x.npy 65536 5 .gpu/peers 2>$W/flash50m.err | tee $W/flash50m.json | tee -a $W/summary.txt
rm -f /dev/shm/a1.vlc /dev/shm/x.npy
fi
if [ $STAGE = c ]; then
python3 .dev/r3-data.py 50000000 /dev/shm/x.npy /dev/shm/q.npy > /dev/null 2>&1
C c1 /dev/shm/x.npy -o /dev/shm/a1.vlc --anchors 65536 --gpu 0; S c1
C c4 /dev/shm/x.npy -o /dev/shm/a4.vlc --anchors 65536 --gpu 0,1,2,3; S c4
cmp /dev/shm/a1.vlc /dev/shm/a4.vlc && echo "50M default: a1 = a4" | tee -a $W/summary.txt; sha256sum /dev/shm/a1.vlc | tee -a $W/summary.txt
rm -f /dev/shm/a1.vlc /dev/shm/a4.vlc /dev/shm/x.npy
fi
if [ $STAGE = b ] || [ $STAGE = c ]; then
timeout 200 node bench/speed-vs-peers.mjs --workloads prod,m20k-256 --iters 10 --out $W/speed-vs-peers.json > $W/speed-vs-peers.log 2>&1; tail -12 $W/speed-vs-peers.log >> $W/summary.txt
python3 .dev/r3-data.py 100000000 /dev/shm/h.npy /dev/shm/hq.npy > /dev/null 2>&1
C h1 /dev/shm/h.npy -o /dev/shm/h1.vlc --anchors 65536 --residual none --gpu 0; S h1
fi
cat $W/peaks.txt
