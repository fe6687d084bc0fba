#!/usr/bin/env bash
# Device run r3l (4 GPUs, final): the GPU suite on merged main; 50M x 128 f16 m 65,536 every default
# on 1 and 4 GPUs (same bytes; page-locked uploads kept, lazy screen, threaded checksums, prefaulted
# codes); mpirun -n 4 (one GPU a rank) against --gpu 0 at 10M (same bytes); 100M on one GPU with
# --residual none (the sample now resident beside the whole engine on an 80 GB card).
set -uo pipefail
source .gpu/activate.sh
OUT=${OUT:-/tmp/out}; W=/tmp/w; mkdir -p "$OUT" $W
peak() { local tag=$1; shift; local t0=$(date +%s.%N); "$@" & local pid=$! hwm=0 h; while kill -0 $pid 2>/dev/null; do h=$(awk '/VmHWM/{print $2}' /proc/$pid/status 2>/dev/null); [ -n "$h" ] && hwm=$h; sleep 0.2; done; wait $pid; local rc=$?; echo "$tag rc $rc peak_rss_kb $hwm wall_s $(awk "BEGIN{print $(date +%s.%N) - $t0}")" | tee -a "$W/peaks.txt"; }
C() { local tag=$1; shift; peak $tag node bin/vlc.js compress "$@" --json -v > $W/$tag.json 2> >(python3 -u .dev/ts.py > $W/$tag.err); }
S() { python3 -c "import json; d=json.loads(open('$W/$1.json').readline()); print('$1', round(d['total_seconds'],2), d['codec'], d.get('iterations'), {k: round(v,2) for k,v in d['phases'].items()})" | tee -a $W/summary.txt; tar czf $OUT/r3l.tgz -C $W .; }
trap 'tar czf $OUT/r3l.tgz -C $W .' EXIT
nvidia-smi -L > $W/gpus.txt
timeout 200 node_modules/.bin/vitest run --config vitest.gpu.config.ts > $W/gpu-tests.log 2>&1; sed 's/\x1b\[[0-9;]*m//g' $W/gpu-tests.log | grep -E "FAIL|×" | head -20; sed 's/\x1b\[[0-9;]*m//g' $W/gpu-tests.log | grep -E "Test Files|Tests " | tee -a $W/summary.txt
python3 .dev/r3-data.py 50000000 /dev/shm/x.npy /dev/shm/q.npy > /dev/null 2>&1
C c1 /dev/shm/x.npy -o /dev/shm/a1.vlc --anchors 65536 --gpu 0; S c1
C c4 /dev/shm/x.npy -o /dev/shm/a4.vlc --anchors 65536 --gpu 0,1,2,3; S c4
cmp /dev/shm/a1.vlc /dev/shm/a4.vlc && echo "50M default: 1 GPU = 4 GPUs" | tee -a $W/summary.txt; sha256sum /dev/shm/a1.vlc | tee -a $W/summary.txt
rm -f /dev/shm/a1.vlc /dev/shm/a4.vlc
python3 -c "import numpy as np; x=np.load('/dev/shm/x.npy', mmap_mode='r'); np.save('/dev/shm/t.npy', x[:10000000])"; rm -f /dev/shm/x.npy
C t1 /dev/shm/t.npy -o /dev/shm/t1.vlc --anchors 16384 --gpu 0; S t1
peak m4 mpirun --allow-run-as-root -n 4 node bin/vlc.js compress /dev/shm/t.npy -o /dev/shm/tm.vlc --anchors 16384 --distributed --json > $W/m4.json 2> $W/m4.err; tail -3 $W/m4.err; S m4
cmp /dev/shm/t1.vlc /dev/shm/tm.vlc && echo "10M default: --gpu 0 = mpirun -n 4" | tee -a $W/summary.txt
rm -f /dev/shm/t*.vlc /dev/shm/t.npy
python3 .dev/r3-data.py 100000000 /dev/shm/h.npy /dev/shm/hq.npy > /dev/null 2>&1
timeout 100 true; C h1 /dev/shm/h.npy -o /dev/shm/h1.vlc --anchors 65536 --residual none --gpu 0; S h1
cat $W/peaks.txt
