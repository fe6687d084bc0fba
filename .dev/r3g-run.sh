#!/usr/bin/env bash
# Device run 4 (final): GPU suite on merged main; GPU vs CPU search/eval on small files (l2, ip,
# cosine; exhaustive with a small VLC_CUDA_MAX_BYTES too); 50M int8 on 1 and 4 GPUs.
set -uo pipefail
source .gpu/activate.sh
OUT=${OUT:-/tmp/out}; W=/tmp/w; mkdir -p "$OUT" $W
peak() { local tag=$1; shift; local t0=$(date +%s.%N); "$@" & local pid=$! hwm=0 h; while kill -0 $pid 2>/dev/null; do h=$(awk '/VmHWM/{print $2}' /proc/$pid/status 2>/dev/null); [ -n "$h" ] && hwm=$h; sleep 0.2; done; wait $pid; local rc=$?; echo "$tag rc $rc peak_rss_kb $hwm wall_s $(awk "BEGIN{print $(date +%s.%N) - $t0}")" | tee -a "$W/peaks.txt"; }
C() { local tag=$1; shift; peak $tag node bin/vlc.js compress "$@" --json -v > $W/$tag.json 2> >(python3 -u .dev/ts.py > $W/$tag.err); }
trap 'tar czf $OUT/r3g.tgz -C $W .' EXIT
nvidia-smi -L > $W/gpus.txt
timeout 240 node_modules/.bin/vitest run --config vitest.gpu.config.ts > $W/gpu-tests.log 2>&1; sed 's/\x1b\[[0-9;]*m//g' $W/gpu-tests.log | grep -E "FAIL|Error" | head -20; tail -5 $W/gpu-tests.log | tee -a $W/summary.txt
python3 .dev/r3-data.py 200000 /dev/shm/s.npy /dev/shm/sq.npy > /dev/null 2>&1
for metric in l2 ip cosine; do
  for res in int8 bits pq; do
    node bin/vlc.js compress /dev/shm/s.npy -o /dev/shm/s-$metric-$res.vlc --anchors 512 --residual $res --metric $metric --device cuda -q -f || echo "compress $metric $res FAILED" | tee -a $W/summary.txt
    node bin/vlc.js search /dev/shm/s-$metric-$res.vlc --queries /dev/shm/sq.npy -k 10 --device cuda --json > $W/sg.json 2>> $W/search.err
    node bin/vlc.js search /dev/shm/s-$metric-$res.vlc --queries /dev/shm/sq.npy -k 10 --device cpu --nprobe 512 --json > $W/sc.json 2>> $W/search.err
    VLC_CUDA_MAX_BYTES=64M node bin/vlc.js search /dev/shm/s-$metric-$res.vlc --queries /dev/shm/sq.npy -k 10 --device cuda --json > $W/sm.json 2>> $W/search.err
    python3 - $metric $res $W <<'PY' | tee -a $W/summary.txt
import json,sys
m,r,w=sys.argv[1:4]
ids=lambda f: [x['ids'] for x in json.loads(open(f'{w}/{f}').readline())['results']]
g,c,s=ids('sg.json'),ids('sc.json'),ids('sm.json')
same=lambda a,b: sum(x==y for x,y in zip(a,b))/len(a)
print(f'search {m} {r}: gpu=cpu(all probes) lists {same(g,c):.4f}, gpu=gpu(64M) lists {same(g,s):.4f}')
PY
  done
  node bin/vlc.js eval /dev/shm/s.npy /dev/shm/s-$metric-int8.vlc --queries 300 --device cuda --json 2>/dev/null | python3 -c "import json,sys; d=json.loads(sys.stdin.readline()); print('eval cuda $metric', d['recall_at_10'])" | tee -a $W/summary.txt
  node bin/vlc.js eval /dev/shm/s.npy /dev/shm/s-$metric-int8.vlc --queries 300 --device cpu --json 2>/dev/null | python3 -c "import json,sys; d=json.loads(sys.stdin.readline()); print('eval cpu $metric', d['recall_at_10'])" | tee -a $W/summary.txt
done
python3 .dev/r3-data.py 50000000 /dev/shm/x.npy /dev/shm/q.npy > /dev/null 2>&1
C c1 /dev/shm/x.npy -o /dev/shm/a1.vlc --anchors 65536 --residual int8 --gpu 0
C c4 /dev/shm/x.npy -o /dev/shm/a4.vlc --anchors 65536 --residual int8 --gpu ${GPUS:-0,1,2,3}
cmp /dev/shm/a1.vlc /dev/shm/a4.vlc && echo "50M int8: same bytes 1 GPU and --gpu ${GPUS:-0,1,2,3}" | tee -a $W/summary.txt; sha256sum /dev/shm/a4.vlc | tee -a $W/summary.txt
for f in c1 c4; do python3 -c "import json; d=json.loads(open('$W/$f.json').readline()); print('$f', round(d['total_seconds'],2), d['codec'], d['iterations'], {k: round(v,2) for k,v in d['phases'].items()})" | tee -a $W/summary.txt; done
cat $W/peaks.txt
