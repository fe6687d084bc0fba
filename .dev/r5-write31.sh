#!/usr/bin/env bash
# Device run r5-write31 (one GPU, then four if time is left; at most about 3 minutes): issue 31's write phase and exit at 50,000,000 x 128 f16
# (.dev/r3-data.py, /dev/shm), every default, --gpu 0, to a 4.67 GB .vlc in /dev/shm:
#   a: a fresh output; b: the same command over a's file (-f: the rename frees the old file's pages);
#   n: as b, but Node's natural exit (.dev/natural-exit.mjs: bin/vlc.js before it called process.exit);
# then the input read alone with at most 8 and 24 reader threads (.dev/read-threads.mjs); then, if under
# 2 minutes were used, g4: as b on --gpu 0,1,2,3 (the same bytes as a: the sha256 lines say).
# Each run's wall is taken around the process (.dev/wall.py: spawn to exit, and when the JSON line came),
# beside total_seconds and the phases; the -v lines of the residual checksum and the write; sha256 of
# each output (the same bytes every run). Usage (repository root, after source .gpu/activate.sh):
#   bash .dev/r5-write31.sh   -> $OUT/write31/summary.txt and the runs' logs
set -uo pipefail
[ -f .gpu/activate.sh ] && source .gpu/activate.sh
OUT=${OUT:-/tmp/out}; W=$OUT/write31; mkdir -p "$W"; S=$W/summary.txt; : > $S
{ nvidia-smi -L; nproc; free -g | head -2; git log -1 --format=%H 2>/dev/null; } > $W/machine.txt 2>&1
# X and ARGS: another input and options, to try the script without a GPU.
ARGS=${ARGS:---gpu 0}
X_GIVEN=${X:-}
if [ -z "${X:-}" ] && X=/dev/shm/x.npy && [ "$(stat -c %s $X 2>/dev/null)" != 12800000128 ]; then
  timeout 100 python3 .dev/r3-data.py 50000000 $X /dev/shm/q.npy > $W/data.log 2>&1 || echo "data: failed (see data.log)" | tee -a $S
fi
run() { # tag, then the command after 'node'
  local tag=$1; shift
  timeout 110 python3 .dev/wall.py $W/$tag $tag node "$@" compress $X -o /dev/shm/o.vlc -f --json -v $ARGS | tee -a $S
  grep -hE "residuals of [0-9]+ rows on|bytes of .vlc in|written in|phases \(s\)" $W/$tag.err | sed "s/^/$tag   /" | tee -a $S
  echo "$tag sha256 $(timeout 30 sha256sum /dev/shm/o.vlc | cut -c1-64)" | tee -a $S
}
rm -f /dev/shm/o.vlc
run a bin/vlc.js
run b bin/vlc.js
run n .dev/natural-exit.mjs
# The read phase against the reader's thread cap (8 now), the input already in memory (tmpfs).
for t in 8 24; do timeout 40 node .dev/read-threads.mjs $X $t 2>&1 | tee -a $S; done
[ "$(grep -c "sha256 $(grep -m1 '^a sha256' $S | cut -d' ' -f3)" $S)" = 3 ] && echo "same bytes: a = b = n" | tee -a $S || echo "BYTES DIFFER between runs" | tee -a $S
# Time left (under 2 minutes so far): four GPUs, whose bits codes (split over the GPUs) are checksummed on threads while written.
if [ $SECONDS -lt 120 ] && [ -z "${X_GIVEN:-}" ]; then ARGS="--gpu 0,1,2,3"; run g4 bin/vlc.js; else echo "g4: skipped (${SECONDS} s used)" | tee -a $S; fi
rm -f /dev/shm/o.vlc
