#!/usr/bin/env bash
# Device run r4g (right after r4e, same machine and files): decompress -o - | wc -c and eval (1,000
# queries, GPU) of r4e's 50M int8 file, side by side, with the time they need (r4e stopped them at 120 s).
set -uo pipefail
source .gpu/activate.sh
W=/tmp/w4g; RUN=r4g
PEAK_OF="node bin/vlc.js {}" PEAK_POLL=0.5
source .dev/lib.sh
ls -la /dev/shm/ | tee $W/shm.txt
peak decompress timeout 280 sh -c 'node bin/vlc.js decompress /dev/shm/i1.vlc -o - --format npy | wc -c > /tmp/w4g/decompress-bytes.txt' &
peak eval timeout 280 node bin/vlc.js eval /dev/shm/x.npy /dev/shm/i1.vlc --queries 1000 --device cuda --json > $W/eval.json 2> $W/eval.err &
wait
cat $W/decompress-bytes.txt; tail -c 600 $W/eval.json; tail -n 3 $W/eval.err; cat $W/peaks.txt
