"""int4's clip, a fixed 2.6 x RMS against each dimension's best on a sample (the rule of src/codecs/scalar.ts), in numpy.

Usage: /usr/bin/python3 bench/int4-clip-ab.py NAME CLIPS [KEEP]: NAME.npy (the vectors) and NAME-a.npy
(each vector's anchor, from `vlc compress NAME.npy --residual none` then `vlc decompress`) in the
current directory; CLIPS the candidate multiples of the RMS residual, e.g. 2.6,3,3.5,4,5,6,8; KEEP
the share of the 4,096-row sample (the rows nearest their anchors) the error is measured on (1: all).
Prints MSE and recall@10 (bench/rate-distortion.py's definition) of both rules and the multiples chosen.
Results: bench/results/2026-11-26-int4-clip.json.
"""
import sys, numpy as np, faiss
sys.path.insert(0, '/work/main/bench')
name = sys.argv[1]
x = np.load(f'/tmp/ab/{name}.npy'); xa = np.load(f'/tmp/ab/{name}-a.npy').astype(np.float32)
n, d = x.shape; r = (x.astype(np.float64) - xa)
q = np.random.default_rng(1).choice(n, 500, replace=False)
def knn(b, k=11):
    i = faiss.IndexFlatL2(d); i.add(np.ascontiguousarray(b, dtype=np.float32)); return i.search(x[q], k)[1]
It = knn(x)
def rec(xh):
    I = knn(xh); t = 0
    for j, qi in enumerate(q):
        t += len(set([v for v in It[j] if v != qi][:10]) & set([v for v in I[j] if v != qi][:10]))
    return t / 5000
def enc(r, rng_):
    s = (rng_ / 7).astype(np.float32).astype(np.float64); s[s == 0] = 1
    return np.clip(np.round(r / s), -7, 7) * s
CANDS = [float(v) for v in sys.argv[2].split(",")]
mx = np.abs(r).max(0); rms = np.sqrt((r * r).mean(0))
fixed = np.minimum(mx, 2.6 * rms)
S = min(n, 4096); samp = r[(np.arange(S) * n) // S]
Q = float(sys.argv[3]) if len(sys.argv) > 3 else 1.0
if Q < 1: nr = (samp*samp).sum(1); samp = samp[nr <= np.quantile(nr, Q)]
best = None; be = np.full(d, np.inf)
for rg in [np.minimum(mx, c * rms) for c in CANDS] + [mx]:
    e = ((enc(samp, rg) - samp) ** 2).sum(0)
    if best is None: best = rg.copy()
    m = e < be; be[m] = e[m]; best[m] = rg[m]
for lab, rg in (('fixed 2.6', fixed), ('per-dim', best)):
    xh = xa + enc(r, rg)
    print(name, lab, 'mse', float(((x - xh) ** 2).sum(1).mean()), 'recall', rec(xh), flush=True)
ratio = best / rms
print('chosen multipliers', np.unique(np.round(ratio, 2), return_counts=True))
print('mx/rms range', float((mx/rms).min()), float(np.median(mx/rms)), float((mx/rms).max()))
