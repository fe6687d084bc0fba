#!/usr/bin/env bash
# Device run r4b (4 GPUs): huge pages for the host's vector store (src/vectors/huge-pages.ts), A/B:
# 50M x 128 f16 m 65,536 every default on --gpu 0 and --gpu 0,1,2,3, each with VLC_HUGE_PAGES=0 and
# with the default (advised), interleaved; the same bytes expected from all four; process wall
# against the JSON's total_seconds (the exit's page freeing is after the last phase).
set -uo pipefail
source .gpu/activate.sh
W=/tmp/w; RUN=r4b
source .dev/lib.sh
nvidia-smi -L | tee $W/gpus.txt; grep -H . /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag | tee $W/thp.txt
python3 .dev/r3-data.py 50000000 /dev/shm/x.npy /dev/shm/q.npy > /dev/null 2>&1
VLC_HUGE_PAGES=0 C p1 /dev/shm/x.npy -o /dev/shm/p1.vlc --anchors 65536 --gpu 0; S p1 iterations
C h1 /dev/shm/x.npy -o /dev/shm/h1.vlc --anchors 65536 --gpu 0; S h1 iterations; grep -i anonhuge /proc/meminfo
VLC_HUGE_PAGES=0 C p4 /dev/shm/x.npy -o /dev/shm/p4.vlc --anchors 65536 --gpu 0,1,2,3; S p4 iterations
C h4 /dev/shm/x.npy -o /dev/shm/h4.vlc --anchors 65536 --gpu 0,1,2,3; S h4 iterations
for f in h1 p4 h4; do cmp /dev/shm/p1.vlc /dev/shm/$f.vlc && echo "p1 = $f" | tee -a $W/summary.txt; done
sha256sum /dev/shm/p1.vlc | tee -a $W/summary.txt
grep -h "uploaded in\|locked" $W/p1.err $W/h1.err | head -8
cat $W/peaks.txt
