#!/usr/bin/env bash
# Device run r3j (4 GPUs): why four GPUs open their engines slower than one. pin-bench4.py times
# four ways of uploading 12.8 GB to 4 GPUs; then 50M x 128 f16 on 4 GPUs under --cpu-prof, the
# main thread's self time summarised (bench/cpuprofile-top.mjs).
set -uo pipefail
source .gpu/activate.sh
OUT=${OUT:-/tmp/out}; W=/tmp/w; mkdir -p "$OUT" $W
trap 'tar czf $OUT/r3j.tgz -C $W .' EXIT
nvidia-smi -L > $W/gpus.txt; nvidia-smi topo -m >> $W/gpus.txt 2>&1; git log -1 --format=%h > $W/commit.txt 2>/dev/null
timeout 120 python3 .dev/pin-bench4.py 12.8 | tee $W/pin4.json
python3 .dev/r3-data.py 50000000 /dev/shm/x.npy /dev/shm/q.npy > /dev/null 2>&1
node --cpu-prof --cpu-prof-dir=$W/prof bin/vlc.js compress /dev/shm/x.npy -o /dev/shm/a4.vlc --anchors 65536 --gpu 0,1,2,3 --json -v > $W/c4.json 2> >(python3 -u .dev/ts.py > $W/c4.err)
sleep 1; ls $W/prof > $W/prof-files.txt; f=$(ls $W/prof/CPU.*.*.*.0.*.cpuprofile | head -1); node bench/cpuprofile-top.mjs $f 45 > $W/prof-top.txt; rm -rf $W/prof
python3 -c "import json; d=json.loads(open('$W/c4.json').readline()); print('c4', round(d['total_seconds'],2), {k: round(v,2) for k,v in d['phases'].items()})" | tee -a $W/summary.txt
head -30 $W/prof-top.txt
