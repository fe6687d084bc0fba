#!/usr/bin/env bash
# Device run r4e (4 GPUs, final, after the session's merges): issue 32's 50M line — 50,000,000 x 128
# f16, --anchors 65536 --residual int8 on --gpu 0,1,2,3 (1 = 4 GPUs was shown in r3d), then the file
# read by info, search (10,000 queries, GPU), eval (1,000 queries, GPU) and decompress -o - | wc -c,
# each with its peak RSS; and the default goal's file (bits) searched on the CPU by probing (the
# index search now reads the file in blocks) with 1,000 queries.
set -uo pipefail
source .gpu/activate.sh
W=/tmp/w4e; RUN=r4e
PEAK_OF="node bin/vlc.js"
source .dev/lib.sh
nvidia-smi -L | tee $W/gpus.txt
rm -f /dev/shm/*.vlc /dev/shm/*.npy
python3 .dev/r3-data.py 50000000 /dev/shm/x.npy /dev/shm/q.npy > /dev/null 2>&1
python3 -c "import numpy as np; np.save('/dev/shm/q1k.npy', np.load('/dev/shm/q.npy')[:1000])"
C i4 /dev/shm/x.npy -o /dev/shm/i1.vlc --anchors 65536 --residual int8 --gpu 0,1,2,3; S i4 bytes
sha256sum /dev/shm/i1.vlc | tee -a $W/summary.txt
peak info timeout 60 node bin/vlc.js info /dev/shm/i1.vlc --json > $W/info.json 2> $W/info.err
peak search timeout 120 node bin/vlc.js search /dev/shm/i1.vlc --queries /dev/shm/q.npy -k 10 --device cuda --json > $W/search.json 2> $W/search.err
peak eval timeout 120 node bin/vlc.js eval /dev/shm/x.npy /dev/shm/i1.vlc --queries 1000 --device cuda --json > $W/eval.json 2> $W/eval.err
peak decompress timeout 120 sh -c 'node bin/vlc.js decompress /dev/shm/i1.vlc -o - --format npy | wc -c > /tmp/w4e/decompress-bytes.txt'
peak probe timeout 90 node bin/vlc.js search /dev/shm/i1.vlc --queries /dev/shm/q1k.npy -k 10 --device cpu --json > $W/probe.json 2> $W/probe.err
tail -c 400 $W/eval.json; cat $W/decompress-bytes.txt; for f in $W/*.err; do echo $f; tail -n 2 $f; done
cat $W/peaks.txt
