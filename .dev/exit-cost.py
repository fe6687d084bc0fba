# Interleaved runs of .dev/exit-cost.mjs: median seconds from its "ready" line to its exit, per way of leaving.
# Usage (repository root): python3 .dev/exit-cost.py REPS WORKERS GIB [MODES, comma-separated]
import sys, subprocess, time, statistics as st, resource
res = {}
for rep in range(int(sys.argv[1])):
    for m in (sys.argv[4].split(',') if len(sys.argv) > 4 else ['natural', 'exit', 'term', '_exit']):
        t0=time.time(); p=subprocess.Popen(['node','.dev/exit-cost.mjs',m,sys.argv[2],sys.argv[3]],stdout=subprocess.PIPE); p.stdout.readline(); t1=time.time(); p.wait(); t2=time.time()
        res.setdefault(m, []).append(t2-t1)
for m, v in res.items(): print(m, 'median', round(st.median(v),3), 'min', round(min(v),3), [round(x,2) for x in v])
