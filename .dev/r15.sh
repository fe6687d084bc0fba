#!/usr/bin/env bash
# Device run r15 (one H200, session 10): 100M x 128 f16 --anchors 65536 --residual none --gpu 0
# three times (RUNS) with the -v lines added this session: an upload's page-locking share and where the
# context's close goes (teardown). The same bytes as r12. $OUT/r15/summary.txt.
# h7-h8 ran with .dev/tried/unlock-on-threads.diff applied (unlocks on threads at close); h5-h6 with the
# same unlocks started in pin.ts passRuns instead. Main unlocks at close on the JS thread.
set -uo pipefail
source .gpu/activate.sh
OUT=${OUT:-/tmp/out}; W=$OUT/r15; mkdir -p $W
source .dev/r6-lib.sh
{ nvidia-smi -L; nproc; free -g; cat /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag; } > $W/machine.txt 2>&1
[ -f /dev/shm/h.npy ] || python3 .dev/r3-data.py 100000000 /dev/shm/h.npy /dev/shm/hq.npy > $W/data100.log 2>&1
KEEP=0
for r in ${RUNS:-1 2 3}; do
  C h$r 90 /dev/shm/h.npy --anchors 65536 --residual none --gpu 0
  grep -h "engine over 100000000\|closed in\|written in" $W/h$r.err | cut -c1-220 | tee -a $W/summary.txt
  grep AnonHugePages /proc/meminfo | tee -a $W/summary.txt
done
# PROBE=1: the lock probe (.dev/probe-lock.mjs), 4 KiB pages then huge pages.
if [ "${PROBE:-0}" = 1 ]; then
  UV_THREADPOOL_SIZE=16 timeout 120 node .dev/probe-lock.mjs 2>&1 | tee -a $W/summary.txt
  HUGE=1 UV_THREADPOOL_SIZE=16 timeout 120 node .dev/probe-lock.mjs 2>&1 | tee -a $W/summary.txt
fi
