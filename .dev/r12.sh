#!/usr/bin/env bash
# Device run r12 (one H200, session 10): 100M x 128 f16 (.dev/r3-data.py) --anchors 65536
# --residual none --gpu 0 twice on main as it stands (issue 31's "every phase but reading under
# 20 s"; r7-s's sha 43e5478d8d4cb2ea), then --residual int8 kept, and `vlc info` of it with the
# checksum threads held to 8 cores (taskset) and on all 16, interleaved (the checksum thread cap).
# STAGE=b skips the data-making when /dev/shm/h.npy is there. Results: $OUT/r12/summary.txt.
set -uo pipefail
source .gpu/activate.sh
OUT=${OUT:-/tmp/out}; W=$OUT/r12${TAG:-}; mkdir -p $W
source .dev/r6-lib.sh
{ nvidia-smi -L; nproc; free -g; git log -1 --oneline 2>/dev/null; } > $W/machine.txt 2>&1
[ -f /dev/shm/h.npy ] || python3 .dev/r3-data.py 100000000 /dev/shm/h.npy /dev/shm/hq.npy > $W/data100.log 2>&1
KEEP=0
C h1 90 /dev/shm/h.npy --anchors 65536 --residual none --gpu 0
C h2 90 /dev/shm/h.npy --anchors 65536 --residual none --gpu 0
[ "${INFO:-1}" = 1 ] || exit 0
KEEP=1
C i8 120 /dev/shm/h.npy --anchors 65536 --residual int8 --gpu 0
for r in 1 2; do
  for c in 0-7 0-15; do
    t=$(date +%s.%N); taskset -c $c node bin/vlc.js info /dev/shm/i8.vlc > /dev/null 2>$W/info-$c-$r.err
    say "info cores $c run $r rc $? wall $(awk "BEGIN{print $(date +%s.%N) - $t}")"
  done
done
