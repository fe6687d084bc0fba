#!/usr/bin/env bash
# Device run r28 (one H200, session 12): the whole GPU suite at the session's last code commit.
# $OUT/keep/summary.txt and gpu-suite.log.
set -uo pipefail
source .gpu/activate.sh
OUT=${OUT:-/tmp/out}; W=$OUT/keep; mkdir -p $W
source .dev/r6-lib.sh
say "commit $(cat .dev/commit 2>/dev/null) $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
suite 300
