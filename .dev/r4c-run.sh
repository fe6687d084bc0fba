#!/usr/bin/env bash
# Device run r4c (4 GPUs, right after r4b on the same machine): the 4-GPU A/B of r4b again, alternating
# 50M x 128 f16 m 65,536 every default on --gpu 0 and --gpu 0,1,2,3, each with VLC_HUGE_PAGES=0 and
# with the default (advised), interleaved; the same bytes expected from all four; process wall
# against the JSON's total_seconds (the exit's page freeing is after the last phase).
set -uo pipefail
source .gpu/activate.sh
W=/tmp/w; RUN=r4c
source .dev/lib.sh
nvidia-smi -L | tee $W/gpus.txt; grep -H . /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag | tee $W/thp.txt
[ -f /dev/shm/x.npy ] || python3 .dev/r3-data.py 50000000 /dev/shm/x.npy /dev/shm/q.npy > /dev/null 2>&1
C h4a /dev/shm/x.npy -o /dev/shm/h4a.vlc --anchors 65536 --gpu 0,1,2,3; S h4a iterations; rm -f /dev/shm/h4a.vlc
VLC_HUGE_PAGES=0 C p4a /dev/shm/x.npy -o /dev/shm/p4a.vlc --anchors 65536 --gpu 0,1,2,3; S p4a iterations; rm -f /dev/shm/p4a.vlc
C h4b /dev/shm/x.npy -o /dev/shm/h4b.vlc --anchors 65536 --gpu 0,1,2,3; S h4b iterations; rm -f /dev/shm/h4b.vlc
VLC_HUGE_PAGES=0 C p4b /dev/shm/x.npy -o /dev/shm/p4b.vlc --anchors 65536 --gpu 0,1,2,3; S p4b iterations
grep -h "uploaded in" $W/h4a.err $W/p4a.err | head -8
cat $W/peaks.txt
