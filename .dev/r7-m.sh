#!/usr/bin/env bash
# r7 step m: mpirun -n 4 over the billion's shards, the same bytes as the --gpu 0,1,2,3 file /tmp/b.vlc?
# b.vlc is hashed (whole, and its first and last GiB) and removed before the MPI file is written
# (the disk holds one); then the MPI file is hashed the same way.
set -uo pipefail
source .gpu/activate.sh
OUT=${OUT:-/tmp/out}; W=/tmp/r7; mkdir -p $W; source .dev/r6-lib.sh
trap 'tar czf $OUT/r7-m.tgz -C $W .' EXIT
(head -c 1073741824 /tmp/b.vlc | sha256sum > $W/b.head; tail -c 1073741824 /tmp/b.vlc | sha256sum > $W/b.tail
 sha256sum /tmp/b.vlc > $W/b.sha; rm -f /tmp/b.vlc; echo "b.vlc hashed and removed at $(date +%s)" >> $W/summary.txt) &
t=$(date +%s.%N)
timeout 420 mpirun -n 4 --allow-run-as-root --oversubscribe node bin/vlc.js compress '/dev/shm/shards/*.npy' -o /tmp/m.vlc --anchors 65536 --residual int8 --distributed --json -v > $W/m4.json 2> >(python3 -u .dev/ts.py > $W/m4.err)
say "mpirun -n 4 billion rc $? wall $(awk "BEGIN{print $(date +%s.%N) - $t}")"
wait
head -c 1073741824 /tmp/m.vlc | sha256sum > $W/m.head; tail -c 1073741824 /tmp/m.vlc | sha256sum > $W/m.tail
say "head b $(cut -c1-16 $W/b.head) m $(cut -c1-16 $W/m.head); tail b $(cut -c1-16 $W/b.tail) m $(cut -c1-16 $W/m.tail); b whole $(cut -c1-16 $W/b.sha)"
python3 -c "import json; d=json.loads(open('$W/m4.json').readline()); print('m4 total', d['total_seconds'], 'energy', d['energy'], 'bytes', d['bytes'], {k: round(v,2) for k,v in d['phases'].items()})" | tee -a $W/summary.txt
ls -l /tmp/m.vlc | tee -a $W/summary.txt
sha256sum /tmp/m.vlc > $W/m.sha; say "m whole $(cut -c1-16 $W/m.sha)"
