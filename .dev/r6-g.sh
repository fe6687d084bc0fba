#!/usr/bin/env bash
# Device run r6-g (one H200): 100M x 128 f16, --anchors 65536 --residual none --gpu 0, three times,
# after released page locks are unlocked only in long waits (issue 31: every phase but reading
# under 20 s; r6-b's bytes: sha256 d2861dbc8a639b38...). Results: $OUT/r6g.tgz.
set -uo pipefail
source .gpu/activate.sh
OUT=${OUT:-/tmp/out}; W=/tmp/r6g; mkdir -p $W $OUT; trap 'tar czf $OUT/r6g.tgz -C $W .' EXIT
T0=$(date +%s)
source .dev/r6-lib.sh; KEEP=0
python3 .dev/r3-data.py 100000000 /dev/shm/h.npy /dev/shm/hq.npy > $W/data100.log 2>&1; say "data after $(( $(date +%s) - T0 )) s"
for k in ${RUNS:-1 2 3}; do C h$k 120 /dev/shm/h.npy --anchors 65536 --residual none --gpu 0; done
say "done after $(( $(date +%s) - T0 )) s"
